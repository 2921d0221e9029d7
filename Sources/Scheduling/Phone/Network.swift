import PhoneWorld
import SimEngine

/// The connection changing, and transfers going to the radios: the glue between the world's
/// network, `Radios` and the tasks whose data they carry.
extension PhoneSimulation {
    mutating func changeNetwork(_ index: Int) {
        guard let change = world.networkChange(index) else { return }
        world.forget(networkChangesBefore: index)
        if let next = world.networkChange(index + 1) { scheduleWorld(.network(index + 1), at: next.time) }
        let old = radios.current
        radios.connection = change.state
        radios.quality = change.state.quality
        books.setNetwork(change.state.kind, at: sim.now)
        sink.worldEvent(.network(change.state), at: sim.now)
        let left = radios.place
        radios.place = change.place
        // After the radios have the new connection, so the woken apps can use it. Where the
        // phone is at the start of the run is where it was, not a crossing.
        let crosses = left != change.place && !(index == 0 && change.time == .start)
        defer { if crosses { mechanismsPlaceChanged(left: left, entered: change.place) } }
        guard books.isOn else { return }
        let new = radios.current
        var moved = false
        if let old, old != new {
            radios.links[old].advance(to: sim.now)
            for t in radios.links[old].disconnect(at: sim.now) {
                radios.held.append(Radios.Held(transfer: t, cellularAllowed: mayUseCellular(t.owner)))
            }
            settleRadios()
            moved = true
        }
        if let new {
            // A new rate moves the end of the active phase, and every completion.
            radios.links[new].advance(to: sim.now)
            radios.links[new].setThroughput(upMbps: radios.connection.upMbps, downMbps: radios.connection.downMbps, at: sim.now)
            let held = radios.held
            radios.held.removeAll()
            for h in held { _ = send(h.transfer, cellularAllowed: h.cellularAllowed) }
            moved = true
        }
        if moved { resyncTransfers() }
    }

    /// Sends a transfer over the current connection, or holds it until there is one it may
    /// use; returns when it will finish, if it went to a radio.
    @discardableResult
    mutating func send(_ transfer: Transfer) -> SimInstant? {
        send(transfer, cellularAllowed: mayUseCellular(transfer.owner))
    }

    mutating func send(_ transfer: Transfer, cellularAllowed: Bool) -> SimInstant? {
        let (sent, completion) = radios.send(transfer, cellularAllowed: cellularAllowed, at: sim.now)
        // A transfer in a tail starts a new burst: the last one's users are settled now.
        settleRadios()
        if sent, sink.observesTaskSteps, case .task(let i) = transfer.owner {
            sink.taskEvent(.transfer(TaskID(i), app: tasks[i].appIndex, radios.connection.kind), at: sim.now)
        }
        return completion
    }

    /// With Background App Refresh on Wi-Fi only, background tasks never use cellular.
    @inline(__always)
    func mayUseCellular(_ owner: TransferOwner) -> Bool {
        guard setup.settings.backgroundAppRefresh == .wifi, case .task(let i) = owner else { return true }
        return !tasks[i].kind.isScheduled
    }

    /// Drops every transfer of the task, held or on a radio, and notes the bits they had left.
    /// A task has one transfer, except a continuous-mode session, whose chunks pile up while
    /// there is no connection or behind each other on a slow link: all of them go, or the
    /// rest would be sent on behalf of a task that has ended.
    mutating func cancelTransfer(of id: TaskID) {
        let i = id.rawValue
        let (up, down) = radios.cancel(.task(i), at: sim.now)
        tasks[i].leftUpBits = up
        tasks[i].leftDownBits = down
        settleRadios()
        resyncTransfers(except: i)
    }

    /// After a change that moves the links' completions (a cancellation, a new throughput, a
    /// disconnection, held data sent): each running task whose transfer is still held or on a
    /// link takes its completion again, and the end of its phase moves with it. The links'
    /// completions are indexed once, not searched once per running task: at 500 apps the
    /// search was most of a run.
    mutating func resyncTransfers(except skipped: Int = -1) {
        var indexed = false
        for i in running where i != skipped && tasks[i].status == .running && !tasks[i].kind.isMode {
            guard tasks[i].phase == .working, tasks[i].transferEnd > sim.now else { continue }
            if !indexed {
                radios.indexTaskCompletions()
                indexed = true
            }
            let end = radios.indexedCompletion(of: i) ?? .distantFuture
            guard end != tasks[i].transferEnd else { continue }
            tasks[i].transferEnd = end
            tasks[i].workEnd = workEnd(i, transferEnd: end)
            rescheduleEnd(i)
        }
    }
}
