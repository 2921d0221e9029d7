import Foundation
import PhoneWorld
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

/// `bgsim forecast`: how often a developer's app's background tasks run on the people of a
/// fleet (or on one person's days), where and when, at what cost, and what held them; and how
/// that changes with the things a developer or a person can change (a small built-in sweep,
/// paired by person).
package struct Forecast: Sendable {
    /// One person's (one replication's) results for the app under one policy.
    package struct Person: Sendable {
        /// The replication.
        package var replication: Int
        /// The person's drawn values, in the fleet's order (empty for one named person).
        package var traits: [String]
        /// Days simulated.
        package var days: Double
        /// The battery's capacity in joules.
        package var batteryJ: Double
        /// The app's launches.
        package var launches: Int
        /// The staleness of its content at them, summed.
        package var stalenessSumS: Double
        /// Those served fresh.
        package var freshLaunches: Int
        /// The app's tallies, one per identifier, by identifier.
        package var tasks: [String: AppTaskTally]
    }

    /// One variant of the world (the base, or a change the sweep makes) under one policy.
    package struct Variant: Sendable {
        /// `base`, or the change: `opens_per_day x2`, `network=poor-coverage`, ...
        package var name: String
        /// What the change is, in words, for the page.
        package var description: String
        /// The policy.
        package var policy: String
        /// Its people, in replication order.
        package var people: [Person]
    }

    /// The setup the forecast ran.
    package var setup: ForecastSetup
    /// The app's identifiers (refresh and processing first, as the profile lists them, then
    /// the other doors its runs used), in page order.
    package var identifiers: [(identifier: String, kind: TaskKind)]
    /// The base variant per policy, then the sweep's variants per policy.
    package var variants: [Variant]
    /// Per policy, one typical person's week: the app's task records, and each request's
    /// holds as they changed (from then on held by a gate or a rule; `nil`: no longer).
    package var typical: [(policy: String, replication: Int, records: [TaskRecord], holds: [TaskID: [(at: SimInstant, cause: String?)]])]
    /// The fleet's drawn key paths (the traits' names).
    package var traitNames: [String]
    /// The sweep's changes this app cannot take, each with why (`opens x2` of an app opened
    /// 600 times a day would be 1,200, over what a scenario allows).
    package var skipped: [(name: String, why: String)] = []
    /// Each answer over the assumptions' plausible ranges (none with `--no-ranges`, or for a
    /// policy without assumptions).
    package var ranges: [AssumptionRange] = []

    /// The variants a forecast's sweep runs: each a change a developer can make to the app or
    /// a difference between people, at two levels either side of the base.
    package static func sweep(_ setup: ForecastSetup) -> [(name: String, description: String, overrides: [Override], pinned: [(path: String, value: String)])] {
        let app = setup.appParameters, k = setup.app
        var out: [(String, String, [Override], [(path: String, value: String)])] = []
        func o(_ path: String, _ value: String) -> Override {
            Override(path: ConfigKeyPath(parsing: path)!, value: value, origin: "forecast sweep: \(path)=\(value)")
        }
        for (factor, label) in [(0.5, "x0.5"), (2.0, "x2")] {
            if let opens = app.opensPerDay {
                // In the profile's own terms: a profile of opens a week is not given a day's too.
                let (key, value, limit) =
                    app.opensGivenWeekly ? ("opens_per_week", opens * 7 * factor, 7000.0) : ("opens_per_day", opens * factor, 1000.0)
                guard value <= limit else { continue }  // `skipped` says so
                out.append(
                    (
                        "opens \(label)", "the person opens the app \(num(value)) times \(app.opensGivenWeekly ? "a week" : "a day")",
                        [o("apps[\(k)].\(key)", num(value))], []
                    ))
            } else {
                out.append(
                    (
                        "opens \(label)", "the app's usage_weight \(num(app.usageWeight * factor))",
                        [o("apps[\(k)].usage_weight", num(app.usageWeight * factor))], []
                    ))
            }
        }
        let scheduled = app.tasks.indices.filter { app.tasks[$0].kind == .refresh || app.tasks[$0].kind == .processing }
        if !scheduled.isEmpty {
            for (factor, label) in [(0.5, "x0.5"), (2.0, "x2")] {
                let sets = scheduled.flatMap { j in
                    [
                        o("apps[\(k)].tasks[\(j)].interval", "\(max(1, Int((app.tasks[j].interval.seconds * factor).rounded())))s"),
                        o("apps[\(k)].tasks[\(j)].earliest_begin", "\(Int((app.tasks[j].earliestBegin.seconds * factor).rounded()))s"),
                    ]
                }
                out.append(("interval \(label)", "every task's interval and earliest begin \(label)", sets, []))
            }
        }
        out += [
            ("refresh on Wi-Fi only", "Background App Refresh on Wi-Fi only, for everyone", [], [("settings.background_app_refresh", "wifi")]),
            ("refresh on", "Background App Refresh on (Wi-Fi and cellular), for everyone", [], [("settings.background_app_refresh", "wifi-and-cellular")]),
            ("charges nightly", "everyone charges overnight", [], [("charging", "nightly")]),
            ("charges erratically", "everyone charges at odd times", [], [("charging", "erratic")]),
            ("good connection", "everyone at home and in an office on good Wi-Fi", [], [("network", "home-office")]),
            ("poor connection", "everyone with poor coverage and slow Wi-Fi", [], [("network", "poor-coverage")]),
        ]
        for change in setup.changes {
            var overrides: [Override] = [], pinned: [(path: String, value: String)] = []
            for set in change.sets {
                let path = set.path.hasPrefix("app.") ? "apps[\(k)]" + set.path.dropFirst(3) : set.path
                if setup.scenario.fleet.contains(where: { $0.path.description == path }) {
                    pinned.append((path, set.value))
                } else if let key = ConfigKeyPath(parsing: path) {
                    overrides.append(Override(path: key, value: set.value, origin: "--change \(change.name):\(set.path)=\(set.value)"))
                }
            }
            out.append((change.name, "your change", overrides, pinned))
        }
        // Each says exactly what it sets, the app's keys as `app.KEY`.
        return out.map { v in
            let sets = v.2.map { "\($0.path)=\($0.value)" } + v.3.map { "\($0.path)=\($0.value) for everyone" }
            let shown = sets.map { $0.hasPrefix("apps[\(k)].") ? "app." + $0.dropFirst("apps[\(k)].".count) : $0 }
            return (v.0, v.1 + " (sets " + shown.joined(separator: ", ") + ")", v.2, v.3)
        }
    }

    /// The changes `sweep` leaves out for this app, and why.
    package static func skipped(_ setup: ForecastSetup) -> [(name: String, why: String)] {
        let app = setup.appParameters
        guard let opens = app.opensPerDay else { return [] }
        let (value, limit, unit) = app.opensGivenWeekly ? (opens * 14, 7000.0, "a week") : (opens * 2, 1000.0, "a day")
        guard value > limit else { return [] }
        return [("opens x2", "\(num(value)) opens \(unit) is over the \(num(limit)) a scenario allows")]
    }

    static func num(_ x: Double) -> String {
        let r = (x * 1000).rounded() / 1000
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    /// Runs the forecast: the base on every person under each policy, the sweep's variants on
    /// the first `sweepPeople` of them, and each policy's typical person once more for their
    /// week. Results depend on the setup only, not on `jobs`.
    package static func run(
        _ setup: ForecastSetup, sweepPeople: Int, ranges: RangeDesign? = nil, jobs: Int, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> Forecast {
        let base = setup.scenario
        let people = base.replications
        var scenarios: [(name: String, description: String, scenario: Scenario, people: Int)] = [("base", "as the fleet is", base, people)]
        if sweepPeople > 0 {
            for v in sweep(setup) {
                scenarios.append((v.name, v.description, try setup.variant(v.overrides, pinned: v.pinned), min(sweepPeople, people)))
            }
        }
        var units: [(variant: Int, policy: Int, replication: Int)] = []
        for (v, s) in scenarios.enumerated() {
            for p in base.policies.indices { for r in 0..<s.people { units.append((v, p, r)) } }
        }
        let app = setup.app
        var results = [Person?](repeating: nil, count: units.count)
        try await withThrowingTaskGroup(of: (Int, Person).self) { group in
            var next = 0, done = 0
            func launch() {
                let index = next, u = units[next]
                next += 1
                let scenario = scenarios[u.variant].scenario
                group.addTask { (index, try Self.person(scenario, policy: u.policy, replication: u.replication, app: app)) }
            }
            while next < min(max(jobs, 1), units.count) { launch() }
            while let (index, person) = try await group.next() {
                results[index] = person
                done += 1
                progress?(done, units.count)
                if next < units.count { launch() }
            }
        }
        var variants: [Variant] = []
        var k = 0
        for s in scenarios {
            for p in base.policies {
                variants.append(
                    Variant(
                        name: s.name, description: s.description, policy: p.name,
                        people: (0..<s.people).map { _ in
                            defer { k += 1 }
                            return results[k]!
                        }))
            }
        }
        // Identifiers: the profile's scheduled tasks first, then whatever else ran.
        var identifiers: [(String, TaskKind)] = []
        for t in setup.appParameters.tasks {
            let kind: TaskKind = t.kind == .refresh ? .refresh : .processing
            if !identifiers.contains(where: { $0.0 == t.identifier }) { identifiers.append((t.identifier, kind)) }
        }
        var others: [String: TaskKind] = [:]
        for v in variants where v.name == "base" {
            for person in v.people { for (id, t) in person.tasks where !identifiers.contains(where: { $0.0 == id }) { others[id] = t.kind } }
        }
        identifiers += others.sorted { ($0.value.index, $0.key) < ($1.value.index, $1.key) }.map { ($0.key, $0.value) }
        // Each policy's typical person: runs a day of the first identifier nearest its median.
        var typical: [(String, Int, [TaskRecord], [TaskID: [(at: SimInstant, cause: String?)]])] = []
        for v in variants where v.name == "base" {
            let first = identifiers.first?.0
            let runs = v.people.map { Double($0.tasks[first ?? ""]?.started ?? 0) }
            let median = Statistics.quantile(sorted: runs.sorted(), 0.5)
            let chosen = v.people.indices.min { abs(runs[$0] - median) < abs(runs[$1] - median) } ?? 0
            let p = base.policies.firstIndex { $0.name == v.policy }!
            let (records, holds) = try Self.records(base, policy: p, replication: chosen, app: app)
            typical.append((v.policy, chosen, records, holds))
        }
        var forecast = Forecast(
            setup: setup, identifiers: identifiers, variants: variants, typical: typical, traitNames: base.fleet.map(\.path.description))
        if sweepPeople > 0 { forecast.skipped = skipped(setup) }
        if let ranges, let people = variants.first(where: { $0.name == "base" && $0.policy == Self.rangedPolicy })?.people {
            forecast.ranges = try await rangeStudy(setup, design: ranges, base: people, jobs: jobs, progress: progress)
        }
        return forecast
    }

    /// One person's results for the app.
    static func person(_ scenario: Scenario, policy: Int, replication: Int, app: Int) throws -> Person {
        let (metrics, tallies) = try Experiment.appTallies(scenario, policy: scenario.policies[policy], replication: replication)
        var tasks: [String: AppTaskTally] = [:]
        for t in tallies.rows where t.app == app { tasks[t.identifier] = t }
        return Person(
            replication: replication, traits: scenario.fleetDisplayValues(replication: replication),
            days: scenario.setup.duration.seconds / 86_400, batteryJ: scenario.setup.battery.capacityJ,
            launches: metrics.appLaunches[app], stalenessSumS: metrics.appStalenessSumS[app], freshLaunches: metrics.appFreshLaunches[app],
            tasks: tasks)
    }

    /// The app's task records in one run, in the order they ended, and their holds as they
    /// changed.
    static func records(
        _ scenario: Scenario, policy: Int, replication: Int, app: Int
    ) throws -> ([TaskRecord], [TaskID: [(at: SimInstant, cause: String?)]]) {
        final class Box: @unchecked Sendable {
            var records: [TaskRecord] = []
            var holds: [TaskID: [(at: SimInstant, cause: String?)]] = [:]
        }
        let box = Box()
        _ = try Experiment.appTallies(
            scenario, policy: scenario.policies[policy], replication: replication,
            onTask: { r in if r.request.app == app { box.records.append(r) } },
            onHold: { id, cause, at in box.holds[id, default: []].append((at, cause)) })
        let mine = Set(box.records.map(\.request.id))
        return (box.records, box.holds.filter { mine.contains($0.key) })
    }
}

extension Experiment {
    /// Simulates one policy in one replication and adds up every app's requests per
    /// identifier; `onTask` sees each complete record, `onHold` each change of what holds a
    /// request.
    static func appTallies(
        _ scenario: Scenario, policy: PolicySpec, replication: Int, onTask: ((TaskRecord) -> Void)? = nil,
        onHold: ((TaskID, String?, SimInstant) -> Void)? = nil
    ) throws -> (RunMetrics, AppTallies) {
        let person = try FleetPeople.person(scenario, replication: replication)
        let streams = try WorldStreams(setup: person.setup, masterSeed: person.seed, replication: UInt64(replication), generator: person.generator)
        var sink = StandardSink(metrics: RunMetrics(apps: person.setup.apps, freshWithin: person.metrics.freshWithin), onTask: onTask)
        sink.apps = AppTallies(apps: person.setup.apps.count)
        sink.onHold = onHold
        var sim = PhoneSimulation(setup: person.setup, policy: policy.rule.makePolicy(), sink: sink, streams: streams)
        let done = sim.run()
        if let storm = sim.eventStorm {
            throw ScenarioError(
                .invalid, file: scenario.file,
                message: "forecast, policy \(policy.label), replication \(replication): stopped: \(storm); check its intervals and durations")
        }
        return (done.metrics, done.apps!)
    }
}
