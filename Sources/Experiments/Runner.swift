import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom
import Synchronization

/// The result of one policy in one replication.
package struct RunResult: Sendable {
    /// The policy, with its parameters and label.
    package var policy: PolicySpec
    /// The replication's number, from 0; it names the random streams the world was drawn from.
    package var replication: Int
    /// The run's metrics. In a study's results their samples (latencies, staleness) are
    /// dropped once `values` are computed, so memory does not grow with run length.
    package var metrics: RunMetrics
    /// The values of `RunMetrics.columns`, in order.
    package var values: [Double]
    /// The run's event log, when asked for (`--events`) and not written to a folder.
    package var events: [LoggedEvent]?
}

/// What a run records besides its summary.
public struct RecordOptions: Sendable, Equatable {
    /// Keep the event log (`events.csv`). It grows with the run.
    package var events = false
    /// Write each task's row (`tasks.csv`).
    package var tasks = false
    /// Write each app's rows per identifier (`apps.csv`); a study always does.
    package var apps = true
    /// Sample the phone's state this often (`timeline.csv`).
    package var timelineEvery: SimDuration?
    /// What to record besides the metrics: each event, each task, a timeline sampled every `timelineEvery`.
    public init(events: Bool = false, tasks: Bool = false, timelineEvery: SimDuration? = nil) {
        self.events = events
        self.tasks = tasks
        self.timelineEvery = timelineEvery
    }
}

/// Where a run writes its rows of `tasks.csv`, `timeline.csv` and `events.csv` (without
/// headers), and the fields that start each row.
struct RowDestination {
    /// `policy,replication` for a run; `point,policy,replication` for a sweep.
    var prefix: [String]
    /// Where the rows of a result file (`tasks.csv`) go.
    var file: (String) -> URL
    /// Other units that take the same rows under their own first fields (`StudyPlan.source(of:)`).
    var copies: [(prefix: [String], file: (String) -> URL)] = []

    /// A writer of the rows of `name` to every destination.
    func writer(_ name: String) throws(RuntimeFailure) -> PartWriter {
        try PartWriter(file(name), prefix: prefix, copies: copies.map { ($0.file(name), $0.prefix) })
    }
}

/// Runs the units of a scenario: every policy in every replication.
public enum Experiment {
    /// Simulates one policy in one replication. A pure function of its arguments: the
    /// replication's random streams depend on (seed, replication, stream name) only.
    public static func run(_ scenario: Scenario, policy: PolicySpec, replication: Int) throws -> RunMetrics {
        try run(scenario, policy: policy, replication: replication, record: RecordOptions()).metrics
    }

    /// Simulates one policy in one replication, keeping what `record` asks for: task and
    /// timeline rows go to `rows` as they are produced (nowhere without it); events stay in
    /// the result without it.
    static func run(
        _ scenario: Scenario, policy: PolicySpec, replication: Int, record: RecordOptions,
        rows: RowDestination? = nil
    ) throws -> RunResult {
        let r = try run(
            FleetPeople.person(scenario, replication: replication), custom: policy.rule.makePolicy(), label: policy.label,
            replication: replication, record: record, rows: rows)
        return RunResult(policy: policy, replication: replication, metrics: r.metrics, values: r.metrics.columnValues, events: r.events)
    }

    /// Simulates any policy, a user's own included, in one replication of the scenario: the
    /// same world (same streams) the built-in policies see in that replication.
    package static func run<P: SchedulingPolicy>(
        _ scenario: Scenario, custom policy: P, replication: Int,
        events: Bool = false
    ) throws -> (metrics: RunMetrics, events: [LoggedEvent]?) {
        try run(
            scenario, custom: policy as? DynamicPolicy ?? DynamicPolicy(policy), label: policy.name,
            replication: replication, record: RecordOptions(events: events), rows: nil)
    }

    /// One run of `policy`, named `label` in messages: its metrics and, unless written to
    /// `rows`, its events.
    static func run(
        _ scenario: Scenario, custom policy: DynamicPolicy, label: String, replication: Int,
        record: RecordOptions, rows: RowDestination?
    ) throws -> (metrics: RunMetrics, events: [LoggedEvent]?) {
        let streams = try WorldStreams(
            setup: scenario.setup, masterSeed: scenario.seed,
            replication: UInt64(replication), generator: scenario.generator)
        var sink = StandardSink(
            metrics: RunMetrics(apps: scenario.setup.apps, freshWithin: scenario.metrics.freshWithin),
            events: record.events ? EventLog() : nil)
        var tasks: PartWriter?, timeline: PartWriter?
        let names = scenario.setup.apps.map(\.name)
        if record.tasks, let rows {
            let writer = try rows.writer("tasks.csv")
            sink.onTask = { task in writer.append { TaskRows.write(task, appNames: names, to: $0) } }
            tasks = writer
        }
        if record.apps, rows != nil { sink.apps = AppTallies(apps: names.count) }
        if let every = record.timelineEvery, let rows {
            let writer = try rows.writer("timeline.csv")
            sink.timeline = TimelineSampler(every: every) { sample in writer.append { TimelineRows.write(sample, appNames: names, to: $0) } }
            timeline = writer
        }
        var sim = PhoneSimulation(setup: scenario.setup, policy: policy, sink: sink, streams: streams)
        let done = sim.run()
        if let storm = sim.eventStorm {
            throw ScenarioError(
                .invalid, file: scenario.file,
                message: "scenario \(scenario.name), policy \(label), replication \(replication): stopped: \(storm); check its intervals and durations")
        }
        try tasks?.close()
        try timeline?.close()
        if let tallies = done.apps, let rows {
            let writer = try rows.writer("apps.csv")
            let context = AppRows.Context(
                days: scenario.setup.duration.seconds / 86_400, batteryJ: scenario.setup.battery.capacityJ, metrics: done.metrics,
                appNames: names)
            AppRows.write(tallies, context: context, to: writer)
            try writer.close()
        }
        var events = done.events?.events
        if let log = events, let rows {
            let writer = try rows.writer("events.csv")
            for e in log { writer.append { EventRows.write(e, appNames: names, to: $0) } }
            try writer.close()
            events = nil
        }
        return (done.metrics, events)
    }

    /// Runs every policy in replications `replications` on up to `jobs` threads, in memory
    /// (no task or timeline rows). Results come back in (policy, replication) order whatever
    /// the thread count.
    package static func runAll(
        _ scenario: Scenario, replications: Range<Int>? = nil, jobs: Int,
        record: RecordOptions = RecordOptions()
    ) async throws -> [RunResult] {
        let reps = replications ?? 0..<scenario.replications
        let units = scenario.policies.flatMap { p in reps.map { (p, $0) } }
        var results = [RunResult?](repeating: nil, count: units.count)
        try await withThrowingTaskGroup(of: (Int, RunResult).self) { group in
            var next = 0
            func launch() {
                let index = next, (policy, replication) = units[index]
                next += 1
                group.addTask { (index, try Experiment.run(scenario, policy: policy, replication: replication, record: record)) }
            }
            while next < min(max(jobs, 1), units.count) { launch() }
            while let (index, result) = try await group.next() {
                var kept = result
                kept.metrics.dropSamples()
                results[index] = kept
                if next < units.count { launch() }
            }
        }
        return results.map { $0! }
    }
}

/// The people of a fleet read so far, by scenario and replication: every policy runs each
/// person, and reading one takes about a millisecond. Bounded, since a study of many
/// replications and points would otherwise keep them all.
package enum FleetPeople {
    private static let cache = Mutex<[String: Scenario]>([:])
    private static let capacity = 4096

    /// `scenario`'s person of `replication` (`scenario` itself without a fleet).
    package static func person(_ scenario: Scenario, replication: Int) throws -> Scenario {
        guard let source = scenario.source else { return scenario }
        let key = "\(source.key)#\(replication)"
        if let person = cache.withLock({ $0[key] }) { return person }
        let person = try scenario.person(replication: replication)
        cache.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[key] = person
        }
        return person
    }
}
