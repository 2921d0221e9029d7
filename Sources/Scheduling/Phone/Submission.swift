import PhoneWorld
import SimEngine

/// Requests reaching the system (docs/sources.md §2): an app's `BGTaskScheduler.submit`, which
/// becomes eligible at its `earliestBeginDate`.
extension PhoneSimulation {
    /// Requests pending when the simulation starts, as if submitted when the app was last
    /// used: `earliestBeginDate` at a random phase within the task's interval, so apps with
    /// equal intervals do not run in lockstep.
    mutating func submitInitialRequests() {
        for app in setup.apps.indices {
            for m in model.apps[app].tasks where model.tasks[m].submitsOnStart {
                let phase = SimDuration(seconds: streams.apps[app].uniform() * model.tasks[m].interval.seconds)
                submit(task: m, earliestBegin: .after(phase))
            }
        }
    }

    /// The app calls `BGTaskScheduler.submit` for task model `m`.
    mutating func submit(task m: Int, earliestBegin: SimInstant) {
        let app = model.tasks[m].app
        // An app that opted out of the background is never launched into it: what it would
        // submit could never run.
        guard !model.apps[app].exitsOnSuspend else { return }
        let stream = streams.apps[app]
        let id = TaskID(tasks.count)
        let kind = model.tasks[m].kind
        var state = TaskState(
            Asked(
                app: app, source: m, kind: kind, submitted: sim.now, earliestBegin: max(earliestBegin, sim.now),
                work: SimDuration(seconds: model.tasks[m].cpu.draw(stream)), powerW: model.apps[app].cpuPowerW))
        // Whole bytes: a size drawn from a continuous distribution, rounded.
        state.asked.upBytes = model.tasks[m].upBytes.draw(stream).rounded()
        state.asked.downBytes = model.tasks[m].downBytes.draw(stream).rounded()
        if stream.bernoulli(model.tasks[m].successProbability) { state.reports(success: true) }
        if stream.bernoulli(model.apps[app].forgetsCompletion) { state.asked.flags.insert(.forgetsCompletion) }
        state.asked.expirationResponse = model.apps[app].expirationResponse
        if !model.tasks[m].expirationHandler { state.asked.flags.remove(.expirationHandler) }
        state.asked.cpuShare = model.tasks[m].cpuShare
        if kind == .processing {
            if model.tasks[m].requiresExternalPower { state.asked.flags.insert(.requiresExternalPower) }
            if model.tasks[m].requiresNetworkConnectivity { state.asked.flags.insert(.requiresNetworkConnectivity) }
        }
        let begin = state.earliestBegin
        tasks.append(state)
        // Background App Refresh off, for the phone or the app, turns both kinds off (docs/sources.md §5).
        let available = setup.settings.backgroundAppRefresh != .off && model.apps[app].backgroundRefresh
        let pending = BGTaskScheduler.Pending(identifier: model.identifiers[m], kind: kind, task: id, earliestBegin: begin)
        switch apps[app].scheduler.submit(pending, available: available) {
        case .failure(let error):
            finish(id, .rejected, at: sim.now, rejection: error)
        case .success(let replaced):
            if let replaced { finish(replaced, .replaced, at: sim.now) }
            if sink.observesTaskSteps { sink.taskEvent(.submitted(request(id.rawValue), replaced: replaced), at: sim.now) }
            tasks[id.rawValue].setTimer(sim.schedule(.eligible(id), at: begin, priority: PhoneEvent.arrivalPriority))
        }
    }

    /// A task the system starts by itself, not through the policy.
    mutating func newTask(
        app: Int, kind: TaskKind, source: Int = 0, work: SimDuration, upBytes: Double = 0, downBytes: Double = 0, powerW: Double? = nil
    ) -> TaskID {
        let id = TaskID(tasks.count)
        var state = TaskState(
            Asked(
                app: app, source: source, kind: kind, submitted: sim.now, earliestBegin: sim.now, work: work,
                powerW: powerW ?? model.apps[app].cpuPowerW))
        state.asked.upBytes = upBytes
        state.asked.downBytes = downBytes
        state.reports(success: true)
        state.asked.expirationResponse = model.apps[app].expirationResponse
        tasks.append(state)
        return id
    }

    /// A request of a mechanism that the policy decides on (`kind` is `.scheduled`), eligible
    /// at `earliestBegin`: its handler reports `success`, or never calls its completion.
    mutating func newRequest(
        app: Int, kind: TaskKind, source: Int, work: SimDuration, upBytes: Double, downBytes: Double, powerW: Double,
        earliestBegin: SimInstant, success: Bool, forgetsCompletion: Bool
    ) -> TaskID {
        precondition(kind.isScheduled, "a request the policy decides on is of a scheduled kind, not \(kind)")
        let id = newTask(app: app, kind: kind, source: source, work: work, upBytes: upBytes, downBytes: downBytes, powerW: powerW)
        let i = id.rawValue
        tasks[i].asked.earliestBegin = max(earliestBegin, sim.now)
        if !success { tasks[i].reports(success: false) }
        if forgetsCompletion { tasks[i].asked.flags.insert(.forgetsCompletion) }
        if sink.observesTaskSteps { sink.taskEvent(.submitted(request(i), replaced: nil), at: sim.now) }
        tasks[i].setTimer(sim.schedule(.eligible(id), at: tasks[i].earliestBegin, priority: PhoneEvent.arrivalPriority))
        return id
    }

    /// What the request needs, as `BGProcessingTaskRequest`'s two flags say.
    mutating func setNeeds(_ id: TaskID, externalPower: Bool, network: Bool) {
        let i = id.rawValue
        if externalPower { tasks[i].asked.flags.insert(.requiresExternalPower) } else { tasks[i].asked.flags.remove(.requiresExternalPower) }
        if network { tasks[i].asked.flags.insert(.requiresNetworkConnectivity) } else { tasks[i].asked.flags.remove(.requiresNetworkConnectivity) }
    }

    /// The task's handler will never call its completion.
    mutating func markForgetsCompletion(_ id: TaskID) { tasks[id.rawValue].asked.flags.insert(.forgetsCompletion) }

    /// The request's `earliestBeginDate` came: it joins the eligible requests.
    mutating func makeEligible(_ id: TaskID) {
        let i = id.rawValue
        tasks[i].setTimer(nil)
        guard tasks[i].status == .waiting else { return }
        tasks[i].becameEligible()
        decisions.append(
            EligibleTask(
                id: id, app: tasks[i].appIndex, kind: tasks[i].kind, submitted: tasks[i].submitted,
                earliestBegin: tasks[i].earliestBegin, requiresExternalPower: tasks[i].flags.contains(.requiresExternalPower),
                requiresNetworkConnectivity: tasks[i].flags.contains(.requiresNetworkConnectivity)))
    }

    /// `cancelAllTaskRequests()`.
    mutating func cancelAll(app: Int) {
        for id in apps[app].scheduler.cancelAll() { finish(id, .cancelled, at: sim.now) }
    }
}

/// What a task asked for, drawn when it was submitted: written only here.
struct Asked {
    fileprivate(set) var app: Int32
    /// The task model (refresh, processing), the finite-length work's index, the region
    /// crossing (place index times 2, plus 1 for an entry), or the lost task (redo).
    fileprivate(set) var source: Int32
    fileprivate(set) var kind: TaskKind
    fileprivate(set) var submitted: SimInstant
    fileprivate(set) var earliestBegin: SimInstant
    /// CPU time the work takes once its transfers are done, as asked for.
    fileprivate(set) var work: SimDuration
    fileprivate(set) var expirationResponse = SimDuration.zero
    fileprivate(set) var powerW: Double
    fileprivate(set) var cpuShare = 0.5
    fileprivate(set) var upBytes = 0.0
    fileprivate(set) var downBytes = 0.0
    /// Its flags: `forgetsCompletion`, `expirationHandler`, the two requirements.
    fileprivate(set) var flags: TaskState.Flags = [.expirationHandler]

    init(app: Int, source: Int, kind: TaskKind, submitted: SimInstant, earliestBegin: SimInstant, work: SimDuration, powerW: Double) {
        self.app = Int32(app)
        self.source = Int32(source)
        self.kind = kind
        self.submitted = submitted
        self.earliestBegin = earliestBegin
        self.work = work
        self.powerW = powerW
    }
}
