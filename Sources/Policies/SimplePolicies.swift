import PolicyAPI

/// Starts every request as soon as the gates allow: the lowest latency, and no regard for
/// energy source or batching. The baseline the other policies are compared with.
public struct EagerPolicy: RegisteredPolicy {
    /// `eager`.
    public static let policyName = "eager"
    /// For `bgsim policies`.
    public static let summary = "starts every request as soon as the gates allow"
    /// The policy; it has no parameters.
    public init() {}
    /// Starts everything.
    public func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision { .startAll }
}

/// Starts requests only while the phone is charging, so background work never costs battery
/// energy, at the price of waiting until the next charge (typically the night).
public struct ChargeOnlyPolicy: RegisteredPolicy {
    /// `charge-only`.
    public static let policyName = "charge-only"
    /// For `bgsim policies`.
    public static let summary = "starts requests only while the phone is charging"
    /// Waiting for the charger.
    public static let holdReasons = ["not_charging"]
    /// The policy; it has no parameters.
    public init() {}
    /// Starts everything while charging; otherwise holds it (`not_charging`).
    public func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        state.isCharging ? .startAll : PolicyDecision(start: .none, reason: Self.holdReasons[0])
    }
}
