internal import CPrefetch

/// The engine's slot array, which can note the slots written to since it was last asked
/// (for a persistent store that writes only what changed).
///
/// Every write through the subscript marks its slot while tracking is on. The recency links live
/// beside the entries (in `OrderedSlots`), so a move in the recency lists changes only the moved
/// entry's recency stamp, not its neighbours' rows.
struct EntrySlots: RandomAccessCollection {
    private var storage: [Entry] = []
    /// Slots marked since the last `takeMarked()`, each once.
    private var marked: [Int32] = []
    /// What only a store's tracking keeps (nil before it begins): the slots whose recency stamp
    /// alone was set, and the row ids (see `Tracked`). In a box of its own, copied when shared
    /// (as the slot array is), so that the slot array stays four words: one word more made a
    /// batch without a store allocate more (the benchmarks' shell batch: 2,057 → 2,250).
    private var box: Tracked?
    /// Whether writes mark their slot.
    var tracking = false

    // Unchecked exclusivity: a box is read and changed only inside `EntrySlots`' own methods,
    // each access to a field begun and ended within one statement (never passed inout across a
    // call, never held while another access to the same box begins), and a box is changed only
    // once it is this array's own (`ownBox`); checked, each access paid a dynamic check (about a
    // hundred instructions per put with a store).
    final class Tracked {
        /// Slots whose recency stamp alone was set (`setRecency`) since the last
        /// `takeChanged()`; repeats allowed, bounded by the moves between two takes.
        @exclusivity(unchecked) var touched: [Int32] = []
        /// Each slot's row id in a persistent store, when kept (`keeps`): 0 for a slot whose
        /// entry has no row yet (written since the last `takeChanges`, or dead), as is every
        /// slot past the end (a slot appended gets its place when it gets its id, so a put adds
        /// nothing here). 8 bytes a slot, only with a store. A store writes and deletes rows by
        /// these ids and keeps no map of its own.
        @exclusivity(unchecked) var ids: [Int64] = []
        @exclusivity(unchecked) var keeps = false
        /// The id the next new row gets: one past the largest given or loaded.
        @exclusivity(unchecked) var next: Int64 = 1

        init() {}

        func copy() -> Tracked {
            let c = Tracked()
            c.touched = touched
            c.ids = ids
            c.keeps = keeps
            c.next = next
            return c
        }
    }

    /// Whether row ids are kept (from a store's rows, or since tracking began).
    var keepsRowIDs: Bool { box?.keeps ?? false }
    /// The id the next new row gets.
    var nextRowID: Int64 { box?.next ?? 1 }
    /// A slot's row id (0 for none, or when none are kept).
    func rowID(_ i: Int) -> Int64 {
        guard let b = box, b.keeps, i < b.ids.count else { return 0 }
        return b.ids[i]
    }

    /// The box, this array's own (made, or copied first when another array shares it).
    private mutating func ownBox() -> Tracked {
        if box == nil {
            box = Tracked()
        } else if !isKnownUniquelyReferenced(&box) {
            box = box!.copy()
        }
        return box!
    }

    init() {}

    /// The slots the storage has room for before it moves (grows into new memory).
    var capacity: Int { storage.capacity }

    var startIndex: Int { 0 }
    var endIndex: Int { storage.count }
    // Spelled out so that an unoptimized build (the tests, whose invariant checks walk every
    // slot after each operation) does not count and step through generic defaults.
    var count: Int { storage.count }
    func index(after i: Int) -> Int { i + 1 }
    func index(before i: Int) -> Int { i - 1 }

    /// Asks the processor to bring slot `i`'s entry into its cache, without waiting for it
    /// (`cachesh_prefetch`): both of its lines (an entry of 96 bytes spans two lines of 64, its
    /// first and last bytes one each); a slot past the end is not named.
    @inline(__always)
    func prefetch(_ i: Int) {
        guard i >= 0 && i < storage.count else { return }
        storage.withUnsafeBufferPointer {
            let entry = UnsafeRawPointer($0.baseAddress! + i)
            cachesh_prefetch(entry)
            cachesh_prefetch(entry + (MemoryLayout<Entry>.size - 1))
        }
    }

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

    /// Appends to `rows` the rows of the slots `list[k]`, from `k = from` on, while each is plain:
    /// its id `ids[k]` is 0 (no row: skipped), or it `rowIsPlain`, `plainNamespaces` has its
    /// namespace and its value holds its text (`StoredValue.heldUTF8Count`); such a row is its
    /// key's bytes, its value's compact text as held, and its numbers
    /// (`Entry.writePlainRowNumbers`).
    /// - Returns: the first `k` whose row is not plain (the caller writes it), or `list.count`.
    ///
    /// One call writes a run of rows (a commit of puts: all of them) with the slots read in
    /// place: a call a row, through the engine's slots, retained the slot array and copied the
    /// value out to lend it (three retains, a release and three outlined copies and destroys,
    /// some 60 instructions a row of a `--store` batch). Each row's id, recency and three ends
    /// are gathered in buffers on the stack and appended to `rows` `plainRowBatch` rows at a
    /// time: five appends a row, each checking its array's uniqueness and room, were some 100
    /// instructions a row.
    func appendPlainRows(_ list: [Int32], ids: [Int64], from: Int, plainNamespaces: [Bool],
                         to rows: inout StoredEntryRows) -> Int {
        var k = from
        let batch = Self.plainRowBatch
        storage.withUnsafeBufferPointer { entries in
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: 2 * batch) { numbers in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * batch) { ends in
                    // Rows gathered and not yet appended; the bytes the rows take so far.
                    var held = 0
                    var end = rows.byteCount
                    func appendHeld() {
                        rows.appendRows(ids: numbers.baseAddress!, recencies: numbers.baseAddress! + batch,
                                        ends: ends.baseAddress!, count: held)
                        held = 0
                    }
                    while k < list.count {
                        let id = ids[k]
                        if id == 0 {
                            k &+= 1
                            continue
                        }
                        precondition(list[k] >= 0 && Int(list[k]) < entries.count, "a slot of the entries")
                        let entry = entries.baseAddress! + Int(list[k])
                        let ns = Int(entry.pointee.namespace)
                        guard entry.pointee.rowIsPlain, ns < plainNamespaces.count, plainNamespaces[ns],
                              let valueCount = entry.pointee.stored.heldUTF8Count else { break }
                        let start = end
                        let keyCount = entry.pointee.key.utf8.count
                        // (The bytes of the rows gathered are kept too: `byteCount` does not
                        // count them yet.)
                        rows.makeRoom(start &+ keyCount &+ valueCount &+ EntryRowFields.maxNumberBytes, keeping: start)
                        end = rows.bytes.withUnsafeMutableBufferPointer { buffer -> Int in
                            let out = buffer.baseAddress! + start
                            _ = StoredEntryRows.copyKey(entry.pointee.key, to: out)
                            entry.pointee.stored.copyHeldUTF8(to: out + keyCount)
                            let at = keyCount &+ valueCount
                            return start &+ at &+ entry.pointee.writePlainRowNumbers(into: out + at)
                        }
                        numbers[held] = id
                        numbers[batch &+ held] = Int64(bitPattern: entry.pointee.recency)
                        ends[3 &* held] = start &+ keyCount
                        ends[3 &* held &+ 1] = start &+ keyCount &+ valueCount
                        ends[3 &* held &+ 2] = end
                        held &+= 1
                        if held == batch { appendHeld() }
                        k &+= 1
                    }
                    appendHeld()
                }
            }
        }
        return k
    }

    /// The rows `appendPlainRows` gathers before it appends them: 32, so that each of its two
    /// buffers takes at most 1 KiB, the most `withUnsafeTemporaryAllocation` places on the stack
    /// (a larger one is allocated on the heap, at every call).
    static let plainRowBatch = 32

    /// Sets a slot's recency stamp without marking it written: a store rewrites only the stamp
    /// of an entry that merely moved in the recency lists (`takeChanged`).
    @inline(__always)
    mutating func setRecency(_ i: Int, _ stamp: UInt64) {
        storage[i].recency = stamp
        if tracking && !storage[i].marked { ownBox().touched.append(Int32(i)) }
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

    // MARK: Row ids

    /// Starts keeping row ids, none given yet (each slot 0), when not kept already.
    mutating func keepRowIDs() {
        if box?.keeps == true { return }
        let b = ownBox()
        b.ids = []
        b.keeps = true
        b.next = 1
    }

    /// Stops keeping row ids (they are not known: the next commit writes every row anew).
    mutating func dropRowIDs() {
        guard box?.keeps == true else { return }
        let own = ownBox()
        own.ids = []
        own.keeps = false
    }

    /// Sets a slot's row id as a store holds it (loading its rows); the next new row's id
    /// follows the largest.
    mutating func setRowID(_ i: Int, _ id: Int64) {
        let b = ownBox()
        Self.makeRoom(b, i)
        b.ids[i] = id
        if id >= b.next { b.next = id &+ 1 }
    }

    /// A live slot's row id, given now (the next id) when it has none.
    @inline(__always)
    mutating func rowIDForWrite(_ i: Int) -> Int64 {
        let b = ownBox()
        Self.makeRoom(b, i)
        let id = b.ids[i]
        if id != 0 { return id }
        let given = b.next
        b.ids[i] = given
        b.next = given &+ 1
        return given
    }

    /// `rowIDForWrite` of each live slot of `list`, in order, and 0 for each dead one (given
    /// none): the ids of a commit's written rows in one access to the box, not one a row, and
    /// the ids read and written through pointers (each a place of `b.ids` made first, at once),
    /// with no uniqueness check a row.
    mutating func rowIDsForWrite(_ list: [Int32]) -> [Int64] {
        if list.isEmpty { return [] }
        let b = ownBox()
        var most = -1
        for s in list where Int(s) > most { most = Int(s) }
        if b.ids.count <= most { b.ids.append(contentsOf: repeatElement(0, count: most + 1 - b.ids.count)) }
        var next = b.next
        let ids = storage.withUnsafeBufferPointer { entries in
            b.ids.withUnsafeMutableBufferPointer { rowIDs in
                [Int64](unsafeUninitializedCapacity: list.count) { out, n in
                    for k in list.indices {
                        let i = Int(list[k])
                        var id: Int64 = 0
                        if entries[i].live {
                            id = rowIDs[i]
                            if id == 0 {
                                id = next
                                rowIDs[i] = id
                                next &+= 1
                            }
                        }
                        out[k] = id
                    }
                    n = list.count
                }
            }
        }
        b.next = next
        return ids
    }

    /// A slot's row id (0 for none), which it no longer has: its entry is being removed.
    @inline(__always)
    mutating func takeRowID(_ i: Int) -> Int64 {
        guard box?.keeps == true, i < box!.ids.count else { return 0 }
        let b = ownBox()
        let id = b.ids[i]
        b.ids[i] = 0
        return id
    }

    /// Gives `b.ids` a place for slot `i` (0 up to it).
    @inline(__always)
    private static func makeRoom(_ b: Tracked, _ i: Int) {
        // One at a time: slots get their ids mostly in order, one past the end.
        while b.ids.count <= i { b.ids.append(0) }
    }

    /// Gives the slots of `order` the ids 1, 2, ... in that order, every other slot none: a store
    /// written anew (`StoreChanges.replacesAll`).
    mutating func renumberRows(_ order: [Int32]) {
        var ids = [Int64](repeating: 0, count: storage.count)
        for (n, s) in order.enumerated() { ids[Int(s)] = Int64(n + 1) }
        let b = ownBox()
        b.ids = ids
        b.keeps = true
        b.next = Int64(order.count + 1)
    }

    /// What is wrong with the row ids kept: at most one per slot, none on a dead slot, each live one's
    /// its own and below the next.
    func rowIDViolations() -> [String] {
        guard let b = box, b.keeps else { return [] }
        let ids = b.ids
        guard ids.count <= storage.count else { return ["entry slots: \(ids.count) row ids for \(storage.count) slots"] }
        var v: [String] = []
        var seen = Set<Int64>()
        for (i, id) in ids.enumerated() where id != 0 {
            if !storage[i].live { v.append("entry slots: dead slot \(i) has row id \(id)") }
            if id < 0 || id >= b.next { v.append("entry slots: slot \(i)'s row id \(id) is not below the next, \(b.next)") }
            if !seen.insert(id).inserted { v.append("entry slots: row id \(id) is given twice") }
        }
        return v
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
        if let touched = box?.touched, !touched.isEmpty {
            var seen = Set<Int32>(minimumCapacity: touched.count)
            for s in touched where storage[Int(s)].live && !storage[Int(s)].marked && seen.insert(s).inserted {
                moved.append(s)
            }
            ownBox().touched.removeAll(keepingCapacity: true)
        }
        // A slot replaced whole (reused for another key) is listed again: keep its first place.
        // The slots are read and unmarked through one pointer and the list written through
        // another (through the arrays, each slot's write and append checked that the array was
        // not shared, some 25 instructions a row of a commit); the marks are moved out and back,
        // not copied, so that their list keeps its room, unshared, for the next commit.
        var marks: [Int32] = []
        swap(&marks, &marked)
        let list = marks.isEmpty ? [] : [Int32](unsafeUninitializedCapacity: marks.count) { out, n in
            n = 0
            storage.withUnsafeMutableBufferPointer { entries in
                for s in marks where entries[Int(s)].marked {
                    entries[Int(s)].marked = false
                    out[n] = s
                    n += 1
                }
            }
        }
        marks.removeAll(keepingCapacity: true)
        marked = marks
        return (list, moved)
    }
}
