import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// Silent pushes (`content-available`, docs/sources.md §1-2): each app's server sends them as
/// a Poisson process (drawn as the run goes, so memory does not grow with the horizon), or a
/// trace replays them. None reaches an app the person swiped away, that exits on suspend or
/// that lacks `remote-notification`; the system holds the newest (an older held one is
/// replaced) until the phone is on, Low Power Mode off, Background App Refresh on, the battery
/// above `system.silent_push.critical_battery_pct` or charging (every factor but app usage
/// applies, docs/sources.md §4) and fewer than `system.pushes_per_hour` were delivered to the
/// app in the last hour, then wakes the app for `system.wake_budget`.
package final class SilentPushes: Mechanism {
    /// `silent_push`.
    package static let name = "silent_push"
    /// For `bgsim mechanisms`.
    package static let summary = "Silent pushes: the app's server wakes it, within the system's hourly budget"
    /// The app profile's keys.
    package static let parameters = keys.described(Keys())
    /// The keys of `system.silent_push`.
    package static let systemParameters = systemKeys.described(SystemKeys())
    struct Keys {
        var perHour = 1.0, cpu = Distribution.exponential(mean: 2), upBytes = Distribution.fixed(1_000), downBytes = Distribution.fixed(20_000)
    }
    static let keys: [Setting<Keys>] = [
        .number(
            "per_hour", \.perHour, in: NumberRange(lower: 0, lowerIncluded: false, upper: 3600), unit: "a rate per hour",
            help: "the server's mean rate of pushes"
        )
        .required(),
        .distribution("cpu", \.cpu, .seconds, help: "CPU time of a push's handler"),
        .distribution("up_kb", \.upBytes, .kilobytes, help: "bytes the handler sends"),
        .distribution("down_kb", \.downBytes, .kilobytes, help: "bytes the handler receives"),
    ]
    struct SystemKeys { var criticalCharge = 20.0 / 100 }
    static let systemKeys: [Setting<SystemKeys>] = [
        .number(
            "critical_battery_pct", \.criticalCharge, in: 0...100, unit: .percent("a level"),
            help: "on battery at or below this charge, pushes wait for the charger (the critical-battery factor)")
    ]
    /// `app.<name>.push`: each push's arrival and work.
    package static let streams = [push.name]
    private static let push = DeclaredStream<SilentPushes>("push")
    /// `silent_push`: `system.wake_budget` once delivered.
    package static let kinds = [TaskKind.Traits("silent_push", [.producesResult], budget: { $0.wakeBudget })]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.start, .gatesChanged]

    /// A trace's pushes reach apps whether or not they have the section.
    package static func isUsed(by setup: PhoneSetup) -> Bool {
        setup.pushTrace != nil || setup.apps.contains { $0.hasSection(name) }
    }

    struct Section {
        var perHour: Double, cpu: PreparedDistribution, upBytes: PreparedDistribution, downBytes: PreparedDistribution
    }

    let sections: [Section?]
    let criticalCharge: Double
    let kind = MechanismRegistry.kind(SilentPushes.self)
    /// Per app: deliveries within the last hour, oldest first; the newest push held (a task);
    /// whether a timer waits for the hour to roll on; the next push drawn, not yet arrived.
    var deliveries: [[SimInstant]]
    var held: [Int?]
    var releasing: [Bool]
    var next: [PushArrival?]
    /// Apps with a push held.
    var heldCount = 0
    var trace: [PushArrival] = []
    /// `SystemRules.pushesPerHour`, read once: the host's scenario is a copy of the whole setup.
    var pushesPerHour = 0

    /// The run's mechanism, from each app's section.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        criticalCharge = system.decode(Self.systemKeys, over: SystemKeys()).criticalCharge
        sections = apps.map { v in
            v.map {
                let k = $0.decode(Self.keys, over: Keys())
                return Section(
                    perHour: k.perHour, cpu: PreparedDistribution(k.cpu), upBytes: PreparedDistribution(k.upBytes), downBytes: PreparedDistribution(k.downBytes)
                )
            }
        }
        deliveries = Array(repeating: [], count: apps.count)
        held = Array(repeating: nil, count: apps.count)
        releasing = Array(repeating: false, count: apps.count)
        next = Array(repeating: nil, count: apps.count)
    }

    // Events: a server's push (payload 4·app), the hour rolling on (4·app + 1), a trace's push (4·k + 2).

    /// The trace's first push, or each server's.
    package func start<H: MechanismHost & ~Copyable>(_ host: inout H) {
        pushesPerHour = host.scenario.system.pushesPerHour
        if let pushes = host.scenario.pushTrace {
            trace = pushes
            if let first = trace.first { host.schedule(2, at: first.time, as: .world) }
        } else {
            for app in sections.indices { scheduleNextServerPush(app, after: .start, &host) }
        }
    }

    /// App `app`'s next push after `time`, drawn from its stream (the gap, then the work),
    /// or none at or past the horizon.
    func scheduleNextServerPush<H: MechanismHost & ~Copyable>(_ app: Int, after time: SimInstant, _ host: inout H) {
        guard let s = sections[app], let stream = host.stream(app, Self.push) else { return }
        let t = time + SimDuration(seconds: stream.exponential(mean: 3600 / s.perHour))
        guard t < host.horizon else {
            next[app] = nil
            return
        }
        next[app] = PushArrival(
            time: t, app: app, work: SimDuration(seconds: s.cpu.draw(stream)), upBytes: s.upBytes.draw(stream).rounded(),
            downBytes: s.downBytes.draw(stream).rounded())
        host.schedule(4 * app, at: t, as: .world)
    }

    /// A push arrives, or the hour rolls on for an app.
    package func event<H: MechanismHost & ~Copyable>(_ payload: Int, _ host: inout H) {
        let k = payload >> 2
        switch payload & 3 {
        case 0:
            guard let p = next[k] else { return }
            scheduleNextServerPush(k, after: p.time, &host)
            arrived(p, &host)
        case 1:
            releasing[k] = false
            deliverHeld(k, &host)
        default:
            if k + 1 < trace.count { host.schedule(4 * (k + 1) + 2, at: trace[k + 1].time, as: .world) }
            arrived(trace[k], &host)
        }
    }

    func arrived<H: MechanismHost & ~Copyable>(_ p: PushArrival, _ host: inout H) {
        let app = p.app
        let task = host.submit(
            app: app, kind: kind, source: 0, work: p.work, upBytes: p.upBytes, downBytes: p.downBytes, powerW: host.cpuPowerW(app),
            replacing: held[app])
        if host.isDraining || host.exitsOnSuspend(app) || host.isSwipedAway(app) || !host.declares(app, .remoteNotification) {
            host.end(task, .dropped, rejection: nil)
            return
        }
        if let older = held[app] { host.end(older, .replaced, rejection: nil) }
        held[app] = task
        heldCount += 1
        deliverHeld(app, &host)
    }

    /// Delivers the app's held push if the gates and the hourly budget let it through;
    /// otherwise it waits (for the hour to roll on, with a timer).
    func deliverHeld<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard let task = held[app], !host.isDraining else { return }
        if host.isSwipedAway(app) {
            host.end(task, .dropped, rejection: nil)
            return
        }
        // The battery only climbs back over the critical level on the charger, whose plug-in
        // calls `gatesChanged`.
        guard host.phoneIsOn, !host.lowPowerMode, host.backgroundAppRefresh(app), host.isCharging || host.charge > criticalCharge
        else { return }
        let hour = SimDuration.hours(1), now = host.now
        deliveries[app].removeAll { $0 <= now - hour }
        if deliveries[app].count >= pushesPerHour {
            if !releasing[app], let oldest = deliveries[app].first {
                releasing[app] = true
                host.schedule(4 * app + 1, at: oldest + hour, as: .world)
            }
            return
        }
        held[app] = nil
        heldCount -= 1
        deliveries[app].append(now)
        host.run(task)
    }

    /// What held pushes wait for may have changed.
    package func gatesChanged<H: MechanismHost & ~Copyable>(_ host: inout H) {
        guard heldCount > 0 else { return }
        for app in held.indices where held[app] != nil { deliverHeld(app, &host) }
    }

    /// A held push ended otherwise (the run's end): no longer held.
    package func taskEnded<H: MechanismHost & ~Copyable>(_ task: Int, _ outcome: TaskOutcome, _ host: inout H) {
        if let app = held.firstIndex(of: task) {
            held[app] = nil
            heldCount -= 1
        }
    }

    /// `silent-push`.
    package func identifier(app: Int, source: Int) -> String { "silent-push" }
}
