import Testing

@testable import SimEngine

@Suite("Event queue")
struct EventQueueTests {
    @Test func equalTimesLeaveByPriorityThenInsertionOrder() {
        var q = EventQueue<String>()
        let t = SimInstant.after(.seconds(10))
        q.insert("low-1", at: t, priority: .low)
        q.insert("normal-1", at: t)
        q.insert("high-1", at: t, priority: .high)
        q.insert("normal-2", at: t)
        q.insert("earlier", at: .after(.seconds(9)), priority: .last)
        q.insert("high-2", at: t, priority: .high)
        q.insert("low-2", at: t, priority: .low)
        var order: [String] = []
        while let (_, e) = q.popFirst() { order.append(e) }
        #expect(order == ["earlier", "high-1", "high-2", "normal-1", "normal-2", "low-1", "low-2"])
    }

    @Test func manyTiesKeepInsertionOrder() {
        // A heap alone promises no order among equals; the sequence number must.
        var q = EventQueue<Int>()
        for i in 0..<1000 { q.insert(i, at: .after(.seconds(Int64(i % 3)))) }
        var last = [-1, -1, -1]
        var previousTime = SimInstant.start
        while let (time, i) = q.popFirst() {
            #expect(time >= previousTime)
            previousTime = time
            #expect(i > last[i % 3])
            last[i % 3] = i
        }
    }

    @Test func cancelledEventsNeverFire() {
        var q = EventQueue<Int>()
        let a = q.insert(1, at: .after(.seconds(1)))
        q.insert(2, at: .after(.seconds(2)))
        let c = q.insert(3, at: .after(.seconds(3)))
        let cancelledA = q.cancel(a), cancelledC = q.cancel(c)
        #expect(cancelledA && cancelledC)
        #expect(q.count == 1)
        #expect(q.first?.event == 2)
        let popped = q.popFirst()?.event, afterLast = q.popFirst()
        #expect(popped == 2)
        #expect(afterLast == nil)
        q.checkInvariants()
    }

    @Test func cancellingTwiceOrAfterFiringReturnsFalse() {
        var q = EventQueue<Int>()
        let a = q.insert(1, at: .after(.seconds(1)))
        let b = q.insert(2, at: .after(.seconds(2)))
        let first = q.cancel(a), second = q.cancel(a)
        #expect(first && !second)
        let popped = q.popFirst()?.event
        #expect(popped == 2)
        let afterFiring = q.cancel(b)
        #expect(!afterFiring)
    }

    @Test func staleHandleDoesNotCancelTheEventThatReusedItsSlot() {
        var q = EventQueue<Int>()
        let old = q.insert(1, at: .after(.seconds(1)))
        _ = q.popFirst()
        let new = q.insert(2, at: .after(.seconds(2)))
        #expect(new.slot == old.slot, "the test needs the slot to be reused")
        let cancelledStale = q.cancel(old)
        #expect(!cancelledStale)
        let popped = q.popFirst()?.event
        #expect(popped == 2)
    }

    @Test func removeAllLeavesAnEmptyReusableQueue() {
        var q = EventQueue<Int>()
        let hs = (0..<10).map { q.insert($0, at: .after(.seconds(Int64($0)))) }
        q.cancel(hs[3])
        q.removeAll()
        let emptied = q.isEmpty
        #expect(emptied)
        let cancelledCleared = q.cancel(hs[5])
        #expect(!cancelledCleared)
        q.checkInvariants()
        q.insert(42, at: .start)
        let popped = q.popFirst()?.event
        #expect(popped == 42)
    }

    /// The queue owns its entries by hand (it cannot be copied): each event is destroyed
    /// exactly once, when it is popped, when a cancelled entry is dropped, by `removeAll`, or
    /// when the queue goes.
    @Test func everyEventIsDestroyedExactlyOnce() {
        final class Counter: @unchecked Sendable { var alive = 0 }
        final class Token {
            let counter: Counter
            init(_ c: Counter) { counter = c; c.alive += 1 }
            deinit { counter.alive -= 1 }
        }
        let counter = Counter()
        do {
            var q = EventQueue<Token>(capacity: 2)
            var handles: [EventHandle] = []
            for i in 0..<40 { handles.append(q.insert(Token(counter), at: .after(.seconds(Int64(i))))) }  // grows
            #expect(counter.alive == 40)
            _ = q.popFirst()
            #expect(counter.alive == 39, "a popped event is the caller's, and gone with it")
            for h in handles[1..<30] { q.cancel(h) }  // drops the dead at the top, then purges
            q.checkInvariants()
            #expect(counter.alive == 10, "cancelled entries are destroyed once dropped or purged")
            q.removeAll()
            #expect(counter.alive == 0)
            for i in 0..<5 { q.insert(Token(counter), at: .after(.seconds(Int64(i)))) }
        }
        #expect(counter.alive == 0, "the queue's end destroys what it still holds")
    }

    @Test func growsFarBeyondItsInitialCapacity() {
        var q = EventQueue<Int>(capacity: 1)
        for i in (0..<10_000).reversed() { q.insert(i, at: .after(.seconds(Int64(i)))) }
        q.checkInvariants()
        var expected = 0
        while let (_, e) = q.popFirst() {
            #expect(e == expected)
            expected += 1
        }
        #expect(expected == 10_000)
    }

    /// A model that reschedules one far-off event at every step leaves the heap mostly dead;
    /// the queue then rebuilds itself without the dead, and pops in the same order.
    @Test(arguments: 1...5)
    func purgingTheDeadKeepsThePopOrder(seed: UInt64) {
        var rng = SplitMixForTests(seed: seed)
        var q = EventQueue<Int>()
        var entries: [(time: Int64, id: Int)] = []
        for id in 0..<100 {
            let time = Int64(rng.next() % 1_000)
            q.insert(id, at: SimInstant(microseconds: time))
            entries.append((time, id))
        }
        // The far-off event, moved at every step (as a battery level is).
        var far = q.insert(-1, at: SimInstant(microseconds: 1_000_000))
        var largest = 0
        for step in 1...1_000 {
            q.cancel(far)
            far = q.insert(-1 - step, at: SimInstant(microseconds: 1_000_000 + Int64(rng.next() % 1_000)))
            largest = max(largest, q.b.count)
        }
        q.checkInvariants()
        #expect(largest <= 2 * 101 + 1, "dead entries are purged once they outnumber the live")
        let b = q.b
        let farTime = (0..<b.count).map { b.heap[$0] }.first { $0.event == -1001 }!.time
        let expected =
            entries.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element.id) + [-1001]
        var got: [Int] = [], lastTime: Int64 = 0
        while let (t, e) = q.popFirst() {
            got.append(e)
            lastTime = t.microseconds
        }
        #expect(got == expected)
        #expect(lastTime == farTime)
    }

    /// Random interleavings of insert, cancel and pop agree with a sorted reference list.
    @Test(arguments: 1...20)
    func agreesWithAReferenceModel(seed: UInt64) {
        var rng = SplitMixForTests(seed: seed)
        var q = EventQueue<Int>()
        // Reference: (time, priority, sequence, id) of pending events.
        var reference: [(Int64, UInt8, Int, Int)] = []
        var handles: [Int: EventHandle] = [:]
        var nextID = 0
        var now: Int64 = 0
        for _ in 0..<2_000 {
            switch rng.next() % 10 {
            case 0..<5:
                let time = now + Int64(rng.next() % 50)
                let priority = UInt8(truncatingIfNeeded: rng.next() % 3 * 64)
                handles[nextID] = q.insert(nextID, at: SimInstant(microseconds: time), priority: EventPriority(rawValue: priority))
                reference.append((time, priority, nextID, nextID))
                nextID += 1
            case 5..<7:
                guard !handles.isEmpty else { continue }
                let id = handles.keys.sorted()[Int(rng.next() % UInt64(handles.count))]
                let wasPending = reference.contains { $0.3 == id }
                let cancelled = q.cancel(handles[id]!)
                #expect(cancelled == wasPending)
                reference.removeAll { $0.3 == id }
            default:
                reference.sort { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
                let expected = reference.first
                let got = q.popFirst()
                #expect(got?.event == expected?.3)
                if let e = expected {
                    #expect(got?.time.microseconds == e.0)
                    now = e.0
                    reference.removeFirst()
                }
            }
            #expect(q.count == reference.count)
        }
        q.checkInvariants()
    }
}

/// A tiny deterministic generator so engine tests need no GSL.
struct SplitMixForTests: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
