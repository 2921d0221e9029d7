import Foundation
import PhoneWorld
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import ScenarioFiles

/// Rules of the source documents the audit found missing (issue 41), each at the scenario
/// level: the Background Modes capability, a task without an expiration handler, the moment
/// before suspension, and `willTerminate` for an app terminated while it runs.
@Suite("iOS rules from the seed documents")
struct SeedRuleTests {
    /// One app, news with `app` spliced into its mapping; two days of the median person.
    static func run(app: String, extra: String = "", files: [String: String] = [:]) throws -> (RunMetrics, [LoggedEvent]) {
        let dir = try AuditBugTests.folder(files)
        defer { try? FileManager.default.removeItem(at: dir) }
        let yaml = minimal.replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - {profile: news\(app)}") + extra
        return try AuditBugTests.run(yaml, in: dir)
    }

    /// Without "Background fetch" in `UIBackgroundModes` every refresh request fails
    /// `notPermitted` and none runs; with the default (every mode its work needs) they run.
    @Test func refreshNeedsTheFetchMode() throws {
        let (without, events) = try Self.run(app: ", background_modes: [processing]")
        #expect(without.rejections[2] > 0 && without.startedByKind[TaskKind.refresh.index] == 0)
        #expect(events.contains { $0.event == "not_permitted" || $0.detail.contains("error=notPermitted") })
        let (with, _) = try Self.run(app: "")
        #expect(with.rejections[2] == 0 && with.startedByKind[TaskKind.refresh.index] > 0)
        let (listed, _) = try Self.run(app: ", background_modes: [fetch]")
        #expect(listed.rejections[2] == 0 && listed.startedByKind[TaskKind.refresh.index] == with.startedByKind[TaskKind.refresh.index])
    }

    /// Processing requests need "Background processing".
    @Test func processingNeedsTheProcessingMode() throws {
        let task = ", tasks: [{id: p, kind: processing, submit_on: [start, handler], interval: 6h, cpu: 10s}]"
        let (with, _) = try Self.run(app: task)
        let (without, _) = try Self.run(app: task + ", background_modes: [fetch]")
        #expect(with.startedByKind[TaskKind.processing.index] > 0 && with.rejections[2] == 0)
        #expect(without.startedByKind[TaskKind.processing.index] == 0 && without.rejections[2] > 0)
    }

    /// Silent pushes wake only an app with `remote-notification`; legacy fetch needs `fetch`;
    /// a continuous mode's sessions need the mode's key.
    @Test func otherMechanismsNeedTheirModes() throws {
        let pushes = ", tasks: [], silent_push: {per_hour: 1, cpu: 1s}"
        #expect(try Self.run(app: pushes).0.startedByKind[MechanismRegistry.kind(SilentPushes.self).index] > 0)
        let (noPush, _) = try Self.run(app: pushes + ", background_modes: [fetch]")
        #expect(noPush.startedByKind[MechanismRegistry.kind(SilentPushes.self).index] == 0 && noPush.count(.dropped) > 0)
        let fetch = ", tasks: [], background_fetch: {minimum_interval: 1h, cpu: 1s}"
        #expect(try Self.run(app: fetch).0.startedByKind[MechanismRegistry.kind(LegacyFetch.self).index] > 0)
        #expect(try Self.run(app: fetch + ", background_modes: [remote-notification]").0.startedByKind[MechanismRegistry.kind(LegacyFetch.self).index] == 0)
        let audio = ", tasks: [], background_mode: {kind: audio, probability_pct: 100, duration: 10m}"
        #expect(try Self.run(app: audio).0.startedByKind[BackgroundModes.kind(.audio).index] > 0)
        #expect(try Self.run(app: audio + ", background_modes: [fetch]").0.startedByKind[BackgroundModes.kind(.audio).index] == 0)
        #expect(try Self.run(app: audio + ", background_modes: [audio]").0.startedByKind[BackgroundModes.kind(.audio).index] > 0)
    }

    /// Without an expiration handler the system marks the task completed and unsuccessful
    /// when its time runs out (Apple, `BGTask.expirationHandler`): no handler call, no grace,
    /// and the app is not terminated for it.
    @Test func aTaskWithoutAnExpirationHandlerEndsCompletedUnsuccessfulAtOnce() throws {
        let task = ", tasks: [{id: r, kind: refresh, submit_on: [start, handler], interval: 1h, cpu: 40s, expiration_handler: false}]"
        let (m, events) = try Self.run(app: task, extra: "\nsystem: {refresh_grant: none}")
        #expect(m.count(.expired) == 0 && m.count(.completed) > 5)
        #expect(m.unsuccessful == m.count(.completed), "every one cut at its time, none successful")
        #expect(!events.contains { $0.event == "expiration_handler" })
        #expect(!events.contains { $0.event.hasSuffix("->not_running") && $0.detail.contains("cause=terminated") })
        var started: [TaskID: SimInstant] = [:]
        var ended = 0
        for e in events {
            guard let t = e.task else { continue }
            if e.event == "started" { started[t] = e.time }
            if e.event == "completed", let s = started[t] {
                #expect(e.time - s == .seconds(30), "ended at the budget, no grace")
                ended += 1
            }
        }
        #expect(ended == m.count(.completed))
        // With a handler the same tasks hear it and end, expired, after their response.
        let (handled, handledEvents) = try Self.run(app: task.replacingOccurrences(of: ", expiration_handler: false", with: ""))
        #expect(handled.count(.expired) == m.count(.completed) && handledEvents.contains { $0.event == "expiration_handler" })
    }

    /// An app that leaves with nothing to do runs on in the background for
    /// `system.suspension_delay` (2 s), then is suspended; `0s` suspends it at once.
    @Test func anAppIsSuspendedMomentsAfterItLeaves() throws {
        func gaps(_ extra: String) throws -> [SimDuration] {
            let (_, events) = try Self.run(app: ", tasks: [], background_work: []", extra: extra)
            var entered: SimInstant?
            var out: [SimDuration] = []
            for e in events where e.subject == .app {
                if e.event == "inactive->background" { entered = e.time }
                if e.event == "background->suspended", let t = entered {
                    out.append(e.time - t)
                    entered = nil
                }
            }
            return out
        }
        let byDefault = try gaps("")
        #expect(byDefault.count > 5 && byDefault.allSatisfy { $0 == .seconds(2) }, "\(byDefault)")
        #expect(try gaps("\nsystem: {suspension_delay: 0s}").allSatisfy { $0 == .zero })
        #expect(try gaps("\nsystem: {suspension_delay: 4500ms}").allSatisfy { $0 == .milliseconds(4500) })
    }

    /// `applicationWillTerminate` is called when an app running in the background is
    /// terminated (here by a purge a trace names), not when a suspended one is purged.
    @Test func willTerminateOnlyForAnAppThatRuns() throws {
        // News begins 60 s of finite-length work on leaving at 1:01; purged at 1:01:30 while
        // running, and at 3:30, suspended.
        let trace = "time,event,app,duration,exit\n1h,launch,news,1m,home\n1h1m30s,purge,news,,\n3h,launch,news,1m,home\n3h30m,purge,news,,\n"
        let yaml = minimal.replacingOccurrences(of: "people: median", with: "people: {profile: median, trace: p.csv}")
            .replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - {profile: news, tasks: [], background_work: [{probability_pct: 100, cpu: 60s}]}")
        let dir = try AuditBugTests.folder(["p.csv": trace])
        defer { try? FileManager.default.removeItem(at: dir) }
        let (metrics, log) = try AuditBugTests.run(yaml, in: dir)
        let ends = log.filter { $0.subject == .app && $0.event.hasSuffix("->not_running") }
        #expect(ends.count == 2, "\(ends.map { "\($0.time) \($0.event) \($0.detail)" })")
        #expect(ends.first?.event == "background->not_running" && ends.first?.detail.contains("delegate=willTerminate") == true)
        #expect(ends.last?.event == "suspended->not_running" && ends.last?.detail.contains("willTerminate") == false)
        #expect(metrics.count(.killed) == 1)
    }
}

extension SeedRuleTests {
    /// Notification Centre, Control Centre or a declined call over the app in use: inactive
    /// and back to active, never through the background (`willResignActive`, then
    /// `didBecomeActive`); nothing else changes.
    @Test func anInterruptionLeavesTheAppInactiveInTheForeground() throws {
        func run(_ rate: Int) throws -> (RunMetrics, [LoggedEvent]) {
            let yaml = minimalWith("people: median", "people: {profile: median, interruptions_per_hour: \(rate)}")
            return try AuditBugTests.run(yaml, in: FileManager.default.temporaryDirectory)
        }
        let (m, events) = try run(120)
        let app = events.filter { $0.subject == .app }
        var interruptions = 0
        for (k, e) in app.enumerated() where e.event == "active->inactive" && e.detail.contains("cause=interruption") {
            interruptions += 1
            #expect(e.detail.contains("delegate=willResignActive"))
            // The next transition of the app: back to active, or on to the background if the
            // person left or a call came while it was interrupted.
            let next = app[(k + 1)...].first { $0.app == e.app }
            #expect(next?.event == "inactive->active" || next?.event == "inactive->background", "\(String(describing: next?.event))")
        }
        #expect(interruptions > 10)
        let (none, quiet) = try run(0)
        #expect(!quiet.contains { $0.detail.contains("cause=interruption") })
        // Lifecycle only: the same tasks and energy with or without them.
        // (The same up to rounding: the energy books are summed at more instants.)
        #expect(
            none.startedByKind == m.startedByKind && abs(none.energy.consumedJ - m.energy.consumedJ) < 1e-6 * m.energy.consumedJ, "\(none.energy) \(m.energy)")
    }
}

extension SeedRuleTests {
    /// `beginBackgroundTask` may be called "anywhere, any time": work begun while the person
    /// uses the app runs without a deadline until they leave, then within the grant.
    @Test func finiteLengthWorkBegunInUseGetsItsGrantOnlyWhenTheAppLeaves() throws {
        let trace = "time,event,app,duration,exit\n1h,launch,news,10m,home\n"
        let dir = try AuditBugTests.folder(["p.csv": trace])
        defer { try? FileManager.default.removeItem(at: dir) }
        func run(cpu: String) throws -> [LoggedEvent] {
            let yaml =
                minimalWith("people: median", "people: {profile: median, trace: p.csv}")
                .replacingOccurrences(
                    of: "apps:\n  - news",
                    with: "apps:\n  - {profile: news, tasks: [], background_work: [{begin: in_use, probability_pct: 100, cpu: \(cpu)}]}")
                + "\nsystem: {background_time: 30s}"
            return try AuditBugTests.run(yaml, in: dir).1.filter { $0.subject == .task }
        }
        let leave = SimInstant.after(.hours(1) + .minutes(10))
        // An hour of work: begun in the launch, still running when the person leaves, it
        // expires 30 s after.
        let long = try run(cpu: "1h")
        let started = try #require(long.first { $0.event == "started" })
        #expect(started.time >= .after(.hours(1)) && started.time < leave)
        #expect(long.contains { $0.event == "expiration_handler" && $0.time == leave + .seconds(30) })
        // A second of work ends in the foreground, with no grant used.
        let short = try run(cpu: "1s")
        let done = try #require(short.first { $0.event == "completed" })
        #expect(done.time < leave && !short.contains { $0.event == "expiration_handler" })
    }

    /// Several tasks of one app that a policy starts together run in one background launch
    /// (WWDC 2019 session 707: the system may hand an app several tasks at once). Coalesce
    /// holds the first until the second makes a batch of two.
    @Test func severalTasksShareOneBackgroundLaunch() throws {
        let tasks = ", tasks: [{id: a, kind: refresh, submit_on: [start], cpu: 2s}, {id: b, kind: processing, submit_on: [start], cpu: 2s}]"
        let yaml = minimalWith("people: median", "people: {profile: median, sessions_per_day: 0, calls_per_day: 0}")
            .replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - {profile: news\(tasks)}")
            .replacingOccurrences(of: "charging: nightly", with: "charging: {profile: nightly, nights_charged_pct: 0}")
            .replacingOccurrences(
                of: "policies: [eager]",
                with: "policies: [{name: coalesce, min_batch: 2, max_delay: 2d, ride_awake_radio: false, hold_on_wifi: true}]")
        let scenario = try Scenario.parse(yaml: yaml, file: "s.yaml")
        let r = try Experiment.run(scenario, policy: scenario.policies[0], replication: 0, record: RecordOptions(events: true))
        let m = r.metrics, events = r.events ?? []
        let starts = events.filter { $0.event == "started" }
        #expect(starts.count == 2)
        #expect(Set(starts.map(\.time)).count == 1, "both handed over at once: \(starts.map(\.time))")
        #expect(m.backgroundLaunches == 1)
    }
}

extension SeedRuleTests {
    /// A task an extension schedules (a widget, a notification service) runs in the main app:
    /// here an app nobody opens is launched into the background for it.
    @Test func aTaskAnExtensionSchedulesRunsInTheMainApp() throws {
        func run(_ perDay: Int) throws -> (RunMetrics, [LoggedEvent]) {
            let app = "{profile: news, extensions: {runs_per_day: \(perDay)}, tasks: [{id: w, kind: refresh, submit_on: [extension], cpu: 1s}]}"
            let yaml = minimalWith("people: median", "people: {profile: median, sessions_per_day: 0, calls_per_day: 0}")
                .replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - \(app)")
            return try AuditBugTests.run(yaml, in: FileManager.default.temporaryDirectory)
        }
        let (m, events) = try run(12)
        let submitted = events.filter { $0.event == "submitted" }.count
        #expect(submitted > 10, "about 24 in two days")
        // Launched once, then resumed from suspension: nobody opens an app, so memory
        // pressure never purges it.
        #expect(m.startedByKind[TaskKind.refresh.index] > 5 && m.backgroundLaunches >= 1)
        #expect(events.contains { $0.event == "not_running->background" && $0.detail.contains("cause=background_work") })
        #expect(try run(0).1.filter { $0.event == "submitted" }.isEmpty)
    }
}

extension SeedRuleTests {
    /// `submit_on: launch`: the app submits at each open (`didFinishLaunching`,
    /// `sceneWillEnterForeground`), `earliest_begin` later, replacing the request still pending;
    /// never at the run's start, and never when nobody opens it.
    @Test func aTaskSubmittedAtEachLaunchFollowsTheOpens() throws {
        func run(_ sessions: Int) throws -> [LoggedEvent] {
            let app = "{profile: news, tasks: [{id: l, kind: refresh, submit_on: [launch], earliest_begin: 1h, cpu: 1s}]}"
            let yaml = minimalWith("people: median", "people: {profile: median, sessions_per_day: \(sessions)}")
                .replacingOccurrences(of: "apps:\n  - news", with: "apps:\n  - \(app)")
            return try AuditBugTests.run(yaml, in: FileManager.default.temporaryDirectory).1
        }
        let events = try run(40)
        // An open is the app coming to the front (a launch of the app already in front is none).
        let opens = events.filter { $0.subject == .app && $0.event.hasSuffix("->active") && $0.detail.contains("cause=open") }.map(\.time)
        let submitted = events.filter { $0.subject == .task && $0.event == "submitted" }
        #expect(opens.count > 3, "the person opens the app")
        #expect(submitted.map(\.time) == opens, "one submission at each open")
        for s in submitted {
            let begin = s.detail.split(separator: " ").first { $0.hasPrefix("earliest_begin_s=") }.flatMap { Double($0.dropFirst(17)) }
            #expect(begin.map { abs($0 - (s.time.sinceStart.seconds + 3600)) < 1e-6 } == true, "\(s.detail)")
        }
        #expect(events.contains { $0.event == "replaced" } || events.filter { $0.event == "started" }.count == opens.count)
        #expect(try run(0).filter { $0.event == "submitted" }.isEmpty)
    }
}
