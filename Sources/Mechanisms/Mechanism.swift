import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// A door into background time, declared once: its keys in an app profile's section and in
/// `system`, its random streams, the kinds of task it runs, and what it does when the person
/// opens or swipes away an app, under memory pressure, at its own events and when one of its
/// tasks ends.
///
/// Scenario files, `--set`, sweeps, fleets, `bgsim validate --print` and `bgsim mechanisms`
/// read the declaration; the run makes one instance per phone when an app declares the
/// mechanism's section, and nothing otherwise. Its tasks are tasks like any other: in
/// tasks.csv, apps.csv, the per-kind columns of runs.csv (`runs_<kind>`,
/// `background_energy_<kind>_j`) and the energy books. Adding one is a file here and its line
/// in ``MechanismRegistry/builtIn``; `ContinuedProcessing.swift` is the example.
package protocol Mechanism: AnyObject {
    /// The key of its section in an app profile and in `system`: lower case, digits and `_`.
    static var name: String { get }
    /// What it is, in one line, for `bgsim mechanisms`.
    static var summary: String { get }
    /// The keys of its section in an app profile, with their kinds, ranges, defaults and help.
    static var parameters: [PolicyParameterInfo] { get }
    /// Whether its section in an app profile is a list of entries, each with the keys of
    /// ``parameters`` (`background_work: [{begin: leave}, {begin: in_use}]`), not one mapping.
    static var isList: Bool { get }
    /// The keys of its section in `system` (phone-wide rules), likewise.
    static var systemParameters: [PolicyParameterInfo] { get }
    /// Its random streams, per app that declares its section: stream `app.<app>.<name>`. Only
    /// it draws them (debug builds check).
    static var streams: [String] { get }
    /// Whether it draws from the app's own stream (`app.<app>`), as a mechanism an app uses
    /// instead of BGTaskScheduler does; none other may (debug builds check).
    static var drawsAppStream: Bool { get }
    /// The kinds of task it runs, after the built-in kinds in ``TaskKind/allCases``.
    static var kinds: [TaskKind.Traits] { get }
    /// Errors its submissions may fail with, after BGTaskScheduler's in ``SubmitError/allCases``.
    static var rejections: [SubmitError.Name] { get }
    /// Reasons it may call its tasks' expiration handlers for, after the built-in ones in
    /// ``ExpirationReason/allCases``: lower case, digits and `_`.
    static var expirationReasons: [String] { get }

    /// Whether a run of `setup` needs the mechanism: by default, when an app has its section.
    static func isUsed(by setup: PhoneSetup) -> Bool
    /// The run's calls it implements, of those made to every mechanism in use: the run makes
    /// only these, so a run pays nothing for the others. By default all of them.
    static var hooks: MechanismHooks { get }

    /// The mechanism for one phone's run: `apps` holds each app's section (`nil` where the app
    /// has none), `system` the phone-wide one.
    init(apps: [MechanismValues?], system: MechanismValues)

    /// The run begins: the world's first events are being scheduled.
    func start<H: MechanismHost & ~Copyable>(_ host: inout H)
    /// What the system's gates read may have changed: the charger, the battery level, the
    /// network, the person opening or leaving an app.
    func gatesChanged<H: MechanismHost & ~Copyable>(_ host: inout H)
    /// The person opened app `app` (it is now in the foreground).
    func appOpened<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H)
    /// The person launched app `app` and will use it until `until` (a call may hold the
    /// foreground meanwhile).
    func personLaunched<H: MechanismHost & ~Copyable>(_ app: Int, until: SimInstant, _ host: inout H)
    /// App `app` entered the background as the person left it (`applicationDidEnterBackground`),
    /// before it submits the requests it registered for that and before ``appLeft(_:swiped:_:)``.
    func appEnteredBackground<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H)
    /// The person left app `app`, for the background, or `swiped` away in the app switcher
    /// (it is about to end; nothing it starts would go on).
    func appLeft<H: MechanismHost & ~Copyable>(_ app: Int, swiped: Bool, _ host: inout H)
    /// The person swiped app `app` away (its process has ended).
    func appSwipedAway<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H)
    /// The person left place `left` and/or arrived at `entered` (places of the network model).
    func placeChanged<H: MechanismHost & ~Copyable>(left: String?, entered: String?, _ host: inout H)
    /// The system is short of memory: it is about to end a suspended app.
    func pressure<H: MechanismHost & ~Copyable>(_ host: inout H)
    /// An event it scheduled (``MechanismHost/schedule(_:at:)``) came, with its payload.
    func event<H: MechanismHost & ~Copyable>(_ payload: Int, _ host: inout H)
    /// The policy started its request `task` (one of a `.scheduled` kind it made with
    /// ``MechanismHost/request(app:kind:source:work:upBytes:downBytes:powerW:earliestBegin:success:forgetsCompletion:)``).
    func taskStarted<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H)
    /// Its task `task` ended with `outcome`.
    func taskEnded<H: MechanismHost & ~Copyable>(_ task: Int, _ outcome: TaskOutcome, _ host: inout H)
    /// The identifier of its task `task` of app `app`, submitted with `source`.
    func identifier(app: Int, source: Int) -> String

    /// Whether it is told of every task of app `app`, whatever its kind, as it begins and ends
    /// (state preservation): asked once, as the run starts.
    func observesTasks(of app: Int) -> Bool
    /// A task of an app it observes begins running, before its end is planned: work added
    /// now (``MechanismHost/addWork(_:_:)``) is part of it.
    func anyTaskBegins<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H)
    /// A running task of an app it observes ended; `resultReady`: it completed its work (not
    /// expired, killed, or done without calling its completion).
    func anyTaskEnded<H: MechanismHost & ~Copyable>(_ task: Int, resultReady: Bool, _ host: inout H)
    /// App `app` came to the foreground, for the person or a call's end.
    func appEnteredForeground<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H)
    /// App `app`'s process started (for the person or for background work), its identifiers
    /// registered.
    func processStarted<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H)
    /// App `app`'s process ended for `cause`; its running tasks have ended.
    func processEnded<H: MechanismHost & ~Copyable>(_ app: Int, cause: LifecycleCause, _ host: inout H)
}

extension Mechanism {
    /// No phone-wide keys unless it declares some.
    package static var systemParameters: [PolicyParameterInfo] { [] }
    /// A mapping.
    package static var isList: Bool { false }
    /// Every call.
    package static var hooks: MechanismHooks { .all }
    /// No errors of its own.
    package static var rejections: [SubmitError.Name] { [] }
    /// No expiration reasons of its own.
    package static var expirationReasons: [String] { [] }
    /// Streams of its own only.
    package static var drawsAppStream: Bool { false }
    /// When an app has its section.
    package static func isUsed(by setup: PhoneSetup) -> Bool { setup.apps.contains { $0.hasSection(name) } }
    /// Nothing at the start.
    package func start<H: MechanismHost & ~Copyable>(_ host: inout H) {}
    /// Nothing when the gates' inputs change.
    package func gatesChanged<H: MechanismHost & ~Copyable>(_ host: inout H) {}
    /// Nothing on an open.
    package func appOpened<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {}
    /// Nothing at a launch.
    package func personLaunched<H: MechanismHost & ~Copyable>(_ app: Int, until: SimInstant, _ host: inout H) {}
    /// Nothing as the app enters the background.
    package func appEnteredBackground<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {}
    /// Nothing on a leave.
    package func appLeft<H: MechanismHost & ~Copyable>(_ app: Int, swiped: Bool, _ host: inout H) {}
    /// Nothing on a swipe.
    package func appSwipedAway<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {}
    /// Nothing when the person moves.
    package func placeChanged<H: MechanismHost & ~Copyable>(left: String?, entered: String?, _ host: inout H) {}
    /// Nothing under pressure.
    package func pressure<H: MechanismHost & ~Copyable>(_ host: inout H) {}
    /// Nothing: it schedules no events.
    package func event<H: MechanismHost & ~Copyable>(_ payload: Int, _ host: inout H) {}
    /// Nothing when the policy starts one of its requests.
    package func taskStarted<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H) {}
    /// No app's tasks.
    package func observesTasks(of app: Int) -> Bool { false }
    /// Nothing as a task begins.
    package func anyTaskBegins<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H) {}
    /// Nothing as a task ends.
    package func anyTaskEnded<H: MechanismHost & ~Copyable>(_ task: Int, resultReady: Bool, _ host: inout H) {}
    /// Nothing in the foreground.
    package func appEnteredForeground<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {}
    /// Nothing at a process's start.
    package func processStarted<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {}
    /// Nothing at a process's end.
    package func processEnded<H: MechanismHost & ~Copyable>(_ app: Int, cause: LifecycleCause, _ host: inout H) {}
    /// Nothing at a task's end.
    package func taskEnded<H: MechanismHost & ~Copyable>(_ task: Int, _ outcome: TaskOutcome, _ host: inout H) {}
}

/// What a mechanism may see and do of the phone's run: a narrow view, so that the state it
/// touches is its own and the run's parts keep theirs.
package protocol MechanismHost: ~Copyable {
    /// The simulated time now.
    var now: SimInstant { get }
    /// After the horizon: no new work begins.
    var isDraining: Bool { get }
    /// The end of the simulated time: no new work arrives from then on.
    var horizon: SimInstant { get }
    /// The scenario's phone, apps, settings and system rules, as given (read only).
    var scenario: PhoneSetup { get }
    /// Whether the phone is on.
    var phoneIsOn: Bool { get }
    /// Whether Low Power Mode is on.
    var lowPowerMode: Bool { get }
    /// Whether a charger is powering the phone.
    var isCharging: Bool { get }
    /// The battery's charge, a fraction of its capacity.
    var charge: Double { get }
    /// The connection the phone uses now: Wi-Fi, cellular or none.
    var connection: NetworkKind { get }
    /// Whether Background App Refresh lets app `app` run in the background (the phone's
    /// setting and the app's own switch).
    func backgroundAppRefresh(_ app: Int) -> Bool
    /// App `app`'s place in the life cycle.
    func appState(_ app: Int) -> AppState
    /// Whether the person swiped app `app` away and has not opened it since.
    func isSwipedAway(_ app: Int) -> Bool
    /// Whether app `app`'s `UIBackgroundModes` has `mode` (no list: every mode its work needs).
    func declares(_ app: Int, _ mode: UIBackgroundMode) -> Bool
    /// App `app`'s CPU power in the background, in watts: a task's power unless it says otherwise.
    func cpuPowerW(_ app: Int) -> Double
    /// Whether app `app` exits instead of suspending (`UIApplicationExitsOnSuspend`): the
    /// system does not launch it in the background.
    func exitsOnSuspend(_ app: Int) -> Bool
    /// App `app`'s stream `stream` (one the mechanism declared), if the app declares its section.
    func stream<M: Mechanism>(_ app: Int, _ stream: DeclaredStream<M>) -> RandomStream?
    /// App `app`'s own stream, `app.<name>`, which its BGTaskScheduler requests draw from: for
    /// a mechanism an app uses instead of BGTaskScheduler, never with it (legacy fetch).
    func appStream(_ app: Int) -> RandomStream
    /// The app task `task` belongs to.
    func app(of task: Int) -> Int
    /// Whether app `app`'s `BGTaskSchedulerPermittedIdentifiers` allow `identifier` (an
    /// entry ending in `.*` allows every identifier under it; no list: its work's own).
    func permits(_ app: Int, _ identifier: String) -> Bool
    /// The share of task `task`'s work done, from 0 to 1: its transfer, then its CPU time.
    func progress(of task: Int) -> Double
    /// Whether task `task` is running.
    func isRunning(_ task: Int) -> Bool
    /// Task `task`'s kind.
    func kind(of task: Int) -> TaskKind
    /// Task `task`'s CPU work.
    func work(of task: Int) -> SimDuration
    /// The bytes task `task` sends and receives.
    func bytes(of task: Int) -> (up: Double, down: Double)
    /// The energy charged to task `task` so far, its CPU's and its radio's, in joules.
    func energyJ(of task: Int) -> Double
    /// Whether the system is carrying task `task` without its app (``carry(_:timeout:)``), not
    /// yet handed back.
    func isCarried(_ task: Int) -> Bool
    /// Calls the mechanism's ``Mechanism/event(_:_:)`` with `payload` (at least 0) at `time`,
    /// in the place `kind` gives it among what happens at that instant.
    @discardableResult mutating func schedule(_ payload: Int, at time: SimInstant, as kind: MechanismEvent.Kind) -> MechanismEvent
    /// The event will not come.
    mutating func cancel(_ event: MechanismEvent)
    /// A new task of app `app`, submitted now, not started: the work its CPU does, the bytes
    /// it moves first, and its power while it runs (``cpuPowerW(_:)``, plus a GPU's).
    ///
    /// `replacing`: the task it replaces, for the event log (end that one as `replaced`).
    mutating func submit(
        app: Int, kind: TaskKind, source: Int, work: SimDuration, upBytes: Double, downBytes: Double, powerW: Double, replacing: Int?
    ) -> Int
    /// A new request the policy decides on (`kind` is `.scheduled`), submitted now: it becomes
    /// eligible at `earliestBegin` and waits behind the same gates as a refresh or processing
    /// request; its handler reports `success`, or never calls its completion (`forgetsCompletion`).
    /// The mechanism hears when the policy starts it (``Mechanism/taskStarted(_:_:)``).
    mutating func request(
        app: Int, kind: TaskKind, source: Int, work: SimDuration, upBytes: Double, downBytes: Double, powerW: Double,
        earliestBegin: SimInstant, success: Bool, forgetsCompletion: Bool
    ) -> Int
    /// What task `task` needs, as policies and the outputs see it: external power, a network
    /// connection (`BGProcessingTaskRequest`'s two flags; a discretionary transfer's).
    mutating func setRequirements(_ task: Int, externalPower: Bool, network: Bool)
    /// Starts task `task` (of a `.systemCarried` kind) in the system, without its app: its data
    /// moves, within `timeout`; then the system launches or resumes the app in the background
    /// to handle it, for the kind's budget. Its app's process ending does not stop it, unless
    /// the phone shuts down.
    mutating func carry(_ task: Int, timeout: SimDuration)
    /// Task `task`, beginning (``Mechanism/anyTaskBegins(_:_:)``), has `work` more CPU time.
    mutating func addWork(_ task: Int, _ work: SimDuration)
    /// The completed result of task `task` of app `app`, which cost `energyJ`, is lost with
    /// the app's process (`lost_work` in the outputs).
    mutating func reportLost(_ task: Int, app: Int, energyJ: Double)
    /// App `app` calls `BGTaskScheduler.submit` for each of its tasks registered to submit on
    /// `trigger` (`extension`), with `earliestBeginDate` its `earliest_begin` from now.
    mutating func submitTasks(_ app: Int, on trigger: AppTask.Trigger)
    /// Task `task`'s handler never calls its completion (`setTaskCompleted`,
    /// `endBackgroundTask`): it runs until its time is up.
    mutating func forgetsCompletion(_ task: Int)
    /// Running task `task` moves more data, charged to it, as its radio serves it.
    mutating func transfer(_ task: Int, upBytes: Double, downBytes: Double)
    /// Starts task `task` now, for its kind's budget (none: no time limit); the system launches
    /// or resumes its app in the background if it is not running. A kind on the finite-length
    /// grant has no limit while its app is in the foreground, and in the background what is
    /// left of the grant the app got as the person left it (`backgroundTimeRemaining`).
    mutating func run(_ task: Int)
    /// The system calls running task `task`'s expiration handler for `reason`: the app ends
    /// it (`expired`) within its response time, or is terminated after the grace.
    mutating func expireTask(_ task: Int, _ reason: ExpirationReason)
    /// Ends task `task` with `outcome` (`rejected` with `rejection`).
    mutating func end(_ task: Int, _ outcome: TaskOutcome, rejection: SubmitError?)
}

extension MechanismHost where Self: ~Copyable {
    /// A new task that replaces none (see the requirement).
    package mutating func submit(
        app: Int, kind: TaskKind, source: Int, work: SimDuration, upBytes: Double, downBytes: Double, powerW: Double
    ) -> Int {
        submit(app: app, kind: kind, source: source, work: work, upBytes: upBytes, downBytes: downBytes, powerW: powerW, replacing: nil)
    }

    /// Calls the mechanism's ``Mechanism/event(_:_:)`` with `payload` at `time`, as new work
    /// arriving.
    @discardableResult package mutating func schedule(_ payload: Int, at time: SimInstant) -> MechanismEvent {
        schedule(payload, at: time, as: .arrival)
    }
}

/// The mechanisms scenario files may give sections, in the order their kinds follow the
/// built-in ones.
package enum MechanismRegistry {
    /// Every mechanism, one line each.
    package static var builtIn: [any Mechanism.Type] {
        [
            FiniteLengthWork.self,
            LegacyFetch.self,
            BackgroundTransfers.self,
            Extensions.self,
            StatePreservation.self,
            SilentPushes.self,
            Regions.self,
            BackgroundModes.self,
            ContinuedProcessing.self,
        ]
    }

    /// The mechanism named `name`, if there is one.
    package static func type(named name: String) -> (any Mechanism.Type)? { builtIn.first { $0.name == name } }

    /// Per declared kind (its index less the built-in kinds'), the index of its mechanism in
    /// ``builtIn``.
    package static let kindOwners: [Int] = builtIn.enumerated().flatMap { k, m in Array(repeating: k, count: m.kinds.count) }

    /// The mechanism's `k`th declared error.
    package static func rejection(_ mechanism: any Mechanism.Type, _ k: Int = 0) -> SubmitError {
        let before = builtIn.prefix { ObjectIdentifier($0) != ObjectIdentifier(mechanism) }.reduce(0) { $0 + $1.rejections.count }
        return SubmitError.allCases[SubmitError.builtIn.count + before + k]
    }

    /// The mechanism's `k`th declared expiration reason.
    package static func expirationReason(_ mechanism: any Mechanism.Type, _ k: Int = 0) -> ExpirationReason {
        let before = builtIn.prefix { ObjectIdentifier($0) != ObjectIdentifier(mechanism) }.reduce(0) { $0 + $1.expirationReasons.count }
        return ExpirationReason.allCases[ExpirationReason.builtIn.count + before + k]
    }

    /// The mechanism's `k`th declared kind.
    package static func kind(_ mechanism: any Mechanism.Type, _ k: Int = 0) -> TaskKind {
        let before = builtIn.prefix { ObjectIdentifier($0) != ObjectIdentifier(mechanism) }.reduce(0) { $0 + $1.kinds.count }
        return TaskKind.allCases[TaskKind.builtIn.count + before + k]
    }
}

/// A random stream a mechanism declares (``Mechanism/streams``), typed by the mechanism: each
/// mechanism keeps its streams `private`, so that only its own file draws from them.
package struct DeclaredStream<Owner: Mechanism>: Sendable {
    /// Its name: stream `app.<app>.<name>`.
    package let name: String
    /// `Owner`'s stream `name`.
    package init(_ name: String) { self.name = name }
}
