import PhoneWorld
@testable import Scheduling
import SimEngine
import SimRandom

/// Keeps every task record and battery event, for scenario tests.
struct RecordingSink: MetricsSink {
    var records: [TaskRecord] = []
    var charges: [(SimInstant, Double)] = []
    var shutdowns: [SimInstant] = []
    var boots: [SimInstant] = []
    var end: SimInstant?
    var energy = EnergyFlow()
    var totals: RunTotals?
    var world: [(SimInstant, WorldEvent)] = []
    var summary = RunMetrics()

    mutating func taskEnded(_ record: TaskRecord) { records.append(record); summary.taskEnded(record) }
    mutating func chargeObserved(_ charge: Double, at time: SimInstant) { charges.append((time, charge)); summary.chargeObserved(charge, at: time) }
    mutating func phoneShutDown(at time: SimInstant) { shutdowns.append(time); summary.phoneShutDown(at: time) }
    mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) { boots.append(time); summary.phoneBooted(at: time, offFor: offFor) }
    mutating func worldEvent(_ event: WorldEvent, at time: SimInstant) { world.append((time, event)); summary.worldEvent(event, at: time) }
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

/// An app whose tasks only compute (no fetch) unless `downKB` says otherwise.
func app(_ name: String, every: SimDuration = .hours(1), earliest: SimDuration = .minutes(15),
         work: SimDuration = .seconds(5), power: Double = 1, downKB: Double = 0) -> AppParameters {
    var a = AppParameters(name: name)
    a.refreshInterval = every
    a.earliestBeginDelay = earliest
    a.meanTaskDuration = work
    a.cpuPowerW = power
    a.fetchUpBytes = 0
    a.fetchDownBytes = downKB * 1000
    a.launchDownBytes = 0
    return a
}

func simulate<P: SchedulingPolicy>(_ setup: PhoneSetup, _ policy: P, seed: UInt64 = 1, replication: UInt64 = 0) throws -> RecordingSink {
    let streams = try WorldStreams(setup: setup, masterSeed: seed, replication: replication)
    var sim = PhoneSimulation(setup: setup, policy: policy, sink: RecordingSink(), streams: streams)
    return sim.run()
}

/// The charging sessions the simulation saw, re-derived from the same stream.
func sessions(_ setup: PhoneSetup, seed: UInt64 = 1, replication: UInt64 = 0) throws -> [ChargingSession] {
    let streams = try WorldStreams(setup: setup, masterSeed: seed, replication: replication)
    return setup.charging.sessions(until: .after(setup.duration), stream: streams.charger)
}

/// Radios as FACTS.md §6 gives them (AT&T ARO).
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
