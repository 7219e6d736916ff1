// The lists of `OrderedSlots`: each namespace's eviction order (LRU's queues, FIFO, SIEVE and LFU's
// linked lists and LFU's buckets), the global recency queue and their compaction. Their
// operations (OrderedSlots.swift) call these; their checks are in OrderedSlots+Invariants.swift.

internal import CPrefetch

extension OrderedSlots {
    /// Places a new entry (or one re-placed by a policy change) in its namespace's list: last,
    /// unvisited under SIEVE; LFU: last of the entries with one use.
    mutating func placeNew(_ slot: Int32) {
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
    mutating func leaveNamespace(_ slot: Int32) {
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
    mutating func useOnce(_ slot: Int32) {
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

    mutating func newBucket(_ uses: UInt64, _ slot: Int32) -> Int32 {
        let bucket = Bucket(uses: uses, first: slot, last: slot)
        if let free = freeBuckets.popLast() {
            buckets[Int(free)] = bucket
            return free
        }
        buckets.append(bucket)
        return Int32(buckets.count - 1)
    }

    mutating func moveToGlobalTail(_ slot: Int32) {
        guard entries[Int(slot)].recency &+ 1 != nextRecency else { return }
        stampMostRecent(slot)
    }

    /// Makes a live slot the most recent of all: a new recency stamp (which marks it moved for a
    /// store) and an item at the end of the global queue.
    @inline(__always)
    mutating func stampMostRecent(_ slot: Int32) {
        let stamp = nextRecency
        entries.setRecency(Int(slot), stamp)
        places[Int(slot)].global = UInt32(truncatingIfNeeded: recency.items.count)
        nextRecency = stamp &+ 1
        recency.append(slot)
        if recency.items.count > recencyLimit { compactGlobal() }
    }

    /// Appends a slot, just stamped, to its LRU namespace's queue.
    @inline(__always)
    mutating func appendToNamespaceQueue(_ slot: Int32, _ ns: Int) {
        namespaceQueues[ns].append(NamespaceItem(global: places[Int(slot)].global, slot: slot))
        if namespaceQueues[ns].needsCompaction(current: namespaceLists[ns].count) { compactNamespace(ns) }
    }

    /// Puts a slot last in its namespace's order: under LRU at the end of its queue with its
    /// current stamp, else linked after the tail.
    mutating func linkLast(_ slot: Int32) {
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
    func isCurrent(_ q: Int) -> Bool {
        places[Int(recency.items[q])].global == UInt32(truncatingIfNeeded: q)
    }

    /// Whether an LRU namespace's queue item is current: its slot's global item is still the one
    /// it was appended with.
    @inline(__always)
    func isCurrent(_ item: NamespaceItem) -> Bool {
        places[Int(item.slot)].global == item.global
    }

    /// LRU: the least recent entry of a namespace other than `sparing` (or `sparing` when it is
    /// the only one); drops the stale items it passes at the head of the queue.
    /// - Complexity: O(1) amortized (each item is passed at the head once).
    mutating func lruVictim(_ n: Int, sparing: Int32) -> Int32? {
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

    /// The slot of the item `ahead` places after the head of LRU namespace `n`'s queue (the
    /// global queue for the solo namespace), current or not, or -1 past its end: after
    /// `lruVictim`, whose head is the victim's item, the likely next victims, whose lines a
    /// put asks the processor for ahead of the put that evicts them.
    @inline(__always)
    func queuedSlot(_ n: Int, ahead: Int) -> Int32 {
        if Int32(truncatingIfNeeded: n) == solo {
            let q = recency.head &+ ahead
            return q < recency.items.count ? recency.items[q] : -1
        }
        let q = namespaceQueues[n].head &+ ahead
        return q < namespaceQueues[n].items.count ? namespaceQueues[n].items[q].slot : -1
    }

    /// Asks the processor for slot `slot`'s entry and place (`EntrySlots.prefetch`); a slot
    /// past the end is not named.
    @inline(__always)
    func prefetch(_ slot: Int32) {
        let i = Int(slot)
        entries.prefetch(i)
        guard i >= 0 && i < places.count else { return }
        places.withUnsafeBufferPointer { cachesh_prefetch($0.baseAddress! + i) }
    }

    /// Before an entry of namespace `ns` is stored: empty slots become solo in `ns` if it is
    /// LRU (its queue, whose items are all stale, emptied), else not solo; solo slots get an
    /// entry of another namespace, so the solo namespace's queue is built from the global one.
    /// - Complexity: O(1) when no slot is live, else O(n) for n live entries (see `solo`).
    mutating func changeSolo(storing ns: Int32) {
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
    mutating func compactGlobal() {
        let renumbers = namespaceQueues.contains { !$0.items.isEmpty }
        let old = recency.items.count
        var remap = renumbers ? [UInt32](repeating: .max, count: old) : []
        var kept = 0
        let head = recency.head
        places.withUnsafeMutableBufferPointer { places in
            recency.items.withUnsafeMutableBufferPointer { items in
                remap.withUnsafeMutableBufferPointer { remap in
                    // Without a branch on whether an item is current: which items are is as
                    // good as random (an item is stale when its entry was read again since), so
                    // a branch on it was mispredicted about every other item, and each
                    // misprediction waited for the slot's place, a read that misses the cache at
                    // a million entries; without it the reads of many items overlap. A stale
                    // item writes its place back as it is, and its slot where the next current
                    // item goes (`kept` never passes `q`).
                    for q in head..<items.count {
                        let s = Int(items[q])
                        let place = places[s].global
                        let current = place == UInt32(truncatingIfNeeded: q)
                        let w = UInt32(truncatingIfNeeded: kept)
                        places[s].global = current ? w : place
                        items[kept] = Int32(truncatingIfNeeded: s)
                        if renumbers { remap[q] = current ? w : .max }
                        // 1 when current, else 0, as arithmetic: written as a condition, the
                        // compiler made the count a branch again.
                        let differs = UInt64(place ^ UInt32(truncatingIfNeeded: q))
                        kept &+= Int(truncatingIfNeeded: (differs &- 1) >> 63)
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

    /// Sets the recency stamps of the slots in `order` (entries just inserted, in any order; each
    /// with its stamp, least recent first, the stamps increasing) and rebuilds the queues in
    /// that order: `restoreRecencies` for entries not inserted in recency order.
    /// - Complexity: O(n) for n slots.
    mutating func restoreRecencies<Order: Sequence<(slot: Int32, stamp: UInt64)>>(inOrder order: Order) {
        recency = RecencyQueue()
        var last: UInt64 = 0
        for (s, stamp) in order {
            entries[Int(s)].recency = stamp
            last = stamp
            places[Int(s)].global = UInt32(truncatingIfNeeded: recency.items.count)
            recency.append(s)
        }
        nextRecency = last &+ 1
        for n in namespaceQueues.indices where namespaceLists[n].eviction == .lru {
            namespaceQueues[n] = RecencyQueue()
        }
        for s in recency.items {
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
