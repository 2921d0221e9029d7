import Testing

@testable import Scheduling

/// Counts the tokens alive, to check that a store that owns its elements by hand destroys
/// each exactly once.
final class Counter: @unchecked Sendable { var alive = 0 }
final class Token {
    let counter: Counter
    init(_ c: Counter) { counter = c; c.alive += 1 }
    deinit { counter.alive -= 1 }
}
struct Held { var token: Token; var done = false }

/// The task store: states by id in one buffer it owns, compacted in place.
@Suite("Task store")
struct TaskStoreTests {
    struct State {
        var name: String
        var done = false
    }

    func store(_ n: Int) -> TaskStore<State> {
        var s = TaskStore<State>()
        for i in 0..<n { s.append(State(name: "task number \(i) with a name too long to be inline")) }
        return s
    }

    @Test func compactionDropsEndedStatesAndKeepsEveryOtherIdValid() {
        var s = store(3000)  // past the initial capacity, so the buffer grows
        for i in stride(from: 0, to: 3000, by: 3) { s[i].done = true }
        s.compact { _, state in !state.done }
        #expect(s.count == 3000)
        #expect(s.keptIDs.count == 2000 && s.keptIDs.allSatisfy { $0 % 3 != 0 })
        for i in s.keptIDs { #expect(s[i].name == "task number \(i) with a name too long to be inline") }
        #expect(!s.isKept(0) && s.isKept(1))
        s.append(State(name: "late"))
        #expect(s[3000].name == "late" && s.keptIDs.last == 3000)
        s.compact { id, _ in id > 2990 }
        #expect(s.keptIDs == [2992, 2993, 2995, 2996, 2998, 2999, 3000], "2991, 2994 and 2997 went in the first compaction")
        #expect(s[2998].name.hasPrefix("task number 2998"))
    }

    /// A long run: many rounds of tasks, a few living long. The slot map follows the oldest
    /// kept id (its window slides and grows only with the span of ids alive), and every kept
    /// id reads its own state through all of it.
    @Test func manyCompactionsKeepLongLivedStatesAndSlideTheMap() {
        var s = TaskStore<State>(capacity: 16)
        var alive = Set<Int>()
        for round in 0..<40 {
            for _ in 0..<500 {
                let id = s.count
                s.append(State(name: "t\(id)"))
                // One task in 250 lives 10 rounds; the rest end within their round.
                if id % 250 == 0 { alive.insert(id) }
            }
            alive = alive.filter { $0 >= (round - 10) * 500 }
            let (keep, recent) = (alive, s.count - 20)
            s.compact { id, _ in keep.contains(id) || id >= recent }
            for id in alive { #expect(s.isKept(id) && s[id].name == "t\(id)") }
        }
        #expect(s.keptIDs == s.keptIDs.sorted() && !s.isKept(0) && !s.isKept(s.count))
        #expect(s.keptIDs.count == alive.count + 20 - alive.filter { $0 >= s.count - 20 }.count)
    }

    /// The store owns its states by hand (it cannot be copied): each state is destroyed
    /// exactly once, by a compaction that drops it or when the store goes, including the
    /// states moved by a growth or a compaction.
    @Test func everyStateIsDestroyedExactlyOnce() {
        let counter = Counter()
        do {
            var s = TaskStore<Held>(capacity: 16)
            for _ in 0..<100 { s.append(Held(token: Token(counter))) }  // grows three times
            #expect(counter.alive == 100)
            for i in stride(from: 0, to: 100, by: 2) { s[i].done = true }
            s.compact { _, state in !state.done }
            #expect(counter.alive == 50, "the dropped states are destroyed at once")
            s[1].token = Token(counter)  // a write through the addressor replaces one in place
            #expect(counter.alive == 50)
            s.append(Held(token: Token(counter)))
            #expect(counter.alive == 51 && s.keptIDs.count == 51)
        }
        #expect(counter.alive == 0, "the store's end destroys what it still holds")
    }
}

/// The simulation's fixed per-radio and per-app state.
@Suite("Owned array")
struct OwnedArrayTests {
    @Test func writesLandInPlaceAndEveryElementIsDestroyedOnce() {
        let counter = Counter()
        do {
            var a = OwnedArray((0..<5).map { _ in Held(token: Token(counter)) })
            #expect(a.count == 5 && a.indices == 0..<5 && counter.alive == 5)
            a[3].done = true
            a[1] = Held(token: Token(counter))  // replaces, destroying the old element
            #expect(counter.alive == 5)
            #expect(a.indices.filter { a[$0].done } == [3])
        }
        #expect(counter.alive == 0, "the array's end destroys every element")
        let empty = OwnedArray<Held>([])
        #expect(empty.count == 0 && empty.indices.isEmpty)
    }
}
