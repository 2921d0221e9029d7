import Foundation
import PhoneWorld
import Scheduling
import SimEngine
import SimRandom
import Testing

@testable import Experiments
@testable import Policies
@testable import ScenarioFiles

/// Bugs a rule-by-rule audit of the iOS model found, each pinned by a test that failed before
/// its fix.
@Suite("Audit: bugs of the iOS model")
struct AuditBugTests {
    /// A folder with `files`, removed by the caller.
    static func folder(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return dir
    }

    /// The run's records and events, for a scenario read from `yaml` in `dir`.
    static func run(_ yaml: String, in dir: URL, policy: some SchedulingPolicy = EagerPolicy()) throws -> (RunMetrics, [LoggedEvent]) {
        let s = try Scenario.parse(yaml: yaml, file: dir.appendingPathComponent("s.yaml").path)
        let r = try Experiment.run(s, custom: policy, replication: 0, events: true)
        return (r.metrics, r.events ?? [])
    }

    /// `low_power_mode: on` is on from the first timeline sample (it showed 0 throughout: the
    /// setting forced the flag on without an event).
    @Test func lowPowerModeSetOnShowsFromTheFirstSample() throws {
        // Never charging, so nothing turns it off (iOS does at 80% on the charger).
        let yaml = minimalWith("charging: nightly", "charging: {profile: nightly, nights_charged_pct: 0}")
        let s = try Scenario.parse(yaml: yaml + "\nsettings: {low_power_mode: \"on\"}", file: "s.yaml")
        final class Samples: @unchecked Sendable { var all: [TimelineSample] = [] }
        let samples = Samples()
        var sink = StandardSink(metrics: RunMetrics(apps: s.setup.apps))
        sink.timeline = TimelineSampler(every: .minutes(5)) { samples.all.append($0) }
        var sim = PhoneSimulation(
            setup: s.setup, policy: EagerPolicy(), sink: sink, streams: try WorldStreams(setup: s.setup, masterSeed: 1, replication: 0))
        let done = sim.run()
        let on = samples.all.map(\.lowPowerMode)
        #expect(on.count > 500 && on.allSatisfy { $0 })
        #expect(done.metrics.lowPower > .zero)
    }

    /// An app swiped away as it is left is ended from the app switcher: it begins no
    /// finite-length work and submits nothing (before the fix it began both, and they were
    /// killed at 0 s: 114 `tasks_killed` a week on the default scenario).
    @Test func anAppSwipedAwayAsItIsLeftBeginsNothing() throws {
        let dir = try Self.folder(["p.csv": "time,event,app,duration,exit\n1h,launch,mail,1m,swipe\n3h,launch,mail,1m,home\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let yaml = minimalWith("people: median", "people: {profile: median, trace: p.csv}")
            .replacingOccurrences(
                of: "apps:\n  - news",
                with: "apps:\n  - {profile: mail, background_work: [{probability_pct: 100, cpu: 1s}]}")
        let (metrics, events) = try Self.run(yaml, in: dir)
        let swipe = SimInstant.after(.hours(1) + .minutes(1)), leave = SimInstant.after(.hours(3) + .minutes(1))
        #expect(!events.contains { $0.time == swipe && ($0.event == "submitted" || $0.event == "started") }, "work at the swipe")
        #expect(events.contains { $0.time == leave && $0.event == "started" && $0.detail.contains("kind=finite_length") })
        #expect(events.contains { $0.time == swipe && $0.event.hasSuffix("->not_running") })
        #expect(metrics.count(.killed) == 0)
    }

    /// The horizon cutting a charging session is not an unplug: processing work that requires
    /// power goes on and completes (it was ended as if unplugged).
    @Test func theHorizonIsNotAnUnplug() throws {
        // Plugged in from 22:00 to 08:00; the horizon at midnight cuts the session, with 12 h
        // of backup running since 22:00.
        let dir = try Self.folder(["c.csv": "plug_in,unplug\n22h,1d8h\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let yaml = minimalWith("charging: nightly", "charging: {profile: nightly, trace: c.csv}")
            .replacingOccurrences(of: "duration: 2d", with: "duration: 1d\nsystem: {processing_budget: 24h}")
            .replacingOccurrences(of: "people: median", with: "people: {profile: median, sessions_per_day: 0, calls_per_day: 0}")
            .replacingOccurrences(
                of: "apps:\n  - news",
                with:
                    "apps:\n  - {profile: photos, background_work: [], tasks: [{id: backup, kind: processing, submit_on: [start], requires_external_power: true, cpu: 12h, cpu_share_pct: 100}]}"
            )
        let (metrics, events) = try Self.run(yaml, in: dir)
        let started = events.filter { $0.event == "started" && $0.detail.contains("kind=processing") }.map(\.time)
        #expect(started == [.after(.hours(22))])
        let ended = events.filter { ["completed", "expired", "killed"].contains($0.event) }
        #expect(ended.map(\.event) == ["completed"], "\(ended.map { "\($0.event) \($0.time) \($0.detail)" })")
        #expect(
            metrics.count(.completed) == 1 && ended.first.map { $0.time > .after(.days(1) + .hours(8)) } == true,
            "after the unplug the trace has past the horizon")
    }

    /// Where the phone is at the start is not a geofence crossing (every run began with an
    /// "enter home").
    @Test func theStartIsNotAGeofenceCrossing() throws {
        let yaml = minimal.replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - reminders")
        let (_, events) = try Self.run(yaml, in: FileManager.default.temporaryDirectory)
        let regions = events.filter { $0.event == "started" && $0.detail.contains("kind=region") }
        #expect(!regions.isEmpty, "the phone does cross home and work later")
        #expect(!regions.contains { $0.time == .start })
    }

    /// `top_ups_per_day` is the rate of daytime plug-ins: at the bundled top-up habit's 1.5 a
    /// day (25 minutes each) about 1.5 happen a day; the few that begin while the phone
    /// charges join that session, and no session touches the next.
    @Test func topUpsHappenAtTheirRate() throws {
        var habit = ChargingHabit()
        habit.nightlyProbability = 0
        habit.topUpsPerDay = 1.5
        habit.topUpMean = .minutes(25)
        let days = 400
        let sessions = habit.sessions(until: .after(.days(Int64(days))), stream: try RandomStream(kind: .mt19937, seed: 9))
        let perDay = Double(sessions.count) / Double(days)
        #expect(abs(perDay - 1.5) < 0.12, "\(perDay) top-ups a day")
        #expect(zip(sessions, sessions.dropFirst()).allSatisfy { $0.end < $1.start }, "sessions neither overlap nor touch")
        #expect(sessions.allSatisfy { $0.end - $0.start >= .minutes(1) })
    }

    /// Refresh grants vary (`system.refresh_grant`, drawn per refresh, at most the 30 s
    /// budget): developers see most expired refreshes expire 2-5 s after launch. By default
    /// grants spread from 2 s to the 30 s budget, some within 5 s; `none` gives every refresh
    /// the whole budget.
    @Test func refreshGrantsCanVary() throws {
        let news = "{profile: news, tasks: [{id: r, kind: refresh, submit_on: [start, handler], interval: 1h, cpu: 40s}]}"
        let base = minimal.replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - \(news)")
        func expiries(_ yaml: String) throws -> [Double] {
            let (_, events) = try Self.run(yaml, in: FileManager.default.temporaryDirectory)
            var started: [Int: SimInstant] = [:]
            var out: [Double] = []
            for e in events {
                guard let t = e.task?.rawValue else { continue }
                if e.event == "started" { started[t] = e.time }
                if e.event == "expiration_handler", let s = started[t] { out.append((e.time - s).seconds) }
            }
            return out
        }
        let fixed = try expiries(base + "\nsystem: {refresh_grant: none}")
        #expect(!fixed.isEmpty && fixed.allSatisfy { $0 == 30 })
        let byDefault = try expiries(base)
        #expect(
            byDefault.contains { $0 < 5 } && byDefault.contains { $0 > 25 } && byDefault.allSatisfy { (2...30).contains($0) }
                && Set(byDefault).count > 10, "\(byDefault)")
        let varied = try expiries(base + "\nsystem: {refresh_grant: {uniform: [2s, 5s]}}")
        #expect(varied.count >= 10 && varied.allSatisfy { (2...5).contains($0) } && Set(varied).count > 5, "\(varied)")
    }
}
