import SimEngine
import Testing

@Suite("Short arrays")
struct ShortArraysTests {
    /// Both paths (popping up to four, the standard removal above) empty the list and keep
    /// its storage, so the next appends do not allocate.
    @Test(arguments: [0, 1, 2, 4, 5, 100])
    func removeAllEmptiesAndKeepsTheStorage(count: Int) {
        var list = Array(0..<count)
        list.reserveCapacity(128)
        let capacity = list.capacity
        list.removeAllKeepingCapacity()
        #expect(list.isEmpty)
        #expect(list.capacity == capacity)
        list.append(7)
        #expect(list == [7])
    }

    /// Every position of lists of one to five elements: the same element comes out and the
    /// same list is left as with the standard removals.
    @Test func quickRemovalsEqualTheStandardOnes() {
        for n in 1...5 {
            for i in 0..<n {
                var quick = Array(0..<n), standard = quick
                #expect(quick.removeQuickly(at: i) == standard.remove(at: i))
                #expect(quick == standard, "n \(n), index \(i)")
            }
            var quick = Array(0..<n), standard = quick
            #expect(quick.removeFirstQuickly() == standard.removeFirst())
            #expect(quick == standard, "n \(n), first")
        }
    }
}
