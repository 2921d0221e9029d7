import Foundation
import Testing

@testable import SimRandom

@Suite("Statistics")
struct StatisticsTests {
    let data: [Double] = [2, 4, 4, 4, 5, 5, 7, 9]

    @Test func meanAndSampleVariance() {
        #expect(Statistics.mean(data) == 5)
        #expect(abs(Statistics.variance(data) - 32.0 / 7.0) < 1e-12)
        #expect(Statistics.mean([]).isNaN)
        #expect(Statistics.variance([3]).isNaN)
    }

    @Test(arguments: [(0.0, 1.0), (0.25, 1.75), (0.5, 2.5), (0.9, 3.7), (1.0, 4.0)])
    func quantilesInterpolateBetweenOrderStatistics(p: Double, expected: Double) {
        #expect(abs(Statistics.quantile(sorted: [1, 2, 3, 4], p) - expected) < 1e-12)
    }

    @Test(arguments: [(0.975, 9.0, 2.2622), (0.975, 1.0, 12.7062), (0.95, 29.0, 1.6991), (0.995, 4.0, 4.6041)])
    func studentTQuantilesMatchTables(p: Double, df: Double, table: Double) {
        let t = Statistics.tQuantile(p, degreesOfFreedom: df)
        #expect((t * 10_000).rounded() / 10_000 == table)
    }

    /// The radix sort gives exactly `sorted()`'s array, bit for bit: samples of many sizes
    /// and shapes (latencies in microseconds, mixed signs, ties, infinities, values that
    /// share their high bytes), and the -0.0 and NaN cases it hands to `sorted()`.
    @Test func radixSortEqualsTheStandardSort() throws {
        let stream = try RandomStream(StreamID(masterSeed: 7, replication: 0, name: "radix"))
        func same(_ a: [Double], _ b: [Double]) -> Bool { a.map(\.bitPattern) == b.map(\.bitPattern) }
        for n in [0, 1, 2, 64, 65, 100, 1_000, 10_000] {
            let latencies = (0..<n).map { _ in (stream.exponential(mean: 600) * 1e6).rounded() / 1e6 }
            let mixed = (0..<n).map { _ in (stream.uniform() - 0.5) * pow(10, stream.uniform() * 40 - 20) }
            let ties = (0..<n).map { _ in Double(Int(stream.uniform() * 5)) }
            let narrow = (0..<n).map { _ in 1 + stream.uniform() * 1e-9 }
            let mostlyZero = (0..<n).map { _ in stream.uniform() < 0.9 ? 0 : stream.uniform() - 0.3 }
            let allZero = [Double](repeating: 0, count: n)
            var special = mixed
            if n > 3 { special[0] = .infinity; special[1] = -.infinity; special[2] = .greatestFiniteMagnitude; special[3] = -.leastNonzeroMagnitude }
            for sample in [latencies, mixed, ties, narrow, special, mostlyZero, allZero] {
                #expect(same(Statistics.sortedAscending(sample), sample.sorted()), "n = \(n)")
            }
        }
        var withNegativeZero = (0..<200).map { Double($0 % 7) - 3 }
        withNegativeZero[50] = -0.0
        #expect(same(Statistics.sortedAscending(withNegativeZero), withNegativeZero.sorted()))
        var withNaN = (0..<200).map { Double($0) }
        withNaN[10] = .nan
        #expect(same(Statistics.sortedAscending(withNaN), withNaN.sorted()))
    }

    @Test func confidenceIntervalOfKnownData() {
        let ci = ConfidenceInterval(data)
        // sd = sqrt(32/7) = 2.13809; t(0.975, 7) = 2.36462; half-width = t sd / sqrt(8).
        #expect(ci.mean == 5)
        #expect(abs(ci.halfWidth - 2.36462 * 2.13809 / 8.0.squareRoot()) < 1e-4)
        #expect(ci.lower < ci.mean && ci.mean < ci.upper)
        #expect(ConfidenceInterval([1.0]).halfWidth.isNaN)
    }
}
