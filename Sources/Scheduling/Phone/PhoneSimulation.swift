import PhoneWorld
import SimEngine
import SimRandom

/// Simulates one phone under one policy for one replication.
///
/// The run is made of parts with one job each, every one in its own file: the energy books
/// and the battery (`EnergyBooks`, `BatteryLevels`, `Power.swift`), the radios and the
/// connection (`Radios`, `Network.swift`), the tasks (`TaskStore`, `TaskState`), the rules of
/// submitting (`Submission.swift`), running (`Execution.swift`) and ending them
/// (`TaskEnds.swift`), the app life cycle (`AppLife.swift`), the person (`Person.swift`), the
/// gates and the policy (`Decisions.swift`), and each other door into the background
/// (`Mechanisms/`). This file holds them together: it makes them, runs the loop and hands
/// each event to the part that owns it.
///
/// It is generic over the policy and the sink so that both are specialised, not called
/// through existentials, in the hot loop. A simulation cannot be copied (`~Copyable`): it is
/// made, run and read.
package struct PhoneSimulation<Policy: SchedulingPolicy, Sink: MetricsSink>: ~Copyable {
    let setup: PhoneSetup
    /// What each app's code does, in flat tables.
    let model: PhoneModel
    var policy: Policy
    /// What the run records; read it after `run()`.
    package internal(set) var sink: Sink
    var streams: WorldStreams
    /// Per app, its declared streams (`streams.declared`) as a list: an app has a few, and a
    /// search of short names costs less than hashing one (`stream(_:_:)`).
    let declaredStreams: [[(name: String, stream: RandomStream)]]
    var world: WorldTimeline
    var sim: Simulator<PhoneEvent>
    var books: EnergyBooks
    var levels: BatteryLevels
    var radios: Radios
    /// Per link, the timer at its head transfer's completion (`Network.swift`).
    let transferTimers: [TimerID]
    var tasks = TaskStore<TaskState>()
    /// Tasks running now (`Execution.swift`).
    var running = RunningTasks()
    var apps: AppRuntimes
    var person: PersonState
    var decisions: Decisions
    /// The declared mechanisms some app uses, by registry index (`MechanismHosting.swift`).
    var mechanisms: [(any Mechanism)?]
    /// The mechanism being called, whose events `schedule` makes (`MechanismHosting.swift`).
    var activeMechanism = ActiveMechanism()
    /// Per app, the mechanisms told of its every task (`Mechanism.observesTasks`).
    let taskObservers: [[Int]]
    /// Per hook, the registry indexes of the mechanisms made that implement it, in order: what
    /// each call into them loops over (nothing, in a run that uses none).
    let hookUsers: [[Int]]
    /// The charger's steps, Optimized Battery Charging's release, when power last changed and
    /// since when the phone is off (`Power.swift`).
    var power = PowerState()
    /// After the horizon: running tasks finish; no new work starts.
    private(set) var draining = false
    /// Why the run stopped early, if it did: an event storm, with what caused its last event.
    package private(set) var eventStorm: String?

    /// Empty, so that a simulation is always destroyed by this module's code, which knows the
    /// internal task store and its deinit. Without it, a test module that imports Scheduling
    /// without `@testable` crashed in the destroy code it generated for a simulation (Swift
    /// 6.3, debug build; TraceTests).
    deinit {}

    /// A simulation of `setup` under `policy`, recording to `sink`, with the world drawn from `streams`.
    package init(setup: PhoneSetup, policy: Policy, sink: Sink, streams: WorldStreams) {
        precondition(streams.apps.count == setup.apps.count, "one random stream per app")
        self.setup = setup
        self.model = PhoneModel(setup)
        self.policy = policy
        self.sink = sink
        self.streams = streams
        self.declaredStreams = streams.declared.map { $0.map { ($0.key, $0.value) } }
        // The person a week at a time, unless the policy sees the future.
        self.world = WorldTimeline(setup: setup, streams: streams, whole: policy.seesTheFuture)
        var sim = Simulator<PhoneEvent>(capacity: 2 * setup.apps.count + 32)
        self.levels = BatteryLevels(setup, timer: sim.makeTimer())
        self.decisions = Decisions(timer: sim.makeTimer())
        var radios = Radios(setup.network)
        if sink.observesRadioStates { for r in radios.links.indices { radios.links[r].stateLog = [] } }
        self.transferTimers = radios.links.indices.map { _ in sim.makeTimer() }
        self.radios = radios
        self.sim = sim
        self.books = EnergyBooks(setup, chargeCurveObserved: sink.observesChargeCurve)
        self.apps = AppRuntimes(
            setup.apps.map {
                AppRuntime(
                    scheduler: BGTaskScheduler(permitted: $0.permitted, refreshMode: $0.declares(.fetch), processingMode: $0.declares(.processing)))
            })
        self.person = PersonState(apps: setup.apps.count, since: world.historySince, history: world.history)
        let mechanisms = Self.makeMechanisms(setup)
        self.mechanisms = mechanisms
        self.taskObservers = Self.taskObservers(mechanisms, apps: setup.apps.count)
        self.hookUsers = Self.hookUsers(mechanisms)
    }

    /// Battery watches started so far (`BatteryLevels.watchCount`), for tests.
    var batteryWatches: Int { levels.watchCount }

    /// Runs to the horizon, lets tasks still running finish, and returns the sink.
    ///
    /// Specialised here for the box every scenario's policy runs in, with `StandardSink`:
    /// callers in other modules would otherwise run the unspecialised generic code, which looks
    /// up the metadata of the nested generic types at run time (about 40% of a run's time in a
    /// profile).
    @_specialize(exported:true,where Policy == DynamicPolicy, Sink == StandardSink)
    package mutating func run() -> Sink {
        let horizon = SimInstant.after(setup.duration)
        if policy.seesTheFuture {
            policy.foresee(FutureWorld(timeline: world, horizon: horizon, launchDownBytes: setup.apps.map(\.launchDownBytes)))
        }
        startWorld()
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
        while !running.isEmpty, let event = sim.step(before: drainEnd) {
            handle(event)
            count &+= 1
            if count & Self.stormCheckMask == 0 {
                if sim.now - checkpoint < .seconds(1) { return stopStorm(event) }
                checkpoint = sim.now
            }
        }
        var cut = false
        if !running.isEmpty {
            cut = true
            account(to: drainEnd, through: false)
            for i in running where tasks[i].status == .running {
                finish(TaskID(i), tasks[i].kind.isMode ? .completed : .killed, at: drainEnd, suspendIfIdle: false)
            }
        }
        #if BGSIM_EVENT_COSTS
        EventCosts.loopNanos += EventCosts.now() - loopStarted
        EventCosts.runs += 1
        #endif
        let end = cut ? drainEnd : max(sim.now, horizon)
        account(to: end, through: false)
        endRun(at: end)
        return sink
    }

    /// The world's first events, the requests pending at the start, and the battery's first level.
    mutating func startWorld() {
        startCharger()
        if let first = world.networkChange(0) {
            if first.time == .start { changeNetwork(0) } else { scheduleWorld(.network(0), at: first.time) }
        }
        if let first = world.launch(0) { scheduleWorld(.person(.launch(0)), at: first.start) }
        if let first = world.call(0) { scheduleWorld(.person(.call(0)), at: first.start) }
        if let first = world.purge(0) { scheduleWorld(.person(.purge(0)), at: first.time) }
        if let first = world.interruption(0) { scheduleWorld(.person(.interrupt(0)), at: first.start) }
        if !setup.load.isNone { changeLoad(0) }
        submitInitialRequests()
        mechanismsStart()
        // Low Power Mode set on in the scenario is on from the start: said, so that the
        // timeline and the event log show it.
        if books.lowPower { sink.worldEvent(.lowPowerMode(on: true), at: .start) }
        sink.chargeObserved(books.battery.charge, at: .start)
        rescheduleBattery()
        syncTransfers()
    }

    /// Every 16,384 events the loop checks that simulated time moved at least a second: a
    /// faster pace is an event storm (a task resubmitted every microsecond, say), which would
    /// run on for ever.
    fileprivate static var stormCheckMask: Int { (1 << 14) - 1 }

    /// How long after the horizon the work still running may go on (longer than any budget a
    /// study would set); what runs then is cut: killed, or for a mode session completed.
    fileprivate static var longestDrain: SimDuration { .days(7) }

    fileprivate mutating func stopStorm(_ event: PhoneEvent) -> Sink {
        var what: String
        switch event {
        case .eligible(let id), .phaseEnd(let id), .cpuMonitor(let id):
            what = "task '\(identifier(of: id.rawValue))' of app \(setup.apps[tasks[id.rawValue].appIndex].name)"
        case .person: what = "the person's use of the phone"
        case .power(.load): what = "the bench load's steps"
        default: what = "\(event)"
        }
        eventStorm = "more than 16384 events within a simulated second at \(sim.now), the last from \(what)"
        return sink
    }

    mutating func scheduleWorld(_ event: PhoneEvent, at time: SimInstant) {
        sim.schedule(event, at: max(time, sim.now), priority: PhoneEvent.worldPriority)
    }

    // MARK: - Events

    fileprivate mutating func handle(_ event: PhoneEvent) {
        #if BGSIM_EVENT_COSTS
        let started = EventCosts.now()
        defer {
            EventCosts.counts[event.costIndex] += 1
            EventCosts.nanos[event.costIndex] += EventCosts.now() - started
        }
        #endif
        // The links' heads may have changed: their tasks' ends and the links' timers move.
        defer { syncTransfers() }
        if case .power(.watchEnded) = event {
            batteryWatchEnded()
            return
        }
        advanceToEvent()
        // Whether anything a policy sees may have changed: a radio's transition, a purge, a
        // session's chunk, the moment before suspension and an interruption change nothing
        // it sees; after the horizon new work and decisions stop.
        var consult = true
        switch event {
        case .power(let e): consult = handlePower(e)
        case .person(let e): consult = handlePerson(e)
        case .network(let i): changeNetwork(i)
        case .eligible(let id): if draining { return } else { makeEligible(id) }
        case .phaseEnd(let id): consult = phaseEnded(id)
        case .cpuMonitor(let id): cpuMonitorFired(id)
        case .suspend(let app):
            suspendAfterLeaving(app)
            consult = false
        case .policyWake: if draining { return }
        case .mechanism(let packed): consult = mechanismEvent(packed)
        case .transferDone(let r):
            // The next transfer's task gets its end after the event (`syncTransfers`).
            radios.synced[r].due = nil
            consult = false
        }
        switch event {
        case .power(.plugIn), .power(.unplug), .power(.level), .network, .person(.launch), .person(.leave):
            // What discretionary transfers and held pushes wait for may have changed.
            mechanismsGatesChanged()
        default: break
        }
        if consult && !draining { consultPolicy() }
        // After the decision, which may have started work.
        rescheduleBattery()
        // Between events nothing refers to an ended task but through its parked record.
        if tasks.wantsCompaction {
            tasks.compact { id, state in state.status != .ended || state.flags.contains(.awaitingTail) }
        }
    }

    /// Ends the run at `end`: tasks still waiting never ran, tails still going are reported
    /// with their shares so far, and the totals go to the sink.
    fileprivate mutating func endRun(at end: SimInstant) {
        // Tails still running at the end: their shares so far are all there is.
        for i in tasks.keptIDs where tasks[i].flags.contains(.awaitingTail) { report(i) }
        for index in tasks.keptIDs {
            switch tasks[index].status {
            case .waiting, .eligible: finish(TaskID(index), .neverRun, at: end)
            case .running: preconditionFailure("task \(index) still running after the drain")
            case .ended: break
            }
        }
        assert(tasks.keptIDs.allSatisfy { tasks[$0].status == .ended }, "a task has no final state")
        var onNetwork: [SimDuration] = []
        for k in NetworkKind.allCases.indices { onNetwork.append(SimDuration(microseconds: books.onNetwork[k])) }
        var totals = RunTotals(
            end: end, energy: books.energy, components: books.components, offSince: books.isOn ? nil : power.offSince,
            screenOn: books.screenOnTime, lowPower: books.lowPowerTime, onNetwork: onNetwork,
            sessions: world.sessionsBeforeHorizon, launches: world.launchesBeforeHorizon)
        totals.launchPredictability = world.launchHours.predictability
        (totals.promotions, totals.taskPromotions) = radios.totalPromotions
        totals.backgroundFromBatteryJ = books.backgroundFromBatteryJ
        totals.scheduledFromBatteryJ = books.scheduledFromBatteryJ
        totals.backgroundJ = books.backgroundJ
        totals.foregroundJ = books.foregroundJ
        if sink.observesRadioStates {
            for kind in [NetworkKind.wifi, .cellular] {
                if let r = Radios.link(for: kind) { sink.radioStates(kind, radios.links[r].stateLog ?? []) }
            }
        }
        sink.runEnded(totals)
    }
}
