import Benchmark
import Experiments
import Foundation

/// Whole-simulation speed: one replication of the default scenario per iteration, per
/// policy, on one core. Throughput is runs per second; phone-days per second is that times
/// the scenario's days (7 for the default scenario).
let benchmarks: @Sendable () -> Void = {
    let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/scenarios/default.yaml").path
    let scenario = try! Scenario.load(file: file)
    let days = Int(scenario.setup.duration.seconds / 86_400)
    var replication = 0
    for policy in scenario.policies {
        Benchmark(
            "default scenario (\(days) phone-days per run), \(policy.name)",
            configuration: .init(
                metrics: [.throughput, .wallClock, .mallocCountTotal],
                scalingFactor: .one,
                maxDuration: .seconds(5),
                maxIterations: 50
            )
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! Experiment.run(scenario, policy: policy, replication: replication % 1000))
                replication += 1
            }
        }
    }
}
