import Foundation
import Testing

@testable import SimRandom

@Suite("Distributions")
struct DistributionTests {
    static let draws = 1_000_000

    /// Each case: a name, a sampler, and the distribution's true mean.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let trueMean: Double
        let draw: @Sendable (RandomStream) -> Double
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "uniform(2, 5)", trueMean: 3.5) { $0.uniform(2, 5) },
        Case(name: "exponential(mean 2)", trueMean: 2) { $0.exponential(mean: 2) },
        Case(name: "normal(1, 3)", trueMean: 1) { $0.normal(mu: 1, sigma: 3) },
        Case(name: "lognormal(0.5, 0.4)", trueMean: exp(0.5 + 0.08)) { $0.lognormal(mu: 0.5, sigma: 0.4) },
        Case(name: "gamma(shape 2, scale 3)", trueMean: 6) { $0.gamma(shape: 2, scale: 3) },
        Case(name: "weibull(scale 2, shape 1.5)", trueMean: 2 * tgamma(1 + 1 / 1.5)) { $0.weibull(scale: 2, shape: 1.5) },
        Case(name: "pareto(shape 3, min 2)", trueMean: 3) { $0.pareto(shape: 3, minimum: 2) },
        Case(name: "poisson(4.5)", trueMean: 4.5) { Double($0.poisson(mean: 4.5)) },
        Case(name: "bernoulli(0.3)", trueMean: 0.3) { $0.bernoulli(0.3) ? 1 : 0 },
    ]

    /// Over 1e6 draws the true mean lies inside the sample's 99.9% t-interval. The streams are
    /// seeded, so the outcome is fixed; a wrong parameterisation (scale for rate, shape for
    /// scale) moves the mean by far more than the interval's width.
    @Test(arguments: cases)
    func sampleMeanCoversTheTrueMean(_ c: Case) throws {
        let s = try RandomStream(StreamID(masterSeed: 2026, replication: 0, name: c.name))
        let xs = (0..<Self.draws).map { _ in c.draw(s) }
        let ci = ConfidenceInterval(xs, level: 0.999)
        #expect(
            ci.lower <= c.trueMean && c.trueMean <= ci.upper,
            "\(c.name): mean \(ci.mean) +- \(ci.halfWidth) misses \(c.trueMean)")
        #expect(ci.halfWidth < 0.01 * max(1, c.trueMean), "interval too wide to mean anything")
    }

    @Test func lognormalAndParetoKeepTheirSupport() throws {
        let s = try RandomStream(seed: 1)
        let pareto = (0..<10_000).map { _ in s.pareto(shape: 1.2, minimum: 5) }
        let lognormal = (0..<10_000).map { _ in s.lognormal(mu: 0, sigma: 2) }
        #expect(pareto.allSatisfy { $0 >= 5 })
        #expect(lognormal.allSatisfy { $0 > 0 })
    }

    @Test func weightedChoiceFollowsItsWeights() throws {
        let s = try RandomStream(seed: 99)
        let choice = try WeightedChoice(weights: [1, 2, 0, 7])
        var counts = [0, 0, 0, 0]
        for _ in 0..<Self.draws { counts[choice.sample(using: s)] += 1 }
        #expect(counts[2] == 0)
        for (i, p) in [0.1, 0.2, 0.0, 0.7].enumerated() where p > 0 {
            let share = Double(counts[i]) / Double(Self.draws)
            let sd = (p * (1 - p) / Double(Self.draws)).squareRoot()
            #expect(abs(share - p) < 4 * sd, "outcome \(i): share \(share), expected \(p)")
        }
    }

    @Test(arguments: [[Double](), [1, -1], [0, 0], [1, .nan]])
    func weightedChoiceRejectsBadWeights(_ weights: [Double]) {
        #expect(throws: RandomStreamError.self) { try WeightedChoice(weights: weights) }
    }
}
