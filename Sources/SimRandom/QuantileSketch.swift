import Foundation

/// A sample kept for its distribution in memory that stops growing: every value while there
/// are at most `exactLimit` of them, so mean and quantiles are exact; past that, a sketch
/// whose quantiles are within `relativeError` of the true value (a log-bucketed histogram,
/// DDSketch; docs/sources.md §11) and whose count, mean and maximum stay exact.
///
/// Values are durations or other non-negative quantities; a negative one counts as zero.
public struct QuantileSketch: Sendable {
    /// Values kept one by one before the sketch takes over: a 30-day run of the reference
    /// phone has about 12,000 latencies, the bundled datasets' runs at most 2,450.
    public static let defaultExactLimit = 16_384
    /// The sketch's bound on a quantile's relative error, |estimate - true| / true.
    public static let relativeError = 0.005
    /// γ: each bucket's upper bound over its lower bound, (1 + α) / (1 - α).
    static let gamma = (1 + relativeError) / (1 - relativeError)
    static let logGamma = log(gamma)
    /// Below this a value counts in the zero bucket (durations are whole microseconds).
    static let smallest = 1e-7

    /// Values added.
    public var count: Int { added }
    @usableFromInline var added = 0
    /// The largest value added; `nan` before any.
    public var max: Double { count > 0 ? greatest : .nan }
    /// Every value, in the order added, while the sample is exact.
    public var exactValues: [Double]? { sketched ? nil : values }
    /// The values while exact (the hot path appends here), and whether the sketch took over.
    @usableFromInline var values: [Double] = []
    @usableFromInline var sketched = false
    @usableFromInline let exactLimit: Int
    @usableFromInline var greatest = -Double.infinity
    /// The least value binned (tracked once sketched).
    var least = Double.infinity
    /// Past the limit: the sum (compensated), the zero bucket's count, and the buckets'
    /// counts from index `firstBin` up. Bucket i holds values in (γ^(i-1), γ^i].
    var sum = 0.0, compensation = 0.0
    var zeros = 0
    var bins: [Int] = []
    var firstBin = 0

    /// An empty sample, exact up to `exactLimit` values (0: sketched from the first).
    public init(exactLimit: Int = QuantileSketch.defaultExactLimit) {
        self.exactLimit = exactLimit
        sketched = exactLimit == 0
    }

    /// Whether every value is kept, so quantiles are exact.
    public var isExact: Bool { !sketched }

    /// Adds a value. Inlined into the simulation, which adds two or three a task.
    @inlinable
    public mutating func add(_ x: Double) {
        added += 1
        if x > greatest { greatest = x }
        if !sketched, added <= exactLimit {
            values.append(x)
            return
        }
        addSketched(x)
    }

    @usableFromInline
    mutating func addSketched(_ x: Double) {
        if !sketched {
            sketched = true
            for v in values { bin(v) }
            values = []
        }
        bin(x)
    }

    mutating func bin(_ x: Double) {
        if x < least { least = x }
        let y = sum + x
        compensation += abs(sum) >= abs(x) ? (sum - y) + x : (x - y) + sum
        sum = y
        guard x >= Self.smallest else {
            zeros += 1
            return
        }
        let i = Int((log(x) / Self.logGamma).rounded(.up))
        if bins.isEmpty {
            firstBin = i
            bins = [0]
        } else if i < firstBin {
            bins.insert(contentsOf: repeatElement(0, count: firstBin - i), at: 0)
            firstBin = i
        } else if i >= firstBin + bins.count {
            bins.append(contentsOf: repeatElement(0, count: i - firstBin - bins.count + 1))
        }
        bins[i - firstBin] += 1
    }

    /// Mean, quantiles and maximum, for reading many of them: an exact sample is sorted once.
    public func summary() -> Summary {
        sketched ? Summary(sketch: self) : Summary(sorted: Statistics.sortedAscending(values))
    }

    /// A sample's mean, quantiles and maximum.
    public struct Summary: Sendable {
        /// Values in the sample.
        public let count: Int
        /// The sample's mean; `nan` when empty.
        public var mean: Double { sketch == nil ? Statistics.mean(sorted) : sketchMean }
        let sketchMean: Double
        /// The largest value; `nan` when empty.
        public let max: Double
        /// Whether the quantiles are exact (no sketch).
        public var isExact: Bool { sketch == nil }
        let sorted: [Double]
        let sketch: QuantileSketch?

        /// The summary of values already in ascending order.
        public init(sorted: [Double]) {
            self.sorted = sorted
            sketch = nil
            count = sorted.count
            sketchMean = .nan
            max = sorted.last ?? .nan
        }

        init(sketch: QuantileSketch) {
            self.sketch = sketch
            sorted = []
            count = sketch.count
            sketchMean = count > 0 ? (sketch.sum + sketch.compensation) / Double(count) : .nan
            max = sketch.max
        }

        /// The `p`-quantile as `Statistics.quantile(sorted:_:)` defines it (linear between the
        /// two order statistics around rank p(n - 1)); `nan` when empty. Past the exact limit,
        /// each order statistic is its bucket's midpoint in relative terms, within the bound.
        public func quantile(_ p: Double) -> Double {
            guard let s = sketch else { return Statistics.quantile(sorted: sorted, p) }
            precondition((0...1).contains(p), "quantile \(p) is outside [0, 1]")
            guard count > 0 else { return .nan }
            let position = p * Double(count - 1)
            let lower = Int(position.rounded(.down))
            let delta = position - Double(lower)
            let a = s.value(rank: lower)
            return delta == 0 || lower + 1 >= count ? a : (1 - delta) * a + delta * s.value(rank: lower + 1)
        }
    }

    /// The estimate of the value of rank `rank` (0 the least): the smallest and the largest
    /// are exact; the others are their bucket's representative, kept within the values seen.
    func value(rank: Int) -> Double {
        if rank == 0 { return Swift.max(least, 0) }
        if rank == count - 1 { return greatest }
        if rank < zeros { return 0 }
        var seen = zeros
        for (k, n) in bins.enumerated() where n > 0 {
            seen += n
            if rank < seen {
                let estimate = 2 * pow(Self.gamma, Double(firstBin + k)) / (Self.gamma + 1)
                return Swift.min(Swift.max(estimate, least), greatest)
            }
        }
        return greatest
    }
}
