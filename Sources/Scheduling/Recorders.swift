import PhoneWorld
import SimEngine

/// The phone's state at one instant of a sampled timeline.
package struct TimelineSample: Sendable, Equatable {
    /// The sample's instant.
    package var time: SimInstant
    /// State of charge, 0...1, exact at `time` (the charge is linear between events).
    package var charge: Double
    /// Whether the phone is on (not shut down for lack of energy).
    package var isOn = true
    /// Whether a charger is connected.
    package var isCharging = false
    /// The connection.
    package var network = NetworkKind.none
    /// The app the person is using (`nil`: none, or one outside the scenario while
    /// `screenOn`).
    package var foregroundApp: Int?
    /// Whether an app is in the foreground (the screen is on).
    package var screenOn = false
    /// Whether a call is in progress.
    package var inCall = false
    /// Whether Low Power Mode is on.
    package var lowPowerMode = false
    /// Background tasks running (of any kind).
    package var tasksRunning = 0
}

/// Samples the phone's state every `interval` from the start to the end of the run, from
/// what the sink hears. A sample at `t` shows the state after every event before `t`, and
/// the charge at `t` exactly. Samples go to `emit` as they become known, so memory does not
/// grow with the run.
package struct TimelineSampler {
    /// Time between samples.
    package let interval: SimDuration
    let emit: (TimelineSample) -> Void
    var state = TimelineSample(time: .start, charge: 0)
    var next = SimInstant.start
    var last: (time: SimInstant, charge: Double)?

    /// A sampler that sends a sample every `interval` to `emit`.
    package init(every interval: SimDuration, emit: @escaping (TimelineSample) -> Void) {
        precondition(interval > .zero, "a timeline needs a positive interval")
        self.interval = interval
        self.emit = emit
    }

    mutating func observe(_ charge: Double, at time: SimInstant) {
        while next <= time {
            var s = state
            s.time = next
            if let last, time > last.time {
                let f = Double((next - last.time).microseconds) / Double((time - last.time).microseconds)
                s.charge = last.charge + f * (charge - last.charge)
            } else {
                s.charge = charge
            }
            emit(s)
            next += interval
        }
        last = (time, charge)
    }
}

/// What a standard run records: the summary always; the event log, a per-task observer and
/// a sampled timeline when asked for. One concrete sink (not a stack of generic pairs), so
/// the simulation is specialised once for it.
package struct StandardSink: MetricsSink {
    /// The run's metrics, always kept.
    package var metrics: RunMetrics
    /// Every event of the run, when `--events` asks for it.
    package var events: EventLog?
    /// Called with each task's complete record (for `tasks.csv`).
    package var onTask: ((TaskRecord) -> Void)?
    /// The sampled timeline, when `--timeline` asks for it.
    package var timeline: TimelineSampler?
    /// Each app's requests added up per identifier (`apps.csv`), when asked for.
    package var apps: AppTallies?
    /// Called at each change of what holds a request (`MetricsSink.taskHeld`), when set.
    package var onHold: ((TaskID, String?, SimInstant) -> Void)?

    /// A sink keeping `metrics`, and the event log, task records and timeline given.
    package init(
        metrics: RunMetrics, events: EventLog? = nil, onTask: ((TaskRecord) -> Void)? = nil,
        timeline: TimelineSampler? = nil
    ) {
        self.metrics = metrics
        self.events = events
        self.onTask = onTask
        self.timeline = timeline
    }

    /// Whether the run must report each task's steps (only the event log and timeline need them).
    package var observesTaskSteps: Bool { events != nil || timeline != nil }
    /// Whether `onHold` is set.
    package var observesHolds: Bool { onHold != nil }
    /// Hands the change to `onHold`.
    package func taskHeld(_ id: TaskID, by cause: String?, at time: SimInstant) { onHold?(id, cause, time) }
    /// Whether the timeline samples the charge (the summary keeps only its extremes).
    package var observesChargeCurve: Bool { timeline != nil }

    /// Counts the task in the metrics and hands its record to `onTask`.
    package mutating func taskEnded(_ r: TaskRecord) {
        metrics.taskEnded(r)
        apps?.add(r)
        events?.taskEnded(r)
        onTask?(r)
    }
    /// Inlined: the energy books call it at every event (61,000 times in a 30-day run), and
    /// with no timeline it is two stores.
    @inline(__always)
    package mutating func chargeObserved(_ c: Double, at t: SimInstant) {
        metrics.chargeObserved(c, at: t)
        timeline?.observe(c, at: t)
        timeline?.state.charge = c
    }
    /// Counts the shutdown.
    package mutating func phoneShutDown(at t: SimInstant) {
        metrics.phoneShutDown(at: t)
        events?.phoneShutDown(at: t)
        timeline?.state.isOn = false
    }
    /// Counts the boot and the time the phone was off.
    package mutating func phoneBooted(at t: SimInstant, offFor: SimDuration) {
        metrics.phoneBooted(at: t, offFor: offFor)
        events?.phoneBooted(at: t, offFor: offFor)
        timeline?.state.isOn = true
    }
    /// Updates the metrics, the event log and the timeline with a change in the world.
    package mutating func worldEvent(_ e: WorldEvent, at t: SimInstant) {
        metrics.worldEvent(e, at: t)
        events?.worldEvent(e, at: t)
        guard timeline != nil else { return }
        switch e {
        case .plugIn: timeline!.state.isCharging = true
        case .unplug: timeline!.state.isCharging = false
        case .network(let n): timeline!.state.network = n.kind
        case .launch(let app):
            timeline!.state.screenOn = true
            timeline!.state.foregroundApp = app
        case .leave:
            timeline!.state.screenOn = false
            timeline!.state.foregroundApp = nil
        case .callStarted: timeline!.state.inCall = true
        case .callEnded: timeline!.state.inCall = false
        case .lowPowerMode(let on): timeline!.state.lowPowerMode = on
        case .purge, .lowPowerPrompt: break
        }
    }
    /// Logs the app's change of state and updates the timeline.
    package mutating func lifecycle(_ l: LifecycleTransition, at t: SimInstant) {
        metrics.lifecycle(l, at: t)
        events?.lifecycle(l, at: t)
    }
    /// Inlined, as `RunMetrics.taskEvent` is, so the event's record is not copied.
    @inline(__always)
    package mutating func taskEvent(_ e: TaskEvent, at t: SimInstant) {
        metrics.taskEvent(e, at: t)
        events?.taskEvent(e, at: t)
        guard timeline != nil else { return }
        switch e {
        case .started: timeline!.state.tasksRunning += 1
        case .ended(let r) where r.started != nil: timeline!.state.tasksRunning -= 1
        default: break
        }
    }
    /// Closes the metrics with the run's energy totals.
    package mutating func runEnded(_ totals: RunTotals) {
        metrics.runEnded(totals)
        events?.runEnded(totals)
    }
}
