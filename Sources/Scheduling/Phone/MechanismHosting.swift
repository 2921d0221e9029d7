import PhoneWorld
import SimEngine
import SimRandom

/// The declared mechanisms (`Mechanisms/Mechanism.swift`) in a phone's run: made when an app
/// declares their section, told of opens, swipes, pressure, their events and their tasks'
/// ends, and given the narrow view of the run that `MechanismHost` is.
///
/// Each call into a mechanism sets `activeMechanism.index`, whose events `schedule` makes, and puts
/// back the caller's as it returns: a mechanism's action (running a task, which may launch its
/// app) can call others (state preservation sees every task begin and every process start).
extension PhoneSimulation: MechanismHost {
    static func makeMechanisms(_ setup: PhoneSetup) -> [(any Mechanism)?] {
        precondition(MechanismRegistry.builtIn.count < 128, "a mechanism's index fits in the 7 bits its events keep for it")
        return MechanismRegistry.builtIn.map { type -> (any Mechanism)? in
            let sections = setup.apps.map { app in
                type.isList
                    ? app.mechanismLists[type.name].map { MechanismValues(entries: $0) }
                    : app.mechanisms[type.name].map { MechanismValues(given: $0) }
            }
            guard type.isUsed(by: setup) else { return nil }
            return type.init(apps: sections, system: MechanismValues(given: setup.system.mechanisms[type.name] ?? [:]))
        }
    }

    /// Calls `call` on each mechanism of `ks` (registry indexes), as the active one, and puts
    /// the caller's back after.
    @inline(__always)
    fileprivate mutating func each(_ ks: [Int], _ call: (any Mechanism, inout Self) -> Void) {
        guard !ks.isEmpty else { return }
        let caller = activeMechanism.index
        defer { activeMechanism.index = caller }
        for k in ks {
            activeMechanism.index = k
            call(mechanisms[k]!, &self)
        }
    }

    /// Calls `call` on mechanism `k`, likewise.
    @inline(__always)
    fileprivate mutating func one<T>(_ k: Int, _ call: (any Mechanism, inout Self) -> T) -> T {
        let caller = activeMechanism.index
        defer { activeMechanism.index = caller }
        activeMechanism.index = k
        return call(mechanisms[k]!, &self)
    }

    /// Per hook (its bit's position in `MechanismHooks`), the mechanisms made that implement
    /// it, by registry index.
    static func hookUsers(_ mechanisms: [(any Mechanism)?]) -> [[Int]] {
        MechanismHooks.named.map { _, hook in mechanisms.indices.filter { k in mechanisms[k].map { type(of: $0).hooks.contains(hook) } ?? false } }
    }

    /// The mechanisms that implement `hook`.
    @inline(__always)
    fileprivate func users(_ hook: MechanismHooks) -> [Int] { hookUsers[hook.rawValue.trailingZeroBitCount] }

    mutating func mechanismsStart() { each(users(.start)) { $0.start(&$1) } }
    mutating func mechanismsGatesChanged() { each(users(.gatesChanged)) { $0.gatesChanged(&$1) } }
    mutating func mechanismsAppOpened(_ app: Int) { each(users(.appOpened)) { $0.appOpened(app, &$1) } }
    mutating func mechanismsPersonLaunched(_ app: Int, until: SimInstant) { each(users(.personLaunched)) { $0.personLaunched(app, until: until, &$1) } }
    mutating func mechanismsAppEnteredBackground(_ app: Int) { each(users(.appEnteredBackground)) { $0.appEnteredBackground(app, &$1) } }
    mutating func mechanismsAppLeft(_ app: Int, swiped: Bool) { each(users(.appLeft)) { $0.appLeft(app, swiped: swiped, &$1) } }
    mutating func mechanismsAppSwipedAway(_ app: Int) { each(users(.appSwipedAway)) { $0.appSwipedAway(app, &$1) } }
    mutating func mechanismsPlaceChanged(left: String?, entered: String?) {
        each(users(.placeChanged)) { $0.placeChanged(left: left, entered: entered, &$1) }
    }
    mutating func mechanismsUnderPressure() { each(users(.pressure)) { $0.pressure(&$1) } }
    mutating func mechanismsAppEnteredForeground(_ app: Int) { each(users(.appEnteredForeground)) { $0.appEnteredForeground(app, &$1) } }
    mutating func mechanismsProcessStarted(_ app: Int) { each(users(.processStarted)) { $0.processStarted(app, &$1) } }
    mutating func mechanismsProcessEnded(_ app: Int, cause: LifecycleCause) { each(users(.processEnded)) { $0.processEnded(app, cause: cause, &$1) } }
    mutating func mechanismsTaskBegins(_ i: Int, app: Int) { each(taskObservers[app]) { $0.anyTaskBegins(i, &$1) } }
    mutating func mechanismsTaskEnded(_ i: Int, app: Int, resultReady: Bool) {
        each(taskObservers[app]) { $0.anyTaskEnded(i, resultReady: resultReady, &$1) }
    }

    /// Whether the policy decides after it: not after a task's step.
    mutating func mechanismEvent(_ packed: Int) -> Bool {
        one(packed & 0x7F) { $0.event(packed >> 8, &$1) }
        return packed & 0x80 == 0
    }

    /// The mechanism that declared task `i`'s kind.
    func owner(of i: Int) -> Int { MechanismRegistry.kindOwners[tasks[i].kind.index - TaskKind.builtIn.count] }
    mutating func mechanismTaskStarted(_ i: Int) { one(owner(of: i)) { $0.taskStarted(i, &$1) } }
    mutating func mechanismTaskEnded(_ i: Int, _ outcome: TaskOutcome) { one(owner(of: i)) { $0.taskEnded(i, outcome, &$1) } }

    /// Per app, the mechanisms that observe its tasks.
    static func taskObservers(_ mechanisms: [(any Mechanism)?], apps: Int) -> [[Int]] {
        (0..<apps).map { app in mechanisms.indices.filter { mechanisms[$0]?.observesTasks(of: app) == true } }
    }

    // MARK: - What a mechanism sees

    /// The simulated time now.
    package var now: SimInstant { sim.now }
    /// After the horizon.
    package var isDraining: Bool { draining }
    /// The horizon.
    package var horizon: SimInstant { .after(setup.duration) }
    /// The scenario.
    package var scenario: PhoneSetup { setup }
    /// Whether the phone is on.
    package var phoneIsOn: Bool { books.isOn }
    /// Whether Low Power Mode is on.
    package var lowPowerMode: Bool { books.lowPower }
    /// Whether a charger powers the phone.
    package var isCharging: Bool { books.isCharging }
    /// The battery's charge, a fraction.
    package var charge: Double { books.battery.charge }
    /// The connection in use.
    package var connection: NetworkKind { radios.connection.kind }
    /// The setting is not off, and the app's switch is on.
    package func backgroundAppRefresh(_ app: Int) -> Bool { setup.settings.backgroundAppRefresh != .off && model.apps[app].backgroundRefresh }
    /// App `app`'s state.
    package func appState(_ app: Int) -> AppState { apps[app].life.state }
    /// Whether the app was swiped away and not opened since.
    package func isSwipedAway(_ app: Int) -> Bool { apps[app].life.swipedAway }
    /// Whether its `UIBackgroundModes` has `mode`.
    package func declares(_ app: Int, _ mode: UIBackgroundMode) -> Bool { model.apps[app].declares(mode) }
    /// The app's CPU power in the background.
    package func cpuPowerW(_ app: Int) -> Double { model.apps[app].cpuPowerW }
    /// Whether the app exits on suspend.
    package func exitsOnSuspend(_ app: Int) -> Bool { model.apps[app].exitsOnSuspend }
    /// App `app`'s stream `stream` of the active mechanism, which must have declared it.
    package func stream<M: Mechanism>(_ app: Int, _ stream: DeclaredStream<M>) -> RandomStream? {
        #if DEBUG
        // In debug builds only: `builtIn` makes its array at each call, which release builds
        // did too, with a hash of the name, about 880 instructions a draw (callgrind).
        let active = MechanismRegistry.builtIn[activeMechanism.index]
        assert(
            ObjectIdentifier(active) == ObjectIdentifier(M.self) && active.streams.contains(stream.name),
            "\(active.name) draws stream \(stream.name) of \(M.name), which it does not declare")
        #endif
        for declared in declaredStreams[app] where declared.name == stream.name { return declared.stream }
        return nil
    }
    /// Stream `app.<name>`, for the one mechanism that declares it draws it.
    package func appStream(_ app: Int) -> RandomStream {
        assert(
            MechanismRegistry.builtIn[activeMechanism.index].drawsAppStream,
            "\(MechanismRegistry.builtIn[activeMechanism.index].name) draws the app's own stream, which it does not declare")
        return streams.apps[app]
    }
    /// The task's app.
    package func app(of task: Int) -> Int { tasks[task].appIndex }

    /// Exactly listed, or under an entry ending in `.*`; an app without a list permits its
    /// declared work.
    package func permits(_ app: Int, _ identifier: String) -> Bool {
        setup.apps[app].permittedIdentifiers.map { BGTaskScheduler.allows($0, identifier) } ?? true
    }

    /// Transferring: none; then the CPU time done over the work's.
    package func progress(of task: Int) -> Double {
        let t = tasks[task]
        guard t.status == .running else { return t.status == .ended ? 1 : 0 }
        guard t.phase == .working, !t.isTransferring(at: sim.now) else { return t.phase == .working ? 0 : 1 }
        return t.work > .zero ? min(1, (sim.now - t.transferEnd).seconds / t.work.seconds) : 1
    }

    /// Whether task `task` is running.
    package func isRunning(_ task: Int) -> Bool { tasks[task].status == .running }
    /// Its kind.
    package func kind(of task: Int) -> TaskKind { tasks[task].kind }
    /// Its work.
    package func work(of task: Int) -> SimDuration { tasks[task].work }
    /// Its bytes.
    package func bytes(of task: Int) -> (up: Double, down: Double) { (tasks[task].upBytes, tasks[task].downBytes) }
    /// Its CPU's and radio's energy so far.
    package func energyJ(of task: Int) -> Double { tasks[task].cpuJ + tasks[task].radioJ }
    /// Running, of a carried kind, and not handed to its app.
    package func isCarried(_ task: Int) -> Bool {
        tasks[task].status == .running && tasks[task].kind.isSystemCarried && !tasks[task].flags.contains(.holdsApp)
    }

    // MARK: - What a mechanism does

    /// An event of the active mechanism, with the new work's priority.
    @discardableResult package mutating func schedule(_ payload: Int, at time: SimInstant, as kind: MechanismEvent.Kind) -> MechanismEvent {
        precondition(payload >= 0 && payload < 1 << 55, "a mechanism's payload fits in 55 bits")
        let step = kind == .taskStep
        let packed = payload << 8 | (step ? 0x80 : 0) | activeMechanism.index
        let priority =
            switch kind {
            case .world: PhoneEvent.worldPriority
            case .taskStep: PhoneEvent.taskEndPriority
            case .arrival: PhoneEvent.arrivalPriority
            }
        return MechanismEvent(handle: sim.schedule(.mechanism(packed), at: max(time, sim.now), priority: priority))
    }

    /// Cancels the event.
    package mutating func cancel(_ event: MechanismEvent) { sim.cancel(event.handle) }

    /// A new task, told to the sink as submitted.
    package mutating func submit(
        app: Int, kind: TaskKind, source: Int, work: SimDuration, upBytes: Double, downBytes: Double, powerW: Double, replacing: Int?
    ) -> Int {
        let id = newTask(app: app, kind: kind, source: source, work: work, upBytes: upBytes, downBytes: downBytes, powerW: powerW)
        if sink.observesTaskSteps { sink.taskEvent(.submitted(request(id.rawValue), replaced: replacing.map(TaskID.init)), at: sim.now) }
        return id.rawValue
    }

    /// A new request, told to the sink as submitted, eligible at `earliestBegin`.
    package mutating func request(
        app: Int, kind: TaskKind, source: Int, work: SimDuration, upBytes: Double, downBytes: Double, powerW: Double,
        earliestBegin: SimInstant, success: Bool, forgetsCompletion: Bool
    ) -> Int {
        newRequest(
            app: app, kind: kind, source: source, work: work, upBytes: upBytes, downBytes: downBytes, powerW: powerW,
            earliestBegin: earliestBegin, success: success, forgetsCompletion: forgetsCompletion
        ).rawValue
    }

    /// More work for a task that is beginning.
    package mutating func addWork(_ task: Int, _ work: SimDuration) { extendWork(TaskID(task), by: work) }

    /// Tells the sink.
    package mutating func reportLost(_ task: Int, app: Int, energyJ: Double) {
        sink.taskEvent(.lost(TaskID(task), app: app, energyJ: energyJ), at: sim.now)
    }

    /// Sets the task's two requirements.
    package mutating func setRequirements(_ task: Int, externalPower: Bool, network: Bool) {
        setNeeds(TaskID(task), externalPower: externalPower, network: network)
    }

    /// Begins the carried task with its timeout as its deadline.
    package mutating func carry(_ task: Int, timeout: SimDuration) {
        precondition(tasks[task].kind.isSystemCarried, "the system carries only a task of a system-carried kind, not \(tasks[task].kind)")
        beginCarried(TaskID(task), until: sim.now + timeout)
    }

    /// Submits the app's tasks registered on `trigger`.
    package mutating func submitTasks(_ app: Int, on trigger: AppTask.Trigger) {
        let registered = setup.apps[app].tasks
        for m in model.apps[app].tasks where registered[model.tasks[m].index].submitOn.contains(trigger) {
            submit(task: m, earliestBegin: sim.now + model.tasks[m].earliestBegin)
        }
    }

    /// The task's handler will not call its completion.
    package mutating func forgetsCompletion(_ task: Int) { markForgetsCompletion(TaskID(task)) }

    /// Sends the data on the task's behalf.
    package mutating func transfer(_ task: Int, upBytes: Double, downBytes: Double) {
        send(Transfer(owner: .task(task), upBytes: upBytes, downBytes: downBytes))
    }

    /// Starts the task for its kind's budget, launching or resuming its app in the background.
    package mutating func run(_ task: Int) { wake(TaskID(task)) }

    /// Calls the task's expiration handler, as for a budget run out.
    package mutating func expireTask(_ task: Int, _ reason: ExpirationReason) {
        guard tasks[task].status == .running, !tasks[task].isExpiring else { return }
        expire(TaskID(task), reason)
    }

    /// Ends the task with `outcome`.
    package mutating func end(_ task: Int, _ outcome: TaskOutcome, rejection: SubmitError?) {
        finish(TaskID(task), outcome, at: sim.now, rejection: rejection)
    }
}

/// The mechanism being called: set only here, while a call into it lasts.
struct ActiveMechanism {
    /// Its index in the registry.
    fileprivate(set) var index = 0
}
