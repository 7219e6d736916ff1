/// The cached entries by slot, with their orders: every entry in recency order (least recent
/// first), and each namespace in its eviction order (next victim first; SIEVE's in insertion
/// order, its victim found by a hand).
///
/// Recency is a stamp per entry (`Entry.recency`, from `nextRecency`: larger is more recent) and a
/// queue of (stamp, slot) items in stamp order, appended to by each access: an item is current
/// while its slot is live and still has that stamp, and the items an entry left behind are
/// skipped and, once they are three sevenths of the queue, dropped in one pass (O(1) amortized). So an
/// access writes the entry's stamp and appends to a queue, instead of unlinking the entry from
/// neighbours scattered over memory. The global order is such a queue; so is an LRU namespace's
/// (its victim is the first current item), but for an LRU namespace holding every live entry,
/// whose order is the global queue's (`solo`: an access then appends to one queue). FIFO, SIEVE
/// and LFU namespaces keep a doubly linked list through slot numbers (`Links`, an array of 8-byte
/// records beside the entries).
///
/// A value type held (inside the engine's `EntryTable`) in one stored property of the engine, so
/// that an operation on it (a touch, an insert, a removal) is one exclusivity-checked access of
/// the engine instead of one per field it reads or writes.
///
/// Per namespace eviction order (`Eviction`), each operation O(1):
/// - LRU: an access appends the entry to the namespace's queue (none for the `solo` namespace, whose
///   queue is the global one); the first current item is the victim.
/// - FIFO: entries stay in insertion order; the head is the victim.
/// - SIEVE: insertion order, a visited bit per entry (`Rank.uses` 0 or 1) and a hand (`List.hand`);
///   the victim search clears bits, each step of it one bit, so it is O(1) amortized.
/// - LFU: the list is sorted by (uses, when it reached them); entries of equal uses form a bucket
///   with its first and last slot, so an access moves the entry after the last of the next bucket.
struct OrderedSlots {
    /// An entry's neighbours in its namespace's list (-1: none); unused under LRU.
    struct Links {
        var nsPrev: Int32 = -1
        var nsNext: Int32 = -1
    }

    /// Slots in the order of the stamps they were given (see the type's description): the items
    /// from `head` on are live; those before were skipped and wait for the next compaction.
    ///
    /// An item holds no stamp: the global queue's items are bare slots, an item current while its
    /// slot's `Place.global` is the item's index; an LRU namespace's items carry the index their
    /// slot's global item had when they were appended (`NamespaceItem`), current while it still
    /// has it. So an item takes 4 bytes in the global queue and 8 in a namespace's, where a stamp
    /// and a slot took 16 in each.
    struct RecencyQueue<Item> {
        var items: [Item] = []
        var head = 0

        @inline(__always)
        mutating func append(_ item: Item) {
            items.append(item)
        }

        /// Whether the queue holds so many items that it should drop the stale ones: more than
        /// 1.75 times the `current` entries it orders, plus a little. (At 1.5 times, the
        /// compactions of a run of gets at 1 M entries cost some 250 instructions a get; the room
        /// for a quarter more items costs at most 3 bytes an entry.)
        /// (Shifts, not divisions: a count is never negative, and a signed division by 2 or 4
        /// adds the instructions that round a negative one towards zero; this runs twice a put.)
        @inline(__always)
        static func limit(current: Int) -> Int {
            current &+ (current &>> 1) &+ (current &>> 2) &+ 64
        }

        @inline(__always)
        func needsCompaction(current: Int) -> Bool {
            items.count > Self.limit(current: current)
        }
    }

    /// An item of an LRU namespace's queue: its slot, and the index of the slot's item in the
    /// global queue when it was appended (renumbered when the global queue is compacted).
    struct NamespaceItem {
        var global: UInt32
        var slot: Int32
    }

    /// Where a slot's state lives beside its entry: the index of its current item in the global
    /// queue (`UInt32.max` for a dead slot; the global queue holds at most 1.75 times the 2^31
    /// slots plus 65 items, below `UInt32.max`). 4 bytes a slot; the index of its `Side` record,
    /// which only entries outside LRU have, is in `sideIndex`.
    struct Place {
        var global: UInt32 = .max
    }

    /// The links and rank of an entry of a FIFO, SIEVE or LFU namespace (LRU needs neither).
    struct Side {
        var links = Links()
        var rank = Rank()
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

    // The fields below but `entries` are this type's own: internal only so that its other files
    // (OrderedSlots+Lists.swift, OrderedSlots+Invariants.swift) reach them; the engine and the entry
    // table change it through its methods.

    /// Entries by slot; a free slot holds a dead entry (`live == false`) until it is reused.
    /// Writes mark their slot for a persistent store while tracking is on (see `EntrySlots`).
    var entries = EntrySlots()
    /// The next recency stamp (see `Entry.recency`): larger is more recent.
    var nextRecency: UInt64 = 0
    /// Every live entry in recency order (see the type's description).
    var recency = RecencyQueue<Int32>()
    /// By slot, beside `entries`: where its queue item is. Whether a queue item is current is one
    /// read of this dense array, not of the entry.
    var places: [Place] = []
    /// By slot, the index of its `Side` record (-1 for none: a dead slot or an LRU namespace's
    /// entry, which needs no links or rank); empty while no slot has had one (a cache of LRU
    /// namespaces only, the usual one, pays nothing for it), then as long as `places`.
    var sideIndex: [Int32] = []
    /// The number of live entries.
    var liveCount = 0 {
        didSet { recencyLimit = RecencyQueue<Int32>.limit(current: liveCount) }
    }
    /// The global queue's compaction limit for `liveCount` (`RecencyQueue.limit`), kept as the
    /// count changes: an access compares the queue's length with it instead of working it out
    /// again (some 15 instructions a `get` hit).
    var recencyLimit = RecencyQueue<Int32>.limit(current: 0)
    /// Links and ranks of the entries outside LRU namespaces (`Place.side`); a free one is listed
    /// in `freeSides`.
    var side: [Side] = []
    var freeSides: [Int32] = []
    var buckets: [Bucket] = []
    var freeBuckets: [Int32] = []
    var freeSlots: [Int32] = []
    /// By namespace slot.
    var namespaceLists: [List] = []
    /// By namespace slot: an LRU namespace's entries in recency order; empty under other policies
    /// and for the `solo` namespace.
    var namespaceQueues: [RecencyQueue<NamespaceItem>] = []
    /// The LRU namespace that holds every live entry and keeps no queue of its own, or -1.
    ///
    /// While one LRU namespace holds every live entry, its recency order is the global one: its
    /// queue would repeat the global queue, so an access appends to the global queue only and the
    /// namespace's victim is the global queue's first current item. The slots become solo when an
    /// entry is stored while they hold none (the entry's namespace, if LRU), and stop being solo
    /// when an entry of another namespace is stored (the solo namespace's queue is then built from
    /// the global queue's current items, O(n) for n live entries) or the namespace leaves LRU; they
    /// do not become solo again until they hold no entry. This stays O(1) amortized: the slots
    /// became solo when they were empty, so the n entries the build orders were all stored since then,
    /// and no build happens again before as many entries are stored anew (the global queue's
    /// length is at most 1.75 n + 65, so the build's pass is O(n + 1)).
    var solo: Int32 = -1

    /// The index of a slot's `Side` record (the slot must have one).
    @inline(__always)
    func sx(_ slot: Int) -> Int { Int(sideIndex[slot]) }

    /// The index of a slot's `Side` record, or -1 when it has none.
    @inline(__always)
    func sideOf(_ slot: Int) -> Int32 { sideIndex.isEmpty ? -1 : sideIndex[slot] }

    /// Eviction state by slot (a default rank for an entry of an LRU namespace or a dead slot).
    var ranks: Ranks { Ranks(sideIndex: sideIndex, side: side) }

    /// The ranks by slot, read through the slots' side records.
    struct Ranks {
        fileprivate let sideIndex: [Int32]
        fileprivate let side: [Side]
        subscript(slot: Int) -> Rank {
            let k = sideIndex.isEmpty ? -1 : sideIndex[slot]
            return k >= 0 ? side[Int(k)].rank : Rank()
        }
    }

    /// Gives a slot a `Side` record of its own, reset, unless it has one (which is left as it is).
    mutating func ensureSide(_ slot: Int32) {
        if sideIndex.isEmpty { sideIndex = Array(repeating: -1, count: places.count) }
        guard sideIndex[Int(slot)] < 0 else { return }
        if let free = freeSides.popLast() {
            side[Int(free)] = Side()
            sideIndex[Int(slot)] = free
        } else {
            sideIndex[Int(slot)] = Int32(side.count)
            side.append(Side())
        }
    }

    /// Frees a slot's `Side` record, if it has one.
    private mutating func releaseSide(_ slot: Int32) {
        let k = sideOf(Int(slot))
        guard k >= 0 else { return }
        freeSides.append(k)
        sideIndex[Int(slot)] = -1
    }

    /// No slots, for `namespaceCount` namespaces, each LRU.
    init(namespaceCount: Int = 0) {
        namespaceLists = Array(repeating: List(), count: namespaceCount)
        namespaceQueues = Array(repeating: RecencyQueue<NamespaceItem>(), count: namespaceCount)
    }

    /// Makes room for the list of one more namespace (the next namespace slot), LRU.
    mutating func addNamespace() {
        namespaceLists.append(List())
        namespaceQueues.append(RecencyQueue<NamespaceItem>())
    }

    /// The number of namespaces with a list (the next namespace slot).
    var namespaceCount: Int { namespaceLists.count }

    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(n)
        HugePages.reserve(&places, n)
        recency.items.reserveCapacity(n)
    }

    /// The number of entries in a namespace.
    func count(inNamespace ns: Int32) -> Int { namespaceLists[Int(ns)].count }

    /// A namespace's eviction policy.
    func eviction(ofNamespace ns: Int32) -> Eviction { namespaceLists[Int(ns)].eviction }

    /// By namespace slot, whether its policy is LRU.
    var lruNamespaces: [Bool] { namespaceLists.map { $0.eviction == .lru } }

    /// SIEVE: the entry a namespace's hand rests on, or -1 (the next search starts at the oldest).
    func hand(ofNamespace ns: Int32) -> Int32 { namespaceLists[Int(ns)].hand }

    /// The rank stamp a namespace gives next.
    func nextRank(ofNamespace ns: Int32) -> UInt64 { namespaceLists[Int(ns)].nextRank }

    /// Stores an entry as the most recently used and as its namespace's policy places a new
    /// entry, in a free slot if there is one.
    /// - Complexity: O(1) amortized.
    mutating func insert(_ entry: consuming Entry) -> Int32 {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            entries[Int(free)] = consume entry
        } else {
            slot = Int32(entries.count)
            entries.append(consume entry)
            HugePages.makeRoomForAppend(&places)
            places.append(Place())
            if !sideIndex.isEmpty { sideIndex.append(-1) }
        }
        let ns = entries[Int(slot)].namespace
        if solo >= 0 ? ns != solo : liveCount == 0 { changeSolo(storing: ns) }
        liveCount += 1
        stampMostRecent(slot)
        placeNew(slot)
        return slot
    }

    /// Replaces the least recent entry of an LRU namespace, `slot`, by a new entry of the same
    /// namespace in the same slot: what `remove(slot)` followed by `insert(entry)` leaves in the
    /// lists (the new entry the most recent, globally and in its namespace; the namespace's count
    /// and rank stamp as they would be), with no slot freed and taken again and no count lowered
    /// and raised. The victim's queue items are left behind, stale (its slot's place names the
    /// new entry's item), as a touch leaves an entry's older items.
    /// - Returns: the victim's key and tags, for the engine's indexes to forget.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func replace(_ slot: Int32, with entry: consuming Entry) -> (key: String, tags: [String]) {
        let i = Int(slot)
        let ns = Int(entries[i].namespace)
        assert(entry.namespace == Int32(ns) && namespaceLists[ns].eviction == .lru && sideOf(i) < 0,
               "a replacement is of an entry of the same LRU namespace")
        // The key is moved out, not copied (as `remove` does); the assignment drops the rest of
        // the victim (its value, its record out of line).
        let removed = (entries[i].takeKey(), entries[i].tags)
        entries[i] = consume entry
        // One entry out of the namespace and one in: its count stays; the rank stamp `placeNew`
        // takes (unused under LRU, but saved with the namespace) is taken.
        namespaceLists[ns].nextRank &+= 1
        stampMostRecent(slot)
        if Int32(truncatingIfNeeded: ns) != solo { appendToNamespaceQueue(slot, ns) }
        return removed
    }

    /// Takes an entry out of both lists and frees its slot: the entry is marked dead, its value,
    /// tags and out-of-line fields (mutation log included) are dropped. SIEVE's hand, when on it, moves to the entry after it.
    /// - Returns: what the engine's indexes need to forget it.
    /// - Complexity: O(1).
    mutating func remove(_ slot: Int32) -> (key: String, tags: [String]) {
        leaveNamespace(slot)
        liveCount -= 1
        let i = Int(slot)
        // The key is moved out, not copied (the dead slot holds an empty one): no retain of it
        // here and no release when the slot is reused.
        let removed = (entries[i].takeKey(), entries[i].tags)
        entries[i].live = false
        entries[i].releaseContents()
        releaseSide(slot)
        places[i].global = .max
        freeSlots.append(slot)
        if recency.items.count > recencyLimit { compactGlobal() }
        return removed
    }

    /// An access (SPEC §1.1 Eviction): the entry becomes the most recently used, and its
    /// namespace's policy notes it (LRU: last to go; FIFO: nothing; SIEVE: visited; LFU: one more use).
    ///
    /// LRU's access, the usual one, is inlined into its caller (a get hit: a call, its saved
    /// registers and the switch on the policy were some 30 instructions of it); an entry of the
    /// solo namespace, always LRU, is known to be one without reading its namespace's list.
    /// - Complexity: O(1).
    @inline(__always)
    mutating func touch(_ slot: Int32) {
        touch(slot, namespace: entries[Int(slot)].namespace)
    }

    /// `touch` of an entry whose namespace slot, `ns`, the caller has read.
    @inline(__always)
    mutating func touch(_ slot: Int32, namespace ns: Int32) {
        guard ns == solo || namespaceLists[Int(ns)].eviction == .lru else { return touchListed(slot) }
        // The most recent of all is the most recent of its namespace too.
        if entries[Int(slot)].recency &+ 1 == nextRecency { return }
        stampMostRecent(slot)
        if ns != solo { appendToNamespaceQueue(slot, Int(ns)) }
    }

    /// `touch` of an entry of a FIFO, SIEVE or LFU namespace.
    @inline(never)
    private mutating func touchListed(_ slot: Int32) {
        let ns = Int(entries[Int(slot)].namespace)
        switch namespaceLists[ns].eviction {
        case .lru:
            preconditionFailure("an LRU namespace's access is touch's own")
        case .fifo:
            moveToGlobalTail(slot)
        case .sieve:
            moveToGlobalTail(slot)
            if side[sx(Int(slot))].rank.uses == 0 {
                side[sx(Int(slot))].rank.uses = 1
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
            return list.head == sparing ? side[sx(Int(list.head))].links.nsNext : list.head
        case .sieve:
            var p = list.hand >= 0 ? list.hand : list.head
            // Each turn clears a visited bit or passes the spared entry: at most count + 2 turns.
            for _ in 0...(list.count + 2) {
                if p != sparing {
                    if side[sx(Int(p))].rank.uses == 0 { break }
                    side[sx(Int(p))].rank.uses = 0
                    entries.markChanged(Int(p))
                }
                let next = side[sx(Int(p))].links.nsNext
                p = next >= 0 ? next : list.head
            }
            var hand = side[sx(Int(p))].links.nsNext
            if hand >= 0 && hand == sparing { hand = side[sx(Int(hand))].links.nsNext }
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
        if ns == solo { solo = -1 }
        if namespaceLists[n].eviction == .lfu {
            var freed = Set<Int32>()
            for s in members where freed.insert(side[sx(Int(s))].rank.bucket).inserted { freeBuckets.append(side[sx(Int(s))].rank.bucket) }
        }
        namespaceLists[n] = List(eviction: eviction)
        namespaceQueues[n] = RecencyQueue()
        for s in members {
            if eviction == .lru {
                releaseSide(s)
            } else {
                ensureSide(s)
                side[sx(Int(s))].rank = Rank()
            }
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
        if ns == solo && eviction != .lru { solo = -1 }
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
            if eviction == .lru { releaseSide(s) } else { ensureSide(s) }
            linkLast(s)
            if rank.stamp >= namespaceLists[n].nextRank { namespaceLists[n].nextRank = rank.stamp &+ 1 }
            guard eviction != .lru else { continue }
            side[sx(i)].rank = Rank(stamp: rank.stamp, uses: rank.uses, bucket: -1)
            guard eviction == .lfu else { continue }
            let previous = side[sx(i)].links.nsPrev
            if previous >= 0 && side[sx(Int(previous))].rank.uses == rank.uses {
                let b = side[sx(Int(previous))].rank.bucket
                buckets[Int(b)].last = s
                side[sx(i)].rank.bucket = b
            } else {
                side[sx(i)].rank.bucket = newBucket(rank.uses, s)
            }
        }
        if eviction == .sieve && hand >= 0 && entries[Int(hand)].live && entries[Int(hand)].namespace == ns {
            namespaceLists[n].hand = hand
        }
    }
}
