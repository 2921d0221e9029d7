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
            app: app, source: m, kind: kind, submitted: sim.now, earliestBegin: max(earliestBegin, sim.now),
            work: SimDuration(seconds: model.tasks[m].cpu.draw(stream)), powerW: model.apps[app].cpuPowerW)
        // Whole bytes: a size drawn from a continuous distribution, rounded.
        state.upBytes = model.tasks[m].upBytes.draw(stream).rounded()
        state.downBytes = model.tasks[m].downBytes.draw(stream).rounded()
        if stream.bernoulli(model.tasks[m].successProbability) { state.flags.insert(.success) }
        if stream.bernoulli(model.apps[app].forgetsCompletion) { state.flags.insert(.forgetsCompletion) }
        state.expirationResponse = model.apps[app].expirationResponse
        if !model.tasks[m].expirationHandler { state.flags.remove(.expirationHandler) }
        state.cpuShare = model.tasks[m].cpuShare
        if kind == .processing {
            if model.tasks[m].requiresExternalPower { state.flags.insert(.requiresExternalPower) }
            if model.tasks[m].requiresNetworkConnectivity { state.flags.insert(.requiresNetworkConnectivity) }
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
            tasks[id.rawValue].timer = sim.schedule(.eligible(id), at: begin, priority: PhoneEvent.arrivalPriority)
        }
    }

    /// A task the system starts by itself, not through the policy.
    mutating func newTask(
        app: Int, kind: TaskKind, source: Int = 0, work: SimDuration, upBytes: Double = 0, downBytes: Double = 0, powerW: Double? = nil
    ) -> TaskID {
        let id = TaskID(tasks.count)
        var state = TaskState(
            app: app, source: source, kind: kind, submitted: sim.now, earliestBegin: sim.now, work: work,
            powerW: powerW ?? model.apps[app].cpuPowerW)
        state.upBytes = upBytes
        state.downBytes = downBytes
        state.flags.insert(.success)
        state.expirationResponse = model.apps[app].expirationResponse
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
        tasks[i].earliestBegin = max(earliestBegin, sim.now)
        if !success { tasks[i].flags.remove(.success) }
        if forgetsCompletion { tasks[i].flags.insert(.forgetsCompletion) }
        if sink.observesTaskSteps { sink.taskEvent(.submitted(request(i), replaced: nil), at: sim.now) }
        tasks[i].timer = sim.schedule(.eligible(id), at: tasks[i].earliestBegin, priority: PhoneEvent.arrivalPriority)
        return id
    }

    /// What the request needs, as `BGProcessingTaskRequest`'s two flags say.
    mutating func setNeeds(_ id: TaskID, externalPower: Bool, network: Bool) {
        let i = id.rawValue
        if externalPower { tasks[i].flags.insert(.requiresExternalPower) } else { tasks[i].flags.remove(.requiresExternalPower) }
        if network { tasks[i].flags.insert(.requiresNetworkConnectivity) } else { tasks[i].flags.remove(.requiresNetworkConnectivity) }
    }

    /// The task's handler will never call its completion.
    mutating func markForgetsCompletion(_ id: TaskID) { tasks[id.rawValue].flags.insert(.forgetsCompletion) }

    /// The request's `earliestBeginDate` came: it joins the eligible requests.
    mutating func makeEligible(_ id: TaskID) {
        let i = id.rawValue
        tasks[i].timer = nil
        guard tasks[i].status == .waiting else { return }
        tasks[i].status = .eligible
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
