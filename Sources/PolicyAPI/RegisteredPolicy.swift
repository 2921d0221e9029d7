import PhoneWorld
import SimEngine

/// A policy that scenario files can name and configure: `{name: quiet-hours, start: 22h}`.
///
/// A registered policy declares its name and its parameters once, with their types, ranges
/// and documentation; scenario files, sweeps, `--set` and the documentation all read that
/// declaration. Register the types with the command line's entry point (`BGSimCommandLine`)
/// or with `PolicyRegistry.register(_:)`.
///
/// ```swift
/// public struct QuietHoursPolicy: RegisteredPolicy {
///     public var start: SimDuration = .hours(22), end: SimDuration = .hours(7)
///     public static let policyName = "quiet-hours"
///     public static let summary = "waits through the night unless the phone charges"
///     public static let parameters: [PolicyParameter<Self>] = [
///         .duration("start", \.start, in: .zero ... .hours(24), help: "when quiet hours start (time of day)"),
///         .duration("end", \.end, in: .zero ... .hours(24), help: "when they end (time of day)"),
///     ]
///     public init() {}
///     ...
/// }
/// ```
public protocol RegisteredPolicy: SchedulingPolicy, Sendable {
    /// The name scenario files use: letters, digits and `-`, unique among registered policies.
    static var policyName: String { get }
    /// What the policy does, in one line, for help and documentation.
    static var summary: String { get }
    /// The parameters a scenario may set, each declared once.
    static var parameters: [PolicyParameter<Self>] { get }
    /// Every reason the policy gives when it holds a request (`PolicyDecision.reason`,
    /// `PolicyHold.reason`): what `tasks.csv`'s `policy_reasons` shows. A policy that holds
    /// without a reason is named by its `policyName`.
    static var holdReasons: [String] { get }
    /// The policy with every parameter at its default.
    init()
}

extension RegisteredPolicy {
    /// The name in outputs: the registered name.
    public var name: String { Self.policyName }

    /// No parameters unless the policy declares some.
    public static var parameters: [PolicyParameter<Self>] { [] }

    /// No reasons of its own unless the policy declares some.
    public static var holdReasons: [String] { [] }

    /// The policy with `values` (by parameter name) set over its defaults.
    public static func make(_ values: [String: PolicyParameterValue]) -> Self {
        var policy = Self()
        for parameter in parameters {
            if let value = values[parameter.name] { parameter.set(&policy, value) }
        }
        return policy
    }

    /// ``make(_:)``'s policy in the box the simulation is specialised for.
    public static func makeDynamic(_ values: [String: PolicyParameterValue]) -> DynamicPolicy {
        DynamicPolicy(make(values))
    }

    /// The parameters' descriptions, without the policy type.
    public static var parameterInfo: [PolicyParameterInfo] {
        let defaults = Self()
        return parameters.map {
            PolicyParameterInfo(
                name: $0.name, kind: $0.kind, defaultValue: $0.get(defaults), help: $0.help, plausible: $0.plausible, source: $0.source)
        }
    }

    /// The parameters' names, in declaration order.
    public static var parameterNames: [String] { parameters.map(\.name) }

    /// The parameters' names and kinds, what a reader checks, without making their defaults.
    public static var parameterKinds: [(name: String, kind: PolicyParameterKind)] { parameters.map { ($0.name, $0.kind) } }
}

/// One parameter of a ``RegisteredPolicy``: its scenario key, what it accepts, and the
/// property it sets.
public struct PolicyParameter<P: RegisteredPolicy>: Sendable {
    /// The key in a scenario's policy entry.
    public let name: String
    /// What it accepts.
    public let kind: PolicyParameterKind
    /// What it means, with its unit.
    public let help: String
    let get: @Sendable (P) -> PolicyParameterValue
    let set: @Sendable (inout P, PolicyParameterValue) -> Void
    /// Where the default could plausibly lie, if it is an assumption.
    public private(set) var plausible: PlausibleRange?
    /// The section of docs/sources.md that fixes the default, if one does.
    public private(set) var source: String?

    init(
        name: String, kind: PolicyParameterKind, help: String, get: @escaping @Sendable (P) -> PolicyParameterValue,
        set: @escaping @Sendable (inout P, PolicyParameterValue) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.help = help
        self.get = get
        self.set = set
    }

    /// The name, kind, default and help, without the policy type.
    public var info: PolicyParameterInfo {
        PolicyParameterInfo(name: name, kind: kind, defaultValue: get(P()), help: help, plausible: plausible, source: source)
    }

    /// The parameter, its default fixed by `section` of docs/sources.md (`§4`), or needing no
    /// source for the reason given (`a what-if, off by default`).
    public func sourced(_ section: String) -> Self {
        var copy = self
        copy.source = section
        return copy
    }

    /// The parameter, marked an assumption: no source fixes its default, which could lie
    /// anywhere from `low` to `high` (its own unit) for the reason `why`.
    public func assumption(_ low: Double, _ high: Double, why: String) -> Self {
        var copy = self
        copy.plausible = PlausibleRange(low, high, why: why)
        return copy
    }

    /// A duration parameter marked an assumption, plausible from `low` to `high`.
    public func assumption(_ low: SimDuration, _ high: SimDuration, why: String) -> Self {
        assumption(low.seconds, high.seconds, why: why)
    }

    /// A duration parameter stored at `property`, within `range`.
    public static func duration(
        _ name: String, _ property: WritableKeyPath<P, SimDuration> & Sendable,
        in range: ClosedRange<SimDuration> = .nonNegative, help: String
    ) -> Self {
        stored(name, property, .duration(range, noneAllowed: false), help) {
            .duration($0)
        } from: {
            if case .duration(let v) = $0 { v } else { nil }
        }
    }

    /// A duration parameter that may be `none` (no limit), stored at `property`.
    public static func optionalDuration(
        _ name: String, _ property: WritableKeyPath<P, SimDuration?> & Sendable,
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

    /// A real-number parameter stored at `property`, within `range`, in `unit`.
    public static func number(
        _ name: String, _ property: WritableKeyPath<P, Double> & Sendable, in range: ClosedRange<Double>, unit: String, help: String
    ) -> Self {
        number(name, property, in: NumberRange(range), unit: unit, help: help)
    }

    /// A real-number parameter stored at `property`, within `range` (`NumberRange(0..<100)`,
    /// `NumberRange(1...)`, `.above(0)`), in `unit`.
    public static func number(
        _ name: String, _ property: WritableKeyPath<P, Double> & Sendable, in range: NumberRange, unit: String, help: String
    ) -> Self {
        stored(name, property, .number(range, unit: unit), help) {
            .number($0)
        } from: {
            if case .number(let v) = $0 { v } else { nil }
        }
    }

    /// A real-number parameter that may be `none`, stored at `property`.
    public static func optionalNumber(
        _ name: String, _ property: WritableKeyPath<P, Double?> & Sendable, in range: NumberRange, unit: String, help: String
    ) -> Self {
        stored(name, property, .optionalNumber(range, unit: unit), help) {
            $0.map { .number($0) } ?? .off
        } from: {
            switch $0 {
            case .number(let v): .some(v)
            case .off: .some(nil)
            default: nil
            }
        }
    }

    /// A real-number parameter that the policy stores in another unit: `get` gives the value
    /// as scenarios write it, `set` stores one (a percentage kept as a fraction).
    public static func number(
        _ name: String, in range: NumberRange, unit: String, help: String,
        get: @escaping @Sendable (P) -> Double, set: @escaping @Sendable (inout P, Double) -> Void
    ) -> Self {
        Self(
            name: name, kind: .number(range, unit: unit), help: help, get: { .number(get($0)) },
            set: { if case .number(let v) = $1 { set(&$0, v) } })
    }

    /// A whole-number parameter stored at `property`, within `range`, counting `unit`.
    public static func integer(
        _ name: String, _ property: WritableKeyPath<P, Int> & Sendable, in range: ClosedRange<Int>,
        unit: String = "a whole number", help: String
    ) -> Self {
        stored(name, property, .integer(range, unit: unit), help) {
            .integer($0)
        } from: {
            if case .integer(let v) = $0 { v } else { nil }
        }
    }

    /// A true-or-false parameter stored at `property`.
    public static func flag(_ name: String, _ property: WritableKeyPath<P, Bool> & Sendable, help: String) -> Self {
        stored(name, property, .flag, help) {
            .flag($0)
        } from: {
            if case .flag(let v) = $0 { v } else { nil }
        }
    }

    /// A name parameter stored at `property`.
    public static func text(_ name: String, _ property: WritableKeyPath<P, String> & Sendable, help: String) -> Self {
        stored(name, property, .text, help) {
            .text($0)
        } from: {
            if case .text(let v) = $0 { v } else { nil }
        }
    }

    /// A true-or-false parameter that sets more than one property: `get` gives the value as
    /// scenarios write it, `set` stores it.
    public static func flag(
        _ name: String, help: String, get: @escaping @Sendable (P) -> Bool, set: @escaping @Sendable (inout P, Bool) -> Void
    ) -> Self {
        Self(name: name, kind: .flag, help: help, get: { .flag(get($0)) }, set: { if case .flag(let v) = $1 { set(&$0, v) } })
    }

    /// A parameter stored at `property`, whose values `to` and `from` convert.
    private static func stored<V>(
        _ name: String, _ property: WritableKeyPath<P, V> & Sendable, _ kind: PolicyParameterKind, _ help: String,
        to: @escaping @Sendable (V) -> PolicyParameterValue, from: @escaping @Sendable (PolicyParameterValue) -> V?
    ) -> Self {
        Self(
            name: name, kind: kind, help: help, get: { to($0[keyPath: property]) },
            set: { if let v = from($1) { $0[keyPath: property] = v } })
    }
}

/// The simulation's one type for the policies scenarios name: it holds any of them, so the run
/// loop is compiled once, specialised for this box, instead of once per policy type (a list
/// that every new policy had to join) or as unspecialised generic code for a type defined in
/// another module (which spent about 40% of a run looking up generic metadata). A decision
/// costs one dynamic call: 0.2% to 1.7% of a 30-day reference run's instructions
/// (docs/performance.md).
public struct DynamicPolicy: SchedulingPolicy {
    /// The policy inside, which the run's calls reach through inlined forwarding.
    @usableFromInline var box: any SchedulingPolicy
    /// The policy inside.
    public var base: any SchedulingPolicy { box }
    /// Whether the policy inside is clairvoyant.
    public let seesTheFuture: Bool

    /// A box around `policy`.
    public init<P: SchedulingPolicy>(_ policy: P) {
        box = policy
        seesTheFuture = P.isClairvoyant
    }

    /// The name of the policy inside.
    public var name: String { box.name }

    /// Shows the future to the policy inside, if it is clairvoyant.
    @inlinable public mutating func foresee(_ future: FutureWorld) { box.foresee(future) }

    /// The decision of the policy inside.
    @inlinable public mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        box.decide(state, eligible: eligible)
    }

    /// Tells the policy inside.
    @inlinable public mutating func taskEnded(_ record: TaskRecord) { box.taskEnded(record) }
}
