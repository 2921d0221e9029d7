import SimRandom
import Testing

@testable import Policies
@testable import Scheduling

@Suite("Task id bits")
struct TaskIDBitsTests {
    /// Random inserts and removes, ids across several words and far past the last one, agree
    /// with `Set<Int>` at every step.
    @Test func actsAsASetOfIDs() {
        var bits = TaskIDBits(), set = Set<Int>()
        var rng = try! RandomStream(seed: 7)  // seeded: a failure repeats
        #expect(!bits.remove(5) && !bits.contains(5_000), "an empty set holds nothing, however far the id")
        for _ in 0..<20_000 {
            let id = Int.random(in: 0..<700, using: &rng)
            if Bool.random(using: &rng) {
                bits.insert(id)
                set.insert(id)
            } else {
                #expect(bits.remove(id) == (set.remove(id) != nil))
            }
            #expect(bits.contains(id) == set.contains(id))
        }
        for id in 0..<800 { #expect(bits.contains(id) == set.contains(id)) }
    }
}
