import CGSL

/// Picks an index with probability proportional to its weight, in O(1) per draw.
///
/// Wraps GSL's `gsl_ran_discrete` (Walker's alias method): the table is built once from the
/// weights, then each draw costs one or two uniforms. Used for choices such as which app a
/// person opens.
public final class WeightedChoice {
    @usableFromInline let table: UnsafeMutablePointer<gsl_ran_discrete_t>
    /// The number of outcomes.
    public let count: Int

    /// A choice among `weights.count` outcomes.
    /// - Throws: when there are no weights, a weight is negative or not finite, or all are zero.
    public init(weights: [Double]) throws(RandomStreamError) {
        guard !weights.isEmpty else { throw RandomStreamError(description: "weighted choice needs at least one weight") }
        if let bad = weights.first(where: { !$0.isFinite || $0 < 0 }) {
            throw RandomStreamError(description: "weights must be finite and >= 0, got \(bad)")
        }
        guard weights.contains(where: { $0 > 0 }) else {
            throw RandomStreamError(description: "weighted choice needs a weight above 0")
        }
        bgsim_gsl_disable_abort()
        guard let table = weights.withUnsafeBufferPointer({ gsl_ran_discrete_preproc($0.count, $0.baseAddress) }) else {
            throw RandomStreamError(description: "GSL could not build the weighted-choice table")
        }
        self.table = table
        self.count = weights.count
    }

    deinit { gsl_ran_discrete_free(table) }

    /// An index in `0..<count`, drawn from `stream`.
    @inlinable
    public func sample(using stream: RandomStream) -> Int {
        Int(gsl_ran_discrete(stream.rng, table))
    }
}
