import PhoneWorld
import SimEngine

/// What the person is doing with the phone now, and what the system has recorded of their use.
/// Only the person's part (this file) writes it.
struct PersonState {
    /// The launch the person is in, as an index into the timeline's launches.
    fileprivate(set) var foreground: Int?
    /// The app the current leave swipes away, while the leave moves it to the background:
    /// the person stops its music or navigation, so no mode session begins.
    fileprivate(set) var swipingAway: Int?
    fileprivate(set) var inCall = false
    /// What policies observe of the past: each app's use, and when the phone was last in use.
    fileprivate(set) var usage: UsageHistory
    fileprivate(set) var lastInUse = SimInstant.start

    /// A person whose use of the `apps` the system has recorded since `since`, with `history`.
    init(apps: Int, since: SimInstant = .start, history: [AppLaunch] = []) {
        usage = UsageHistory(apps: apps, since: since, launches: history)
    }

    /// In an app or a call.
    var inUse: Bool { foreground != nil || inCall }
}

/// What the person's part reaches of the rest of the phone, the context its events run in: its
/// own state, the world's timeline it walks, and the named actions of the other parts. The
/// phone is this context (below), but the person's code compiles against these alone, as a
/// mechanism's against `MechanismHost`.
protocol PersonContext: ~Copyable {
    var person: PersonState { get set }
    var world: WorldTimeline { get set }
    var now: SimInstant { get }
    /// Whether the phone is on: a person's use while it is off reaches only the screen.
    var isOn: Bool { get }
    var frontApp: Int? { get }
    var appCount: Int { get }
    func lifeState(of app: Int) -> AppState
    func launchDownBytes(of app: Int) -> Double
    mutating func scheduleWorld(_ event: PhoneEvent, at time: SimInstant)
    /// The event log and the timeline hear of it.
    mutating func say(_ event: WorldEvent)
    mutating func setScreen(_ on: Bool)
    mutating func setCall(_ on: Bool)
    mutating func updateFront(cause: LifecycleCause)
    mutating func move(_ app: Int, to state: AppState, cause: LifecycleCause)
    mutating func terminate(_ app: Int, cause: LifecycleCause)
    mutating func markSwipedAway(_ app: Int)
    mutating func endProcessing(_ reason: ExpirationReason, onlyRequiringPower: Bool)
    mutating func send(_ transfer: Transfer)
    mutating func mechanismsPersonLaunched(_ app: Int, until: SimInstant)
    mutating func mechanismsUnderPressure()
}

extension PhoneSimulation: PersonContext {
    var isOn: Bool { books.isOn }
    var frontApp: Int? { apps.frontApp }
    var appCount: Int { setup.apps.count }
    func lifeState(of app: Int) -> AppState { apps[app].life.state }
    func launchDownBytes(of app: Int) -> Double { model.apps[app].launchDownBytes }
    mutating func say(_ event: WorldEvent) { sink.worldEvent(event, at: sim.now) }
    mutating func setScreen(_ on: Bool) { books.setScreen(on, at: sim.now) }
    mutating func setCall(_ on: Bool) { books.setCall(on, at: sim.now) }
    mutating func markSwipedAway(_ app: Int) { apps.markSwipedAway(app) }
}

/// The person opening and leaving apps, taking calls, pulling Notification Centre over an app,
/// and memory pressure purging apps (docs/sources.md §1).
extension PersonContext where Self: ~Copyable {
    /// A person's event; whether a policy may see a change.
    mutating func handlePerson(_ event: PersonEvent) -> Bool {
        switch event {
        case .launch(let i): launch(i)
        case .leave(let i): leave(i)
        case .call(let i): startCall(i)
        case .callEnd: endCall()
        case .purge(let i):
            purge(i)
            return false
        case .interrupt(let i):
            interrupt(i)
            return false
        case .interruptEnd(let i):
            endInterruption(i)
            return false
        }
        return true
    }

    fileprivate mutating func launch(_ i: Int) {
        let l = world.drawnLaunch(i)
        if let next = world.launch(i + 1) { scheduleWorld(.person(.launch(i + 1)), at: next.start) }
        // Launch i - 1's leave may still be due at this instant.
        world.forget(launchesBefore: i - 1)
        scheduleWorld(.person(.leave(i)), at: l.end)
        let wasInUse = person.inUse
        person.foreground = i
        setScreen(true)
        person.usage.screen(true, at: now)
        say(.launch(app: l.app))
        guard isOn else { return }
        if let app = l.app { person.usage.opened(app, at: now) }
        // The system ends processing tasks when the person starts using the phone (docs/sources.md §2).
        if !wasInUse { endProcessing(.deviceInUse, onlyRequiringPower: false) }
        updateFront(cause: .open)
        if let app = l.app, launchDownBytes(of: app) > 0 {
            send(Transfer(owner: .foreground, upBytes: 0, downBytes: launchDownBytes(of: app)))
        }
        if let app = l.app { mechanismsPersonLaunched(app, until: l.end) }
    }

    fileprivate mutating func leave(_ i: Int) {
        let l = world.drawnLaunch(i)
        if let app = l.app { person.usage.left(app, at: now) }
        if person.foreground == i {
            person.foreground = nil
            setScreen(false)
            person.usage.screen(false, at: now)
        }
        if !person.inUse { person.lastInUse = now }
        say(.leave(app: l.app, swipedAway: l.swipedAway))
        guard isOn else { return }
        person.swipingAway = l.swipedAway ? l.app : nil
        updateFront(cause: .leave)
        person.swipingAway = nil
        // A swipe in the app switcher terminates the app, unless the person went straight
        // back to it.
        if let app = l.app, l.swipedAway, frontApp != app {
            if lifeState(of: app).isRunning {
                terminate(app, cause: .swipe)
            } else {
                markSwipedAway(app)
            }
        }
    }

    /// Notification Centre, Control Centre or a declined call over the app in use: it resigns
    /// active and stays in the foreground (docs/sources.md §1).
    fileprivate mutating func interrupt(_ i: Int) {
        let x = world.drawnInterruption(i)
        if let next = world.interruption(i + 1) { scheduleWorld(.person(.interrupt(i + 1)), at: next.start) }
        world.forget(interruptionsBefore: i - 1)
        scheduleWorld(.person(.interruptEnd(i)), at: x.end)
        guard isOn, frontApp == x.app, lifeState(of: x.app) == .active else { return }
        move(x.app, to: .inactive, cause: .interruption)
    }

    fileprivate mutating func endInterruption(_ i: Int) {
        let app = world.drawnInterruption(i).app
        guard isOn, frontApp == app, lifeState(of: app) == .inactive else { return }
        move(app, to: .active, cause: .interruption)
    }

    fileprivate mutating func startCall(_ i: Int) {
        let call = world.call(i)!
        if let next = world.call(i + 1) { scheduleWorld(.person(.call(i + 1)), at: next.start) }
        scheduleWorld(.person(.callEnd(i)), at: call.end)
        world.forget(callsBefore: i)
        let wasInUse = person.inUse
        person.inCall = true
        setCall(true)
        say(.callStarted)
        guard isOn else { return }
        if !wasInUse { endProcessing(.deviceInUse, onlyRequiringPower: false) }
        updateFront(cause: .call)
    }

    fileprivate mutating func endCall() {
        person.inCall = false
        setCall(false)
        if !person.inUse { person.lastInUse = now }
        say(.callEnded)
        guard isOn else { return }
        updateFront(cause: .call)
    }

    /// Memory pressure purges a suspended app, without notice (docs/sources.md §1). A purge a
    /// trace names may also hit an app running in the background, which then hears
    /// `applicationWillTerminate`; drawn purges pick among suspended apps, which the system
    /// reclaims first.
    fileprivate mutating func purge(_ i: Int) {
        let p = world.purge(i)!
        if let next = world.purge(i + 1) { scheduleWorld(.person(.purge(i + 1)), at: next.time) }
        world.forget(purgesBefore: i)
        mechanismsUnderPressure()
        var victim: Int?
        if let named = p.app {
            let state = lifeState(of: named)
            victim = state == .suspended || state == .background ? named : nil
        } else {
            var suspended = 0
            for a in 0..<appCount where lifeState(of: a) == .suspended { suspended += 1 }
            if suspended > 0 {
                var pick = min(Int(p.pick * Double(suspended)), suspended - 1)
                for a in 0..<appCount where lifeState(of: a) == .suspended {
                    if pick == 0 {
                        victim = a
                        break
                    }
                    pick -= 1
                }
            }
        }
        if let victim { terminate(victim, cause: .purge) }
        say(.purge(app: victim))
    }
}
