import PhoneWorld
import SimEngine
import SimRandom

/// Everything that defines the simulated phone, its person and its apps, apart from the policy.
public struct PhoneSetup: Equatable, Sendable {
    /// Simulated time span, from midnight of day 0 (a Monday).
    public var duration: SimDuration = .days(7)
    /// The battery and its model.
    public var battery = BatteryParameters()
    /// Power of the components other than the radios.
    public var power = PowerParameters()
    /// When the person charges (and, under Optimized Battery Charging, the unplug time the
    /// phone predicts), unless `chargingTrace` replays the sessions.
    public var charging = ChargingHabit()
    /// Charging sessions replayed from a trace, instead of drawn from `charging`.
    public var chargingTrace: [ChargingSession]?
    /// How fast a connected charger fills the battery.
    public var charger = ChargingCurve()
    /// Where the phone is connected and with which radios, unless `networkTrace` replays the
    /// connection (the radios still come from `network`).
    public var network = NetworkEnvironment()
    /// Connection changes replayed from a trace, instead of drawn from `network`.
    public var networkTrace: [NetworkChange]?
    /// How the person uses the phone, unless `peopleTrace` replays launches, calls and purges
    /// (the Low Power Mode answer still comes from `people`).
    public var people = PeopleParameters.absent
    /// Launches, calls and purges replayed from a trace, instead of drawn from `people`.
    public var peopleTrace: PeopleTimeline?
    /// Silent pushes the apps' servers send, unless drawn from each app's `silentPushes`.
    public var pushTrace: [PushArrival]?
    /// Background App Refresh and Low Power Mode.
    public var settings = Settings()
    /// The apps, in the order their indices name them.
    public var apps: [AppParameters] = []
    /// The limits iOS sets on background work.
    public var system = SystemRules()
    /// A bench load drawn besides the components while the phone is on; none by default.
    public var load = LoadProfile.none

    /// A week with nobody using the phone, no apps and the default phone.
    public init() {}
}

/// The limits iOS sets on background work (docs/sources.md §2-3), apart from the fixed ones in
/// `BGTaskScheduler` (pending limits).
public struct SystemRules: Equatable, Sendable {
    /// Time a refresh task may run before it expires: "up to 30 seconds" (docs/sources.md §2).
    public var refreshBudget: SimDuration = .seconds(30)
    /// The time granted to each refresh, in seconds, drawn per refresh and at most
    /// `refreshBudget`; `nil`: every refresh gets the whole budget. Developers see grants
    /// vary, some expiring within seconds, a report saw 15 s (docs/sources.md §2-3
    /// [secondary]); no distribution is published, so the default, a log-normal with median
    /// 15 s and sigma 0.8 (about 9% under 5 s, 19% the whole 30 s), is an assumption (§12).
    public var refreshGrant: Distribution? = .lognormal(median: 15, sigma: 0.8)
    /// Time a processing task may run: "can run for minutes" (docs/sources.md §2); 5 minutes is an
    /// assumption within "several minutes".
    public var processingBudget: SimDuration = .minutes(5)
    /// Finite-length background time `beginBackgroundTask` grants (docs/sources.md §3).
    public var backgroundTime: SimDuration = BackgroundTimeGrant.ios13.duration
    /// Time an app that left the foreground with no work stays running in the background
    /// before the system suspends it: "a very short time (less than 5 seconds)" (docs/sources.md
    /// §1); 2 s is an assumption within it (§12).
    public var suspensionDelay: SimDuration = .seconds(2)
    /// Time the system waits, after calling an expiration handler, for the app to end the
    /// task before terminating the app: "a couple of seconds" (docs/sources.md §3), read as 2 s.
    public var expirationGrace: SimDuration = .seconds(2)
    /// The CPU monitor on battery (docs/sources.md §2, [secondary]); `nil`: off.
    public var cpuMonitor: CPUMonitor? = CPUMonitor()
    /// Time a legacy background fetch handler has: 30 s (docs/sources.md §2).
    public var fetchBudget: SimDuration = .seconds(30)
    /// Time the app has for a silent push, and for handling a finished background transfer:
    /// 30 s, as for `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
    /// (Apple, "Pushing background updates to your App"; the figure).
    public var wakeBudget: SimDuration = .seconds(30)
    /// Silent pushes the system delivers to one app per hour; the newest of the rest is held
    /// until the budget allows. Apple: "don't try to send more than two or three
    /// notifications per hour" (same page); the exact throttle is not published.
    public var pushesPerHour = 3
    /// Time the app has to handle a geofence crossing: about 10 s (Apple, Location and Maps
    /// Programming Guide, [secondary]).
    public var regionBudget: SimDuration = .seconds(10)

    /// iOS's limits as docs/sources.md §2-3 give them, the assumptions of §12 elsewhere.
    public init() {}
}

/// On battery, the system kills a processing task that keeps more than `threshold` of a core
/// busy for `window` (docs/sources.md §2, [secondary]). Tasks that require external power are exempt.
public struct CPUMonitor: Equatable, Sendable {
    /// Share of a core above which processing work is killed.
    public var threshold = 0.8
    /// How long the work may stay above it.
    public var window: SimDuration = .seconds(60)
    /// 80% of a core for 60 s.
    public init() {}
}

/// The random streams of one replication, one per exogenous source (docs/sources.md §11), so that
/// within a replication every policy sees the same world.
///
/// Streams are named `charger`, `network`, `people`, `purges`, `low-power`, and per app
/// `app.<name>` (its tasks' work, in submission order) and `app.<name>.leave` (the
/// finite-length work it begins each time the person leaves it), so adding an app or
/// changing one source's parameters does not change the numbers any other source draws.
public struct WorldStreams {
    /// Stream `charger`: charging sessions.
    public var charger: RandomStream
    /// Stream `network`: connection changes and dead spots.
    public var network: RandomStream
    /// Stream `people`: sleep, sessions, launches and calls.
    public var people: RandomStream
    /// Stream `purges`: memory-pressure purges.
    public var purges: RandomStream
    /// One draw per Low Power Mode prompt, in prompt order.
    public var lowPower: RandomStream
    /// Per app, stream `app.<name>`: its tasks' work, in submission order.
    public var apps: [RandomStream]
    /// Per app, stream `app.<name>.leave`: the finite-length work it begins on leaving.
    public var appLeave: [RandomStream]
    /// Per app with work begun in use, `app.<name>.use`: that work, launch by launch.
    public var appUse: [RandomStream?]
    /// Per app whose extensions submit tasks, `app.<name>.extension`: when they run.
    public var appExtension: [RandomStream?]
    /// Per app, for the mechanisms it declares (else `nil`): `app.<name>.mode` (sessions),
    /// `app.<name>.push` (its server's pushes), `app.<name>.transfer` (background
    /// transfers), `app.<name>.region` (crossings' work), `app.<name>.archive` (state
    /// preservation). This one: `app.<name>.mode`.
    public var appMode: [RandomStream?]
    /// Per app, `app.<name>.push`.
    public var appPush: [RandomStream?]
    /// Per app, `app.<name>.transfer`.
    public var appTransfer: [RandomStream?]
    /// Per app, `app.<name>.region`.
    public var appRegion: [RandomStream?]
    /// Per app, `app.<name>.archive`.
    public var appArchive: [RandomStream?]
    /// Stream `interruptions`, when the person has any: Notification Centre and declined
    /// calls over the app in use.
    public var interruptions: RandomStream?
    /// Stream `grants`, when refresh grants are drawn (`SystemRules.refreshGrant`): one draw
    /// per refresh, in start order.
    public var grants: RandomStream?

    /// The streams of `replication` of `point` under `masterSeed`, for the apps of `setup`.
    public init(
        setup: PhoneSetup, masterSeed: UInt64, point: UInt64 = 0, replication: UInt64,
        generator: GeneratorKind = .mt19937
    ) throws(RandomStreamError) {
        func stream(_ name: String) throws(RandomStreamError) -> RandomStream {
            try RandomStream(
                StreamID(masterSeed: masterSeed, point: point, replication: replication, name: name),
                kind: generator)
        }
        charger = try stream("charger")
        network = try stream("network")
        people = try stream("people")
        purges = try stream("purges")
        lowPower = try stream("low-power")
        var apps: [RandomStream] = [], leave: [RandomStream] = []
        var mode: [RandomStream?] = [], push: [RandomStream?] = [], transfer: [RandomStream?] = []
        var region: [RandomStream?] = [], archive: [RandomStream?] = [], use: [RandomStream?] = []
        var ext: [RandomStream?] = []
        func optional(_ declared: Bool, _ name: String) throws(RandomStreamError) -> RandomStream? {
            declared ? try stream(name) : nil
        }
        for app in setup.apps {
            apps.append(try stream("app.\(app.name)"))
            leave.append(try stream("app.\(app.name).leave"))
            use.append(try optional(app.backgroundWork.contains { $0.begin == .inUse }, "app.\(app.name).use"))
            ext.append(try optional(app.extensionRunsPerDay > 0 && app.tasks.contains { $0.submitOn.contains(.extension) }, "app.\(app.name).extension"))
            mode.append(try optional(app.backgroundMode != nil, "app.\(app.name).mode"))
            push.append(try optional(app.silentPushes != nil, "app.\(app.name).push"))
            transfer.append(try optional(app.backgroundTransfers != nil, "app.\(app.name).transfer"))
            region.append(try optional(app.regions != nil, "app.\(app.name).region"))
            let p = app.statePreservation.archiveProbability
            archive.append(try optional(p > 0 && p < 1, "app.\(app.name).archive"))
        }
        self.apps = apps
        self.appLeave = leave
        self.appUse = use
        self.appExtension = ext
        self.appMode = mode
        self.appPush = push
        self.appTransfer = transfer
        self.appRegion = region
        self.appArchive = archive
        self.grants = setup.system.refreshGrant == nil ? nil : try stream("grants")
        self.interruptions = setup.people.interruptionsPerHour > 0 ? try stream("interruptions") : nil
    }
}

/// The exogenous world of one replication (or its traces): the same for every policy.
///
/// Charging, the network and purges are drawn before the run. The person's launches, calls
/// and interruptions are drawn a week at a time as the run goes (`launch(_:)`, `call(_:)`,
/// `interruption(_:)` draw what they need; `forget` drops what is past), so that memory does
/// not grow with the horizon; `whole` draws them all at once, for a policy that sees the
/// future and for tools. The numbers are the same either way.
///
/// `@unchecked Sendable`: the generators draw from the run's own streams, used by the one
/// thread that runs it; a timeline that crosses threads (`FutureWorld`) is drawn whole.
public struct WorldTimeline: @unchecked Sendable {
    /// Charging sessions, in time order.
    public var charging: [ChargingSession]
    /// Connection changes, in time order.
    public var network: [NetworkChange]
    /// Sleep, launches, calls, purges and interruptions: all of them, or the window drawn and
    /// not yet forgotten (its first launch, call and interruption are `launchBase`,
    /// `callBase` and `interruptionBase` of the run's).
    public var people: PeopleTimeline
    /// Silent pushes from a trace, in time order (drawn ones come as the run goes).
    public var pushes: [PushArrival]
    var days: PeopleDays?
    var drawnUntil = SimInstant.start
    let horizon: SimInstant
    let interruptionRate: Double, interruptionMean: SimDuration
    let interruptionStream: RandomStream?
    var launchBase = 0, callBase = 0, interruptionBase = 0
    /// The launches before the horizon, counted as they are drawn: the run's totals.
    var launchHours: LaunchHours
    var launchesBeforeHorizon = 0, sessionsBeforeHorizon = 0
    /// Whether the person is drawn whole (else sleep and session starts are dropped once
    /// counted).
    let whole: Bool

    /// The world `setup` describes, drawn from `streams` (or taken from its traces); the
    /// person whole, or (`whole: false`) a week at a time as the run asks.
    public init(setup: PhoneSetup, streams: WorldStreams, whole: Bool = true) {
        horizon = SimInstant.after(setup.duration)
        charging = setup.chargingTrace ?? setup.charging.sessions(until: horizon, stream: streams.charger)
        network = setup.networkTrace ?? setup.network.changes(until: horizon, stream: streams.network)
        // Drawn pushes come one at a time as the run goes (`serverPush`); a trace is replayed.
        pushes = setup.pushTrace ?? []
        interruptionRate = setup.people.interruptionsPerHour
        interruptionMean = setup.people.interruptionMean
        interruptionStream = streams.interruptions
        launchHours = LaunchHours(apps: setup.apps.count)
        self.whole = whole
        if let trace = setup.peopleTrace {
            people = trace
            people.interruptions = []
        } else {
            people = PeopleTimeline()
            var purges = PurgeTimes(setup.people, until: horizon, stream: streams.purges)
            while let p = purges.next() { people.purges.append(p) }
            days = PeopleDays(
                setup.people, until: horizon, appWeights: setup.apps.map(\.usageWeight), habits: setup.apps.map(\.habit),
                people: streams.people)
        }
        counted(from: 0, sessionsFrom: 0)
        if whole { drawStretch(through: .after(.days(36_600))) } else { drawStretch(through: .after(.days(7))) }
    }

    /// Draws the person's days that begin before `time`, with their interruptions, and counts
    /// their launches.
    mutating func drawStretch(through time: SimInstant) {
        guard var d = days, !d.isFinished else { return }
        let launchesBefore = people.launches.count, sessionsBefore = people.sessionStarts.count
        d.draw(through: time, into: &people)
        days = d
        drawnUntil = time
        counted(from: launchesBefore, sessionsFrom: sessionsBefore)
    }

    /// Counts launches and sessions from these local indices on, and draws the interruptions
    /// of those launches.
    mutating func counted(from first: Int, sessionsFrom firstSession: Int) {
        for launch in people.launches[first...] where launch.start < horizon {
            launchHours.add(launch)
            launchesBeforeHorizon += 1
        }
        for k in people.sessionStarts[firstSession...] {
            let local = k - launchBase
            if local < people.launches.count, people.launches[local].start < horizon { sessionsBeforeHorizon += 1 }
        }
        if let stream = interruptionStream {
            people.interruptions += PeopleTimeline.drawInterruptions(
                of: people.launches[first...], perHour: interruptionRate, mean: interruptionMean, stream: stream)
        }
        if !whole {
            people.sessionStarts.removeAll(keepingCapacity: true)
            people.awake.removeAll(keepingCapacity: true)
        }
    }

    /// Launch `i` of the run, drawing more days if it is not drawn yet; `nil` past the last.
    mutating func launch(_ i: Int) -> AppLaunch? {
        while i - launchBase >= people.launches.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - launchBase < people.launches.count ? people.launches[i - launchBase] : nil
    }

    /// Launch `i`, already drawn.
    func drawnLaunch(_ i: Int) -> AppLaunch { people.launches[i - launchBase] }

    /// Call `i`, drawing more days if needed; `nil` past the last.
    mutating func call(_ i: Int) -> Call? {
        while i - callBase >= people.calls.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - callBase < people.calls.count ? people.calls[i - callBase] : nil
    }

    /// Interruption `i`, drawing more days if needed; `nil` past the last.
    mutating func interruption(_ i: Int) -> Interruption? {
        while i - interruptionBase >= people.interruptions.count, let d = days, !d.isFinished {
            drawStretch(through: drawnUntil + .days(7))
        }
        return i - interruptionBase < people.interruptions.count ? people.interruptions[i - interruptionBase] : nil
    }

    /// Interruption `i`, already drawn.
    func drawnInterruption(_ i: Int) -> Interruption { people.interruptions[i - interruptionBase] }

    /// Drops launches before `launch`, calls before `call` and interruptions before
    /// `interruption`, a few thousand at a time, when the person is drawn as the run goes.
    mutating func forget(launchesBefore launch: Int? = nil, callsBefore call: Int? = nil, interruptionsBefore interruption: Int? = nil) {
        guard days != nil else { return }
        if let launch, launch - launchBase >= 4096 {
            people.launches.removeFirst(launch - launchBase)
            launchBase = launch
        }
        if let call, call - callBase >= 1024 {
            people.calls.removeFirst(call - callBase)
            callBase = call
        }
        if let interruption, interruption - interruptionBase >= 1024 {
            people.interruptions.removeFirst(interruption - interruptionBase)
            interruptionBase = interruption
        }
    }
}

/// The states the battery levels that matter depend on (which levels, and whether they are
/// approached), besides the battery itself.
struct BatteryStates: Equatable {
    var isOn, isCharging, holding, lowPower: Bool
    /// Low Power Mode prompt levels offered, by bit.
    var prompted: UInt64
}

/// What the next battery level depends on besides the battery itself.
struct BatteryPlan: Equatable {
    var netW: Double
    var states: BatteryStates
}

/// What the system's gates read besides each request's fixed fields: while it is unchanged,
/// every request's gates give the same answer.
struct GateKey: Equatable {
    var phone: UInt8
    var appChanges: Int
}

/// While the battery is far from every level that matters: no level can be reached before
/// `until` while the load stays at most `maxLoadW` and the states stay the same.
struct BatteryWatch {
    var until: SimInstant
    var maxLoadW: Double
    var states: BatteryStates
}

/// Simulates one phone under one policy for one replication.
///
/// The loop owns the world's state (battery, charger, radios, the person's use, settings,
/// apps and their tasks), enforces the rules iOS enforces (BGTaskScheduler, the app life
/// cycle, budgets and expiration, the gates), asks the policy at decision points which of
/// the allowed requests to start, and reports to a metrics sink. It is generic over the
/// policy and the sink so that both are specialised, not called through existentials, in
/// the hot loop.
///
/// Energy is integrated exactly: every component's power is constant between events, and
/// every instant at which one changes (a radio's phase, the battery reaching a level that
/// matters) is itself an event, rescheduled whenever the load changes.
///
/// A simulation cannot be copied (`~Copyable`): it is made, run and read. Its task store owns
/// its buffer outright, with no copy-on-write check per write (`TaskStore`).
public struct PhoneSimulation<Policy: SchedulingPolicy, Sink: MetricsSink>: ~Copyable {
    enum Event {
        case plugIn, unplug
        case eligible(TaskID)
        /// The running task reached the end of its current phase: its work, its time, or its
        /// expiration handler.
        case taskEnd(TaskID)
        /// The CPU monitor's window for a running task passed on battery.
        case cpuMonitor(TaskID)
        /// The battery reached a level that was being waited for (empty, boot level, a level
        /// of the charging curve, a Low Power Mode level).
        case batteryLevel
        /// The battery may be near such a level again: time to compute when it reaches it.
        /// Nothing in the world happens at this instant (`BatteryWatch`).
        case batteryWatchEnded
        /// Optimized Battery Charging stops holding, to finish by the predicted unplug.
        case optimizedRelease
        case policyWake
        /// Index into the timeline's network changes, launches, calls and purges.
        case network(Int)
        case launch(Int), leave(Int)
        case call(Int), callEnd(Int)
        case purge(Int)
        /// Radio `Radio.rawValue` reached its next state transition.
        case radio(Int)
        /// Index into the timeline's silent pushes (a trace).
        case push(Int)
        /// App `Int`'s server's next push, drawn as the run goes.
        case serverPush(Int)
        /// An app's push budget has room again.
        case pushRelease(Int)
        /// A continuous-mode session fetches its next chunk.
        case modeChunk(TaskID)
        /// The bench load's step `Int` begins.
        case load(Int)
        /// App `Int`'s moments in the background after it left the foreground are over.
        case suspend(Int)
        /// Index into the timeline's interruptions: one begins, or ends.
        case interrupt(Int), interruptEnd(Int)
        /// Finite-length work drawn at a launch begins while the app is in use (key into
        /// `inUseWork`).
        case beginInUse(Int)
        /// One of app `Int`'s extensions runs and submits its tasks.
        case extensionRun(Int)
    }

    enum Status: Equatable {
        case waiting, eligible, running
        case ended(TaskOutcome)
    }

    /// Where a running task is.
    enum Phase: Equatable {
        /// Its transfers are queued or on the radio; its CPU runs.
        case transferring
        /// Computing until `workEnd`.
        case working
        /// Work done, but the app never said so: idle until its time runs out.
        case idle
        /// The expiration handler was called; the task ends at `until`, by the app ending it
        /// or, if `kill`, by the system terminating the app.
        case expiring(until: SimInstant, kill: Bool)
    }

    struct TaskState {
        var request: TaskRequest
        /// Index into the app's `tasks`; `nil` for finite-length work.
        var model: Int?
        var status: Status = .waiting
        var phase = Phase.transferring
        var rejection: SubmitError?
        var started: SimInstant?
        /// When its time runs out: the budget, or for finite-length work the grant while the
        /// app is in the background (`nil` while it is in the foreground).
        var deadline: SimInstant?
        var workEnd: SimInstant?
        /// Since when its CPU draws power, if it does.
        var cpuSince: SimInstant?
        var cpuJ = 0.0
        var cpuTime = SimDuration.zero
        /// Radio energy charged to it, and the part that is its share of tails.
        var radioJ = 0.0
        var tailJ = 0.0
        /// Bits its transfer had left when the task ended before it did.
        var leftUpBits = 0.0
        var leftDownBits = 0.0
        /// While eligible: what holds it now, since when, and the seconds held so far by
        /// each reason; the policy's reasons as bits of `policyReasonTokens`.
        var heldBy: HoldReason?
        var heldSince = SimInstant.start
        var held = HoldTimes()
        var policyReasons: UInt32 = 0
        var eligibleEvent: EventHandle?
        var endEvent: EventHandle?
        var monitorEvent: EventHandle?
        /// A mode session's next chunk.
        var chunkEvent: EventHandle?
        /// Whether the task keeps its app running (a background transfer does not while the
        /// system carries it out).
        var holdsApp = false
        /// State preservation: the app archives this work's result when it completes.
        var archives = true
        /// When it ended; whether it ended with its radio burst still going, and waits for
        /// the tail's end to know its share of it before it is reported.
        var endedAt = SimInstant.start
        var awaitingTail = false

        init(request: TaskRequest, model: Int?) {
            self.request = request
            self.model = model
        }
    }

    /// One app as the system sees it.
    struct AppRuntime {
        var life = AppLifecycle()
        var scheduler: BGTaskScheduler
        /// Tasks of this app running now, of any kind.
        var running = 0
        /// When it last entered the background, for the finite-length grant.
        var enteredBackground: SimInstant?
        /// Silent pushes delivered within the last hour, oldest first, and the newest one held.
        var pushDeliveries: [SimInstant] = []
        var heldPush: Int?
        var pushRelease: EventHandle?
        /// Results of completed background work not yet archived, and those lost with the
        /// process, to redo at the next launch.
        var unsaved: [LostWork] = []
        var lost: [LostWork] = []
        /// The running continuous-mode session, by task index.
        var modeSession: Int?
    }

    /// A result of background work the app holds in memory only.
    struct LostWork {
        var task: Int
        var work: SimDuration
        var upBytes, downBytes: Double
        var energyJ: Double
    }

    /// The phone's two radios, by index.
    enum Radio: Int { case wifi = 0, cellular = 1 }

    // Same-instant order: the world changes first, then work ends, then new work arrives,
    // and the policy's own timer last, so it sees the state after everything at that instant.
    static var worldPriority: EventPriority { .high }
    static var taskEndPriority: EventPriority { .normal }
    static var arrivalPriority: EventPriority { .low }
    static var policyPriority: EventPriority { .last }

    let setup: PhoneSetup
    var policy: Policy
    /// What the run records; read it after `run()`.
    public internal(set) var sink: Sink
    var streams: WorldStreams
    var world: WorldTimeline
    var sim: Simulator<Event>

    var battery: Battery
    var energy = EnergyFlow()
    var components = ComponentEnergy()
    var accountedUntil = SimInstant.start
    var isCharging = false
    /// Optimized Battery Charging is holding the charge at its hold level.
    var holding = false
    var optimizedRelease: EventHandle?
    var isOn = true
    var offSince: SimInstant?
    /// Sum of the CPU power of tasks whose CPU runs, in watts, and how many they are.
    var taskPowerW = 0.0
    var cpuCount = 0
    /// The part of `taskPowerW` of scheduled (refresh, processing, fetch) tasks, and of the
    /// continuous modes' hardware (audio, GPS, Bluetooth).
    var scheduledPowerW = 0.0
    var modePowerW = 0.0
    /// Where the person is (network model places), for region monitoring.
    var place: String?
    /// Background transfers waiting for the system to start them, by task index.
    var pendingTransfers: [Int] = []
    /// Apps with a silent push held.
    var heldPushes = 0
    /// Tasks running now, by id, in start order: loops over running work use this, not all
    /// tasks, so a long run does not slow down as tasks accumulate.
    var runningIDs: [Int] = []

    // The person and the network.
    var networkState = NetworkState.disconnected
    /// `networkState.quality` (two logarithms), computed when the connection changes rather
    /// than at every decision.
    var networkQuality = NetworkState.disconnected.quality
    var links: OwnedArray<RadioLink>
    /// Each radio's next transition, by `Radio.rawValue`.
    let radioTimers: [TimerID]
    /// Transfers waiting for a connection they may use.
    var heldTransfers: [Transfer] = []
    /// The launch the person is in, as an index into the timeline's launches.
    var foreground: Int?
    /// The app in the foreground (the launch's app, unless a call took the foreground).
    var frontApp: Int?
    /// The app the current leave swipes away, while the leave moves it to the background:
    /// the person stops its music or navigation, so no mode session begins.
    var swipingAway: Int?
    var inCall = false
    /// Each app's next drawn push, not yet arrived.
    var nextPush: [PushArrival?]
    /// Finite-length work drawn at launches, waiting for its time to begin, by key; and the
    /// next key.
    var inUseWork: [Int: TaskRequest] = [:]
    var nextInUseKey = 0
    /// The bench load's power now (`PhoneSetup.load`).
    var benchW = 0.0
    var lowPower = false
    /// Prompt levels already offered since the last charge, by bit (index into
    /// `lowPowerPromptLevels`).
    var prompted: UInt64 = 0
    @inline(__always)
    var screenOnTime = SimDuration.zero
    var lowPowerTime = SimDuration.zero
    var onNetwork = OwnedArray([SimDuration](repeating: .zero, count: NetworkKind.allCases.count))
    /// What policies observe of the past: each app's use, when the phone was last in use,
    /// when the charger last came or went.
    var usage: UsageHistory
    var lastInUse = SimInstant.start
    var powerChangedAt = SimInstant.start
    /// Promotions of radio links replaced at a shutdown, and background energy from the battery.
    var promotions = 0
    var taskPromotions = 0
    var backgroundFromBatteryJ = 0.0
    var scheduledFromBatteryJ = 0.0
    /// Energy of background work (CPU and radio charged to tasks) and of the person's use
    /// (screen, CPU, calls, radio charged to the foreground), booked as it is spent.
    var backgroundJ = 0.0
    var foregroundJ = 0.0
    /// The reasons policies gave for holding requests, numbered in the order first heard.
    var policyReasonTokens: [String] = []

    var apps: OwnedArray<AppRuntime>
    /// Per app and task model: whether the app resubmits from the task's handler, and when
    /// it leaves the foreground (`AppTask.submitOn`, a set, looked up once here rather than
    /// hashed at every start).
    let resubmitsInHandler: [[Bool]]
    let submitsOnLeave: [[Bool]]
    /// Per app, whether its own Background App Refresh switch is on: a gate read for every
    /// eligible request at every decision, where a load from the app's parameters (500 bytes
    /// apart) was a tenth of a decision's own cost for ios (perf).
    let appRefreshOn: [Bool]
    /// `background-work.<n>`, the identifiers of finite-length work, made once per run.
    let backgroundWorkIdentifiers: [String]
    var tasks = TaskStore<TaskState>()
    /// Requests past `earliestBeginDate`, in the order they became eligible.
    var eligible: [EligibleTask] = []
    /// The requests a decision is shown when gates hold some, and those it starts; kept to
    /// reuse their storage.
    var shown: [EligibleTask] = []
    /// Whether `shown` may differ from the open requests in `eligible`.
    var shownIsStale = true
    /// Times an app entered or left the foreground or the swiped-away state, which the gates
    /// read (`gateKey`).
    var appGateChanges = 0
    /// Advanced whenever anything the gates read changes (`gateKey`, as of `gateEpochKey`): a
    /// request checked in the current epoch has the same answer now (`consultPolicy`).
    var gateEpoch: UInt32 = 1
    var gateEpochKey: GateKey?
    var starting: [TaskID] = []
    /// Timers for the events moved at almost every step: the next battery level that matters,
    /// and the policy's requested wake.
    let batteryTimer: TimerID
    let policyTimer: TimerID
    /// What the battery timer was last computed from; `nil` after it fired.
    var batteryPlan: BatteryPlan?
    /// Set while the battery is far from every level that matters; the battery timer then
    /// names the end of the watch. Watches can be turned off (tests compare the two), and
    /// are counted.
    var batteryWatch: BatteryWatch?
    var watchesBattery = true
    var batteryWatches = 0
    /// After the horizon: running tasks finish; no new work starts.
    var draining = false

    /// Empty, so that a simulation is always destroyed by this module's code, which knows the
    /// internal task store and its deinit. Without it, a test module that imports Scheduling
    /// without `@testable` crashed in the destroy code it generated for a simulation (Swift
    /// 6.3, debug build; TraceTests). Release builds did not crash and did not leak (maximum
    /// resident memory the same for 2 and 20 replications as before the store changed).
    deinit {}

    /// A simulation of `setup` under `policy`, recording to `sink`, with the world drawn from `streams`.
    public init(setup: PhoneSetup, policy: Policy, sink: Sink, streams: WorldStreams) {
        precondition(streams.apps.count == setup.apps.count, "one random stream per app")
        self.setup = setup
        self.policy = policy
        self.sink = sink
        self.streams = streams
        // The person a week at a time, unless the policy sees the future.
        self.world = WorldTimeline(setup: setup, streams: streams, whole: policy.seesTheFuture)
        var sim = Simulator<Event>(capacity: 2 * setup.apps.count + 32)
        self.radioTimers = [sim.makeTimer(), sim.makeTimer()]
        self.batteryTimer = sim.makeTimer()
        self.policyTimer = sim.makeTimer()
        self.sim = sim
        self.battery = Battery(setup.battery)
        self.nextPush = Array(repeating: nil, count: setup.apps.count)
        self.apps = OwnedArray(
            setup.apps.map {
                AppRuntime(
                    scheduler: BGTaskScheduler(permitted: $0.permitted, refreshMode: $0.declares(.fetch), processingMode: $0.declares(.processing)))
            })
        self.resubmitsInHandler = setup.apps.map { $0.tasks.map { $0.submitOn.contains(.handler) } }
        self.submitsOnLeave = setup.apps.map { $0.tasks.map { $0.submitOn.contains(.background) } }
        self.appRefreshOn = setup.apps.map(\.backgroundRefresh)
        self.backgroundWorkIdentifiers = (0..<(setup.apps.map(\.backgroundWork.count).max() ?? 0)).map { "background-work.\($0)" }
        self.links = OwnedArray([RadioLink(profile: setup.network.wifiRadio), RadioLink(profile: setup.network.cellularRadio)])
        self.lowPower = setup.settings.lowPowerMode == .on
        precondition(setup.settings.lowPowerPromptLevels.count <= 64, "at most 64 Low Power Mode prompt levels")
        self.usage = UsageHistory(apps: setup.apps.count)
    }

    /// Runs to the horizon, lets tasks still running finish, and returns the sink.
    ///
    /// Specialised here for the box every scenario's policy runs in, with `StandardSink`:
    /// callers in other modules would otherwise run the unspecialised generic code, which looks
    /// up the metadata of the nested generic types at run time (about 40% of a run's time in a
    /// profile).
    @_specialize(exported:true,where Policy == DynamicPolicy, Sink == StandardSink)
    public mutating func run() -> Sink {
        let horizon = SimInstant.after(setup.duration)
        if policy.seesTheFuture {
            policy.foresee(FutureWorld(timeline: world, horizon: horizon, launchDownBytes: setup.apps.map(\.launchDownBytes)))
        }
        for session in world.charging {
            if session.start == .start { plugIn() } else { sim.schedule(.plugIn, at: session.start, priority: Self.worldPriority) }
            // A session the horizon cuts goes on while the work still running finishes: the
            // cut is not an unplug, which would end processing work that requires power.
            if session.end < horizon { sim.schedule(.unplug, at: session.end, priority: Self.worldPriority) }
        }
        if let first = world.network.first {
            if first.time == .start { changeNetwork(0) } else { scheduleWorld(.network(0), at: first.time) }
        }
        if let first = world.launch(0) { scheduleWorld(.launch(0), at: first.start) }
        if let first = world.call(0) { scheduleWorld(.call(0), at: first.start) }
        if let first = world.people.purges.first { scheduleWorld(.purge(0), at: first.time) }
        if let first = world.interruption(0) { scheduleWorld(.interrupt(0), at: first.start) }
        for app in setup.apps.indices { scheduleExtensionRun(app) }
        if let first = world.pushes.first { scheduleWorld(.push(0), at: first.time) }
        if setup.pushTrace == nil { for app in setup.apps.indices { scheduleNextServerPush(app, after: .start) } }
        if !setup.load.isNone { changeLoad(0) }
        submitInitialRequests()
        // Low Power Mode set on in the scenario is on from the start: said, so that the
        // timeline and the event log show it.
        if lowPower { sink.worldEvent(.lowPowerMode(on: true), at: .start) }
        sink.chargeObserved(battery.charge, at: .start)
        rescheduleBatteryEvent()

        #if BGSIM_EVENT_COSTS
        let loopStarted = EventCosts.now()
        #endif
        var checkpoint = SimInstant.start, count = 0
        while let event = sim.step(before: horizon) {
            handle(event)
            count &+= 1
            if count & Self.stormCheckMask == 0 {
                if sim.now - checkpoint < .seconds(1) { return stopStorm(event) }
                checkpoint = sim.now
            }
        }
        draining = true
        // The last tasks finish, but not for ever: a session or mode that an input made
        // centuries long would keep work running (the fuzzer found a 317-year session).
        let drainEnd = horizon + Self.longestDrain
        while !runningIDs.isEmpty, let event = sim.step(before: drainEnd) {
            handle(event)
            count &+= 1
            if count & Self.stormCheckMask == 0 {
                if sim.now - checkpoint < .seconds(1) { return stopStorm(event) }
                checkpoint = sim.now
            }
        }
        var cut = false
        if !runningIDs.isEmpty {
            cut = true
            account(to: drainEnd)
            for i in runningIDs where tasks[i].status == .running {
                finish(TaskID(i), tasks[i].request.kind.isMode ? .completed : .killed, at: drainEnd, suspendIfIdle: false)
            }
        }
        #if BGSIM_EVENT_COSTS
        EventCosts.loopNanos += EventCosts.now() - loopStarted
        EventCosts.runs += 1
        #endif
        let end = cut ? drainEnd : max(sim.now, horizon)
        account(to: end)
        // Tails still running at the end: their shares so far are all there is.
        for i in tasks.keptIDs where tasks[i].awaitingTail { report(TaskID(i)) }

        for index in tasks.keptIDs {
            switch tasks[index].status {
            case .waiting, .eligible: finish(TaskID(index), .neverRun, at: end)
            case .running: preconditionFailure("task \(index) still running after the drain")
            case .ended: break
            }
        }
        assert(tasks.keptIDs.allSatisfy { if case .ended = tasks[$0].status { true } else { false } }, "a task has no final state")
        var totals = RunTotals(
            end: end, energy: energy, components: components, offSince: isOn ? nil : offSince,
            screenOn: screenOnTime, lowPower: lowPowerTime, onNetwork: onNetwork.indices.map { onNetwork[$0] },
            sessions: world.sessionsBeforeHorizon, launches: world.launchesBeforeHorizon)
        totals.launchPredictability = world.launchHours.predictability
        totals.promotions = promotions + links[0].promotions + links[1].promotions
        totals.taskPromotions = taskPromotions + links[0].taskPromotions + links[1].taskPromotions
        totals.backgroundFromBatteryJ = backgroundFromBatteryJ
        totals.scheduledFromBatteryJ = scheduledFromBatteryJ
        totals.backgroundJ = backgroundJ
        totals.foregroundJ = foregroundJ
        sink.runEnded(totals)
        return sink
    }

    /// Every 16,384 events the loop checks that simulated time moved at least a second: a
    /// faster pace is an event storm (a task resubmitted every microsecond, say), which would
    /// run on for ever.
    static var stormCheckMask: Int { (1 << 14) - 1 }

    /// How long after the horizon the work still running may go on (longer than any budget a
    /// study would set); what runs then is cut: killed, or for a mode session completed.
    static var longestDrain: SimDuration { .days(7) }

    /// Why the run stopped early, if it did: an event storm, with what caused its last event.
    public private(set) var eventStorm: String?

    mutating func stopStorm(_ event: Event) -> Sink {
        var what: String
        switch event {
        case .eligible(let id), .taskEnd(let id), .cpuMonitor(let id), .modeChunk(let id):
            let r = tasks[id.rawValue].request
            what = "task '\(r.identifier)' of app \(setup.apps[r.app].name)"
        case .launch, .leave, .call, .callEnd, .purge, .interrupt, .interruptEnd: what = "the person's use of the phone"
        case .load: what = "the bench load's steps"
        case .radio: what = "the radios"
        default: what = "\(event)"
        }
        eventStorm = "more than 16384 events within a simulated second at \(sim.now), the last from \(what)"
        return sink
    }

    mutating func scheduleWorld(_ event: Event, at time: SimInstant) {
        sim.schedule(event, at: max(time, sim.now), priority: Self.worldPriority)
    }

    // MARK: - Events

    mutating func handle(_ event: Event) {
        #if BGSIM_EVENT_COSTS
        let started = EventCosts.now()
        defer {
            EventCosts.counts[event.costIndex] += 1
            EventCosts.nanos[event.costIndex] += EventCosts.now() - started
        }
        #endif
        if case .batteryWatchEnded = event {
            // Not a change in the world: no accounting (which would split the energy books'
            // sums at an instant nothing happened) and no decision.
            batteryWatch = nil
            rescheduleBatteryEvent(watching: false)
            return
        }
        account(to: sim.now)
        switch event {
        case .plugIn: plugIn()
        case .unplug: unplug()
        case .optimizedRelease: holding = false
        case .batteryLevel: batteryReachedLevel()
        case .batteryWatchEnded: preconditionFailure("handled above")
        case .network(let i): changeNetwork(i)
        case .radio(let r): radioTransition(Radio(rawValue: r)!)
        case .launch(let i): launch(i)
        case .leave(let i): leave(i)
        case .call(let i): startCall(i)
        case .callEnd: endCall()
        case .purge(let i): purge(i)
        case .taskEnd(let id): taskPhaseEnded(id)
        case .cpuMonitor(let id): cpuMonitorFired(id)
        case .eligible(let id):
            // After the horizon the world goes on while the last tasks finish; new work and
            // decisions do not.
            if draining { return } else { makeEligible(id) }
        case .policyWake:
            if draining { return }
        case .push(let i): pushArrived(i)
        case .serverPush(let app): serverPushArrived(app)
        case .pushRelease(let app):
            apps[app].pushRelease = nil
            deliverHeldPush(app)
        case .modeChunk(let id): modeChunk(id)
        case .load(let i): changeLoad(i)
        case .suspend(let app): suspendAfterLeaving(app)
        case .interrupt(let i): interrupt(i)
        case .interruptEnd(let i): endInterruption(i)
        case .beginInUse(let k): beginInUse(k)
        case .extensionRun(let app): extensionRan(app)
        }
        switch event {
        case .plugIn, .unplug, .network, .batteryLevel, .launch, .leave:
            // What discretionary transfers and held pushes wait for may have changed.
            if !pendingTransfers.isEmpty { startPendingTransfers() }
            if heldPushes > 0 { for app in apps.indices where apps[app].heldPush != nil { deliverHeldPush(app) } }
        default: break
        }
        rescheduleBatteryEvent()
        // A radio's phase or a purge changes nothing a policy sees; everything else may.
        switch event {
        case .radio, .purge, .modeChunk, .suspend, .interrupt, .interruptEnd: break
        default: if !draining { consultPolicy() }
        }
        // Between events nothing refers to an ended task but through its parked record.
        if tasks.wantsCompaction {
            tasks.compact { id, state in
                if case .ended = state.status { return state.awaitingTail }
                return true
            }
        }
    }

    // MARK: - Network and radios

    /// The radio the current connection uses, if any.
    @inline(__always)
    var currentRadio: Radio? {
        switch networkState.kind {
        case .wifi: .wifi
        case .cellular: .cellular
        case .none: nil
        }
    }

    mutating func changeNetwork(_ index: Int) {
        let change = world.network[index]
        if index + 1 < world.network.count { scheduleWorld(.network(index + 1), at: world.network[index + 1].time) }
        let old = currentRadio
        networkState = change.state
        networkQuality = change.state.quality
        sink.worldEvent(.network(change.state), at: sim.now)
        let left = place
        place = change.place
        // After the radios have the new connection, so the woken apps can use it. Where the
        // phone is at the start of the run is where it was, not a crossing.
        let crosses = left != change.place && !(index == 0 && change.time == .start)
        defer { if crosses { crossRegions(left: left, entered: change.place) } }
        guard isOn else { return }
        let new = currentRadio
        advanceRadio(.wifi)
        advanceRadio(.cellular)
        if let old, old != new {
            heldTransfers += links[old.rawValue].disconnect(at: sim.now)
            syncRadioEvent(old)
        }
        if let new {
            links[new.rawValue].setThroughput(upMbps: networkState.upMbps, downMbps: networkState.downMbps, at: sim.now)
            // A new rate moves the end of the active phase.
            syncRadioEvent(new)
            let held = heldTransfers
            heldTransfers.removeAll()
            for t in held { send(t) }
        }
    }

    /// Sends a transfer over the current connection, or holds it until there is one it may
    /// use: with Background App Refresh on Wi-Fi only, background tasks never use cellular.
    mutating func send(_ transfer: Transfer) {
        guard let r = currentRadio, r == .wifi || mayUseCellular(transfer.owner) else {
            heldTransfers.append(transfer)
            return
        }
        advanceRadio(r)
        links[r.rawValue].enqueue(transfer, at: sim.now)
        syncRadioEvent(r)
        if sink.observesTaskSteps, case .task(let i) = transfer.owner {
            sink.taskEvent(.transfer(TaskID(i), app: tasks[i].request.app, networkState.kind), at: sim.now)
        }
    }

    @inline(__always)
    func mayUseCellular(_ owner: TransferOwner) -> Bool {
        guard setup.settings.backgroundAppRefresh == .wifi, case .task(let i) = owner else { return true }
        return !tasks[i].request.kind.isScheduled
    }

    /// Drops every transfer of the task, held or on a radio, and notes the bits they had left.
    /// A task has one transfer, except a continuous-mode session, whose chunks pile up while
    /// there is no connection or behind each other on a slow link: all of them go, or the
    /// rest would be sent on behalf of a task that has ended.
    mutating func cancelTransfer(of id: TaskID) {
        let owner = TransferOwner.task(id.rawValue)
        var upBits = 0.0, downBits = 0.0
        while let k = heldTransfers.firstIndex(where: { $0.owner == owner }) {
            let left = heldTransfers.removeQuickly(at: k)
            upBits += left.upBits
            downBits += left.downBits
        }
        for raw in 0..<2 {
            let r = Radio(rawValue: raw)!
            advanceRadio(r)
            while let left = links[r.rawValue].cancel(owner, at: sim.now) {
                upBits += left.upBits
                downBits += left.downBits
            }
            syncRadioEvent(r)
        }
        tasks[id.rawValue].leftUpBits = upBits
        tasks[id.rawValue].leftDownBits = downBits
    }

    mutating func radioTransition(_ r: Radio) {
        advanceRadio(r)
        syncRadioEvent(r)
    }

    /// Brings a radio up to now, starting the CPU work of a task whose fetch just finished.
    /// Called before anything changes a radio, so a transition due at this very instant (an
    /// event not yet handled) is never lost.
    mutating func advanceRadio(_ r: Radio) {
        var done: TransferOwner?
        links[r.rawValue].advance(to: sim.now) { owner in
            // At most one transfer finishes per instant: every phase lasts at least 1 µs.
            precondition(done == nil, "two transfers finished at one radio transition")
            done = owner
        }
        if case .task(let i) = done, tasks[i].status == .running, tasks[i].phase == .transferring { transfersDone(TaskID(i)) }
        settleRadio(r)
    }

    /// Schedules the radio's next transition (after any change to it), and reports the tasks
    /// whose share of its energy is now known.
    mutating func syncRadioEvent(_ r: Radio) {
        settleRadio(r)
        let next = links[r.rawValue].nextEvent
        let timer = radioTimers[r.rawValue]
        if next == sim.timerTime(timer) { return }
        if let next { sim.setTimer(timer, .radio(r.rawValue), at: next, priority: Self.worldPriority) } else { sim.cancelTimer(timer) }
    }

    // MARK: - Power and battery

    // The non-mutating members the hot loop calls are `@inline(__always)`: called out of line
    // from a mutating method, each call copied the whole simulation (about 1.8 kB) to pass it
    // as `self`, a fifth of a run's time in a profile.

    @inline(__always)
    var radioW: Double { links[0].powerW + links[1].powerW }
    var screenOn: Bool { foreground != nil }
    @inline(__always)
    var loadW: Double {
        guard isOn else { return 0 }
        var w = setup.battery.idleDrainW + taskPowerW + radioW
        if screenOn { w += setup.power.screenW + setup.power.cpuForegroundW }
        if inCall { w += setup.power.callW }
        return w + benchW
    }
    /// Available energy at which a phone that shut down boots again.
    @inline(__always)
    var bootLevelJ: Double { setup.battery.bootCharge * battery.availableCapacityJ }
    /// Power the charger delivers: the load first, plus what the battery accepts at its
    /// charge, up to the charger's peak.
    @inline(__always)
    var chargerW: Double {
        guard isCharging else { return 0 }
        let accepted = setup.charger.acceptedW(charge: battery.charge, holding: holding)
        return min(setup.charger.peakW, loadW + accepted)
    }

    /// The bench load's step `index` begins; the next is scheduled if it begins before the horizon.
    mutating func changeLoad(_ index: Int) {
        guard let step = setup.load.step(index) else { return }
        benchW = step.powerW
        if let next = setup.load.step(index + 1), next.start < .after(setup.duration) {
            sim.schedule(.load(index + 1), at: next.start, priority: Self.worldPriority)
        }
    }

    mutating func plugIn() {
        isCharging = true
        powerChangedAt = sim.now
        prompted = 0
        sink.worldEvent(.plugIn, at: sim.now)
        powerChanged()
        guard setup.charger.optimized else { return }
        // Optimized Battery Charging predicts the unplug from the person's routine (the
        // habit's mean unplug time, next after now) and holds until a lead time before it.
        let now = sim.now
        var predicted = SimInstant.after(.days(now.day)) + setup.charging.unplug
        if predicted <= now { predicted += .days(1) }
        let release = predicted - setup.charger.optimizedLead
        guard release > now else { return }
        holding = true
        optimizedRelease = sim.schedule(.optimizedRelease, at: release, priority: Self.worldPriority)
    }

    mutating func unplug() {
        isCharging = false
        powerChangedAt = sim.now
        holding = false
        if let h = optimizedRelease { sim.cancel(h) }
        optimizedRelease = nil
        sink.worldEvent(.unplug, at: sim.now)
        powerChanged()
    }

    /// Integrates energy from the last accounting to `time` at the (constant) current load,
    /// and books it by component.
    mutating func account(to time: SimInstant) {
        guard time > accountedUntil else { return }
        let dt = time - accountedUntil
        let s = dt.seconds
        var backgroundJ = 0.0, scheduledJ = 0.0, foregroundJ = 0.0
        if isOn {
            backgroundJ = taskPowerW * s
            scheduledJ = scheduledPowerW * s
            components.baselineJ += setup.battery.idleDrainW * s
            components.cpuBackgroundJ += (taskPowerW - modePowerW) * s
            components.modeJ += modePowerW * s
            if screenOn {
                components.screenJ += setup.power.screenW * s
                components.cpuForegroundJ += setup.power.cpuForegroundW * s
                foregroundJ += (setup.power.screenW + setup.power.cpuForegroundW) * s
                screenOnTime += dt
            }
            if inCall {
                components.callJ += setup.power.callW * s
                foregroundJ += setup.power.callW * s
            }
            components.loadJ += benchW * s
            // Read in place: a copy of a link (its profile, queue and owner lists) per event
            // showed in profiles as memmove and reference counting.
            for r in 0..<2 {
                let j = links[r].powerW * s
                guard j > 0 else { continue }
                if let owner = links[r].chargedTo {
                    components.radioActiveJ += j
                    charge(j, to: owner, tail: false, &backgroundJ, &scheduledJ, &foregroundJ)
                } else {
                    // The tail, split equally among the burst's owners.
                    components.radioTailJ += j
                    let users = links[r].users.count
                    assert(users > 0, "a radio tail with no burst before it")
                    let share = j / Double(users)
                    for k in 0..<users { charge(share, to: links[r].users[k], tail: true, &backgroundJ, &scheduledJ, &foregroundJ) }
                }
            }
            if lowPower { lowPowerTime += dt }
        }
        self.backgroundJ += backgroundJ
        self.foregroundJ += foregroundJ
        onNetwork[networkState.kind.index] += dt
        let flow = battery.advance(by: dt, loadW: loadW, chargerW: chargerW)
        energy += flow
        if backgroundJ > 0, flow.consumedJ > 0 {
            let share = flow.fromBatteryJ / flow.consumedJ
            backgroundFromBatteryJ += backgroundJ * share
            scheduledFromBatteryJ += scheduledJ * share
        }
        accountedUntil = time
        assert(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ), "energy books do not balance: \(flow)")
        sink.chargeObserved(battery.charge, at: time)
    }

    /// Books radio energy to its owner: a task (background) or the person's use (foreground).
    mutating func charge(
        _ j: Double, to owner: TransferOwner, tail: Bool,
        _ backgroundJ: inout Double, _ scheduledJ: inout Double, _ foregroundJ: inout Double
    ) {
        switch owner {
        case .task(let i):
            tasks[i].radioJ += j
            if tail { tasks[i].tailJ += j }
            backgroundJ += j
            if tasks[i].request.kind.isScheduled { scheduledJ += j }
        case .foreground:
            foregroundJ += j
        }
    }

    mutating func batteryReachedLevel() {
        batteryPlan = nil
        let charge = battery.charge
        if isOn, battery.availableJ <= 1e-9 * battery.capacityJ {
            shutDown()
        } else if !isOn, isCharging, battery.availableJ >= bootLevelJ * (1 - 1e-12) {
            boot()
        } else if setup.settings.lowPowerMode == .auto {
            if lowPower, isCharging, charge >= setup.settings.lowPowerOffLevel - 1e-9 {
                setLowPower(false)
            } else if isOn, !lowPower, !isCharging,
                setup.settings.lowPowerPromptLevels.indices.contains(where: {
                    prompted & (1 << UInt64($0)) == 0 && charge <= setup.settings.lowPowerPromptLevels[$0] + 1e-9
                })
            {
                // Every level passed at once is offered once; the person answers once.
                for (k, l) in setup.settings.lowPowerPromptLevels.enumerated() where charge <= l + 1e-9 { prompted |= 1 << UInt64(k) }
                let accepted = streams.lowPower.bernoulli(setup.people.lowPowerAcceptShare)
                sink.worldEvent(.lowPowerPrompt(accepted: accepted), at: sim.now)
                if accepted { setLowPower(true) }
            }
        }
    }

    mutating func setLowPower(_ on: Bool) {
        lowPower = on
        sink.worldEvent(.lowPowerMode(on: on), at: sim.now)
    }

    mutating func shutDown() {
        isOn = false
        offSince = sim.now
        sink.phoneShutDown(at: sim.now)
        // Every app goes with the phone, and its running work with it.
        for app in apps.indices where apps[app].life.state.isRunning { terminate(app, cause: .shutdown) }
        frontApp = nil
        heldTransfers.removeAll()
        for raw in 0..<2 {
            let r = Radio(rawValue: raw)!
            links[r.rawValue].powerOff()
            settleRadio(r)
            promotions += links[r.rawValue].promotions
            taskPromotions += links[r.rawValue].taskPromotions
            links[r.rawValue] = RadioLink(profile: links[r.rawValue].profile)
            syncRadioEvent(r)
        }
    }

    mutating func boot() {
        isOn = true
        sink.phoneBooted(at: sim.now, offFor: sim.now - offSince!)
        offSince = nil
        if let r = currentRadio {
            links[r.rawValue].setThroughput(upMbps: networkState.upMbps, downMbps: networkState.downMbps, at: sim.now)
            syncRadioEvent(r)
        }
    }

    /// Schedules the next battery level that changes the phone's state or the charger's power:
    /// the available energy running out while on, the boot level while off and charging, the
    /// next level of the charging curve while charging, and Low Power Mode's levels. A phone
    /// that died does not start by itself, even when a KiBaM battery recovers at rest: it
    /// needs the charger.
    ///
    /// Called after every event, since most change the load. Far from every level, it only
    /// checks that the watch still holds (`BatteryWatch`): working out the level's instant
    /// at each change of load was a tenth of a run, for a few hundred levels a month. When a
    /// watch ends (`watching` false), the instant is worked out, from the battery as of the
    /// last event; the next event that changes the load may start a new watch.
    mutating func rescheduleBatteryEvent(watching: Bool = true) {
        let load = loadW
        let states = BatteryStates(isOn: isOn, isCharging: isCharging, holding: holding, lowPower: lowPower, prompted: prompted)
        if let watch = batteryWatch, sim.now < watch.until, load <= watch.maxLoadW, watch.states == states {
            assert(watchHolds(watch), "a battery level comes before the watch ends")
            return
        }
        batteryWatch = nil
        // The battery is as of the last accounting: now, except when a watch ends between events.
        let base = accountedUntil
        let net = battery.netPowerW(loadW: load, chargerW: chargerW)
        // Between levels the net power is constant, so while it and the states the levels
        // depend on are unchanged, the timer already names the right instant.
        let plan = BatteryPlan(netW: net, states: states)
        if plan == batteryPlan {
            assert(timerFollowsPlan(netW: net), "the battery timer is not where its plan puts it")
            return
        }
        // Far from every level, watch instead: the net power's size is at most the load, or
        // the charger's peak while charging, plus for KiBaM the flow between its wells.
        if watching && watchesBattery {
            let maxLoadW = load + Self.watchHeadroomW
            let rateW = max(maxLoadW, isCharging ? setup.charger.peakW : 0) + battery.maxInternalFlowW
            let far = min(batteryMarginJ() / rateW, Self.longestWatch.seconds)
            if far >= Self.shortestWatch.seconds {
                let until = base + SimDuration(microseconds: Int64(far * 1e6))
                batteryWatch = BatteryWatch(until: until, maxLoadW: maxLoadW, states: states)
                assert(watchHolds(batteryWatch!), "a battery level comes before the watch ends")
                batteryWatches += 1
                batteryPlan = nil
                sim.setTimer(batteryTimer, .batteryWatchEnded, at: max(until, sim.now), priority: Self.worldPriority)
                return
            }
        }
        batteryPlan = plan
        if let wait = nextLevelWait(netW: net) {
            assert(base + wait >= sim.now, "a battery level passed during a watch")
            sim.setTimer(batteryTimer, .batteryLevel, at: max(base + wait, sim.now), priority: Self.worldPriority)
        } else {
            sim.cancelTimer(batteryTimer)
        }
    }

    /// How long, at the constant net power `netW`, until the battery as of the last accounting
    /// reaches the first level `rescheduleBatteryEvent` waits for; `nil` when none is ahead.
    mutating func nextLevelWait(netW net: Double) -> SimDuration? {
        var wait =
            isOn
            ? battery.timeToEmpty(netPowerW: net)
            : isCharging ? battery.timeUntilAvailable(reaches: bootLevelJ, netPowerW: net) : nil
        func consider(_ level: Double) {
            if let w = battery.timeToReach(level * battery.capacityJ, netPowerW: net) { wait = min(wait ?? w, w) }
        }
        // While charging, the charger's power changes at the knee, each taper step and the cap.
        if isCharging, net > 0, let level = setup.charger.nextLevel(after: battery.charge, holding: holding) {
            consider(level)
        }
        if setup.settings.lowPowerMode == .auto {
            if lowPower, isCharging, net > 0 { consider(setup.settings.lowPowerOffLevel) }
            if isOn, !lowPower, !isCharging, net < 0,
                let next = Self.nextPromptLevel(setup.settings.lowPowerPromptLevels, below: battery.charge, offered: prompted)
            {
                consider(next)
            }
        }
        return wait
    }

    /// The watch's promise, checked by debug builds at every event it outlives: at the load
    /// now (constant until the next event, which checks again), no level comes before the
    /// watch ends. Random sweeps found two watches that broke it silently (a KiBaM phone
    /// booting late, a weak charger's limit passed), caught only later, if at all.
    mutating func watchHolds(_ watch: BatteryWatch) -> Bool {
        let net = battery.netPowerW(loadW: loadW, chargerW: chargerW)
        guard let wait = nextLevelWait(netW: net) else { return true }
        return accountedUntil + wait >= watch.until
    }

    /// The plan's promise, checked by debug builds whenever it is kept: while the net power and
    /// the states are unchanged, the timer set earlier still names the instant worked out now
    /// (within the rounding of the levels' instants to the microsecond and of the books' sums).
    mutating func timerFollowsPlan(netW net: Double) -> Bool {
        let armed = sim.timerTime(batteryTimer)
        guard let wait = nextLevelWait(netW: net) else { return armed == nil }
        guard let armed else { return false }
        let expected = max(accountedUntil + wait, sim.now)
        let slackMicroseconds = 2 + (net == 0 ? 0 : 1e-9 * battery.capacityJ / abs(net) * 1e6)
        return abs(Double((armed - expected).microseconds)) <= slackMicroseconds
    }

    /// Watches shorter than this are not worth their event; longer ones are cut to the longest.
    static var shortestWatch: SimDuration { .minutes(5) }
    static var longestWatch: SimDuration { .days(1) }
    /// How much the load may grow during a watch before the watch is redone. Above the load of
    /// a phone in use with both radios transferring; a larger value means shorter watches.
    static var watchHeadroomW: Double { 5 }

    /// The highest Low Power Mode prompt level below `charge` not yet offered.
    static func nextPromptLevel(_ levels: [Double], below charge: Double, offered: UInt64) -> Double? {
        var next: Double?
        for (k, level) in levels.enumerated() where level < charge && offered & (1 << UInt64(k)) == 0 {
            next = max(next ?? level, level)
        }
        return next
    }

    /// Energy, in joules, the battery's stored or available energy has to move before it can
    /// reach any level `rescheduleBatteryEvent` waits for in the current states (whatever
    /// the direction): the levels it looks for, and the same tolerances.
    ///
    /// `mutating` though it changes nothing: as a non-mutating member called from
    /// `rescheduleBatteryEvent`, which the compiler would not inline, each call copied the
    /// whole simulation (2 kB, every array retained) to pass it as `self`.
    mutating func batteryMarginJ() -> Double {
        let capacity = battery.capacityJ, total = battery.energyJ, available = battery.availableJ
        var margin = Double.infinity
        // Off on the charger, the phone boots once the available energy is at the boot level,
        // however it got there: a KiBaM battery recovers at rest, so a phone that died can be
        // above that level already when the charger comes, and then it boots now.
        if isOn { margin = available } else if isCharging { margin = max(0, bootLevelJ - available) }
        if isCharging, let level = setup.charger.nextLevel(after: battery.charge, holding: holding) {
            margin = min(margin, abs(level * capacity - total))
        }
        // The level below counts too: on a charger weaker than the load the charge falls
        // through it, and when the load drops within the same watch it charges back up to it,
        // a level the next plan waits for. Without it such a phone (a 1.6 W charger and a
        // 64.6% limit, found by a random sweep) passed its limit during a watch.
        if isCharging, let level = setup.charger.levelBelow(battery.charge, holding: holding) {
            margin = min(margin, abs(total - level * capacity))
        }
        if setup.settings.lowPowerMode == .auto {
            if lowPower, isCharging { margin = min(margin, abs(setup.settings.lowPowerOffLevel * capacity - total)) }
            if isOn, !lowPower, !isCharging,
                let next = Self.nextPromptLevel(setup.settings.lowPowerPromptLevels, below: battery.charge, offered: prompted)
            {
                margin = min(margin, total - next * capacity)
            }
        }
        // The levels' tolerances (1e-9 of charge) and rounding to the microsecond.
        return max(0, margin - 1e-6 * capacity)
    }

}
