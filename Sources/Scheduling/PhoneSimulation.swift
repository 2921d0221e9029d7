import PhoneWorld
import SimEngine
import SimRandom

/// Everything that defines the simulated phone and its apps, apart from the policy.
public struct PhoneSetup: Equatable, Sendable {
    /// Simulated time span, from midnight of day 0.
    public var duration: SimDuration = .days(7)
    public var battery = BatteryParameters()
    /// When the person charges.
    public var charging = NightlyChargingParameters()
    /// How fast a connected charger fills the battery.
    public var charger = ChargingCurve()
    public var apps: [AppParameters] = []
    /// Time a refresh task may run before it expires: "up to 30 seconds" (FACTS.md §2).
    public var refreshBudget: SimDuration = .seconds(30)

    public init() {}
}

/// The random streams of one replication, one per exogenous source (FACTS.md §10).
///
/// Streams are named `charger` and `app.<name>`, so adding an app does not change the
/// numbers any other source draws.
public struct WorldStreams {
    public var charger: RandomStream
    public var apps: [RandomStream]

    public init(setup: PhoneSetup, masterSeed: UInt64, point: UInt64 = 0, replication: UInt64,
                generator: GeneratorKind = .mt19937) throws(RandomStreamError) {
        func stream(_ name: String) throws(RandomStreamError) -> RandomStream {
            try RandomStream(StreamID(masterSeed: masterSeed, point: point, replication: replication, name: name),
                             kind: generator)
        }
        charger = try stream("charger")
        var apps: [RandomStream] = []
        for app in setup.apps { apps.append(try stream("app.\(app.name)")) }
        self.apps = apps
    }
}

/// Simulates one phone under one policy for one replication.
///
/// The loop owns the world's state (battery, charger, running tasks), applies the gates the
/// system enforces, asks the policy at decision points, and reports to a metrics sink. It is
/// generic over the policy and the sink so that both are specialised, not called through
/// existentials, in the hot loop.
///
/// Energy is integrated exactly: load and charger power are constant between events, and the
/// instant the battery empties (or, while off and charging, reaches its boot level) is itself
/// an event, rescheduled whenever the load changes.
public struct PhoneSimulation<Policy: SchedulingPolicy, Sink: MetricsSink> {
    enum Event {
        case plugIn, unplug
        case submit(app: Int)
        case eligible(TaskID)
        case taskEnd(TaskID)
        /// The battery reached the level that was being waited for (empty, or boot level).
        case batteryLevel
        /// Optimized Battery Charging stops holding, to finish by the predicted unplug.
        case optimizedRelease
        case policyWake
    }

    enum Status: Equatable {
        case waiting, eligible, running
        case ended(TaskOutcome)
    }

    struct TaskState {
        var request: TaskRequest
        var status: Status = .waiting
        var started: SimInstant?
        var eligibleEvent: EventHandle?
        var endEvent: EventHandle?
    }

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
    var sim: Simulator<Event>

    var battery: Battery
    var energy = EnergyFlow()
    var accountedUntil = SimInstant.start
    var isCharging = false
    /// Optimized Battery Charging is holding the charge at its hold level.
    var holding = false
    var optimizedRelease: EventHandle?
    var isOn = true
    var offSince: SimInstant?
    /// Sum of the power of running tasks, in watts.
    var taskPowerW = 0.0
    var runningCount = 0

    var tasks: [TaskState] = []
    /// The app's request that has not started yet, if any (one refresh request per app).
    var waitingByApp: [TaskID?]
    /// Requests past every gate, in the order they became eligible; shown to the policy.
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
        self.sim = Simulator(capacity: 2 * setup.apps.count + 16)
        self.battery = Battery(setup.battery)
        self.waitingByApp = Array(repeating: nil, count: setup.apps.count)
    }

    /// Runs to the horizon, lets tasks still running finish, and returns the sink.
    public mutating func run() -> Sink {
        let horizon = SimInstant.after(setup.duration)
        for session in setup.charging.sessions(until: horizon, stream: streams.charger) {
            if session.start == .start { plugIn() } else { sim.schedule(.plugIn, at: session.start, priority: Self.worldPriority) }
            sim.schedule(.unplug, at: session.end, priority: Self.worldPriority)
        }
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
        sink.runEnded(at: end, energy: energy, offSince: isOn ? nil : offSince)
        return sink
    }

    // MARK: - Events

    mutating func handle(_ event: Event) {
        account(to: sim.now)
        if draining {
            // The world goes on while the last tasks finish; new work and decisions do not.
            switch event {
            case .plugIn: plugIn()
            case .unplug: unplug()
            case .taskEnd(let id): endRunningTask(id)
            case .batteryLevel: batteryReachedLevel()
            case .optimizedRelease: holding = false
            case .submit, .eligible, .policyWake: return
            }
            rescheduleBatteryEvent()
            return
        }
        switch event {
        case .plugIn: plugIn()
        case .unplug: unplug()
        case .optimizedRelease: holding = false
        case .submit(let app): submit(app: app)
        case .eligible(let id): makeEligible(id)
        case .taskEnd(let id): endRunningTask(id)
        case .batteryLevel: batteryReachedLevel()
        case .policyWake: policyWake = nil
        }
        rescheduleBatteryEvent()
        consultPolicy()
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
            earliestBegin: sim.now + app.earliestBeginDelay, work: work, powerW: app.taskPowerW)
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

    mutating func start(_ id: TaskID) {
        require(tasks[id.rawValue].status == .eligible, "policy \(policy.name) started \(id), which is not eligible")
        let r = tasks[id.rawValue].request
        tasks[id.rawValue].status = .running
        tasks[id.rawValue].started = sim.now
        if waitingByApp[r.app] == id { waitingByApp[r.app] = nil }
        taskPowerW += r.powerW
        runningCount += 1
        let runFor = min(r.work, setup.refreshBudget)
        tasks[id.rawValue].endEvent = sim.schedule(.taskEnd(id), after: runFor, priority: Self.taskEndPriority)
    }

    mutating func endRunningTask(_ id: TaskID) {
        let t = tasks[id.rawValue]
        tasks[id.rawValue].endEvent = nil
        finish(id, t.request.work <= setup.refreshBudget ? .completed : .expired, at: sim.now)
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
            energyJ = t.request.powerW * (time - t.started!).seconds
        case .eligible:
            eligible.removeAll { $0.id == id }
        case .waiting:
            if let h = t.eligibleEvent { sim.cancel(h) }
        case .ended: preconditionFailure("unreachable")
        }
        if waitingByApp[t.request.app] == id { waitingByApp[t.request.app] = nil }
        t.status = .ended(outcome)
        tasks[id.rawValue] = t
        sink.taskEnded(TaskRecord(request: t.request, started: t.started, ended: time, outcome: outcome, energyJ: energyJ))
    }

    // MARK: - Power and battery

    var loadW: Double { isOn ? setup.battery.idleDrainW + taskPowerW : 0 }
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
    }

    /// Integrates energy from the last accounting to `time` at the (constant) current load.
    mutating func account(to time: SimInstant) {
        guard time > accountedUntil else { return }
        let flow = battery.advance(by: time - accountedUntil, loadW: loadW, chargerW: chargerW)
        energy += flow
        accountedUntil = time
        assert(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ), "energy books do not balance: \(flow)")
        sink.chargeObserved(battery.charge, at: time)
    }

    mutating func batteryReachedLevel() {
        batteryEvent = nil
        if isOn, battery.availableJ <= 1e-9 * battery.capacityJ {
            shutDown()
        } else if !isOn, isCharging, battery.availableJ >= bootLevelJ * (1 - 1e-12) {
            isOn = true
            sink.phoneBooted(at: sim.now, offFor: sim.now - offSince!)
            offSince = nil
        }
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
    }

    /// Schedules the next battery level that changes the phone's state or the charger's power:
    /// the available energy running out while on, the boot level while off and charging, the
    /// next level of the charging curve while charging. A phone that died does
    /// not start by itself, even when a KiBaM battery recovers at rest: it needs the charger.
    mutating func rescheduleBatteryEvent() {
        if let h = batteryEvent { sim.cancel(h) }
        batteryEvent = nil
        let net = battery.netPowerW(loadW: loadW, chargerW: chargerW)
        var wait = isOn
            ? battery.timeToEmpty(netPowerW: net)
            : isCharging ? battery.timeUntilAvailable(reaches: bootLevelJ, netPowerW: net) : nil
        // While charging, the charger's power changes at the knee, each taper step and the cap.
        if isCharging, net > 0, let level = setup.charger.nextLevel(after: battery.charge, holding: holding),
           let untilLevel = battery.timeToReach(level * battery.capacityJ, netPowerW: net) {
            wait = min(wait ?? untilLevel, untilLevel)
        }
        if let wait {
            batteryEvent = sim.schedule(.batteryLevel, after: wait, priority: Self.worldPriority)
        }
    }

    // MARK: - Policy

    mutating func consultPolicy() {
        guard isOn, !eligible.isEmpty else { return }
        let state = DeviceState(now: sim.now, charge: battery.charge, isCharging: isCharging)
        let decision = policy.decide(state, eligible: eligible)
        switch decision.start {
        case .none: break
        case .all:
            for task in eligible { start(task.id) }
            eligible.removeAll(keepingCapacity: true)
        case .some(let ids):
            for id in ids {
                require(eligible.contains { $0.id == id }, "policy \(policy.name) chose \(id), which it was not shown")
            }
            eligible.removeAll { ids.contains($0.id) }
            for id in ids { start(id) }
        }
        if decision.start != .none { rescheduleBatteryEvent() }
        if let h = policyWake { sim.cancel(h) }
        policyWake = nil
        if let at = decision.reconsiderAt {
            // Strictly later: a policy woken at the instant it was asked could loop there forever.
            require(at > sim.now, "policy \(policy.name) asked to be woken at \(at), which is not after now (\(sim.now))")
            policyWake = sim.schedule(.policyWake, at: at, priority: Self.policyPriority)
        }
    }
}
