import Foundation
import Testing

@testable import SimRandom

@Suite("Sensitivity analysis: Morris screening and Sobol' indices")
struct SensitivityTests {
    /// With 8,192 samples of Saltelli's design the estimates lie within 0.02 of Ishigami's
    /// known indices (0.314, 0.442, 0; totals 0.558, 0.442, 0.244).
    @Test func sobolIndicesOfIshigamiMatchTheClosedForm() {
        let design = Sensitivity.sobolDesign(factors: 3, samples: 8192)
        #expect(design.count == 8192 * 5)
        let indices = Sensitivity.sobolIndices(outputs: design.map(Sensitivity.Ishigami.f), factors: 3)
        for (i, known) in Sensitivity.Ishigami.indices.enumerated() {
            let (first, total) = (known.first, known.total)
            #expect(abs(indices[i].first - first) < 0.02, "S\(i + 1) \(indices[i].first), known \(first)")
            #expect(abs(indices[i].total - total) < 0.02, "ST\(i + 1) \(indices[i].total), known \(total)")
        }
    }

    /// Saltelli's design: per sample, A's row, then A with one column from B per factor, then
    /// B's row.
    @Test func saltellisDesignSwapsOneColumnAtATime() {
        let d = Sensitivity.sobolDesign(factors: 2, samples: 4)
        for s in 0..<4 {
            let a = d[s * 4], ab1 = d[s * 4 + 1], ab2 = d[s * 4 + 2], b = d[s * 4 + 3]
            #expect(ab1 == [b[0], a[1]] && ab2 == [a[0], b[1]])
            #expect(a.allSatisfy { (0..<1).contains($0) } && b.allSatisfy { (0..<1).contains($0) })
        }
        #expect(d[0] != [0, 0], "the sequence's first point, all zeros, is skipped")
    }

    /// On a model linear in x1 and x2 and blind to x3, every elementary effect is the slope:
    /// μ* of 10 and 3, σ of 0, and nothing for x3; each trajectory moves each factor once by
    /// Δ = 2/3 on a 4-level grid.
    @Test func morrisEffectsOfALinearModelAreItsSlopes() throws {
        let stream = try RandomStream(seed: 7)
        let design = Sensitivity.morrisDesign(factors: 3, trajectories: 10, levels: 4, stream: stream)
        #expect(design.count == 40)
        for t in 0..<10 {
            for step in 0..<3 {
                let a = design[t * 4 + step], b = design[t * 4 + step + 1]
                let moved = (0..<3).filter { a[$0] != b[$0] }
                #expect(moved.count == 1 && abs(abs(b[moved[0]] - a[moved[0]]) - 2.0 / 3) < 1e-12)
                #expect(b.allSatisfy { $0 >= 0 && $0 <= 1 + 1e-12 })
            }
        }
        let effects = Sensitivity.morrisEffects(design: design, outputs: design.map { 10 * $0[0] - 3 * $0[1] }, factors: 3)
        #expect(abs(effects[0].muStar - 10) < 1e-9 && abs(effects[0].mu - 10) < 1e-9 && effects[0].sigma < 1e-9)
        #expect(abs(effects[1].muStar - 3) < 1e-9 && abs(effects[1].mu + 3) < 1e-9)
        #expect(effects[2].muStar == 0)
    }

    /// Morris ranks Ishigami's factors as their total indices do: x1, x2, then x3.
    @Test func morrisRanksIshigamisFactorsByInfluence() throws {
        let design = Sensitivity.morrisDesign(factors: 3, trajectories: 50, levels: 4, stream: try RandomStream(seed: 3))
        let e = Sensitivity.morrisEffects(design: design, outputs: design.map(Sensitivity.Ishigami.f), factors: 3)
        #expect(e[2].muStar > 0 && e[2].muStar < e[0].muStar && e[2].muStar < e[1].muStar, "\(e)")
    }
}
