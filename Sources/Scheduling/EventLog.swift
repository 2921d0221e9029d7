import PhoneWorld
import SimEngine

/// One line of the opt-in event log: what happened, when, to which app and task.
public struct LoggedEvent: Sendable, Equatable {
    public enum Subject: String, Sendable {
        /// The person, the charger, the network, a setting.
        case world
        case phone
        /// An app's life-cycle transition.
        case app
        case task
    }

    public var time: SimInstant
    public var subject: Subject
    public var app: Int?
    public var task: TaskID?
    /// What happened, as a short token (`launch`, `background->suspended`, `submitted`, an outcome).
    public var event: String
    /// Particulars, as `key=value` pairs separated by spaces.
    public var detail: String
}

/// A sink that records every transition of a run, for `events.csv` and for looking at why a
/// policy did what it did. Opt-in: it keeps one entry per event, so memory grows with the run.
public struct EventLog: MetricsSink, Sendable {
    public private(set) var events: [LoggedEvent] = []

    public init() {}

    mutating func add(_ time: SimInstant, _ subject: LoggedEvent.Subject, app: Int? = nil, task: TaskID? = nil,
                      _ event: String, _ detail: String = "") {
        events.append(LoggedEvent(time: time, subject: subject, app: app, task: task, event: event, detail: detail))
    }

    public mutating func phoneShutDown(at time: SimInstant) { add(time, .phone, "shutdown") }

    public mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) {
        add(time, .phone, "boot", "off_s=\(offFor.seconds)")
    }

    public mutating func worldEvent(_ e: WorldEvent, at time: SimInstant) {
        switch e {
        case .plugIn: add(time, .world, "plug_in")
        case .unplug: add(time, .world, "unplug")
        case .network(let n): add(time, .world, "network", "network=\(n.kind.rawValue) down_mbps=\(n.downMbps) up_mbps=\(n.upMbps)")
        case .launch(let app): add(time, .world, app: app, "launch")
        case .leave(let app, let swiped): add(time, .world, app: app, "leave", swiped ? "swiped_away=true" : "")
        case .callStarted: add(time, .world, "call_start")
        case .callEnded: add(time, .world, "call_end")
        case .purge(let app): add(time, .world, app: app, "purge", app == nil ? "nothing_suspended=true" : "")
        case .lowPowerPrompt(let accepted): add(time, .world, "low_power_prompt", "accepted=\(accepted)")
        case .lowPowerMode(let on): add(time, .world, on ? "low_power_on" : "low_power_off")
        }
    }

    public mutating func lifecycle(_ t: LifecycleTransition, at time: SimInstant) {
        let calls = t.delegateEvents.map(\.rawValue).joined(separator: ",")
        add(time, .app, app: t.app, "\(t.from.rawValue)->\(t.to.rawValue)",
            "cause=\(t.cause.rawValue)" + (calls.isEmpty ? "" : " delegate=\(calls)"))
    }

    public mutating func taskEvent(_ e: TaskEvent, at time: SimInstant) {
        switch e {
        case .submitted(let r, let replaced):
            var detail = "kind=\(r.kind.rawValue) identifier=\(r.identifier) earliest_begin_s=\(Double(r.earliestBegin.microseconds) / 1e6)"
            if let replaced { detail += " replaces=\(replaced.rawValue)" }
            add(time, .task, app: r.app, task: r.id, "submitted", detail)
        case .started(let r, let remaining):
            var detail = "kind=\(r.kind.rawValue) identifier=\(r.identifier)"
            if let remaining { detail += " time_remaining_s=\(remaining.seconds)" }
            add(time, .task, app: r.app, task: r.id, "started", detail)
        case .transfer(let id, let app, let network): add(time, .task, app: app, task: id, "transfer", "network=\(network.rawValue)")
        case .workDoneNotCompleted(let id): add(time, .task, task: id, "work_done_not_completed")
        case .expiration(let id, let reason): add(time, .task, task: id, "expiration_handler", "reason=\(reason.rawValue)")
        case .registrationFailed(let app, let identifier):
            add(time, .app, app: app, "registration_failed", "identifier=\(identifier) error=notPermitted")
        case .lost(let id, let app, let energyJ):
            add(time, .task, app: app, task: id, "result_lost", "energy_j=\(energyJ)")
        case .ended(let r):
            // Energies are in tasks.csv: a task's share of the radio tail comes later.
            var detail = "kind=\(r.request.kind.rawValue) identifier=\(r.request.identifier)"
            if r.outcome == .completed { detail += " success=\(r.success)" }
            if let e = r.rejection { detail += " error=\(e.rawValue)" }
            add(r.ended, .task, app: r.request.app, task: r.request.id, r.outcome.rawValue, detail)
        }
    }
}

/// Sends everything to two sinks, such as the summary and the event log.
public struct SinkPair<First: MetricsSink, Second: MetricsSink>: MetricsSink {
    public var first: First
    public var second: Second

    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    public mutating func taskEnded(_ r: TaskRecord) { first.taskEnded(r); second.taskEnded(r) }
    public mutating func chargeObserved(_ c: Double, at t: SimInstant) { first.chargeObserved(c, at: t); second.chargeObserved(c, at: t) }
    public mutating func phoneShutDown(at t: SimInstant) { first.phoneShutDown(at: t); second.phoneShutDown(at: t) }
    public mutating func phoneBooted(at t: SimInstant, offFor: SimDuration) {
        first.phoneBooted(at: t, offFor: offFor)
        second.phoneBooted(at: t, offFor: offFor)
    }
    public mutating func worldEvent(_ e: WorldEvent, at t: SimInstant) { first.worldEvent(e, at: t); second.worldEvent(e, at: t) }
    public mutating func lifecycle(_ l: LifecycleTransition, at t: SimInstant) { first.lifecycle(l, at: t); second.lifecycle(l, at: t) }
    public mutating func taskEvent(_ e: TaskEvent, at t: SimInstant) { first.taskEvent(e, at: t); second.taskEvent(e, at: t) }
    public mutating func runEnded(_ totals: RunTotals) { first.runEnded(totals); second.runEnded(totals) }
    public var observesTaskSteps: Bool { first.observesTaskSteps || second.observesTaskSteps }
}
