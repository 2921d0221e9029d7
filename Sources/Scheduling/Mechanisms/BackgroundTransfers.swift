import PhoneWorld
import SimEngine

/// Background URLSession transfers (docs/sources.md §1-3): handed to the system as the person
/// leaves the app, carried out without it (discretionary ones on Wi-Fi and power), then
/// handed back to the app, woken for `wakeBudget`.
extension PhoneSimulation {
    /// The app may hand the system a transfer as it enters the background: drawn at every
    /// leave, whether or not one is handed over.
    mutating func handOverTransfers(_ app: Int) {
        guard let transfers = model.apps[app].transfers, let stream = streams.appTransfer[app] else { return }
        let hands = stream.bernoulli(transfers.probability)
        let up = transfers.upBytes.draw(stream).rounded(), down = transfers.downBytes.draw(stream).rounded()
        let cpu = SimDuration(seconds: transfers.cpu.draw(stream))
        guard hands else { return }
        let id = newTask(app: app, kind: .backgroundTransfer, work: cpu, upBytes: up, downBytes: down)
        // A discretionary transfer waits for Wi-Fi and power; the flag is the request's
        // power requirement, which nothing else reads for this kind.
        if transfers.discretionary { tasks[id.rawValue].flags.insert(.requiresExternalPower) }
        tasks[id.rawValue].flags.insert(.requiresNetworkConnectivity)
        if sink.observesTaskSteps { sink.taskEvent(.submitted(request(id.rawValue), replaced: nil), at: sim.now) }
        pendingTransfers.append(id.rawValue)
        startPendingTransfers()
    }

    /// Starts the waiting transfers the system now allows: all while the phone is on, the
    /// discretionary ones only on Wi-Fi and external power. A started one without a
    /// connection waits on the radio's queue for one.
    mutating func startPendingTransfers() {
        guard books.isOn, !draining else { return }
        let waiting = pendingTransfers
        pendingTransfers.removeAll()
        for i in waiting {
            if tasks[i].flags.contains(.requiresExternalPower) && !(books.isCharging && radios.connection.kind == .wifi) {
                pendingTransfers.append(i)
                continue
            }
            // URLSession's `timeoutIntervalForResource` defaults to 7 days (Apple,
            // URLSessionConfiguration): the system gives up on a transfer after that.
            tasks[i].deadline = sim.now + .days(7)
            begin(TaskID(i))
        }
    }

    /// The system finished the transfer: it launches or resumes the app in the background
    /// to handle it, with `wakeBudget`.
    mutating func transferDelivered(_ id: TaskID) {
        let i = id.rawValue, app = tasks[i].appIndex
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background, .active, .inactive: break
        }
        tasks[i].flags.insert(.holdsApp)
        apps[app].running += 1
        setCPU(i, on: true)
        tasks[i].deadline = sim.now + setup.system.wakeBudget
        tasks[i].phase = .working
        tasks[i].transferEnd = sim.now
        tasks[i].workEnd = sim.now + tasks[i].work
        rescheduleEnd(i)
    }
}
