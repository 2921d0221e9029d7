import PhoneWorld
import SimEngine
import SimRandom

/// A parameter of a ``RegisteredPolicy``: a ``Setting`` of the policy type.
public typealias PolicyParameter<P: RegisteredPolicy> = Setting<P>

/// One key a scenario may set, declared once: its name, what it accepts, and the property of
/// `Root` it sets, by key path. A policy's parameters, a mechanism's section, an app profile
/// and the world's sections (`phone`, `charging`, `people`...) are all lists of settings; a
/// scenario's reader, `validate --print`, `bgsim policies`, `bgsim mechanisms` and the generated
/// documentation read those lists, and nothing else.
public struct Setting<Root>: Sendable {
    /// The key (`max_delay`); `group.key` for a key of a nested mapping of a policy
    /// (`quota_rare.max_jobs`, written `quota_rare: {max_jobs: 5}`).
    public let name: String
    /// What it accepts.
    public let kind: PolicyParameterKind
    /// What it means, with its unit.
    public let help: String
    let get: @Sendable (Root) -> PolicyParameterValue
    let set: @Sendable (inout Root, PolicyParameterValue) -> Void
    /// Whether a section that has the key must give it: it has no default.
    public private(set) var isRequired = false
    /// Where the default could plausibly lie, if it is an assumption.
    public private(set) var plausible: PlausibleRange?
    /// The section of docs/sources.md that fixes the default, if one does.
    public private(set) var source: String?

    /// A setting of `kind` that `get` reads as a scenario writes it and `set` stores.
    package init(
        name: String, kind: PolicyParameterKind, help: String, get: @escaping @Sendable (Root) -> PolicyParameterValue,
        set: @escaping @Sendable (inout Root, PolicyParameterValue) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.help = help
        self.get = get
        self.set = set
    }

    /// Its value in `root`, as a scenario writes it.
    public func value(in root: Root) -> PolicyParameterValue { get(root) }

    /// Sets `value` (of the declared kind, as a scenario writes it) in `root`.
    public func apply(_ value: PolicyParameterValue, to root: inout Root) { set(&root, value) }

    /// The name, kind, default (its value in `defaults`) and help, without the type.
    public func info(_ defaults: Root) -> PolicyParameterInfo {
        PolicyParameterInfo(
            name: name, kind: kind, defaultValue: get(defaults), help: help, isRequired: isRequired, plausible: plausible, source: source)
    }

    /// The setting, its default fixed by `section` of docs/sources.md (`§4`), or needing no
    /// source for the reason given (`a what-if, off by default`).
    public func sourced(_ section: String) -> Self {
        var copy = self
        copy.source = section
        return copy
    }

    /// The setting, marked an assumption: no source fixes its default, which could lie
    /// anywhere from `low` to `high` (its own unit) for the reason `why`.
    public func assumption(_ low: Double, _ high: Double, why: String) -> Self {
        var copy = self
        copy.plausible = PlausibleRange(low, high, why: why)
        return copy
    }

    /// A duration setting marked an assumption, plausible from `low` to `high`.
    public func assumption(_ low: SimDuration, _ high: SimDuration, why: String) -> Self {
        assumption(low.seconds, high.seconds, why: why)
    }

    /// The setting, which a section that has its key must give.
    public func required() -> Self {
        var copy = self
        copy.isRequired = true
        return copy
    }

    /// A duration stored at `property`, within `range`.
    public static func duration(
        _ name: String, _ property: WritableKeyPath<Root, SimDuration> & Sendable,
        in range: ClosedRange<SimDuration> = .nonNegative, help: String
    ) -> Self {
        stored(name, property, .duration(range, noneAllowed: false), help) {
            .duration($0)
        } from: {
            if case .duration(let v) = $0 { v } else { nil }
        }
    }

    /// A duration that may be `none` (no limit), stored at `property`.
    public static func optionalDuration(
        _ name: String, _ property: WritableKeyPath<Root, SimDuration?> & Sendable,
        in range: ClosedRange<SimDuration> = .nonNegative, help: String
    ) -> Self {
        stored(name, property, .duration(range, noneAllowed: true), help) {
            $0.map { .duration($0) } ?? .off
        } from: {
            switch $0 {
            case .duration(let v): .some(v)
            case .off: .some(nil)
            default: nil
            }
        }
    }

    /// A time of day (`23:00`), stored at `property` as the span since midnight.
    package static func timeOfDay(_ name: String, _ property: WritableKeyPath<Root, SimDuration> & Sendable, help: String) -> Self {
        stored(name, property, .timeOfDay, help) {
            .duration($0)
        } from: {
            if case .duration(let v) = $0 { v } else { nil }
        }
    }

    /// A real number stored at `property`, within `range`, in `unit`.
    public static func number(
        _ name: String, _ property: WritableKeyPath<Root, Double> & Sendable, in range: ClosedRange<Double>, unit: SettingUnit, help: String
    ) -> Self {
        number(name, property, in: NumberRange(range), unit: unit, help: help)
    }

    /// A real number stored at `property`, within `range` (`NumberRange(0..<100)`,
    /// `NumberRange(1...)`, `.above(0)`), in `unit`: as written, or converted as the unit says
    /// (a percentage stored as a fraction).
    public static func number(
        _ name: String, _ property: WritableKeyPath<Root, Double> & Sendable, in range: NumberRange, unit: SettingUnit, help: String
    ) -> Self {
        stored(name, property, .number(range, unit: unit), help) {
            .number(unit.written($0))
        } from: {
            if case .number(let v) = $0 { unit.stored(v) } else { nil }
        }
    }

    /// A real number that may be `none`, stored at `property`.
    public static func optionalNumber(
        _ name: String, _ property: WritableKeyPath<Root, Double?> & Sendable, in range: NumberRange, unit: SettingUnit, help: String
    ) -> Self {
        stored(name, property, .optionalNumber(range, unit: unit), help) {
            $0.map { .number(unit.written($0)) } ?? .off
        } from: {
            switch $0 {
            case .number(let v): .some(unit.stored(v))
            case .off: .some(nil)
            default: nil
            }
        }
    }

    /// A real number that the type stores in another way: `get` gives the value as scenarios
    /// write it, `set` stores one.
    public static func number(
        _ name: String, in range: NumberRange, unit: SettingUnit, help: String,
        get: @escaping @Sendable (Root) -> Double, set: @escaping @Sendable (inout Root, Double) -> Void
    ) -> Self {
        Self(
            name: name, kind: .number(range, unit: unit), help: help, get: { .number(get($0)) },
            set: { if case .number(let v) = $1 { set(&$0, v) } })
    }

    /// A whole number stored at `property`, within `range`, counting `unit`.
    public static func integer(
        _ name: String, _ property: WritableKeyPath<Root, Int> & Sendable, in range: ClosedRange<Int>,
        unit: SettingUnit = "a whole number", help: String
    ) -> Self {
        stored(name, property, .integer(range, unit: unit), help) {
            .integer($0)
        } from: {
            if case .integer(let v) = $0 { v } else { nil }
        }
    }

    /// A true-or-false setting stored at `property`.
    public static func flag(_ name: String, _ property: WritableKeyPath<Root, Bool> & Sendable, help: String) -> Self {
        stored(name, property, .flag, help) {
            .flag($0)
        } from: {
            if case .flag(let v) = $0 { v } else { nil }
        }
    }

    /// A true-or-false setting that sets more than one property: `get` gives the value as
    /// scenarios write it, `set` stores it.
    public static func flag(
        _ name: String, help: String, get: @escaping @Sendable (Root) -> Bool, set: @escaping @Sendable (inout Root, Bool) -> Void
    ) -> Self {
        Self(name: name, kind: .flag, help: help, get: { .flag(get($0)) }, set: { if case .flag(let v) = $1 { set(&$0, v) } })
    }

    /// A name stored at `property`.
    public static func text(_ name: String, _ property: WritableKeyPath<Root, String> & Sendable, help: String) -> Self {
        stored(name, property, .text, help) {
            .text($0)
        } from: {
            if case .text(let v) = $0 { v } else { nil }
        }
    }

    /// A quantity drawn per use, in seconds or bytes, stored at `property`.
    package static func distribution(
        _ name: String, _ property: WritableKeyPath<Root, Distribution> & Sendable, _ unit: DistributionUnit, help: String
    ) -> Self {
        stored(name, property, .distribution(unit), help) {
            .distribution($0)
        } from: {
            if case .distribution(let v) = $0 { v } else { nil }
        }
    }

    /// One of an enumeration's names, stored at `property`.
    package static func choice<V: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, _ property: WritableKeyPath<Root, V> & Sendable, help: String
    ) -> Self where V.RawValue == String {
        stored(name, property, .choice(V.allCases.map(\.rawValue)), help) {
            .text($0.rawValue)
        } from: {
            if case .text(let v) = $0 { V(rawValue: v) } else { nil }
        }
    }

    /// A setting of any kind, which `get` reads as a scenario writes it and `set` stores: for
    /// a value a scenario writes in a form the type does not keep (a list read into a set).
    package static func custom(
        _ name: String, _ kind: PolicyParameterKind, help: String, get: @escaping @Sendable (Root) -> PolicyParameterValue,
        set: @escaping @Sendable (inout Root, PolicyParameterValue) -> Void
    ) -> Self {
        Self(name: name, kind: kind, help: help, get: get, set: set)
    }

    /// A value that may be unset (`~` or `none`), stored at `property` as nil; `kind` is what
    /// a set value accepts, `to` and `from` convert it.
    package static func optional<V>(
        _ name: String, _ property: WritableKeyPath<Root, V?> & Sendable, _ kind: PolicyParameterKind, help: String,
        to: @escaping @Sendable (V) -> PolicyParameterValue, from: @escaping @Sendable (PolicyParameterValue) -> V?
    ) -> Self {
        stored(name, property, .orNone(kind), help) {
            $0.map(to) ?? .off
        } from: {
            $0 == .off ? .some(nil) : from($0).map { .some($0) }
        }
    }

    /// A nested mapping stored at `property`, its keys declared by `settings`; `defaults`
    /// gives their defaults (the value a section has before a scenario sets it).
    package static func section<S>(
        _ name: String, _ property: WritableKeyPath<Root, S> & Sendable, _ settings: [Setting<S>], defaults: S, help: String
    ) -> Self {
        Self(
            name: name, kind: .section(settings.map { $0.info(defaults) }), help: help, get: { _ in .section([:]) },
            set: { root, value in
                guard case .section(let given) = value else { return }
                for s in settings { if let v = given[s.name] { s.set(&root[keyPath: property], v) } }
            })
    }

    /// A list of mappings stored at `property`, each item's keys declared by `settings` over
    /// the defaults of `item`, with `count` items (`noun` names them in messages).
    package static func list<S: Sendable>(
        _ name: String, _ property: WritableKeyPath<Root, [S]> & Sendable, of settings: [Setting<S>], item: S,
        count: ClosedRange<Int> = 0...Int.max, noun: String, help: String
    ) -> Self {
        Self(
            name: name, kind: .list(.section(settings.map { $0.info(item) }), count: count, noun: noun), help: help,
            get: { root in .list(root[keyPath: property].map { e in .section(Dictionary(uniqueKeysWithValues: settings.map { ($0.name, $0.get(e)) })) }) },
            set: { root, value in
                guard case .list(let items) = value else { return }
                root[keyPath: property] = items.map { v in
                    var e = item
                    if case .section(let given) = v { for s in settings { if let x = given[s.name] { s.set(&e, x) } } }
                    return e
                }
            })
    }

    /// A setting stored at `property`, whose values `to` and `from` convert.
    static func stored<V>(
        _ name: String, _ property: WritableKeyPath<Root, V> & Sendable, _ kind: PolicyParameterKind, _ help: String,
        to: @escaping @Sendable (V) -> PolicyParameterValue, from: @escaping @Sendable (PolicyParameterValue) -> V?
    ) -> Self {
        Self(
            name: name, kind: kind, help: help, get: { to($0[keyPath: property]) },
            set: { if let v = from($1) { $0[keyPath: property] = v } })
    }
}

extension Setting where Root: RegisteredPolicy {
    /// The name, kind, default and help, without the policy type.
    public var info: PolicyParameterInfo { info(Root()) }
}

/// What a number's value is as scenarios write it: its words for messages and documentation,
/// the suffix its key ends with (`_pct`, `_w`), and how a written value becomes the stored one
/// (a percentage kept as a fraction, kilobytes kept as bytes). A unit given as text (`"a
/// probability"`) is words only: written as stored, with no suffix.
public struct SettingUnit: Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The value in words, for messages: `a charge in percent`.
    public let noun: String
    /// What a key of this unit ends with, if the unit has a suffix.
    public let suffix: String?
    /// How the written value becomes the stored one.
    public let scale: Scale

    /// How a written value becomes the stored one.
    public enum Scale: Sendable, Equatable {
        /// Stored as written.
        case one
        /// Divided by the factor (a percentage stored as a fraction).
        case dividedBy(Double)
        /// Multiplied by the factor (kilobytes stored as bytes).
        case times(Double)
    }

    /// A unit of `noun`, its keys ending in `suffix`, stored as `scale` says.
    public init(_ noun: String, suffix: String? = nil, scale: Scale = .one) {
        self.noun = noun
        self.suffix = suffix
        self.scale = scale
    }

    /// Words only: written as stored.
    public init(stringLiteral noun: String) { self.init(noun) }

    /// The words.
    public var description: String { noun }

    /// The stored value of `written`.
    public func stored(_ written: Double) -> Double {
        switch scale {
        case .one: written
        case .dividedBy(let d): written / d
        case .times(let f): written * f
        }
    }

    /// The written value of `stored`, to twelve significant digits where it is converted (so
    /// that a stored 0.07 reads as 7 percent, not 7.000000000000001).
    public func written(_ stored: Double) -> Double {
        switch scale {
        case .one: return stored
        case .dividedBy(let d): return Self.rounded(stored * d)
        case .times(let f): return Self.rounded(stored / f)
        }
    }

    static func rounded(_ x: Double) -> Double {
        guard x != 0, x.isFinite else { return x }
        // The decimal exponent, near enough from the binary one (log10 2 = 0.30103).
        let scale = pow10(11 - Int((Double(x.exponent) * 0.30103).rounded(.down)))
        return (x * scale).rounded() / scale
    }

    static func pow10(_ n: Int) -> Double {
        var r = 1.0
        for _ in 0..<abs(n) { r *= 10 }
        return n < 0 ? 1 / r : r
    }

    /// A share written in percent (`_pct`), stored as a fraction: `what in percent`.
    public static func percent(_ what: String) -> Self { Self("\(what) in percent", suffix: "_pct", scale: .dividedBy(100)) }
    /// A share written and stored in percent (`_pct`).
    public static func percentPoints(_ what: String) -> Self { Self("\(what) in percent", suffix: "_pct") }
    /// A power in watts (`_w`).
    public static func watts(_ what: String = "a power") -> Self { Self("\(what) in watts", suffix: "_w") }
    /// An energy in watt-hours (`_wh`).
    public static func wattHours(_ what: String) -> Self { Self("\(what) in watt-hours", suffix: "_wh") }
    /// A size written in kilobytes of 1000 bytes (`_kb`), stored in bytes.
    public static func kilobytes(_ what: String = "a size") -> Self { Self("\(what) in kilobytes (1000 bytes)", suffix: "_kb", scale: .times(1000)) }
    /// A throughput in megabits a second (`_mbps`).
    public static var megabitsPerSecond: Self { Self("a throughput in Mbit/s", suffix: "_mbps") }
    /// Watts per megabit a second of throughput (`_w_per_mbps`).
    public static var wattsPerMbps: Self { Self("a power in watts per Mbit/s", suffix: "_w_per_mbps") }
    /// A rate per hour (`_per_hour`).
    public static func perHour(_ what: String) -> Self { Self("\(what) per hour", suffix: "_per_hour") }
    /// A rate per day (`_per_day`).
    public static func perDay(_ what: String) -> Self { Self("\(what) per day", suffix: "_per_day") }

    /// Every suffix a unit has: a key ending in one of them must be of that unit.
    public static let suffixes = ["_pct", "_w", "_wh", "_kb", "_mbps", "_w_per_mbps", "_per_hour", "_pct_per_hour", "_per_day"]
}
