import PhoneWorld
import PolicyAPI
import SimEngine

/// Tail-aware batching (TailEnder, IMC 2009; docs/sources.md §6): a cellular fetch costs on the order
/// of 10 J, almost all of it the radio's promotion and tail, so work waits until a batch is
/// worth one promotion.
///
/// At a decision point it starts every eligible request when any of these holds, and
/// otherwise waits:
/// - the radio is already awake (promoting, transferring or in its tail) and `rideAwakeRadio`:
///   the work rides it without a promotion of its own;
/// - at least `minBatch` requests are eligible;
/// - the oldest has waited `maxDelay` since it became eligible;
/// - the phone is on Wi-Fi and `holdOnWiFi` is false: Wi-Fi's tail is about 0.25 s, so holding
///   saves almost nothing there.
///
/// Everything eligible starts together, so a batch shares one promotion and one tail. The
/// policy does not know a request's bytes (iOS requests do not declare them): it treats all
/// work as network work.
struct CoalescePolicy: RegisteredPolicy {
    /// The batching rule's thresholds; each is a scenario key of the policy (`max_delay`, ...).
    struct Parameters: Equatable, Sendable {
        /// The longest a request waits for a batch, from when it became eligible.
        var maxDelay: SimDuration = .minutes(20)
        /// Requests that make a batch worth a promotion.
        var minBatch = 3
        /// Whether work starts whenever the radio is already awake (`ride_awake_radio`).
        var rideAwakeRadio = true
        /// Whether work is held on Wi-Fi too (`hold_on_wifi`), where a tail costs little.
        var holdOnWiFi = false
        /// The defaults above (assumptions, docs/sources.md §12).
        init() {}
    }

    /// The thresholds in use.
    var parameters: Parameters
    /// The policy with `parameters`.
    init(_ parameters: Parameters) { self.parameters = parameters }
    /// The policy with the default thresholds.
    init() { self.init(Parameters()) }

    /// `coalesce`.
    static let policyName = "coalesce"
    /// For `bgsim policies`.
    static let summary = "tail-aware batching: holds work until a batch, an awake radio or max_delay (TailEnder)"
    /// Waiting for a batch.
    static let holdReasons = ["batching"]
    /// The thresholds, as scenario keys.
    static let parameters: [PolicyParameter<Self>] = [
        .duration("max_delay", \.parameters.maxDelay, help: "the longest a request waits for a batch, from when it became eligible"),
        .integer("min_batch", \.parameters.minBatch, in: 1...10_000, help: "requests that make a batch worth a promotion"),
        .flag("ride_awake_radio", \.parameters.rideAwakeRadio, help: "start whenever the radio is already awake"),
        .flag("hold_on_wifi", \.parameters.holdOnWiFi, help: "hold work on Wi-Fi too, where a tail costs little"),
    ]

    /// Starts everything when a rule above holds; otherwise waits, and asks to be reconsidered when the oldest request's `maxDelay` runs out.
    func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        let p = parameters
        if p.rideAwakeRadio && state.radioAwake { return .startAll }
        if !p.holdOnWiFi && state.network == .wifi { return .startAll }
        if eligible.count >= p.minBatch { return .startAll }
        var oldest = eligible[0].eligibleSince
        for task in eligible.dropFirst() { oldest = min(oldest, task.eligibleSince) }
        let due = oldest + p.maxDelay
        if due <= state.now { return .startAll }
        return PolicyDecision(start: .none, reconsiderAt: due, reason: Self.holdReasons[0])
    }
}
