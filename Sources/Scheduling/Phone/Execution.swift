import PhoneWorld
import SimEngine

/// Running background work (docs/sources.md §2-3): the handler's launch, the time each kind
/// has, the transfer then the CPU work, the expiration handler and its grace, and the
/// system's reasons to end work early (the person, the charger, the CPU monitor).
extension PhoneSimulation {
    /// The time a task of `kind` has once it starts.
    @inline(__always)
    fileprivate mutating func budget(_ kind: TaskKind) -> SimDuration {
        if kind == .refresh, let grant = model.refreshGrant, let stream = streams.grants {
            max(.milliseconds(1), min(setup.system.refreshBudget, SimDuration(seconds: grant.draw(stream))))
        } else {
            TaskKind.table[kind.index].budget?(setup.system) ?? .days(365)
        }
    }

    /// Starts a scheduled task: the system launches or resumes the app in the background and
    /// calls the task's handler, which resubmits if the app does that; the task transfers its
    /// data, then computes, within its budget and the policy's `timeLimit`, if it set one.
    mutating func start(_ id: TaskID, timeLimit: SimDuration? = nil) {
        let i = id.rawValue
        require(tasks[i].status == .eligible, "policy \(policy.name) started \(id), which is not eligible")
        hold(i, nil, at: sim.now)
        let app = tasks[i].appIndex, kind = tasks[i].kind
        apps[app].scheduler.remove(id)
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background: break
        case .active, .inactive: preconditionFailure("\(id) started while its app is in the foreground")
        }
        tasks[i].run.deadline = sim.now + budget(kind)
        if let timeLimit, sim.now + timeLimit < tasks[i].deadline {
            tasks[i].run.deadline = sim.now + timeLimit
            tasks[i].run.flags.insert(.policyLimit)
        }
        begin(id)
        if kind == .refresh || kind == .processing {
            let m = Int(tasks[i].source)
            if model.tasks[m].resubmitsInHandler { submit(task: m, earliestBegin: sim.now + model.tasks[m].interval) }
        } else if kind.isDeclared {
            mechanismTaskStarted(i)
        }
        watchCPU(id)
    }

    /// The app's finite-length grant now ends at `deadline` (`.distantFuture` in the
    /// foreground): so does every running task on it, not yet expiring.
    mutating func setGrant(_ app: Int, until deadline: SimInstant) {
        for i in running where tasks[i].status == .running && tasks[i].appIndex == app && tasks[i].kind.usesGrant && !tasks[i].isExpiring {
            tasks[i].run.deadline = deadline
            rescheduleEnd(i)
        }
    }

    /// The system carries task `id` without its app until `deadline` (a transfer's timeout).
    mutating func beginCarried(_ id: TaskID, until deadline: SimInstant) {
        tasks[id.rawValue].run.deadline = deadline
        begin(id)
    }

    /// Task `id`, beginning, has `work` more CPU time (archiving its result).
    mutating func extendWork(_ id: TaskID, by work: SimDuration) { tasks[id.rawValue].run.addedWork += work }

    /// The system launches or resumes the app in the background (or finds it running) and
    /// calls its handler for the task, which has its kind's time.
    mutating func wake(_ id: TaskID) {
        let app = tasks[id.rawValue].appIndex
        // The grant the app got as the person left it, shared by all its finite-length work.
        let grant = apps[app].life.state == .background ? apps[app].enteredBackground.map { $0 + setup.system.backgroundTime } : nil
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background, .active, .inactive: break
        }
        let kind = tasks[id.rawValue].kind
        if kind.usesGrant, let grant {
            tasks[id.rawValue].run.deadline = grant
        } else {
            let unlimited = TaskKind.table[kind.index].budget == nil || (kind.usesGrant && apps[app].life.state.isForeground)
            tasks[id.rawValue].run.deadline = unlimited ? .distantFuture : sim.now + budget(kind)
        }
        begin(id)
    }

    /// A task begins running: its CPU draws power, its transfer goes to the radio, and its
    /// phase ends when the transfer and then the work are done, or its time is up.
    ///
    /// A task of a system-carried kind (a background transfer) runs in the system, without its
    /// app, until its data has moved; a mode session runs for its length, fetching its chunks.
    fileprivate mutating func begin(_ id: TaskID) {
        let i = id.rawValue
        let app = tasks[i].appIndex
        if !taskObservers[app].isEmpty { mechanismsTaskBegins(i, app: app) }
        let kind = tasks[i].kind
        tasks[i].began()
        tasks[i].run.started = sim.now
        tasks[i].run.flags.insert(.started)
        if books.isCharging { tasks[i].run.flags.insert(.startedCharging) }
        switch radios.connection.kind {
        case .wifi: tasks[i].run.flags.insert(.startedOnWifi)
        case .cellular: tasks[i].run.flags.insert(.startedOnCellular)
        case .none: break
        }
        running.started(i)
        if sink.observesTaskSteps {
            sink.taskEvent(
                .started(request(i), timeRemaining: kind.usesGrant ? backgroundTimeRemaining(app: app) : tasks[i].deadlineOrNil.map { $0 - sim.now }),
                at: sim.now)
        }
        if !kind.isSystemCarried {
            tasks[i].run.flags.insert(.holdsApp)
            apps.holds(app)
            setCPU(i, on: true)
        }
        // A session's data moves in chunks its mechanism sends while it runs.
        if kind.isMode {
            tasks[i].setTransferEnd(sim.now)
            tasks[i].setWorkEnd(sim.now + tasks[i].work)
            rescheduleEnd(i)
            return
        }
        // Its data is done when it has been its link's head and served (`syncTransfers`);
        // waiting behind others, its phase can end only with its time.
        let transfer = Transfer(owner: .task(i), upBytes: tasks[i].upBytes, downBytes: tasks[i].downBytes)
        if transfer.isEmpty {
            tasks[i].setTransferEnd(sim.now)
        } else {
            send(transfer)
            tasks[i].setTransferEnd(radios.headCompletion(of: .task(i)) ?? .distantFuture)
        }
        tasks[i].setWorkEnd(workEnd(i, transferEnd: tasks[i].transferEnd))
        if tasks[i].workEnd == sim.now, kind.isSystemCarried, !tasks[i].flags.contains(.holdsApp) {
            handBack(id)
            return
        }
        rescheduleEnd(i)
    }

    /// When task `i`'s work is done, with its transfer done at `transferEnd`: its CPU time
    /// after that, or for work the system carries, the transfer's end.
    @inline(__always)
    func workEnd(_ i: Int, transferEnd: SimInstant) -> SimInstant {
        if transferEnd == .distantFuture { return .distantFuture }
        if tasks[i].kind.isSystemCarried && !tasks[i].flags.contains(.holdsApp) { return transferEnd }
        return transferEnd + tasks[i].work
    }

    /// The system finished moving a carried task's data: it launches or resumes the app in the
    /// background to handle it, for the kind's budget.
    fileprivate mutating func handBack(_ id: TaskID) {
        let i = id.rawValue, app = tasks[i].appIndex
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background, .active, .inactive: break
        }
        tasks[i].run.flags.insert(.holdsApp)
        apps.holds(app)
        setCPU(i, on: true)
        tasks[i].run.deadline = sim.now + budget(tasks[i].kind)
        tasks[i].run.phase = .working
        tasks[i].setTransferEnd(sim.now)
        tasks[i].setWorkEnd(sim.now + tasks[i].work)
        rescheduleEnd(i)
    }

    /// Task `i`'s CPU starts or stops drawing its power.
    mutating func setCPU(_ i: Int, on: Bool) {
        let w = tasks[i].powerW, kind = tasks[i].kind
        if on {
            guard tasks[i].cpuSince == .distantFuture else { return }
            tasks[i].run.cpuSince = sim.now
            tasks[i].run.cpuSegmentSince = sim.now
        } else {
            let since = tasks[i].cpuSince
            guard since != .distantFuture else { return }
            tasks[i].run.cpuJ += w * (sim.now - since).seconds
            tasks[i].run.cpuTime += sim.now - since
            tasks[i].run.cpuSince = .distantFuture
            if books.isCharging { tasks[i].addChargerEnergy(w * (sim.now - tasks[i].cpuSegmentSince).seconds) }
        }
        books.setCPU(w, on: on, scheduled: kind.isScheduled, mode: kind.isMode, at: sim.now)
    }

    /// Before the charger comes or goes: each running CPU's energy so far is booked to the
    /// charger if it was connected, so a task's charger part follows every change.
    mutating func splitCPUEnergy() {
        for i in running where tasks[i].cpuSince != .distantFuture {
            if books.isCharging { tasks[i].addChargerEnergy(tasks[i].powerW * (sim.now - tasks[i].cpuSegmentSince).seconds) }
            tasks[i].run.cpuSegmentSince = sim.now
        }
    }

    /// Schedules the end of task `i`'s current phase: its work (after its transfer) or its
    /// time, whichever comes first; idle, its time; expiring, the handler's end.
    mutating func rescheduleEnd(_ i: Int) {
        if let h = tasks[i].timer { sim.cancel(h) }
        let at: SimInstant
        switch tasks[i].phase {
        case .working: at = min(tasks[i].deadline, tasks[i].workEnd)
        case .idle: at = tasks[i].deadline
        case .expiring: at = tasks[i].expiresAt
        }
        tasks[i].setTimer(at == .distantFuture ? nil : sim.schedule(.phaseEnd(TaskID(i)), at: at, priority: PhoneEvent.taskEndPriority))
    }

    /// The end of a running task's phase came; whether a policy may see a change (a
    /// background transfer the system finished is handed to its app: nothing ended).
    mutating func phaseEnded(_ id: TaskID) -> Bool {
        let i = id.rawValue
        tasks[i].setTimer(nil)
        switch tasks[i].phase {
        case .working where sim.now >= tasks[i].workEnd:
            if tasks[i].kind.isSystemCarried && !tasks[i].flags.contains(.holdsApp) {
                handBack(id)
                return false
            } else if tasks[i].flags.contains(.forgetsCompletion) {
                setCPU(i, on: false)
                tasks[i].run.phase = .idle
                sink.taskEvent(.workDoneNotCompleted(id, app: tasks[i].appIndex), at: sim.now)
                rescheduleEnd(i)
            } else {
                finish(id, .completed, at: sim.now)
            }
        case .expiring:
            if tasks[i].flags.contains(.killOnExpiry) {
                tasks[i].run.flags.insert(.overran)
                terminate(tasks[i].appIndex, cause: .terminated)
            } else {
                finish(id, .expired, at: sim.now)
            }
        default:
            expire(id, tasks[i].flags.contains(.policyLimit) ? .timeLimit : .timeUp)
        }
        return true
    }

    /// The system calls the task's expiration handler: the app stops its transfers and ends
    /// the task after its response time, unless it never ends it or takes longer than the
    /// grace the system gives, in which case the app is terminated at the end of the grace.
    mutating func expire(_ id: TaskID, _ reason: ExpirationReason) {
        let i = id.rawValue
        let app = tasks[i].appIndex
        if tasks[i].isTransferring(at: sim.now) { cancelTransfer(of: id) }
        // No handler to call: the system marks the task completed, unsuccessful, at once
        // (docs/sources.md §2).
        guard tasks[i].flags.contains(.expirationHandler) else {
            tasks[i].reports(success: false)
            tasks[i].run.phase = .expiring  // ended by the system: its work is not done
            finish(id, .completed, at: sim.now)
            return
        }
        tasks[i].run.expiration = reason
        sink.taskEvent(.expiration(id, app: app, reason), at: sim.now)
        let grace = setup.system.expirationGrace
        let response = tasks[i].expirationResponse
        if tasks[i].flags.contains(.forgetsCompletion) {
            setCPU(i, on: false)
            expiring(i, until: sim.now + grace, kill: true)
        } else if response > grace {
            expiring(i, until: sim.now + grace, kill: true)
        } else if response == .zero {
            finish(id, .expired, at: sim.now)
            return
        } else {
            expiring(i, until: sim.now + response, kill: false)
        }
        if tasks[i].expiresAt == sim.now && tasks[i].flags.contains(.killOnExpiry) {
            tasks[i].run.flags.insert(.overran)
            terminate(app, cause: .terminated)
        } else {
            rescheduleEnd(i)
        }
    }

    @inline(__always)
    fileprivate mutating func expiring(_ i: Int, until: SimInstant, kill: Bool) {
        tasks[i].run.phase = .expiring
        tasks[i].run.expiresAt = until
        if kill { tasks[i].run.flags.insert(.killOnExpiry) } else { tasks[i].run.flags.remove(.killOnExpiry) }
    }

    /// Ends running processing tasks the system stops early: when the person starts using the
    /// phone, and those that require external power when the charger goes.
    mutating func endProcessing(_ reason: ExpirationReason, onlyRequiringPower: Bool) {
        for i in running where tasks[i].status == .running && tasks[i].kind == .processing {
            if !tasks[i].isExpiring && (!onlyRequiringPower || tasks[i].flags.contains(.requiresExternalPower)) {
                expire(TaskID(i), reason)
            }
        }
    }

    /// The charger came or went: tasks that require power lose it; the CPU monitor watches
    /// only on battery.
    mutating func powerChanged() {
        if !books.isCharging { endProcessing(.powerLost, onlyRequiringPower: true) }
        for i in running { watchCPU(TaskID(i)) }
    }

    /// Arms or disarms the CPU monitor for a running task (docs/sources.md §2).
    fileprivate mutating func watchCPU(_ id: TaskID) {
        let i = id.rawValue
        guard tasks[i].status == .running, let monitor = setup.system.cpuMonitor else { return }
        let watched =
            !books.isCharging && tasks[i].kind == .processing && !tasks[i].flags.contains(.requiresExternalPower)
            && tasks[i].cpuShare > monitor.threshold && !tasks[i].isExpiring
        if watched, tasks[i].monitorEvent == nil {
            tasks[i].setMonitor(sim.schedule(.cpuMonitor(id), after: monitor.window, priority: PhoneEvent.taskEndPriority))
        } else if !watched, let h = tasks[i].monitorEvent {
            sim.cancel(h)
            tasks[i].setMonitor(nil)
        }
    }

    mutating func cpuMonitorFired(_ id: TaskID) {
        tasks[id.rawValue].setMonitor(nil)
        guard tasks[id.rawValue].status == .running else { return }
        terminate(tasks[id.rawValue].appIndex, cause: .terminated)
    }
}

extension TaskState {
    /// `deadline`, or `nil` when there is none.
    var deadlineOrNil: SimInstant? { deadline == .distantFuture ? nil : deadline }
}

/// The tasks running now, by id, in start order: loops over running work read these, not
/// every task, so a long run does not slow down as tasks accumulate. Execution adds a task
/// when it starts; ends take it out (`ended`).
struct RunningTasks: RandomAccessCollection {
    private var ids: [Int] = []

    var startIndex: Int { ids.startIndex }
    var endIndex: Int { ids.endIndex }
    subscript(position: Int) -> Int { ids[position] }

    mutating func started(_ task: Int) { ids.append(task) }
    /// Task `task` ended.
    mutating func ended(_ task: Int) { ids.removeQuickly(at: ids.firstIndex(of: task)!) }
}

/// A task's running: written only here.
struct Run {
    fileprivate(set) var started = SimInstant.start
    /// When its time runs out: the budget, or for finite-length work the grant while the app
    /// is in the background; `distantFuture`: no deadline (in the foreground).
    fileprivate(set) var deadline = SimInstant.distantFuture
    fileprivate(set) var expiresAt = SimInstant.start
    fileprivate(set) var expiration: ExpirationReason?
    /// Since when its CPU draws power (`distantFuture`: it does not), and since when under the
    /// charger's present state (a plug or unplug splits it).
    fileprivate(set) var cpuSince = SimInstant.distantFuture
    fileprivate(set) var cpuSegmentSince = SimInstant.distantFuture
    fileprivate(set) var cpuJ = 0.0
    fileprivate(set) var cpuTime = SimDuration.zero
    /// Work added once it started (archiving its result).
    fileprivate(set) var addedWork = SimDuration.zero
    /// Its flags: `holdsApp`, `killOnExpiry`, `started`, `policyLimit`, `overran` and where it
    /// started.
    fileprivate(set) var flags: TaskState.Flags = []
    fileprivate(set) var phase = TaskState.Phase.working
}
