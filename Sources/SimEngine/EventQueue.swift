/// The priority of an event among events at the same instant; lower fires first.
///
/// Priority only breaks ties in time; among equal time and priority, events fire in the
/// order they were scheduled.
public struct EventPriority: Hashable, Comparable, Sendable {
    /// The priority as a number; lower fires first.
    public var rawValue: UInt8
    /// The priority `rawValue`.
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    // Computed and inlinable, not stored `static let`s: those are globals that every access
    // from another module reaches through an accessor with a once-check, per event.
    /// Before every other event at the same instant.
    @inlinable public static var first: EventPriority { EventPriority(rawValue: 0) }
    /// Before `normal` events.
    @inlinable public static var high: EventPriority { EventPriority(rawValue: 64) }
    /// The default.
    @inlinable public static var normal: EventPriority { EventPriority(rawValue: 128) }
    /// After `normal` events.
    @inlinable public static var low: EventPriority { EventPriority(rawValue: 192) }
    /// After every other event at the same instant.
    @inlinable public static var last: EventPriority { EventPriority(rawValue: 255) }

    /// Whether `a` fires before `b` at the same instant.
    @inlinable public static func < (a: EventPriority, b: EventPriority) -> Bool { a.rawValue < b.rawValue }
}

/// Names one scheduled event so that it can be cancelled.
///
/// A handle stays safe after its event fired or was cancelled: cancelling it then does
/// nothing and returns `false`, even if the queue has reused its storage for a newer event.
public struct EventHandle: Hashable, Sendable {
    @usableFromInline let slot: UInt32
    /// The event's ordering key, unique per queue; the slot holds it while the event is live.
    @usableFromInline let key: UInt64
    @inlinable init(slot: UInt32, key: UInt64) {
        self.slot = slot
        self.key = key
    }
}

/// An event with the instant it is due.
public struct ScheduledEvent<Event> {
    /// When it is due.
    public var time: SimInstant
    /// Its place among events due at the same instant.
    public var priority: EventPriority
    /// What happens.
    public var event: Event

    /// `event`, due at `time` with `priority`.
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
/// order and equal-time events leave in (priority, insertion) order (docs/sources.md §11).
///
/// Cancellation is lazy. Each pending event owns a slot that records its key while it is
/// live; cancelling clears the slot in O(1), and the dead entry is dropped when it reaches
/// the top, or all dead entries at once when they come to outnumber the live ones. The top of the heap is always live, which keeps `first` O(1) and non-mutating.
///
/// Storage: the heap, the slot table and the free-slot stack live in raw buffers the queue owns
/// outright. The queue cannot be copied (`~Copyable`), so an operation costs no uniqueness
/// check, no bounds checks and no dynamic exclusivity checks. The buffers grow to the peak
/// number of pending events and are then reused, so a steady-state simulation does not
/// allocate per event. (The first version used three `ContiguousArray`s; callgrind showed
/// their checks and an un-inlined `popLast` as a quarter of the hold model's instructions.
/// The second kept the buffers in a class, copied on write: one uniqueness check per
/// operation, about 2% of a phone simulation's instructions.)
public struct EventQueue<Event>: ~Copyable {
    @usableFromInline
    struct Entry {
        @usableFromInline var time: Int64
        /// priority << 56 | sequence
        @usableFromInline var key: UInt64
        /// The event before the slot: an event of up to 12 bytes (an enum with a word of
        /// payload, say) then shares the slot's word, and an entry is 32 bytes, not 40, to move
        /// at every level of the heap.
        @usableFromInline var event: Event
        @usableFromInline var slot: UInt32

        @inlinable
        init(time: Int64, key: UInt64, slot: UInt32, event: Event) {
            self.time = time
            self.key = key
            self.slot = slot
            self.event = event
        }

        @inlinable
        func precedes(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && key < other.key)
        }
    }

    /// The queue's buffers and counters, a plain struct stored in the queue: stored `var`s of
    /// a class would pay a dynamic exclusivity check on every access, which callgrind showed
    /// costing more than the heap itself.
    @usableFromInline
    struct Buffers {
        @usableFromInline var heap: UnsafeMutablePointer<Entry>
        @usableFromInline var count = 0
        @usableFromInline var capacity: Int
        /// Per slot: the key of the live event using it, or `vacant`.
        @usableFromInline var slotKeys: UnsafeMutablePointer<UInt64>
        @usableFromInline var slotCount = 0
        @usableFromInline var freeSlots: UnsafeMutablePointer<UInt32>
        @usableFromInline var freeCount = 0
        /// Cancelled entries still in the heap.
        @usableFromInline var deadCount = 0
        @usableFromInline var nextSequence: UInt64 = 0

        /// No live key equals this: sequences stay below 2^56 - 1.
        @usableFromInline static var vacant: UInt64 { .max }

        @inlinable
        init(capacity: Int) {
            self.capacity = max(capacity, 4)
            heap = .allocate(capacity: self.capacity)
            // Slots never outnumber heap entries, so the slot buffers share the capacity.
            slotKeys = .allocate(capacity: self.capacity)
            freeSlots = .allocate(capacity: self.capacity)
        }

        @inlinable
        func release() {
            heap.deinitialize(count: count)
            heap.deallocate()
            slotKeys.deallocate()
            freeSlots.deallocate()
        }

        @usableFromInline @inline(never)
        mutating func grow() {
            let newCapacity = capacity * 2
            let newHeap = UnsafeMutablePointer<Entry>.allocate(capacity: newCapacity)
            newHeap.moveInitialize(from: heap, count: count)
            heap.deallocate()
            heap = newHeap
            let newKeys = UnsafeMutablePointer<UInt64>.allocate(capacity: newCapacity)
            newKeys.moveInitialize(from: slotKeys, count: slotCount)
            slotKeys.deallocate()
            slotKeys = newKeys
            let newFree = UnsafeMutablePointer<UInt32>.allocate(capacity: newCapacity)
            newFree.moveInitialize(from: freeSlots, count: freeCount)
            freeSlots.deallocate()
            freeSlots = newFree
            capacity = newCapacity
        }

        @inlinable
        func isLive(_ e: Entry) -> Bool { slotKeys[Int(e.slot)] == e.key }

        /// Moves one entry from slot `from` to the vacant slot `to`. Not `moveInitialize(from:
        /// count: 1)`, which first works out whether the two ranges overlap (nine of the 35
        /// instructions per level of the heap, in the disassembly). Index arithmetic in the heap
        /// wraps (`&+`, `&*`) since it stays far below `Int.max` (the count fits in memory):
        /// the overflow checks were another few per level.
        @inlinable @inline(__always)
        func shift(from: Int, to: Int) {
            (heap + to).initialize(to: (heap + from).move())
        }

        @inlinable
        func siftUp(_ moving: Entry, from index: Int) {
            var child = index
            while child > 0 {
                let parent = (child &- 1) >> 1
                guard moving.precedes(heap[parent]) else { break }
                shift(from: parent, to: child)
                child = parent
            }
            (heap + child).initialize(to: moving)
        }

        /// Removes the root entry (whose value the caller has already moved out) by filling
        /// the hole with the last entry.
        ///
        /// Bottom-up (Floyd): the hole first walks down to a leaf along the smaller child, one
        /// comparison per level, and the last entry then sifts up from there. The last entry
        /// is usually large, so it rarely climbs far; this saves about a comparison per level
        /// over the textbook sift-down.
        @inlinable
        mutating func fillRootHole() {
            count -= 1
            guard count > 0 else { return }
            let moving = (heap + count).move()
            var hole = 0
            while true {
                let left = 2 &* hole &+ 1
                guard left < count else { break }
                let right = left &+ 1
                let child = right < count && heap[right].precedes(heap[left]) ? right : left
                shift(from: child, to: hole)
                hole = child
            }
            siftUp(moving, from: hole)
        }

        /// Removes every cancelled entry and rebuilds the heap (Floyd's bottom-up heapify,
        /// O(n)). Called when the dead outnumber the live: a model that reschedules one
        /// far-off event at every step (a battery level, say) otherwise buries the few live
        /// entries under hundreds of dead ones and every pop pays for their depth. Pop order
        /// is (time, key), a total order, so rebuilding changes nothing observable.
        @usableFromInline @inline(never)
        mutating func purgeDead() {
            var kept = 0
            for i in 0..<count {
                let e = (heap + i).move()
                if isLive(e) {
                    (heap + kept).initialize(to: e)
                    kept += 1
                } else {
                    freeSlots[freeCount] = e.slot
                    freeCount += 1
                }
            }
            count = kept
            deadCount = 0
            var i = count / 2 - 1
            while i >= 0 {
                let moving = (heap + i).move()
                var hole = i
                while true {
                    let left = 2 &* hole &+ 1
                    guard left < count else { break }
                    let right = left &+ 1
                    let child = right < count && heap[right].precedes(heap[left]) ? right : left
                    guard heap[child].precedes(moving) else { break }
                    shift(from: child, to: hole)
                    hole = child
                }
                (heap + hole).initialize(to: moving)
                i -= 1
            }
        }

        /// Drops cancelled entries from the top, so the root is live (or the heap empty).
        @inlinable
        mutating func dropDeadTop() {
            while deadCount > 0, count > 0, !isLive(heap[0]) {
                let dead = heap.move()
                fillRootHole()
                freeSlots[freeCount] = dead.slot
                freeCount += 1
                deadCount -= 1
            }
        }
    }

    @usableFromInline var b: Buffers

    /// An empty queue with room for `capacity` pending events before it grows.
    @inlinable
    public init(capacity: Int = 0) {
        b = Buffers(capacity: capacity)
    }

    deinit { b.release() }

    /// The number of pending (scheduled, not cancelled, not yet popped) events.
    @inlinable public var count: Int { b.count - b.deadCount }
    /// Whether no event is pending.
    @inlinable public var isEmpty: Bool { count == 0 }

    /// Adds an event due at `time`.
    /// - Complexity: O(log n); amortized O(1) extra when the storage grows.
    @inlinable
    @discardableResult
    public mutating func insert(_ event: Event, at time: SimInstant, priority: EventPriority = .normal) -> EventHandle {
        precondition(b.nextSequence < (1 << 56) - 1, "event queue: more than 2^56 events scheduled")
        let key = UInt64(priority.rawValue) << 56 | b.nextSequence
        b.nextSequence &+= 1
        if b.count == b.capacity { b.grow() }
        let slot: UInt32
        if b.freeCount > 0 {
            b.freeCount -= 1
            slot = b.freeSlots[b.freeCount]
        } else {
            slot = UInt32(b.slotCount)
            b.slotCount += 1
        }
        b.slotKeys[Int(slot)] = key
        b.count += 1
        b.siftUp(Entry(time: time.microseconds, key: key, slot: slot, event: event), from: b.count - 1)
        return EventHandle(slot: slot, key: key)
    }

    /// Cancels a pending event. Returns `false` if it already fired or was cancelled.
    /// - Complexity: O(1) amortized; the entry is discarded when it reaches the top.
    @inlinable
    @discardableResult
    public mutating func cancel(_ handle: EventHandle) -> Bool {
        // Firing and cancelling vacate the slot, and a reused slot holds a newer key, so a
        // matching key means "pending and live".
        guard Int(handle.slot) < b.slotCount, b.slotKeys[Int(handle.slot)] == handle.key else { return false }
        b.slotKeys[Int(handle.slot)] = Buffers.vacant
        b.deadCount += 1
        b.dropDeadTop()
        if b.deadCount > 64, 2 * b.deadCount > b.count { b.purgeDead() }
        return true
    }

    /// The earliest pending event, without removing it.
    /// - Complexity: O(1).
    @inlinable
    public var first: ScheduledEvent<Event>? {
        guard b.count > 0 else { return nil }
        let top = b.heap[0]
        return ScheduledEvent(
            time: SimInstant(microseconds: top.time),
            priority: EventPriority(rawValue: UInt8(truncatingIfNeeded: top.key >> 56)),
            event: top.event)
    }

    /// Takes the ordering key the next `insert` at `priority` would have been given, so that
    /// an event kept outside the queue (a `Simulator` timer) orders exactly like one inside.
    @inlinable
    mutating func takeKey(priority: EventPriority) -> UInt64 {
        precondition(b.nextSequence < (1 << 56) - 1, "event queue: more than 2^56 events scheduled")
        defer { b.nextSequence &+= 1 }
        return UInt64(priority.rawValue) << 56 | b.nextSequence
    }

    /// The earliest pending event's time and key, its place in the total order.
    @inlinable
    var firstOrder: (time: Int64, key: UInt64)? {
        guard b.count > 0 else { return nil }
        return (b.heap[0].time, b.heap[0].key)
    }

    /// The due time of the earliest pending event.
    @inlinable
    public var firstTime: SimInstant? {
        return b.count > 0 ? SimInstant(microseconds: b.heap[0].time) : nil
    }

    /// Removes and returns the earliest pending event.
    /// - Complexity: O(log n) amortized.
    @inlinable
    public mutating func popFirst() -> (time: SimInstant, event: Event)? {
        guard b.count > 0 else { return nil }
        let top = b.heap.move()
        b.fillRootHole()
        b.slotKeys[Int(top.slot)] = Buffers.vacant
        b.freeSlots[b.freeCount] = top.slot
        b.freeCount += 1
        // Most simulations cancel rarely: skip the call when nothing is dead.
        if b.deadCount > 0 { b.dropDeadTop() }
        return (SimInstant(microseconds: top.time), top.event)
    }

    /// Removes every pending event, keeping the storage for reuse.
    public mutating func removeAll() {
        for i in 0..<b.count {
            let e = (b.heap + i).move()
            b.slotKeys[Int(e.slot)] = Buffers.vacant
            b.freeSlots[b.freeCount] = e.slot
            b.freeCount += 1
        }
        b.count = 0
        b.deadCount = 0
    }

    /// Checks the heap order and the bookkeeping. O(n): for tests, not for the hot loop.
    public func checkInvariants() {
        let s = b
        let entries = (0..<s.count).map { s.heap[$0] }
        for i in entries.indices.dropFirst() {
            precondition(!entries[i].precedes(entries[(i - 1) >> 1]), "heap order broken at index \(i)")
        }
        let dead = entries.filter { !s.isLive($0) }.count
        precondition(dead == s.deadCount, "dead entries: counted \(s.deadCount), found \(dead)")
        if let top = entries.first { precondition(s.isLive(top), "top of heap is a cancelled entry") }
        let used = entries.map(\.slot)
        let free = (0..<s.freeCount).map { s.freeSlots[$0] }
        precondition(Set(used).count == used.count, "two heap entries share a slot")
        precondition(Set(free).isDisjoint(with: used), "a free slot is still in the heap")
        precondition(free.count + used.count == s.slotCount, "slots leaked")
        for slot in free { precondition(s.slotKeys[Int(slot)] == Buffers.vacant, "a free slot holds a key") }
    }
}
