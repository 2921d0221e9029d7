import PhoneWorld
import SimEngine

/// One task of a run as the task store keeps it: what was asked for (drawn when it was
/// submitted), where it is, and what it used so far.
///
/// Plain values only (no strings, no arrays), so writing a field is a store and appending a
/// state copies no references; the request and the record the sink and the policy see are
/// made from it when needed (`TaskEnds.swift`). Its BGTaskScheduler identifier follows
/// from its kind, app and `source` (`identifier(of:)`).
///
/// Each part of the run owns its fields: they are a type declared in that part's file, whose
/// setters are `fileprivate`, so the compiler keeps who writes what. The few fields more than
/// one part changes are written only through this type's methods.
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

    /// What was asked for: submission's (`Submission.swift`).
    var asked: Asked
    /// Running: execution's (`Execution.swift`).
    var run = Run()
    /// Bits its transfer had left when it ended: the radios' (`Network.swift`).
    var left = LeftBits()
    /// Radio energy charged to it: the radios' books (`Power.swift`).
    var radio = RadioEnergy()
    /// How it ended: ends' (`TaskEnds.swift`).
    var end = Ending()
    /// What held it while eligible: the gates' and the policy's (`Decisions.swift`).
    var hold = Holding()

    // Written by more than one part, so only through the methods below, which name the change.
    /// While waiting, its eligibility; while running, the end of its current phase.
    private(set) var timer: EventHandle?
    private(set) var monitorEvent: EventHandle?
    /// When its transfer finishes (`distantFuture` while it waits for a connection); its
    /// start if it has none.
    private(set) var transferEnd = SimInstant.start
    /// When its work is done: `transferEnd` plus its CPU time (for a background transfer the
    /// system carries, `transferEnd`).
    private(set) var workEnd = SimInstant.distantFuture
    /// The part of `cpuJ` and `radioJ` drawn while a charger was connected.
    private(set) var chargerJ = 0.0
    /// What the app will report to `setTaskCompleted(success:)`.
    private(set) var succeeds = false
    private(set) var status = Status.waiting

    init(_ asked: Asked) { self.asked = asked }

    mutating func becameEligible() { status = .eligible }
    mutating func began() { status = .running }
    mutating func ended() { status = .ended }
    mutating func setTimer(_ handle: EventHandle?) { timer = handle }
    mutating func setMonitor(_ handle: EventHandle?) { monitorEvent = handle }
    mutating func setTransferEnd(_ time: SimInstant) { transferEnd = time }
    mutating func setWorkEnd(_ time: SimInstant) { workEnd = time }
    mutating func addChargerEnergy(_ joules: Double) { chargerJ += joules }
    mutating func reports(success: Bool) { succeeds = success }

    // Reads, whichever part owns the field.
    var app: Int32 { asked.app }
    var source: Int32 { asked.source }
    var kind: TaskKind { asked.kind }
    var submitted: SimInstant { asked.submitted }
    var earliestBegin: SimInstant { asked.earliestBegin }
    /// CPU time the work takes once its transfers are done: asked for, and archiving added.
    var work: SimDuration { asked.work + run.addedWork }
    var expirationResponse: SimDuration { asked.expirationResponse }
    var powerW: Double { asked.powerW }
    var cpuShare: Double { asked.cpuShare }
    var upBytes: Double { asked.upBytes }
    var downBytes: Double { asked.downBytes }
    var flags: Flags { asked.flags.union(run.flags).union(end.flags).union(succeeds ? .success : []) }
    var phase: Phase { run.phase }
    var started: SimInstant { run.started }
    var deadline: SimInstant { run.deadline }
    var expiresAt: SimInstant { run.expiresAt }
    var cpuSince: SimInstant { run.cpuSince }
    var cpuJ: Double { run.cpuJ }
    var cpuSegmentSince: SimInstant { run.cpuSegmentSince }
    var cpuTime: SimDuration { run.cpuTime }
    var expiration: ExpirationReason? { run.expiration }
    var radioJ: Double { radio.radioJ }
    var tailJ: Double { radio.tailJ }
    var leftUpBits: Double { left.upBits }
    var leftDownBits: Double { left.downBits }
    var outcome: TaskOutcome? { end.outcome }
    var rejection: SubmitError? { end.rejection }
    var endedAt: SimInstant { end.endedAt }
    var heldBy: HoldReason? { hold.heldBy }
    var heldSince: SimInstant { hold.heldSince }
    var held: HoldTimes { hold.held }
    var policyRule: Int8 { hold.policyRule }

    var appIndex: Int { Int(app) }
    fileprivate var isRunning: Bool { status == .running }
    var isExpiring: Bool { phase == .expiring }
    var hasStarted: Bool { flags.contains(.started) }
    /// Whether its transfer is still queued or moving at `now`.
    func isTransferring(at now: SimInstant) -> Bool { phase == .working && now < transferEnd }
}
