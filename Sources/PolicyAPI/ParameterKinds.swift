import PhoneWorld
import SimEngine

/// A value of a policy's parameter, as read from a scenario: a `ParameterValue` (PhoneWorld), the type
/// mechanisms' keys share.
public typealias PolicyParameterValue = ParameterValue

extension ClosedRange<SimDuration> {
    /// The longest a duration parameter may be: a century, beyond any horizon and far from
    /// overflowing the instants it is added to.
    public static var longestParameter: SimDuration { .days(36_500) }
    /// From zero to ``longestParameter``: the default range of a duration parameter.
    public static var nonNegative: Self { .zero...longestParameter }
    /// From one microsecond to ``longestParameter``.
    public static var positive: Self { .microseconds(1)...longestParameter }
    /// From one second to ``longestParameter``: for a period that repeats for as long as a
    /// state lasts (Doze's IDLE), which the policy walks through one by one, so that a run
    /// takes at most a few steps per simulated second.
    public static var period: Self { .seconds(1)...longestParameter }
}

/// The numbers a real-valued parameter accepts: each bound open, closed or absent.
public struct NumberRange: Sendable, Equatable {
    /// The lowest value, or `-infinity` for none.
    public var lower: Double
    /// Whether `lower` itself is accepted.
    public var lowerIncluded: Bool
    /// The highest value, or `infinity` for none.
    public var upper: Double
    /// Whether `upper` itself is accepted.
    public var upperIncluded: Bool

    /// Values from `lower` to `upper`, each included as the flags say.
    public init(lower: Double, lowerIncluded: Bool = true, upper: Double, upperIncluded: Bool = true) {
        self.lower = lower
        self.lowerIncluded = lowerIncluded
        self.upper = upper
        self.upperIncluded = upperIncluded
    }
    /// `range`, both ends included.
    public init(_ range: ClosedRange<Double>) { self.init(lower: range.lowerBound, upper: range.upperBound) }
    /// `range`, its upper end excluded.
    public init(_ range: Range<Double>) { self.init(lower: range.lowerBound, upper: range.upperBound, upperIncluded: false) }
    /// `range`: its lower end and above.
    public init(_ range: PartialRangeFrom<Double>) { self.init(lower: range.lowerBound, upper: .infinity) }
    /// Every value above `lower`, `lower` excluded.
    public static func above(_ lower: Double) -> NumberRange {
        NumberRange(lower: lower, lowerIncluded: false, upper: .infinity)
    }

    /// Whether `x` is in the range.
    public func contains(_ x: Double) -> Bool {
        (lowerIncluded ? x >= lower : x > lower) && (upperIncluded ? x <= upper : x < upper)
    }

    /// The range in words: `from 0 to 2`, `>= 0`, `> 0`, `from 0 to less than 100`.
    public var description: String {
        func show(_ x: Double) -> String {
            x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)"
        }
        switch (lower.isFinite, upper.isFinite) {
        case (true, true):
            return "from \(lowerIncluded ? "" : "more than ")\(show(lower)) to \(upperIncluded ? "" : "less than ")\(show(upper))"
        case (true, false): return "\(lowerIncluded ? ">=" : ">") \(show(lower))"
        case (false, true): return "\(upperIncluded ? "<=" : "<") \(show(upper))"
        case (false, false): return "any number"
        }
    }
}

/// What a setting accepts: its kind and range.
public indirect enum PolicyParameterKind: Sendable, Equatable {
    /// A duration within the range (`15m`, `2h`); also `none` when `noneAllowed`.
    case duration(ClosedRange<SimDuration>, noneAllowed: Bool)
    /// A time of day, `HH:MM` or `HH:MM:SS` (`23:00`): a duration since midnight.
    case timeOfDay
    /// A number within the range, in `unit` (for messages and docs: `a probability`).
    case number(NumberRange, unit: SettingUnit)
    /// A number within the range, in `unit`, or `none` (a default that depends on other keys).
    case optionalNumber(NumberRange, unit: SettingUnit)
    /// A whole number within the range, of `unit` (`a whole number of jobs`).
    case integer(ClosedRange<Int>, unit: SettingUnit)
    /// `true` or `false`.
    case flag
    /// A name: letters, digits, `.`, `_` or `-` (an identifier such as `com.example.export`).
    case text
    /// A name that also names a list item in key paths (`apps.news`): no `.`, not only digits.
    case label
    /// Free text, for people (a `description`).
    case prose
    /// An identifier, or one ending in `.*`: every identifier under it.
    case pattern
    /// A trace file's path, relative to the file that names it.
    case file
    /// A quantity drawn per use, fixed (`3s`) or of a shape (`{exponential: 3s}`), in `unit`.
    case distribution(DistributionUnit)
    /// A list of places of the network model (`[home, work]`).
    case places
    /// One of the listed names (`audio`).
    case choice([String])
    /// A list of the listed names (`[start, handler]`), or `none` (a default that depends on
    /// other keys).
    case choices([String])
    /// The kind, or `none` (unset).
    case orNone(PolicyParameterKind)
    /// `true`, `false`, or the kind (a mapping that `true` gives at its defaults).
    case orFlag(PolicyParameterKind)
    /// One of the named values, or a value of the kind (`short`, or `45s`).
    case presets([NamedValue], or: PolicyParameterKind)
    /// A mapping of the keys listed, with their defaults.
    case section([PolicyParameterInfo])
    /// A list of values of the kind, with a number of items within `count`, which `noun` names
    /// in messages (`segments`).
    case list(PolicyParameterKind, count: ClosedRange<Int>, noun: String)

    /// What a value must be, for messages and documentation: `a probability from 0 to 1`.
    public var expected: String {
        switch self {
        case .duration(let r, let none):
            "a duration from \(r.lowerBound) to \(r.upperBound)\(none ? ", or none" : "")"
        case .timeOfDay: "a time of day such as 23:00 (HH:MM, 24-hour)"
        case .number(let r, let unit): "\(unit) \(r.description)"
        case .optionalNumber(let r, let unit): "\(unit) \(r.description), or none"
        case .integer(let r, let unit): "\(unit) from \(r.lowerBound) to \(r.upperBound)"
        case .flag: "true or false"
        case .text: "a name of letters, digits, '.', '_' or '-'"
        case .label: "a name of letters, digits, '_' or '-'"
        case .prose: "a text value"
        case .pattern: "an identifier such as com.example.refresh, or one ending in .* for every identifier under it"
        case .file: "a file's path, relative to the file that names it"
        case .distribution(let unit): "\(unit.expected), or {exponential|uniform|lognormal: ...} of it"
        case .places: "a list of places of the network model, such as [home, work]"
        case .choice(let names): "one of \(names.joined(separator: ", "))"
        case .choices(let names): "a list of \(names.joined(separator: ", ")), or none"
        case .orNone(let kind): "\(kind.expected), or none"
        case .orFlag(let kind): "true, false or \(kind.expected)"
        case .presets(let named, let kind): "\(kind.expected), or a preset: \(named.map { "\($0.name) (\($0.shown))" }.joined(separator: ", "))"
        case .section(let keys): "a mapping of \(keys.map(\.name).joined(separator: ", "))"
        case .list(_, let count, let noun):
            switch (count.lowerBound, count.upperBound) {
            case let (a, b) where a == b: "\(a) \(noun)"
            case (0, Int.max): "a list of \(noun)"
            case (1, Int.max): "one or more \(noun)"
            case (let n, Int.max): "\(n) or more \(noun)"
            case (0, let n): "at most \(n) \(noun)"
            case (let a, let b): "from \(a) to \(b) \(noun)"
            }
        }
    }
}

/// A name that stands for a value (a preset: `short` for 30 seconds).
public struct NamedValue: Sendable, Equatable {
    /// The name.
    public let name: String
    /// The value it stands for.
    public let value: PolicyParameterValue
    /// The value in words, for messages (`30 s`).
    public let shown: String

    /// `name`, standing for `value`, shown as `shown`.
    public init(_ name: String, _ value: PolicyParameterValue, shown: String) {
        self.name = name
        self.value = value
        self.shown = shown
    }
}

/// What a distribution key's values are: seconds (written as durations) or bytes (written in
/// kilobytes of 1000 bytes).
public enum DistributionUnit: Sendable, Equatable {
    /// Written `3s`, drawn in seconds.
    case seconds
    /// Written in kilobytes, drawn in bytes.
    case kilobytes

    /// A value's spelling, for messages.
    public var expected: String {
        switch self {
        case .seconds: "a duration such as 3s"
        case .kilobytes: "a size in kilobytes from 0 to 1e9"
        }
    }
}

/// A parameter's name, kind, default and documentation: what a scenario reader and the
/// documentation need, without the policy type.
public struct PolicyParameterInfo: Sendable, Equatable {
    /// The key in a scenario's policy entry (`max_delay`); `group.key` for a key of a nested
    /// mapping (`quota_rare.max_jobs`, written `quota_rare: {max_jobs: 5}`).
    public let name: String
    /// What it accepts.
    public let kind: PolicyParameterKind
    /// The value of a policy made with `init()`.
    public let defaultValue: PolicyParameterValue
    /// What it means, with its unit.
    public let help: String
    /// Whether a section that has the key must give it: it has no default.
    public var isRequired = false
    /// Where the default could plausibly lie, if no source fixes it (an assumption).
    public var plausible: PlausibleRange?
    /// The section of docs/sources.md that fixes the default (`§4`), or why none need (`a
    /// what-if, off by default`).
    public var source: String?

    /// A key named `name` of `kind`, with its default and help.
    package init(
        name: String, kind: PolicyParameterKind, defaultValue: PolicyParameterValue, help: String, isRequired: Bool = false,
        plausible: PlausibleRange? = nil, source: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.isRequired = isRequired
        self.plausible = plausible
        self.source = source
    }
}

/// The values an assumption (a default no published figure fixes) could plausibly take, and
/// what bounds them (docs/sources.md §12): the range a study of how much an answer depends on
/// the assumptions varies it over.
public struct PlausibleRange: Sendable, Equatable {
    /// The ends, in the parameter's own unit: seconds for a duration.
    public let low, high: Double
    /// What observation or argument bounds the range.
    public let why: String

    /// `low...high`, for `why`.
    public init(_ low: Double, _ high: Double, why: String) {
        precondition(low < high, "a plausible range needs two ends")
        self.low = low
        self.high = high
        self.why = why
    }

    /// Whether `value` lies in the range (a duration by its seconds; a flag's range is 0 to 1,
    /// both values plausible).
    public func contains(_ value: PolicyParameterValue) -> Bool {
        switch value {
        case .flag(let b): (low...high).contains(b ? 1 : 0)
        case .number(let x): (low...high).contains(x)
        case .integer(let n): (low...high).contains(Double(n))
        case .duration(let d): (low...high).contains(d.seconds)
        default: false
        }
    }
}
