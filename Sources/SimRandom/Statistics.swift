import CGSL
import Synchronization

/// Descriptive statistics and quantiles, computed by GSL.
///
/// Sums are not reordered: GSL accumulates in index order (with a running-mean update), so a
/// result depends only on the values and their order, never on threading.
public enum Statistics {
    /// The arithmetic mean; `nan` for no data.
    public static func mean(_ data: [Double]) -> Double {
        guard !data.isEmpty else { return .nan }
        return data.withUnsafeBufferPointer { gsl_stats_mean($0.baseAddress, 1, $0.count) }
    }

    /// The sample variance with n - 1 in the denominator; `nan` for fewer than two values.
    public static func variance(_ data: [Double]) -> Double {
        guard data.count > 1 else { return .nan }
        return data.withUnsafeBufferPointer { gsl_stats_variance($0.baseAddress, 1, $0.count) }
    }

    /// The sample standard deviation (square root of `variance`).
    public static func standardDeviation(_ data: [Double]) -> Double {
        variance(data).squareRoot()
    }

    /// The `p`-quantile of data sorted in ascending order, by linear interpolation between
    /// order statistics (GSL's `gsl_stats_quantile_from_sorted_data`, Hyndman & Fan type 7).
    /// - Precondition: `sorted` is ascending and `p` is in [0, 1].
    public static func quantile(sorted: [Double], _ p: Double) -> Double {
        precondition((0...1).contains(p), "quantile \(p) is outside [0, 1]")
        guard !sorted.isEmpty else { return .nan }
        assert(zip(sorted, sorted.dropFirst()).allSatisfy { $0 <= $1 }, "quantile: data is not sorted")
        return sorted.withUnsafeBufferPointer { gsl_stats_quantile_from_sorted_data($0.baseAddress, 1, $0.count, p) }
    }

    /// `data` in ascending order: the same array `data.sorted()` gives, made by an LSD radix
    /// sort on the values' bits (one byte a pass, passes where every value has the same byte
    /// skipped). A run's latency samples (10,000 values a 30-day reference run) were sorted
    /// three times per run by the standard library's merge sort, about 250 instructions a
    /// value and 4% of a run's time (perf); this takes a few dozen.
    ///
    /// For finite values and infinities other than -0.0 the order of the bits is the order of
    /// the values. With a NaN or a -0.0 present (where `<` and the bits disagree), it falls
    /// back to `sorted()`, so the result is always `sorted()`'s. Zeros, when they are an
    /// eighth or more of the values (a policy that starts requests at once has mostly zero
    /// latencies), are counted out and put back between the negatives and the positives.
    public static func sortedAscending(_ data: [Double]) -> [Double] {
        let n = data.count
        guard n > 64 else { return data.sorted() }
        var zeros = 0
        for x in data {
            if x.isNaN || (x == 0 && x.sign == .minus) { return data.sorted() }
            if x == 0 { zeros += 1 }
        }
        if zeros >= n / 8, zeros > 0 {
            var sorted = sortedAscending(data.filter { $0 != 0 })
            let positives = sorted.firstIndex { $0 > 0 } ?? sorted.count
            sorted.insert(contentsOf: repeatElement(0, count: zeros), at: positives)
            return sorted
        }
        var keys = [UInt64](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: 8 * 256)
        data.withUnsafeBufferPointer { values in
            keys.withUnsafeMutableBufferPointer { keys in
                counts.withUnsafeMutableBufferPointer { counts in
                    for i in 0..<n {
                        // Negative values: all bits flipped (larger magnitude sorts first);
                        // positive ones: the sign bit set, so they sort after every negative.
                        let bits = values[i].bitPattern
                        let key = bits >> 63 == 1 ? ~bits : bits | (1 << 63)
                        keys[i] = key
                        for pass in 0..<8 { counts[pass * 256 + Int(truncatingIfNeeded: key >> (8 * UInt64(pass))) & 0xFF] += 1 }
                    }
                }
            }
        }
        var other = [UInt64](repeating: 0, count: n)
        return keys.withUnsafeMutableBufferPointer { a in
            other.withUnsafeMutableBufferPointer { b in
                counts.withUnsafeMutableBufferPointer { counts in
                    var from = a, to = b
                    for pass in 0..<8 {
                        let c = counts.baseAddress! + pass * 256
                        let shift = 8 * UInt64(pass)
                        // Every key has the same byte here: this pass would not move anything.
                        if c[Int(truncatingIfNeeded: from[0] >> shift) & 0xFF] == n { continue }
                        var start = 0
                        for d in 0..<256 { let k = c[d]; c[d] = start; start += k }
                        for i in 0..<n {
                            let key = from[i]
                            let d = Int(truncatingIfNeeded: key >> shift) & 0xFF
                            to[c[d]] = key
                            c[d] += 1
                        }
                        swap(&from, &to)
                    }
                    let sorted = from
                    return [Double](unsafeUninitializedCapacity: n) { values, count in
                        for i in 0..<n {
                            let key = sorted[i]
                            values[i] = Double(bitPattern: key >> 63 == 1 ? key & ~(1 << 63) : ~key)
                        }
                        count = n
                    }
                }
            }
        }
    }

    /// The `p`-quantile of Student's t distribution with `degreesOfFreedom` degrees of freedom:
    /// the t with P(T <= t) = p. `tQuantile(0.975, 9)` is 2.2622.
    public static func tQuantile(_ p: Double, degreesOfFreedom: Double) -> Double {
        precondition(p > 0 && p < 1, "t quantile \(p) is outside (0, 1)")
        precondition(degreesOfFreedom > 0, "t quantile needs degrees of freedom > 0")
        // Kept once computed: a study's intervals share a few (p, df), and GSL's inverse
        // takes about 190,000 instructions a call (a fifth of writing a large sweep's results).
        let key = TKey(p: p, df: degreesOfFreedom)
        if let t = tQuantiles.withLock({ $0[key] }) { return t }
        let t = gsl_cdf_tdist_Pinv(p, degreesOfFreedom)
        tQuantiles.withLock { $0[key] = t }
        return t
    }

    struct TKey: Hashable { var p: Double, df: Double }
    static let tQuantiles = Mutex<[TKey: Double]>([:])

    /// P(|T| >= |t|) for Student's t with `degreesOfFreedom`: the two-sided p-value of a t
    /// statistic. `tTwoSidedP(2.2622, 9)` is 0.05.
    public static func tTwoSidedP(_ t: Double, degreesOfFreedom: Double) -> Double {
        precondition(degreesOfFreedom > 0, "t distribution needs degrees of freedom > 0")
        return 2 * gsl_cdf_tdist_Q(abs(t), degreesOfFreedom)
    }
}

/// A mean with its two-sided Student-t confidence interval.
///
/// For n independent replications with sample mean m and standard deviation s, the interval
/// is m +- t(1 - alpha/2, n - 1) s / sqrt(n) (Law & Kelton, "Simulation Modeling and
/// Analysis", §9.4). With one replication the half-width is unknown (`nan`).
public struct ConfidenceInterval: Equatable, Sendable {
    /// The sample mean.
    public var mean: Double
    /// The sample standard deviation (n - 1 in the denominator).
    public var standardDeviation: Double
    /// Half the interval's width; `nan` with one replication.
    public var halfWidth: Double
    /// The number of replications.
    public var count: Int
    /// The confidence level, such as 0.95.
    public var level: Double

    /// The interval's lower end.
    public var lower: Double { mean - halfWidth }
    /// The interval's upper end.
    public var upper: Double { mean + halfWidth }

    /// The interval of `data` at confidence `level` (0.95 by default).
    public init(_ data: [Double], level: Double = 0.95) {
        precondition(level > 0 && level < 1, "confidence level \(level) is outside (0, 1)")
        self.count = data.count
        self.level = level
        self.mean = Statistics.mean(data)
        self.standardDeviation = Statistics.standardDeviation(data)
        if data.count > 1 {
            let t = Statistics.tQuantile(1 - (1 - level) / 2, degreesOfFreedom: Double(data.count - 1))
            halfWidth = t * standardDeviation / Double(data.count).squareRoot()
        } else {
            halfWidth = .nan
        }
    }
}
