import Benchmark
import Experiments
import Foundation

/// Whole-simulation speed: one replication per iteration, per policy, on one core, of the
/// default scenario (5 apps, 7 days) and of the reference scenario (20 apps, 30 days; issue
/// 7's measure). Throughput is runs per second; phone-days per second is that times the
/// scenario's days.
let benchmarks: @Sendable () -> Void = {
    let models = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/scenarios")
    for name in ["default", "reference"] {
        let scenario = try! Scenario.load(file: models.appendingPathComponent("\(name).yaml").path)
        let days = Int(scenario.setup.duration.seconds / 86_400)
        var replication = 0
        for policy in scenario.policies {
            Benchmark(
                "\(name) scenario (\(days) phone-days per run), \(policy.name)",
                configuration: .init(
                    metrics: [.throughput, .wallClock, .mallocCountTotal],
                    scalingFactor: .one,
                    maxDuration: .seconds(5),
                    maxIterations: name == "default" ? 50 : 20
                )
            ) { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(try! Experiment.run(scenario, policy: policy, replication: replication % 1000))
                    replication += 1
                }
            }
        }
    }
}
