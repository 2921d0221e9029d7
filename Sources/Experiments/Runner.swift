import Scheduling
import SimRandom

/// The result of one policy in one replication.
public struct RunResult: Sendable {
    public var policy: PolicySpec
    public var replication: Int
    public var metrics: RunMetrics
}

/// Runs the units of a scenario: every policy in every replication.
public enum Experiment {
    /// Simulates one policy in one replication. A pure function of its arguments: the
    /// replication's random streams depend on (seed, replication, stream name) only.
    public static func run(_ scenario: Scenario, policy: PolicySpec, replication: Int) throws(RandomStreamError) -> RunMetrics {
        let streams = try WorldStreams(setup: scenario.setup, masterSeed: scenario.seed,
                                       replication: UInt64(replication), generator: scenario.generator)
        func simulate<P: SchedulingPolicy>(_ policy: P) -> RunMetrics {
            var sim = PhoneSimulation(setup: scenario.setup, policy: policy, sink: RunMetrics(), streams: streams)
            return sim.run()
        }
        switch policy.kind {
        case .eager: return simulate(EagerPolicy())
        case .chargeOnly: return simulate(ChargeOnlyPolicy())
        }
    }

    /// Runs every policy x replication on up to `jobs` threads. Results come back in
    /// (policy, replication) order whatever the thread count, so outputs are byte-identical.
    public static func runAll(_ scenario: Scenario, jobs: Int) async throws -> [RunResult] {
        let units = scenario.policies.flatMap { p in (0..<scenario.replications).map { (p, $0) } }
        var results = [RunMetrics?](repeating: nil, count: units.count)
        try await withThrowingTaskGroup(of: (Int, RunMetrics).self) { group in
            var next = 0
            func launch() {
                let index = next, (policy, replication) = units[index]
                next += 1
                group.addTask { (index, try Experiment.run(scenario, policy: policy, replication: replication)) }
            }
            while next < min(max(jobs, 1), units.count) { launch() }
            while let (index, metrics) = try await group.next() {
                results[index] = metrics
                if next < units.count { launch() }
            }
        }
        return zip(units, results).map { RunResult(policy: $0.0, replication: $0.1, metrics: $1!) }
    }
}
