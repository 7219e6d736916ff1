/// The engine's slot array, which can note the slots written to since it was last asked
/// (for a persistent store that writes only what changed).
///
/// Every write through the subscript marks its slot while tracking is on. The recency links live
/// beside the entries (in `EntryStore`), so a move in the recency lists changes only the moved
/// entry's recency stamp, not its neighbours' rows.
struct EntrySlots: RandomAccessCollection {
    private var storage: [Entry] = []
    /// Slots marked since the last `takeMarked()`, each once.
    private var marked: [Int32] = []
    /// Slots whose recency stamp alone was set (`setRecency`) since the last `takeMarked()`;
    /// repeats allowed, bounded by the moves between two takes.
    private var touched: [Int32] = []
    /// Whether writes mark their slot.
    var tracking = false

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { storage.count }
    // Spelled out so that an unoptimized build (the tests, whose invariant checks walk every
    // slot after each operation) does not count and step through generic defaults.
    var count: Int { storage.count }
    func index(after i: Int) -> Int { i + 1 }
    func index(before i: Int) -> Int { i - 1 }

    subscript(i: Int) -> Entry {
        // Borrowed in place: a read of one field (`slots[i].key`) copies neither the entry nor
        // its references (a getter returned the whole entry, retained, to read one field).
        @inline(__always) _read { yield storage[i] }
        @inline(__always) _modify {
            yield &storage[i]
            if tracking { mark(i) }
        }
    }

    @inline(__always)
    private mutating func mark(_ i: Int) {
        guard !storage[i].marked else { return }
        storage[i].marked = true
        marked.append(Int32(i))
    }

    /// Sets a slot's recency stamp without marking it written: a store rewrites only the stamp
    /// of an entry that merely moved in the recency lists (`takeChanged`).
    @inline(__always)
    mutating func setRecency(_ i: Int, _ stamp: UInt64) {
        storage[i].recency = stamp
        if tracking && !storage[i].marked { touched.append(Int32(i)) }
    }

    /// Marks a slot as written to (while tracking), for state kept beside the entries.
    @inline(__always)
    mutating func markChanged(_ i: Int) {
        if tracking { mark(i) }
    }

    mutating func append(_ entry: consuming Entry) {
        HugePages.makeRoomForAppend(&storage)
        storage.append(consume entry)
        if tracking { mark(storage.count - 1) }
    }

    mutating func reserveCapacity(_ n: Int) { HugePages.reserve(&storage, n) }

    /// The slots written to since the last call, each once, in the order first written; unmarks them.
    /// - Complexity: O(k) for k slots marked.
    mutating func takeMarked() -> [Int32] {
        takeChanged().written
    }

    /// The slots written to since the last call, each once, in the order first written, and the
    /// live slots whose recency stamp alone changed, each once; unmarks them.
    /// - Complexity: O(k) for k slots marked or moved.
    mutating func takeChanged() -> (written: [Int32], moved: [Int32]) {
        var moved: [Int32] = []
        if !touched.isEmpty {
            var seen = Set<Int32>(minimumCapacity: touched.count)
            for s in touched where storage[Int(s)].live && !storage[Int(s)].marked && seen.insert(s).inserted {
                moved.append(s)
            }
            touched.removeAll(keepingCapacity: true)
        }
        var list: [Int32] = []
        list.reserveCapacity(marked.count)
        // A slot replaced whole (reused for another key) is listed again: keep its first place.
        for s in marked where storage[Int(s)].marked {
            storage[Int(s)].marked = false
            list.append(s)
        }
        marked.removeAll(keepingCapacity: true)
        return (list, moved)
    }
}
