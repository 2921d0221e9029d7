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
        let streams = try WorldStreams(setup: scenario.setup, masterSeed: scenario.seed,
                                       replication: UInt64(replication), generator: scenario.generator)
        func simulate<P: SchedulingPolicy>(_ policy: P) -> (RunMetrics, [LoggedEvent]?) {
            if events {
                var sim = PhoneSimulation(setup: scenario.setup, policy: policy, sink: SinkPair(RunMetrics(apps: scenario.setup.apps), EventLog()), streams: streams)
                let sink = sim.run()
                return (sink.first, sink.second.events)
            }
            var sim = PhoneSimulation(setup: scenario.setup, policy: policy, sink: RunMetrics(apps: scenario.setup.apps), streams: streams)
            return (sim.run(), nil)
        }
        switch policy.rule {
        case .eager: return simulate(EagerPolicy())
        case .chargeOnly: return simulate(ChargeOnlyPolicy())
        case .coalesce(let p): return simulate(CoalescePolicy(p))
        case .ios(let p): return simulate(DuetPolicy(p))
        case .android(let p): return simulate(AndroidPolicy(p))
        case .oracle(let p): return simulate(OraclePolicy(p))
        }
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
