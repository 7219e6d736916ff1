/// The cached entries by slot, with their lists: one over every entry in recency order (least
/// recent at the head), and one per namespace in its eviction order (next victim first; SIEVE's
/// in insertion order, its victim found by a hand), both doubly linked through slot numbers.
///
/// A value type held (inside the engine's `EntryTable`) in one stored property of the engine, so
/// that an operation on it (a touch, an insert, a removal) is one exclusivity-checked access of
/// the engine instead of one per field it reads or writes. The links sit in their own array of 16-byte records, apart from the
/// entries, so making an entry the most recent reads and writes a few small records rather than
/// the entry and both of its neighbours.
///
/// Per namespace eviction order (`Eviction`), each operation O(1):
/// - LRU: an access moves the entry to the tail; the head is the victim.
/// - FIFO: entries stay in insertion order; the head is the victim.
/// - SIEVE: insertion order, a visited bit per entry (`Rank.uses` 0 or 1) and a hand (`List.hand`);
///   the victim search clears bits, each step of it one bit, so it is O(1) amortized.
/// - LFU: the list is sorted by (uses, when it reached them); entries of equal uses form a bucket
///   with its first and last slot, so an access moves the entry after the last of the next bucket.
struct EntryStore {
    /// An entry's neighbours in the global list and in its namespace's list (-1: none).
    struct Links {
        var globalPrev: Int32 = -1
        var globalNext: Int32 = -1
        var nsPrev: Int32 = -1
        var nsNext: Int32 = -1
    }

    /// The ends and length of one list; for a namespace, its eviction policy and SIEVE's hand.
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
    var nextRecency: UInt64 = 0
    /// Links by slot, beside `entries`.
    private var links: [Links] = []
    /// Eviction state by slot, beside `entries`.
    private(set) var ranks: [Rank] = []
    private var buckets: [Bucket] = []
    private var freeBuckets: [Int32] = []
    private var freeSlots: [Int32] = []
    private var global = List()
    /// By namespace slot.
    private var namespaceLists: [List] = []

    /// An empty store for `namespaceCount` namespaces, each LRU.
    init(namespaceCount: Int = 0) {
        namespaceLists = Array(repeating: List(), count: namespaceCount)
    }

    /// Makes room for the list of one more namespace (the next namespace slot), LRU.
    mutating func addNamespace() {
        namespaceLists.append(List())
    }

    /// The number of namespaces with a list (the next namespace slot).
    var namespaceCount: Int { namespaceLists.count }

    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(n)
        links.reserveCapacity(n)
        ranks.reserveCapacity(n)
    }

    /// The least recently used entry of all, or -1.
    var globalHead: Int32 { global.head }

    /// The next more recent entry after `slot` in the global list, or -1.
    func next(after slot: Int32) -> Int32 { links[Int(slot)].globalNext }

    /// The first entry of a namespace's list (the next victim but under SIEVE), or -1.
    func head(inNamespace ns: Int32) -> Int32 { namespaceLists[Int(ns)].head }

    /// The entry after `slot` in its namespace's list, or -1.
    func nextInNamespace(after slot: Int32) -> Int32 { links[Int(slot)].nsNext }

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
        }
        linkGlobalAtTail(slot)
        placeNew(slot)
        return slot
    }

    /// Takes an entry out of both lists and frees its slot: the entry is marked dead, its value,
    /// tags and out-of-line fields (mutation log included) are dropped and its generation is
    /// bumped. SIEVE's hand, when on it, moves to the entry after it.
    /// - Returns: what the engine's indexes need to forget it.
    /// - Complexity: O(1).
    mutating func remove(_ slot: Int32) -> (key: String, tags: [String]) {
        unlinkGlobal(slot)
        leaveNamespace(slot)
        let i = Int(slot)
        let removed = (entries[i].key, entries[i].tags)
        entries[i].live = false
        entries[i].releaseContents()
        entries[i].generation &+= 1
        ranks[i] = Rank()
        freeSlots.append(slot)
        return removed
    }

    /// An access (SPEC §1.1 Eviction): the entry becomes the most recently used, and its
    /// namespace's policy notes it (LRU: last to go; FIFO: nothing; SIEVE: visited; LFU: one more use).
    /// - Complexity: O(1).
    mutating func touch(_ slot: Int32) {
        let ns = Int(entries[Int(slot)].namespace)
        switch namespaceLists[ns].eviction {
        case .lru:
            if global.tail == slot && namespaceLists[ns].tail == slot { return }
            unlinkGlobal(slot)
            linkGlobalAtTail(slot)
            unlinkNamespace(slot)
            linkNamespace(slot, after: namespaceLists[ns].tail)
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
            linkNamespace(s, after: namespaceLists[n].tail)
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
            linkNamespace(slot, after: namespaceLists[ns].tail)
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
        case .lru, .fifo:
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
        guard global.tail != slot else { return }
        unlinkGlobal(slot)
        linkGlobalAtTail(slot)
    }

    /// Links a slot as the most recent of all, with a new recency stamp (which marks it changed).
    private mutating func linkGlobalAtTail(_ slot: Int32) {
        let i = Int(slot)
        entries.setRecency(i, nextRecency)
        nextRecency &+= 1
        let tail = global.tail
        links[i].globalPrev = tail
        links[i].globalNext = -1
        if tail >= 0 { links[Int(tail)].globalNext = slot } else { global.head = slot }
        global.tail = slot
        global.count += 1
    }

    private mutating func unlinkGlobal(_ slot: Int32) {
        let l = links[Int(slot)]
        if l.globalPrev >= 0 { links[Int(l.globalPrev)].globalNext = l.globalNext } else { global.head = l.globalNext }
        if l.globalNext >= 0 { links[Int(l.globalNext)].globalPrev = l.globalPrev } else { global.tail = l.globalPrev }
        global.count -= 1
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
        out.reserveCapacity(global.count)
        var s = global.head
        while s >= 0 { out.append(s); s = links[Int(s)].globalNext }
        return out
    }

    /// Slots of one namespace in its list's order (LRU: least recent first; FIFO, SIEVE: oldest
    /// first; LFU: fewest uses first).
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
