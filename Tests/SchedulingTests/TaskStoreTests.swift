@testable import Scheduling
import Testing

/// The task store: states by id in one buffer, copied on write, compacted in place.
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

    @Test func aCopyIsIndependentOfTheOriginal() {
        let original = store(10)
        var copy = original
        copy[4].name = "changed"
        copy.compact { id, _ in id != 5 }
        #expect(original[4].name.hasPrefix("task number 4") && copy[4].name == "changed")
        #expect(original.isKept(5) && !copy.isKept(5))
        #expect(original.keptIDs.count == 10 && copy.keptIDs.count == 9)
    }
}
