/// The order a policy keeps its entries in, by slot number: which one to evict next.
///
/// The simulation owns the slots (0, 1, 2, ... as entries arrive; an evicted entry's slot is
/// reused at once by the entry that replaces it) and tells the order what happens to them.
/// Each operation is O(1) except `OptimalOrder`'s, which are O(log n).
protocol EvictionOrder: ~Copyable {
    init()
    /// A new entry in `slot` (one past the last slot ever used, or the slot just evicted).
    /// `next`: the request number of its next access (`Int64.max`: none or unknown).
    mutating func inserted(_ slot: Int32, next: Int64)
    /// A read of the entry in `slot`, whatever its state.
    mutating func accessed(_ slot: Int32, next: Int64)
    /// Picks the victim, takes it out of the order and returns its slot (the order is not empty).
    mutating func evict() -> Int32
}

/// A doubly linked list of slots, oldest at `head`, newest at `tail`: one array of link pairs
/// (neighbours in one line), with no copy-on-write check on a write (`SlotArray`).
struct SlotList: ~Copyable {
    struct Link: BitwiseCopyable {
        var prev: Int32 = -1
        var next: Int32 = -1
    }
    var links = SlotArray<Link>(capacity: 16)
    var head: Int32 = -1
    var tail: Int32 = -1

    @inline(__always)
    mutating func ensure(_ slot: Int32) {
        while links.count <= Int(slot) { links.append(Link()) }
    }

    @inline(__always)
    func next(_ slot: Int32) -> Int32 { links[Int(slot)].next }

    /// Links `slot` as the newest.
    @inline(__always)
    mutating func append(_ slot: Int32) {
        links[Int(slot)] = Link(prev: tail, next: -1)
        if tail >= 0 { links[Int(tail)].next = slot } else { head = slot }
        tail = slot
    }

    @inline(__always)
    mutating func unlink(_ slot: Int32) {
        let link = links[Int(slot)]
        if link.prev >= 0 { links[Int(link.prev)].next = link.next } else { head = link.next }
        if link.next >= 0 { links[Int(link.next)].prev = link.prev } else { tail = link.prev }
    }

    /// Makes `slot` the newest.
    @inline(__always)
    mutating func moveToTail(_ slot: Int32) {
        guard tail != slot else { return }
        unlink(slot)
        append(slot)
    }
}

struct LRUOrder: EvictionOrder, ~Copyable {
    var list = SlotList()
    init() {}
    @inline(__always) mutating func inserted(_ slot: Int32, next: Int64) { list.ensure(slot); list.append(slot) }
    @inline(__always) mutating func accessed(_ slot: Int32, next: Int64) { list.moveToTail(slot) }
    @inline(__always) mutating func evict() -> Int32 {
        let victim = list.head
        list.unlink(victim)
        return victim
    }
}

struct FIFOOrder: EvictionOrder, ~Copyable {
    var list = SlotList()
    init() {}
    @inline(__always) mutating func inserted(_ slot: Int32, next: Int64) { list.ensure(slot); list.append(slot) }
    @inline(__always) mutating func accessed(_ slot: Int32, next: Int64) {}
    @inline(__always) mutating func evict() -> Int32 {
        let victim = list.head
        list.unlink(victim)
        return victim
    }
}

/// SIEVE: a FIFO list with a visited bit per entry and a hand that moves from old to new.
struct SieveOrder: EvictionOrder, ~Copyable {
    var list = SlotList()
    var visited = SlotArray<Bool>(capacity: 16)
    /// Where the next search starts; -1: at the oldest entry.
    var hand: Int32 = -1
    init() {}

    @inline(__always) mutating func inserted(_ slot: Int32, next: Int64) {
        list.ensure(slot)
        while visited.count <= Int(slot) { visited.append(false) }
        visited[Int(slot)] = false
        list.append(slot)
    }

    @inline(__always) mutating func accessed(_ slot: Int32, next: Int64) { visited[Int(slot)] = true }

    /// Each step clears one visited bit, so one call takes at most one lap plus one step.
    @inline(__always) mutating func evict() -> Int32 {
        var p = hand >= 0 ? hand : list.head
        while visited[Int(p)] {
            visited[Int(p)] = false
            let n = list.next(p)
            p = n >= 0 ? n : list.head
        }
        hand = list.next(p)
        list.unlink(p)
        return p
    }
}

/// LFU in O(1): buckets of equal access counts in a list by ascending count; inside a bucket,
/// entries in the order they reached that count (the earliest is evicted first).
struct LFUOrder: EvictionOrder {
    // Entries.
    var entryPrev: [Int32] = []
    var entryNext: [Int32] = []
    var entryBucket: [Int32] = []
    // Buckets, from a pool with a free list.
    var count: [Int64] = []
    var first: [Int32] = []
    var last: [Int32] = []
    var lower: [Int32] = []
    var higher: [Int32] = []
    var freeBuckets: [Int32] = []
    /// The bucket of the smallest count, or -1.
    var lowest: Int32 = -1
    init() {}

    private mutating func newBucket(_ n: Int64, after: Int32) -> Int32 {
        let b: Int32
        if let free = freeBuckets.popLast() {
            b = free
        } else {
            b = Int32(count.count)
            count.append(0); first.append(-1); last.append(-1); lower.append(-1); higher.append(-1)
        }
        let i = Int(b)
        count[i] = n
        first[i] = -1
        last[i] = -1
        lower[i] = after
        if after >= 0 {
            higher[i] = higher[Int(after)]
            higher[Int(after)] = b
        } else {
            higher[i] = lowest
            lowest = b
        }
        if higher[i] >= 0 { lower[Int(higher[i])] = b }
        return b
    }

    private mutating func freeBucket(_ b: Int32) {
        let i = Int(b)
        if lower[i] >= 0 { higher[Int(lower[i])] = higher[i] } else { lowest = higher[i] }
        if higher[i] >= 0 { lower[Int(higher[i])] = lower[i] }
        freeBuckets.append(b)
    }

    @inline(__always)
    private mutating func append(_ slot: Int32, to b: Int32) {
        let s = Int(slot), i = Int(b)
        entryBucket[s] = b
        entryPrev[s] = last[i]
        entryNext[s] = -1
        if last[i] >= 0 { entryNext[Int(last[i])] = slot } else { first[i] = slot }
        last[i] = slot
    }

    /// Takes `slot` out of its bucket; true when the bucket is left empty (it is not freed).
    @inline(__always)
    private mutating func detach(_ slot: Int32) -> Bool {
        let s = Int(slot), i = Int(entryBucket[s])
        let p = entryPrev[s], n = entryNext[s]
        if p >= 0 { entryNext[Int(p)] = n } else { first[i] = n }
        if n >= 0 { entryPrev[Int(n)] = p } else { last[i] = p }
        return first[i] < 0
    }

    mutating func inserted(_ slot: Int32, next: Int64) {
        while entryPrev.count <= Int(slot) { entryPrev.append(-1); entryNext.append(-1); entryBucket.append(-1) }
        let b = lowest >= 0 && count[Int(lowest)] == 1 ? lowest : newBucket(1, after: -1)
        append(slot, to: b)
    }

    mutating func accessed(_ slot: Int32, next: Int64) {
        let b = entryBucket[Int(slot)]
        let n = count[Int(b)] &+ 1
        let up = higher[Int(b)]
        let target = up >= 0 && count[Int(up)] == n ? up : newBucket(n, after: b)
        if detach(slot) { freeBucket(b) }
        append(slot, to: target)
    }

    mutating func evict() -> Int32 {
        let b = lowest
        let victim = first[Int(b)]
        if detach(victim) { freeBucket(b) }
        return victim
    }
}

/// Belady's MIN: an indexed binary max-heap of entries by next access.
struct OptimalOrder: EvictionOrder {
    var heap: [Int32] = []
    var position: [Int32] = []
    var key: [Int64] = []
    init() {}

    @inline(__always)
    private func above(_ a: Int32, _ b: Int32) -> Bool {
        let ka = key[Int(a)], kb = key[Int(b)]
        return ka != kb ? ka > kb : a < b
    }

    private mutating func place(_ slot: Int32, at i: Int) {
        heap[i] = slot
        position[Int(slot)] = Int32(i)
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        let slot = heap[i]
        while i > 0 {
            let parent = (i - 1) / 2
            guard above(slot, heap[parent]) else { break }
            place(heap[parent], at: i)
            i = parent
        }
        place(slot, at: i)
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        let slot = heap[i]
        let n = heap.count
        while true {
            var child = 2 * i + 1
            guard child < n else { break }
            if child + 1 < n && above(heap[child + 1], heap[child]) { child += 1 }
            guard above(heap[child], slot) else { break }
            place(heap[child], at: i)
            i = child
        }
        place(slot, at: i)
    }

    mutating func inserted(_ slot: Int32, next: Int64) {
        while position.count <= Int(slot) { position.append(-1); key.append(0) }
        key[Int(slot)] = next
        heap.append(slot)
        siftUp(heap.count - 1)
    }

    mutating func accessed(_ slot: Int32, next: Int64) {
        let old = key[Int(slot)]
        key[Int(slot)] = next
        let i = Int(position[Int(slot)])
        if next > old { siftUp(i) } else { siftDown(i) }
    }

    mutating func evict() -> Int32 {
        let victim = heap[0]
        let lastSlot = heap.removeLast()
        if !heap.isEmpty {
            place(lastSlot, at: 0)
            siftDown(0)
        }
        position[Int(victim)] = -1
        return victim
    }
}
