import Benchmark
import SimEngine
import SimRandom

/// The hold model (Vaucher & Duval 1975; Jones, CACM 1986): the standard benchmark of a
/// pending-event set. The queue holds N events; each step pops the earliest and schedules
/// one new event at now + Exp(mean 1 s), so N stays constant. One scaled iteration is one
/// event (pop + schedule + one GSL exponential draw); throughput is events per second.
let benchmarks: @Sendable () -> Void = {
    for n in [16, 1_000, 100_000] {
        Benchmark(
            "Hold model N=\(n)",
            configuration: .init(
                metrics: [.throughput, .wallClock, .mallocCountTotal, .peakMemoryResident],
                scalingFactor: .mega,
                maxDuration: .seconds(10),
                maxIterations: 5
            )
        ) { benchmark in
            let stream = try! RandomStream(seed: 12345)
            var sim = Simulator<Int32>(capacity: n)
            for i in 0..<n {
                sim.schedule(Int32(truncatingIfNeeded: i), after: SimDuration(seconds: stream.exponential(mean: 1)))
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let event = sim.step()!
                sim.schedule(event, after: SimDuration(seconds: stream.exponential(mean: 1)))
            }
            benchmark.stopMeasurement()
            blackHole(sim.now)
        }
    }

    // The random draw alone, to separate its cost from the queue's in a hold step.
    Benchmark(
        "GSL exponential draw", configuration: .init(metrics: [.throughput, .wallClock], scalingFactor: .mega, maxDuration: .seconds(5), maxIterations: 5)
    ) { benchmark in
        let stream = try! RandomStream(seed: 12345)
        var sum = SimDuration.zero
        for _ in benchmark.scaledIterations { sum += SimDuration(seconds: stream.exponential(mean: 1)) }
        blackHole(sum)
    }
}
