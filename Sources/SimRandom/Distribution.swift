import Foundation

/// A distribution of non-negative quantities (durations in seconds, sizes in bytes) that a
/// model file can name: a fixed value, or one of a few shapes drawn from a random stream.
public enum Distribution: Hashable, Sendable, CustomStringConvertible {
    /// Always `value`.
    case fixed(Double)
    case exponential(mean: Double)
    /// Uniform on [low, high].
    case uniform(low: Double, high: Double)
    /// Log-normal with the given median (e^mu) and shape sigma: a heavy right tail, as
    /// transfer sizes and CPU times usually have.
    case lognormal(median: Double, sigma: Double)

    /// The distribution's mean.
    public var mean: Double {
        switch self {
        case .fixed(let v): v
        case .exponential(let m): m
        case .uniform(let a, let b): (a + b) / 2
        case .lognormal(let median, let sigma): median * Foundation.exp(sigma * sigma / 2)
        }
    }

    /// One draw. A fixed value takes nothing from the stream, so changing a quantity between
    /// fixed and random shifts the stream's later draws: give such quantities their own stream
    /// where alignment across scenarios matters.
    @inlinable public func draw(_ stream: RandomStream) -> Double {
        switch self {
        case .fixed(let v): v
        case .exponential(let m): stream.exponential(mean: m)
        case .uniform(let a, let b): a == b ? a : stream.uniform(a, b)
        case .lognormal(let median, let sigma): stream.lognormal(mu: Foundation.log(median), sigma: sigma)
        }
    }

    /// The distribution in words, for messages: `3.0`, `exponential(mean 3.0)`, `uniform(1.0, 5.0)`.
    public var description: String {
        switch self {
        case .fixed(let v): "\(v)"
        case .exponential(let m): "exponential(mean \(m))"
        case .uniform(let a, let b): "uniform(\(a), \(b))"
        case .lognormal(let m, let s): "lognormal(median \(m), sigma \(s))"
        }
    }
}

/// A distribution made ready for drawing in a hot loop: the logarithm a log-normal draw
/// needs is taken once, not at every draw. Draws the same numbers as `Distribution.draw`.
public struct PreparedDistribution: Sendable, Equatable {
    @usableFromInline enum Shape: Sendable, Equatable { case fixed, exponential, uniform, lognormal }
    @usableFromInline let shape: Shape
    @usableFromInline let a: Double
    @usableFromInline let b: Double

    /// `distribution`, ready for drawing.
    public init(_ distribution: Distribution) {
        switch distribution {
        case .fixed(let v): (shape, a, b) = (.fixed, v, 0)
        case .exponential(let m): (shape, a, b) = (.exponential, m, 0)
        case .uniform(let low, let high): (shape, a, b) = (.uniform, low, high)
        case .lognormal(let median, let sigma): (shape, a, b) = (.lognormal, Foundation.log(median), sigma)
        }
    }

    /// One draw, as `Distribution.draw` would make it.
    @inlinable public func draw(_ stream: RandomStream) -> Double {
        switch shape {
        case .fixed: a
        case .exponential: stream.exponential(mean: a)
        case .uniform: a == b ? a : stream.uniform(a, b)
        case .lognormal: stream.lognormal(mu: a, sigma: b)
        }
    }
}
