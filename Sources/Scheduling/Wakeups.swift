import PhoneWorld
import SimEngine
import SimRandom

/// A silent push from an app's server: when it arrives, and the work its handler will do
/// (drawn in advance, so every policy sees the same pushes).
public struct PushArrival: Equatable, Sendable {
    /// When it reaches the phone.
    public var time: SimInstant
    /// The app it is for, as an index into the scenario's apps.
    public var app: Int
    /// CPU time its handler takes.
    public var work: SimDuration
    /// Bytes its handler sends.
    public var upBytes: Double
    /// Bytes its handler receives.
    public var downBytes: Double

    /// A push arriving at `time` for `app`, whose handler does the given work.
    public init(time: SimInstant, app: Int, work: SimDuration = .seconds(2), upBytes: Double = 0, downBytes: Double = 0) {
        self.time = time
        self.app = app
        self.work = work
        self.upBytes = upBytes
        self.downBytes = downBytes
    }

    /// Each app's Poisson arrivals over `[0, horizon)`, from its own stream, merged in time
    /// order (ties in app order). The simulation draws them one at a time as it goes
    /// (`next`), the same numbers; this list is for tests and tools.
    public static func draw(apps: [AppParameters], streams: [RandomStream?], until horizon: SimInstant) -> [PushArrival] {
        var out: [PushArrival] = []
        for (a, app) in apps.enumerated() {
            guard let push = app.silentPushes, let stream = streams[a] else { continue }
            var t = SimInstant.start
            while let p = next(after: t, app: a, push: push, stream: stream, until: horizon) {
                out.append(p)
                t = p.time
            }
        }
        return out.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    /// App `app`'s next push after `time`, drawn from its stream (the gap, then the work), or
    /// `nil` at or past the horizon.
    public static func next(
        after time: SimInstant, app: Int, push: SilentPushes, stream: RandomStream, until horizon: SimInstant
    ) -> PushArrival? {
        guard push.perHour > 0 else { return nil }
        let t = time + SimDuration(seconds: stream.exponential(mean: 3600 / push.perHour))
        guard t < horizon else { return nil }
        return PushArrival(
            time: t, app: app, work: SimDuration(seconds: push.cpu.draw(stream)),
            upBytes: push.upBytes.draw(stream).rounded(), downBytes: push.downBytes.draw(stream).rounded())
    }
}

/// The other doors through which apps run in the background (docs/sources.md §1-3): continuous
/// background modes, legacy background fetch, silent pushes, background transfers, geofence
/// crossings, opting out, and state preservation with the work redone after a loss.
extension PhoneSimulation {
    /// A task the system starts by itself, not through the policy.
    mutating func newTask(
        app: Int, kind: TaskKind, identifier: String, work: SimDuration,
        upBytes: Double = 0, downBytes: Double = 0
    ) -> TaskID {
        let model = setup.apps[app]
        let id = TaskID(tasks.count)
        var request = TaskRequest(
            id: id, app: app, kind: kind, identifier: identifier, submitted: sim.now,
            earliestBegin: sim.now, work: work, powerW: model.cpuPowerW ?? setup.power.cpuBackgroundW)
        request.upBytes = upBytes
        request.downBytes = downBytes
        request.expirationResponse = model.expirationResponse
        tasks.append(TaskState(request: consume request, model: nil))
        return id
    }

    /// The system launches or resumes the app in the background (or finds it running) and
    /// calls its handler for the task, which has its kind's time.
    mutating func wake(_ id: TaskID) {
        let app = tasks[id.rawValue].request.app
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background, .active, .inactive: break
        }
        tasks[id.rawValue].deadline = sim.now + budget(tasks[id.rawValue].request.kind)
        begin(id)
    }

    // MARK: - Legacy background fetch

    /// The system's next fetch for the app, no sooner than `earliestBegin`. Its work is drawn
    /// from the app's stream, as a BGTaskScheduler request's is (the app declares none: the
    /// two exclude each other).
    mutating func submitFetch(app: Int, earliestBegin: SimInstant) {
        let model = setup.apps[app]
        guard let fetch = model.backgroundFetch else { return }
        let stream = streams.apps[app]
        let id = TaskID(tasks.count)
        var request = TaskRequest(
            id: id, app: app, kind: .fetch, identifier: "background-fetch", submitted: sim.now,
            earliestBegin: max(earliestBegin, sim.now), work: SimDuration(seconds: fetch.cpu.draw(stream)),
            powerW: model.cpuPowerW ?? setup.power.cpuBackgroundW)
        request.upBytes = fetch.upBytes.draw(stream).rounded()
        request.downBytes = fetch.downBytes.draw(stream).rounded()
        request.success = stream.bernoulli(fetch.successProbability)
        request.forgetsCompletion = stream.bernoulli(model.forgetsCompletion)
        request.expirationResponse = model.expirationResponse
        tasks.append(TaskState(request: request, model: nil))
        if sink.observesTaskSteps { sink.taskEvent(.submitted(request, replaced: nil), at: sim.now) }
        tasks[id.rawValue].eligibleEvent = sim.schedule(.eligible(id), at: request.earliestBegin, priority: Self.arrivalPriority)
    }

    // MARK: - Silent pushes

    /// A push reaches the phone. None reaches an app the person swiped away (docs/sources.md §1) or
    /// one that opted out of the background; otherwise it is held, replacing any older held
    /// one (only the newest is kept), until the gates and the app's budget let it through.
    mutating func pushArrived(_ k: Int) {
        if k + 1 < world.pushes.count { scheduleWorld(.push(k + 1), at: world.pushes[k + 1].time) }
        pushArrived(world.pushes[k])
    }

    /// App `app`'s server's push, drawn as the run goes: the next is drawn now, from the
    /// app's stream, so that memory does not grow with the horizon.
    mutating func serverPushArrived(_ app: Int) {
        guard let p = nextPush[app] else { return }
        scheduleNextServerPush(app, after: p.time)
        pushArrived(p)
    }

    mutating func scheduleNextServerPush(_ app: Int, after time: SimInstant) {
        guard let push = setup.apps[app].silentPushes, let stream = streams.appPush[app] else { return }
        nextPush[app] = PushArrival.next(after: time, app: app, push: push, stream: stream, until: .after(setup.duration))
        if let next = nextPush[app] { scheduleWorld(.serverPush(app), at: next.time) }
    }

    mutating func pushArrived(_ p: PushArrival) {
        let app = p.app
        let id = newTask(
            app: app, kind: .silentPush, identifier: "silent-push", work: p.work,
            upBytes: p.upBytes, downBytes: p.downBytes)
        if sink.observesTaskSteps {
            sink.taskEvent(.submitted(tasks[id.rawValue].request, replaced: apps[app].heldPush.map(TaskID.init)), at: sim.now)
        }
        if draining || setup.apps[app].exitsOnSuspend || apps[app].life.swipedAway || !setup.apps[app].declares(.remoteNotification) {
            finish(id, .dropped, at: sim.now)
            return
        }
        if let older = apps[app].heldPush { finish(TaskID(older), .replaced, at: sim.now) }
        apps[app].heldPush = id.rawValue
        heldPushes += 1
        deliverHeldPush(app)
    }

    /// Delivers the app's held push if the phone is on, Background App Refresh allows it, and
    /// fewer than `pushesPerHour` were delivered in the last hour; otherwise it waits (for the
    /// hour to roll on, with a timer).
    mutating func deliverHeldPush(_ app: Int) {
        guard let i = apps[app].heldPush, !draining else { return }
        if apps[app].life.swipedAway {
            finish(TaskID(i), .dropped, at: sim.now)
            return
        }
        guard isOn, !lowPower, setup.settings.backgroundAppRefresh != .off, setup.apps[app].backgroundRefresh else { return }
        let hour = SimDuration.hours(1)
        apps[app].pushDeliveries.removeAll { $0 <= sim.now - hour }
        if apps[app].pushDeliveries.count >= setup.system.pushesPerHour {
            if apps[app].pushRelease == nil, let oldest = apps[app].pushDeliveries.first {
                apps[app].pushRelease = sim.schedule(.pushRelease(app), at: oldest + hour, priority: Self.worldPriority)
            }
            return
        }
        apps[app].heldPush = nil
        heldPushes -= 1
        apps[app].pushDeliveries.append(sim.now)
        wake(TaskID(i))
    }

    // MARK: - Background transfers

    /// The app hands the system a background URLSession transfer.
    mutating func handOverTransfer(app: Int, work: SimDuration, upBytes: Double, downBytes: Double, discretionary: Bool) {
        let id = newTask(
            app: app, kind: .backgroundTransfer, identifier: discretionary ? "background-transfer.discretionary" : "background-transfer",
            work: work, upBytes: upBytes, downBytes: downBytes)
        // A discretionary transfer waits for Wi-Fi and power; the flag is the request's
        // power requirement, which nothing else reads for this kind.
        tasks[id.rawValue].request.requiresExternalPower = discretionary
        tasks[id.rawValue].request.requiresNetworkConnectivity = true
        if sink.observesTaskSteps { sink.taskEvent(.submitted(tasks[id.rawValue].request, replaced: nil), at: sim.now) }
        pendingTransfers.append(id.rawValue)
    }

    /// Starts the waiting transfers the system now allows: all while the phone is on, the
    /// discretionary ones only on Wi-Fi and external power. A started one without a
    /// connection waits on the radio's queue for one.
    mutating func startPendingTransfers() {
        guard isOn, !draining else { return }
        let waiting = pendingTransfers
        pendingTransfers.removeAll()
        for i in waiting {
            if tasks[i].request.requiresExternalPower && !(isCharging && networkState.kind == .wifi) {
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
        let i = id.rawValue, app = tasks[i].request.app
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .background, cause: .backgroundWork)
        case .suspended: move(app, to: .background, cause: .backgroundWork)
        case .background, .active, .inactive: break
        }
        tasks[i].holdsApp = true
        apps[app].running += 1
        setCPU(id, on: true)
        tasks[i].deadline = sim.now + setup.system.wakeBudget
        tasks[i].phase = .working
        tasks[i].workEnd = sim.now + tasks[i].request.work
        rescheduleEnd(id)
    }

    // MARK: - Geofences

    /// The person left one place of the network model and/or arrived at another: each app
    /// monitoring it is woken, exits before entries. The system relaunches even an app the
    /// person swiped away for a region event (Apple, Location and Maps Programming Guide,
    /// [secondary]), unlike for pushes and refreshes.
    mutating func crossRegions(left: String?, entered: String?) {
        for app in setup.apps.indices {
            guard let regions = setup.apps[app].regions, let stream = streams.appRegion[app] else { continue }
            for (crossing, place) in [("exit", left), ("enter", entered)] {
                guard let place, regions.places.contains(place) else { continue }
                // Drawn for every crossing, delivered or not, so later draws stay aligned.
                let work = SimDuration(seconds: regions.cpu.draw(stream))
                let up = regions.upBytes.draw(stream).rounded(), down = regions.downBytes.draw(stream).rounded()
                let id = newTask(app: app, kind: .region, identifier: "region.\(crossing).\(place)", work: work, upBytes: up, downBytes: down)
                if !isOn || draining || setup.apps[app].exitsOnSuspend {
                    finish(id, .dropped, at: sim.now)
                } else {
                    wake(id)
                }
            }
        }
    }

    // MARK: - Continuous background modes

    /// The person leaves an app with a session going (music, navigation, a call, an
    /// accessory) with the mode's probability; it goes on for a drawn time, keeping the app
    /// running in the background.
    mutating func startModeSession(app: Int) {
        guard let mode = setup.apps[app].backgroundMode, let stream = streams.appMode[app] else { return }
        // Drawn at every leave, so later sessions do not depend on earlier ones' ends.
        let starts = stream.bernoulli(mode.probability)
        let length = SimDuration(seconds: mode.duration.draw(stream))
        guard starts, apps[app].modeSession == nil, length > .zero, swipingAway != app,
            mode.kind.keys.contains(where: setup.apps[app].declares)
        else { return }
        let id = newTask(app: app, kind: TaskKind(mode.kind), identifier: "mode.\(mode.kind.rawValue)", work: length)
        tasks[id.rawValue].request.powerW = mode.powerW
        begin(id)
    }

    /// A session's next chunk of network use, and the one after.
    mutating func modeChunk(_ id: TaskID) {
        let i = id.rawValue
        tasks[i].chunkEvent = nil
        guard tasks[i].status == .running, let mode = setup.apps[tasks[i].request.app].backgroundMode,
            let every = mode.chunkInterval
        else { return }
        send(Transfer(owner: .task(i), upBytes: mode.chunkUpBytes, downBytes: mode.chunkDownBytes))
        let next = sim.now + every
        if let end = tasks[i].workEnd, next < end {
            tasks[i].chunkEvent = sim.schedule(.modeChunk(id), at: next, priority: Self.taskEndPriority)
        }
    }

    // MARK: - State preservation

    /// Whether a completed task of this kind leaves a result the app must archive.
    @inline(__always)
    static func producesResult(_ kind: TaskKind) -> Bool {
        switch kind {
        case .refresh, .processing, .fetch, .silentPush, .backgroundTransfer, .region, .redo: true
        case .finiteLength, .audio, .location, .voip, .bluetooth: false
        }
    }

    /// Draws whether the app archives this task's result, and adds the archiving's CPU time
    /// to its work.
    mutating func drawArchive(_ id: TaskID) {
        let i = id.rawValue, app = tasks[i].request.app
        guard Self.producesResult(tasks[i].request.kind) else { return }
        let preservation = setup.apps[app].statePreservation
        let archives = streams.appArchive[app]?.bernoulli(preservation.archiveProbability) ?? (preservation.archiveProbability > 0)
        tasks[i].archives = archives
        if archives { tasks[i].request.work += preservation.archiveCPU }
    }

    /// A task completed: its result is archived (and with it everything the app held), or
    /// held in memory only.
    mutating func keepResult(_ i: Int) {
        let app = tasks[i].request.app
        guard Self.producesResult(tasks[i].request.kind) else { return }
        if tasks[i].archives {
            apps[app].unsaved.removeAll()
        } else {
            apps[app].unsaved.append(
                LostWork(
                    task: i, work: tasks[i].request.work, upBytes: tasks[i].request.upBytes,
                    downBytes: tasks[i].request.downBytes, energyJ: tasks[i].cpuJ + tasks[i].radioJ))
        }
    }

    /// The process ends: what it held unarchived is lost, to be redone at the next launch.
    /// An app that opted out saves in `applicationWillTerminate`, which it always gets.
    mutating func loseUnsaved(_ app: Int, cause: LifecycleCause) {
        guard !apps[app].unsaved.isEmpty, cause != .exitsOnSuspend else { return }
        for w in apps[app].unsaved {
            sink.taskEvent(.lost(TaskID(w.task), app: app, energyJ: w.energyJ), at: sim.now)
        }
        apps[app].lost += apps[app].unsaved
        apps[app].unsaved.removeAll()
    }

    /// At a launch, the app redoes the work it lost, as finite-length work: unlimited in the
    /// foreground, the background grant otherwise.
    mutating func redoLost(_ app: Int) {
        guard !apps[app].lost.isEmpty, !draining else { return }
        let lost = apps[app].lost
        apps[app].lost.removeAll()
        for w in lost {
            let id = newTask(app: app, kind: .redo, identifier: "redo.\(w.task)", work: w.work, upBytes: w.upBytes, downBytes: w.downBytes)
            tasks[id.rawValue].deadline = apps[app].life.state.isForeground ? nil : sim.now + setup.system.backgroundTime
            begin(id)
        }
    }
}
