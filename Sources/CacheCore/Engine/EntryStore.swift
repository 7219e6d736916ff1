/// The cached entries by slot, with their orders: every entry in recency order (least recent
/// first), and each namespace in its eviction order (next victim first; SIEVE's in insertion
/// order, its victim found by a hand).
///
/// Recency is a stamp per entry (`Entry.recency`, from `nextRecency`: larger is more recent) and a
/// queue of (stamp, slot) items in stamp order, appended to by each access: an item is current
/// while its slot is live and still has that stamp, and the items an entry left behind are
/// skipped and, once they are a third of the queue, dropped in one pass (O(1) amortized). So an
/// access writes the entry's stamp and appends to a queue, instead of unlinking the entry from
/// neighbours scattered over memory. The global order is such a queue; so is an LRU namespace's
/// (its victim is the first current item). FIFO, SIEVE and LFU namespaces keep a doubly linked
/// list through slot numbers (`Links`, an array of 8-byte records beside the entries).
///
/// A value type held (inside the engine's `EntryTable`) in one stored property of the engine, so
/// that an operation on it (a touch, an insert, a removal) is one exclusivity-checked access of
/// the engine instead of one per field it reads or writes.
///
/// Per namespace eviction order (`Eviction`), each operation O(1):
/// - LRU: an access appends the entry to the namespace's queue; the first current item is the victim.
/// - FIFO: entries stay in insertion order; the head is the victim.
/// - SIEVE: insertion order, a visited bit per entry (`Rank.uses` 0 or 1) and a hand (`List.hand`);
///   the victim search clears bits, each step of it one bit, so it is O(1) amortized.
/// - LFU: the list is sorted by (uses, when it reached them); entries of equal uses form a bucket
///   with its first and last slot, so an access moves the entry after the last of the next bucket.
struct EntryStore {
    /// An entry's neighbours in its namespace's list (-1: none); unused under LRU.
    struct Links {
        var nsPrev: Int32 = -1
        var nsNext: Int32 = -1
    }

    /// Slots in the order of the stamps they were given (see the type's description): the items
    /// from `head` on are live; those before were skipped and wait for the next compaction.
    struct RecencyQueue {
        struct Item {
            var stamp: UInt64
            var slot: Int32
        }
        var items: [Item] = []
        var head = 0

        @inline(__always)
        mutating func append(_ stamp: UInt64, _ slot: Int32) {
            items.append(Item(stamp: stamp, slot: slot))
        }

        /// Whether the queue holds so many items that it should drop the stale ones: more than half
        /// again as many as the `current` entries it orders, plus a little.
        @inline(__always)
        func needsCompaction(current: Int) -> Bool {
            items.count > current + current / 2 + 64
        }
    }

    /// The ends and length of a namespace's list, its eviction policy and SIEVE's hand.
    struct List {
        var head: Int32 = -1
        var tail: Int32 = -1
        var count = 0
        var eviction = Eviction.lru
        /// SIEVE: the entry the next victim search starts at; -1: the oldest.
        var hand: Int32 = -1
        /// The next rank stamp of the namespace (see `Rank.stamp`).
        var nextRank: UInt64 = 0
    }

    /// An entry's eviction state beyond its place in its namespace's list (unused under LRU).
    struct Rank: Equatable {
        /// From its namespace's counter (`List.nextRank`): FIFO, SIEVE: when it was stored; LFU:
        /// when it was last accessed (reached its count). Orders the list when it is rebuilt from a
        /// snapshot or a store.
        var stamp: UInt64 = 0
        /// LFU: accesses since stored (1 when new); SIEVE: 1 when visited, else 0.
        var uses: UInt64 = 0
        /// LFU: its bucket.
        var bucket: Int32 = -1
    }

    /// LFU: the entries of one namespace with equal uses, a run of its list.
    struct Bucket {
        var uses: UInt64
        var first: Int32
        var last: Int32
    }

    /// Entries by slot; a free slot holds a dead entry (`live == false`) until it is reused.
    /// Writes mark their slot for a persistent store while tracking is on (see `EntrySlots`).
    var entries = EntrySlots()
    /// The next recency stamp (see `Entry.recency`): larger is more recent.
    private(set) var nextRecency: UInt64 = 0
    /// Every live entry in recency order (see the type's description).
    private var recency = RecencyQueue()
    /// By slot: a live entry's recency stamp (a copy of `Entry.recency`), `UInt64.max` for a dead
    /// slot. Whether a queue item is current is one read of this dense array, not of the entry.
    private var stamps: [UInt64] = []
    /// The number of live entries.
    private var liveCount = 0
    /// Links by slot, beside `entries`.
    private var links: [Links] = []
    /// Eviction state by slot, beside `entries`.
    private(set) var ranks: [Rank] = []
    private var buckets: [Bucket] = []
    private var freeBuckets: [Int32] = []
    private var freeSlots: [Int32] = []
    /// By namespace slot.
    private var namespaceLists: [List] = []
    /// By namespace slot: an LRU namespace's entries in recency order; empty under other policies.
    private var namespaceQueues: [RecencyQueue] = []

    /// An empty store for `namespaceCount` namespaces, each LRU.
    init(namespaceCount: Int = 0) {
        namespaceLists = Array(repeating: List(), count: namespaceCount)
        namespaceQueues = Array(repeating: RecencyQueue(), count: namespaceCount)
    }

    /// Makes room for the list of one more namespace (the next namespace slot), LRU.
    mutating func addNamespace() {
        namespaceLists.append(List())
        namespaceQueues.append(RecencyQueue())
    }

    /// The number of namespaces with a list (the next namespace slot).
    var namespaceCount: Int { namespaceLists.count }

    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(n)
        links.reserveCapacity(n)
        ranks.reserveCapacity(n)
        recency.items.reserveCapacity(n)
        stamps.reserveCapacity(n)
    }

    /// The number of entries in a namespace.
    func count(inNamespace ns: Int32) -> Int { namespaceLists[Int(ns)].count }

    /// A namespace's eviction policy.
    func eviction(ofNamespace ns: Int32) -> Eviction { namespaceLists[Int(ns)].eviction }

    /// SIEVE: the entry a namespace's hand rests on, or -1 (the next search starts at the oldest).
    func hand(ofNamespace ns: Int32) -> Int32 { namespaceLists[Int(ns)].hand }

    /// The rank stamp a namespace gives next.
    func nextRank(ofNamespace ns: Int32) -> UInt64 { namespaceLists[Int(ns)].nextRank }

    /// Stores an entry as the most recently used and as its namespace's policy places a new
    /// entry, in a free slot if there is one (its generation then follows the slot's last one).
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
            ranks.append(Rank())
            stamps.append(.max)
        }
        liveCount += 1
        stampMostRecent(slot)
        placeNew(slot)
        return slot
    }

    /// Takes an entry out of both lists and frees its slot: the entry is marked dead, its value,
    /// tags and out-of-line fields (mutation log included) are dropped and its generation is
    /// bumped. SIEVE's hand, when on it, moves to the entry after it.
    /// - Returns: what the engine's indexes need to forget it.
    /// - Complexity: O(1).
    mutating func remove(_ slot: Int32) -> (key: String, tags: [String]) {
        leaveNamespace(slot)
        liveCount -= 1
        let i = Int(slot)
        let removed = (entries[i].key, entries[i].tags)
        entries[i].live = false
        entries[i].releaseContents()
        entries[i].generation &+= 1
        ranks[i] = Rank()
        stamps[i] = .max
        freeSlots.append(slot)
        if recency.needsCompaction(current: liveCount) { compactGlobal() }
        return removed
    }

    /// An access (SPEC §1.1 Eviction): the entry becomes the most recently used, and its
    /// namespace's policy notes it (LRU: last to go; FIFO: nothing; SIEVE: visited; LFU: one more use).
    /// - Complexity: O(1).
    mutating func touch(_ slot: Int32) {
        let ns = Int(entries[Int(slot)].namespace)
        switch namespaceLists[ns].eviction {
        case .lru:
            // The most recent of all is the most recent of its namespace too.
            if stamps[Int(slot)] &+ 1 == nextRecency { return }
            stampMostRecent(slot)
            appendToNamespaceQueue(slot, ns)
        case .fifo:
            moveToGlobalTail(slot)
        case .sieve:
            moveToGlobalTail(slot)
            if ranks[Int(slot)].uses == 0 {
                ranks[Int(slot)].uses = 1
                entries.markChanged(Int(slot))
            }
        case .lfu:
            moveToGlobalTail(slot)
            useOnce(slot)
            entries.markChanged(Int(slot))
        }
    }

    /// The entry to evict from a namespace holding more than `limit` entries, else nil: the
    /// policy's victim among the entries other than `sparing` (the entry just stored, which a
    /// cache that evicts before it stores would not hold yet), or `sparing` when it is the only one.
    /// SIEVE's search clears the visited bits it passes and leaves the hand after the victim.
    /// - Complexity: O(1); SIEVE's O(1) amortized (each step clears a bit set by an access).
    mutating func victim(inNamespace ns: Int32, over limit: Int, sparing: Int32 = -1) -> Int32? {
        let n = Int(ns)
        let list = namespaceLists[n]
        guard list.count > limit else { return nil }
        guard list.eviction != .lru else { return lruVictim(n, sparing: sparing) }
        guard list.count > 1 else { return list.head }
        switch list.eviction {
        case .lru, .fifo, .lfu:
            // LRU and FIFO keep a new entry at the tail; LFU puts it last of the entries with one
            // use, so it leads only when it is alone there, and the next is the victim it spares.
            return list.head == sparing ? links[Int(list.head)].nsNext : list.head
        case .sieve:
            var p = list.hand >= 0 ? list.hand : list.head
            // Each turn clears a visited bit or passes the spared entry: at most count + 2 turns.
            for _ in 0...(list.count + 2) {
                if p != sparing {
                    if ranks[Int(p)].uses == 0 { break }
                    ranks[Int(p)].uses = 0
                    entries.markChanged(Int(p))
                }
                let next = links[Int(p)].nsNext
                p = next >= 0 ? next : list.head
            }
            var hand = links[Int(p)].nsNext
            if hand >= 0 && hand == sparing { hand = links[Int(hand)].nsNext }
            namespaceLists[n].hand = hand
            return p
        }
    }

    /// Changes a namespace's policy. Its entries start the new policy in recency order (least
    /// recent first), as if stored in that order and never accessed since: FIFO and SIEVE in that
    /// order, unvisited, the hand at the oldest; LFU with one use each; ranks from 0. A namespace
    /// keeping its policy is left as it is.
    /// - Complexity: O(k log k) for k entries in the namespace.
    mutating func setEviction(_ ns: Int32, _ eviction: Eviction) {
        let n = Int(ns)
        guard namespaceLists[n].eviction != eviction else { return }
        let members = slots(inNamespace: ns).sorted { entries[Int($0)].recency < entries[Int($1)].recency }
        if namespaceLists[n].eviction == .lfu {
            var freed = Set<Int32>()
            for s in members where freed.insert(ranks[Int(s)].bucket).inserted { freeBuckets.append(ranks[Int(s)].bucket) }
        }
        namespaceLists[n] = List(eviction: eviction)
        namespaceQueues[n] = RecencyQueue()
        for s in members {
            ranks[Int(s)] = Rank()
            placeNew(s)
            entries.markChanged(Int(s))
        }
    }

    /// Rebuilds a namespace's list from its entries' saved ranks (a snapshot or a store) under
    /// `eviction`: FIFO and SIEVE by stamp, LFU by uses then stamp; LRU keeps recency order.
    /// The ranks, by slot, are of the namespace's entries; `hand` is SIEVE's, or -1; the next rank
    /// is `nextRank`, or past the last one saved if that is larger.
    /// - Complexity: O(k log k) for k entries in the namespace.
    mutating func restoreOrder(_ ns: Int32, _ eviction: Eviction, ranks saved: [Int32: Rank], hand: Int32, nextRank: UInt64) {
        let n = Int(ns)
        var members = slots(inNamespace: ns)
        namespaceLists[n] = List(eviction: eviction, nextRank: nextRank)
        namespaceQueues[n] = RecencyQueue()
        switch eviction {
        case .lru:
            members.sort { entries[Int($0)].recency < entries[Int($1)].recency }
        case .fifo, .sieve:
            members.sort { (saved[$0]?.stamp ?? 0, $0) < (saved[$1]?.stamp ?? 0, $1) }
        case .lfu:
            members.sort { (saved[$0]?.uses ?? 1, saved[$0]?.stamp ?? 0, $0) < (saved[$1]?.uses ?? 1, saved[$1]?.stamp ?? 0, $1) }
        }
        for s in members {
            let i = Int(s)
            let rank = saved[s] ?? Rank(stamp: namespaceLists[n].nextRank, uses: eviction == .lfu ? 1 : 0)
            linkLast(s)
            ranks[i] = Rank(stamp: rank.stamp, uses: rank.uses, bucket: -1)
            if rank.stamp >= namespaceLists[n].nextRank { namespaceLists[n].nextRank = rank.stamp &+ 1 }
            guard eviction == .lfu else { continue }
            let previous = links[i].nsPrev
            if previous >= 0 && ranks[Int(previous)].uses == rank.uses {
                let b = ranks[Int(previous)].bucket
                buckets[Int(b)].last = s
                ranks[i].bucket = b
            } else {
                ranks[i].bucket = newBucket(rank.uses, s)
            }
        }
        if eviction == .sieve && hand >= 0 && entries[Int(hand)].live && entries[Int(hand)].namespace == ns {
            namespaceLists[n].hand = hand
        }
    }

    // MARK: Lists

    /// Places a new entry (or one re-placed by a policy change) in its namespace's list: last,
    /// unvisited under SIEVE; LFU: last of the entries with one use.
    private mutating func placeNew(_ slot: Int32) {
        let i = Int(slot)
        let ns = Int(entries[i].namespace)
        ranks[i].stamp = namespaceLists[ns].nextRank
        namespaceLists[ns].nextRank &+= 1
        switch namespaceLists[ns].eviction {
        case .lru, .fifo, .sieve:
            ranks[i].uses = 0
            linkLast(slot)
        case .lfu:
            ranks[i].uses = 1
            let head = namespaceLists[ns].head
            if head >= 0 && ranks[Int(head)].uses == 1 {
                let b = ranks[Int(head)].bucket
                linkNamespace(slot, after: buckets[Int(b)].last)
                buckets[Int(b)].last = slot
                ranks[i].bucket = b
            } else {
                linkNamespace(slot, after: -1)
                ranks[i].bucket = newBucket(1, slot)
            }
        }
    }

    /// Takes an entry out of its namespace's list, keeping SIEVE's hand and LFU's buckets.
    private mutating func leaveNamespace(_ slot: Int32) {
        let i = Int(slot)
        let ns = Int(entries[i].namespace)
        switch namespaceLists[ns].eviction {
        case .lru:
            // Its items in the queue stop being current when the slot dies.
            namespaceLists[ns].count -= 1
            if namespaceQueues[ns].needsCompaction(current: namespaceLists[ns].count) { compactNamespace(ns) }
            return
        case .fifo:
            break
        case .sieve:
            if namespaceLists[ns].hand == slot { namespaceLists[ns].hand = links[i].nsNext }
        case .lfu:
            let b = Int(ranks[i].bucket)
            if buckets[b].first == slot && buckets[b].last == slot {
                freeBuckets.append(Int32(b))
            } else if buckets[b].first == slot {
                buckets[b].first = links[i].nsNext
            } else if buckets[b].last == slot {
                buckets[b].last = links[i].nsPrev
            }
        }
        unlinkNamespace(slot)
    }

    /// LFU: one more use; the entry goes last among those with as many.
    private mutating func useOnce(_ slot: Int32) {
        let i = Int(slot)
        let b = Int(ranks[i].bucket)
        let uses = buckets[b].uses &+ 1
        let last = buckets[b].last
        let after = links[Int(last)].nsNext
        var target: Int32 = -1
        var anchor = last
        if after >= 0 && buckets[Int(ranks[Int(after)].bucket)].uses == uses {
            target = ranks[Int(after)].bucket
            anchor = buckets[Int(target)].last
        }
        if buckets[b].first == slot && last == slot {
            freeBuckets.append(Int32(b))
        } else if buckets[b].first == slot {
            buckets[b].first = links[i].nsNext
        } else if last == slot {
            buckets[b].last = links[i].nsPrev
        }
        if anchor != slot {
            unlinkNamespace(slot)
            linkNamespace(slot, after: anchor)
        }
        if target >= 0 {
            buckets[Int(target)].last = slot
        } else {
            target = newBucket(uses, slot)
        }
        let ns = Int(entries[i].namespace)
        ranks[i] = Rank(stamp: namespaceLists[ns].nextRank, uses: uses, bucket: target)
        namespaceLists[ns].nextRank &+= 1
    }

    private mutating func newBucket(_ uses: UInt64, _ slot: Int32) -> Int32 {
        let bucket = Bucket(uses: uses, first: slot, last: slot)
        if let free = freeBuckets.popLast() {
            buckets[Int(free)] = bucket
            return free
        }
        buckets.append(bucket)
        return Int32(buckets.count - 1)
    }

    private mutating func moveToGlobalTail(_ slot: Int32) {
        guard stamps[Int(slot)] &+ 1 != nextRecency else { return }
        stampMostRecent(slot)
    }

    /// Makes a live slot the most recent of all: a new recency stamp (which marks it moved for a
    /// store) and an item at the end of the global queue.
    @inline(__always)
    private mutating func stampMostRecent(_ slot: Int32) {
        let stamp = nextRecency
        entries.setRecency(Int(slot), stamp)
        stamps[Int(slot)] = stamp
        nextRecency = stamp &+ 1
        recency.append(stamp, slot)
        if recency.needsCompaction(current: liveCount) { compactGlobal() }
    }

    /// Appends a slot, just stamped, to its LRU namespace's queue.
    @inline(__always)
    private mutating func appendToNamespaceQueue(_ slot: Int32, _ ns: Int) {
        namespaceQueues[ns].append(stamps[Int(slot)], slot)
        if namespaceQueues[ns].needsCompaction(current: namespaceLists[ns].count) { compactNamespace(ns) }
    }

    /// Puts a slot last in its namespace's order: under LRU at the end of its queue with its
    /// current stamp, else linked after the tail.
    private mutating func linkLast(_ slot: Int32) {
        let ns = Int(entries[Int(slot)].namespace)
        if namespaceLists[ns].eviction == .lru {
            namespaceLists[ns].count += 1
            appendToNamespaceQueue(slot, ns)
        } else {
            linkNamespace(slot, after: namespaceLists[ns].tail)
        }
    }

    /// Whether a queue item is current: its slot is live and still has its stamp.
    @inline(__always)
    private func isCurrent(_ item: RecencyQueue.Item) -> Bool {
        stamps[Int(item.slot)] == item.stamp
    }

    /// LRU: the least recent entry of a namespace other than `sparing` (or `sparing` when it is
    /// the only one); drops the stale items it passes at the head of the queue.
    /// - Complexity: O(1) amortized (each item is passed at the head once).
    private mutating func lruVictim(_ n: Int, sparing: Int32) -> Int32? {
        let count = namespaceLists[n].count
        var q = namespaceQueues[n].head
        let end = namespaceQueues[n].items.count
        while q < end && !isCurrent(namespaceQueues[n].items[q]) { q += 1 }
        namespaceQueues[n].head = q
        guard q < end else { return nil }
        let first = namespaceQueues[n].items[q].slot
        guard first == sparing && count > 1 else { return first }
        // The spared entry leads (it was not stored last): the next current item.
        q += 1
        while q < end && !isCurrent(namespaceQueues[n].items[q]) { q += 1 }
        return q < end ? namespaceQueues[n].items[q].slot : first
    }

    /// Drops the stale items of the global queue.
    /// - Complexity: O(items), after at least half as many appends or removals as it keeps.
    private mutating func compactGlobal() {
        var kept: [RecencyQueue.Item] = []
        kept.reserveCapacity(liveCount + liveCount / 2 + 65)
        for q in recency.head..<recency.items.count where isCurrent(recency.items[q]) { kept.append(recency.items[q]) }
        recency = RecencyQueue(items: kept, head: 0)
    }

    /// Drops the stale items of an LRU namespace's queue.
    private mutating func compactNamespace(_ n: Int) {
        var kept: [RecencyQueue.Item] = []
        let count = namespaceLists[n].count
        kept.reserveCapacity(count + count / 2 + 65)
        let queue = namespaceQueues[n]
        for q in queue.head..<queue.items.count where isCurrent(queue.items[q]) { kept.append(queue.items[q]) }
        namespaceQueues[n] = RecencyQueue(items: kept, head: 0)
    }

    /// Replaces the recency stamps of slots 0..<k (entries just inserted in recency order) with
    /// `stamps`, increasing, and rebuilds the queues on them.
    /// - Complexity: O(n) for n slots.
    mutating func restoreRecencies(_ saved: [UInt64]) {
        let order = recencyOrder()
        for (i, stamp) in saved.enumerated() {
            entries[i].recency = stamp
            if entries[i].live { stamps[i] = stamp }
        }
        nextRecency = (saved.last ?? 0) &+ 1
        recency = RecencyQueue()
        for s in order { recency.append(stamps[Int(s)], s) }
        for n in namespaceQueues.indices where namespaceLists[n].eviction == .lru {
            namespaceQueues[n] = RecencyQueue()
        }
        for s in order {
            let ns = Int(entries[Int(s)].namespace)
            if namespaceLists[ns].eviction == .lru { namespaceQueues[ns].append(stamps[Int(s)], s) }
        }
    }

    /// Links a slot into its namespace's list after `anchor` (-1: first).
    private mutating func linkNamespace(_ slot: Int32, after anchor: Int32) {
        let i = Int(slot)
        let ns = Int(entries[i].namespace)
        let next = anchor >= 0 ? links[Int(anchor)].nsNext : namespaceLists[ns].head
        links[i].nsPrev = anchor
        links[i].nsNext = next
        if anchor >= 0 { links[Int(anchor)].nsNext = slot } else { namespaceLists[ns].head = slot }
        if next >= 0 { links[Int(next)].nsPrev = slot } else { namespaceLists[ns].tail = slot }
        namespaceLists[ns].count += 1
    }

    private mutating func unlinkNamespace(_ slot: Int32) {
        let l = links[Int(slot)]
        let ns = Int(entries[Int(slot)].namespace)
        if l.nsPrev >= 0 { links[Int(l.nsPrev)].nsNext = l.nsNext } else { namespaceLists[ns].head = l.nsNext }
        if l.nsNext >= 0 { links[Int(l.nsNext)].nsPrev = l.nsPrev } else { namespaceLists[ns].tail = l.nsPrev }
        namespaceLists[ns].count -= 1
    }

    /// Slots of every entry in global recency order, least recent first.
    /// - Complexity: O(n).
    func recencyOrder() -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(liveCount)
        for q in recency.head..<recency.items.count where isCurrent(recency.items[q]) { out.append(recency.items[q].slot) }
        return out
    }

    /// Slots of one namespace in its list's order (LRU: least recent first; FIFO, SIEVE: oldest
    /// first; LFU: fewest uses first).
    /// - Complexity: O(entries in the namespace).
    func slots(inNamespace ns: Int32) -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(namespaceLists[Int(ns)].count)
        if namespaceLists[Int(ns)].eviction == .lru {
            let queue = namespaceQueues[Int(ns)]
            for q in queue.head..<queue.items.count where isCurrent(queue.items[q]) { out.append(queue.items[q].slot) }
            return out
        }
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
    /// - the stamps of the global queue's items strictly increase, below `nextRecency`; its
    ///   current items are every live entry once; it is compacted as promised (`needsCompaction`);
    /// - each LRU namespace's queue likewise, for the live entries of that namespace; each other
    ///   namespace's list is doubly linked both ways, ends at its `tail` and holds `count` entries,
    ///   exactly the live entries of that namespace.
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

        let global = queueViolations(recency, "global recency queue", current: live, into: &v)
        if liveCount != live { v.append("entry store: counts \(liveCount) live entries, \(live) are live") }
        if stamps.count != entries.count { v.append("entry store: \(stamps.count) stamps for \(entries.count) slots"); return v }
        for i in entries.indices where stamps[i] != (entries[i].live ? entries[i].recency : .max) {
            v.append("entry store: slot \(i) has stamp \(stamps[i]) beside the entry's \(entries[i].recency)")
        }
        if global.count != live { v.append("global recency queue: holds \(global.count) current entries, \(live) are live") }

        if namespaceQueues.count != namespaceLists.count {
            v.append("entry store: \(namespaceQueues.count) namespace queues for \(namespaceLists.count) lists")
            return v
        }
        var inNamespaces = 0
        for ns in namespaceLists.indices {
            let list: [Int32]
            if namespaceLists[ns].eviction == .lru {
                let name = "recency queue of namespace slot \(ns)"
                list = queueViolations(namespaceQueues[ns], name, current: namespaceLists[ns].count, into: &v)
                if list.count != namespaceLists[ns].count {
                    v.append("\(name): holds \(list.count) current entries, its count is \(namespaceLists[ns].count)")
                }
                if namespaceLists[ns].head != -1 || namespaceLists[ns].tail != -1 { v.append("\(name): has list ends") }
            } else {
                if !namespaceQueues[ns].items.isEmpty { v.append("recency queue of namespace slot \(ns): holds items under \(namespaceLists[ns].eviction.rawValue)") }
                list = walk(namespaceLists[ns], "recency list of namespace slot \(ns)", into: &v)
            }
            inNamespaces += list.count
            for s in list where !entries[Int(s)].live || entries[Int(s)].namespace != Int32(ns) {
                v.append("recency list of namespace slot \(ns): holds slot \(s), which is "
                         + (entries[Int(s)].live ? "in namespace slot \(entries[Int(s)].namespace)" : "dead"))
            }
            if list.allSatisfy({ entries[Int($0)].live && entries[Int($0)].namespace == Int32(ns) }) {
                orderViolations(Int32(ns), list, into: &v)
            }
        }
        if inNamespaces != live { v.append("namespace recency lists: hold \(inNamespaces) entries in all, \(live) are live") }
        if ranks.count != entries.count { v.append("entry store: \(ranks.count) ranks for \(entries.count) slots") }
        return v
    }

    /// Checks that a namespace's list is in its policy's order: LRU by recency stamp; FIFO and
    /// SIEVE by rank stamp (SIEVE: visited bits 0 or 1, the hand on an entry of the list or -1);
    /// LFU by uses, then rank stamp, each run of equal uses one bucket whose ends are the run's.
    private func orderViolations(_ ns: Int32, _ list: [Int32], into v: inout [String]) {
        let state = namespaceLists[Int(ns)]
        let name = "\(state.eviction.rawValue) list of namespace slot \(ns)"
        guard ranks.count == entries.count else { return }
        var previous: Int32 = -1
        for s in list {
            let r = ranks[Int(s)]
            if state.eviction != .lru && r.stamp >= state.nextRank {
                v.append("\(name): rank stamp \(r.stamp) of slot \(s) is not below the next rank \(state.nextRank)")
            }
            defer { previous = s }
            switch state.eviction {
            case .lru:
                if previous >= 0 && entries[Int(s)].recency <= entries[Int(previous)].recency {
                    v.append("\(name): slot \(s) is less recent than slot \(previous) before it")
                }
            case .fifo, .sieve:
                if state.eviction == .sieve && r.uses > 1 { v.append("\(name): slot \(s) has visited bit \(r.uses)") }
                if previous >= 0 && r.stamp <= ranks[Int(previous)].stamp {
                    v.append("\(name): slot \(s) (stamp \(r.stamp)) follows slot \(previous) (stamp \(ranks[Int(previous)].stamp))")
                }
            case .lfu:
                guard r.bucket >= 0, Int(r.bucket) < buckets.count else {
                    v.append("\(name): slot \(s) has no bucket"); continue
                }
                let b = buckets[Int(r.bucket)]
                if b.uses != r.uses || r.uses == 0 { v.append("\(name): slot \(s) has \(r.uses) uses, its bucket \(b.uses)") }
                let p = previous >= 0 ? ranks[Int(previous)] : nil
                let first = p == nil || p!.uses != r.uses
                if let p, (p.uses, p.stamp) >= (r.uses, r.stamp) {
                    v.append("\(name): slot \(s) (\(r.uses) uses, stamp \(r.stamp)) follows slot \(previous) (\(p.uses) uses, stamp \(p.stamp))")
                }
                if first != (b.first == s) { v.append("\(name): slot \(s) and the first of its bucket (\(b.first)) disagree") }
                if !first && p!.bucket != r.bucket { v.append("\(name): slots \(previous) and \(s) have equal uses in two buckets") }
                let next = links[Int(s)].nsNext
                let last = next < 0 || ranks[Int(next)].uses != r.uses
                if last != (b.last == s) { v.append("\(name): slot \(s) and the last of its bucket (\(b.last)) disagree") }
            }
        }
        if state.eviction == .sieve {
            if state.hand >= 0 && !list.contains(state.hand) { v.append("\(name): the hand is on slot \(state.hand), not in the list") }
        } else if state.hand != -1 {
            v.append("\(name): has a hand (\(state.hand))")
        }
    }

    /// The slots of a queue's current items in order, noting stamps out of order or not below
    /// `nextRecency`, a slot current twice, a head past the end and a queue longer than its
    /// compaction allows for `current` entries.
    private func queueViolations(_ queue: RecencyQueue, _ name: String, current: Int, into v: inout [String]) -> [Int32] {
        var out: [Int32] = []
        guard queue.head >= 0, queue.head <= queue.items.count else {
            v.append("\(name): head \(queue.head) outside its \(queue.items.count) items"); return out
        }
        if queue.needsCompaction(current: current) {
            v.append("\(name): \(queue.items.count) items for \(current) entries, not compacted")
        }
        var seen = Set<Int32>()
        var last: UInt64?
        for item in queue.items[queue.head...] {
            guard item.slot >= 0, Int(item.slot) < entries.count else {
                v.append("\(name): item of slot \(item.slot), out of range"); continue
            }
            if let last, item.stamp <= last { v.append("\(name): stamp \(item.stamp) of slot \(item.slot) follows stamp \(last)") }
            if item.stamp >= nextRecency { v.append("\(name): stamp \(item.stamp) of slot \(item.slot) is not below the next stamp \(nextRecency)") }
            last = item.stamp
            guard isCurrent(item) else { continue }
            if !seen.insert(item.slot).inserted { v.append("\(name): holds slot \(item.slot) twice") }
            out.append(item.slot)
        }
        return out
    }

    /// The slots of one list from head to tail, noting broken links. Stops after one more step than
    /// there are slots (a longer walk has gone round a cycle) or at a link out of range.
    private func walk(_ list: List, _ name: @autoclosure () -> String, into v: inout [String]) -> [Int32] {
        var out: [Int32] = []
        var previous: Int32 = -1
        var s = list.head
        while s >= 0 {
            guard Int(s) < entries.count else { v.append("\(name()): link to slot \(s), out of range"); return out }
            guard out.count < entries.count else { v.append("\(name()): goes round a cycle"); return out }
            let l = links[Int(s)]
            let back = l.nsPrev
            if back != previous { v.append("\(name()): slot \(s) links back to \(back), not \(previous)") }
            out.append(s)
            previous = s
            s = l.nsNext
        }
        if previous != list.tail { v.append("\(name()): ends at slot \(previous), its tail is \(list.tail)") }
        if out.count != list.count { v.append("\(name()): holds \(out.count) entries, its count is \(list.count)") }
        return out
    }
}
