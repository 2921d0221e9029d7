/// A set of task ids, a bit per id: a run numbers its tasks densely from 0, so this costs a
/// bit per task where a `Set<Int>`'s hashing was 1.6% of an ios run (callgrind).
struct TaskIDBits: Sendable {
    private var words: [UInt64] = []

    mutating func insert(_ id: Int) {
        let w = id >> 6
        if w >= words.count { words += repeatElement(0, count: w + 1 - words.count) }
        words[w] |= 1 << UInt64(id & 63)
    }

    /// Removes `id`; whether it was in the set.
    mutating func remove(_ id: Int) -> Bool {
        let w = id >> 6, bit: UInt64 = 1 << UInt64(id & 63)
        guard w < words.count, words[w] & bit != 0 else { return false }
        words[w] &= ~bit
        return true
    }

    func contains(_ id: Int) -> Bool {
        let w = id >> 6
        return w < words.count && words[w] & (1 << UInt64(id & 63)) != 0
    }
}
