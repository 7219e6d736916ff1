extension OrderedSlots {
    /// What is wrong with the ordered slots, one message per broken rule; empty when it is sound:
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
            return ["ordered slots: \(places.count) places for \(entries.count) slots"]
        }
        var live = 0
        for i in entries.indices where entries[i].live {
            let e = entries[i]
            live += 1
            if e.namespace < 0 || Int(e.namespace) >= namespaceLists.count {
                v.append("ordered slots: slot \(i) (\(e.key)) is in namespace slot \(e.namespace), which has no list")
            }
        }
        var free = Set<Int32>()
        for s in freeSlots {
            guard s >= 0, Int(s) < entries.count else { v.append("ordered slots: free slot \(s) is out of range"); continue }
            if !free.insert(s).inserted { v.append("ordered slots: slot \(s) is on the free list twice") }
            if entries[Int(s)].live { v.append("ordered slots: live slot \(s) (\(entries[Int(s)].key)) is on the free list") }
        }
        if free.count + live != entries.count {
            v.append("ordered slots: \(entries.count - live) dead slots but \(free.count) free ones")
        }

        if !sideIndex.isEmpty && sideIndex.count != places.count {
            return v + ["ordered slots: \(sideIndex.count) side indexes for \(places.count) slots"]
        }
        var sides = Set<Int32>()
        for i in entries.indices {
            let place = places[i]
            let sideRecord = sideOf(i)
            let e = entries[i]
            if !e.live {
                if place.global != .max { v.append("ordered slots: dead slot \(i) has a queue item") }
            } else if Int(place.global) >= recency.items.count || recency.items[Int(place.global)] != Int32(i) {
                v.append("ordered slots: slot \(i) (\(e.key)) names item \(place.global) of the global queue, not its own")
            }
            let wantsSide = e.live && Int(e.namespace) < namespaceLists.count && namespaceLists[Int(e.namespace)].eviction != .lru
            if (sideRecord >= 0) != wantsSide {
                v.append("ordered slots: slot \(i) " + (wantsSide ? "has no links and rank" : "has links and a rank it does not need"))
            }
            guard sideRecord >= 0 else { continue }
            if Int(sideRecord) >= side.count { v.append("ordered slots: slot \(i) has side record \(sideRecord), out of range") }
            if !sides.insert(sideRecord).inserted { v.append("ordered slots: side record \(sideRecord) is shared") }
        }
        let freeSet = Set(freeSides)
        if freeSet.count != freeSides.count || !freeSet.isDisjoint(with: sides) || freeSet.count + sides.count != side.count {
            v.append("ordered slots: \(side.count) side records, \(sides.count) used and \(freeSides.count) listed free")
        }
        if v.contains(where: { $0.hasPrefix("ordered slots: slot") }) { return v }

        let global = queueViolations(recency.items.indices.map { (recency.items[$0], inRange(recency.items[$0]) && isCurrent($0)) },
                                     head: recency.head,
                                     "global recency queue", current: live, into: &v)
        if liveCount != live { v.append("ordered slots: counts \(liveCount) live entries, \(live) are live") }
        if recencyLimit != RecencyQueue<Int32>.limit(current: liveCount) {
            v.append("ordered slots: the global queue's limit \(recencyLimit) is not the one for \(liveCount) entries")
        }
        if global.count != live { v.append("global recency queue: holds \(global.count) current entries, \(live) are live") }

        if namespaceQueues.count != namespaceLists.count {
            v.append("ordered slots: \(namespaceQueues.count) namespace queues for \(namespaceLists.count) lists")
            return v
        }
        if solo != -1 {
            if solo < 0 || Int(solo) >= namespaceLists.count {
                v.append("ordered slots: solo namespace slot \(solo) has no list"); return v
            }
            if namespaceLists[Int(solo)].eviction != .lru {
                v.append("ordered slots: solo namespace slot \(solo) is \(namespaceLists[Int(solo)].eviction.rawValue), not lru")
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
        guard state.eviction == .lru || list.allSatisfy({ sideOf(Int($0)) >= 0 }) else { return }
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
            guard sideOf(Int(s)) >= 0 else { v.append("\(name()): slot \(s) has no links"); return out }
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
