import Scheduling
import SimRandom

/// The result of one policy in one replication.
public struct RunResult: Sendable {
    public var policy: PolicySpec
    public var replication: Int
    public var metrics: RunMetrics
    /// The run's event log, when asked for (`--events`).
    public var events: [LoggedEvent]?
}

/// Runs the units of a scenario: every policy in every replication.
public enum Experiment {
    /// Simulates one policy in one replication. A pure function of its arguments: the
    /// replication's random streams depend on (seed, replication, stream name) only.
    public static func run(_ scenario: Scenario, policy: PolicySpec, replication: Int) throws(RandomStreamError) -> RunMetrics {
        try run(scenario, policy: policy, replication: replication, events: false).metrics
    }

    /// Simulates one policy in one replication, keeping its event log if `events`.
    public static func run(_ scenario: Scenario, policy: PolicySpec, replication: Int,
                           events: Bool) throws(RandomStreamError) -> (metrics: RunMetrics, events: [LoggedEvent]?) {
        switch policy.rule {
        case .eager: try run(scenario, custom: EagerPolicy(), replication: replication, events: events)
        case .chargeOnly: try run(scenario, custom: ChargeOnlyPolicy(), replication: replication, events: events)
        case .coalesce(let p): try run(scenario, custom: CoalescePolicy(p), replication: replication, events: events)
        case .ios(let p): try run(scenario, custom: DuetPolicy(p), replication: replication, events: events)
        case .android(let p): try run(scenario, custom: AndroidPolicy(p), replication: replication, events: events)
        case .oracle(let p): try run(scenario, custom: OraclePolicy(p), replication: replication, events: events)
        }
    }

    /// Simulates any policy, a user's own included, in one replication of the scenario: the
    /// same world (same streams) the built-in policies see in that replication.
    public static func run<P: SchedulingPolicy>(_ scenario: Scenario, custom policy: P, replication: Int,
                                                events: Bool = false) throws(RandomStreamError) -> (metrics: RunMetrics, events: [LoggedEvent]?) {
        let streams = try WorldStreams(setup: scenario.setup, masterSeed: scenario.seed,
                                       replication: UInt64(replication), generator: scenario.generator)
        let metrics = RunMetrics(apps: scenario.setup.apps)
        if events {
            var sim = PhoneSimulation(setup: scenario.setup, policy: policy, sink: SinkPair(metrics, EventLog()), streams: streams)
            let sink = sim.run()
            return (sink.first, sink.second.events)
        }
        var sim = PhoneSimulation(setup: scenario.setup, policy: policy, sink: metrics, streams: streams)
        return (sim.run(), nil)
    }

    /// Runs every policy x replication on up to `jobs` threads. Results come back in
    /// (policy, replication) order whatever the thread count, so outputs are byte-identical.
    public static func runAll(_ scenario: Scenario, jobs: Int, events: Bool = false) async throws -> [RunResult] {
        let units = scenario.policies.flatMap { p in (0..<scenario.replications).map { (p, $0) } }
        var results = [(metrics: RunMetrics, events: [LoggedEvent]?)?](repeating: nil, count: units.count)
        try await withThrowingTaskGroup(of: (Int, (metrics: RunMetrics, events: [LoggedEvent]?)).self) { group in
            var next = 0
            func launch() {
                let index = next, (policy, replication) = units[index]
                next += 1
                group.addTask { (index, try Experiment.run(scenario, policy: policy, replication: replication, events: events)) }
            }
            while next < min(max(jobs, 1), units.count) { launch() }
            while let (index, metrics) = try await group.next() {
                results[index] = metrics
                if next < units.count { launch() }
            }
        }
        return zip(units, results).map { RunResult(policy: $0.0, replication: $0.1, metrics: $1!.metrics, events: $1!.events) }
    }
}
