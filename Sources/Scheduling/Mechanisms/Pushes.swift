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

/// Silent pushes held and delivered, per app.
struct PushQueue {
    /// Per app: deliveries within the last hour, oldest first; the newest push held (a task
    /// index); the event that frees the budget; the next push drawn, not yet arrived.
    var deliveries: [[SimInstant]]
    var held: [Int?]
    var release: [EventHandle?]
    var next: [PushArrival?]
    /// Apps with a push held.
    var heldCount = 0

    init(apps: Int) {
        deliveries = Array(repeating: [], count: apps)
        held = Array(repeating: nil, count: apps)
        release = Array(repeating: nil, count: apps)
        next = Array(repeating: nil, count: apps)
    }
}

/// Silent pushes (`content-available`, docs/sources.md §1-2): none reaches an app the person
/// swiped away or that opted out; the system holds the newest until the gates and the app's
/// hourly budget let it through, then wakes the app for `wakeBudget`.
extension PhoneSimulation {
    /// Push `k` of a trace reaches the phone.
    mutating func tracePushArrived(_ k: Int) {
        if k + 1 < world.pushes.count { scheduleWorld(.tracePush(k + 1), at: world.pushes[k + 1].time) }
        pushArrived(world.pushes[k])
    }

    /// App `app`'s server's push, drawn as the run goes: the next is drawn now, from the
    /// app's stream, so that memory does not grow with the horizon.
    mutating func serverPushArrived(_ app: Int) {
        guard let p = pushes.next[app] else { return }
        scheduleNextServerPush(app, after: p.time)
        pushArrived(p)
    }

    mutating func scheduleNextServerPush(_ app: Int, after time: SimInstant) {
        guard let push = model.apps[app].push, let stream = streams.appPush[app] else { return }
        pushes.next[app] = PushArrival.next(after: time, app: app, push: push.parameters, stream: stream, until: .after(setup.duration))
        if let next = pushes.next[app] { scheduleWorld(.serverPush(app), at: next.time) }
    }

    mutating func pushArrived(_ p: PushArrival) {
        let app = p.app
        let id = newTask(app: app, kind: .silentPush, work: p.work, upBytes: p.upBytes, downBytes: p.downBytes)
        if sink.observesTaskSteps {
            sink.taskEvent(.submitted(request(id.rawValue), replaced: pushes.held[app].map(TaskID.init)), at: sim.now)
        }
        if draining || model.apps[app].exitsOnSuspend || apps[app].life.swipedAway || !model.apps[app].receivesPushes {
            finish(id, .dropped, at: sim.now)
            return
        }
        if let older = pushes.held[app] { finish(TaskID(older), .replaced, at: sim.now) }
        pushes.held[app] = id.rawValue
        pushes.heldCount += 1
        deliverHeldPush(app)
    }

    /// Delivers the app's held push if the phone is on, Background App Refresh allows it, and
    /// fewer than `pushesPerHour` were delivered in the last hour; otherwise it waits (for the
    /// hour to roll on, with a timer).
    mutating func deliverHeldPush(_ app: Int) {
        guard let i = pushes.held[app], !draining else { return }
        if apps[app].life.swipedAway {
            finish(TaskID(i), .dropped, at: sim.now)
            return
        }
        guard books.isOn, !books.lowPower, setup.settings.backgroundAppRefresh != .off, model.apps[app].backgroundRefresh else { return }
        let hour = SimDuration.hours(1)
        pushes.deliveries[app].removeAll { $0 <= sim.now - hour }
        if pushes.deliveries[app].count >= setup.system.pushesPerHour {
            if pushes.release[app] == nil, let oldest = pushes.deliveries[app].first {
                pushes.release[app] = sim.schedule(.pushRelease(app), at: oldest + hour, priority: PhoneEvent.worldPriority)
            }
            return
        }
        pushes.held[app] = nil
        pushes.heldCount -= 1
        pushes.deliveries[app].append(sim.now)
        wake(TaskID(i))
    }
}
