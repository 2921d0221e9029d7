import PhoneWorld
import SimEngine
import SimRandom

/// Finite-length work drawn at launches, waiting for its moment while the app is in use.
struct InUseWork {
    /// The waiting work, by key; and the next key.
    var waiting: [Int: TaskState] = [:]
    var nextKey = 0
}

/// `beginBackgroundTask` while the person uses the app (`background_work` with `begin:
/// in_use`, docs/sources.md §3): the work runs without a deadline in the foreground, and
/// within the grant once the app is in the background.
extension PhoneSimulation {
    /// The finite-length work the app begins while in use this launch: drawn now, for every
    /// such work whether or not it begins, so later launches draw the same.
    mutating func drawInUseWork(_ app: Int, launch l: AppLaunch, stream: RandomStream) {
        let range = model.apps[app].work
        for w in range where model.work[w].inUse {
            let begins = stream.bernoulli(model.work[w].probability)
            let at = stream.uniform(0, 1)
            let cpu = model.work[w].cpu.draw(stream), up = model.work[w].upBytes.draw(stream), down = model.work[w].downBytes.draw(stream)
            let forgets = stream.bernoulli(model.apps[app].forgetsEndBackground)
            guard begins, !draining else { continue }
            let time = sim.now + SimDuration(seconds: at * (l.end - l.start).seconds)
            var state = TaskState(
                app: app, source: w - range.lowerBound, kind: .finiteLength, submitted: time, earliestBegin: time,
                work: SimDuration(seconds: cpu), powerW: model.apps[app].cpuPowerW)
            state.upBytes = up.rounded()
            state.downBytes = down.rounded()
            state.flags.insert(.success)
            if forgets { state.flags.insert(.forgetsCompletion) }
            state.expirationResponse = model.apps[app].expirationResponse
            let key = inUseWork.nextKey
            inUseWork.waiting[key] = state
            inUseWork.nextKey += 1
            sim.schedule(.person(.beginInUse(key)), at: time, priority: PhoneEvent.worldPriority)
        }
    }

    /// The work's moment came. Nothing begins in an app that is not running.
    mutating func beginInUse(_ key: Int) {
        guard let state = inUseWork.waiting.removeValue(forKey: key) else { return }
        let app = state.appIndex
        guard books.isOn, !draining, apps[app].life.state.isForeground || apps[app].life.state == .background else { return }
        let id = TaskID(tasks.count)
        tasks.append(state)
        if !apps[app].life.state.isForeground, let entered = apps[app].enteredBackground {
            tasks[id.rawValue].deadline = entered + setup.system.backgroundTime
        }
        begin(id)
    }
}
