// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

import PhoneWorld
import SimEngine

/// The phone's state at one instant of a sampled timeline.
public struct TimelineSample: Sendable, Equatable {
    public var time: SimInstant
    /// State of charge, 0...1, exact at `time` (the charge is linear between events).
    public var charge: Double
    public var isOn = true
    public var isCharging = false
    public var network = NetworkKind.none
    /// The app the person is using (`nil`: none, or one outside the scenario while
    /// `screenOn`).
    public var foregroundApp: Int?
    public var screenOn = false
    public var inCall = false
    public var lowPowerMode = false
    /// Background tasks running (of any kind).
    public var tasksRunning = 0
}

/// Samples the phone's state every `interval` from the start to the end of the run, from
/// what the sink hears. A sample at `t` shows the state after every event before `t`, and
/// the charge at `t` exactly. Samples go to `emit` as they become known, so memory does not
/// grow with the run.
public struct TimelineSampler {
    public let interval: SimDuration
    let emit: (TimelineSample) -> Void
    var state = TimelineSample(time: .start, charge: 0)
    var next = SimInstant.start
    var last: (time: SimInstant, charge: Double)?

    public init(every interval: SimDuration, emit: @escaping (TimelineSample) -> Void) {
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
public struct StandardSink: MetricsSink {
    public var metrics: RunMetrics
    public var events: EventLog?
    /// Called with each task's complete record (for `tasks.csv`).
    public var onTask: ((TaskRecord) -> Void)?
    public var timeline: TimelineSampler?

    public init(
        metrics: RunMetrics, events: EventLog? = nil, onTask: ((TaskRecord) -> Void)? = nil,
        timeline: TimelineSampler? = nil
    ) {
        self.metrics = metrics
        self.events = events
        self.onTask = onTask
        self.timeline = timeline
    }

    public var observesTaskSteps: Bool { events != nil || timeline != nil }

    public mutating func taskEnded(_ r: TaskRecord) {
        metrics.taskEnded(r)
        events?.taskEnded(r)
        onTask?(r)
    }
    /// Inlined: the energy books call it at every event (61,000 times in a 30-day run), and
    /// with no timeline it is two stores.
    @inline(__always)
    public mutating func chargeObserved(_ c: Double, at t: SimInstant) {
        metrics.chargeObserved(c, at: t)
        timeline?.observe(c, at: t)
        timeline?.state.charge = c
    }
    public mutating func phoneShutDown(at t: SimInstant) {
        metrics.phoneShutDown(at: t)
        events?.phoneShutDown(at: t)
        timeline?.state.isOn = false
    }
    public mutating func phoneBooted(at t: SimInstant, offFor: SimDuration) {
        metrics.phoneBooted(at: t, offFor: offFor)
        events?.phoneBooted(at: t, offFor: offFor)
        timeline?.state.isOn = true
    }
    public mutating func worldEvent(_ e: WorldEvent, at t: SimInstant) {
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
    public mutating func lifecycle(_ l: LifecycleTransition, at t: SimInstant) {
        metrics.lifecycle(l, at: t)
        events?.lifecycle(l, at: t)
    }
    /// Inlined, as `RunMetrics.taskEvent` is, so the event's record is not copied.
    @inline(__always)
    public mutating func taskEvent(_ e: TaskEvent, at t: SimInstant) {
        metrics.taskEvent(e, at: t)
        events?.taskEvent(e, at: t)
        guard timeline != nil else { return }
        switch e {
        case .started: timeline!.state.tasksRunning += 1
        case .ended(let r) where r.started != nil: timeline!.state.tasksRunning -= 1
        default: break
        }
    }
    public mutating func runEnded(_ totals: RunTotals) {
        metrics.runEnded(totals)
        events?.runEnded(totals)
    }
}
