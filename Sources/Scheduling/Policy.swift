import PhoneWorld
import SimEngine

/// What a policy may observe of the phone at a decision point.
public struct DeviceState: Sendable {
    public var now: SimInstant
    /// State of charge in [0, 1].
    public var charge: Double
    /// Whether a charger is connected.
    public var isCharging: Bool
    /// The connection the phone has.
    public var network: NetworkKind = .wifi
    /// Whether the person is using the phone (an app in the foreground, or a call).
    public var inUse = false
    public var inCall = false
    public var lowPowerMode = false

    public init(now: SimInstant, charge: Double, isCharging: Bool, network: NetworkKind = .wifi,
                inUse: Bool = false, inCall: Bool = false, lowPowerMode: Bool = false) {
        self.now = now
        self.charge = charge
        self.isCharging = isCharging
        self.network = network
        self.inUse = inUse
        self.inCall = inCall
        self.lowPowerMode = lowPowerMode
    }
}

/// A request that has passed every gate the system enforces and may start now.
public struct EligibleTask: Sendable {
    public var id: TaskID
    public var app: Int
    public var kind: TaskKind
    public var submitted: SimInstant
    public var earliestBegin: SimInstant
    /// Processing requests' requirements (already met when the policy is shown the request).
    public var requiresExternalPower = false
    public var requiresNetworkConnectivity = false
}

/// Which eligible tasks to start.
public enum TaskSelection: Sendable, Equatable {
    case none
    case all
    /// These, each of which must be among the eligible tasks shown to the policy.
    case some([TaskID])
}

/// A policy's answer at a decision point.
public struct PolicyDecision: Sendable, Equatable {
    public var start: TaskSelection
    /// When to ask the policy again even if nothing changes (strictly after now); `nil`: only
    /// on the next change.
    public var reconsiderAt: SimInstant?

    public init(start: TaskSelection, reconsiderAt: SimInstant? = nil) {
        self.start = start
        self.reconsiderAt = reconsiderAt
    }

    public static let startAll = PolicyDecision(start: .all)
    public static let wait = PolicyDecision(start: .none)
}

/// Chooses when allowed background work runs.
///
/// The system decides what is allowed (the gates: phone on, `earliestBeginDate` passed,
/// Background App Refresh, Low Power Mode, the app switcher, processing requirements); a
/// policy chooses among what is allowed. It is asked at decision points — a request
/// became eligible, the charger was connected or removed, a task ended, the phone booted,
/// or a time the policy asked for came — and sees only the device's observable state and
/// the eligible requests. It cannot see the future, cannot reach the event queue, and can
/// start only what it was shown.
public protocol SchedulingPolicy {
    /// The name used in scenario files and output columns.
    var name: String { get }
    /// Which of `eligible` to start now, and when to be asked again.
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision
}

/// Starts every request as soon as the gates allow: the lowest latency, and no regard for
/// energy source or batching. The baseline the other policies are compared with.
public struct EagerPolicy: SchedulingPolicy {
    public init() {}
    public var name: String { "eager" }
    public func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision { .startAll }
}

/// Starts requests only while the phone is charging, so background work never costs battery
/// energy, at the price of waiting until the next charge (typically the night).
public struct ChargeOnlyPolicy: SchedulingPolicy {
    public init() {}
    public var name: String { "charge-only" }
    public func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        state.isCharging ? .startAll : .wait
    }
}
