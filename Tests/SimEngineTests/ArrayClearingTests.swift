import Testing
import SimEngine

@Suite("Array clearing")
struct ArrayClearingTests {
    /// Both paths (popping up to four, the standard removal above) empty the list and keep
    /// its storage, so the next appends do not allocate.
    @Test(arguments: [0, 1, 2, 4, 5, 100])
    func emptiesAndKeepsTheStorage(count: Int) {
        var list = Array(0..<count)
        list.reserveCapacity(128)
        let capacity = list.capacity
        list.removeAllKeepingCapacity()
        #expect(list.isEmpty)
        #expect(list.capacity == capacity)
        list.append(7)
        #expect(list == [7])
    }
}
