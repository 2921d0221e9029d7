/// A fixed number of elements in one buffer the value owns outright: it cannot be copied
/// (`~Copyable`), so a write needs no copy-on-write check, and `a[i].field` is a load or a
/// store at an offset (addressors, as in `TaskStore`).
///
/// For the simulation's per-radio and per-app state, written several times per event: as
/// arrays, their uniqueness checks on every write were a few percent of a run's
/// instructions (callgrind).
struct OwnedArray<Element>: ~Copyable {
    private let base: UnsafeMutablePointer<Element>
    let count: Int

    init(_ elements: [Element]) {
        count = elements.count
        base = .allocate(capacity: max(count, 1))
        for (i, e) in elements.enumerated() { (base + i).initialize(to: e) }
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var indices: Range<Int> { 0..<count }

    /// Indices come only from the simulation's own code; debug builds check them.
    subscript(i: Int) -> Element {
        @inline(__always) unsafeAddress {
            assert(i >= 0 && i < count, "index \(i) out of 0..<\(count)")
            return UnsafePointer(base + i)
        }
        @inline(__always) unsafeMutableAddress {
            assert(i >= 0 && i < count, "index \(i) out of 0..<\(count)")
            return base + i
        }
    }
}
