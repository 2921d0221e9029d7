import CGSL

/// Names one GSL random number generator algorithm, such as `mt19937` (the default).
///
/// The generators offered are those the GSL manual recommends for simulation ("extremely long
/// periods, low correlation and pass most statistical tests", section "Random number generator
/// algorithms"). GSL's historical and library-compatibility generators are not: seeded with
/// the 64-bit seeds `StreamID` makes, `ran1` and `ran2` crash and `ran0` and `minstd` never
/// leave a fixed point (their seeds must be below 2^31). Each offered one is tested with 2,000
/// such seeds (RandomStreamTests). `RandomStream` checks the name when the stream is made.
public struct GeneratorKind: Hashable, Sendable, CustomStringConvertible {
    /// GSL's name of the generator, such as `mt19937`.
    public let name: String
    /// The generator GSL calls `name` (checked when a stream is made).
    public init(_ name: String) { self.name = name }

    /// Mersenne Twister MT19937 (Matsumoto & Nishimura 1998): period 2^19937 - 1; GSL's default.
    public static let mt19937 = GeneratorKind("mt19937")

    /// GSL's generators for simulation, in the manual's order.
    static let recommended = [
        "mt19937", "ranlxs0", "ranlxs1", "ranlxs2", "ranlxd1", "ranlxd2", "ranlux", "ranlux389",
        "cmrg", "mrg", "taus", "taus2", "taus113", "gfsr4",
    ]

    /// The names of the generators bgsim offers: GSL's for simulation that this GSL build has.
    public static var available: [String] { recommended.filter { registry.types[$0] != nil } }

    /// GSL's generator types by name, read once. `gsl_rng_types_setup()` rewrites a static
    /// array on every call, so calling it from replications running in parallel would race;
    /// a static `let` is initialised exactly once, thread-safely.
    private nonisolated(unsafe) static let registry: (names: [String], types: [String: UnsafePointer<gsl_rng_type>]) = {
        var names: [String] = []
        var types: [String: UnsafePointer<gsl_rng_type>] = [:]
        guard var cursor = gsl_rng_types_setup() else { return (names, types) }
        while let type = cursor.pointee {
            let name = String(cString: type.pointee.name)
            names.append(name)
            types[name] = type
            cursor += 1
        }
        return (names, types)
    }()

    var gslType: UnsafePointer<gsl_rng_type>? { Self.recommended.contains(name) ? Self.registry.types[name] : nil }

    /// The generator's name.
    public var description: String { name }
}

/// Raised when a random stream cannot be made as asked.
public struct RandomStreamError: Error, CustomStringConvertible, Equatable {
    /// What was wrong.
    public let description: String
}

/// Where the seed of one random stream comes from.
///
/// Every stochastic model in a simulation draws from its own stream, named after what it
/// models (`charger`, `app.news`, ...). A stream's seed is a pure function of
/// (master seed, replication, stream name), so
///
/// - every policy simulated in the same replication sees the same world (common random
///   numbers, docs/sources.md §11), and
/// - a replication gives the same numbers whether it runs alone, on another thread, or in
///   another shard of a cluster job: nothing about how the work is split enters the seed;
/// - every point of a sweep sees them too: a point is no part of the seed, so differences
///   between points are not blurred by different luck.
public struct StreamID: Hashable, Sendable, CustomStringConvertible {
    /// The study's master seed.
    public var masterSeed: UInt64
    /// The replication.
    public var replication: UInt64
    /// What the stream models: `charger`, `people`, `app.news`, ...
    public var name: String

    /// The stream of `name` in `replication`, under `masterSeed`.
    public init(masterSeed: UInt64, replication: UInt64, name: String) {
        self.masterSeed = masterSeed
        self.replication = replication
        self.name = name
    }

    /// The mixed 64-bit seed of this stream.
    ///
    /// `seed = m(m(m(m(master)) ^ replication) ^ fnv1a64(name))`, where `m` is the
    /// SplitMix64 finaliser (Steele, Lea & Flood, OOPSLA 2014) and `fnv1a64` is the 64-bit
    /// FNV-1a hash of the name's UTF-8 bytes. Each step is a bijection of 64-bit words mixed
    /// with the next component, so streams that differ in any component get unrelated seeds.
    ///
    /// GSL's `mt19937` uses the low 32 bits of the seed it is given (and maps 0 to 4357), so
    /// two streams collide with probability about k^2 / 2^33 for k streams: about 1e-6 for the
    /// hundred streams of a 30-replication study.
    public var seed: UInt64 {
        // The second mix once took a sweep point, always 0; kept, so every seed is as it was.
        var h = Self.splitMix(Self.splitMix(masterSeed))
        h = Self.splitMix(h ^ replication)
        return Self.splitMix(h ^ Self.fnv1a(name))
    }

    /// SplitMix64's output function: a bijective avalanche mix of one 64-bit word.
    public static func splitMix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 64-bit FNV-1a of the UTF-8 bytes of `text`.
    public static func fnv1a(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }

    /// `name[seed s, replication r]`.
    public var description: String { "\(name)[seed \(masterSeed), replication \(replication)]" }
}

/// A seeded stream of random numbers from one GSL generator.
///
/// Conforms to `RandomNumberGenerator`, so Swift's own `Int.random(in:using:)` and
/// `shuffled(using:)` work on it, and offers GSL's distributions directly
/// (`exponential(mean:)`, `lognormal(mu:sigma:)`, ...).
///
/// A stream owns its GSL state; it is a class because that state must be freed exactly once.
/// It is not thread-safe: give each simulation its own streams.
public final class RandomStream: RandomNumberGenerator {
    @usableFromInline let rng: UnsafeMutablePointer<gsl_rng>
    /// Bits of randomness in one call to the generator, and its smallest output.
    @usableFromInline let bitsPerDraw: Int
    @usableFromInline let minimum: UInt64
    /// Whether the generator's outputs, less `minimum`, are exactly `bitsPerDraw` uniform bits.
    @usableFromInline let rangeIsPowerOfTwo: Bool
    /// The generator algorithm.
    public let kind: GeneratorKind
    /// The seed given to `gsl_rng_set`.
    public let seed: UInt64

    /// A stream of `kind` seeded with `seed` as given to `gsl_rng_set`.
    public init(kind: GeneratorKind = .mt19937, seed: UInt64) throws(RandomStreamError) {
        bgsim_gsl_disable_abort()
        guard let type = kind.gslType else {
            throw RandomStreamError(
                description:
                    "unknown GSL generator '\(kind.name)'; available: \(GeneratorKind.available.joined(separator: ", "))")
        }
        guard let rng = bgsim_rng_alloc_seeded(type, UInt(truncatingIfNeeded: seed)) else {
            throw RandomStreamError(description: "GSL could not allocate generator '\(kind.name)'")
        }
        self.rng = rng
        self.kind = kind
        self.seed = seed
        let range = UInt64(gsl_rng_max(rng) - gsl_rng_min(rng))
        // Whole bits the generator delivers per call: 32 for mt19937, 24 for ranlux.
        bitsPerDraw = range == .max ? 64 : 63 - (range + 1).leadingZeroBitCount
        minimum = UInt64(gsl_rng_min(rng))
        rangeIsPowerOfTwo = range == .max || (range + 1).nonzeroBitCount == 1
    }

    /// The stream named by `id`, seeded with `id.seed`.
    public convenience init(_ id: StreamID, kind: GeneratorKind = .mt19937) throws(RandomStreamError) {
        try self.init(kind: kind, seed: id.seed)
    }

    deinit { gsl_rng_free(rng) }

    /// 64 uniformly random bits, assembled from as many generator calls as needed.
    @inlinable
    public func next() -> UInt64 {
        if bitsPerDraw == 32 && rangeIsPowerOfTwo {
            let hi = UInt64(gsl_rng_get(rng)) - minimum
            let lo = UInt64(gsl_rng_get(rng)) - minimum
            return hi << 32 | lo
        }
        if bitsPerDraw >= 64 { return UInt64(gsl_rng_get(rng)) - minimum }
        var out: UInt64 = 0
        var bits = 0
        while bits < 64 {
            out = out << UInt64(bitsPerDraw) | nextChunk()
            bits += bitsPerDraw
        }
        return out
    }

    /// `bitsPerDraw` uniformly random bits from one or more generator calls.
    @inlinable
    func nextChunk() -> UInt64 {
        if rangeIsPowerOfTwo { return UInt64(gsl_rng_get(rng)) - minimum }
        // The range is not a power of two (so 2^bitsPerDraw <= max - min, which
        // gsl_rng_uniform_int requires): it rejects the excess, keeping the chunk uniform.
        return UInt64(gsl_rng_uniform_int(rng, UInt(1) << UInt(bitsPerDraw)))
    }

    // MARK: - Distributions (thin wrappers over gsl_ran_*)

    /// Uniform on [0, 1).
    @inlinable public func uniform() -> Double { gsl_rng_uniform(rng) }

    /// Uniform on [a, b).
    @inlinable public func uniform(_ a: Double, _ b: Double) -> Double { gsl_ran_flat(rng, a, b) }

    /// Exponential with the given mean: p(x) = exp(-x/mean)/mean, x >= 0.
    @inlinable public func exponential(mean: Double) -> Double { gsl_ran_exponential(rng, mean) }

    /// Normal with mean `mu` and standard deviation `sigma`.
    @inlinable public func normal(mu: Double = 0, sigma: Double) -> Double { mu + gsl_ran_gaussian_ziggurat(rng, sigma) }

    /// Lognormal: log X is normal with mean `mu` and standard deviation `sigma`
    /// (GSL's zeta and sigma). Mean exp(mu + sigma^2/2).
    @inlinable public func lognormal(mu: Double, sigma: Double) -> Double { gsl_ran_lognormal(rng, mu, sigma) }

    /// Gamma with shape k and scale theta: mean k theta.
    @inlinable public func gamma(shape: Double, scale: Double) -> Double { gsl_ran_gamma(rng, shape, scale) }

    /// Weibull with scale lambda and shape k: p(x) = k/lambda (x/lambda)^(k-1) exp(-(x/lambda)^k).
    @inlinable public func weibull(scale: Double, shape: Double) -> Double { gsl_ran_weibull(rng, scale, shape) }

    /// Pareto (type I) with shape alpha and minimum x_m: p(x) = alpha x_m^alpha / x^(alpha+1), x >= x_m.
    @inlinable public func pareto(shape: Double, minimum: Double) -> Double { gsl_ran_pareto(rng, shape, minimum) }

    /// Poisson count with the given mean.
    @inlinable public func poisson(mean: Double) -> Int { Int(gsl_ran_poisson(rng, mean)) }

    /// `true` with probability `p`.
    @inlinable public func bernoulli(_ p: Double) -> Bool { gsl_ran_bernoulli(rng, p) == 1 }
}
