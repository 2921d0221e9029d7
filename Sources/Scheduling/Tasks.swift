import SimEngine

/// Identifies one task request within a run; assigned in submission order from 0.
public struct TaskID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public static func < (a: TaskID, b: TaskID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "task \(rawValue)" }
}

/// The kind of background work a request asks for.
public enum TaskKind: String, Sendable, CaseIterable {
    /// `BGAppRefreshTask`: short, keeps content fresh, up to 30 s (FACTS.md §2).
    case refresh
}

/// How a task request ended. Every request ends in exactly one of these.
public enum TaskOutcome: String, Sendable, CaseIterable {
    /// Ran and finished its work within its budget.
    case completed
    /// Ran out of its time budget before finishing.
    case expired
    /// Was running when the phone shut down.
    case killed
    /// Was replaced, before it started, by a newer request with the same identifier.
    case replaced
    /// Was still waiting when the simulation ended.
    case neverRun = "never_run"

    /// Position in `allCases`, without building that array (this runs per task).
    public var index: Int {
        switch self {
        case .completed: 0
        case .expired: 1
        case .killed: 2
        case .replaced: 3
        case .neverRun: 4
        }
    }
}

/// A request an app submitted, with the work it will do if started.
public struct TaskRequest: Sendable {
    public var id: TaskID
    public var app: Int
    public var kind: TaskKind
    public var submitted: SimInstant
    /// The request may not start before this (`earliestBeginDate`).
    public var earliestBegin: SimInstant
    /// CPU time the work takes once its fetch is done (drawn at submission).
    public var work: SimDuration
    /// CPU power while the task runs, in watts above idle.
    public var powerW: Double
    /// Bytes the task's fetch sends and receives before the CPU work.
    public var upBytes: Double = 0
    public var downBytes: Double = 0
}

/// The life of one request, as the metrics see it when it ends.
public struct TaskRecord: Sendable {
    public var request: TaskRequest
    public var started: SimInstant?
    public var ended: SimInstant
    public var outcome: TaskOutcome
    /// Energy of the work itself, in joules: CPU power times running time, plus the radio's
    /// promotion and active energy for its fetch. The radio's tail is shared, not charged to
    /// a task.
    public var energyJ: Double
    /// The radio part of `energyJ`.
    public var radioEnergyJ: Double = 0

    /// Start delay: start - max(submitted, earliestBegin); `nil` if it never started.
    public var latency: SimDuration? {
        started.map { $0 - max(request.submitted, request.earliestBegin) }
    }
}
