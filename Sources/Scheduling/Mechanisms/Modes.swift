import PhoneWorld
import SimEngine

/// Continuous background modes (`UIBackgroundModes` audio, location, voip, Bluetooth): a
/// session the person began goes on after they leave the app, keeping it running in the
/// background, drawing the mode's power and fetching its chunks (docs/sources.md §1).
extension PhoneSimulation {
    /// The person leaves an app with a session going (music, navigation, a call, an
    /// accessory) with the mode's probability; it goes on for a drawn time.
    mutating func startModeSession(app: Int) {
        guard let mode = model.apps[app].mode, let stream = streams.appMode[app] else { return }
        // Drawn at every leave, so later sessions do not depend on earlier ones' ends.
        let starts = stream.bernoulli(mode.probability)
        let length = SimDuration(seconds: mode.duration.draw(stream))
        guard starts, apps[app].modeSession == nil, length > .zero, person.swipingAway != app, mode.declared else { return }
        let id = newTask(app: app, kind: TaskKind(mode.kind), work: length)
        tasks[id.rawValue].powerW = mode.powerW
        begin(id)
    }

    /// A session's next chunk of network use, and the one after.
    mutating func modeChunk(_ id: TaskID) {
        let i = id.rawValue
        tasks[i].chunkEvent = nil
        guard tasks[i].status == .running, let mode = model.apps[tasks[i].appIndex].mode, let every = mode.chunkInterval else { return }
        send(Transfer(owner: .task(i), upBytes: mode.chunkUpBytes, downBytes: mode.chunkDownBytes))
        let next = sim.now + every
        if next < tasks[i].workEnd {
            tasks[i].chunkEvent = sim.schedule(.modeChunk(id), at: next, priority: PhoneEvent.taskEndPriority)
        }
    }
}
