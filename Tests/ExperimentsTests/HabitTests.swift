import Foundation
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import PhoneWorld
@testable import Policies
@testable import ScenarioFiles

/// Habits move when an app is used, not how much the person uses the phone, and the ios
/// policy's predictor learns them.
@Suite("Habits")
struct HabitTests {
    /// A person who opens news around 07:30 every day (a strong habit, give or take 15 min).
    static func habitScenario(days: Int, strength: Double = 1) throws -> Scenario {
        let yaml = minimalWith("duration: 2d", "duration: \(days)d")
            .replacingOccurrences(
                of: "apps:\n  - news",
                with: "apps:\n  - {profile: news, habit: {strength: \(strength), anchors: [{at: \"07:30\", spread: 15m}]}}")
        return try Scenario.parse(yaml: yaml, file: "s.yaml")
    }

    /// The acceptance test of the habit model: with a strong 07:30 habit, `ios`'s predictor
    /// refreshes news within the hour before 07:30 on most days once it has seen a few, and
    /// rarely between 00:00 and 05:00. The idle window on the charger (its own test in
    /// DuetTests) also refreshes through the night; it is off here, to see the predictor, and
    /// on in `theIdleWindowAddsNightRefreshesOnlyOnTheCharger`.
    @Test func iosRefreshesAHabitualAppInTheHourBeforeTheHabit() throws {
        let days = 21
        let s = try Self.habitScenario(days: days)
        let run = try Experiment.run(s, custom: Self.predictorOnly, replication: 0, events: true)
        let refreshes = (run.events ?? []).filter { $0.event == "started" && $0.app == 0 && $0.detail.contains("kind=refresh") }.map(\.time)
        let learned = 3
        let before = (learned..<days).filter { d in
            refreshes.contains { $0.day == Int64(d) && (SimDuration.hours(6) + .minutes(30) ..< .hours(7) + .minutes(30)).contains($0.timeOfDay) }
        }
        let night = refreshes.filter { $0.timeOfDay < .hours(5) }
        #expect(Double(before.count) >= 0.6 * Double(days - learned), "refreshed in the hour before 07:30 on \(before.count) of \(days - learned) days")
        #expect(Double(night.count) <= 0.1 * Double(refreshes.count), "\(night.count) of \(refreshes.count) refreshes between 00:00 and 05:00")
        // Without the habit the same person's news launches are spread over the day, and so
        // are the refreshes: the hour before 07:30 is no longer singled out.
        let flat = try Experiment.run(try Self.habitScenario(days: days, strength: 0), custom: Self.predictorOnly, replication: 0, events: true)
        let flatRefreshes = (flat.events ?? []).filter { $0.event == "started" && $0.app == 0 && $0.detail.contains("kind=refresh") }.map(\.time)
        func shareBefore(_ times: [SimInstant]) -> Double {
            let hour = SimDuration.hours(6) + .minutes(30) ..< .hours(7) + .minutes(30)
            return Double(times.filter { hour.contains($0.timeOfDay) }.count) / Double(max(times.count, 1))
        }
        #expect(
            shareBefore(refreshes) > 3 * shareBefore(flatRefreshes),
            "share of refreshes in the hour before 07:30: \(shareBefore(refreshes)) with the habit, \(shareBefore(flatRefreshes)) without")
    }

    /// `ios` with its predictor alone: no idle window on the charger.
    static var predictorOnly: DuetPolicy {
        var p = DuetPolicy.Parameters()
        p.idleWindowAfter = nil
        return DuetPolicy(p)
    }

    /// With the idle window (the default), the same person's news is also refreshed in the
    /// night, but only on the charger and Wi-Fi; the hour before 07:30 still gets its refresh
    /// on most days (the window takes one refresh an app, and the allowance spaces them).
    @Test func theIdleWindowAddsNightRefreshesOnlyOnTheCharger() throws {
        let days = 21
        let run = try Experiment.run(try Self.habitScenario(days: days), custom: DuetPolicy(), replication: 0, events: true)
        let events = run.events ?? []
        let refreshes = events.filter { $0.event == "started" && $0.app == 0 && $0.detail.contains("kind=refresh") }.map(\.time)
        var charging = [(SimInstant, Bool)]()
        for e in events where e.event == "plug_in" || e.event == "unplug" { charging.append((e.time, e.event == "plug_in")) }
        func onCharger(_ t: SimInstant) -> Bool { charging.last { $0.0 <= t }?.1 ?? false }
        let night = refreshes.filter { $0.timeOfDay < .hours(5) || $0.timeOfDay >= .hours(22) }
        #expect(night.count > days / 2, "refreshed in the night: \(night.count)")
        #expect(night.allSatisfy(onCharger), "every night refresh on the charger")
        let before = (3..<days).filter { d in
            refreshes.contains { $0.day == Int64(d) && (SimDuration.hours(6) + .minutes(30) ..< .hours(7) + .minutes(30)).contains($0.timeOfDay) }
        }
        #expect(Double(before.count) >= 0.6 * Double(days - 3))
    }

    /// The habit reshapes the app's launches over the day and leaves the person's sessions as
    /// they were: the same count, and the app's share of launches close to its weight.
    @Test func aHabitMovesLaunchesButKeepsTheSessions() throws {
        let days = 28
        let with = try Self.habitScenario(days: days)
        let without = try Self.habitScenario(days: days, strength: 0)
        func people(_ s: Scenario) throws -> PeopleTimeline {
            let streams = try WorldStreams(setup: s.setup, masterSeed: 7, replication: 0)
            return WorldTimeline(setup: s.setup, streams: streams).people
        }
        let a = try people(with), b = try people(without)
        #expect(a.sessionStarts.count == b.sessionStarts.count && a.launches.count == b.launches.count)
        let newsA = a.launches.filter { $0.app == 0 }, newsB = b.launches.filter { $0.app == 0 }
        let near = newsA.filter { abs(($0.start.timeOfDay - .hours(7) - .minutes(30)).seconds) < 45 * 60 }.count
        #expect(Double(near) >= 0.8 * Double(newsA.count), "\(near) of \(newsA.count) news launches within 45 min of 07:30")
        let nearB = newsB.filter { abs(($0.start.timeOfDay - .hours(7) - .minutes(30)).seconds) < 45 * 60 }.count
        #expect(Double(nearB) < 0.3 * Double(newsB.count))
        #expect(newsA.count >= days / 2, "the habit happens on most days: \(newsA.count) launches in \(days) days")
    }

    /// The profile's mean under the person's session rate is 1, and a weekday routine leaves
    /// weekends flat.
    @Test func profilesAreScaledToTheSessionRate() {
        var person = PeopleParameters()
        person.hourlyWeights = (0..<24).map { Double($0 % 5 + 1) }
        let habit = AppHabit(strength: 1, anchors: [AppHabit.Anchor(at: .hours(12), spread: .hours(1), days: .weekdays)])
        for weekend in [false, true] {
            let rate = person.sessionRate(weekend: weekend)
            let p = habit.profile(weekend: weekend, rate: rate)
            let mean = zip(p, rate).reduce(0.0) { $0 + $1.0 * $1.1 } / rate.reduce(0, +)
            #expect(abs(mean - 1) < 1e-12)
            if weekend { #expect(p.allSatisfy { $0 == 1 }) } else { #expect(p[144] > 5 * p[100]) }
        }
    }

    /// Predictability is 1 when each app's launches fall in one hour, 0 when they are spread
    /// evenly over the 24, and a habit raises it for the same person.
    @Test func launchPredictabilityRunsFromSpreadToOneHour() throws {
        func launch(_ app: Int?, hour: Int64, day: Int64 = 0) -> AppLaunch {
            let t = SimInstant.after(.days(day) + .hours(hour) + .minutes(10))
            return AppLaunch(app: app, start: t, end: t + .minutes(1), swipedAway: false)
        }
        let oneHour = (0..<5).map { launch(0, hour: 7, day: $0) } + (0..<3).map { launch(1, hour: 21, day: $0) } + [launch(nil, hour: 3)]
        #expect(PeopleTimeline.launchPredictability(oneHour, apps: 2) == 1)
        let spread = (0..<24).map { launch(0, hour: $0) } + (0..<24).map { launch(1, hour: $0, day: 1) }
        #expect(abs(PeopleTimeline.launchPredictability(spread, apps: 2)) < 1e-12)
        #expect(PeopleTimeline.launchPredictability([launch(nil, hour: 1)], apps: 2).isNaN)
        let with = try Experiment.run(try Self.habitScenario(days: 14), custom: EagerPolicy(), replication: 0).metrics
        let without = try Experiment.run(try Self.habitScenario(days: 14, strength: 0), custom: EagerPolicy(), replication: 0).metrics
        #expect(with.launchPredictability > without.launchPredictability + 0.1, "\(with.launchPredictability) against \(without.launchPredictability)")
    }
}
