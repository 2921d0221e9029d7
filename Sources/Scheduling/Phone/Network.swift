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
        if let old, old != new {
            radios.links[old].advance(to: sim.now)
            for t in radios.links[old].disconnect(at: sim.now) {
                radios.held.append(Radios.Held(transfer: t, cellularAllowed: mayUseCellular(t.owner)))
                // Its end is not known until it is a link's head again.
                if case .task(let i) = t.owner, tasks[i].status == .running, tasks[i].phase == .working, !tasks[i].kind.isMode,
                    tasks[i].transferEnd != .distantFuture
                {
                    setTransferEnd(i, .distantFuture)
                }
            }
            settleRadios()
        }
        if let new {
            // A new rate moves the end of the active phase, and every completion.
            radios.links[new].advance(to: sim.now)
            radios.links[new].setThroughput(upMbps: radios.connection.upMbps, downMbps: radios.connection.downMbps, at: sim.now)
            let held = radios.held
            radios.held.removeAll()
            for h in held { send(h.transfer, cellularAllowed: h.cellularAllowed) }
        }
    }

    /// Sends a transfer over the current connection, or holds it until there is one it may
    /// use (`syncTransfers` gives its task its end).
    mutating func send(_ transfer: Transfer) {
        send(transfer, cellularAllowed: mayUseCellular(transfer.owner))
    }

    mutating func send(_ transfer: Transfer, cellularAllowed: Bool) {
        let sent = radios.send(transfer, cellularAllowed: cellularAllowed, at: sim.now)
        // A transfer in a tail starts a new burst: the last one's users are settled now.
        settleRadios()
        if sent, sink.observesTaskSteps, case .task(let i) = transfer.owner {
            sink.taskEvent(.transfer(TaskID(i), app: tasks[i].appIndex, radios.connection.kind), at: sim.now)
        }
    }

    /// With Background App Refresh on Wi-Fi only, background tasks never use cellular.
    @inline(__always)
    fileprivate func mayUseCellular(_ owner: TransferOwner) -> Bool {
        guard setup.settings.backgroundAppRefresh == .wifi, case .task(let i) = owner else { return true }
        return !tasks[i].kind.isScheduled
    }

    /// Drops every transfer of the task, held or on a radio, and notes the bits they had left.
    /// A task has one transfer, except a continuous-mode session, whose chunks pile up while
    /// there is no connection or behind each other on a slow link: all of them go, or the
    /// rest would be sent on behalf of a task that has ended. The transfers behind it finish
    /// sooner: their link's timer moves, no task's.
    mutating func cancelTransfer(of id: TaskID) {
        let i = id.rawValue
        let (up, down) = radios.cancel(.task(i), at: sim.now)
        tasks[i].left.upBits = up
        tasks[i].left.downBits = down
        settleRadios()
    }

    /// Each link's head transfer is the one whose completion is exact: its task's phase ends
    /// by it. Those behind wait with no end of their own (their phase can end only with their
    /// time), and the link's timer fires at the head's completion while one waits, when the
    /// next becomes head. A change on a link so moves one task's event and one timer, not one
    /// per task queued (at 500 apps, that rescheduling was most of a run). Called after each
    /// event: a head that changed within it is served from a later instant.
    @inline(__always)
    mutating func syncTransfers() {
        for r in radios.links.indices where radios.links[r].changes != radios.synced[r].changes {
            radios.synced[r].changes = radios.links[r].changes
            guard let (owner, completion) = radios.links[r].served else {
                if radios.synced[r].due != nil {
                    radios.synced[r].due = nil
                    sim.cancelTimer(transferTimers[r])
                }
                continue
            }
            if case .task(let i) = owner, tasks[i].status == .running, tasks[i].phase == .working, !tasks[i].kind.isMode,
                tasks[i].transferEnd != completion
            {
                setTransferEnd(i, completion)
            }
            let due = radios.links[r].queueCount > 1 ? completion : nil
            guard radios.synced[r].due != due else { continue }
            radios.synced[r].due = due
            if let due {
                sim.setTimer(transferTimers[r], .transferDone(r), at: due, priority: PhoneEvent.taskEndPriority)
            } else {
                sim.cancelTimer(transferTimers[r])
            }
        }
    }

    /// Task `i`'s transfer ends at `end` (`.distantFuture`: not known while it waits), and its
    /// work after it. Its phase's end moves only if it changes: a request that will run out
    /// of time first keeps its event, and its place among others at the same instant.
    mutating func setTransferEnd(_ i: Int, _ end: SimInstant) {
        let before = min(tasks[i].deadline, tasks[i].workEnd)
        tasks[i].setTransferEnd(end)
        tasks[i].setWorkEnd(workEnd(i, transferEnd: end))
        if min(tasks[i].deadline, tasks[i].workEnd) != before || tasks[i].timer == nil { rescheduleEnd(i) }
    }
}

/// Bits a task's transfer had left when the task ended before it did: written only here.
struct LeftBits {
    fileprivate(set) var upBits = 0.0
    fileprivate(set) var downBits = 0.0
}
