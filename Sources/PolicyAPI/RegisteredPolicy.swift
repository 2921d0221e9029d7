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

    /// The declared reasons, which holds name by number.
    public var holdReasons: [String] { Self.holdReasons }

    /// No parameters unless the policy declares some.
    public static var parameters: [PolicyParameter<Self>] { [] }

    /// No reasons of its own unless the policy declares some.
    public static var holdReasons: [String] { [] }

    /// The policy with `values` (by parameter name) set over its defaults.
    public static func make(_ values: [String: PolicyParameterValue]) -> Self {
        var policy = Self()
        for parameter in parameters {
            if let value = values[parameter.name] { parameter.apply(value, to: &policy) }
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
        return parameters.map { $0.info(defaults) }
    }

    /// The parameters' names, in declaration order.
    public static var parameterNames: [String] { parameters.map(\.name) }

    /// The parameters' names and kinds, what a reader checks, without making their defaults.
    public static var parameterKinds: [(name: String, kind: PolicyParameterKind)] { parameters.map { ($0.name, $0.kind) } }
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

    /// The reasons of the policy inside.
    public var holdReasons: [String] { box.holdReasons }
}
