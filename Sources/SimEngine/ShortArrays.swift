/// Removals from the short lists a model changes at every step (the requests a decision
/// starts, a radio's queue and its users, an app's pending requests), done the cheap way when
/// the list allows it.
///
/// The standard removals go through generic paths that cost several times the work for a
/// list of one or two elements (callgrind, standalone tests of 100,000 calls, a 40-byte
/// element): `removeAll(keepingCapacity: true)` of one element about 100 instructions, popping
/// it about 30; `removeFirst()` of the only element about 200 and `remove(at:)` of the last
/// about 85, `removeLast()` about 35. The results are the same; only the path differs.
/// Package-level: the standard library type is not bgsim's to extend for its users.
extension Array {
    /// Removes every element and keeps the storage, like `removeAll(keepingCapacity: true)`.
    /// Lists longer than a few elements take the standard path, which does not grow with the
    /// count for plain values.
    @inlinable
    package mutating func removeAllKeepingCapacity() {
        if count > 4 {
            removeAll(keepingCapacity: true)
        } else {
            while !isEmpty { removeLast() }
        }
    }

    /// `remove(at:)`, through `removeLast()` when `index` is the last.
    @inlinable
    @discardableResult
    package mutating func removeQuickly(at index: Int) -> Element {
        index == count - 1 ? removeLast() : remove(at: index)
    }

    /// `removeFirst()`, through `removeLast()` when the list has one element.
    @inlinable
    @discardableResult
    package mutating func removeFirstQuickly() -> Element {
        count == 1 ? removeLast() : removeFirst()
    }
}
