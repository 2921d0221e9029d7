import Benchmark
import Experiments
import Foundation
import ResultFiles

/// What writing results costs beside the simulation: one reference run (20 apps, 30 days,
/// eager) written as a study with its result files, without tasks.csv (the summaries only)
/// and with it (about 3 MB, 12,000 rows); and SHA-256, which the manifest takes of every
/// result file (throughput: 16 MB hashes per second).
let benchmarks: @Sendable () -> Void = {
    let models = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/scenarios")
    var scenario = try! Scenario.load(file: models.appendingPathComponent("reference.yaml").path)
    scenario.policies = scenario.policies.filter { $0.name == "eager" }
    scenario.replications = 1
    let plan = StudyPlan(scenario: scenario)
    for tasks in [false, true] {
        Benchmark(
            "reference scenario, one 30-day run, eager, written \(tasks ? "with" : "without") tasks.csv",
            configuration: .init(metrics: [.throughput, .wallClock], scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 20)
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-bench-\(UUID().uuidString)")
                let options = StudyOptions(jobs: 1, record: RecordOptions(tasks: tasks))
                blackHole(try await Experiment.perform(plan, options: options, to: folder))
                try? FileManager.default.removeItem(at: folder)
            }
        }
    }
    let data = (0..<(16 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
    for hardware in Set([false, SHA256.usesHardware]).sorted(by: { !$0 && $1 }) {
        Benchmark(
            "SHA-256 of 16 MB, \(hardware ? "SHA instructions" : "Swift rounds")",
            configuration: .init(metrics: [.throughput, .wallClock], scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 20)
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                var h = SHA256(hardware: hardware)
                h.update(data)
                blackHole(h.hexDigest())
            }
        }
    }
}
