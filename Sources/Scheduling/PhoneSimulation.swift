import PhoneWorld
import SimEngine
import SimRandom

/// Everything that defines the simulated phone, its person and its apps, apart from the policy.
public struct PhoneSetup: Equatable, Sendable {
    /// Simulated time span, from midnight of day 0 (a Monday).
    public var duration: SimDuration = .days(7)
    public var battery = BatteryParameters()
    public var power = PowerParameters()
    /// When the person charges (and, under Optimized Battery Charging, the unplug time the
    /// phone predicts), unless `chargingTrace` replays the sessions.
    public var charging = ChargingHabit()
    public var chargingTrace: [ChargingSession]?
    /// How fast a connected charger fills the battery.
    public var charger = ChargingCurve()
    /// Where the phone is connected and with which radios, unless `networkTrace` replays the
    /// connection (the radios still come from `network`).
    public var network = NetworkEnvironment()
    public var networkTrace: [NetworkChange]?
    /// How the person uses the phone, unless `peopleTrace` replays launches, calls and purges
    /// (the Low Power Mode answer still comes from `people`).
    public var people = PeopleParameters.absent
    public var peopleTrace: PeopleTimeline?
    public var settings = Settings()
    public var apps: [AppParameters] = []
    /// Time a refresh task may run before it expires: "up to 30 seconds" (FACTS.md §2).
    public var refreshBudget: SimDuration = .seconds(30)

    public init() {}
}

/// The random streams of one replication, one per exogenous source (FACTS.md §10), so that
/// within a replication every policy sees the same world.
///
/// Streams are named `charger`, `network`, `people`, `purges`, `low-power` and
/// `app.<name>`, so adding an app or changing one source's parameters does not change the
/// numbers any other source draws.
public struct WorldStreams {
    public var charger: RandomStream
    public var network: RandomStream
    public var people: RandomStream
    public var purges: RandomStream
    /// One draw per Low Power Mode prompt, in prompt order.
    public var lowPower: RandomStream
    public var apps: [RandomStream]

    public init(setup: PhoneSetup, masterSeed: UInt64, point: UInt64 = 0, replication: UInt64,
                generator: GeneratorKind = .mt19937) throws(RandomStreamError) {
        func stream(_ name: String) throws(RandomStreamError) -> RandomStream {
            try RandomStream(StreamID(masterSeed: masterSeed, point: point, replication: replication, name: name),
                             kind: generator)
        }
        charger = try stream("charger")
        network = try stream("network")
        people = try stream("people")
        purges = try stream("purges")
        lowPower = try stream("low-power")
        var apps: [RandomStream] = []
        for app in setup.apps { apps.append(try stream("app.\(app.name)")) }
        self.apps = apps
    }
}

/// The exogenous world of one replication, drawn before the run (or taken from traces): the
/// same for every policy.
public struct WorldTimeline: Sendable {
    public var charging: [ChargingSession]
    public var network: [NetworkChange]
    public var people: PeopleTimeline

    public init(setup: PhoneSetup, streams: WorldStreams) {
        let horizon = SimInstant.after(setup.duration)
        charging = setup.chargingTrace ?? setup.charging.sessions(until: horizon, stream: streams.charger)
        network = setup.networkTrace ?? setup.network.changes(until: horizon, stream: streams.network)
        people = setup.peopleTrace ?? setup.people.timeline(
            until: horizon, appWeights: setup.apps.map(\.usageWeight), people: streams.people, purges: streams.purges)
    }
}

/// Simulates one phone under one policy for one replication.
///
/// The loop owns the world's state (battery, charger, radios, the person's use, settings,
/// running tasks), applies the gates the system enforces, asks the policy at decision
/// points, and reports to a metrics sink. It is generic over the policy and the sink so that
/// both are specialised, not called through existentials, in the hot loop.
///
/// Energy is integrated exactly: every component's power is constant between events, and
/// every instant at which one changes (a radio's phase, the battery reaching a level that
/// matters) is itself an event, rescheduled whenever the load changes.
public struct PhoneSimulation<Policy: SchedulingPolicy, Sink: MetricsSink> {
    enum Event {
        case plugIn, unplug
        case submit(app: Int)
        case eligible(TaskID)
        /// The task's work is done or its budget is up, whichever is first.
        case taskEnd(TaskID)
        /// The battery reached a level that was being waited for (empty, boot level, a level
        /// of the charging curve, a Low Power Mode level).
        case batteryLevel
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
    }

    enum Status: Equatable {
        case waiting, eligible, running
        case ended(TaskOutcome)
    }

    struct TaskState {
        var request: TaskRequest
        var status: Status = .waiting
        var started: SimInstant?
        /// When the CPU work ends, once the fetch is done.
        var workEnd: SimInstant?
        var radioJ = 0.0
        var eligibleEvent: EventHandle?
        var endEvent: EventHandle?
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
    public private(set) var sink: Sink
    var streams: WorldStreams
    let world: WorldTimeline
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
    /// Sum of the CPU power of running tasks, in watts.
    var taskPowerW = 0.0
    var runningCount = 0

    // The person and the network.
    var networkState = NetworkState.disconnected
    var links: [RadioLink]
    var radioEvents: [(handle: EventHandle, at: SimInstant)?] = [nil, nil]
    /// Fetches waiting for a connection.
    var heldTransfers: [Transfer] = []
    /// The launch in the foreground, as an index into the timeline's launches.
    var foreground: Int?
    var inCall = false
    /// Apps suspended in memory (opened by the person, not swiped away or purged since).
    var inMemory: [Bool]
    var lowPower = false
    /// Prompt levels already offered since the last charge.
    var prompted: Set<Double> = []
    var screenOnTime = SimDuration.zero
    var lowPowerTime = SimDuration.zero
    var onNetwork = [SimDuration](repeating: .zero, count: NetworkKind.allCases.count)

    var tasks: [TaskState] = []
    /// The app's request that has not started yet, if any (one refresh request per app).
    var waitingByApp: [TaskID?]
    /// Requests past `earliestBeginDate`, in the order they became eligible.
    var eligible: [EligibleTask] = []
    var batteryEvent: EventHandle?
    var policyWake: EventHandle?
    /// After the horizon: running tasks finish; no new work starts.
    var draining = false

    public init(setup: PhoneSetup, policy: Policy, sink: Sink, streams: WorldStreams) {
        precondition(streams.apps.count == setup.apps.count, "one random stream per app")
        self.setup = setup
        self.policy = policy
        self.sink = sink
        self.streams = streams
        self.world = WorldTimeline(setup: setup, streams: streams)
        self.sim = Simulator(capacity: 2 * setup.apps.count + 32)
        self.battery = Battery(setup.battery)
        self.waitingByApp = Array(repeating: nil, count: setup.apps.count)
        self.inMemory = Array(repeating: false, count: setup.apps.count)
        self.links = [RadioLink(profile: setup.network.wifiRadio), RadioLink(profile: setup.network.cellularRadio)]
        self.lowPower = setup.settings.lowPowerMode == .on
    }

    /// Runs to the horizon, lets tasks still running finish, and returns the sink.
    ///
    /// Specialised here for the built-in policies with `RunMetrics`: callers in other modules
    /// would otherwise run the unspecialised generic code, which looks up the metadata of the
    /// nested generic types at run time (about 40% of a run's time in a profile).
    @_specialize(exported: true, where Policy == EagerPolicy, Sink == RunMetrics)
    @_specialize(exported: true, where Policy == ChargeOnlyPolicy, Sink == RunMetrics)
    public mutating func run() -> Sink {
        let horizon = SimInstant.after(setup.duration)
        for session in world.charging {
            if session.start == .start { plugIn() } else { sim.schedule(.plugIn, at: session.start, priority: Self.worldPriority) }
            sim.schedule(.unplug, at: session.end, priority: Self.worldPriority)
        }
        if let first = world.network.first {
            if first.time == .start { changeNetwork(0) } else { scheduleWorld(.network(0), at: first.time) }
        }
        if let first = world.people.launches.first { scheduleWorld(.launch(0), at: first.start) }
        if let first = world.people.calls.first { scheduleWorld(.call(0), at: first.start) }
        if let first = world.people.purges.first { scheduleWorld(.purge(0), at: first.time) }
        for (index, app) in setup.apps.enumerated() {
            // A random phase, so apps with equal intervals do not submit in lockstep.
            let phase = SimDuration(seconds: streams.apps[index].uniform() * app.refreshInterval.seconds)
            sim.schedule(.submit(app: index), at: .after(phase), priority: Self.arrivalPriority)
        }
        sink.chargeObserved(battery.charge, at: .start)
        rescheduleBatteryEvent()

        while let event = sim.step(before: horizon) { handle(event) }
        draining = true
        while runningCount > 0, let event = sim.step() { handle(event) }
        let end = max(sim.now, horizon)
        account(to: end)

        for index in tasks.indices {
            switch tasks[index].status {
            case .waiting, .eligible: finish(TaskID(index), .neverRun, at: end)
            case .running: preconditionFailure("task \(index) still running after the drain")
            case .ended: break
            }
        }
        assert(tasks.allSatisfy { if case .ended = $0.status { true } else { false } }, "a task has no final state")
        let launchesBefore = world.people.launches.prefix { $0.start < horizon }.count
        sink.runEnded(RunTotals(
            end: end, energy: energy, components: components, offSince: isOn ? nil : offSince,
            screenOn: screenOnTime, lowPower: lowPowerTime, onNetwork: onNetwork,
            sessions: world.people.sessionStarts.prefix { $0 < launchesBefore }.count, launches: launchesBefore))
        return sink
    }

    mutating func scheduleWorld(_ event: Event, at time: SimInstant) {
        sim.schedule(event, at: max(time, sim.now), priority: Self.worldPriority)
    }

    // MARK: - Events

    mutating func handle(_ event: Event) {
        account(to: sim.now)
        switch event {
        case .plugIn: plugIn()
        case .unplug: unplug()
        case .optimizedRelease: holding = false
        case .batteryLevel: batteryReachedLevel()
        case .network(let i): changeNetwork(i)
        case .radio(let r): radioTransition(Radio(rawValue: r)!)
        case .launch(let i): launch(i)
        case .leave(let i): leave(i)
        case .call(let i): startCall(i)
        case .callEnd: inCall = false; sink.worldEvent(.callEnded, at: sim.now)
        case .purge(let i): purge(i)
        case .taskEnd(let id): endRunningTask(id)
        case .submit(let app):
            // After the horizon the world goes on while the last tasks finish; new work and
            // decisions do not.
            if draining { return } else { submit(app: app) }
        case .eligible(let id):
            if draining { return } else { makeEligible(id) }
        case .policyWake:
            if draining { return } else { policyWake = nil }
        }
        rescheduleBatteryEvent()
        // A radio's phase or a purge changes nothing a policy sees; everything else may.
        switch event {
        case .radio, .purge: break
        default: if !draining { consultPolicy() }
        }
    }

    mutating func submit(app index: Int) {
        let app = setup.apps[index]
        sim.schedule(.submit(app: index), after: app.refreshInterval, priority: Self.arrivalPriority)
        // Drawn whether or not the phone is on, so the app's stream stays aligned across policies.
        let work = SimDuration(seconds: streams.apps[index].exponential(mean: app.meanTaskDuration.seconds))
        guard isOn else { return }
        if let old = waitingByApp[index] { finish(old, .replaced, at: sim.now) }
        let id = TaskID(tasks.count)
        let request = TaskRequest(
            id: id, app: index, kind: .refresh, submitted: sim.now,
            earliestBegin: sim.now + app.earliestBeginDelay, work: work,
            powerW: app.cpuPowerW ?? setup.power.cpuBackgroundW,
            upBytes: app.fetchUpBytes, downBytes: app.fetchDownBytes)
        tasks.append(TaskState(request: request))
        waitingByApp[index] = id
        tasks[id.rawValue].eligibleEvent = sim.schedule(.eligible(id), at: request.earliestBegin, priority: Self.arrivalPriority)
    }

    mutating func makeEligible(_ id: TaskID) {
        tasks[id.rawValue].eligibleEvent = nil
        guard tasks[id.rawValue].status == .waiting else { return }
        tasks[id.rawValue].status = .eligible
        let r = tasks[id.rawValue].request
        eligible.append(EligibleTask(id: id, app: r.app, kind: r.kind, submitted: r.submitted, earliestBegin: r.earliestBegin))
    }

    /// Starts a task: its CPU draws power from now; its fetch goes to the connected radio (or
    /// waits for a connection); its budget runs from now.
    mutating func start(_ id: TaskID) {
        require(tasks[id.rawValue].status == .eligible, "policy \(policy.name) started \(id), which is not eligible")
        let r = tasks[id.rawValue].request
        tasks[id.rawValue].status = .running
        tasks[id.rawValue].started = sim.now
        if waitingByApp[r.app] == id { waitingByApp[r.app] = nil }
        taskPowerW += r.powerW
        runningCount += 1
        let transfer = Transfer(owner: .task(id.rawValue), upBytes: r.upBytes, downBytes: r.downBytes)
        if transfer.isEmpty {
            workStarts(id)
        } else {
            tasks[id.rawValue].endEvent = sim.schedule(.taskEnd(id), after: setup.refreshBudget, priority: Self.taskEndPriority)
            send(transfer)
        }
    }

    /// The fetch is done (or there was none): the CPU work runs to its end or the budget.
    mutating func workStarts(_ id: TaskID) {
        let t = tasks[id.rawValue]
        let workEnd = sim.now + t.request.work
        tasks[id.rawValue].workEnd = workEnd
        if let h = t.endEvent { sim.cancel(h) }
        tasks[id.rawValue].endEvent = sim.schedule(
            .taskEnd(id), at: min(workEnd, t.started! + setup.refreshBudget), priority: Self.taskEndPriority)
    }

    mutating func endRunningTask(_ id: TaskID) {
        let t = tasks[id.rawValue]
        tasks[id.rawValue].endEvent = nil
        finish(id, t.workEnd.map { sim.now >= $0 } == true ? .completed : .expired, at: sim.now)
    }

    /// Moves a request to its final state and reports it.
    mutating func finish(_ id: TaskID, _ outcome: TaskOutcome, at time: SimInstant) {
        var t = tasks[id.rawValue]
        if case .ended(let earlier) = t.status { preconditionFailure("\(id) ended twice: \(earlier), then \(outcome)") }
        var energyJ = 0.0
        switch t.status {
        case .running:
            taskPowerW -= t.request.powerW
            runningCount -= 1
            if runningCount == 0 { taskPowerW = 0 }  // no drift from repeated float subtraction
            if t.workEnd == nil {
                // Ended first, so a fetch that happens to finish at this instant does not
                // start the work of a task that is over.
                tasks[id.rawValue].status = .ended(outcome)
                cancelTransfer(of: id)
                t.radioJ = tasks[id.rawValue].radioJ
            }
            if let h = t.endEvent { sim.cancel(h) }
            t.endEvent = nil
            energyJ = t.request.powerW * (time - t.started!).seconds + t.radioJ
        case .eligible:
            eligible.removeAll { $0.id == id }
        case .waiting:
            if let h = t.eligibleEvent { sim.cancel(h) }
        case .ended: preconditionFailure("unreachable")
        }
        if waitingByApp[t.request.app] == id { waitingByApp[t.request.app] = nil }
        t.status = .ended(outcome)
        tasks[id.rawValue] = t
        sink.taskEnded(TaskRecord(request: t.request, started: t.started, ended: time, outcome: outcome,
                                  energyJ: energyJ, radioEnergyJ: t.radioJ))
    }

    // MARK: - Network and radios

    /// The radio the current connection uses, if any.
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
        sink.worldEvent(.network(change.state), at: sim.now)
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
            let held = heldTransfers
            heldTransfers.removeAll()
            for t in held { links[new.rawValue].enqueue(t, at: sim.now) }
            syncRadioEvent(new)
        }
    }

    /// Sends a transfer over the current connection, or holds it until there is one.
    mutating func send(_ transfer: Transfer) {
        guard let r = currentRadio else {
            heldTransfers.append(transfer)
            return
        }
        advanceRadio(r)
        links[r.rawValue].enqueue(transfer, at: sim.now)
        syncRadioEvent(r)
    }

    mutating func cancelTransfer(of id: TaskID) {
        heldTransfers.removeAll { $0.owner == .task(id.rawValue) }
        for raw in 0..<2 {
            let r = Radio(rawValue: raw)!
            advanceRadio(r)
            links[r.rawValue].cancel(.task(id.rawValue), at: sim.now)
            syncRadioEvent(r)
        }
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
        if case .task(let i) = done, tasks[i].status == .running { workStarts(TaskID(i)) }
    }

    mutating func syncRadioEvent(_ r: Radio) {
        let next = links[r.rawValue].nextEvent
        if let scheduled = radioEvents[r.rawValue] {
            if next == scheduled.at { return }
            sim.cancel(scheduled.handle)
        }
        radioEvents[r.rawValue] = next.map { (sim.schedule(.radio(r.rawValue), at: $0, priority: Self.worldPriority), $0) }
    }

    // MARK: - The person

    mutating func launch(_ i: Int) {
        let l = world.people.launches[i]
        if i + 1 < world.people.launches.count { scheduleWorld(.launch(i + 1), at: world.people.launches[i + 1].start) }
        scheduleWorld(.leave(i), at: l.end)
        foreground = i
        sink.worldEvent(.launch(app: l.app), at: sim.now)
        guard isOn, let app = l.app else { return }
        inMemory[app] = true
        let bytes = setup.apps[app].launchDownBytes
        if bytes > 0 { send(Transfer(owner: .foreground, upBytes: 0, downBytes: bytes)) }
    }

    mutating func leave(_ i: Int) {
        let l = world.people.launches[i]
        if foreground == i { foreground = nil }
        if let app = l.app, l.swipedAway { inMemory[app] = false }
        sink.worldEvent(.leave(app: l.app, swipedAway: l.swipedAway), at: sim.now)
    }

    mutating func startCall(_ i: Int) {
        if i + 1 < world.people.calls.count { scheduleWorld(.call(i + 1), at: world.people.calls[i + 1].start) }
        scheduleWorld(.callEnd(i), at: world.people.calls[i].end)
        inCall = true
        sink.worldEvent(.callStarted, at: sim.now)
    }

    mutating func purge(_ i: Int) {
        let p = world.people.purges[i]
        if i + 1 < world.people.purges.count { scheduleWorld(.purge(i + 1), at: world.people.purges[i + 1].time) }
        let foregroundApp = foreground.flatMap { world.people.launches[$0].app }
        let suspended = inMemory.indices.filter { inMemory[$0] && $0 != foregroundApp }
        var victim: Int?
        if let named = p.app {
            victim = suspended.contains(named) ? named : nil
        } else if !suspended.isEmpty {
            victim = suspended[min(Int(p.pick * Double(suspended.count)), suspended.count - 1)]
        }
        if let victim { inMemory[victim] = false }
        sink.worldEvent(.purge(app: victim), at: sim.now)
    }

    // MARK: - Power and battery

    var radioW: Double { links[0].powerW + links[1].powerW }
    var screenOn: Bool { foreground != nil }
    var loadW: Double {
        guard isOn else { return 0 }
        var w = setup.battery.idleDrainW + taskPowerW + radioW
        if screenOn { w += setup.power.screenW + setup.power.cpuForegroundW }
        if inCall { w += setup.power.callW }
        return w
    }
    /// Available energy at which a phone that shut down boots again.
    var bootLevelJ: Double { setup.battery.bootCharge * battery.availableCapacityJ }
    /// Power the charger delivers: the load first, plus what the battery accepts at its
    /// charge, up to the charger's peak.
    var chargerW: Double {
        guard isCharging else { return 0 }
        let accepted = setup.charger.acceptedW(charge: battery.charge, holding: holding)
        return min(setup.charger.peakW, loadW + accepted)
    }

    mutating func plugIn() {
        isCharging = true
        prompted.removeAll()
        sink.worldEvent(.plugIn, at: sim.now)
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
        holding = false
        if let h = optimizedRelease { sim.cancel(h) }
        optimizedRelease = nil
        sink.worldEvent(.unplug, at: sim.now)
    }

    /// Integrates energy from the last accounting to `time` at the (constant) current load,
    /// and books it by component.
    mutating func account(to time: SimInstant) {
        guard time > accountedUntil else { return }
        let dt = time - accountedUntil
        let s = dt.seconds
        if isOn {
            components.baselineJ += setup.battery.idleDrainW * s
            components.cpuBackgroundJ += taskPowerW * s
            if screenOn {
                components.screenJ += setup.power.screenW * s
                components.cpuForegroundJ += setup.power.cpuForegroundW * s
                screenOnTime += dt
            }
            if inCall { components.callJ += setup.power.callW * s }
            for r in 0..<2 {
                let link = links[r]
                let j = link.powerW * s
                guard j > 0 else { continue }
                switch link.chargedTo {
                case .task(let i): tasks[i].radioJ += j; components.radioActiveJ += j
                case .foreground: components.radioActiveJ += j
                case nil: components.radioTailJ += j
                }
            }
            if lowPower { lowPowerTime += dt }
        }
        onNetwork[networkState.kind.index] += dt
        let flow = battery.advance(by: dt, loadW: loadW, chargerW: chargerW)
        energy += flow
        accountedUntil = time
        assert(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ), "energy books do not balance: \(flow)")
        sink.chargeObserved(battery.charge, at: time)
    }

    mutating func batteryReachedLevel() {
        batteryEvent = nil
        let charge = battery.charge
        if isOn, battery.availableJ <= 1e-9 * battery.capacityJ {
            shutDown()
        } else if !isOn, isCharging, battery.availableJ >= bootLevelJ * (1 - 1e-12) {
            boot()
        } else if setup.settings.lowPowerMode == .auto {
            if lowPower, isCharging, charge >= setup.settings.lowPowerOffLevel - 1e-9 {
                setLowPower(false)
            } else if isOn, !lowPower, !isCharging,
                      let level = setup.settings.lowPowerPromptLevels.first(where: { !prompted.contains($0) && charge <= $0 + 1e-9 }) {
                // Every level passed at once is offered once; the person answers once.
                for l in setup.settings.lowPowerPromptLevels where charge <= l + 1e-9 { prompted.insert(l) }
                _ = level
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
        for index in tasks.indices where tasks[index].status == .running {
            if let h = tasks[index].endEvent { sim.cancel(h) }
            tasks[index].endEvent = nil
            finish(TaskID(index), .killed, at: sim.now)
        }
        // The radios go down with the phone, and what the person had open is gone.
        heldTransfers.removeAll()
        for raw in 0..<2 {
            let r = Radio(rawValue: raw)!
            _ = links[r.rawValue].disconnect(at: sim.now)
            links[r.rawValue] = RadioLink(profile: links[r.rawValue].profile)
            syncRadioEvent(r)
        }
        for i in inMemory.indices { inMemory[i] = false }
    }

    mutating func boot() {
        isOn = true
        sink.phoneBooted(at: sim.now, offFor: sim.now - offSince!)
        offSince = nil
        if let r = currentRadio {
            links[r.rawValue].setThroughput(upMbps: networkState.upMbps, downMbps: networkState.downMbps, at: sim.now)
        }
    }

    /// Schedules the next battery level that changes the phone's state or the charger's power:
    /// the available energy running out while on, the boot level while off and charging, the
    /// next level of the charging curve while charging, and Low Power Mode's levels. A phone
    /// that died does not start by itself, even when a KiBaM battery recovers at rest: it
    /// needs the charger.
    mutating func rescheduleBatteryEvent() {
        if let h = batteryEvent { sim.cancel(h) }
        batteryEvent = nil
        let net = battery.netPowerW(loadW: loadW, chargerW: chargerW)
        var wait = isOn
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
            if isOn, !lowPower, !isCharging, net < 0 {
                // The highest prompt level still ahead (a loop, not filter: this runs per event).
                var next: Double?
                for level in setup.settings.lowPowerPromptLevels where level < battery.charge && !prompted.contains(level) {
                    next = max(next ?? level, level)
                }
                if let next { consider(next) }
            }
        }
        if let wait {
            batteryEvent = sim.schedule(.batteryLevel, after: wait, priority: Self.worldPriority)
        }
    }

    // MARK: - Policy

    /// Whether the settings let this request run now. Background App Refresh off (for the
    /// phone or the app) or Low Power Mode on: never; Wi-Fi only: only on Wi-Fi (FACTS.md §5).
    func settingsAllow(_ task: EligibleTask) -> Bool {
        guard setup.apps[task.app].backgroundRefresh, !lowPower else { return false }
        switch setup.settings.backgroundAppRefresh {
        case .off: return false
        case .wifi: return networkState.kind == .wifi
        case .wifiAndCellular: return true
        }
    }

    mutating func consultPolicy() {
        guard isOn, !eligible.isEmpty else { return }
        // Filtering copies; most of the time every request passes, and none needs to.
        let shown = eligible.allSatisfy(settingsAllow) ? eligible : eligible.filter(settingsAllow)
        guard !shown.isEmpty else { return }
        let state = DeviceState(now: sim.now, charge: battery.charge, isCharging: isCharging,
                                network: networkState.kind, inUse: screenOn, inCall: inCall, lowPowerMode: lowPower)
        let decision = policy.decide(state, eligible: shown)
        let ids: [TaskID]
        switch decision.start {
        case .none: ids = []
        case .all where shown.count == eligible.count:
            // Everything starts: no list of ids to build or search.
            let all = eligible
            eligible.removeAll(keepingCapacity: true)
            for task in all { start(task.id) }
            ids = []
            rescheduleBatteryEvent()
        case .all: ids = shown.map(\.id)
        case .some(let chosen):
            for id in chosen {
                require(shown.contains { $0.id == id }, "policy \(policy.name) chose \(id), which it was not shown")
            }
            ids = chosen
        }
        if !ids.isEmpty {
            eligible.removeAll { ids.contains($0.id) }
            for id in ids { start(id) }
            rescheduleBatteryEvent()
        }
        if let h = policyWake { sim.cancel(h) }
        policyWake = nil
        if let at = decision.reconsiderAt {
            // Strictly later: a policy woken at the instant it was asked could loop there forever.
            require(at > sim.now, "policy \(policy.name) asked to be woken at \(at), which is not after now (\(sim.now))")
            policyWake = sim.schedule(.policyWake, at: at, priority: Self.policyPriority)
        }
    }
}
