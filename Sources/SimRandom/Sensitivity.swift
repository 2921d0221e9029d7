import CGSL
import Foundation

/// Global sensitivity analysis of a model's output over k uncertain inputs ("factors"), each
/// scaled to the unit interval (a caller maps 0...1 onto a factor's plausible range):
/// Morris's screening and Sobol' indices. Each is a design of points to evaluate the model at
/// and an analysis of the outputs, in that order, so a caller can run the points however it
/// runs models (in parallel, reusing units, on a cluster). Sources: docs/sources.md §11.
public enum Sensitivity {
    // MARK: - Morris screening

    /// The points of `trajectories` Morris trajectories over `factors` factors on a grid of
    /// `levels` levels (even): each trajectory starts at a random grid point and moves one
    /// factor at a time, in a random order, by Δ = levels / (2 (levels - 1)) up or down, so
    /// consecutive points differ in one factor. `trajectories × (factors + 1)` points, one
    /// trajectory after another.
    public static func morrisDesign(factors k: Int, trajectories r: Int, levels p: Int = 4, stream: RandomStream) -> [[Double]] {
        precondition(k >= 1 && r >= 2 && p >= 2 && p % 2 == 0, "Morris needs a factor, two trajectories and an even number of levels")
        let delta = Double(p) / (2 * Double(p - 1))
        // Base levels from which a step of Δ up stays on the grid: 0, 1/(p-1), ..., 1 - Δ.
        let starts = p / 2
        var points: [[Double]] = []
        points.reserveCapacity(r * (k + 1))
        for _ in 0..<r {
            var x = (0..<k).map { _ in Double(Int(stream.uniform() * Double(starts))) / Double(p - 1) }
            var order = Array(0..<k)
            for i in stride(from: k - 1, to: 0, by: -1) { order.swapAt(i, Int(stream.uniform() * Double(i + 1))) }
            // Each factor starts at its low or high end of the step, at random.
            for i in 0..<k where stream.uniform() < 0.5 { x[i] += delta }
            points.append(x)
            for i in order {
                x[i] += x[i] + delta <= 1 + 1e-12 ? delta : -delta
                points.append(x)
            }
        }
        return points
    }

    /// One factor's elementary effects summarised: μ* (the mean absolute effect, the measure
    /// that ranks factors), μ (the mean, whose sign says the direction) and σ (the standard
    /// deviation, large when the factor interacts or acts non-linearly).
    public struct MorrisEffect: Equatable, Sendable {
        public var muStar, mu, sigma: Double
    }

    /// Each factor's elementary effects, from a Morris design (`morrisDesign`) and the outputs
    /// at its points, in order: the change of the output over the change of the factor
    /// between consecutive points of a trajectory.
    public static func morrisEffects(design: [[Double]], outputs y: [Double], factors k: Int) -> [MorrisEffect] {
        precondition(design.count == y.count && design.count % (k + 1) == 0, "a Morris design's points and outputs")
        var effects = Array(repeating: [Double](), count: k)
        for start in stride(from: 0, to: design.count, by: k + 1) {
            for step in 0..<k {
                let a = design[start + step], b = design[start + step + 1]
                guard let i = (0..<k).first(where: { a[$0] != b[$0] }) else { continue }
                effects[i].append((y[start + step + 1] - y[start + step]) / (b[i] - a[i]))
            }
        }
        return effects.map { e in
            MorrisEffect(
                muStar: Statistics.mean(e.map(abs)), mu: Statistics.mean(e),
                sigma: e.count > 1 ? Statistics.standardDeviation(e) : .nan)
        }
    }

    // MARK: - Sobol' indices

    /// Saltelli's design for first-order and total Sobol' indices: `samples` rows of two
    /// independent matrices A and B from GSL's Sobol' sequence in 2k dimensions (k at most
    /// 20), and for each factor i the matrix AB_i, A with column i from B. The points come
    /// per sample: A's row, AB_1's, ..., AB_k's, then B's (`samples × (factors + 2)` points),
    /// the order SALib's `saltelli` sampler and `sobol.analyze` use.
    public static func sobolDesign(factors k: Int, samples n: Int) -> [[Double]] {
        precondition(k >= 1 && 2 * k <= 40 && n >= 2, "Sobol' indices need 1 to 20 factors and two samples")
        let q = gsl_qrng_alloc(bgsim_qrng_sobol(), UInt32(2 * k))!
        defer { gsl_qrng_free(q) }
        var u = [Double](repeating: 0, count: 2 * k)
        // The sequence's first point is all zeros: skip it.
        _ = u.withUnsafeMutableBufferPointer { gsl_qrng_get(q, $0.baseAddress) }
        var points: [[Double]] = []
        points.reserveCapacity(n * (k + 2))
        for _ in 0..<n {
            _ = u.withUnsafeMutableBufferPointer { gsl_qrng_get(q, $0.baseAddress) }
            let a = Array(u[0..<k]), b = Array(u[k..<(2 * k)])
            points.append(a)
            for i in 0..<k {
                var ab = a
                ab[i] = b[i]
                points.append(ab)
            }
            points.append(b)
        }
        return points
    }

    /// One factor's Sobol' indices: the share of the output's variance it explains alone
    /// (`first`) and with all its interactions (`total`).
    public struct SobolIndex: Equatable, Sendable {
        public var first, total: Double
    }

    /// Each factor's Sobol' indices from the outputs at a Saltelli design's points
    /// (`sobolDesign`), in order: Saltelli et al. (2010)'s estimator of the first-order index,
    /// mean(f_B (f_ABi - f_A)) / V, and Jansen's of the total, mean((f_A - f_ABi)²) / 2V, with V
    /// the variance of the A and B outputs together; the outputs are centred first, as SALib
    /// does, which leaves the indices' meaning and lowers the first-order estimator's variance.
    public static func sobolIndices(outputs y: [Double], factors k: Int) -> [SobolIndex] {
        precondition(y.count % (k + 2) == 0 && y.count >= 2 * (k + 2), "a Saltelli design's outputs")
        let n = y.count / (k + 2)
        let mean = Statistics.mean(y)
        let sd = (y.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(y.count)).squareRoot()
        let scale = sd > 0 ? sd : 1
        let c = y.map { ($0 - mean) / scale }
        let a = (0..<n).map { c[$0 * (k + 2)] }, b = (0..<n).map { c[$0 * (k + 2) + k + 1] }
        let ab = a + b
        let m = ab.reduce(0, +) / Double(ab.count)
        let v = ab.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(ab.count)
        return (0..<k).map { i in
            var first = 0.0, total = 0.0
            for j in 0..<n {
                let abi = c[j * (k + 2) + 1 + i]
                first += b[j] * (abi - a[j])
                total += (a[j] - abi) * (a[j] - abi)
            }
            return SobolIndex(first: first / Double(n) / v, total: 0.5 * total / Double(n) / v)
        }
    }

    // MARK: - The check

    /// The Ishigami function (Ishigami and Homma 1990), the standard check of a Sobol'
    /// estimator: sin x1 + a sin² x2 + b x3⁴ sin x1 on [-π, π]³, with a = 7 and b = 0.1, whose
    /// indices are known in closed form (Sobol' and Levitan 1999).
    public enum Ishigami {
        static let a = 7.0, b = 0.1

        /// The function at a point of the unit cube, mapped onto [-π, π]³.
        public static func f(_ u: [Double]) -> Double {
            let x = u.map { -Double.pi + 2 * Double.pi * $0 }
            return sin(x[0]) + a * sin(x[1]) * sin(x[1]) + b * x[2] * x[2] * x[2] * x[2] * sin(x[0])
        }

        /// Each factor's known indices: 0.314, 0.442 and 0; totals 0.558, 0.442 and 0.244.
        public static var indices: [SobolIndex] {
            let pi4 = Double.pi * Double.pi * Double.pi * Double.pi, pi8 = pi4 * pi4
            let v1 = 0.5 * (1 + b * pi4 / 5) * (1 + b * pi4 / 5), v2 = a * a / 8, v13 = b * b * pi8 * (1.0 / 18 - 1.0 / 50)
            let v = v1 + v2 + v13
            return [SobolIndex(first: v1 / v, total: (v1 + v13) / v), SobolIndex(first: v2 / v, total: v2 / v), SobolIndex(first: 0, total: v13 / v)]
        }
    }
}
