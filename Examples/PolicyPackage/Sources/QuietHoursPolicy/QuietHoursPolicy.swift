import PolicyAPI
import SimEngine

/// An example of a policy written outside bgsim, in a package of its own (see
/// docs/policies.md, "Writing your own policy"): background work waits through the person's
/// quiet hours unless the phone is charging, and otherwise starts as soon as the gates allow.
///
/// A policy is a value type that conforms to `SchedulingPolicy`. It is asked at decision
/// points with the observable state and the requests the system allows now; it answers which
/// to start and when to ask it again. It can keep state (here it counts its decisions) and
/// learns how each task ended through `taskEnded`. As a `RegisteredPolicy` it has a name
/// that scenario files use and parameters they may set, declared once below.
public struct QuietHoursPolicy: RegisteredPolicy {
    /// When quiet hours start, as a time of day; the span may cross midnight.
    public var start: SimDuration
    /// When quiet hours end, as a time of day.
    public var end: SimDuration
    /// Decisions made so far (the tests read it).
    public private(set) var decisions = 0
    /// Tasks that have ended so far.
    public private(set) var ended = 0

    /// Quiet from `start` to `end` (22:00 to 07:00 by default).
    public init(from start: SimDuration = .hours(22), to end: SimDuration = .hours(7)) {
        self.start = start
        self.end = end
    }

    /// Quiet from 22:00 to 07:00.
    public init() { self.init(from: .hours(22), to: .hours(7)) }

    /// `quiet-hours`: the name in scenario files and in every output.
    public static let policyName = "quiet-hours"

    /// What the policy does, for help and documentation.
    public static let summary = "holds background work through quiet hours unless the phone charges"

    /// `{name: quiet-hours, start: 23h, end: 6h30m}`: both times of day, from 0 to 24 h.
    public static let parameters: [PolicyParameter<Self>] = [
        .duration("start", \.start, in: .zero ... .hours(24), help: "when quiet hours start, as a time of day (22h)"),
        .duration("end", \.end, in: .zero ... .hours(24), help: "when quiet hours end, as a time of day (7h)"),
    ]

    /// Whether `time` falls in the quiet hours.
    public func isQuiet(_ time: SimInstant) -> Bool {
        let t = time.timeOfDay
        return start <= end ? (t >= start && t < end) : (t >= start || t < end)
    }

    /// Starts everything while charging or outside quiet hours; otherwise waits until they end.
    public mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        decisions += 1
        if state.isCharging || !isQuiet(state.now) { return .startAll }
        // Ask again when the quiet hours end (the charger coming is a decision point anyway).
        let midnight = SimInstant.after(.days(state.now.day))
        var wake = midnight + end
        if wake <= state.now { wake = wake + .days(1) }
        return PolicyDecision(start: .none, reconsiderAt: wake, reason: "quiet_hours")
    }

    /// Counts the task.
    public mutating func taskEnded(_ record: TaskRecord) { ended += 1 }
}
