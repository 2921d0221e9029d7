import Experiments
import Foundation
import PhoneWorld
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// What one phone did in one replication, for the report's timeline: the battery's level,
/// the charger, the network, the screen, each app's state and each task's run.
///
/// Recorded by re-simulating the run (a run is a pure function of scenario, policy and
/// replication, so this is the very run whose numbers the report shows), not read from
/// `events.csv`, so a report needs no `--events`.
package struct PhoneTrace: MetricsSink, Sendable {
    /// The span recorded: one day of the replication.
    package var window: Range<SimInstant>
    /// (time, charge 0...1), the last point before the window first.
    package var charge: [(SimInstant, Double)] = []
    /// State changes, each with the time it took effect.
    package var charging: [(SimInstant, Bool)] = [(.start, false)]
    /// Network changes, each with the time it took effect.
    package var network: [(SimInstant, NetworkKind)] = [(.start, .none)]
    /// The app in the foreground (`nil`: screen off).
    package var screen: [(SimInstant, Int?)] = [(.start, nil)]
    /// Per app, its life-cycle states, each with the time it was entered.
    package var appStates: [[(SimInstant, AppState)]]
    /// Task runs overlapping the window: app, kind, start, end, outcome.
    package var runs: [(app: Int, kind: TaskKind, start: SimInstant, end: SimInstant, outcome: TaskOutcome)] = []
    /// Times the phone shut down for lack of energy.
    package var shutdowns: [SimInstant] = []
    /// Stretches of waiting that overlap the window: app, kind, from, to, and what held the
    /// request then (a gate's or a policy rule's token; `earliest_begin` before it was due).
    package var waits: [(app: Int, kind: TaskKind, from: SimInstant, to: SimInstant, cause: String)] = []
    /// Each unfinished request's changes of what holds it, until it ends.
    var holds: [TaskID: [(SimInstant, String?)]] = [:]

    /// An empty trace of `apps` apps over `window`.
    package init(apps: Int, window: Range<SimInstant>) {
        self.window = window
        appStates = Array(repeating: [(.start, .notRunning)], count: apps)
    }

    /// Records the charge level, keeping the last point before the window.
    package mutating func chargeObserved(_ c: Double, at t: SimInstant) {
        if t < window.lowerBound {
            charge = [(t, c)]
        } else if t <= window.upperBound {
            charge.append((t, c))
        }
    }

    /// Records charger, network and screen changes within the window.
    package mutating func worldEvent(_ e: WorldEvent, at t: SimInstant) {
        guard t <= window.upperBound else { return }
        switch e {
        case .plugIn: charging.append((t, true))
        case .unplug: charging.append((t, false))
        case .network(let n): network.append((t, n.kind))
        case .launch(let app): screen.append((t, app))
        case .leave: screen.append((t, nil))
        default: break
        }
    }

    /// Records an app's change of state.
    package mutating func lifecycle(_ l: LifecycleTransition, at t: SimInstant) {
        guard t <= window.upperBound else { return }
        appStates[l.app].append((t, l.to))
    }

    /// Records a shutdown within the window.
    package mutating func phoneShutDown(at t: SimInstant) {
        if window.contains(t) { shutdowns.append(t) }
    }

    /// Records a task's run if it overlaps the window, and the stretches of its wait that do.
    package mutating func taskEvent(_ e: TaskEvent, at t: SimInstant) {
        guard case .ended(let r) = e else { return }
        let changes = holds.removeValue(forKey: r.request.id) ?? []
        let waitEnd = r.started ?? r.ended
        if r.request.submitted < window.upperBound, waitEnd > window.lowerBound {
            func add(_ a: SimInstant, _ b: SimInstant, _ cause: String) {
                let a = max(a, window.lowerBound), b = min(b, window.upperBound)
                if a < b { waits.append((r.request.app, r.request.kind, a, b, cause)) }
            }
            add(r.request.submitted, min(r.request.earliestBegin, waitEnd), "earliest_begin")
            for (k, (at, cause)) in changes.enumerated() {
                guard let cause else { continue }
                add(at, k + 1 < changes.count ? changes[k + 1].0 : waitEnd, cause)
            }
        }
        guard let start = r.started, start < window.upperBound, r.ended >= window.lowerBound else { return }
        runs.append((r.request.app, r.request.kind, start, r.ended, r.outcome))
    }

    /// Records a change of what holds a request (its stretches are kept when it ends).
    package mutating func taskHeld(_ id: TaskID, by cause: String?, at time: SimInstant) {
        guard time <= window.upperBound else { return }
        holds[id, default: []].append((time, cause))
    }

    /// The trace draws each request's wait.
    package var observesHolds: Bool { true }
}

extension Experiment {
    /// How far past the window a trace's run goes.
    package static let traceLookahead = SimDuration.days(7)

    /// Re-simulates `policy` in `replication` of the scenario and records its trace over `window`.
    package static func trace(
        _ scenario: Scenario, policy: PolicySpec, replication: Int,
        window: Range<SimInstant>, lookahead: SimDuration = traceLookahead
    ) throws -> PhoneTrace {
        var scenario = try FleetPeople.person(scenario, replication: replication)
        // Nothing after the window is drawn: the run ends a week past it (a week of future
        // for a policy that sees it), which leaves the window as a whole run has it.
        scenario.setup.duration = min(scenario.setup.duration, window.upperBound - .start + lookahead)
        let sink = PhoneTrace(apps: scenario.setup.apps.count, window: window)
        let streams = try WorldStreams(
            setup: scenario.setup, masterSeed: scenario.seed,
            replication: UInt64(replication), generator: scenario.generator)
        var sim = PhoneSimulation(setup: scenario.setup, policy: policy.rule.makePolicy(), sink: sink, streams: streams)
        return sim.run()
    }
}
