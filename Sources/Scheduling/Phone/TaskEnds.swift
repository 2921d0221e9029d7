import PhoneWorld
import SimEngine

/// Tasks reaching their final state, and what the sink and the policy are told of them: the
/// request and the record are made here from the task's state, when they are needed.
extension PhoneSimulation {
    /// Moves a task to its final state and reports it. A running task's app is suspended
    /// when it has no work left in the background, unless `suspendIfIdle` is false (the app
    /// is being terminated).
    mutating func finish(_ id: TaskID, _ outcome: TaskOutcome, at time: SimInstant, rejection: SubmitError? = nil, suspendIfIdle: Bool = true) {
        let i = id.rawValue
        if let rejection { tasks[i].end.rejection = rejection }
        if let earlier = tasks[i].outcome { preconditionFailure("\(id) ended twice: \(earlier), then \(outcome)") }
        let app = tasks[i].appIndex
        // Its energy so far is in its state: the radios charge their stretches up to now first.
        radios.advance(to: sim.now, through: false)
        drainRadioCharges()
        switch tasks[i].status {
        case .running:
            setCPU(i, on: false)
            running.ended(i)
            if tasks[i].flags.contains(.holdsApp) { apps.releases(app) }
            let transferring = tasks[i].isTransferring(at: sim.now) || tasks[i].kind.isMode
            tasks[i].ended()
            tasks[i].end.outcome = outcome
            // Ended first, so the resynchronised transfers skip it.
            if transferring { cancelTransfer(of: id) }
            if let h = tasks[i].timer { sim.cancel(h) }
            if let h = tasks[i].monitorEvent { sim.cancel(h) }
            tasks[i].setTimer(nil)
            tasks[i].setMonitor(nil)
            if !taskObservers[app].isEmpty { mechanismsTaskEnded(i, app: app, resultReady: outcome == .completed && tasks[i].phase == .working) }
        case .eligible:
            decisions.remove(id)
            apps[app].scheduler.remove(id)
            hold(i, nil, at: time)
        case .waiting:
            if let h = tasks[i].timer { sim.cancel(h) }
            tasks[i].setTimer(nil)
            apps[app].scheduler.remove(id)
        case .ended: preconditionFailure("unreachable")
        }
        tasks[i].ended()
        tasks[i].end.outcome = outcome
        tasks[i].end.endedAt = time
        tasks.endedSinceCompaction += 1
        var record = endedRecord(i)
        sink.taskEvent(.ended(record), at: time)
        policy.taskEnded(record)
        if tasks[i].kind.isDeclared { mechanismTaskEnded(i, outcome) }
        // Its share of the radio tail after its transfer is known only when that tail ends.
        if radioUsers(contain: .task(i)) {
            tasks[i].end.flags.insert(.awaitingTail)
        } else {
            report(i, completing: &record)
        }
        if suspendIfIdle, tasks[i].hasStarted, apps[app].running == 0, apps[app].life.state == .background {
            move(app, to: .suspended, cause: .workDone)
        }
    }

    /// Task `i`'s BGTaskScheduler identifier, or for the system's own work a name of its door.
    func identifier(of i: Int) -> String {
        let source = Int(tasks[i].source)
        switch tasks[i].kind {
        case .refresh, .processing: return model.identifiers[source]
        default:
            let k = MechanismRegistry.kindOwners[tasks[i].kind.index - TaskKind.builtIn.count]
            return mechanisms[k]!.identifier(app: tasks[i].appIndex, source: source)
        }
    }

    /// The request task `i` is, as sinks and policies see it.
    @inline(__always)
    func request(_ i: Int) -> TaskRequest {
        var r = TaskRequest(
            id: TaskID(i), app: tasks[i].appIndex, kind: tasks[i].kind, identifier: identifier(of: i),
            submitted: tasks[i].submitted, earliestBegin: tasks[i].earliestBegin, work: tasks[i].work, powerW: tasks[i].powerW)
        let flags = tasks[i].flags
        r.requiresExternalPower = flags.contains(.requiresExternalPower)
        r.requiresNetworkConnectivity = flags.contains(.requiresNetworkConnectivity)
        r.cpuShare = tasks[i].cpuShare
        r.upBytes = tasks[i].upBytes
        r.downBytes = tasks[i].downBytes
        r.success = flags.contains(.success)
        r.forgetsCompletion = flags.contains(.forgetsCompletion)
        r.expirationResponse = tasks[i].expirationResponse
        r.expirationHandler = flags.contains(.expirationHandler)
        return r
    }

    /// An ended task's record as the sink's and the policy's end-of-task calls see it: the
    /// request, times, outcome and energy so far (a share of a radio tail may come later).
    @inline(__always)
    fileprivate func endedRecord(_ i: Int) -> TaskRecord {
        guard let outcome = tasks[i].outcome else { preconditionFailure("task \(i) has not ended") }
        var record = TaskRecord(
            request: request(i), started: tasks[i].hasStarted ? tasks[i].started : nil, ended: tasks[i].endedAt,
            outcome: outcome, energyJ: tasks[i].cpuJ + tasks[i].radioJ, radioEnergyJ: tasks[i].radioJ)
        record.chargerEnergyJ = tasks[i].chargerJ
        record.success = outcome == .completed && tasks[i].flags.contains(.success)
        record.rejection = tasks[i].rejection
        let flags = tasks[i].flags
        record.overran = flags.contains(.overran)
        if flags.contains(.started) {
            record.startedCharging = flags.contains(.startedCharging)
            record.startedOn = flags.contains(.startedOnWifi) ? .wifi : flags.contains(.startedOnCellular) ? .cellular : NetworkKind.none
            if let deadline = tasks[i].deadlineOrNil { record.grant = deadline - tasks[i].started }
        }
        record.expiration = tasks[i].expiration
        return record
    }

    /// Reports an ended task's complete record: what it used (energy, CPU time, bytes, holds).
    mutating func report(_ i: Int) {
        var record = endedRecord(i)
        report(i, completing: &record)
    }

    /// Completes `record`, made by `endedRecord` and not changed since, and reports it.
    mutating func report(_ i: Int, completing record: inout TaskRecord) {
        tasks[i].end.flags.remove(.awaitingTail)
        record.radioTailEnergyJ = tasks[i].tailJ
        record.cpuTime = tasks[i].cpuTime
        if tasks[i].hasStarted {
            record.movedUpBytes = max(0, (tasks[i].upBytes - tasks[i].leftUpBits / 8).rounded(.down))
            record.movedDownBytes = max(0, (tasks[i].downBytes - tasks[i].leftDownBits / 8).rounded(.down))
        }
        record.held = tasks[i].held
        if record.held[.policy] > 0 {
            let held = record.held
            record.policyHolds = decisions.reasonTokens.indices.filter { held.byRule[$0] > 0 }
                .sorted { held.byRule[$0] > held.byRule[$1] || (held.byRule[$0] == held.byRule[$1] && $0 < $1) }
                .map { (decisions.reasonTokens[$0], held.rule($0)) }
            assert(held.byRule.wrappedSum() == held.microseconds[HoldReason.policy.rawValue], "\(i)'s rules do not sum to its policy hold")
        }
        sink.taskEnded(record)
    }
}

/// How a task ended: written only here.
struct Ending {
    fileprivate(set) var endedAt = SimInstant.start
    fileprivate(set) var rejection: SubmitError?
    fileprivate(set) var outcome: TaskOutcome?
    /// `awaitingTail`: ended with its radio burst still going, reported when the tail ends.
    fileprivate(set) var flags: TaskState.Flags = []
}
