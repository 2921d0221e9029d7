import PhoneWorld
import SimEngine

/// One app as the system sees it: its place in the life cycle, its BGTaskScheduler, and the
/// work it has running.
struct AppRuntime {
    /// Written only by `AppRuntimes.move` and `markSwipedAway`, which count the changes the
    /// gates read.
    fileprivate(set) var life = AppLifecycle()
    var scheduler: BGTaskScheduler
    /// Tasks of this app running now that keep it running: execution counts one in
    /// (`AppRuntimes.holds`), ends count it out (`releases`).
    fileprivate(set) var running = 0
    /// When it last entered the background, for the finite-length grant.
    fileprivate(set) var enteredBackground: SimInstant?
}

/// Every app's runtime state. It owns the count of changes the gates read (an app entering or
/// leaving the foreground or the swiped-away state), so the gates' cache (`Decisions.gateKey`)
/// is invalidated by the only two writes of an app's life cycle, not by hand at each caller.
struct AppRuntimes: ~Copyable {
    private var storage: OwnedArray<AppRuntime>
    /// Changes of an app's foreground or swiped-away state so far.
    private(set) var gateChanges = 0
    /// The app in the foreground (the launch's app, unless a call took the foreground).
    fileprivate(set) var frontApp: Int?

    /// A task of `app` started that keeps it running (execution).
    mutating func holds(_ app: Int) { storage[app].running += 1 }
    /// A task of `app` that kept it running ended (ends).
    mutating func releases(_ app: Int) { storage[app].running -= 1 }

    init(_ apps: [AppRuntime]) { storage = OwnedArray(apps) }

    var indices: Range<Int> { storage.indices }

    subscript(i: Int) -> AppRuntime {
        @inline(__always) _read { yield storage[i] }
        @inline(__always) _modify { yield &storage[i] }
    }

    /// App `app` moves to `state`.
    mutating func move(_ app: Int, to state: AppState, cause: LifecycleCause) {
        let before = storage[app].life
        storage[app].life.move(to: state, cause: cause)
        if before.state.isForeground != state.isForeground || before.swipedAway != storage[app].life.swipedAway { gateChanges &+= 1 }
    }

    /// The person swiped away app `app`, which was not running.
    mutating func markSwipedAway(_ app: Int) {
        if !storage[app].life.swipedAway { gateChanges &+= 1 }
        storage[app].life.markSwipedAway()
    }
}

/// The app life cycle (docs/sources.md §1): launching, the foreground and the background,
/// suspension, and termination, with what the app does on each move.
extension PhoneSimulation {
    mutating func move(_ app: Int, to state: AppState, cause: LifecycleCause) {
        let from = apps[app].life.state
        apps.move(app, to: state, cause: cause)
        sink.lifecycle(LifecycleTransition(app: app, from: from, to: state, cause: cause), at: sim.now)
    }

    /// Starts the app's process; it registers its task identifiers before launching finishes.
    mutating func launchProcess(_ app: Int, into state: AppState, cause: LifecycleCause) {
        move(app, to: state, cause: cause)
        for m in model.apps[app].tasks {
            switch apps[app].scheduler.register(model.identifiers[m]) {
            case .registered: break
            case .notPermitted: sink.taskEvent(.registrationFailed(app: app, identifier: model.identifiers[m]), at: sim.now)
            case .duplicate: preconditionFailure("identifiers are unique per app")
            }
        }
        mechanismsProcessStarted(app)
    }

    /// Ends the app's process: its running work is killed; pending requests stay with the
    /// system.
    ///
    /// The system carries work of a system-carried kind on without the app (its mechanism
    /// decides what a swipe does), unless the phone died. A mode session ends
    /// with the app: it was used as it went, so it counts as completed, not wasted.
    mutating func terminate(_ app: Int, cause: LifecycleCause) {
        if cause == .swipe { mechanismsAppSwipedAway(app) }
        for i in running where tasks[i].status == .running && tasks[i].appIndex == app {
            let kind = tasks[i].kind
            if kind.isSystemCarried && !tasks[i].flags.contains(.holdsApp) {
                if cause == .shutdown { finish(TaskID(i), .killed, at: sim.now, suspendIfIdle: false) }
                continue
            }
            finish(TaskID(i), kind.isMode ? .completed : .killed, at: sim.now, suspendIfIdle: false)
        }
        mechanismsProcessEnded(app, cause: cause)
        apps[app].scheduler.processEnded()
        apps[app].enteredBackground = nil
        if apps.frontApp == app { apps.frontApp = nil }
        move(app, to: .notRunning, cause: cause)
    }

    /// Puts the app the person is looking at in the foreground and the one they left in the
    /// background. A call takes the foreground from an app and gives it back.
    mutating func updateFront(cause: LifecycleCause) {
        let wanted = person.inCall ? nil : person.foreground.flatMap { world.drawnLaunch($0).app }
        guard wanted != apps.frontApp else { return }
        if let old = apps.frontApp {
            apps.frontApp = nil
            enterBackground(old, cause: cause == .open ? .leave : cause)
        }
        if let new = wanted {
            apps.frontApp = new
            enterForeground(new, cause: cause)
        }
    }

    fileprivate mutating func enterForeground(_ app: Int, cause: LifecycleCause) {
        switch apps[app].life.state {
        case .notRunning: launchProcess(app, into: .inactive, cause: cause)
        case .background, .suspended: move(app, to: .inactive, cause: cause)
        case .active, .inactive: preconditionFailure("app \(app) is already in the foreground")
        }
        move(app, to: .active, cause: cause)
        apps[app].enteredBackground = nil
        mechanismsAppEnteredForeground(app)
        // Finite-length work keeps running in the foreground, without a deadline.
        setGrant(app, until: .distantFuture)
        // After the horizon the app's code no longer changes what is pending.
        if cause == .open && model.apps[app].cancelOnOpen && !draining { cancelAll(app: app) }
        if cause == .open {
            mechanismsAppOpened(app)
            if !draining { submitTasks(app, on: .launch) }
        }
    }

    /// The app leaves the foreground: `didEnterBackground`, where it may begin finite-length
    /// work and submit requests; then it is suspended unless it has work running.
    fileprivate mutating func enterBackground(_ app: Int, cause: LifecycleCause) {
        // Already inactive when an interruption was over it.
        if apps[app].life.state != .inactive { move(app, to: .inactive, cause: cause) }
        // Swiped away as it is left: the app switcher shows it inactive and the swipe ends
        // it there, before `didEnterBackground` (docs/sources.md §1), so it begins no work
        // and submits nothing. Its leave draws are made all the same, so that later leaves
        // draw what they would have.
        if person.swipingAway == app && !draining {
            if !model.apps[app].exitsOnSuspend {
                mechanismsAppLeft(app, swiped: true)
            }
            terminate(app, cause: .swipe)
            return
        }
        move(app, to: .background, cause: cause)
        // `UIApplicationExitsOnSuspend`: the app terminates instead of suspending, after
        // `applicationWillTerminate`, and does nothing in the background.
        if model.apps[app].exitsOnSuspend {
            terminate(app, cause: .exitsOnSuspend)
            return
        }
        apps[app].enteredBackground = sim.now
        setGrant(app, until: sim.now + setup.system.backgroundTime)
        // After the horizon only the work already running finishes.
        if draining {
            if apps[app].running == 0 { move(app, to: .suspended, cause: .workDone) }
            return
        }
        mechanismsAppEnteredBackground(app)
        for m in model.apps[app].tasks where model.tasks[m].submitsOnLeave {
            submit(task: m, earliestBegin: sim.now + model.tasks[m].earliestBegin)
        }
        mechanismsAppLeft(app, swiped: false)
        // The system lets the app finish what it was doing for a moment before suspending it.
        if apps[app].running == 0 && apps[app].life.state == .background {
            if setup.system.suspensionDelay > .zero {
                sim.schedule(.suspend(app), at: sim.now + setup.system.suspensionDelay, priority: PhoneEvent.worldPriority)
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

    /// `UIApplication.backgroundTimeRemaining` for the app now: the rest of the grant while
    /// it is in the background with finite-length work, unlimited in the foreground (iOS
    /// returns `greatestFiniteMagnitude`), nothing otherwise.
    package func backgroundTimeRemaining(app: Int) -> SimDuration? {
        let life = apps[app].life
        if life.state.isForeground { return nil }
        guard life.state == .background, let entered = apps[app].enteredBackground else { return .zero }
        return max(.zero, entered + setup.system.backgroundTime - sim.now)
    }
}
