import PhoneWorld
import SimEngine

/// Identifies one task within a run; assigned in submission order from 0.
public struct TaskID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The task's number in submission order.
    public var rawValue: Int
    /// The task numbered `rawValue`.
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    /// Whether `a` was submitted before `b`.
    public static func < (a: TaskID, b: TaskID) -> Bool { a.rawValue < b.rawValue }
    /// `task <n>`.
    public var description: String { "task \(rawValue)" }
}

/// Why `submit` refused a request: BGTaskScheduler's error codes. The built-in ones are listed
/// once, in `builtIn`; a mechanism may declare its own (`Mechanism.rejections`), which
/// follow them in `allCases`, so that every per-error column takes them.
public struct SubmitError: Hashable, Sendable, Error {
    /// Position in `allCases`: the index of its column in per-error counts.
    public let index: Int

    /// Background App Refresh is off for the app or the phone.
    @inlinable public static var unavailable: SubmitError { SubmitError(index: 0) }
    /// The app already has its 1 refresh or 10 processing requests pending.
    @inlinable public static var tooManyPendingTaskRequests: SubmitError { SubmitError(index: 1) }
    /// The identifier is not in the app's permitted identifiers.
    @inlinable public static var notPermitted: SubmitError { SubmitError(index: 2) }

    /// An error's names: as iOS spells it (tasks.csv, events.csv) and in column names
    /// (`rejected_<token>`).
    public struct Name: Sendable {
        /// iOS's spelling (`immediateRunIneligible`).
        public let rawValue: String
        /// Lower case, digits and `_` (`immediate_run_ineligible`).
        public let token: String
        /// An error spelled `rawValue`, `token` in column names.
        public init(_ rawValue: String, token: String) {
            self.rawValue = rawValue
            self.token = token
        }
    }

    /// The built-in errors, in index order.
    package static let builtIn = [
        Name("unavailable", token: "unavailable"), Name("tooManyPendingTaskRequests", token: "too_many_pending"),
        Name("notPermitted", token: "not_permitted"),
    ]
    @inlinable package init(index: Int) { self.index = index }
    /// Declared by a mechanism, not built in.
    public var isDeclared: Bool { index >= Self.builtIn.count }
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
    /// Cancelled by the app before it started, or a continued-processing request still queued
    /// when the person swiped its app away.
    case cancelled
    /// Refused at submission; see `TaskRecord.rejection`.
    case rejected
    /// Still pending when the simulation ended.
    case neverRun = "never_run"
    /// Never delivered: a silent push to an app the person swiped away (docs/sources.md §1) or that
    /// opted out of running in the background; a background transfer of a swiped-away app.
    case dropped

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
        case .dropped: 7
        }
    }
}

/// A task an app asked for, with the work it will do if it runs (drawn when it is
/// submitted, so every policy sees the same work for the same request).
public struct TaskRequest: Sendable {
    /// The task's number in the run.
    public var id: TaskID
    /// The app that asked, as an index into the scenario's apps.
    public var app: Int
    /// Which door into the background it uses.
    public var kind: TaskKind
    /// The BGTaskScheduler identifier; for finite-length work, `background-work.<n>`.
    public var identifier: String
    /// When the app submitted it.
    public var submitted: SimInstant
    /// The request may not start before this (`earliestBeginDate`).
    public var earliestBegin: SimInstant
    /// A processing request that may start only on external power.
    public var requiresExternalPower = false
    /// A processing request that may start only with a network connection.
    public var requiresNetworkConnectivity = false
    /// CPU time the work takes once its transfers are done.
    public var work: SimDuration
    /// CPU power while the task runs, in watts above idle.
    public var powerW: Double
    /// Share of a core the work keeps busy, for the CPU monitor.
    public var cpuShare = 0.5
    /// Bytes the task sends before the CPU work.
    public var upBytes: Double = 0
    /// Bytes the task receives before the CPU work.
    public var downBytes: Double = 0
    /// What the app will report to `setTaskCompleted(success:)`.
    public var success = true
    /// The app will never call `setTaskCompleted` / `endBackgroundTask`.
    public var forgetsCompletion = false
    /// How long the app's expiration handler takes to end the task.
    public var expirationResponse: SimDuration = .zero
    /// Whether the app set an expiration handler; without one the system ends the task,
    /// unsuccessful, when its time runs out.
    public var expirationHandler = true

    /// A request with the given timing and CPU work, no transfers, a successful outcome.
    @inlinable public init(
        id: TaskID, app: Int, kind: TaskKind, identifier: String, submitted: SimInstant,
        earliestBegin: SimInstant, work: SimDuration, powerW: Double
    ) {
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

/// Why an eligible request (past its `earliestBeginDate`) was not started at a decision
/// point: the first gate that was closed, in the order the system checks them (docs/sources.md
/// §1-5), or the policy's choice.
public enum HoldReason: Int, CaseIterable, Sendable {
    case phoneOff
    case lowPowerMode
    /// Background App Refresh off for the phone or the app.
    case backgroundRefreshOff
    /// Background App Refresh on Wi-Fi only, and the phone is not on Wi-Fi.
    case wifiOnly
    case appSwipedAway
    case appInForeground
    /// A processing task while the person uses the phone.
    case deviceInUse
    /// A processing task that requires external power, on battery.
    case noExternalPower
    /// A processing task that requires connectivity, with no connection.
    case noNetwork
    /// Every gate was open and the policy did not start it.
    case policy

    /// The token used in files: `phone_off`, `low_power_mode`, ...
    public var token: String {
        switch self {
        case .phoneOff: "phone_off"
        case .lowPowerMode: "low_power_mode"
        case .backgroundRefreshOff: "background_refresh_off"
        case .wifiOnly: "wifi_only"
        case .appSwipedAway: "app_swiped_away"
        case .appInForeground: "app_in_foreground"
        case .deviceInUse: "device_in_use"
        case .noExternalPower: "no_external_power"
        case .noNetwork: "no_network"
        case .policy: "policy"
        }
    }
}

/// Time a request spent held for each `HoldReason`, and of its time held by the policy, the
/// time each of the policy's reasons held it. Inline storage (no allocation per task): this
/// is kept for every request of a run. Whole microseconds, like the clock, so a hold counted
/// in many pieces (one per decision point) adds up exactly to its length.
public struct HoldTimes: Sendable, Equatable {
    @usableFromInline package var microseconds = SIMD16<Int64>()
    /// By the policy's reasons, numbered as a run first hears them (`PolicyReasons`).
    @usableFromInline package var byRule = SIMD16<Int64>()
    /// No time held.
    @inlinable public init() {}
    /// Seconds held for `reason`.
    @inlinable public subscript(_ reason: HoldReason) -> Double { Double(microseconds[reason.rawValue]) / 1e6 }
    /// Counts `duration` more held for `reason`.
    @inlinable public mutating func add(_ duration: SimDuration, to reason: HoldReason) {
        microseconds[reason.rawValue] += duration.microseconds
    }
    /// Counts `duration` more held by the policy's reason numbered `rule`.
    @inlinable package mutating func add(_ duration: SimDuration, toRule rule: Int) { byRule[rule] += duration.microseconds }
    /// Seconds held by the policy's reason numbered `rule`.
    package func rule(_ rule: Int) -> Double { Double(byRule[rule]) / 1e6 }
    /// All reasons' seconds together.
    public var totalS: Double { Double(microseconds.wrappedSum()) / 1e6 }
}

/// The life of one task, as the metrics see it when it ends.
public struct TaskRecord: Sendable {
    /// What was asked for.
    public var request: TaskRequest
    /// When it started; `nil` if it never ran.
    public var started: SimInstant?
    /// When it reached its final state.
    public var ended: SimInstant
    /// Its final state.
    public var outcome: TaskOutcome
    /// For `completed`: what the app reported.
    public var success = false
    /// For `rejected`: the error `submit` returned.
    public var rejection: SubmitError?
    /// For `killed`: the system terminated the app because it did not end this task in time
    /// (its expiration handler did not end it within the grace, or it never called
    /// `setTaskCompleted`), which Apple says makes the system launch the app less.
    public var overran = false
    /// Energy of the task, in joules: `cpuEnergyJ + radioEnergyJ`.
    public var energyJ: Double
    /// Radio energy charged to it: the promotion its transfer caused, the radio's power while
    /// moving its bytes, and its share of the tail after the burst it was served in (the
    /// tail's energy split equally among the burst's owners, the person's foreground use
    /// being one).
    public var radioEnergyJ: Double = 0
    /// The tail part of `radioEnergyJ`.
    public var radioTailEnergyJ: Double = 0
    /// The part of `energyJ` drawn while a charger was connected: the charger's, not the
    /// battery's (the battery gave the rest).
    public var chargerEnergyJ: Double = 0
    /// Whether it started on the charger; `nil` if it never started.
    public var startedCharging: Bool?
    /// The connection it started on; `nil` if it never started.
    public var startedOn: NetworkKind?
    /// The time it had when it ended: from its start to the deadline its budget, the
    /// policy's limit or the finite-length grant set; `nil` if it never started or had none.
    public var grant: SimDuration?
    /// Why the system called its expiration handler, if it did.
    public var expiration: ExpirationReason?
    /// Time its CPU ran.
    public var cpuTime = SimDuration.zero
    /// The energy of its CPU time, in joules.
    public var cpuEnergyJ: Double { energyJ - radioEnergyJ }
    /// Bytes it actually sent (less than asked for if it ended before its transfer did).
    public var movedUpBytes: Double = 0
    /// Bytes it actually received.
    public var movedDownBytes: Double = 0
    /// While eligible and not started: seconds held by each gate or by the policy.
    public var held = HoldTimes()
    /// The reasons the policy gave when it held this request (`PolicyDecision.reason` or
    /// `holds`; the policy's name when it gave none) with the seconds each held it, longest
    /// first (ties in the order the run first heard them). They sum to `held[.policy]`.
    public var policyHolds: [(reason: String, seconds: Double)] = []
    /// The reasons of `policyHolds`, longest first.
    public var policyReasons: [String] { policyHolds.map(\.reason) }

    /// The record of `request`, which ended at `ended` in `outcome`.
    @inlinable public init(
        request: TaskRequest, started: SimInstant?, ended: SimInstant, outcome: TaskOutcome,
        energyJ: Double, radioEnergyJ: Double = 0
    ) {
        self.request = request
        self.started = started
        self.ended = ended
        self.outcome = outcome
        self.energyJ = energyJ
        self.radioEnergyJ = radioEnergyJ
    }

    /// When it could first start: max(submitted, earliestBegin).
    public var eligibleSince: SimInstant { max(request.submitted, request.earliestBegin) }

    /// Start delay: start - max(submitted, earliestBegin); `nil` if it never started.
    public var latency: SimDuration? {
        started.map { $0 - eligibleSince }
    }

    /// Completion delay: end - max(submitted, earliestBegin) for a task that completed (the
    /// app ended it in time); `nil` otherwise.
    public var completionLatency: SimDuration? {
        outcome == .completed ? ended - eligibleSince : nil
    }
}
