import PhoneWorld
import SimEngine

/// One line of the opt-in event log: what happened, when, to which app and task.
///
/// What happened is kept as data, and `event` and `detail` are its text, made when read or
/// written (`write(event:)`, `write(detail:)`): made as strings while the run went on, they
/// were a fifth of a run with `--events`, and all of them waited in memory until it ended.
package struct LoggedEvent: Sendable, Equatable {
    /// What an event is about.
    package enum Subject: String, Sendable {
        /// The person, the charger, the network, a setting.
        case world
        case phone
        /// An app's life-cycle transition.
        case app
        case task
    }

    /// When it happened.
    package var time: SimInstant
    /// What it is about.
    package var subject: Subject
    /// The app concerned, if any.
    package var app: Int?
    /// The task concerned, if any.
    package var task: TaskID?
    var what: What

    /// What happened, with the particulars its text shows.
    enum What: Sendable, Equatable {
        case shutdown
        case boot(offFor: SimDuration)
        case world(WorldEvent)
        case lifecycle(from: AppState, to: AppState, cause: LifecycleCause)
        case submitted(kind: TaskKind, identifier: String, earliestBegin: SimInstant, replaces: TaskID?)
        case started(kind: TaskKind, identifier: String, remaining: SimDuration?)
        case transfer(NetworkKind)
        case workDoneNotCompleted
        case expiration(ExpirationReason)
        case registrationFailed(identifier: String)
        case lost(energyJ: Double)
        case ended(outcome: TaskOutcome, kind: TaskKind, identifier: String, success: Bool?, rejection: SubmitError?)
    }

    /// What happened, as a short token (`launch`, `background->suspended`, `submitted`, an outcome).
    package var event: String {
        var text = ""
        write(event: &text)
        return text
    }

    /// Particulars, as `key=value` pairs separated by spaces.
    package var detail: String {
        var text = ""
        write(detail: &text)
        return text
    }

    /// Writes `event`'s text to `out`.
    package func write(event out: inout some TextOutputStream) {
        switch what {
        case .shutdown: out.write("shutdown")
        case .boot: out.write("boot")
        case .world(let e):
            switch e {
            case .plugIn: out.write("plug_in")
            case .unplug: out.write("unplug")
            case .network: out.write("network")
            case .launch: out.write("launch")
            case .leave: out.write("leave")
            case .callStarted: out.write("call_start")
            case .callEnded: out.write("call_end")
            case .purge: out.write("purge")
            case .lowPowerPrompt: out.write("low_power_prompt")
            case .lowPowerMode(let on): out.write(on ? "low_power_on" : "low_power_off")
            }
        case .lifecycle(let from, let to, _):
            out.write(from.rawValue)
            out.write("->")
            out.write(to.rawValue)
        case .submitted: out.write("submitted")
        case .started: out.write("started")
        case .transfer: out.write("transfer")
        case .workDoneNotCompleted: out.write("work_done_not_completed")
        case .expiration: out.write("expiration_handler")
        case .registrationFailed: out.write("registration_failed")
        case .lost: out.write("result_lost")
        case .ended(let outcome, _, _, _, _): out.write(outcome.rawValue)
        }
    }

    /// Writes `detail`'s text to `out`. Numbers are written as Swift writes them (`description`).
    package func write(detail out: inout some TextOutputStream) {
        switch what {
        case .shutdown, .workDoneNotCompleted: break
        case .boot(let offFor):
            out.write("off_s=")
            offFor.seconds.write(to: &out)
        case .world(let e):
            switch e {
            case .network(let n):
                out.write("network=")
                out.write(n.kind.rawValue)
                out.write(" down_mbps=")
                n.downMbps.write(to: &out)
                out.write(" up_mbps=")
                n.upMbps.write(to: &out)
            case .leave(_, let swiped): if swiped { out.write("swiped_away=true") }
            case .purge(let app): if app == nil { out.write("nothing_suspended=true") }
            case .lowPowerPrompt(let accepted): out.write(accepted ? "accepted=true" : "accepted=false")
            case .plugIn, .unplug, .launch, .callStarted, .callEnded, .lowPowerMode: break
            }
        case .lifecycle(let from, let to, let cause):
            out.write("cause=")
            out.write(cause.rawValue)
            let calls = AppLifecycle.delegateEvents(from: from, to: to, cause: cause)
            for (k, call) in calls.enumerated() {
                out.write(k == 0 ? " delegate=" : ",")
                out.write(call.rawValue)
            }
        case .submitted(let kind, let identifier, let earliestBegin, let replaces):
            Self.write(kind: kind, identifier: identifier, to: &out)
            out.write(" earliest_begin_s=")
            (Double(earliestBegin.microseconds) / 1e6).write(to: &out)
            if let replaces {
                out.write(" replaces=")
                out.write(String(replaces.rawValue))
            }
        case .started(let kind, let identifier, let remaining):
            Self.write(kind: kind, identifier: identifier, to: &out)
            if let remaining {
                out.write(" time_remaining_s=")
                remaining.seconds.write(to: &out)
            }
        case .transfer(let network):
            out.write("network=")
            out.write(network.rawValue)
        case .expiration(let reason):
            out.write("reason=")
            out.write(reason.rawValue)
        case .registrationFailed(let identifier):
            out.write("identifier=")
            out.write(identifier)
            out.write(" error=notPermitted")
        case .lost(let energyJ):
            out.write("energy_j=")
            energyJ.write(to: &out)
        case .ended(_, let kind, let identifier, let success, let rejection):
            // Energies are in tasks.csv: a task's share of the radio tail comes later.
            Self.write(kind: kind, identifier: identifier, to: &out)
            if let success { out.write(success ? " success=true" : " success=false") }
            if let rejection {
                out.write(" error=")
                out.write(rejection.rawValue)
            }
        }
    }

    private static func write(kind: TaskKind, identifier: String, to out: inout some TextOutputStream) {
        out.write("kind=")
        out.write(kind.rawValue)
        out.write(" identifier=")
        out.write(identifier)
    }
}

/// A sink that records every transition of a run, for `events.csv` and for looking at why a
/// policy did what it did. Opt-in: it keeps one entry per event, so memory grows with the run.
package struct EventLog: MetricsSink, Sendable {
    /// Every event so far, in time order.
    package private(set) var events: [LoggedEvent] = []

    /// An empty log.
    package init() {}

    mutating func add(
        _ time: SimInstant, _ subject: LoggedEvent.Subject, app: Int? = nil, task: TaskID? = nil,
        _ what: LoggedEvent.What
    ) {
        events.append(LoggedEvent(time: time, subject: subject, app: app, task: task, what: what))
    }

    /// Logs a shutdown.
    package mutating func phoneShutDown(at time: SimInstant) { add(time, .phone, .shutdown) }

    /// Logs a boot after `offFor` off.
    package mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) {
        add(time, .phone, .boot(offFor: offFor))
    }

    /// Logs a change in the world.
    package mutating func worldEvent(_ e: WorldEvent, at time: SimInstant) {
        switch e {
        case .launch(let app), .leave(let app, _), .purge(let app): add(time, .world, app: app, .world(e))
        default: add(time, .world, .world(e))
        }
    }

    /// Logs an app's change of state.
    package mutating func lifecycle(_ t: LifecycleTransition, at time: SimInstant) {
        add(time, .app, app: t.app, .lifecycle(from: t.from, to: t.to, cause: t.cause))
    }

    /// Logs a task's step.
    package mutating func taskEvent(_ e: TaskEvent, at time: SimInstant) {
        switch e {
        case .submitted(let r, let replaced):
            add(
                time, .task, app: r.app, task: r.id,
                .submitted(kind: r.kind, identifier: r.identifier, earliestBegin: r.earliestBegin, replaces: replaced))
        case .started(let r, let remaining):
            add(time, .task, app: r.app, task: r.id, .started(kind: r.kind, identifier: r.identifier, remaining: remaining))
        case .transfer(let id, let app, let network): add(time, .task, app: app, task: id, .transfer(network))
        case .workDoneNotCompleted(let id, let app): add(time, .task, app: app, task: id, .workDoneNotCompleted)
        case .expiration(let id, let app, let reason): add(time, .task, app: app, task: id, .expiration(reason))
        case .registrationFailed(let app, let identifier): add(time, .app, app: app, .registrationFailed(identifier: identifier))
        case .lost(let id, let app, let energyJ): add(time, .task, app: app, task: id, .lost(energyJ: energyJ))
        case .ended(let r):
            add(
                r.ended, .task, app: r.request.app, task: r.request.id,
                .ended(
                    outcome: r.outcome, kind: r.request.kind, identifier: r.request.identifier,
                    success: r.outcome == .completed ? r.success : nil, rejection: r.rejection))
        }
    }
}

/// Sends everything to two sinks, such as the summary and the event log.
package struct SinkPair<First: MetricsSink, Second: MetricsSink>: MetricsSink {
    /// The first sink.
    package var first: First
    /// The second sink.
    package var second: Second

    /// A sink sending to `first`, then `second`.
    package init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    /// Sends to both.
    package mutating func taskEnded(_ r: TaskRecord) { first.taskEnded(r); second.taskEnded(r) }
    /// Sends to both.
    package mutating func chargeObserved(_ c: Double, at t: SimInstant) { first.chargeObserved(c, at: t); second.chargeObserved(c, at: t) }
    /// Sends to both.
    package mutating func phoneShutDown(at t: SimInstant) { first.phoneShutDown(at: t); second.phoneShutDown(at: t) }
    /// Sends to both.
    package mutating func phoneBooted(at t: SimInstant, offFor: SimDuration) {
        first.phoneBooted(at: t, offFor: offFor)
        second.phoneBooted(at: t, offFor: offFor)
    }
    /// Sends to both.
    package mutating func worldEvent(_ e: WorldEvent, at t: SimInstant) { first.worldEvent(e, at: t); second.worldEvent(e, at: t) }
    /// Sends to both.
    package mutating func lifecycle(_ l: LifecycleTransition, at t: SimInstant) { first.lifecycle(l, at: t); second.lifecycle(l, at: t) }
    /// Sends to both.
    package mutating func taskEvent(_ e: TaskEvent, at t: SimInstant) { first.taskEvent(e, at: t); second.taskEvent(e, at: t) }
    /// Sends to both.
    package mutating func runEnded(_ totals: RunTotals) { first.runEnded(totals); second.runEnded(totals) }
    /// Whether either sink needs each task's steps.
    package var observesTaskSteps: Bool { first.observesTaskSteps || second.observesTaskSteps }
    /// Sends to both.
    package mutating func taskHeld(_ id: TaskID, by cause: String?, at t: SimInstant) {
        first.taskHeld(id, by: cause, at: t)
        second.taskHeld(id, by: cause, at: t)
    }
    /// Whether either sink wants holds.
    package var observesHolds: Bool { first.observesHolds || second.observesHolds }
    /// Whether either sink needs every change of slope of the charge.
    package var observesChargeCurve: Bool { first.observesChargeCurve || second.observesChargeCurve }
}
