/// Names one of a simulator's timers (`Simulator.makeTimer()`).
public struct TimerID: Hashable, Sendable {
    @usableFromInline let index: Int
    @inlinable init(index: Int) { self.index = index }
}

/// A discrete-event simulator: a clock, a queue of future events, and a few timers.
///
/// The API is small on purpose: `schedule`, `cancel`, `peek`, `step` and `run(until:)`, plus
/// timers (`makeTimer`, `setTimer`, `cancelTimer`): re-armable events kept beside the queue for
/// the few that a model moves at almost every step. The
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
public struct Simulator<Event>: ~Copyable {
    /// The current simulated time.
    @inlinable public var now: SimInstant { clock }
    @usableFromInline var clock: SimInstant
    @usableFromInline var queue: EventQueue<Event>

    /// An armed timer: its event, due time and ordering key.
    @usableFromInline
    struct Armed {
        @usableFromInline var time: Int64
        @usableFromInline var key: UInt64
        @usableFromInline var event: Event
        @inlinable init(time: Int64, key: UInt64, event: Event) {
            self.time = time
            self.key = key
            self.event = event
        }
    }

    /// Timers, by `TimerID` (`timerCount` of them, room for `timerCapacity`), and the index of
    /// the earliest armed one (-1: none). In a buffer the simulator owns, like the queue's:
    /// set at almost every step, an array's copy-on-write check was paid at each.
    @usableFromInline var timers: UnsafeMutablePointer<Armed?>
    @usableFromInline var timerCount = 0
    @usableFromInline var timerCapacity = 4
    @usableFromInline var soonest = -1

    /// A simulator whose clock starts at `start`, with room for `capacity` pending events.
    @inlinable
    public init(start: SimInstant = .start, capacity: Int = 0) {
        clock = start
        queue = EventQueue(capacity: capacity)
        timers = .allocate(capacity: timerCapacity)
    }

    deinit {
        timers.deinitialize(count: timerCount)
        timers.deallocate()
    }

    /// The number of pending events, armed timers included.
    @inlinable public var pendingCount: Int { queue.count + (0..<timerCount).filter { timers[$0] != nil }.count }

    // MARK: Timers

    /// Adds a timer, disarmed. Timers are for the few events a model moves at nearly every
    /// step (a battery level, a radio's next transition): setting one costs a scan of the
    /// timers instead of a cancellation plus an insertion into the heap.
    public mutating func makeTimer() -> TimerID {
        if timerCount == timerCapacity {
            let bigger = UnsafeMutablePointer<Armed?>.allocate(capacity: 2 * timerCapacity)
            bigger.moveInitialize(from: timers, count: timerCount)
            timers.deallocate()
            timers = bigger
            timerCapacity *= 2
        }
        (timers + timerCount).initialize(to: nil)
        timerCount += 1
        return TimerID(index: timerCount - 1)
    }

    /// Arms `timer` to fire `event` at `time`, replacing what it was armed with. It orders
    /// among all events exactly as `schedule(event, at: time, priority: priority)` would.
    /// - Precondition: `time >= now`.
    @inlinable
    public mutating func setTimer(_ timer: TimerID, _ event: Event, at time: SimInstant, priority: EventPriority = .normal) {
        require(time >= now, "cannot set a timer at \(time): it is before now (\(now))")
        precondition(timer.index < timerCount, "timer \(timer.index) was not made by this simulator")
        let armed = Armed(time: time.microseconds, key: queue.takeKey(priority: priority), event: event)
        timers[timer.index] = armed
        // Only a timer that was the soonest and may have moved later needs a scan; otherwise
        // the new one is the soonest or the soonest stays (keys are unique: no ties).
        if soonest == timer.index {
            findSoonest()
        } else if soonest < 0 {
            soonest = timer.index
        } else if let current = timers[soonest], (armed.time, armed.key) < (current.time, current.key) {
            soonest = timer.index
        }
    }

    /// Disarms `timer`; returns whether it was armed.
    @inlinable
    @discardableResult
    public mutating func cancelTimer(_ timer: TimerID) -> Bool {
        precondition(timer.index < timerCount, "timer \(timer.index) was not made by this simulator")
        guard timers[timer.index] != nil else { return false }
        timers[timer.index] = nil
        if soonest == timer.index { findSoonest() }
        return true
    }

    /// When `timer` fires, or `nil` when it is disarmed.
    @inlinable
    public func timerTime(_ timer: TimerID) -> SimInstant? {
        precondition(timer.index < timerCount, "timer \(timer.index) was not made by this simulator")
        return timers[timer.index].map { SimInstant(microseconds: $0.time) }
    }

    @inlinable
    mutating func findSoonest() {
        soonest = -1
        var best: (Int64, UInt64) = (.max, .max)
        for i in 0..<timerCount {
            guard let t = timers[i] else { continue }
            if (t.time, t.key) < best {
                best = (t.time, t.key)
                soonest = i
            }
        }
    }

    /// Whether the earliest armed timer precedes the queue's earliest event.
    @inlinable
    var timerFirst: Bool {
        guard soonest >= 0, let t = timers[soonest] else { return false }
        guard let q = queue.firstOrder else { return true }
        return (t.time, t.key) < (q.time, q.key)
    }

    /// The time of the next event, from the queue or a timer.
    @inlinable
    var nextTime: SimInstant? {
        if timerFirst, let t = timers[soonest] { return SimInstant(microseconds: t.time) }
        return queue.firstTime
    }

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
    public func peek() -> ScheduledEvent<Event>? {
        if timerFirst, let t = timers[soonest] {
            return ScheduledEvent(
                time: SimInstant(microseconds: t.time),
                priority: EventPriority(rawValue: UInt8(truncatingIfNeeded: t.key >> 56)), event: t.event)
        }
        return queue.first
    }

    /// Fires the next event: advances `now` to its time and returns it.
    /// Returns `nil` (and leaves `now` alone) when nothing is pending.
    /// - Complexity: O(log n) amortized.
    @inlinable
    public mutating func step() -> Event? {
        let time: SimInstant, event: Event
        if timerFirst, let t = timers[soonest] {
            timers[soonest] = nil
            findSoonest()
            (time, event) = (SimInstant(microseconds: t.time), t.event)
        } else {
            guard let (t, e) = queue.popFirst() else { return nil }
            (time, event) = (t, e)
        }
        assert(time >= now, "simulated time went backwards: \(time) after \(now)")
        clock = time
        return event
    }

    /// Fires the next event if it is due strictly before `end`; otherwise returns `nil`.
    @inlinable
    public mutating func step(before end: SimInstant) -> Event? {
        guard let due = nextTime, due < end else { return nil }
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
