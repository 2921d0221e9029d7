import PhoneWorld
import SimEngine

/// What a policy may observe of the phone at a decision point: the present and the past,
/// never the future.
public struct DeviceState: Sendable {
    /// The instant of the decision.
    public var now: SimInstant
    /// State of charge in [0, 1].
    public var charge: Double
    /// Whether a charger is connected.
    public var isCharging: Bool
    /// The connection the phone has.
    public var network: NetworkKind = .wifi
    /// The connection's quality from 0 to 100 (`NetworkState.quality`).
    public var networkQuality: Double = 100
    /// Whether the current connection's radio is out of idle (promoting, transferring or in
    /// its tail), so work started now rides it without a promotion of its own.
    public var radioAwake = false
    /// Whether the person is using the phone (an app in the foreground, or a call).
    public var inUse = false
    /// Whether the person is in a phone call (also counts as in use).
    public var inCall = false
    /// Whether Low Power Mode is on (the system starts no discretionary work then).
    public var lowPowerMode = false
    /// When the phone was last in use (the end of the last foreground use or call); `now`
    /// while in use, `.start` if never.
    public var lastInUse: SimInstant = .start
    /// When the charger was last connected or removed (`.start` if never).
    public var powerChangedAt: SimInstant = .start
    /// Each app's use so far.
    public var usage = UsageHistory(apps: 0)

    /// A state with the given values and no history: never in use before, no charger change,
    /// no app use. Tests and hand-made decisions build states this way.
    @inlinable public init(
        now: SimInstant, charge: Double, isCharging: Bool, network: NetworkKind = .wifi,
        inUse: Bool = false, inCall: Bool = false, lowPowerMode: Bool = false
    ) {
        self.now = now
        self.charge = charge
        self.isCharging = isCharging
        self.network = network
        self.inUse = inUse
        self.inCall = inCall
        self.lowPowerMode = lowPowerMode
        if inUse { lastInUse = now }
    }

    /// Time since the phone was last in use; zero while it is.
    public var idleFor: SimDuration { inUse ? .zero : now - lastInUse }
}

/// The person's use of each app so far, as the system records it: what a usage predictor
/// learns from. The record may begin before the run (`since`): the person's history.
public struct UsageHistory: Sendable, Equatable {
    /// One app's record.
    public struct App: Sendable, Equatable {
        /// Start of every foreground use, in time order.
        public internal(set) var launches: [SimInstant] = []
        /// End of the last foreground use; `nil` if never used or in the foreground now.
        public internal(set) var lastLeft: SimInstant?
        /// Whether the app is in the foreground now.
        public internal(set) var inForeground = false
        /// The phone's screen-on time (`UsageHistory.screenOnTime`) when the app was last left.
        public internal(set) var screenOnAtLastLeft = SimDuration.zero
        /// Changes to this record so far (a launch or a leave): a reader that saw this many
        /// has seen the record as it is.
        public internal(set) var changes = 0
        /// An app never used.
        @inlinable public init() {}
    }
    /// Every app's record, indexed like the scenario's apps.
    public internal(set) var apps: [App]
    /// Launches recorded so far, over all apps: a reader that saw this many has nothing new.
    public internal(set) var launchCount = 0
    /// When the record begins: the run's start, or before it when the person has a history.
    public internal(set) var since = SimInstant.start
    /// Screen-on time (an app in the foreground, the scenario's or another) up to
    /// `screenOnSince`, or in all while the screen is off.
    @usableFromInline var screenOn = SimDuration.zero
    /// Since when the screen is on; `nil` while off.
    @usableFromInline var screenOnSince: SimInstant?

    /// The history of `count` apps, none used yet, beginning at `since`.
    public init(apps count: Int, since: SimInstant = .start) {
        apps = Array(repeating: App(), count: count)
        self.since = since
    }

    /// Time since the app was last used (zero while in the foreground); `nil` if never used.
    @inlinable public func sinceLastUse(_ app: Int, now: SimInstant) -> SimDuration? {
        let a = apps[app]
        if a.inForeground { return .zero }
        return a.lastLeft.map { now - $0 }
    }

    /// The screen's time on since the record began, at `now`.
    @inlinable public func screenOnTime(at now: SimInstant) -> SimDuration {
        screenOn + (screenOnSince.map { now - $0 } ?? .zero)
    }

    /// Screen-on time since the app was last used (zero while in the foreground); `nil` if
    /// never used. Android's standby buckets count it (docs/sources.md §9).
    @inlinable public func screenTimeSinceUse(_ app: Int, now: SimInstant) -> SimDuration? {
        let a = apps[app]
        if a.inForeground { return .zero }
        return a.lastLeft.map { _ in screenOnTime(at: now) - a.screenOnAtLastLeft }
    }

    package mutating func opened(_ app: Int, at time: SimInstant) {
        apps[app].launches.append(time)
        launchCount += 1
        apps[app].changes += 1
        apps[app].inForeground = true
    }

    package mutating func left(_ app: Int, at time: SimInstant) {
        guard apps[app].inForeground else { return }
        apps[app].inForeground = false
        apps[app].lastLeft = time
        apps[app].changes += 1
        apps[app].screenOnAtLastLeft = screenOnTime(at: time)
    }

    /// The screen came on (`true`) or went off at `time`.
    package mutating func screen(_ on: Bool, at time: SimInstant) {
        if on, screenOnSince == nil {
            screenOnSince = time
        } else if !on, let since = screenOnSince {
            screenOn += time - since
            screenOnSince = nil
        }
    }

    /// The record of `count` apps that `launches` (in time order, ending by the run's start)
    /// leave, beginning at `since`.
    package init(apps count: Int, since: SimInstant, launches: [AppLaunch]) {
        self.init(apps: count, since: since)
        for l in launches {
            guard let app = l.app else { continue }
            screen(true, at: l.start)
            opened(app, at: l.start)
            left(app, at: l.end)
            screen(false, at: l.end)
        }
    }
}

/// What a clairvoyant policy is shown before the run: this replication's exogenous world.
public struct FutureWorld: Sendable {
    /// The replication's charging sessions, network changes, launches, calls and pushes.
    public var timeline: WorldTimeline
    /// The end of the simulated span.
    public var horizon: SimInstant
    /// Per app, the bytes it fetches each time the person opens it (the radio will be awake
    /// then).
    public var launchDownBytes: [Double]
    /// The future of `timeline` until `horizon`.
    package init(timeline: WorldTimeline, horizon: SimInstant, launchDownBytes: [Double]) {
        self.timeline = timeline
        self.horizon = horizon
        self.launchDownBytes = launchDownBytes
    }
}

/// A request that has passed every gate the system enforces and may start now.
public struct EligibleTask: Sendable {
    /// The task, as `PolicyDecision.start` names it.
    public var id: TaskID
    /// The app that submitted it, as an index into the scenario's apps.
    public var app: Int
    /// Refresh, processing, legacy fetch, ...
    public var kind: TaskKind
    /// When the app submitted the request.
    public var submitted: SimInstant
    /// The request's `earliestBeginDate`.
    public var earliestBegin: SimInstant
    /// Whether a processing request requires external power (met when it is shown).
    public var requiresExternalPower = false
    /// Whether a processing request requires a network (met when it is shown).
    public var requiresNetworkConnectivity = false
    /// The system's copy of what holds it now and of the policy's reasons so far (the task's
    /// own record keeps the hold times), invisible to policies outside this module. A decision
    /// reads them for every eligible request: read from the task store, four lookups a
    /// request, they were a sixth of the ios policy's runs (perf); in a list beside this one,
    /// about 4% of a 30-day reference run's instructions (callgrind).
    package var heldBy: HoldReason?
    package var policyRule: Int8 = -1
    /// The policy's number (`PolicyHold.reason`) of the rule that holds it, while its
    /// `policyRule` is one the policy named (-1: none).
    package var policyReason: Int32 = -1
    /// The simulation's gate epoch when this request's gates were last checked (0: never).
    package var gatesCheckedAt: UInt32 = 0

    /// When it became eligible: `max(submitted, earliestBegin)`; latency counts from here.
    public var eligibleSince: SimInstant { max(submitted, earliestBegin) }

    /// A request as the system shows it to a policy.
    @inlinable public init(
        id: TaskID, app: Int, kind: TaskKind, submitted: SimInstant, earliestBegin: SimInstant,
        requiresExternalPower: Bool = false, requiresNetworkConnectivity: Bool = false
    ) {
        self.id = id
        self.app = app
        self.kind = kind
        self.submitted = submitted
        self.earliestBegin = earliestBegin
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
    }
}

/// Which eligible tasks to start.
public enum TaskSelection: Sendable, Equatable {
    /// None of them: hold every request.
    case none
    /// Every eligible request.
    case all
    /// These, each of which must be among the eligible tasks shown to the policy.
    case some([TaskID])
}

/// Why a policy holds one request: the rule that held it, by its number in the policy's
/// `holdReasons` (a number, not the token itself: a decision names a dozen holds, and a string
/// in each was a retain and a release for every one, callgrind).
public struct PolicyHold: Sendable, Equatable {
    /// The request held.
    public var id: TaskID
    /// The index in the policy's `holdReasons` of the rule that held it.
    public var reason: Int
    /// `id` is held for the rule `holdReasons[reason]`.
    public init(_ id: TaskID, _ reason: Int) {
        self.id = id
        self.reason = reason
    }
}

/// How long a request the policy starts may run: the system calls its expiration handler
/// when the limit is reached, if its own time has not run out first (Android's JobScheduler
/// stops a job when its app's quota runs out).
public struct PolicyTimeLimit: Sendable, Equatable {
    /// A request the decision starts.
    public var id: TaskID
    /// The most it may run.
    public var limit: SimDuration
    /// `id` may run at most `limit`.
    public init(_ id: TaskID, _ limit: SimDuration) {
        self.id = id
        self.limit = limit
    }
}

/// A policy's answer at a decision point.
public struct PolicyDecision: Sendable, Equatable {
    /// The requests to start now.
    public var start: TaskSelection
    /// When to ask the policy again even if nothing changes (strictly after now); `nil`: only
    /// on the next change.
    public var reconsiderAt: SimInstant?

    /// Why it holds the requests it does not start, as a short token (`doze`,
    /// `not_charging`, ...): written to `tasks.csv` for each request it held, unless `holds`
    /// names another reason for it. `nil`: the policy's name stands for the reason.
    public var reason: String?

    /// The rule that held each request whose reason is not `reason`, by its number in the
    /// policy's `holdReasons`.
    public var holds: [PolicyHold] = []

    /// Time limits of requests it starts, if any.
    public var timeLimits: [PolicyTimeLimit] = []

    /// A decision to start `start`, asking again at `reconsiderAt`, holding the rest for
    /// `reason`, or for the rule `holds` gives each.
    @inlinable public init(
        start: TaskSelection, reconsiderAt: SimInstant? = nil, reason: String? = nil, holds: [PolicyHold] = [],
        timeLimits: [PolicyTimeLimit] = []
    ) {
        self.start = start
        self.reconsiderAt = reconsiderAt
        self.reason = reason
        self.holds = holds
        self.timeLimits = timeLimits
    }

    /// Start every eligible request.
    @inlinable public static var startAll: PolicyDecision { PolicyDecision(start: .all) }
    /// Start nothing, and wait for the next change.
    @inlinable public static var wait: PolicyDecision { PolicyDecision(start: .none) }
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
///
/// A policy may keep state of its own (a predictor, budgets) and learns how each task
/// ended through `taskEnded`, as iOS learns energy use from its power log. Only a policy
/// that declares itself clairvoyant is shown the future (`foresee`), and results mark it as
/// a bound, not a deployable policy.
public protocol SchedulingPolicy {
    /// The rule's name (`eager`, `coalesce`, ...).
    var name: String { get }
    /// Whether the policy is shown the replication's future before the run. Default: false.
    static var isClairvoyant: Bool { get }
    /// Whether this policy is shown the future: `isClairvoyant`, unless the value holds a
    /// policy of another type (``DynamicPolicy``).
    var seesTheFuture: Bool { get }
    /// Called once before the run, only if `isClairvoyant`.
    mutating func foresee(_ future: FutureWorld)
    /// Which of `eligible` to start now, and when to be asked again.
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision
    /// A task ended (any task, in any final state), with its energy and times.
    mutating func taskEnded(_ record: TaskRecord)
    /// The rules a decision's `holds` name, by their numbers (`PolicyHold.reason`), as the
    /// short tokens `tasks.csv` shows. Default: none (a registered policy's are its
    /// declared `holdReasons`).
    var holdReasons: [String] { get }
}

extension SchedulingPolicy {
    /// Not clairvoyant: a deployable policy.
    public static var isClairvoyant: Bool { false }
    /// `isClairvoyant`.
    public var seesTheFuture: Bool { Self.isClairvoyant }
    /// Ignores the future (only a clairvoyant policy is shown it).
    public mutating func foresee(_ future: FutureWorld) {}
    /// Learns nothing from ended tasks.
    public mutating func taskEnded(_ record: TaskRecord) {}
    /// No rules named by number.
    public var holdReasons: [String] { [] }
}
