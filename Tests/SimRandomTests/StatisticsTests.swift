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

    @Test func confidenceIntervalOfKnownData() {
        let ci = ConfidenceInterval(data)
        // sd = sqrt(32/7) = 2.13809; t(0.975, 7) = 2.36462; half-width = t sd / sqrt(8).
        #expect(ci.mean == 5)
        #expect(abs(ci.halfWidth - 2.36462 * 2.13809 / 8.0.squareRoot()) < 1e-4)
        #expect(ci.lower < ci.mean && ci.mean < ci.upper)
        #expect(ConfidenceInterval([1.0]).halfWidth.isNaN)
    }
}
