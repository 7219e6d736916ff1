/// The cached entries by slot, with their recency lists: one over every entry and one per
/// namespace, both doubly linked through slot numbers, least recent at the head.
///
/// A value type held (inside the engine's `EntryTable`) in one stored property of the engine, so
/// that an operation on it (a touch, an insert, a removal) is one exclusivity-checked access of
/// the engine instead of one per field it reads or writes. The links sit in their own array of 16-byte records, apart from the
/// entries, so making an entry the most recent reads and writes a few small records rather than
/// the entry and both of its neighbours.
struct EntryStore {
    /// An entry's neighbours in the global list and in its namespace's list (-1: none).
    struct Links {
        var globalPrev: Int32 = -1
        var globalNext: Int32 = -1
        var nsPrev: Int32 = -1
        var nsNext: Int32 = -1
    }

    /// The ends and length of one recency list.
    struct List {
        var head: Int32 = -1
        var tail: Int32 = -1
        var count = 0
    }

    /// Entries by slot; a free slot holds a dead entry (`live == false`) until it is reused.
    /// Writes mark their slot for a persistent store while tracking is on (see `EntrySlots`).
    var entries = EntrySlots()
    /// The next recency stamp (see `Entry.recency`): larger is more recent.
    var nextRecency: UInt64 = 0
    /// Links by slot, beside `entries`.
    private var links: [Links] = []
    private var freeSlots: [Int32] = []
    private var global = List()
    /// By namespace slot.
    private var namespaceLists: [List] = []

    /// An empty store for `namespaceCount` namespaces.
    init(namespaceCount: Int = 0) {
        namespaceLists = Array(repeating: List(), count: namespaceCount)
    }

    /// Makes room for the list of one more namespace (the next namespace slot).
    mutating func addNamespace() {
        namespaceLists.append(List())
    }

    /// The number of namespaces with a list (the next namespace slot).
    var namespaceCount: Int { namespaceLists.count }

    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(n)
        links.reserveCapacity(n)
    }

    /// The least recently used entry of all, or -1.
    var globalHead: Int32 { global.head }

    /// The next more recent entry after `slot` in the global list, or -1.
    func next(after slot: Int32) -> Int32 { links[Int(slot)].globalNext }

    /// The least recently used entry of a namespace, or -1.
    func head(inNamespace ns: Int32) -> Int32 { namespaceLists[Int(ns)].head }

    /// The next more recent entry after `slot` in its namespace's list, or -1.
    func nextInNamespace(after slot: Int32) -> Int32 { links[Int(slot)].nsNext }

    /// The number of entries in a namespace.
    func count(inNamespace ns: Int32) -> Int { namespaceLists[Int(ns)].count }

    /// The least recently used entry of a namespace holding more than `limit` entries, else nil.
    func leastRecent(inNamespace ns: Int32, over limit: Int) -> Int32? {
        let list = namespaceLists[Int(ns)]
        return list.count > limit ? list.head : nil
    }

    /// Stores an entry as the most recently used, in a free slot if there is one (its generation
    /// then follows the slot's last one).
    /// - Complexity: O(1) amortized.
    mutating func insert(_ entry: Entry) -> Int32 {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            let generation = entries[Int(free)].generation &+ 1
            entries[Int(free)] = entry
            entries[Int(free)].generation = generation
        } else {
            slot = Int32(entries.count)
            entries.append(entry)
            links.append(Links())
        }
        linkAtTail(slot)
        return slot
    }

    /// Takes an entry out of both lists and frees its slot: the entry is marked dead, its value,
    /// tags, ids and mutation log are dropped and its generation is bumped.
    /// - Returns: what the engine's indexes need to forget it.
    /// - Complexity: O(1).
    mutating func remove(_ slot: Int32) -> (key: String, ids: [String], tags: [String]) {
        unlink(slot)
        let i = Int(slot)
        let removed = (entries[i].key, entries[i].ids, entries[i].tags)
        entries[i].live = false
        entries[i].value = .null
        entries[i].tags = []
        entries[i].ids = []
        entries[i].log = nil
        entries[i].generation &+= 1
        freeSlots.append(slot)
        return removed
    }

    /// Makes an entry the most recently used, globally and in its namespace.
    /// - Complexity: O(1).
    mutating func touch(_ slot: Int32) {
        if global.tail == slot && namespaceLists[Int(entries[Int(slot)].namespace)].tail == slot { return }
        unlink(slot)
        linkAtTail(slot)
    }

    /// Links a slot as the most recent, with a new recency stamp (which marks it changed).
    private mutating func linkAtTail(_ slot: Int32) {
        let i = Int(slot)
        entries.setRecency(i, nextRecency)
        nextRecency &+= 1
        let ns = Int(entries[i].namespace)
        let globalTail = global.tail
        let nsTail = namespaceLists[ns].tail
        links[i] = Links(globalPrev: globalTail, globalNext: -1, nsPrev: nsTail, nsNext: -1)
        if globalTail >= 0 { links[Int(globalTail)].globalNext = slot } else { global.head = slot }
        global.tail = slot
        global.count += 1
        if nsTail >= 0 { links[Int(nsTail)].nsNext = slot } else { namespaceLists[ns].head = slot }
        namespaceLists[ns].tail = slot
        namespaceLists[ns].count += 1
    }

    private mutating func unlink(_ slot: Int32) {
        let l = links[Int(slot)]
        let ns = Int(entries[Int(slot)].namespace)
        if l.globalPrev >= 0 { links[Int(l.globalPrev)].globalNext = l.globalNext } else { global.head = l.globalNext }
        if l.globalNext >= 0 { links[Int(l.globalNext)].globalPrev = l.globalPrev } else { global.tail = l.globalPrev }
        global.count -= 1
        if l.nsPrev >= 0 { links[Int(l.nsPrev)].nsNext = l.nsNext } else { namespaceLists[ns].head = l.nsNext }
        if l.nsNext >= 0 { links[Int(l.nsNext)].nsPrev = l.nsPrev } else { namespaceLists[ns].tail = l.nsPrev }
        namespaceLists[ns].count -= 1
    }

    /// Slots of every entry in global recency order, least recent first.
    /// - Complexity: O(n).
    func recencyOrder() -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(global.count)
        var s = global.head
        while s >= 0 { out.append(s); s = links[Int(s)].globalNext }
        return out
    }

    /// Slots of one namespace in recency order, least recent first.
    /// - Complexity: O(entries in the namespace).
    func slots(inNamespace ns: Int32) -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(namespaceLists[Int(ns)].count)
        var s = namespaceLists[Int(ns)].head
        while s >= 0 { out.append(s); s = links[Int(s)].nsNext }
        return out
    }
}

// MARK: - Invariants

extension EntryStore {
    /// What is wrong with the store, one message per broken rule; empty when it is sound:
    /// - there is one link record per slot, and every live entry's namespace has a list;
    /// - the free slots are exactly the dead ones, each listed once;
    /// - the global list and each namespace's list are doubly linked both ways, end at their `tail`
    ///   and hold `count` entries; the global list holds every live entry once, and each
    ///   namespace's list holds exactly the live entries of that namespace;
    /// - recency stamps strictly increase along the global list, below `nextRecency`.
    /// - Complexity: O(n) for n slots.
    func invariantViolations() -> [String] {
        var v: [String] = []
        guard links.count == entries.count else {
            return ["entry store: \(links.count) link records for \(entries.count) slots"]
        }
        var live = 0
        for i in entries.indices where entries[i].live {
            let e = entries[i]
            live += 1
            if e.namespace < 0 || Int(e.namespace) >= namespaceLists.count {
                v.append("entry store: slot \(i) (\(e.key)) is in namespace slot \(e.namespace), which has no list")
            }
        }
        var free = Set<Int32>()
        for s in freeSlots {
            guard s >= 0, Int(s) < entries.count else { v.append("entry store: free slot \(s) is out of range"); continue }
            if !free.insert(s).inserted { v.append("entry store: slot \(s) is on the free list twice") }
            if entries[Int(s)].live { v.append("entry store: live slot \(s) (\(entries[Int(s)].key)) is on the free list") }
        }
        if free.count + live != entries.count {
            v.append("entry store: \(entries.count - live) dead slots but \(free.count) free ones")
        }

        let global = walk(self.global, "global recency list", global: true, into: &v)
        var seen = [Bool](repeating: false, count: entries.count)
        var distinct = 0
        var lastStamp: UInt64?
        for s in global {
            let e = entries[Int(s)]
            if !e.live { v.append("global recency list: holds dead slot \(s)") }
            if seen[Int(s)] { v.append("global recency list: holds slot \(s) twice") } else { distinct += 1 }
            seen[Int(s)] = true
            if let last = lastStamp, e.recency <= last {
                v.append("global recency list: stamp \(e.recency) of slot \(s) (\(e.key)) follows stamp \(last)")
            }
            if e.recency >= nextRecency {
                v.append("global recency list: stamp \(e.recency) of slot \(s) is not below the next stamp \(nextRecency)")
            }
            lastStamp = e.recency
        }
        if distinct != live { v.append("global recency list: holds \(distinct) distinct entries, \(live) are live") }

        var inNamespaces = 0
        for ns in namespaceLists.indices {
            let list = walk(namespaceLists[ns], "recency list of namespace slot \(ns)", global: false, into: &v)
            inNamespaces += list.count
            for s in list where !entries[Int(s)].live || entries[Int(s)].namespace != Int32(ns) {
                v.append("recency list of namespace slot \(ns): holds slot \(s), which is "
                         + (entries[Int(s)].live ? "in namespace slot \(entries[Int(s)].namespace)" : "dead"))
            }
        }
        if inNamespaces != live { v.append("namespace recency lists: hold \(inNamespaces) entries in all, \(live) are live") }
        return v
    }

    /// The slots of one list from head to tail, noting broken links. Stops after one more step than
    /// there are slots (a longer walk has gone round a cycle) or at a link out of range.
    private func walk(_ list: List, _ name: @autoclosure () -> String, global: Bool, into v: inout [String]) -> [Int32] {
        var out: [Int32] = []
        var previous: Int32 = -1
        var s = list.head
        while s >= 0 {
            guard Int(s) < entries.count else { v.append("\(name()): link to slot \(s), out of range"); return out }
            guard out.count < entries.count else { v.append("\(name()): goes round a cycle"); return out }
            let l = links[Int(s)]
            let back = global ? l.globalPrev : l.nsPrev
            if back != previous { v.append("\(name()): slot \(s) links back to \(back), not \(previous)") }
            out.append(s)
            previous = s
            s = global ? l.globalNext : l.nsNext
        }
        if previous != list.tail { v.append("\(name()): ends at slot \(previous), its tail is \(list.tail)") }
        if out.count != list.count { v.append("\(name()): holds \(out.count) entries, its count is \(list.count)") }
        return out
    }
}
