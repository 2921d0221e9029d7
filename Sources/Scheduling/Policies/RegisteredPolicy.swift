import SimEngine
import Synchronization

/// A policy that scenario files can name and configure: `{name: quiet-hours, start: 22h}`.
///
/// A registered policy declares its name and its parameters once, with their types, ranges
/// and documentation; scenario files, sweeps, `--set` and the documentation all read that
/// declaration. Register the types with the command line's entry point (`BGSimCommandLine`)
/// or with ``PolicyRegistry/register(_:reserved:)``.
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
    /// The policy with every parameter at its default.
    init()
}

extension RegisteredPolicy {
    /// The name in outputs: the registered name.
    public var name: String { Self.policyName }

    /// No parameters unless the policy declares some.
    public static var parameters: [PolicyParameter<Self>] { [] }

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
    public static var parameterInfo: [PolicyParameterInfo] { parameters.map(\.info) }
}

/// A value of a policy parameter, as read from a scenario.
public enum PolicyParameterValue: Sendable, Equatable {
    /// A span of time (`30m`).
    case duration(SimDuration)
    /// A real number.
    case number(Double)
    /// A whole number.
    case integer(Int)
    /// `true` or `false`.
    case flag(Bool)
}

/// What a parameter accepts: its kind and range.
public enum PolicyParameterKind: Sendable, Equatable {
    /// A duration within the range (`15m`, `2h`).
    case duration(ClosedRange<SimDuration>)
    /// A number within the range, in `unit` (for messages and docs: `a probability`).
    case number(ClosedRange<Double>, unit: String)
    /// A whole number within the range.
    case integer(ClosedRange<Int>)
    /// `true` or `false`.
    case flag
}

/// A parameter's name, kind, default and documentation: what a scenario reader and the
/// documentation need, without the policy type.
public struct PolicyParameterInfo: Sendable, Equatable {
    /// The key in a scenario's policy entry (`max_delay`).
    public let name: String
    /// What it accepts.
    public let kind: PolicyParameterKind
    /// The value of a policy made with `init()`.
    public let defaultValue: PolicyParameterValue
    /// What it means, with its unit.
    public let help: String
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

    /// The name, kind, default and help, without the policy type.
    public var info: PolicyParameterInfo {
        PolicyParameterInfo(name: name, kind: kind, defaultValue: get(P()), help: help)
    }

    /// A duration parameter stored at `property`, within `range`.
    public static func duration(
        _ name: String, _ property: WritableKeyPath<P, SimDuration> & Sendable, in range: ClosedRange<SimDuration>, help: String
    ) -> Self {
        stored(name, property, .duration(range), help) {
            .duration($0)
        } from: {
            if case .duration(let v) = $0 { v } else { nil }
        }
    }

    /// A real-number parameter stored at `property`, within `range`, in `unit`.
    public static func number(
        _ name: String, _ property: WritableKeyPath<P, Double> & Sendable, in range: ClosedRange<Double>, unit: String, help: String
    ) -> Self {
        stored(name, property, .number(range, unit: unit), help) {
            .number($0)
        } from: {
            if case .number(let v) = $0 { v } else { nil }
        }
    }

    /// A whole-number parameter stored at `property`, within `range`.
    public static func integer(
        _ name: String, _ property: WritableKeyPath<P, Int> & Sendable, in range: ClosedRange<Int>, help: String
    ) -> Self {
        stored(name, property, .integer(range), help) {
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

/// The registered policy types, by name: what scenario files may name besides the built-in
/// rules. The command line's entry point registers a user's types before it reads anything.
public enum PolicyRegistry {
    private static let types = Mutex<[String: any RegisteredPolicy.Type]>([:])

    /// Registers policy types; a name registered twice, or one a built-in rule uses, is a
    /// programming error that traps with both names.
    /// - Parameters:
    ///   - new: the types to register.
    ///   - reserved: names that registered policies may not take (the built-in rules').
    public static func register(_ new: [any RegisteredPolicy.Type], reserved: [String] = []) {
        types.withLock { table in
            for type in new {
                let name = type.policyName
                precondition(
                    !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") },
                    "policy name '\(name)' of \(type): use letters, digits, '-' and '_'")
                precondition(!reserved.contains(name), "policy name '\(name)' of \(type) is a built-in policy's")
                if let other = table[name] {
                    precondition(other == type, "policy name '\(name)' is registered by both \(other) and \(type)")
                }
                table[name] = type
            }
        }
    }

    /// The type registered as `name`.
    public static func type(named name: String) -> (any RegisteredPolicy.Type)? {
        types.withLock { $0[name] }
    }

    /// Every registered name, sorted.
    public static var names: [String] { types.withLock { $0.keys.sorted() } }
}

/// The simulation's one type for registered policies: it holds any of them, so the run loop
/// is compiled once, specialised for this box, instead of running unspecialised generic code
/// for a type defined in another module (which spent about 40% of a run looking up generic
/// metadata). A decision costs one dynamic call more than a built-in policy's.
public struct DynamicPolicy: SchedulingPolicy {
    /// The policy inside.
    public private(set) var base: any SchedulingPolicy
    /// Whether the policy inside is clairvoyant.
    public let seesTheFuture: Bool

    /// A box around `policy`.
    public init<P: SchedulingPolicy>(_ policy: P) {
        base = policy
        seesTheFuture = P.isClairvoyant
    }

    /// The name of the policy inside.
    public var name: String { base.name }

    /// Shows the future to the policy inside, if it is clairvoyant.
    public mutating func foresee(_ future: FutureWorld) { base.foresee(future) }

    /// The decision of the policy inside.
    public mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        base.decide(state, eligible: eligible)
    }

    /// Tells the policy inside.
    public mutating func taskEnded(_ record: TaskRecord) { base.taskEnded(record) }
}
