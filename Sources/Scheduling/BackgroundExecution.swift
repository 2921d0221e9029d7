import PhoneWorld
import SimEngine
import SimRandom

/// The rules iOS enforces on apps and their background work (docs/sources.md §1-3): the life
/// cycle, BGTaskScheduler submissions, the gates, budgets and expiration, and finite-length
/// background time.
extension PhoneSimulation {
    // MARK: - Submitting

    /// Requests pending when the simulation starts, as if submitted when the app was last
    /// used: `earliestBeginDate` at a random phase within the task's interval, so apps with
    /// equal intervals do not run in lockstep.
    mutating func submitInitialRequests() {
        for app in setup.apps.indices {
            if setup.apps[app].usesBackgroundFetch, let fetch = setup.apps[app].backgroundFetch {
                let phase = SimDuration(seconds: streams.apps[app].uniform() * fetch.minimumInterval.seconds)
                submitFetch(app: app, earliestBegin: .after(phase))
            }
            for (k, task) in setup.apps[app].tasks.enumerated() where task.submitOn.contains(.start) {
                let phase = SimDuration(seconds: streams.apps[app].uniform() * task.interval.seconds)
                submit(app: app, task: k, earliestBegin: .after(phase))
            }
        }
    }

    /// The app calls `BGTaskScheduler.submit` for its task `k`.
    ///
    /// The app's and the task's parameters are read field by field through `setup`, not
    /// bound to locals: a local copy of `AppParameters` (two dozen references) cost more than
    /// the rest of the submission in a profile.
    mutating func submit(app: Int, task k: Int, earliestBegin: SimInstant) {
        // An app that opted out of the background is never launched into it: what it would
        // submit could never run.
        guard !setup.apps[app].exitsOnSuspend else { return }
        let stream = streams.apps[app]
        let id = TaskID(tasks.count)
        let kind: TaskKind = setup.apps[app].tasks[k].kind == .refresh ? .refresh : .processing
        var request = TaskRequest(
            id: id, app: app, kind: kind, identifier: setup.apps[app].tasks[k].identifier,
            submitted: sim.now, earliestBegin: max(earliestBegin, sim.now),
            work: SimDuration(seconds: setup.apps[app].tasks[k].cpu.draw(stream)),
            powerW: setup.apps[app].cpuPowerW ?? setup.power.cpuBackgroundW)
        // Whole bytes: a size drawn from a continuous distribution, rounded.
        request.upBytes = setup.apps[app].tasks[k].upBytes.draw(stream).rounded()
        request.downBytes = setup.apps[app].tasks[k].downBytes.draw(stream).rounded()
        request.success = stream.bernoulli(setup.apps[app].tasks[k].successProbability)
        request.forgetsCompletion = stream.bernoulli(setup.apps[app].forgetsCompletion)
        request.expirationResponse = setup.apps[app].expirationResponse
        request.expirationHandler = setup.apps[app].tasks[k].expirationHandler
        request.cpuShare = setup.apps[app].tasks[k].cpuShare
        if kind == .processing {
            request.requiresExternalPower = setup.apps[app].tasks[k].requiresExternalPower
            request.requiresNetworkConnectivity = setup.apps[app].tasks[k].requiresNetworkConnectivity
        }
        let begin = request.earliestBegin
        // Moved into the store, not copied: the optimizer kept a copy (retaining the request's
        // strings) and released the local after, about 140 instructions a submission.
        tasks.append(TaskState(request: consume request, model: k))
        // Background App Refresh off, for the phone or the app, turns both kinds off (docs/sources.md §5).
        let available = setup.settings.backgroundAppRefresh != .off && setup.apps[app].backgroundRefresh
        let pending = BGTaskScheduler.Pending(
            identifier: setup.apps[app].tasks[k].identifier, kind: kind, task: id,
            earliestBegin: begin)
        switch apps[app].scheduler.submit(pending, available: available) {
        case .failure(let error):
            tasks[id.rawValue].rejection = error
            finish(id, .rejected, at: sim.now)
        case .success(let replaced):
            if let replaced { finish(replaced, .replaced, at: sim.now) }
            if sink.observesTaskSteps { sink.taskEvent(.submitted(tasks[id.rawValue].request, replaced: replaced), at: sim.now) }
            tasks[id.rawValue].eligibleEvent = sim.schedule(.eligible(id), at: begin, priority: Self.arrivalPriority)
        }
    }

    mutating func makeEligible(_ id: TaskID) {
        tasks[id.rawValue].eligibleEvent = nil
        guard tasks[id.rawValue].status == .waiting else { return }
        tasks[id.rawValue].status = .eligible
        let r = tasks[id.rawValue].request
        eligible.append(
            EligibleTask(
                id: id, app: r.app, kind: r.kind, submitted: r.submitted, earliestBegin: r.earliestBegin,
                requiresExternalPower: r.requiresExternalPower,
                requiresNetworkConnectivity: r.requiresNetworkConnectivity))
        shownIsStale = true
    }

    /// `cancelAllTaskRequests()`.
    mutating func cancelAll(app: Int) {
        for id in apps[app].scheduler.cancelAll() { finish(id, .cancelled, at: sim.now) }
    }

    // MARK: - Gates

    /// Whether the person is using the phone: an app in the foreground, or a call.
    @inline(__always)
    var inUse: Bool { foreground != nil || inCall }

    /// The first gate that keeps this request from starting now, or `nil` when the system
    /// lets it start (docs/sources.md §1-5): the phone on, Low Power Mode off, Background App
    /// Refresh on (for the phone and the app, on Wi-Fi if it says so), the app in the
    /// switcher and not in the foreground; for processing, the phone idle and the request's
    /// power and network requirements met.
    @inline(__always)
    func closedGate(_ task: EligibleTask) -> HoldReason? {
        guard isOn else { return .phoneOff }
        guard !lowPower else { return .lowPowerMode }
        guard appRefreshOn[task.app] else { return .backgroundRefreshOff }
        switch setup.settings.backgroundAppRefresh {
        case .off: return .backgroundRefreshOff
        case .wifi: guard networkState.kind == .wifi else { return .wifiOnly }
        case .wifiAndCellular: break
        }
        let life = apps[task.app].life
        guard !life.swipedAway else { return .appSwipedAway }
        guard !life.state.isForeground else { return .appInForeground }
        guard task.kind == .processing else { return nil }
        if inUse { return .deviceInUse }
        if task.requiresExternalPower && !isCharging { return .noExternalPower }
        if task.requiresNetworkConnectivity && networkState.kind == .none { return .noNetwork }
        return nil
    }

    /// Whether an eligible request is open to the policy: no gate holds it (after the gates
    /// were checked at this decision point).
    @inline(__always)
    func isShown(_ task: EligibleTask) -> Bool { task.heldBy == nil || task.heldBy == .policy }

    /// From now on, the request `eligible[k]` is held for `reason` (`nil`: no longer held),
    /// in its record and in the eligible list's copy.
    mutating func hold(eligible k: Int, _ reason: HoldReason?) {
        hold(eligible[k].id, reason, at: sim.now)
        eligible[k].heldBy = reason
    }

    /// From now on, the request `id` is held for `reason` (`nil`: no longer held); the time
    /// since the last change goes to the previous reason. `at` is later than now only for
    /// the requests that never ran, ended at the horizon after the last event.
    mutating func hold(_ id: TaskID, _ reason: HoldReason?, at time: SimInstant) {
        let i = id.rawValue
        if let previous = tasks[i].heldBy { tasks[i].held.add(time - tasks[i].heldSince, to: previous) }
        tasks[i].heldBy = reason
        tasks[i].heldSince = time
    }

    /// The bit of a policy's reason token in a task's `policyReasons` mask; tokens are
    /// numbered in the order the run first hears them (at most 32 distinct ones are kept).
    mutating func policyReasonBit(_ reason: String?) -> UInt32 {
        let token = reason ?? policy.name
        if let k = policyReasonTokens.firstIndex(of: token) { return 1 << UInt32(k) }
        guard policyReasonTokens.count < 32 else { return 0 }
        policyReasonTokens.append(token)
        return 1 << UInt32(policyReasonTokens.count - 1)
    }

    // MARK: - Running

    @inline(__always)
    func budget(_ kind: TaskKind) -> SimDuration {
        switch kind {
        case .refresh:
            if let grant = setup.system.refreshGrant, let stream = streams.grants {
                max(.milliseconds(1), min(setup.system.refreshBudget, SimDuration(seconds: grant.draw(stream))))
            } else {
                setup.system.refreshBudget
            }
        case .processing: setup.system.processingBudget
        case .finiteLength, .redo: setup.system.backgroundTime
        case .fetch: setup.system.fetchBudget
        case .silentPush, .backgroundTransfer: setup.system.wakeBudget
        case .region: setup.system.regionBudget
        case .audio, .location, .voip, .bluetooth: .days(365)
        }
    }

    /// Starts a scheduled task: the system launches or resumes the app in the background and
    /// calls the task's handler, which resubmits if the app does that; the task transfers its
    /// data, then computes, within its budget.
    mutating func start(_ id: TaskID) {
        let i = id.rawValue
        require(tasks[i].status == .eligible, "policy \(policy.name) started \(id), which is not eligible")
        hold(id, nil, at: sim.now)
        let app = tasks[i].request.app, kind = tasks[i].request.kind
        apps[app].scheduler.remove(id)
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background: break
        case .active, .inactive: preconditionFailure("\(id) started while its app is in the foreground")
        }
        tasks[i].deadline = sim.now + budget(kind)
        begin(id)
        if let k = tasks[i].model, resubmitsInHandler[app][k] {
            submit(app: app, task: k, earliestBegin: sim.now + setup.apps[app].tasks[k].interval)
        }
        if kind == .fetch, let interval = setup.apps[app].backgroundFetch?.minimumInterval {
            submitFetch(app: app, earliestBegin: sim.now + interval)
        }
        watchCPU(id)
    }

    /// A task begins running: its CPU draws power, its transfers go to the radio.
    ///
    /// A background transfer runs in the system, without its app, until its data has moved;
    /// a mode session runs for its length, fetching its chunks.
    mutating func begin(_ id: TaskID) {
        drawArchive(id)
        let i = id.rawValue
        let app = tasks[i].request.app, kind = tasks[i].request.kind
        tasks[i].status = .running
        tasks[i].started = sim.now
        runningIDs.append(i)
        if sink.observesTaskSteps {
            sink.taskEvent(
                .started(
                    tasks[i].request,
                    timeRemaining: kind.usesGrant
                        ? backgroundTimeRemaining(app: app) : tasks[i].deadline.map { $0 - sim.now }), at: sim.now)
        }
        if kind != .backgroundTransfer {
            tasks[i].holdsApp = true
            apps[app].running += 1
            setCPU(id, on: true)
        }
        if kind.isMode {
            apps[app].modeSession = i
            tasks[i].phase = .working
            tasks[i].workEnd = sim.now + tasks[i].request.work
            rescheduleEnd(id)
            modeChunk(id)
            return
        }
        let transfer = Transfer(owner: .task(i), upBytes: tasks[i].request.upBytes, downBytes: tasks[i].request.downBytes)
        if transfer.isEmpty {
            transfersDone(id)
        } else {
            tasks[i].phase = .transferring
            rescheduleEnd(id)
            send(transfer)
        }
    }

    /// Its transfers are done (or there were none): the CPU work runs to its end or the deadline.
    mutating func transfersDone(_ id: TaskID) {
        if tasks[id.rawValue].request.kind == .backgroundTransfer && !tasks[id.rawValue].holdsApp {
            transferDelivered(id)
            return
        }
        tasks[id.rawValue].phase = .working
        tasks[id.rawValue].workEnd = sim.now + tasks[id.rawValue].request.work
        rescheduleEnd(id)
    }

    mutating func setCPU(_ id: TaskID, on: Bool) {
        let w = tasks[id.rawValue].request.powerW
        if on {
            guard tasks[id.rawValue].cpuSince == nil else { return }
            tasks[id.rawValue].cpuSince = sim.now
            taskPowerW += w
            if tasks[id.rawValue].request.kind.isScheduled { scheduledPowerW += w }
            if tasks[id.rawValue].request.kind.isMode { modePowerW += w }
            cpuCount += 1
        } else {
            guard let since = tasks[id.rawValue].cpuSince else { return }
            tasks[id.rawValue].cpuJ += w * (sim.now - since).seconds
            tasks[id.rawValue].cpuTime += sim.now - since
            tasks[id.rawValue].cpuSince = nil
            taskPowerW -= w
            if tasks[id.rawValue].request.kind.isScheduled { scheduledPowerW -= w }
            if tasks[id.rawValue].request.kind.isMode { modePowerW -= w }
            cpuCount -= 1
            if cpuCount == 0 {  // no drift from repeated float subtraction
                taskPowerW = 0
                scheduledPowerW = 0
                modePowerW = 0
            }
        }
    }

    /// Schedules the end of the task's current phase.
    ///
    /// Task states are read field by field here and below, not copied whole (`let t =
    /// tasks[i]`): a state is about 500 bytes with a string inside, and those copies were a
    /// tenth of a run in a profile.
    mutating func rescheduleEnd(_ id: TaskID) {
        let i = id.rawValue
        if let h = tasks[i].endEvent { sim.cancel(h) }
        let at: SimInstant?
        switch tasks[i].phase {
        case .transferring, .idle: at = tasks[i].deadline
        case .working: at = tasks[i].deadline.map { min($0, tasks[i].workEnd!) } ?? tasks[i].workEnd
        case .expiring(let until, _): at = until
        }
        tasks[id.rawValue].endEvent = at.map { sim.schedule(.taskEnd(id), at: $0, priority: Self.taskEndPriority) }
    }

    mutating func taskPhaseEnded(_ id: TaskID) {
        tasks[id.rawValue].endEvent = nil
        switch tasks[id.rawValue].phase {
        case .working where sim.now >= tasks[id.rawValue].workEnd!:
            if tasks[id.rawValue].request.forgetsCompletion {
                setCPU(id, on: false)
                tasks[id.rawValue].phase = .idle
                sink.taskEvent(.workDoneNotCompleted(id, app: tasks[id.rawValue].request.app), at: sim.now)
                rescheduleEnd(id)
            } else {
                finish(id, .completed, at: sim.now)
            }
        case .expiring(_, let kill):
            if kill { terminate(tasks[id.rawValue].request.app, cause: .terminated) } else { finish(id, .expired, at: sim.now) }
        default:
            expire(id, .timeUp)
        }
    }

    /// The system calls the task's expiration handler: the app stops its transfers and ends
    /// the task after its response time, unless it never ends it or takes longer than the
    /// grace the system gives, in which case the app is terminated at the end of the grace.
    mutating func expire(_ id: TaskID, _ reason: ExpirationReason) {
        let app = tasks[id.rawValue].request.app
        if tasks[id.rawValue].phase == .transferring { cancelTransfer(of: id) }
        // No handler to call: the system marks the task completed, unsuccessful, at once.
        guard tasks[id.rawValue].request.expirationHandler else {
            finish(id, .expired, at: sim.now)
            return
        }
        sink.taskEvent(.expiration(id, app: app, reason), at: sim.now)
        let grace = setup.system.expirationGrace
        let response = tasks[id.rawValue].request.expirationResponse
        if tasks[id.rawValue].request.forgetsCompletion {
            setCPU(id, on: false)
            tasks[id.rawValue].phase = .expiring(until: sim.now + grace, kill: true)
        } else if response > grace {
            tasks[id.rawValue].phase = .expiring(until: sim.now + grace, kill: true)
        } else if response == .zero {
            finish(id, .expired, at: sim.now)
            return
        } else {
            tasks[id.rawValue].phase = .expiring(until: sim.now + response, kill: false)
        }
        if tasks[id.rawValue].phase == .expiring(until: sim.now, kill: true) {
            terminate(app, cause: .terminated)
        } else {
            rescheduleEnd(id)
        }
    }

    /// Whether a running task's expiration handler has been called.
    @inline(__always)
    func isExpiring(_ id: TaskID) -> Bool {
        if case .expiring = tasks[id.rawValue].phase { true } else { false }
    }

    /// Ends running tasks the system stops early: processing tasks when the person starts
    /// using the phone, and those that require external power when the charger goes.
    mutating func endProcessing(_ reason: ExpirationReason, where condition: (TaskRequest) -> Bool) {
        for i in runningIDs where tasks[i].status == .running && tasks[i].request.kind == .processing {
            let id = TaskID(i)
            if !isExpiring(id) && condition(tasks[i].request) { expire(id, reason) }
        }
    }

    /// The charger came or went: tasks that require power lose it; the CPU monitor watches
    /// only on battery.
    mutating func powerChanged() {
        if !isCharging { endProcessing(.powerLost) { $0.requiresExternalPower } }
        for i in runningIDs { watchCPU(TaskID(i)) }
    }

    /// Arms or disarms the CPU monitor for a running task (docs/sources.md §2).
    mutating func watchCPU(_ id: TaskID) {
        let i = id.rawValue
        guard tasks[i].status == .running, let monitor = setup.system.cpuMonitor else { return }
        let watched =
            !isCharging && tasks[i].request.kind == .processing && !tasks[i].request.requiresExternalPower
            && tasks[i].request.cpuShare > monitor.threshold && !isExpiring(id)
        if watched, tasks[i].monitorEvent == nil {
            tasks[i].monitorEvent = sim.schedule(.cpuMonitor(id), after: monitor.window, priority: Self.taskEndPriority)
        } else if !watched, let h = tasks[i].monitorEvent {
            sim.cancel(h)
            tasks[id.rawValue].monitorEvent = nil
        }
    }

    mutating func cpuMonitorFired(_ id: TaskID) {
        tasks[id.rawValue].monitorEvent = nil
        guard tasks[id.rawValue].status == .running else { return }
        terminate(tasks[id.rawValue].request.app, cause: .terminated)
    }

    /// Moves a task to its final state and reports it. A running task's app is suspended
    /// when it has no work left in the background, unless `suspendIfIdle` is false (the app
    /// is being terminated).
    mutating func finish(_ id: TaskID, _ outcome: TaskOutcome, at time: SimInstant, suspendIfIdle: Bool = true) {
        let i = id.rawValue
        if case .ended(let earlier) = tasks[i].status { preconditionFailure("\(id) ended twice: \(earlier), then \(outcome)") }
        let app = tasks[i].request.app
        switch tasks[i].status {
        case .running:
            setCPU(id, on: false)
            runningIDs.removeQuickly(at: runningIDs.firstIndex(of: i)!)
            if tasks[i].holdsApp { apps[app].running -= 1 }
            if apps[app].modeSession == i { apps[app].modeSession = nil }
            tasks[i].status = .ended(outcome)
            // Ended first, so a transfer that happens to finish at this instant does not
            // start the work of a task that is over.
            if tasks[i].phase == .transferring || tasks[i].request.kind.isMode { cancelTransfer(of: id) }
            if let h = tasks[i].endEvent { sim.cancel(h) }
            if let h = tasks[i].monitorEvent { sim.cancel(h) }
            if let h = tasks[i].chunkEvent { sim.cancel(h) }
            tasks[i].endEvent = nil
            tasks[i].monitorEvent = nil
            tasks[i].chunkEvent = nil
            if outcome == .completed { keepResult(i) }
        case .eligible:
            if let k = eligible.firstIndex(where: { $0.id == id }) { eligible.removeQuickly(at: k) }
            shownIsStale = true
            apps[app].scheduler.remove(id)
            hold(id, nil, at: time)
        case .waiting:
            if let h = tasks[i].eligibleEvent { sim.cancel(h) }
            tasks[i].eligibleEvent = nil
            apps[app].scheduler.remove(id)
            if apps[app].heldPush == i {
                apps[app].heldPush = nil
                heldPushes -= 1
            }
            if tasks[i].request.kind == .backgroundTransfer { pendingTransfers.removeAll { $0 == i } }
        case .ended: preconditionFailure("unreachable")
        }
        tasks[i].status = .ended(outcome)
        tasks[i].endedAt = time
        tasks.endedSinceCompaction += 1
        var record = endedRecord(i)
        sink.taskEvent(.ended(record), at: time)
        policy.taskEnded(record)
        // Its share of the radio tail after its transfer is known only when that tail ends.
        if links[0].users.contains(.task(i)) || links[1].users.contains(.task(i)) {
            tasks[i].awaitingTail = true
        } else {
            report(i, completing: &record)
        }
        if suspendIfIdle, tasks[i].started != nil, apps[app].running == 0, apps[app].life.state == .background {
            move(app, to: .suspended, cause: .workDone)
        }
    }

    /// An ended task's record as the sink's and the policy's end-of-task calls see it: the
    /// request, times, outcome and energy so far (a share of a radio tail may come later).
    /// Inlined: a call returns the 344-byte record through memory, and callgrind showed the
    /// copies costing more than the second record they save.
    @inline(__always)
    func endedRecord(_ i: Int) -> TaskRecord {
        guard case .ended(let outcome) = tasks[i].status else { preconditionFailure("task \(i) has not ended") }
        var record = TaskRecord(
            request: tasks[i].request, started: tasks[i].started, ended: tasks[i].endedAt,
            outcome: outcome, energyJ: tasks[i].cpuJ + tasks[i].radioJ, radioEnergyJ: tasks[i].radioJ)
        record.success = outcome == .completed && tasks[i].request.success
        record.rejection = tasks[i].rejection
        return record
    }

    /// Reports an ended task's complete record: what it used (energy, CPU time, bytes, holds).
    mutating func report(_ id: TaskID) {
        var record = endedRecord(id.rawValue)
        report(id.rawValue, completing: &record)
    }

    /// Completes `record`, made by `endedRecord` and not changed since, and reports it. A task
    /// with no tail share to wait for is reported from `finish`, which passes the record it
    /// made for the end-of-task calls: a second record (344 bytes, the request's strings
    /// retained) cost about 160 instructions a task.
    mutating func report(_ i: Int, completing record: inout TaskRecord) {
        tasks[i].awaitingTail = false
        record.radioTailEnergyJ = tasks[i].tailJ
        record.cpuTime = tasks[i].cpuTime
        if tasks[i].started != nil {
            record.movedUpBytes = max(0, (tasks[i].request.upBytes - tasks[i].leftUpBits / 8).rounded(.down))
            record.movedDownBytes = max(0, (tasks[i].request.downBytes - tasks[i].leftDownBits / 8).rounded(.down))
        }
        record.held = tasks[i].held
        let reasons = tasks[i].policyReasons
        if reasons != 0 {
            record.policyReasons = policyReasonTokens.indices.filter { reasons & (1 << UInt32($0)) != 0 }
                .map { policyReasonTokens[$0] }
        }
        sink.taskEnded(record)
    }

    /// Reports the tasks whose radio bursts are over and that were only waiting for that.
    /// Inlined, for the check: it runs twice per radio event and finds nothing to report
    /// almost every time, and the call cost more than the check (about 2 M instructions a
    /// 30-day run).
    @inline(__always)
    mutating func settleRadio(_ r: Radio) {
        if !links[r.rawValue].settled.isEmpty { reportSettled(r) }
    }

    /// The link's outbox is read in place and then emptied, so its storage is reused.
    mutating func reportSettled(_ r: Radio) {
        let n = links[r.rawValue].settled.count
        for k in 0..<n {
            guard case .task(let i) = links[r.rawValue].settled[k], tasks.isKept(i), tasks[i].awaitingTail,
                !links[0].users.contains(.task(i)), !links[1].users.contains(.task(i))
            else { continue }
            report(TaskID(i))
        }
        links[r.rawValue].clearSettled()
    }

    // MARK: - Life cycle

    mutating func move(_ app: Int, to state: AppState, cause: LifecycleCause) {
        let from = apps[app].life.state, wasSwipedAway = apps[app].life.swipedAway
        apps[app].life.move(to: state, cause: cause)
        if from.isForeground != state.isForeground || wasSwipedAway != apps[app].life.swipedAway { appGateChanges &+= 1 }
        sink.lifecycle(LifecycleTransition(app: app, from: from, to: state, cause: cause), at: sim.now)
    }

    /// Starts the app's process; it registers its task identifiers before launching finishes.
    mutating func launchProcess(_ app: Int, into state: AppState, cause: LifecycleCause) {
        move(app, to: state, cause: cause)
        for task in setup.apps[app].tasks {
            switch apps[app].scheduler.register(task.identifier) {
            case .registered: break
            case .notPermitted: sink.taskEvent(.registrationFailed(app: app, identifier: task.identifier), at: sim.now)
            case .duplicate: preconditionFailure("identifiers are unique per app")
            }
        }
        redoLost(app)
    }

    /// Ends the app's process: its running work is killed; pending requests stay with the
    /// system.
    ///
    /// The system carries an app's background transfers on without it, unless the person
    /// swiped the app away (then they are cancelled) or the phone died. A mode session ends
    /// with the app: it was used as it went, so it counts as completed, not wasted.
    mutating func terminate(_ app: Int, cause: LifecycleCause) {
        for i in runningIDs where tasks[i].status == .running && tasks[i].request.app == app {
            let kind = tasks[i].request.kind
            if kind == .backgroundTransfer && !tasks[i].holdsApp {
                if cause == .swipe || cause == .shutdown {
                    finish(TaskID(i), cause == .swipe ? .cancelled : .killed, at: sim.now, suspendIfIdle: false)
                }
                continue
            }
            finish(TaskID(i), kind.isMode ? .completed : .killed, at: sim.now, suspendIfIdle: false)
        }
        if cause == .swipe {
            for i in pendingTransfers where tasks[i].request.app == app { finish(TaskID(i), .cancelled, at: sim.now) }
        }
        loseUnsaved(app, cause: cause)
        apps[app].scheduler.processEnded()
        apps[app].enteredBackground = nil
        if frontApp == app { frontApp = nil }
        move(app, to: .notRunning, cause: cause)
    }

    /// Puts the app the person is looking at in the foreground and the one they left in the
    /// background. A call takes the foreground from an app and gives it back.
    mutating func updateFront(cause: LifecycleCause) {
        let wanted = inCall ? nil : foreground.flatMap { world.drawnLaunch($0).app }
        guard wanted != frontApp else { return }
        if let old = frontApp {
            frontApp = nil
            enterBackground(old, cause: cause == .open ? .leave : cause)
        }
        if let new = wanted {
            frontApp = new
            enterForeground(new, cause: cause)
        }
    }

    mutating func enterForeground(_ app: Int, cause: LifecycleCause) {
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .inactive, cause: cause)
        case .background, .suspended: move(app, to: .inactive, cause: cause)
        case .active, .inactive: preconditionFailure("app \(app) is already in the foreground")
        }
        move(app, to: .active, cause: cause)
        apps[app].enteredBackground = nil
        // The person sees what the app fetched; it saves its state on the way out
        // (assumption: apps archive in `applicationDidEnterBackground`).
        apps[app].unsaved.removeAll()
        // Finite-length work keeps running in the foreground, without a deadline.
        for i in runningIDs
        where tasks[i].status == .running && tasks[i].request.app == app
            && tasks[i].request.kind.usesGrant && !isExpiring(TaskID(i))
        {
            tasks[i].deadline = nil
            rescheduleEnd(TaskID(i))
        }
        // After the horizon the app's code no longer changes what is pending.
        if cause == .open && setup.apps[app].cancelOnOpen && !draining { cancelAll(app: app) }
    }

    /// The app leaves the foreground: `didEnterBackground`, where it may begin finite-length
    /// work and submit requests; then it is suspended unless it has work running.
    mutating func enterBackground(_ app: Int, cause: LifecycleCause) {
        // Already inactive when an interruption was over it.
        if apps[app].life.state != .inactive { move(app, to: .inactive, cause: cause) }
        // Swiped away as it is left: the app switcher shows it inactive and the swipe ends
        // it there, before `didEnterBackground` (docs/sources.md §1), so it begins no work
        // and submits nothing. Its leave draws are made all the same, so that later leaves
        // draw what they would have.
        if swipingAway == app && !draining {
            if !setup.apps[app].exitsOnSuspend {
                discardLeaveDraws(app)
                startModeSession(app: app)
            }
            terminate(app, cause: .swipe)
            return
        }
        move(app, to: .background, cause: cause)
        // `UIApplicationExitsOnSuspend`: the app terminates instead of suspending, after
        // `applicationWillTerminate`, and does nothing in the background.
        if setup.apps[app].exitsOnSuspend {
            terminate(app, cause: .exitsOnSuspend)
            return
        }
        apps[app].enteredBackground = sim.now
        let deadline = sim.now + setup.system.backgroundTime
        for i in runningIDs
        where tasks[i].status == .running && tasks[i].request.app == app
            && tasks[i].request.kind.usesGrant && !isExpiring(TaskID(i))
        {
            tasks[i].deadline = deadline
            rescheduleEnd(TaskID(i))
        }
        // After the horizon only the work already running finishes.
        if draining {
            if apps[app].running == 0 { move(app, to: .suspended, cause: .workDone) }
            return
        }
        let stream = streams.appLeave[app]
        for n in setup.apps[app].backgroundWork.indices where setup.apps[app].backgroundWork[n].begin == .leave {
            // Drawn whether or not the work begins, so later draws stay aligned.
            let begins = stream.bernoulli(setup.apps[app].backgroundWork[n].probability)
            let cpu = setup.apps[app].backgroundWork[n].cpu.draw(stream)
            let up = setup.apps[app].backgroundWork[n].upBytes.draw(stream)
            let down = setup.apps[app].backgroundWork[n].downBytes.draw(stream)
            let forgets = stream.bernoulli(setup.apps[app].forgetsEndBackground)
            guard begins else { continue }
            let id = TaskID(tasks.count)
            var request = TaskRequest(
                id: id, app: app, kind: .finiteLength, identifier: backgroundWorkIdentifiers[n],
                submitted: sim.now, earliestBegin: sim.now, work: SimDuration(seconds: cpu),
                powerW: setup.apps[app].cpuPowerW ?? setup.power.cpuBackgroundW)
            request.upBytes = up.rounded()
            request.downBytes = down.rounded()
            request.forgetsCompletion = forgets
            request.expirationResponse = setup.apps[app].expirationResponse
            tasks.append(TaskState(request: consume request, model: nil))
            tasks[id.rawValue].deadline = deadline
            begin(id)
        }
        for k in submitsOnLeave[app].indices where submitsOnLeave[app][k] {
            submit(app: app, task: k, earliestBegin: sim.now + setup.apps[app].tasks[k].earliestBegin)
        }
        startModeSession(app: app)
        if let transfers = setup.apps[app].backgroundTransfers, let stream = streams.appTransfer[app] {
            // Drawn at every leave, whether or not a transfer is handed over.
            let hands = stream.bernoulli(transfers.probability)
            let up = transfers.upBytes.draw(stream).rounded(), down = transfers.downBytes.draw(stream).rounded()
            let cpu = SimDuration(seconds: transfers.cpu.draw(stream))
            if hands {
                handOverTransfer(app: app, work: cpu, upBytes: up, downBytes: down, discretionary: transfers.discretionary)
                startPendingTransfers()
            }
        }
        // The system lets the app finish what it was doing for a moment before suspending it.
        if apps[app].running == 0 && apps[app].life.state == .background {
            if setup.system.suspensionDelay > .zero {
                sim.schedule(.suspend(app), at: sim.now + setup.system.suspensionDelay, priority: Self.worldPriority)
            } else {
                move(app, to: .suspended, cause: .workDone)
            }
        }
    }

    /// The moment after the app left is over: suspended, unless it has work running or is
    /// no longer in the background it entered then.
    mutating func suspendAfterLeaving(_ app: Int) {
        guard apps[app].life.state == .background, apps[app].running == 0,
            apps[app].enteredBackground.map({ $0 + setup.system.suspensionDelay == sim.now }) ?? false
        else { return }
        move(app, to: .suspended, cause: .workDone)
    }

    /// The draws a leave makes for finite-length work and background transfers, unused.
    mutating func discardLeaveDraws(_ app: Int) {
        let stream = streams.appLeave[app]
        for work in setup.apps[app].backgroundWork where work.begin == .leave {
            _ = stream.bernoulli(work.probability)
            _ = work.cpu.draw(stream)
            _ = work.upBytes.draw(stream)
            _ = work.downBytes.draw(stream)
            _ = stream.bernoulli(setup.apps[app].forgetsEndBackground)
        }
        if let transfers = setup.apps[app].backgroundTransfers, let stream = streams.appTransfer[app] {
            _ = stream.bernoulli(transfers.probability)
            _ = transfers.upBytes.draw(stream)
            _ = transfers.downBytes.draw(stream)
            _ = transfers.cpu.draw(stream)
        }
    }

    /// `UIApplication.backgroundTimeRemaining` for the app now: the rest of the grant while
    /// it is in the background with finite-length work, unlimited in the foreground (iOS
    /// returns `greatestFiniteMagnitude`), nothing otherwise.
    @inline(__always)
    public func backgroundTimeRemaining(app: Int) -> SimDuration? {
        let life = apps[app].life
        if life.state.isForeground { return nil }
        guard life.state == .background, let entered = apps[app].enteredBackground else { return .zero }
        return max(.zero, entered + setup.system.backgroundTime - sim.now)
    }

    // MARK: - The person

    mutating func launch(_ i: Int) {
        let l = world.drawnLaunch(i)
        if let next = world.launch(i + 1) { scheduleWorld(.launch(i + 1), at: next.start) }
        // Launch i - 1's leave may still be due at this instant.
        world.forget(launchesBefore: i - 1)
        scheduleWorld(.leave(i), at: l.end)
        let wasInUse = inUse
        foreground = i
        sink.worldEvent(.launch(app: l.app), at: sim.now)
        guard isOn else { return }
        if let app = l.app { usage.opened(app, at: sim.now) }
        // The system ends processing tasks when the person starts using the phone (docs/sources.md §2).
        if !wasInUse { endProcessing(.deviceInUse) { _ in true } }
        updateFront(cause: .open)
        if let app = l.app, setup.apps[app].launchDownBytes > 0 {
            send(Transfer(owner: .foreground, upBytes: 0, downBytes: setup.apps[app].launchDownBytes))
        }
        if let app = l.app, let stream = streams.appUse[app] { drawInUseWork(app, launch: l, stream: stream) }
    }

    /// The finite-length work the app begins while in use this launch: drawn now, for every
    /// such work whether or not it begins, so later launches draw the same.
    mutating func drawInUseWork(_ app: Int, launch l: AppLaunch, stream: RandomStream) {
        for n in setup.apps[app].backgroundWork.indices where setup.apps[app].backgroundWork[n].begin == .inUse {
            let work = setup.apps[app].backgroundWork[n]
            let begins = stream.bernoulli(work.probability)
            let at = stream.uniform(0, 1)
            let cpu = work.cpu.draw(stream), up = work.upBytes.draw(stream), down = work.downBytes.draw(stream)
            let forgets = stream.bernoulli(setup.apps[app].forgetsEndBackground)
            guard begins, !draining else { continue }
            let time = sim.now + SimDuration(seconds: at * (l.end - l.start).seconds)
            var request = TaskRequest(
                id: TaskID(0), app: app, kind: .finiteLength, identifier: backgroundWorkIdentifiers[n],
                submitted: time, earliestBegin: time, work: SimDuration(seconds: cpu),
                powerW: setup.apps[app].cpuPowerW ?? setup.power.cpuBackgroundW)
            request.upBytes = up.rounded()
            request.downBytes = down.rounded()
            request.forgetsCompletion = forgets
            request.expirationResponse = setup.apps[app].expirationResponse
            inUseWork[nextInUseKey] = request
            sim.schedule(.beginInUse(nextInUseKey), at: time, priority: Self.worldPriority)
            nextInUseKey += 1
        }
    }

    /// The app's extensions' next run, drawn as the run goes (a Poisson process), before the horizon.
    mutating func scheduleExtensionRun(_ app: Int) {
        guard let stream = streams.appExtension[app] else { return }
        let next = sim.now + SimDuration(seconds: stream.exponential(mean: 86_400 / setup.apps[app].extensionRunsPerDay))
        if next < .after(setup.duration) { sim.schedule(.extensionRun(app), at: next, priority: Self.worldPriority) }
    }

    /// An extension of the app runs and submits the tasks it schedules; they run in the main
    /// app, which the system launches for them (docs/sources.md §2).
    mutating func extensionRan(_ app: Int) {
        scheduleExtensionRun(app)
        guard isOn, !draining else { return }
        for k in setup.apps[app].tasks.indices where setup.apps[app].tasks[k].submitOn.contains(.extension) {
            submit(app: app, task: k, earliestBegin: sim.now + setup.apps[app].tasks[k].earliestBegin)
        }
    }

    /// `beginBackgroundTask` while the person uses the app: the work runs without a deadline
    /// in the foreground, and within the grant once the app is in the background (a call
    /// may have sent it there). Nothing begins in an app that is not running.
    mutating func beginInUse(_ key: Int) {
        guard var request = inUseWork.removeValue(forKey: key) else { return }
        let app = request.app
        guard isOn, !draining, apps[app].life.state.isForeground || apps[app].life.state == .background else { return }
        let id = TaskID(tasks.count)
        request.id = id
        tasks.append(TaskState(request: consume request, model: nil))
        if !apps[app].life.state.isForeground, let entered = apps[app].enteredBackground {
            tasks[id.rawValue].deadline = entered + setup.system.backgroundTime
        }
        begin(id)
    }

    mutating func leave(_ i: Int) {
        let l = world.drawnLaunch(i)
        if foreground == i { foreground = nil }
        if let app = l.app { usage.left(app, at: sim.now) }
        if !inUse { lastInUse = sim.now }
        sink.worldEvent(.leave(app: l.app, swipedAway: l.swipedAway), at: sim.now)
        guard isOn else { return }
        swipingAway = l.swipedAway ? l.app : nil
        updateFront(cause: .leave)
        swipingAway = nil
        // A swipe in the app switcher terminates the app, unless the person went straight
        // back to it.
        if let app = l.app, l.swipedAway, frontApp != app {
            if apps[app].life.state.isRunning {
                terminate(app, cause: .swipe)
            } else {
                apps[app].life.markSwipedAway()
                appGateChanges &+= 1
            }
        }
    }

    /// Notification Centre, Control Centre or a declined call over the app in use: it resigns
    /// active and stays in the foreground (docs/sources.md §1).
    mutating func interrupt(_ i: Int) {
        let x = world.drawnInterruption(i)
        if let next = world.interruption(i + 1) { scheduleWorld(.interrupt(i + 1), at: next.start) }
        world.forget(interruptionsBefore: i - 1)
        scheduleWorld(.interruptEnd(i), at: x.end)
        guard isOn, frontApp == x.app, apps[x.app].life.state == .active else { return }
        move(x.app, to: .inactive, cause: .interruption)
    }

    mutating func endInterruption(_ i: Int) {
        let app = world.drawnInterruption(i).app
        guard isOn, frontApp == app, apps[app].life.state == .inactive else { return }
        move(app, to: .active, cause: .interruption)
    }

    mutating func startCall(_ i: Int) {
        let call = world.call(i)!
        if let next = world.call(i + 1) { scheduleWorld(.call(i + 1), at: next.start) }
        scheduleWorld(.callEnd(i), at: call.end)
        world.forget(callsBefore: i)
        let wasInUse = inUse
        inCall = true
        sink.worldEvent(.callStarted, at: sim.now)
        guard isOn else { return }
        if !wasInUse { endProcessing(.deviceInUse) { _ in true } }
        updateFront(cause: .call)
    }

    mutating func endCall() {
        inCall = false
        if !inUse { lastInUse = sim.now }
        sink.worldEvent(.callEnded, at: sim.now)
        guard isOn else { return }
        updateFront(cause: .call)
    }

    /// Memory pressure purges a suspended app, without notice (docs/sources.md §1). A purge a
    /// trace names may also hit an app running in the background, which then hears
    /// `applicationWillTerminate`; drawn purges pick among suspended apps, which the system
    /// reclaims first.
    mutating func purge(_ i: Int) {
        let p = world.people.purges[i]
        if i + 1 < world.people.purges.count { scheduleWorld(.purge(i + 1), at: world.people.purges[i + 1].time) }
        var victim: Int?
        if let named = p.app {
            let state = apps[named].life.state
            victim = state == .suspended || state == .background ? named : nil
        } else {
            var suspended = 0
            for a in apps.indices where apps[a].life.state == .suspended { suspended += 1 }
            if suspended > 0 {
                var pick = min(Int(p.pick * Double(suspended)), suspended - 1)
                for a in apps.indices where apps[a].life.state == .suspended {
                    if pick == 0 { victim = a; break }
                    pick -= 1
                }
            }
        }
        if let victim { terminate(victim, cause: .purge) }
        sink.worldEvent(.purge(app: victim), at: sim.now)
    }

    // MARK: - Policy

    /// What the gates read besides each request's own fixed fields (`closedGate`): the
    /// phone's state in bits, and how many times an app entered or left the foreground or
    /// the swiped-away state.
    @inline(__always)
    var gateKey: GateKey {
        var bits = UInt8(truncatingIfNeeded: networkState.kind.index)
        if isOn { bits |= 1 << 2 }
        if lowPower { bits |= 1 << 3 }
        if inUse { bits |= 1 << 4 }
        if isCharging { bits |= 1 << 5 }
        return GateKey(phone: bits, appChanges: appGateChanges)
    }

    mutating func consultPolicy() {
        guard !eligible.isEmpty else { return }
        // Each request's gates, noted for its hold times. A request no gate holds is shown to
        // the policy; one the policy held last time stays held by it until the policy starts
        // it or a gate closes (hold times are whole microseconds, so not splitting the hold
        // at every decision changes nothing). Most of the time every request passes, and
        // `eligible` itself is shown; otherwise the open ones, in a buffer kept across calls
        // and rebuilt only when a gate opened or closed or the eligible requests changed
        // (rebuilt at every decision, it was a fifth of the decisions' own cost for ios: perf).
        //
        // A request whose gates were checked since anything they read last changed (the same
        // `gateEpoch`) keeps its answer, which its hold already records: a gate's reason, or
        // none or the policy's when open. Requests waiting for the charger sit in the list all
        // day, checked again at every decision before (callgrind, one 30-day reference run:
        // ios's decisions 76.5 M -> 72.8 M instructions, eager's 42.0 M -> 41.4 M).
        let key = gateKey
        if key != gateEpochKey {
            gateEpochKey = key
            gateEpoch &+= 1
        }
        var closed = 0
        for k in eligible.indices {
            if eligible[k].gatesCheckedAt == gateEpoch {
                let held = eligible[k].heldBy
                assert(closedGate(eligible[k]) == (held == .policy ? nil : held), "a gate's answer changed within its epoch")
                if held != nil && held != .policy { closed += 1 }
                continue
            }
            eligible[k].gatesCheckedAt = gateEpoch
            let gate = closedGate(eligible[k])
            let current = eligible[k].heldBy
            assert(current == tasks[eligible[k].id.rawValue].heldBy, "the eligible list's copy of a hold differs from the task's")
            if gate != current && !(gate == nil && current == .policy) {
                hold(eligible: k, gate)
                shownIsStale = true
            }
            if gate != nil { closed += 1 }
        }
        guard closed < eligible.count else { return }
        var state = DeviceState(
            now: sim.now, charge: battery.charge, isCharging: isCharging,
            network: networkState.kind, inUse: inUse, inCall: inCall, lowPowerMode: lowPower)
        state.networkQuality = networkQuality
        state.radioAwake = currentRadio.map { links[$0.rawValue].isAwake } ?? false
        if !inUse { state.lastInUse = lastInUse }
        state.powerChangedAt = powerChangedAt
        state.usage = usage
        let decision: PolicyDecision
        if closed == 0 {
            decision = policy.decide(state, eligible: eligible)
        } else {
            if shownIsStale {
                shown.removeAllKeepingCapacity()
                for task in eligible where isShown(task) { shown.append(task) }
                shownIsStale = false
            }
            // Debug builds (the tests) check the kept list against a fresh one at every decision.
            assert(shown.map(\.id) == eligible.filter { isShown($0) }.map(\.id), "the requests shown are not the open ones")
            decision = policy.decide(state, eligible: shown)
        }
        // The ids to start, in a buffer kept across calls (no allocation per decision).
        starting.removeAllKeepingCapacity()
        switch decision.start {
        case .none: break
        case .all:
            for task in eligible where isShown(task) { starting.append(task.id) }
        case .some(let chosen):
            for id in chosen {
                require(eligible.contains { $0.id == id && isShown($0) }, "policy \(policy.name) chose \(id), which it was not shown")
            }
            starting.append(contentsOf: chosen)
        }
        if starting.count < eligible.count - closed {
            let bit = policyReasonBit(decision.reason)
            for k in eligible.indices where isShown(eligible[k]) && !starting.contains(eligible[k].id) {
                if eligible[k].heldBy == nil { hold(eligible: k, .policy) }
                // Written only when new: a request the policy holds is held again at most
                // decisions, and a write checks first that the storage is not shared.
                if eligible[k].policyReasons & bit == 0 {
                    eligible[k].policyReasons |= bit
                    tasks[eligible[k].id.rawValue].policyReasons |= bit
                }
            }
        }
        if !starting.isEmpty {
            let ids = starting
            if ids.count == eligible.count {
                eligible.removeAllKeepingCapacity()
            } else {
                eligible.removeAll { ids.contains($0.id) }
            }
            shownIsStale = true
            for id in ids { start(id) }
            rescheduleBatteryEvent()
        }
        if let at = decision.reconsiderAt {
            // Strictly later: a policy woken at the instant it was asked could loop there forever.
            require(at > sim.now, "policy \(policy.name) asked to be woken at \(at), which is not after now (\(sim.now))")
            sim.setTimer(policyTimer, .policyWake, at: at, priority: Self.policyPriority)
        } else {
            sim.cancelTimer(policyTimer)
        }
    }
}
