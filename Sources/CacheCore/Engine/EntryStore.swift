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
struct EntryStore {
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
        @inline(__always)
        static func limit(current: Int) -> Int {
            current + current / 2 + current / 4 + 64
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
    /// slots plus 65 items, below `UInt32.max`), and outside LRU the index of its `Side` record
    /// (-1 for none: a dead slot or an LRU namespace's entry, which needs no links or rank).
    struct Place {
        var global: UInt32 = .max
        var side: Int32 = -1
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

    /// Entries by slot; a free slot holds a dead entry (`live == false`) until it is reused.
    /// Writes mark their slot for a persistent store while tracking is on (see `EntrySlots`).
    var entries = EntrySlots()
    /// The next recency stamp (see `Entry.recency`): larger is more recent.
    private(set) var nextRecency: UInt64 = 0
    /// Every live entry in recency order (see the type's description).
    private var recency = RecencyQueue<Int32>()
    /// By slot, beside `entries`: where its queue item and its links and rank are. Whether a queue
    /// item is current is one read of this dense array, not of the entry.
    private var places: [Place] = []
    /// The number of live entries.
    private var liveCount = 0 {
        didSet { recencyLimit = RecencyQueue<Int32>.limit(current: liveCount) }
    }
    /// The global queue's compaction limit for `liveCount` (`RecencyQueue.limit`), kept as the
    /// count changes: an access compares the queue's length with it instead of working it out
    /// again (some 15 instructions a `get` hit).
    private var recencyLimit = RecencyQueue<Int32>.limit(current: 0)
    /// Links and ranks of the entries outside LRU namespaces (`Place.side`); a free one is listed
    /// in `freeSides`.
    private var side: [Side] = []
    private var freeSides: [Int32] = []
    private var buckets: [Bucket] = []
    private var freeBuckets: [Int32] = []
    private var freeSlots: [Int32] = []
    /// By namespace slot.
    private var namespaceLists: [List] = []
    /// By namespace slot: an LRU namespace's entries in recency order; empty under other policies
    /// and for the `solo` namespace.
    private var namespaceQueues: [RecencyQueue<NamespaceItem>] = []
    /// The LRU namespace that holds every live entry and keeps no queue of its own, or -1.
    ///
    /// While one LRU namespace holds every live entry, its recency order is the global one: its
    /// queue would repeat the global queue, so an access appends to the global queue only and the
    /// namespace's victim is the global queue's first current item. The store becomes solo when an
    /// entry is stored while it holds none (the entry's namespace, if LRU), and stops being solo
    /// when an entry of another namespace is stored (the solo namespace's queue is then built from
    /// the global queue's current items, O(n) for n live entries) or the namespace leaves LRU; it
    /// does not become solo again until it holds no entry. This stays O(1) amortized: the store
    /// became solo when it was empty, so the n entries the build orders were all stored since then,
    /// and no build happens again before as many entries are stored anew (the global queue's
    /// length is at most 1.75 n + 65, so the build's pass is O(n + 1)).
    private var solo: Int32 = -1

    /// The index of a slot's `Side` record (the slot must have one).
    @inline(__always)
    private func sx(_ slot: Int) -> Int { Int(places[slot].side) }

    /// Eviction state by slot (a default rank for an entry of an LRU namespace or a dead slot).
    var ranks: Ranks { Ranks(places: places, side: side) }

    /// The ranks by slot, read through the slots' places.
    struct Ranks {
        fileprivate let places: [Place]
        fileprivate let side: [Side]
        subscript(slot: Int) -> Rank {
            let k = places[slot].side
            return k >= 0 ? side[Int(k)].rank : Rank()
        }
    }

    /// Gives a slot a `Side` record of its own, reset, unless it has one (which is left as it is).
    private mutating func ensureSide(_ slot: Int32) {
        guard places[Int(slot)].side < 0 else { return }
        if let free = freeSides.popLast() {
            side[Int(free)] = Side()
            places[Int(slot)].side = free
        } else {
            places[Int(slot)].side = Int32(side.count)
            side.append(Side())
        }
    }

    /// Frees a slot's `Side` record, if it has one.
    private mutating func releaseSide(_ slot: Int32) {
        let k = places[Int(slot)].side
        guard k >= 0 else { return }
        freeSides.append(k)
        places[Int(slot)].side = -1
    }

    /// An empty store for `namespaceCount` namespaces, each LRU.
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

    /// SIEVE: the entry a namespace's hand rests on, or -1 (the next search starts at the oldest).
    func hand(ofNamespace ns: Int32) -> Int32 { namespaceLists[Int(ns)].hand }

    /// The rank stamp a namespace gives next.
    func nextRank(ofNamespace ns: Int32) -> UInt64 { namespaceLists[Int(ns)].nextRank }

    /// Stores an entry as the most recently used and as its namespace's policy places a new
    /// entry, in a free slot if there is one (its generation then follows the slot's last one).
    /// - Complexity: O(1) amortized.
    mutating func insert(_ entry: consuming Entry) -> Int32 {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            // Moved in, then changed in place: a consuming parameter changed before it is moved
            // is copied (its references retained and released again).
            let generation = entries[Int(free)].generation &+ 1
            entries[Int(free)] = consume entry
            entries[Int(free)].generation = generation
        } else {
            slot = Int32(entries.count)
            entries.append(consume entry)
            HugePages.makeRoomForAppend(&places)
            places.append(Place())
        }
        let ns = entries[Int(slot)].namespace
        if solo >= 0 ? ns != solo : liveCount == 0 { changeSolo(storing: ns) }
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
        let ns = entries[Int(slot)].namespace
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

    // MARK: Lists

    /// Places a new entry (or one re-placed by a policy change) in its namespace's list: last,
    /// unvisited under SIEVE; LFU: last of the entries with one use.
    private mutating func placeNew(_ slot: Int32) {
        let i = Int(slot)
        let ns = Int(entries[i].namespace)
        let stamp = namespaceLists[ns].nextRank
        namespaceLists[ns].nextRank &+= 1
        switch namespaceLists[ns].eviction {
        case .lru:
            linkLast(slot)
        case .fifo, .sieve:
            ensureSide(slot)
            side[sx(i)].rank.stamp = stamp
            side[sx(i)].rank.uses = 0
            linkLast(slot)
        case .lfu:
            ensureSide(slot)
            side[sx(i)].rank.stamp = stamp
            side[sx(i)].rank.uses = 1
            let head = namespaceLists[ns].head
            if head >= 0 && side[sx(Int(head))].rank.uses == 1 {
                let b = side[sx(Int(head))].rank.bucket
                linkNamespace(slot, after: buckets[Int(b)].last)
                buckets[Int(b)].last = slot
                side[sx(i)].rank.bucket = b
            } else {
                linkNamespace(slot, after: -1)
                side[sx(i)].rank.bucket = newBucket(1, slot)
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
            if namespaceLists[ns].hand == slot { namespaceLists[ns].hand = side[sx(i)].links.nsNext }
        case .lfu:
            let b = Int(side[sx(i)].rank.bucket)
            if buckets[b].first == slot && buckets[b].last == slot {
                freeBuckets.append(Int32(b))
            } else if buckets[b].first == slot {
                buckets[b].first = side[sx(i)].links.nsNext
            } else if buckets[b].last == slot {
                buckets[b].last = side[sx(i)].links.nsPrev
            }
        }
        unlinkNamespace(slot)
    }

    /// LFU: one more use; the entry goes last among those with as many.
    private mutating func useOnce(_ slot: Int32) {
        let i = Int(slot)
        let b = Int(side[sx(i)].rank.bucket)
        let uses = buckets[b].uses &+ 1
        let last = buckets[b].last
        let after = side[sx(Int(last))].links.nsNext
        var target: Int32 = -1
        var anchor = last
        if after >= 0 && buckets[Int(side[sx(Int(after))].rank.bucket)].uses == uses {
            target = side[sx(Int(after))].rank.bucket
            anchor = buckets[Int(target)].last
        }
        if buckets[b].first == slot && last == slot {
            freeBuckets.append(Int32(b))
        } else if buckets[b].first == slot {
            buckets[b].first = side[sx(i)].links.nsNext
        } else if last == slot {
            buckets[b].last = side[sx(i)].links.nsPrev
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
        side[sx(i)].rank = Rank(stamp: namespaceLists[ns].nextRank, uses: uses, bucket: target)
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
        guard entries[Int(slot)].recency &+ 1 != nextRecency else { return }
        stampMostRecent(slot)
    }

    /// Makes a live slot the most recent of all: a new recency stamp (which marks it moved for a
    /// store) and an item at the end of the global queue.
    @inline(__always)
    private mutating func stampMostRecent(_ slot: Int32) {
        let stamp = nextRecency
        entries.setRecency(Int(slot), stamp)
        places[Int(slot)].global = UInt32(truncatingIfNeeded: recency.items.count)
        nextRecency = stamp &+ 1
        recency.append(slot)
        if recency.items.count > recencyLimit { compactGlobal() }
    }

    /// Appends a slot, just stamped, to its LRU namespace's queue.
    @inline(__always)
    private mutating func appendToNamespaceQueue(_ slot: Int32, _ ns: Int) {
        namespaceQueues[ns].append(NamespaceItem(global: places[Int(slot)].global, slot: slot))
        if namespaceQueues[ns].needsCompaction(current: namespaceLists[ns].count) { compactNamespace(ns) }
    }

    /// Puts a slot last in its namespace's order: under LRU at the end of its queue with its
    /// current stamp, else linked after the tail.
    private mutating func linkLast(_ slot: Int32) {
        let ns = Int(entries[Int(slot)].namespace)
        if namespaceLists[ns].eviction == .lru {
            namespaceLists[ns].count += 1
            if Int32(truncatingIfNeeded: ns) != solo { appendToNamespaceQueue(slot, ns) }
        } else {
            linkNamespace(slot, after: namespaceLists[ns].tail)
        }
    }

    /// Whether the global queue's item at index `q` is current: its slot is live and has not
    /// been given a newer item since.
    @inline(__always)
    private func isCurrent(_ q: Int) -> Bool {
        places[Int(recency.items[q])].global == UInt32(truncatingIfNeeded: q)
    }

    /// Whether an LRU namespace's queue item is current: its slot's global item is still the one
    /// it was appended with.
    @inline(__always)
    private func isCurrent(_ item: NamespaceItem) -> Bool {
        places[Int(item.slot)].global == item.global
    }

    /// LRU: the least recent entry of a namespace other than `sparing` (or `sparing` when it is
    /// the only one); drops the stale items it passes at the head of the queue.
    /// - Complexity: O(1) amortized (each item is passed at the head once).
    private mutating func lruVictim(_ n: Int, sparing: Int32) -> Int32? {
        let count = namespaceLists[n].count
        if Int32(truncatingIfNeeded: n) == solo {
            // Its order is the global queue's: the same search there.
            var q = recency.head
            let end = recency.items.count
            while q < end && !isCurrent(q) { q += 1 }
            recency.head = q
            guard q < end else { return nil }
            let first = recency.items[q]
            guard first == sparing && count > 1 else { return first }
            q += 1
            while q < end && !isCurrent(q) { q += 1 }
            return q < end ? recency.items[q] : first
        }
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

    /// Before an entry of namespace `ns` is stored: an empty store becomes solo in `ns` if it is
    /// LRU (its queue, whose items are all stale, emptied), else not solo; a solo store gets an
    /// entry of another namespace, so the solo namespace's queue is built from the global one.
    /// - Complexity: O(1) when the store is empty, else O(n) for n live entries (see `solo`).
    private mutating func changeSolo(storing ns: Int32) {
        if liveCount == 0 {
            solo = namespaceLists[Int(ns)].eviction == .lru ? ns : -1
            if solo >= 0 { namespaceQueues[Int(ns)] = RecencyQueue() }
            return
        }
        let n = Int(solo)
        solo = -1
        var queue = RecencyQueue<NamespaceItem>()
        queue.items.reserveCapacity(RecencyQueue<NamespaceItem>.limit(current: namespaceLists[n].count) + 1)
        for q in recency.head..<recency.items.count where isCurrent(q) {
            queue.items.append(NamespaceItem(global: UInt32(truncatingIfNeeded: q), slot: recency.items[q]))
        }
        namespaceQueues[n] = queue
    }

    /// Drops the stale items of the global queue, renumbering the current ones; the LRU
    /// namespaces' queues drop their stale items too and follow the new numbers.
    ///
    /// One pass over each queue, in place: the global one notes each kept item's new index by its
    /// old one (`remap`, for this call only); a namespace's item is current exactly when the
    /// global item it names is (it was appended with its slot's global item), so its pass reads
    /// that note, in increasing order, instead of the slot's place. (Three passes, two of them
    /// over the namespace queues reading places scattered over memory, cost some 180
    /// instructions a get at 100k entries.)
    /// - Complexity: O(items of all queues), after at least three quarters as many appends or
    ///   removals as the global queue keeps.
    private mutating func compactGlobal() {
        let renumbers = namespaceQueues.contains { !$0.items.isEmpty }
        let old = recency.items.count
        var remap = renumbers ? [UInt32](repeating: .max, count: old) : []
        var kept = 0
        let head = recency.head
        places.withUnsafeMutableBufferPointer { places in
            recency.items.withUnsafeMutableBufferPointer { items in
                remap.withUnsafeMutableBufferPointer { remap in
                    for q in head..<items.count {
                        let s = Int(items[q])
                        guard places[s].global == UInt32(truncatingIfNeeded: q) else { continue }
                        let w = UInt32(truncatingIfNeeded: kept)
                        places[s].global = w
                        items[kept] = Int32(truncatingIfNeeded: s)
                        if renumbers { remap[q] = w }
                        kept += 1
                    }
                }
            }
        }
        recency.items.removeLast(old - kept)
        recency.head = 0
        Self.shrinkIfOversized(&recency, current: liveCount)
        guard renumbers else { return }
        for n in namespaceQueues.indices where !namespaceQueues[n].items.isEmpty {
            let qhead = namespaceQueues[n].head
            var w = 0
            namespaceQueues[n].items.withUnsafeMutableBufferPointer { items in
                for q in qhead..<items.count {
                    let g = Int(items[q].global)
                    guard g < remap.count, remap[g] != .max else { continue }
                    items[w] = NamespaceItem(global: remap[g], slot: items[q].slot)
                    w += 1
                }
            }
            namespaceQueues[n].items.removeLast(namespaceQueues[n].items.count - w)
            namespaceQueues[n].head = 0
            Self.shrinkIfOversized(&namespaceQueues[n], current: namespaceLists[n].count)
        }
    }

    /// Drops the stale items of an LRU namespace's queue, in place.
    private mutating func compactNamespace(_ n: Int) {
        let qhead = namespaceQueues[n].head
        var w = 0
        places.withUnsafeBufferPointer { places in
            namespaceQueues[n].items.withUnsafeMutableBufferPointer { items in
                for q in qhead..<items.count where places[Int(items[q].slot)].global == items[q].global {
                    items[w] = items[q]
                    w += 1
                }
            }
        }
        namespaceQueues[n].items.removeLast(namespaceQueues[n].items.count - w)
        namespaceQueues[n].head = 0
        Self.shrinkIfOversized(&namespaceQueues[n], current: namespaceLists[n].count)
    }

    /// Gives a queue just compacted a buffer of the room its next compaction needs when it keeps
    /// more than twice that (its entries became far fewer), so its memory follows its entries.
    private static func shrinkIfOversized<Item>(_ queue: inout RecencyQueue<Item>, current: Int) {
        let room = RecencyQueue<Item>.limit(current: current) + 1
        guard queue.items.capacity > 2 * room else { return }
        var items: [Item] = []
        items.reserveCapacity(room)
        items.append(contentsOf: queue.items)
        queue.items = items
    }

    /// Replaces the recency stamps of slots 0..<k (entries just inserted in recency order) with
    /// `stamps`, increasing, and rebuilds the queues on them.
    /// - Complexity: O(n) for n slots.
    mutating func restoreRecencies(_ saved: [UInt64]) {
        let order = recencyOrder()
        for (i, stamp) in saved.enumerated() {
            entries[i].recency = stamp
        }
        nextRecency = (saved.last ?? 0) &+ 1
        recency = RecencyQueue()
        for s in order {
            places[Int(s)].global = UInt32(truncatingIfNeeded: recency.items.count)
            recency.append(s)
        }
        for n in namespaceQueues.indices where namespaceLists[n].eviction == .lru {
            namespaceQueues[n] = RecencyQueue()
        }
        for s in order {
            let ns = Int(entries[Int(s)].namespace)
            if namespaceLists[ns].eviction == .lru && Int32(ns) != solo { namespaceQueues[ns].append(NamespaceItem(global: places[Int(s)].global, slot: s)) }
        }
    }

    /// Links a slot into its namespace's list after `anchor` (-1: first).
    private mutating func linkNamespace(_ slot: Int32, after anchor: Int32) {
        let i = Int(slot)
        let ns = Int(entries[i].namespace)
        let next = anchor >= 0 ? side[sx(Int(anchor))].links.nsNext : namespaceLists[ns].head
        side[sx(i)].links.nsPrev = anchor
        side[sx(i)].links.nsNext = next
        if anchor >= 0 { side[sx(Int(anchor))].links.nsNext = slot } else { namespaceLists[ns].head = slot }
        if next >= 0 { side[sx(Int(next))].links.nsPrev = slot } else { namespaceLists[ns].tail = slot }
        namespaceLists[ns].count += 1
    }

    private mutating func unlinkNamespace(_ slot: Int32) {
        let l = side[sx(Int(slot))].links
        let ns = Int(entries[Int(slot)].namespace)
        if l.nsPrev >= 0 { side[sx(Int(l.nsPrev))].links.nsNext = l.nsNext } else { namespaceLists[ns].head = l.nsNext }
        if l.nsNext >= 0 { side[sx(Int(l.nsNext))].links.nsPrev = l.nsPrev } else { namespaceLists[ns].tail = l.nsPrev }
        namespaceLists[ns].count -= 1
    }

    /// Slots of every entry in global recency order, least recent first.
    /// - Complexity: O(n).
    func recencyOrder() -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(liveCount)
        for q in recency.head..<recency.items.count where isCurrent(q) { out.append(recency.items[q]) }
        return out
    }

    /// Slots of one namespace in its list's order (LRU: least recent first; FIFO, SIEVE: oldest
    /// first; LFU: fewest uses first).
    /// - Complexity: O(entries in the namespace).
    func slots(inNamespace ns: Int32) -> [Int32] {
        if ns == solo { return recencyOrder() }
        var out: [Int32] = []
        out.reserveCapacity(namespaceLists[Int(ns)].count)
        if namespaceLists[Int(ns)].eviction == .lru {
            let queue = namespaceQueues[Int(ns)]
            for q in queue.head..<queue.items.count where isCurrent(queue.items[q]) { out.append(queue.items[q].slot) }
            return out
        }
        var s = namespaceLists[Int(ns)].head
        while s >= 0 { out.append(s); s = side[sx(Int(s))].links.nsNext }
        return out
    }
}

// MARK: - Invariants

extension EntryStore {
    /// What is wrong with the store, one message per broken rule; empty when it is sound:
    /// - there is one place per slot, and every live entry's namespace has a list;
    /// - the free slots are exactly the dead ones, each listed once;
    /// - a live slot's place names its item in the global queue, a dead slot's none; exactly the
    ///   live entries outside LRU namespaces have a `Side` record, each their own, and the free
    ///   records are the others;
    /// - the recency stamps of the global queue's current items strictly increase, below
    ///   `nextRecency`; they are every live entry once; it is compacted as promised (`needsCompaction`);
    /// - each LRU namespace's queue likewise, for the live entries of that namespace, but for the
    ///   `solo` namespace (if any): it is LRU, holds every live entry, its queue is empty and its
    ///   order is the global queue's; each other
    ///   namespace's list is doubly linked both ways, ends at its `tail` and holds `count` entries,
    ///   exactly the live entries of that namespace.
    /// - Complexity: O(n) for n slots.
    func invariantViolations() -> [String] {
        var v: [String] = []
        guard places.count == entries.count else {
            return ["entry store: \(places.count) places for \(entries.count) slots"]
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

        var sides = Set<Int32>()
        for i in entries.indices {
            let place = places[i]
            let e = entries[i]
            if !e.live {
                if place.global != .max { v.append("entry store: dead slot \(i) has a queue item") }
            } else if Int(place.global) >= recency.items.count || recency.items[Int(place.global)] != Int32(i) {
                v.append("entry store: slot \(i) (\(e.key)) names item \(place.global) of the global queue, not its own")
            }
            let wantsSide = e.live && Int(e.namespace) < namespaceLists.count && namespaceLists[Int(e.namespace)].eviction != .lru
            if (place.side >= 0) != wantsSide {
                v.append("entry store: slot \(i) " + (wantsSide ? "has no links and rank" : "has links and a rank it does not need"))
            }
            guard place.side >= 0 else { continue }
            if Int(place.side) >= side.count { v.append("entry store: slot \(i) has side record \(place.side), out of range") }
            if !sides.insert(place.side).inserted { v.append("entry store: side record \(place.side) is shared") }
        }
        let freeSet = Set(freeSides)
        if freeSet.count != freeSides.count || !freeSet.isDisjoint(with: sides) || freeSet.count + sides.count != side.count {
            v.append("entry store: \(side.count) side records, \(sides.count) used and \(freeSides.count) listed free")
        }
        if v.contains(where: { $0.hasPrefix("entry store: slot") }) { return v }

        let global = queueViolations(recency.items.indices.map { (recency.items[$0], inRange(recency.items[$0]) && isCurrent($0)) },
                                     head: recency.head,
                                     "global recency queue", current: live, into: &v)
        if liveCount != live { v.append("entry store: counts \(liveCount) live entries, \(live) are live") }
        if recencyLimit != RecencyQueue<Int32>.limit(current: liveCount) {
            v.append("entry store: the global queue's limit \(recencyLimit) is not the one for \(liveCount) entries")
        }
        if global.count != live { v.append("global recency queue: holds \(global.count) current entries, \(live) are live") }

        if namespaceQueues.count != namespaceLists.count {
            v.append("entry store: \(namespaceQueues.count) namespace queues for \(namespaceLists.count) lists")
            return v
        }
        if solo != -1 {
            if solo < 0 || Int(solo) >= namespaceLists.count {
                v.append("entry store: solo namespace slot \(solo) has no list"); return v
            }
            if namespaceLists[Int(solo)].eviction != .lru {
                v.append("entry store: solo namespace slot \(solo) is \(namespaceLists[Int(solo)].eviction.rawValue), not lru")
            }
        }
        var inNamespaces = 0
        for ns in namespaceLists.indices {
            let list: [Int32]
            if Int32(ns) == solo {
                let name = "recency order of solo namespace slot \(ns)"
                list = global
                if list.count != namespaceLists[ns].count {
                    v.append("\(name): the global queue holds \(list.count) current entries, its count is \(namespaceLists[ns].count)")
                }
                if !namespaceQueues[ns].items.isEmpty || namespaceQueues[ns].head != 0 { v.append("\(name): has a queue of its own") }
                if namespaceLists[ns].head != -1 || namespaceLists[ns].tail != -1 { v.append("\(name): has list ends") }
            } else if namespaceLists[ns].eviction == .lru {
                let name = "recency queue of namespace slot \(ns)"
                let queue = namespaceQueues[ns]
                list = queueViolations(queue.items.map { ($0.slot, inRange($0.slot) && isCurrent($0)) }, head: queue.head, name,
                                       current: namespaceLists[ns].count, into: &v)
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
        return v
    }

    /// Checks that a namespace's list is in its policy's order: LRU by recency stamp; FIFO and
    /// SIEVE by rank stamp (SIEVE: visited bits 0 or 1, the hand on an entry of the list or -1);
    /// LFU by uses, then rank stamp, each run of equal uses one bucket whose ends are the run's.
    private func orderViolations(_ ns: Int32, _ list: [Int32], into v: inout [String]) {
        let state = namespaceLists[Int(ns)]
        let name = "\(state.eviction.rawValue) list of namespace slot \(ns)"
        guard state.eviction == .lru || list.allSatisfy({ places[Int($0)].side >= 0 }) else { return }
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
                if previous >= 0 && r.stamp <= side[sx(Int(previous))].rank.stamp {
                    v.append("\(name): slot \(s) (stamp \(r.stamp)) follows slot \(previous) (stamp \(side[sx(Int(previous))].rank.stamp))")
                }
            case .lfu:
                guard r.bucket >= 0, Int(r.bucket) < buckets.count else {
                    v.append("\(name): slot \(s) has no bucket"); continue
                }
                let b = buckets[Int(r.bucket)]
                if b.uses != r.uses || r.uses == 0 { v.append("\(name): slot \(s) has \(r.uses) uses, its bucket \(b.uses)") }
                let p = previous >= 0 ? side[sx(Int(previous))].rank : nil
                let first = p == nil || p!.uses != r.uses
                if let p, (p.uses, p.stamp) >= (r.uses, r.stamp) {
                    v.append("\(name): slot \(s) (\(r.uses) uses, stamp \(r.stamp)) follows slot \(previous) (\(p.uses) uses, stamp \(p.stamp))")
                }
                if first != (b.first == s) { v.append("\(name): slot \(s) and the first of its bucket (\(b.first)) disagree") }
                if !first && p!.bucket != r.bucket { v.append("\(name): slots \(previous) and \(s) have equal uses in two buckets") }
                let next = side[sx(Int(s))].links.nsNext
                let last = next < 0 || side[sx(Int(next))].rank.uses != r.uses
                if last != (b.last == s) { v.append("\(name): slot \(s) and the last of its bucket (\(b.last)) disagree") }
            }
        }
        if state.eviction == .sieve {
            if state.hand >= 0 && !list.contains(state.hand) { v.append("\(name): the hand is on slot \(state.hand), not in the list") }
        } else if state.hand != -1 {
            v.append("\(name): has a hand (\(state.hand))")
        }
    }

    /// The slots of a queue's current items in order (the queue's items as slots and whether each
    /// is current, from index 0), noting recency stamps of current items out of order or not below
    /// `nextRecency`, a slot current twice, a head past the end and a queue longer than its
    /// compaction allows for `current` entries.
    private func queueViolations(_ items: [(slot: Int32, current: Bool)], head: Int, _ name: String, current: Int,
                                 into v: inout [String]) -> [Int32] {
        var out: [Int32] = []
        guard head >= 0, head <= items.count else {
            v.append("\(name): head \(head) outside its \(items.count) items"); return out
        }
        if items.count > RecencyQueue<Int32>.limit(current: current) {
            v.append("\(name): \(items.count) items for \(current) entries, not compacted")
        }
        var seen = Set<Int32>()
        var last: UInt64?
        for item in items[head...] {
            guard item.slot >= 0, Int(item.slot) < entries.count else {
                v.append("\(name): item of slot \(item.slot), out of range"); continue
            }
            guard item.current else { continue }
            let stamp = entries[Int(item.slot)].recency
            if let last, stamp <= last { v.append("\(name): stamp \(stamp) of slot \(item.slot) follows stamp \(last)") }
            if stamp >= nextRecency { v.append("\(name): stamp \(stamp) of slot \(item.slot) is not below the next stamp \(nextRecency)") }
            last = stamp
            if !seen.insert(item.slot).inserted { v.append("\(name): holds slot \(item.slot) twice") }
            out.append(item.slot)
        }
        return out
    }

    private func inRange(_ slot: Int32) -> Bool { slot >= 0 && Int(slot) < places.count }

    /// The slots of one list from head to tail, noting broken links. Stops after one more step than
    /// there are slots (a longer walk has gone round a cycle) or at a link out of range.
    private func walk(_ list: List, _ name: @autoclosure () -> String, into v: inout [String]) -> [Int32] {
        var out: [Int32] = []
        var previous: Int32 = -1
        var s = list.head
        while s >= 0 {
            guard Int(s) < entries.count else { v.append("\(name()): link to slot \(s), out of range"); return out }
            guard out.count < entries.count else { v.append("\(name()): goes round a cycle"); return out }
            guard places[Int(s)].side >= 0 else { v.append("\(name()): slot \(s) has no links"); return out }
            let l = side[sx(Int(s))].links
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
