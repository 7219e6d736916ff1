import CacheCore

/// The last ``Timeline/limit`` changes to entries, oldest first: what `watch *` would have
/// printed, kept whether or not a watch was on. Memory is bounded by the count and by the bytes of
/// the values held (``Timeline/byteLimit``): a value is shared with the entry it was read from,
/// but once the entry changes only the timeline holds the old one, and 10,000 large values grown
/// by small patches took gigabytes.
struct Timeline {
    /// The changes kept: 10,000 (SPEC §3, `timeline`); older ones are dropped first.
    static let limit = 10_000
    /// The bytes of values and keys kept: 64 MiB (SPEC §7.1); older changes are dropped first,
    /// the newest always kept.
    static let byteLimit = 64 << 20
    /// The changes kept, in a ring: `count` of them from `events[head]` on, oldest first, wrapping
    /// at the end of the array. The array never holds more than `limit` changes, and its room for
    /// all of them is taken at the first append: it never grows again (growing it by doubling
    /// moved every change kept 14 times over the first 10,000, some 135 instructions a change).
    /// While it holds fewer than `limit`, the changes kept run from `head` to its end (an append
    /// adds one at the end); once full, an append writes over the slot after the newest.
    /// A dropped change's slot holds no value or key (they are released when it is dropped).
    private var events: [CacheEvent] = []
    /// What each change kept in `events` counts against the byte limit (`size`), at the same
    /// index (a dropped change's is left as it was, and never read): kept so that dropping a
    /// change reads no part of it (reading its value's size through the ring copied the value
    /// and dropped the copy, some 90 instructions a change once the timeline is full).
    private var sizes: [Int] = []
    private var head = 0
    private var count = 0
    /// The bytes of the values and keys kept.
    private var bytes = 0
    /// How many changes were dropped to keep the bound.
    private(set) var dropped = 0

    /// - Complexity: O(1) amortized (each change is dropped at most once).
    mutating func append(_ event: consuming CacheEvent) {
        let size = Self.size(event)
        bytes += size
        if count == Self.limit {
            // Full: the newest goes into the oldest's slot, and that one assignment drops the
            // oldest's value and key (emptied first by `dropOldest`, then written over, the slot
            // took two writes and a read of the emptied event). The newest is kept: the oldest
            // goes first.
            let oldest = head
            bytes -= sizes[oldest]
            sizes[oldest] = size
            events[oldest] = event
            head = oldest + 1 == Self.limit ? 0 : oldest + 1
            dropped += 1
        } else if events.count < Self.limit {
            if events.count == events.capacity {
                events.reserveCapacity(Self.limit)
                sizes.reserveCapacity(Self.limit)
            }
            events.append(event)
            sizes.append(size)
            count += 1
        } else {
            var slot = head + count
            if slot >= Self.limit { slot -= Self.limit }
            events[slot] = event
            sizes[slot] = size
            count += 1
        }
        while bytes > Self.byteLimit && count > 1 { dropOldest() }
    }

    /// Drops the oldest change kept, releasing its value and key now.
    private mutating func dropOldest() {
        // Emptied in place, its size read from `sizes` (see there).
        let oldest = head
        bytes -= sizes[oldest]
        events.withUnsafeMutableBufferPointer { buffer in
            let event = buffer.baseAddress! + oldest
            event.pointee.stored = nil
            event.pointee.key = ""
        }
        head += 1
        if head == Self.limit { head = 0 }
        count -= 1
        dropped += 1
    }

    /// The changes kept, oldest first, as the ranges of `events` they fill.
    private var keptRanges: (Range<Int>, Range<Int>) {
        let end = head + count
        if end <= events.count { return (head..<end, 0..<0) }
        return (head..<events.count, 0..<(end - events.count))
    }

    /// What a change counts against the byte limit: its value's compact text and its key.
    private static func size(_ event: CacheEvent) -> Int {
        (event.stored?.utf8Count ?? 0) + event.key.utf8.count
    }

    /// How many changes were ever appended (kept or dropped).
    var appended: Int { dropped + count }

    /// This timeline as one that began once `index` changes had been appended: the changes before
    /// are neither shown nor counted as dropped (a shell attached later saw none of them).
    /// - Complexity: O(changes skipped), at most `limit` (the copy shares the events).
    func since(_ index: Int) -> Timeline {
        var later = self
        let skipped = min(max(index - dropped, 0), count)
        // The skipped changes no longer count against the byte limit: the view drops its
        // oldest only when what it shows is over it.
        for k in 0..<skipped {
            let slot = head + k
            later.bytes -= sizes[slot < Self.limit ? slot : slot - Self.limit]
        }
        later.head += skipped
        if later.head >= Self.limit { later.head -= Self.limit }
        later.count -= skipped
        later.dropped = max(dropped - index, 0)
        return later
    }

    /// The changes kept that `include` picks, oldest first.
    /// - Complexity: O(changes kept).
    func filter(_ include: (CacheEvent) -> Bool) -> [CacheEvent] {
        let (first, second) = keptRanges
        return events[first].filter(include) + events[second].filter(include)
    }

    /// This timeline with `later`'s changes after its own, within the same bounds (what a
    /// recording set aside when it started, joined again when it stops).
    /// - Complexity: O(changes kept in `later`), amortized.
    func followed(by later: Timeline) -> Timeline {
        var joined = self
        joined.dropped += later.dropped
        let (first, second) = later.keptRanges
        for event in later.events[first] { joined.append(event) }
        for event in later.events[second] { joined.append(event) }
        return joined
    }
}
