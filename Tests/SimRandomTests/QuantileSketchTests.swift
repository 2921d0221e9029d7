import Foundation
import Testing

@testable import SimRandom

/// Percentiles in memory that stops growing: exact up to a count, within the bound past it.
@Suite("Quantile sketch")
struct QuantileSketchTests {
    static let ps = [0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1]

    /// Latency-like values: a tenth zero, the rest spread over nine decades in whole microseconds.
    static func sample(_ n: Int, seed: UInt64) throws -> [Double] {
        let stream = try RandomStream(StreamID(masterSeed: seed, replication: 0, name: "sketch"))
        return (0..<n).map { _ in
            stream.uniform() < 0.1 ? 0 : (pow(10, stream.uniform() * 9 - 3) * 1e6).rounded() / 1e6
        }
    }

    @Test func upToTheLimitEveryValueIsKeptAndTheSummaryIsExact() throws {
        let values = try Self.sample(1_000, seed: 1)
        var s = QuantileSketch(exactLimit: 1_000)
        for v in values { s.add(v) }
        #expect(s.isExact && s.exactValues == values)
        let summary = s.summary(), sorted = values.sorted()
        #expect(summary.isExact && summary.count == 1_000)
        #expect(summary.mean == Statistics.mean(sorted) && summary.max == sorted.last)
        for p in Self.ps { #expect(summary.quantile(p) == Statistics.quantile(sorted: sorted, p)) }
    }

    /// Past the limit every quantile is within the stated relative error of the exact one,
    /// count, maximum and least are exact, the mean is the mean, and memory is the buckets.
    @Test(arguments: [0, 4_096])
    func pastTheLimitQuantilesAreWithinTheBound(limit: Int) throws {
        let values = try Self.sample(200_000, seed: 2)
        var s = QuantileSketch(exactLimit: limit)
        for v in values { s.add(v) }
        #expect(!s.isExact && s.exactValues == nil)
        let summary = s.summary(), sorted = values.sorted()
        #expect(!summary.isExact && summary.count == values.count && summary.max == sorted.last)
        #expect(abs(summary.mean - Statistics.mean(values)) <= 1e-9 * Statistics.mean(values))
        for p in Self.ps {
            let exact = Statistics.quantile(sorted: sorted, p), estimate = summary.quantile(p)
            #expect(abs(estimate - exact) <= QuantileSketch.relativeError * exact + 1e-12, "p\(p): \(estimate) against \(exact)")
        }
        // Nine decades at 1% a bucket, whatever the count.
        #expect(s.bins.count <= Int((9 * log(10) / QuantileSketch.logGamma).rounded(.up)) + 2)
    }

    @Test func anEmptySampleHasNoQuantiles() {
        for s in [QuantileSketch(), QuantileSketch(exactLimit: 0)] {
            let summary = s.summary()
            #expect(summary.count == 0 && summary.mean.isNaN && summary.max.isNaN && summary.quantile(0.5).isNaN)
        }
    }

    @Test func aSketchOfOneValueGivesIt() {
        var s = QuantileSketch(exactLimit: 0)
        s.add(42.5)
        #expect(s.summary().quantile(0.5) == 42.5 && s.summary().mean == 42.5)
    }
}
