import SimEngine

/// Identifies one task within a run; assigned in submission order from 0.
public struct TaskID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public static func < (a: TaskID, b: TaskID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "task \(rawValue)" }
}

/// The kind of background work.
public enum TaskKind: String, Sendable, CaseIterable {
    /// `BGAppRefreshTask`: short, keeps content fresh, up to 30 s (FACTS.md §2).
    case refresh
    /// `BGProcessingTask`: deferrable maintenance, minutes, only while the phone is idle.
    case processing
    /// Finite-length background time (`beginBackgroundTask`) after the app left the
    /// foreground (FACTS.md §3). Not scheduled: it starts when the app asks.
    case finiteLength = "finite_length"

    public var index: Int {
        switch self {
        case .refresh: 0
        case .processing: 1
        case .finiteLength: 2
        }
    }
}

/// Why `BGTaskScheduler.submit` refused a request (`BGTaskScheduler.Error.Code`, FACTS.md §2).
public enum SubmitError: String, Sendable, CaseIterable, Error {
    /// Background App Refresh is off for the app or the phone.
    case unavailable
    /// The app already has its 1 refresh or 10 processing requests pending.
    case tooManyPendingTaskRequests
    /// The identifier is not in the app's permitted identifiers.
    case notPermitted
}

/// How a task ended. Every task ends in exactly one of these.
public enum TaskOutcome: String, Sendable, CaseIterable {
    /// The app called `setTaskCompleted` (or `endBackgroundTask`) in time; see
    /// `TaskRecord.success`.
    case completed
    /// Its time ran out (or the system ended it early), and the app ended it from the
    /// expiration handler.
    case expired
    /// It was running when the app was terminated: not completed by its expiration, the CPU
    /// monitor, the person swiping the app away, or the phone shutting down.
    case killed
    /// Replaced, before it started, by a newer request with the same identifier.
    case replaced
    /// Cancelled by the app before it started.
    case cancelled
    /// Refused at submission; see `TaskRecord.rejection`.
    case rejected
    /// Still pending when the simulation ended.
    case neverRun = "never_run"

    /// Position in `allCases`, without building that array (this runs per task).
    public var index: Int {
        switch self {
        case .completed: 0
        case .expired: 1
        case .killed: 2
        case .replaced: 3
        case .cancelled: 4
        case .rejected: 5
        case .neverRun: 6
        }
    }
}

/// A task an app asked for, with the work it will do if it runs (drawn when it is
/// submitted, so every policy sees the same work for the same request).
public struct TaskRequest: Sendable {
    public var id: TaskID
    public var app: Int
    public var kind: TaskKind
    /// The BGTaskScheduler identifier; for finite-length work, `background-work.<n>`.
    public var identifier: String
    public var submitted: SimInstant
    /// The request may not start before this (`earliestBeginDate`).
    public var earliestBegin: SimInstant
    public var requiresExternalPower = false
    public var requiresNetworkConnectivity = false
    /// CPU time the work takes once its transfers are done.
    public var work: SimDuration
    /// CPU power while the task runs, in watts above idle.
    public var powerW: Double
    /// Share of a core the work keeps busy, for the CPU monitor.
    public var cpuShare = 0.5
    /// Bytes the task sends and receives before the CPU work.
    public var upBytes: Double = 0
    public var downBytes: Double = 0
    /// What the app will report to `setTaskCompleted(success:)`.
    public var success = true
    /// The app will never call `setTaskCompleted` / `endBackgroundTask`.
    public var forgetsCompletion = false
    /// How long the app's expiration handler takes to end the task.
    public var expirationResponse: SimDuration = .zero

    public init(id: TaskID, app: Int, kind: TaskKind, identifier: String, submitted: SimInstant,
                earliestBegin: SimInstant, work: SimDuration, powerW: Double) {
        self.id = id
        self.app = app
        self.kind = kind
        self.identifier = identifier
        self.submitted = submitted
        self.earliestBegin = earliestBegin
        self.work = work
        self.powerW = powerW
    }
}

/// The life of one task, as the metrics see it when it ends.
public struct TaskRecord: Sendable {
    public var request: TaskRequest
    public var started: SimInstant?
    public var ended: SimInstant
    public var outcome: TaskOutcome
    /// For `completed`: what the app reported.
    public var success = false
    /// For `rejected`: the error `submit` returned.
    public var rejection: SubmitError?
    /// Energy of the work itself, in joules: CPU power times running time, plus the radio's
    /// promotion and active energy for its transfers. The radio's tail is shared, not charged
    /// to a task.
    public var energyJ: Double
    /// The radio part of `energyJ`.
    public var radioEnergyJ: Double = 0

    public init(request: TaskRequest, started: SimInstant?, ended: SimInstant, outcome: TaskOutcome,
                energyJ: Double, radioEnergyJ: Double = 0) {
        self.request = request
        self.started = started
        self.ended = ended
        self.outcome = outcome
        self.energyJ = energyJ
        self.radioEnergyJ = radioEnergyJ
    }

    /// Start delay: start - max(submitted, earliestBegin); `nil` if it never started.
    public var latency: SimDuration? {
        started.map { $0 - max(request.submitted, request.earliestBegin) }
    }
}
