import PolicyAPI

/// Starts every request as soon as the gates allow: the lowest latency, and no regard for
/// energy source or batching. The baseline the other policies are compared with.
struct EagerPolicy: RegisteredPolicy {
    /// `eager`.
    static let policyName = "eager"
    /// For `bgsim policies`.
    static let summary = "starts every request as soon as the gates allow"
    /// Starts everything.
    func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision { .startAll }
}

/// Starts requests only while the phone is charging, so background work never costs battery
/// energy, at the price of waiting until the next charge (typically the night).
struct ChargeOnlyPolicy: RegisteredPolicy {
    /// `charge-only`.
    static let policyName = "charge-only"
    /// For `bgsim policies`.
    static let summary = "starts requests only while the phone is charging"
    /// Waiting for the charger.
    static let holdReasons = ["not_charging"]
    /// Starts everything while charging; otherwise holds it (`not_charging`).
    func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        state.isCharging ? .startAll : PolicyDecision(start: .none, reason: Self.holdReasons[0])
    }
}
