/// Per-task state by task id, keeping only the states still needed, so a run's memory and a
/// compaction's work do not grow with the number of tasks it has seen: ended tasks are dropped
/// in batches by `compact`, which walks the kept states only. Ids stay valid for live tasks;
/// the id-to-slot map covers the ids from the oldest kept one on, 4 bytes each.
///
/// The states live in one buffer reached through addressors (`unsafeAddress`), so
/// `tasks[i].field` is a load or a store at an offset. With an array and `_read`/`_modify`
/// accessors the compiler often copied a whole state (hundreds of bytes, its strings
/// retained) to read a few fields: several copies per task, seen with `objdump`.
///
/// The store cannot be copied (`~Copyable`), so it owns its buffer outright: no copy on
/// write, hence no uniqueness check on each of the dozens of writes per task, which were 4%
/// of a run's instructions (callgrind). The compiler rejects any copy of the store, or of
/// the simulation that holds it.
struct TaskStore<State>: ~Copyable {
    /// `stored` initialized states from `base`, room for `capacity`, in id order; `ids` holds
    /// each one's id.
    private var base: UnsafeMutablePointer<State>
    private var ids: UnsafeMutablePointer<Int>
    private var stored = 0
    private var capacity: Int
    /// For each id from `slotBase` to `count` (room for `slotCapacity`), its index in the
    /// buffer, or -1 once dropped; every id below `slotBase` is dropped. A buffer of its own
    /// too: an array's bounds check and the check that the state is kept were about 8% of a
    /// run (every field access pays them; the ids come only from the simulation, so debug
    /// builds check them).
    private var slot: UnsafeMutablePointer<Int32>
    private var slotBase = 0
    private(set) var count = 0
    private var slotCapacity: Int
    /// Ended tasks since the last compaction (the caller counts them).
    var endedSinceCompaction = 0

    init(capacity: Int = 1024) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        ids = .allocate(capacity: self.capacity)
        slotCapacity = self.capacity
        slot = .allocate(capacity: slotCapacity)
    }

    deinit {
        base.deinitialize(count: stored)
        base.deallocate()
        ids.deallocate()
        slot.deallocate()
    }

    private mutating func grow() {
        let bigger = UnsafeMutablePointer<State>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: stored)
        base.deallocate()
        base = bigger
        let biggerIDs = UnsafeMutablePointer<Int>.allocate(capacity: capacity * 2)
        biggerIDs.moveInitialize(from: ids, count: stored)
        ids.deallocate()
        ids = biggerIDs
        capacity *= 2
    }

    private mutating func growSlots() {
        let bigger = UnsafeMutablePointer<Int32>.allocate(capacity: slotCapacity * 2)
        bigger.moveInitialize(from: slot, count: count - slotBase)
        slot.deallocate()
        slot = bigger
        slotCapacity *= 2
    }

    mutating func append(_ state: consuming State) {
        if stored == capacity { grow() }
        if count - slotBase == slotCapacity { growSlots() }
        slot[count - slotBase] = Int32(stored)
        ids[stored] = count
        count += 1
        (base + stored).initialize(to: state)
        stored += 1
    }

    subscript(id: Int) -> State {
        @inline(__always) unsafeAddress {
            assert(isKept(id) && Int(slot[id - slotBase]) < stored, "task \(id) is not kept")
            return UnsafePointer(base + Int(slot[id - slotBase]))
        }
        @inline(__always) unsafeMutableAddress {
            assert(isKept(id) && Int(slot[id - slotBase]) < stored, "task \(id) is not kept")
            return base + Int(slot[id - slotBase])
        }
    }

    /// Whether the state of `id` is still kept.
    func isKept(_ id: Int) -> Bool { id >= slotBase && id < count && slot[id - slotBase] >= 0 }

    /// The ids whose states are kept, ascending.
    var keptIDs: [Int] { Array(UnsafeBufferPointer(start: ids, count: stored)) }

    /// Whether enough tasks ended since the last compaction to make one worth its moves: half
    /// the kept states (at least 1,024), or a quarter of them once the buffer is nearly full,
    /// so that it need not grow (a grow copies every state: 10 M instructions of a 3-person
    /// fleet, callgrind).
    var wantsCompaction: Bool {
        endedSinceCompaction >= max(1024, stored / 2) || (capacity - stored <= capacity / 16 && endedSinceCompaction >= stored / 4)
    }

    /// Drops the states `keep` says are no longer needed, moving the others down in place, in
    /// id order; then the slot map starts at the oldest id kept. Its work is the kept states'
    /// and the slot map's window, not every id ever handed out.
    mutating func compact(keeping keep: (Int, borrowing State) -> Bool) {
        var kept = 0
        for from in 0..<stored {
            let id = ids[from]
            // States are in id order (appends go last, compaction keeps the order), so the
            // place a state moves to is always free.
            if keep(id, base[from]) {
                if from != kept {
                    (base + kept).moveInitialize(from: base + from, count: 1)
                    ids[kept] = id
                }
                slot[id - slotBase] = Int32(kept)
                kept += 1
            } else {
                (base + from).deinitialize(count: 1)
                slot[id - slotBase] = -1
            }
        }
        stored = kept
        endedSinceCompaction = 0
        let oldest = kept > 0 ? ids[0] : count
        if oldest > slotBase {
            (slot).moveInitialize(from: slot + (oldest - slotBase), count: count - oldest)
            slotBase = oldest
        }
    }
}
