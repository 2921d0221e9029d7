import PhoneWorld
import SimEngine
import SimRandom

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
        /// Near such a level, a radio's transition changes the load: the level's instant is
        /// worked out again.
        case batteryReplan
        /// Optimized Battery Charging stops holding, to finish by the predicted unplug.
        case optimizedRelease
        case policyWake
        /// Index into the timeline's network changes, launches, calls and purges.
        case network(Int)
        case launch(Int), leave(Int)
        case call(Int), callEnd(Int)
        case purge(Int)
        /// Radio `Radio.rawValue`'s head transfer finished.
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
    /// The planned level's instant, and what the battery timer is armed with.
    var batteryLevelAt: SimInstant?
    var batteryTimerReplans: Bool?
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
            account(to: drainEnd, through: false)
            for i in runningIDs where tasks[i].status == .running {
                finish(TaskID(i), tasks[i].request.kind.isMode ? .completed : .killed, at: drainEnd, suspendIfIdle: false)
            }
        }
        #if BGSIM_EVENT_COSTS
        EventCosts.loopNanos += EventCosts.now() - loopStarted
        EventCosts.runs += 1
        #endif
        let end = cut ? drainEnd : max(sim.now, horizon)
        account(to: end, through: false)
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
            // sums at an instant nothing happened) and no decision. The radios' transitions
            // since the last event are applied, so the plan starts from the load of now.
            applyRadioTransitions(upTo: sim.now, through: false)
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
        case .radio(let r): syncRadioEvent(Radio(rawValue: r)!)
        case .batteryReplan: batteryPlan = nil
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
        case .radio, .batteryReplan, .purge, .modeChunk, .suspend, .interrupt, .interruptEnd: break
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

    /// Brings a radio up to now, starting the CPU work of a task whose fetch just finished.
    /// Called before anything changes a radio, so a transition due at this very instant is
    /// never lost.
    mutating func advanceRadio(_ r: Radio) { advanceRadio(r, to: sim.now) }

    /// Brings a radio up to `time` (at most now). A transfer finishes only at a completion
    /// event's instant, which is now: `syncRadioEvent` keeps each link's completion an event.
    mutating func advanceRadio(_ r: Radio, to time: SimInstant) {
        var done: TransferOwner?
        links[r.rawValue].advance(to: time) { owner in
            // At most one transfer finishes per instant: every phase lasts at least 1 µs.
            precondition(done == nil, "two transfers finished at one radio transition")
            done = owner
        }
        if let done {
            assert(time == sim.now, "a transfer finished at \(time), before its completion event at \(sim.now)")
            if case .task(let i) = done, tasks[i].status == .running, tasks[i].phase == .transferring { transfersDone(TaskID(i)) }
            syncRadioEvent(r)
        }
        settleRadio(r)
    }

    /// The earliest transition of any radio at or before `time` (promotion over, a direction
    /// or transfer done, a tail stage over), and its radio.
    @inline(__always)
    func nextRadioTransition(notAfter time: SimInstant) -> (SimInstant, Radio)? {
        var best: (SimInstant, Radio)?
        if let t = links[0].nextEvent, t <= time { best = (t, .wifi) }
        if let t = links[1].nextEvent, t <= time, best.map({ t < $0.0 }) ?? true { best = (t, .cellular) }
        return best
    }

    /// The earliest transition of any radio, whatever its time.
    @inline(__always)
    var nextRadioTransition: SimInstant? {
        switch (links[0].nextEvent, links[1].nextEvent) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b): b
        }
    }

    /// Keeps the radio's next completion an event (after any change to it), and reports the
    /// tasks whose share of its energy is now known. Its other transitions are integrated in
    /// the energy books (`account`) without events.
    mutating func syncRadioEvent(_ r: Radio) {
        settleRadio(r)
        let next = links[r.rawValue].nextCompletion
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
    /// The most the radios can draw before one of them is changed (`RadioLink.peakPowerW`).
    var radioPeakW: Double { links[0].peakPowerW + links[1].peakPowerW }
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

    /// Integrates energy from the last accounting to `time`, and books it by component: the
    /// load is constant between the radios' transitions, which are applied as they come
    /// (those at `time` too, unless `through` is false).
    mutating func account(to time: SimInstant, through: Bool = true) {
        applyRadioTransitions(upTo: time, through: through)
        bookEnergy(to: time)
    }

    /// Books energy up to each radio transition at or before `time` (strictly before, unless
    /// `through`) and applies it: the books then stand at the last such transition.
    mutating func applyRadioTransitions(upTo time: SimInstant, through: Bool) {
        while let (t, r) = nextRadioTransition(notAfter: time), through || t < time {
            bookEnergy(to: t)
            advanceRadio(r, to: t)
        }
    }

    /// Integrates energy from the last accounting to `time` at the (constant) current load,
    /// and books it by component.
    mutating func bookEnergy(to time: SimInstant) {
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
        // The most the load can reach before the next event: the radios move through their
        // transitions without events.
        let bound = isOn ? load - radioW + radioPeakW : 0
        let states = BatteryStates(isOn: isOn, isCharging: isCharging, holding: holding, lowPower: lowPower, prompted: prompted)
        if let watch = batteryWatch, sim.now < watch.until, bound <= watch.maxLoadW, watch.states == states {
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
            armBatteryTimer(loadBound: bound)
            return
        }
        // Far from every level, watch instead: the net power's size is at most the load, or
        // the charger's peak while charging, plus for KiBaM the flow between its wells.
        if watching && watchesBattery {
            let maxLoadW = bound + Self.watchHeadroomW
            let rateW = max(maxLoadW, isCharging ? setup.charger.peakW : 0) + battery.maxInternalFlowW
            let far = min(batteryMarginJ() / rateW, Self.longestWatch.seconds)
            if far >= Self.shortestWatch.seconds {
                let until = base + SimDuration(microseconds: Int64(far * 1e6))
                batteryWatch = BatteryWatch(until: until, maxLoadW: maxLoadW, states: states)
                assert(watchHolds(batteryWatch!), "a battery level comes before the watch ends")
                batteryWatches += 1
                batteryPlan = nil
                batteryTimerReplans = nil
                sim.setTimer(batteryTimer, .batteryWatchEnded, at: max(until, sim.now), priority: Self.worldPriority)
                return
            }
        }
        batteryPlan = plan
        if let wait = nextLevelWait(netW: net) {
            assert(base + wait >= sim.now, "a battery level passed during a watch")
            batteryLevelAt = max(base + wait, sim.now)
        } else {
            batteryLevelAt = nil
        }
        armBatteryTimer(loadBound: bound)
    }

    /// Sets the battery timer to the planned level's instant, or to the radios' next
    /// transition if that comes first and may change the net power: the plan is then worked
    /// out again (`batteryReplan`). On a charger that powers the whole load and gives the
    /// battery nothing (at its limit, or full), the net power is zero whatever the radios do.
    mutating func armBatteryTimer(loadBound: Double) {
        var due = batteryLevelAt.map { ($0, false) }
        let insensitive =
            !isOn || (isCharging && loadBound <= setup.charger.peakW
                && (battery.isFull || setup.charger.acceptedW(charge: battery.charge, holding: holding) == 0))
        if !insensitive, let radio = nextRadioTransition.map({ max($0, sim.now) }), radio < due?.0 ?? .distantFuture {
            due = (radio, true)
        }
        guard let (time, replan) = due else {
            sim.cancelTimer(batteryTimer)
            return
        }
        if sim.timerTime(batteryTimer) == time, batteryTimerReplans == replan { return }
        batteryTimerReplans = replan
        sim.setTimer(batteryTimer, replan ? .batteryReplan : .batteryLevel, at: time, priority: Self.worldPriority)
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
        let armed = batteryLevelAt
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

