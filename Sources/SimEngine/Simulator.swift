/// A discrete-event simulator: a clock and a queue of future events.
///
/// The API is small on purpose: `schedule`, `cancel`, `peek`, `step` and `run(until:)`. The
/// simulator knows nothing of what events mean; `Event` is the model's own type, ideally an
/// enum, so that dispatch is a `switch` and no closure or existential is allocated per event.
///
/// `now` is set to an event's time before the event is handed out, so a handler always sees
/// the clock at its own event. Time never goes backwards; this is checked in debug builds.
///
/// ```swift
/// var sim = Simulator<MyEvent>()
/// sim.schedule(.arrival, after: .seconds(5))
/// sim.run(until: .after(.hours(1))) { sim, event in
///     switch event { case .arrival: sim.schedule(.arrival, after: .seconds(5)) }
/// }
/// ```
public struct Simulator<Event> {
    /// The current simulated time.
    @inlinable public var now: SimInstant { clock }
    @usableFromInline var clock: SimInstant
    @usableFromInline var queue: EventQueue<Event>

    /// A simulator whose clock starts at `start`, with room for `capacity` pending events.
    @inlinable
    public init(start: SimInstant = .start, capacity: Int = 0) {
        clock = start
        queue = EventQueue(capacity: capacity)
    }

    /// The number of pending events.
    @inlinable public var pendingCount: Int { queue.count }

    /// Schedules `event` at `time`.
    ///
    /// - Precondition: `time >= now`. Scheduling in the past is a modelling bug; the trap's
    ///   message names both instants.
    /// - Complexity: O(log n).
    @inlinable
    @discardableResult
    public mutating func schedule(_ event: Event, at time: SimInstant, priority: EventPriority = .normal) -> EventHandle {
        require(time >= now, "cannot schedule an event at \(time): it is before now (\(now))")
        return queue.insert(event, at: time, priority: priority)
    }

    /// Schedules `event` a `delay` after now.
    /// - Precondition: `delay >= .zero`.
    @inlinable
    @discardableResult
    public mutating func schedule(_ event: Event, after delay: SimDuration, priority: EventPriority = .normal) -> EventHandle {
        schedule(event, at: now + delay, priority: priority)
    }

    /// Cancels a pending event; returns `false` if it already fired or was cancelled.
    /// - Complexity: O(1) amortized.
    @inlinable
    @discardableResult
    public mutating func cancel(_ handle: EventHandle) -> Bool {
        queue.cancel(handle)
    }

    /// The next event to fire, without firing it.
    @inlinable
    public func peek() -> ScheduledEvent<Event>? { queue.first }

    /// Fires the next event: advances `now` to its time and returns it.
    /// Returns `nil` (and leaves `now` alone) when nothing is pending.
    /// - Complexity: O(log n) amortized.
    @inlinable
    public mutating func step() -> Event? {
        guard let (time, event) = queue.popFirst() else { return nil }
        assert(time >= now, "simulated time went backwards: \(time) after \(now)")
        clock = time
        return event
    }

    /// Fires the next event if it is due strictly before `end`; otherwise returns `nil`.
    @inlinable
    public mutating func step(before end: SimInstant) -> Event? {
        guard let due = queue.firstTime, due < end else { return nil }
        return step()
    }

    /// Fires every event due strictly before `end`, in order, handing each to `handler`
    /// together with the simulator (so the handler can schedule and cancel), then moves the
    /// clock to `end`.
    ///
    /// The interval is half-open, `[now, end)`: events due exactly at `end` stay pending, so
    /// `run(until: a)` followed by `run(until: b)` is the same as `run(until: b)`.
    /// - Precondition: `end >= now`.
    @inlinable
    public mutating func run<E: Error>(
        until end: SimInstant,
        _ handler: (inout Simulator, Event) throws(E) -> Void
    ) throws(E) {
        require(end >= now, "run(until: \(end)) is before now (\(now))")
        while let event = step(before: end) {
            try handler(&self, event)
        }
        clock = end
    }
}
