import PhoneWorld
import SimEngine
import SimRandom

@testable import Scheduling

/// Everything a run reports, in the order it was reported.
enum LogEntry {
    case world(WorldEvent)
    case transition(LifecycleTransition)
    case task(TaskEvent)
    case ended(TaskRecord)
    case shutdown, boot
}

/// Keeps every task record and battery event, for scenario tests.
struct RecordingSink: MetricsSink {
    var log: [(SimInstant, LogEntry)] = []
    var transitions: [(SimInstant, LifecycleTransition)] = []
    var taskEvents: [(SimInstant, TaskEvent)] = []
    var records: [TaskRecord] = []
    var charges: [(SimInstant, Double)] = []
    var shutdowns: [SimInstant] = []
    var boots: [SimInstant] = []
    var end: SimInstant?
    var energy = EnergyFlow()
    var totals: RunTotals?
    var world: [(SimInstant, WorldEvent)] = []
    var summary = RunMetrics()

    /// The complete record, which may come after the task ended (it waits for the radio
    /// tail it shares); the log has the end at its instant, from `TaskEvent.ended`.
    mutating func taskEnded(_ record: TaskRecord) {
        records.append(record)
        summary.taskEnded(record)
    }
    mutating func lifecycle(_ t: LifecycleTransition, at time: SimInstant) {
        transitions.append((time, t))
        summary.lifecycle(t, at: time)
        log.append((time, .transition(t)))
    }
    mutating func taskEvent(_ e: TaskEvent, at time: SimInstant) {
        taskEvents.append((time, e))
        summary.taskEvent(e, at: time)
        if case .ended(let r) = e { log.append((time, .ended(r))) } else { log.append((time, .task(e))) }
    }
    mutating func chargeObserved(_ charge: Double, at time: SimInstant) { charges.append((time, charge)); summary.chargeObserved(charge, at: time) }
    mutating func phoneShutDown(at time: SimInstant) {
        shutdowns.append(time)
        summary.phoneShutDown(at: time)
        log.append((time, .shutdown))
    }
    mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) {
        boots.append(time)
        summary.phoneBooted(at: time, offFor: offFor)
        log.append((time, .boot))
    }
    mutating func worldEvent(_ event: WorldEvent, at time: SimInstant) {
        world.append((time, event))
        summary.worldEvent(event, at: time)
        log.append((time, .world(event)))
    }

    /// The record of task `id`.
    func record(_ id: Int) -> TaskRecord? { records.first { $0.request.id.rawValue == id } }
    /// When tasks started, by id.
    var starts: [(SimInstant, TaskRequest)] {
        taskEvents.compactMap { if case .started(let r, _) = $0.1 { ($0.0, r) } else { nil } }
    }
    /// Transitions of one app, as (time, from, to, cause).
    func transitions(of app: Int) -> [(SimInstant, AppState, AppState, LifecycleCause)] {
        transitions.filter { $0.1.app == app }.map { ($0.0, $0.1.from, $0.1.to, $0.1.cause) }
    }
    mutating func runEnded(_ t: RunTotals) {
        end = t.end
        energy = t.energy
        totals = t
        summary.runEnded(t)
    }
}

/// A small world: apps with fixed settings, a nightly charger without jitter.
func setup(days: Int64 = 3, apps: [AppParameters], nights: Double = 1, jitter: SimDuration = .zero) -> PhoneSetup {
    var s = PhoneSetup()
    s.duration = .days(days)
    s.apps = apps
    s.charging.nightlyProbability = nights
    s.charging.plugInJitter = jitter
    s.charging.unplugJitter = jitter
    return s
}

/// An app with one task `<name>.task` that only computes (no transfers) unless `downKB` says
/// otherwise. It is pending at the start (earliest begin at a random phase within `every`) and
/// resubmitted from its handler `every` later; `earliest` applies to submissions on entering
/// the background, if `submitOn` has them. CPU time is exponential with mean `work`, or
/// exactly `work` if `fixed`.
func app(
    _ name: String, every: SimDuration = .hours(1), earliest: SimDuration = .minutes(15),
    work: SimDuration = .seconds(5), power: Double = 1, downKB: Double = 0, fixed: Bool = false,
    kind: AppTask.Kind = .refresh, submitOn: Set<AppTask.Trigger> = [.start, .handler]
) -> AppParameters {
    var a = AppParameters(name: name)
    var t = AppTask(identifier: "\(name).task", kind: kind, submitOn: submitOn)
    t.interval = every
    t.earliestBegin = earliest
    t.cpu = fixed ? .fixed(work.seconds) : .exponential(mean: work.seconds)
    t.upBytes = .fixed(0)
    t.downBytes = .fixed(downKB * 1000)
    a.tasks = [t]
    a.cpuPowerW = power
    a.launchDownBytes = 0
    a.expirationResponse = .zero
    return a
}

func simulate<P: SchedulingPolicy>(_ setup: PhoneSetup, _ policy: P, seed: UInt64 = 1, replication: UInt64 = 0) throws -> RecordingSink {
    let streams = try WorldStreams(setup: setup, masterSeed: seed, replication: replication)
    var sim = PhoneSimulation(setup: setup, policy: policy, sink: RecordingSink(summary: RunMetrics(apps: setup.apps)), streams: streams)
    return sim.run()
}

/// The charging sessions the simulation saw, re-derived from the same stream.
func sessions(_ setup: PhoneSetup, seed: UInt64 = 1, replication: UInt64 = 0) throws -> [ChargingSession] {
    let streams = try WorldStreams(setup: setup, masterSeed: seed, replication: replication)
    return setup.charging.sessions(until: .after(setup.duration), stream: streams.charger)
}

/// Radios as docs/sources.md §6 gives them (AT&T ARO).
let lteRadio: RadioProfile = {
    var r = RadioProfile(name: "lte")
    r.promotion = .milliseconds(260)
    r.promotionW = 1.21
    r.activeW = 1.2
    r.upWPerMbps = 0.43839
    r.downWPerMbps = 0.05197
    r.tail = [TailStage(duration: .milliseconds(10_100), powerW: 1.06)]
    return r
}()
let wifiRadio: RadioProfile = {
    var r = RadioProfile(name: "wifi")
    r.activeW = 0.403
    r.tail = [TailStage(duration: .milliseconds(250), powerW: 0.403)]
    return r
}()
let lteState = NetworkState(kind: .cellular, downMbps: 20, upMbps: 5)
let wifiState = NetworkState(kind: .wifi, downMbps: 100, upMbps: 20)

/// A network that is `state` all the time, or follows `segments` (time of day, state) every day.
func network(_ segments: [(SimDuration, NetworkState)]) -> NetworkEnvironment {
    var e = NetworkEnvironment()
    e.weekday = segments.map { .init(start: $0.0, state: $0.1) }
    e.weekend = e.weekday
    e.wifiRadio = wifiRadio
    e.cellularRadio = lteRadio
    return e
}

/// Replays a run's log with an independent account of the world (phone on, charger, network,
/// use, Low Power Mode, each app's state and switcher card) and returns every moment a task
/// ran while a gate that applies to it was closed:
/// - at a start: phone on; for scheduled tasks Background App Refresh on (on Wi-Fi when it
///   says so), Low Power Mode off, the app in the switcher and in the background; for
///   processing also the phone idle, power and network as required;
/// - while running: the phone on and the app running; processing tasks see their expiration
///   handler called the moment the person uses the phone or (if they need it) the power goes,
///   and end within the expiration grace; with Wi-Fi only, scheduled tasks never transfer on
///   cellular.
func auditGates(_ run: RecordingSink, _ s: PhoneSetup) -> [String] {
    var problems: [String] = []
    var on = true, charging = false, lowPower = s.settings.lowPowerMode == .on, inCall = false
    var network = NetworkKind.none
    var using = 0
    var state = [AppState](repeating: .notRunning, count: s.apps.count)
    var swiped = [Bool](repeating: false, count: s.apps.count)
    var running: [Int: TaskRequest] = [:]
    var expiring: Set<Int> = []
    /// Tasks whose expiration handler was already called.
    var expired: Set<Int> = []
    let ends = Dictionary(uniqueKeysWithValues: run.records.map { ($0.request.id.rawValue, $0.ended) })
    func mustStop(_ at: SimInstant, _ why: String, _ affected: (TaskRequest) -> Bool) {
        for (id, r) in running where affected(r) {
            if ends[id] == at || expired.contains(id) { continue }
            // Otherwise its expiration handler must be called now, and the task end within the grace.
            guard let end = ends[id], end <= at + s.system.expirationGrace else {
                problems.append("\(id) ran on after \(why) at \(at)")
                continue
            }
            expiring.insert(id)
        }
    }
    for (t, entry) in run.log {
        switch entry {
        case .shutdown:
            on = false
            mustStop(t, "shutdown") { _ in true }
        case .boot: on = true
        case .world(let e):
            switch e {
            case .plugIn: charging = true
            case .unplug:
                charging = false
                mustStop(t, "unplug") { $0.kind == .processing && $0.requiresExternalPower }
            case .network(let n): network = n.kind
            case .launch:
                if using == 0 && !inCall && on { mustStop(t, "pick-up") { $0.kind == .processing } }
                using += 1
            case .leave(let app, let swipe):
                using = max(0, using - 1)
                if on, swipe, let app, state[app] == .notRunning { swiped[app] = true }
            case .callStarted:
                if using == 0 && !inCall && on { mustStop(t, "a call") { $0.kind == .processing } }
                inCall = true
            case .callEnded: inCall = false
            case .lowPowerMode(let v): lowPower = v
            default: break
            }
        case .transition(let tr):
            state[tr.app] = tr.to
            if tr.cause == .swipe { swiped[tr.app] = true }
            if tr.cause == .open { swiped[tr.app] = false }
            if tr.to == .notRunning, running.values.contains(where: { $0.app == tr.app }) {
                problems.append("app \(tr.app) stopped at \(t) with work running")
            }
        case .task(let te):
            switch te {
            case .started(let r, _):
                running[r.id.rawValue] = r
                guard on else { problems.append("\(r.id) started while off at \(t)"); continue }
                guard r.kind != .finiteLength else { continue }
                let app = s.apps[r.app]
                var closed: [String] = []
                if lowPower { closed.append("Low Power Mode") }
                if !app.backgroundRefresh || s.settings.backgroundAppRefresh == .off { closed.append("Background App Refresh off") }
                if s.settings.backgroundAppRefresh == .wifi && network != .wifi { closed.append("Wi-Fi only") }
                if swiped[r.app] { closed.append("swiped away") }
                if state[r.app] != .background { closed.append("app \(state[r.app])") }
                if r.kind == .processing {
                    if using > 0 || inCall { closed.append("in use") }
                    if r.requiresExternalPower && !charging { closed.append("unplugged") }
                    if r.requiresNetworkConnectivity && network == .none { closed.append("no network") }
                }
                if !closed.isEmpty { problems.append("\(r.id) (\(r.kind)) started at \(t) with \(closed)") }
            case .transfer(let id, _, let kind):
                if s.settings.backgroundAppRefresh == .wifi, kind == .cellular, running[id.rawValue]?.kind != .finiteLength {
                    problems.append("\(id) transferred on cellular at \(t) with Wi-Fi only")
                }
            case .expiration(let id, _, _):
                expiring.remove(id.rawValue)
                expired.insert(id.rawValue)
            default: break
            }
        case .ended(let r):
            running[r.request.id.rawValue] = nil
        }
    }
    // Those that had to stop must have had their expiration handler called.
    problems += expiring.map { "\($0) was not expired when a gate closed" }
    return problems
}

extension TaskKind {
    /// Finite-length work's kind, declared by its mechanism.
    static let finiteLength = MechanismRegistry.kind(FiniteLengthWork.self)
}

/// A `background_work` entry: finite-length work that begins at `begin` (`leave` or
/// `in_use`) with chance `probability`, taking `cpu` seconds and sending `upBytes`.
func finiteWork(
    _ begin: String = "leave", probability: Double = 1, cpu: Distribution = .fixed(2), upBytes: Distribution = .fixed(0)
) -> [String: ParameterValue] {
    ["begin": .text(begin), "probability_pct": .number(probability * 100), "cpu": .distribution(cpu), "up_kb": .distribution(upBytes)]
}
