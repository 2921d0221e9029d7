import PhoneWorld
import SimEngine

/// One task of a run as the task store keeps it: what was asked for (drawn when it was
/// submitted), where it is, and what it used so far.
///
/// Plain values only (no strings, no arrays), so writing a field is a store and appending a
/// state copies no references; the request and the record the sink and the policy see are
/// made from it when needed (`TaskRecords.swift`). Its BGTaskScheduler identifier follows
/// from its kind, app and `source` (`identifier(of:)`).
struct TaskState {
    enum Status: UInt8 { case waiting, eligible, running, ended }

    /// Where a running task is. While `working`, it is transferring until `transferEnd` and
    /// computing after it.
    enum Phase: UInt8 {
        case working
        /// Work done, but the app never said so: idle until its time runs out.
        case idle
        /// The expiration handler was called; the task ends at `expiresAt`, by the app ending
        /// it or, with `killOnExpiry`, by the system terminating the app.
        case expiring
    }

    struct Flags: OptionSet {
        var rawValue: UInt16
        /// What the app will report to `setTaskCompleted(success:)`.
        static let success = Flags(rawValue: 1 << 0)
        /// The app will never call `setTaskCompleted` / `endBackgroundTask`.
        static let forgetsCompletion = Flags(rawValue: 1 << 1)
        /// The app set an expiration handler.
        static let expirationHandler = Flags(rawValue: 1 << 2)
        static let requiresExternalPower = Flags(rawValue: 1 << 3)
        static let requiresNetworkConnectivity = Flags(rawValue: 1 << 4)
        /// It keeps its app running (a background transfer does not while the system carries it).
        static let holdsApp = Flags(rawValue: 1 << 5)
        /// Ended with its radio burst still going: reported when the tail ends.
        static let awaitingTail = Flags(rawValue: 1 << 7)
        /// Expiring, and the system terminates the app when the grace is over.
        static let killOnExpiry = Flags(rawValue: 1 << 8)
        static let started = Flags(rawValue: 1 << 9)
        /// Its deadline is the policy's time limit, not its own budget.
        static let policyLimit = Flags(rawValue: 1 << 10)
        /// The system terminated its app because it did not end this task in time.
        static let overran = Flags(rawValue: 1 << 11)
        /// Where it started: on the charger, on Wi-Fi, on cellular.
        static let startedCharging = Flags(rawValue: 1 << 12)
        static let startedOnWifi = Flags(rawValue: 1 << 13)
        static let startedOnCellular = Flags(rawValue: 1 << 14)
    }

    // What was asked for.
    var app: Int32
    /// The task model (refresh, processing), the finite-length work's index, the region
    /// crossing (place index times 2, plus 1 for an entry), or the lost task (redo).
    var source: Int32
    var kind: TaskKind
    var status = Status.waiting
    var phase = Phase.working
    var outcome: TaskOutcome?
    var rejection: SubmitError?
    var expiration: ExpirationReason?
    var heldBy: HoldReason?
    var flags: Flags = [.expirationHandler]
    var submitted: SimInstant
    var earliestBegin: SimInstant
    /// CPU time the work takes once its transfers are done.
    var work: SimDuration
    var expirationResponse = SimDuration.zero
    var powerW: Double
    var cpuShare = 0.5
    var upBytes = 0.0
    var downBytes = 0.0

    // Running.
    var started = SimInstant.start
    /// When its time runs out: the budget, or for finite-length work the grant while the app
    /// is in the background; `distantFuture`: no deadline (in the foreground).
    var deadline = SimInstant.distantFuture
    /// When its transfer finishes (`distantFuture` while it waits for a connection); its
    /// start if it has none.
    var transferEnd = SimInstant.start
    /// When its work is done: `transferEnd` plus its CPU time (for a background transfer the
    /// system carries, `transferEnd`).
    var workEnd = SimInstant.distantFuture
    var expiresAt = SimInstant.start
    /// Since when its CPU draws power (`distantFuture`: it does not).
    var cpuSince = SimInstant.distantFuture
    var endedAt = SimInstant.start
    var cpuJ = 0.0
    /// The part of `cpuJ` and `radioJ` drawn while a charger was connected, and since when
    /// its CPU has drawn under the charger's present state (a plug or unplug splits it).
    var chargerJ = 0.0
    var cpuSegmentSince = SimInstant.distantFuture
    var cpuTime = SimDuration.zero
    /// Radio energy charged to it, and the part that is its share of tails.
    var radioJ = 0.0
    var tailJ = 0.0
    /// Bits its transfer had left when the task ended before it did.
    var leftUpBits = 0.0
    var leftDownBits = 0.0

    // Held while eligible: by what since when, the time held by each reason, and while the
    // policy holds it, its rule's number in `Decisions.reasonTokens` (-1: none).
    var heldSince = SimInstant.start
    var held = HoldTimes()
    var policyRule: Int8 = -1

    /// While waiting, its eligibility; while running, the end of its current phase.
    var timer: EventHandle?
    var monitorEvent: EventHandle?
    /// A mode session's next chunk.

    init(app: Int, source: Int, kind: TaskKind, submitted: SimInstant, earliestBegin: SimInstant, work: SimDuration, powerW: Double) {
        self.app = Int32(app)
        self.source = Int32(source)
        self.kind = kind
        self.submitted = submitted
        self.earliestBegin = earliestBegin
        self.work = work
        self.powerW = powerW
    }

    var appIndex: Int { Int(app) }
    var isRunning: Bool { status == .running }
    var isExpiring: Bool { phase == .expiring }
    var hasStarted: Bool { flags.contains(.started) }
    /// Whether its transfer is still queued or moving at `now`.
    func isTransferring(at now: SimInstant) -> Bool { phase == .working && now < transferEnd }
}
