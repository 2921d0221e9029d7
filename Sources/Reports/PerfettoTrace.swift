import Experiments
import Foundation
import PhoneWorld
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// One phone's whole run, everything a timeline viewer draws: the battery's level, the
/// charger, the network, the screen, the radios' states, each app's life cycle, and each
/// request's wait (by what held it) and run. Recorded by re-simulating the run, as the
/// report's timeline is, so it is the very run whose rows tasks.csv and events.csv hold.
struct RunRecorder: MetricsSink, Sendable {
    var charge: [(SimInstant, Double)] = []
    var world: [(SimInstant, WorldEvent)] = []
    var lifecycle: [(SimInstant, LifecycleTransition)] = []
    var records: [TaskRecord] = []
    var holds: [TaskID: [(SimInstant, String?)]] = [:]
    var radios: [(NetworkKind, [(at: SimInstant, activity: RadioActivity)])] = []
    var off: [(from: SimInstant, to: SimInstant?)] = []
    var end = SimInstant.start

    init() {}

    mutating func chargeObserved(_ c: Double, at t: SimInstant) { charge.append((t, c)) }
    mutating func worldEvent(_ e: WorldEvent, at t: SimInstant) { world.append((t, e)) }
    mutating func lifecycle(_ l: LifecycleTransition, at t: SimInstant) { lifecycle.append((t, l)) }
    mutating func phoneShutDown(at t: SimInstant) { off.append((t, nil)) }
    mutating func phoneBooted(at t: SimInstant, offFor: SimDuration) {
        if let k = off.indices.last, off[k].to == nil { off[k].to = t }
    }
    mutating func taskEvent(_ e: TaskEvent, at t: SimInstant) {
        if case .ended(let r) = e { records.append(r) }
    }
    mutating func taskHeld(_ id: TaskID, by cause: String?, at time: SimInstant) { holds[id, default: []].append((time, cause)) }
    var observesHolds: Bool { true }
    mutating func radioStates(_ link: NetworkKind, _ states: [(at: SimInstant, activity: RadioActivity)]) {
        radios.append((link, states))
    }
    var observesRadioStates: Bool { true }
    mutating func runEnded(_ totals: RunTotals) { end = totals.end }
}

/// A run as a trace in Chrome's JSON trace event format, which the Perfetto UI
/// (ui.perfetto.dev) and chrome://tracing both open: a "Phone" process with tracks for the
/// charger, the network, the screen, the phone's power and each radio, and the battery's
/// charge as a counter; one process per app with its life-cycle states and, per identifier,
/// its requests' waits (named by what held them) and runs. Times are microseconds since
/// the run's start, exactly as the simulation has them.
package enum PerfettoTrace {
    /// The trace of `policy` in `replication` of `scenario`, re-simulated.
    package static func json(_ scenario: Scenario, policy: PolicySpec, replication: Int, point: Int? = nil) throws -> String {
        let person = try FleetPeople.person(scenario, replication: replication)
        let streams = try WorldStreams(
            setup: person.setup, masterSeed: person.seed, replication: UInt64(replication), generator: person.generator)
        var sim = PhoneSimulation(setup: person.setup, policy: policy.rule.makePolicy(), sink: RunRecorder(), streams: streams)
        let run = sim.run()
        var meta: [(String, String)] = [
            ("scenario", JSON.string(scenario.name)), ("policy", JSON.string(policy.label)), ("replication", String(replication)),
            ("seed", String(scenario.seed)), ("bgsim_version", JSON.string(Manifest.toolVersion)),
        ]
        if let point { meta.append(("point", String(point))) }
        return json(run, apps: person.setup.apps.map(\.name), meta: meta)
    }

    /// Events of one trace, one JSON object each.
    struct Writer {
        var events: [String] = []

        mutating func name(pid: Int, tid: Int? = nil, _ name: String, sort: Int) {
            let kind = tid == nil ? "process" : "thread"
            let t = tid.map { ",\"tid\":\($0)" } ?? ""
            events.append("{\"ph\":\"M\",\"name\":\"\(kind)_name\",\"pid\":\(pid)\(t),\"args\":{\"name\":\(JSON.string(name))}}")
            events.append("{\"ph\":\"M\",\"name\":\"\(kind)_sort_index\",\"pid\":\(pid)\(t),\"args\":{\"sort_index\":\(sort)}}")
        }

        mutating func span(pid: Int, tid: Int, _ name: String, cat: String, from: SimInstant, to: SimInstant, args: [(String, String)] = []) {
            guard to >= from else { return }
            var s = "{\"ph\":\"X\",\"name\":\(JSON.string(name)),\"cat\":\(JSON.string(cat)),\"pid\":\(pid),\"tid\":\(tid)"
            s += ",\"ts\":\(from.microseconds),\"dur\":\((to - from).microseconds)"
            if !args.isEmpty { s += ",\"args\":{" + args.map { "\(JSON.string($0.0)):\($0.1)" }.joined(separator: ",") + "}" }
            events.append(s + "}")
        }

        mutating func counter(pid: Int, _ name: String, at t: SimInstant, _ key: String, _ value: Double) {
            events.append("{\"ph\":\"C\",\"name\":\(JSON.string(name)),\"pid\":\(pid),\"ts\":\(t.microseconds),\"args\":{\(JSON.string(key)):\(value)}}")
        }
    }

    /// Tracks of one app's requests: per label and role, as many lanes as overlapping spans need.
    struct Lanes {
        var tids: [String: [(tid: Int, end: SimInstant)]] = [:]
        var next = 2
        var names: [(tid: Int, name: String)] = []

        mutating func tid(_ label: String, from: SimInstant, to: SimInstant) -> Int {
            var lanes = tids[label, default: []]
            if let k = lanes.firstIndex(where: { $0.end <= from }) {
                lanes[k].end = to
                tids[label] = lanes
                return lanes[k].tid
            }
            let tid = next
            next += 1
            lanes.append((tid, to))
            tids[label] = lanes
            names.append((tid, lanes.count == 1 ? label : "\(label) \(lanes.count)"))
            return tid
        }
    }

    static let phone = 1
    enum PhoneTrack: Int, CaseIterable {
        case power = 1, charger, network, screen, wifiRadio, cellularRadio
        var title: String {
            switch self {
            case .power: "Phone on/off"
            case .charger: "Charger"
            case .network: "Network"
            case .screen: "Screen (app in front)"
            case .wifiRadio: "Wi-Fi radio"
            case .cellularRadio: "Cellular radio"
            }
        }
    }

    static func json(_ run: RunRecorder, apps: [String], meta: [(String, String)]) -> String {
        var w = Writer()
        let end = run.end
        w.name(pid: phone, "Phone", sort: 0)
        for t in PhoneTrack.allCases { w.name(pid: phone, tid: t.rawValue, t.title, sort: t.rawValue) }
        for o in run.off { w.span(pid: phone, tid: PhoneTrack.power.rawValue, "off", cat: "phone", from: o.from, to: o.to ?? end) }
        // The charger, the network and the screen: each state from its event to the next.
        var plugged: SimInstant?
        var network: (SimInstant, NetworkKind)?
        var front: (SimInstant, Int?)?
        func closeNetwork(_ t: SimInstant) {
            if let (from, kind) = network, kind != .none {
                w.span(pid: phone, tid: PhoneTrack.network.rawValue, kind.rawValue, cat: "network", from: from, to: t)
            }
        }
        func closeFront(_ t: SimInstant) {
            if let (from, app) = front {
                w.span(
                    pid: phone, tid: PhoneTrack.screen.rawValue, app.map { apps[$0] } ?? "phone in use", cat: "screen", from: from, to: t)
            }
            front = nil
        }
        for (t, e) in run.world {
            switch e {
            case .plugIn: if plugged == nil { plugged = t }
            case .unplug:
                if let from = plugged { w.span(pid: phone, tid: PhoneTrack.charger.rawValue, "charging", cat: "charger", from: from, to: t) }
                plugged = nil
            case .network(let n):
                closeNetwork(t)
                network = (t, n.kind)
            case .launch(let app):
                closeFront(t)
                front = (t, app)
            case .leave: closeFront(t)
            default: break
            }
        }
        if let from = plugged { w.span(pid: phone, tid: PhoneTrack.charger.rawValue, "charging", cat: "charger", from: from, to: end) }
        closeNetwork(end)
        closeFront(end)
        for (kind, states) in run.radios {
            let tid = (kind == .wifi ? PhoneTrack.wifiRadio : .cellularRadio).rawValue
            for (k, s) in states.enumerated() where s.activity != .idle {
                w.span(pid: phone, tid: tid, s.activity.rawValue, cat: "radio", from: s.at, to: k + 1 < states.count ? states[k + 1].at : end)
            }
        }
        var last: Double?
        for (t, c) in run.charge where c != last {
            w.counter(pid: phone, "Battery", at: t, "charge_pct", (c * 1e6).rounded() / 1e4)
            last = c
        }
        // Each app: its states, then its requests.
        var states = [[(SimInstant, AppState)]](repeating: [], count: apps.count)
        for (t, l) in run.lifecycle { states[l.app].append((t, l.to)) }
        var lanes = [Lanes](repeating: Lanes(), count: apps.count)
        var appEvents = [[String]](repeating: [], count: apps.count)
        for r in run.records.sorted(by: { $0.request.id < $1.request.id }) {
            let a = r.request.app
            let kind = "\(r.request.kind)"
            let id = r.request.identifier
            // BGTaskScheduler identifiers have tracks of their own; numbered work by its kind.
            let label = r.request.kind == .refresh || r.request.kind == .processing ? id : kind
            var args: [(String, String)] = [
                ("task", String(r.request.id.rawValue)), ("identifier", JSON.string(id)), ("kind", JSON.string(kind)),
                ("outcome", JSON.string(r.outcome.rawValue)),
            ]
            let waitEnd = r.started ?? r.ended
            var waits: [(SimInstant, SimInstant, String)] = []
            if r.request.earliestBegin > r.request.submitted {
                waits.append((r.request.submitted, min(r.request.earliestBegin, waitEnd), "earliest_begin"))
            }
            let changes = run.holds[r.request.id] ?? []
            for (k, (at, cause)) in changes.enumerated() {
                guard let cause, at < waitEnd else { continue }
                waits.append((at, min(k + 1 < changes.count ? changes[k + 1].0 : waitEnd, waitEnd), cause))
            }
            var sub = Writer()
            for (from, to, cause) in waits where to > from {
                sub.span(
                    pid: 10 + a, tid: lanes[a].tid(label + " waits", from: from, to: to), "held: \(cause)", cat: "wait", from: from, to: to,
                    args: args + [("held_by", JSON.string(cause))])
            }
            if let start = r.started {
                args.append(("energy_j", "\(r.energyJ)"))
                sub.span(
                    pid: 10 + a, tid: lanes[a].tid(label + " runs", from: start, to: r.ended), id, cat: "run", from: start, to: r.ended, args: args)
            }
            appEvents[a] += sub.events
        }
        for (a, name) in apps.enumerated() {
            let pid = 10 + a
            w.name(pid: pid, "App \(name)", sort: pid)
            w.name(pid: pid, tid: 1, "State", sort: 1)
            for (tid, label) in lanes[a].names { w.name(pid: pid, tid: tid, label, sort: tid) }
            let s = states[a]
            for (k, (t, state)) in s.enumerated() where state != .notRunning {
                w.span(pid: pid, tid: 1, state.rawValue, cat: "app", from: t, to: k + 1 < s.count ? s[k + 1].0 : end)
            }
            w.events += appEvents[a]
        }
        var out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{" + meta.map { "\(JSON.string($0.0)):\($0.1)" }.joined(separator: ",") + "},"
        out += "\"traceEvents\":[\n" + w.events.joined(separator: ",\n") + "\n]}\n"
        return out
    }
}
