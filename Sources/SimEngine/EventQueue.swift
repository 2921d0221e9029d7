/// The priority of an event among events at the same instant; lower fires first.
///
/// Priority only breaks ties in time; among equal time and priority, events fire in the
/// order they were scheduled.
public struct EventPriority: Hashable, Comparable, Sendable {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let first = EventPriority(rawValue: 0)
    public static let high = EventPriority(rawValue: 64)
    public static let normal = EventPriority(rawValue: 128)
    public static let low = EventPriority(rawValue: 192)
    public static let last = EventPriority(rawValue: 255)

    @inlinable public static func < (a: EventPriority, b: EventPriority) -> Bool { a.rawValue < b.rawValue }
}

/// Names one scheduled event so that it can be cancelled.
///
/// A handle stays safe after its event fired or was cancelled: cancelling it then does
/// nothing and returns `false`, even if the queue has reused its storage for a newer event.
public struct EventHandle: Hashable, Sendable {
    @usableFromInline let slot: UInt32
    @usableFromInline let generation: UInt32
    @inlinable init(slot: UInt32, generation: UInt32) {
        self.slot = slot
        self.generation = generation
    }
}

/// An event with the instant it is due.
public struct ScheduledEvent<Event> {
    public var time: SimInstant
    public var priority: EventPriority
    public var event: Event

    @inlinable
    public init(time: SimInstant, priority: EventPriority, event: Event) {
        self.time = time
        self.priority = priority
        self.event = event
    }
}

/// A priority queue of events ordered by (time, priority, insertion sequence).
///
/// A binary min-heap alone does not keep ties in order, so each entry carries a key that
/// packs the priority above a 56-bit insertion sequence number; (time, key) is then a total
/// order and equal-time events leave in (priority, insertion) order. (FACTS.md §10.)
///
/// Cancellation is lazy: each entry owns a slot whose generation counter is bumped when the
/// event is cancelled, so `cancel` is O(1) and the dead entry is discarded when it reaches the
/// top. The top of the heap is always a live entry, which keeps `peek` non-mutating.
///
/// Storage (the heap array, the slot generations and the free-slot list) grows to the peak
/// number of pending events and is then reused, so a steady-state simulation does not
/// allocate per event.
public struct EventQueue<Event> {
    @usableFromInline
    struct Entry {
        @usableFromInline var time: Int64
        /// priority << 56 | sequence
        @usableFromInline var key: UInt64
        @usableFromInline var slot: UInt32
        @usableFromInline var generation: UInt32
        @usableFromInline var event: Event

        @inlinable
        init(time: Int64, key: UInt64, slot: UInt32, generation: UInt32, event: Event) {
            self.time = time
            self.key = key
            self.slot = slot
            self.generation = generation
            self.event = event
        }

        @inlinable
        func precedes(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && key < other.key)
        }
    }

    @usableFromInline var heap: ContiguousArray<Entry> = []
    /// Current generation of each slot. An entry is live iff its generation equals its slot's.
    @usableFromInline var generations: ContiguousArray<UInt32> = []
    @usableFromInline var freeSlots: ContiguousArray<UInt32> = []
    @usableFromInline var nextSequence: UInt64 = 0
    /// Cancelled entries still sitting in the heap.
    @usableFromInline var deadCount: Int = 0

    @usableFromInline static var sequenceLimit: UInt64 { 1 << 56 }

    /// An empty queue with room for `capacity` pending events before it grows.
    @inlinable
    public init(capacity: Int = 0) {
        heap.reserveCapacity(capacity)
        generations.reserveCapacity(capacity)
        freeSlots.reserveCapacity(capacity)
    }

    /// The number of pending (scheduled, not cancelled, not yet popped) events.
    @inlinable public var count: Int { heap.count - deadCount }
    @inlinable public var isEmpty: Bool { count == 0 }

    /// Adds an event due at `time`.
    /// - Complexity: O(log n).
    @inlinable
    @discardableResult
    public mutating func insert(_ event: Event, at time: SimInstant, priority: EventPriority = .normal) -> EventHandle {
        precondition(nextSequence < Self.sequenceLimit, "event queue: more than 2^56 events scheduled")
        let key = UInt64(priority.rawValue) << 56 | nextSequence
        nextSequence &+= 1
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = UInt32(generations.count)
            generations.append(0)
        }
        let generation = generations[Int(slot)]
        heap.append(Entry(time: time.microseconds, key: key, slot: slot, generation: generation, event: event))
        siftUp(heap.count - 1)
        return EventHandle(slot: slot, generation: generation)
    }

    /// Cancels a pending event. Returns `false` if it already fired or was cancelled.
    /// - Complexity: O(1) amortized; the entry is discarded when it reaches the top.
    @inlinable
    @discardableResult
    public mutating func cancel(_ handle: EventHandle) -> Bool {
        let slot = Int(handle.slot)
        // Firing, cancelling and clearing all bump the slot's generation, and a reused slot
        // starts from its bumped value, so a matching generation means "pending and live".
        guard slot < generations.count, generations[slot] == handle.generation else { return false }
        generations[slot] &+= 1
        deadCount += 1
        dropDeadTop()
        return true
    }

    /// The earliest pending event, without removing it.
    /// - Complexity: O(1).
    @inlinable
    public var first: ScheduledEvent<Event>? {
        guard let top = heap.first else { return nil }
        return ScheduledEvent(
            time: SimInstant(microseconds: top.time),
            priority: EventPriority(rawValue: UInt8(truncatingIfNeeded: top.key >> 56)),
            event: top.event)
    }

    /// The due time of the earliest pending event.
    @inlinable
    public var firstTime: SimInstant? {
        heap.isEmpty ? nil : SimInstant(microseconds: heap[0].time)
    }

    /// Removes and returns the earliest pending event.
    /// - Complexity: O(log n) amortized.
    @inlinable
    public mutating func popFirst() -> (time: SimInstant, event: Event)? {
        guard !heap.isEmpty else { return nil }
        let top = removeTop()
        // Retire the slot; bumping the generation makes any old handle to it stale.
        generations[Int(top.slot)] &+= 1
        freeSlots.append(top.slot)
        dropDeadTop()
        return (SimInstant(microseconds: top.time), top.event)
    }

    /// Removes every pending event, keeping the storage for reuse.
    public mutating func removeAll() {
        for entry in heap where generations[Int(entry.slot)] == entry.generation {
            generations[Int(entry.slot)] &+= 1
        }
        for entry in heap { freeSlots.append(entry.slot) }
        heap.removeAll(keepingCapacity: true)
        deadCount = 0
    }

    // MARK: - Heap internals

    @inlinable
    mutating func dropDeadTop() {
        while let top = heap.first, generations[Int(top.slot)] != top.generation {
            _ = removeTop()
            freeSlots.append(top.slot)
            deadCount -= 1
        }
    }

    @inlinable
    mutating func removeTop() -> Entry {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return last }
        let top = heap[0]
        siftDown(placing: last)
        return top
    }

    @inlinable
    mutating func siftUp(_ index: Int) {
        heap.withUnsafeMutableBufferPointer { h in
            var child = index
            let moving = h[child]
            while child > 0 {
                let parent = (child - 1) >> 1
                guard moving.precedes(h[parent]) else { break }
                h[child] = h[parent]
                child = parent
            }
            h[child] = moving
        }
    }

    /// Fills the hole at the root with `moving`, moving smaller children up.
    @inlinable
    mutating func siftDown(placing moving: Entry) {
        heap.withUnsafeMutableBufferPointer { h in
            let n = h.count
            var hole = 0
            while true {
                let left = 2 * hole + 1
                guard left < n else { break }
                let right = left + 1
                let child = right < n && h[right].precedes(h[left]) ? right : left
                guard h[child].precedes(moving) else { break }
                h[hole] = h[child]
                hole = child
            }
            h[hole] = moving
        }
    }

    /// Checks the heap order and the bookkeeping. O(n): for tests, not for the hot loop.
    public func checkInvariants() {
        for i in 1..<max(heap.count, 1) {
            precondition(!heap[i].precedes(heap[(i - 1) >> 1]), "heap order broken at index \(i)")
        }
        let dead = heap.filter { generations[Int($0.slot)] != $0.generation }.count
        precondition(dead == deadCount, "dead entries: counted \(deadCount), found \(dead)")
        if let top = heap.first {
            precondition(generations[Int(top.slot)] == top.generation, "top of heap is a cancelled entry")
        }
        precondition(Set(heap.map(\.slot)).count == heap.count, "two heap entries share a slot")
        precondition(Set(freeSlots).isDisjoint(with: heap.map(\.slot)), "a free slot is still in the heap")
        precondition(freeSlots.count + heap.count == generations.count, "slots leaked")
    }
}
