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
    /// The changes kept are `events[start...]`; the dropped ones before are removed in one go
    /// once they are half of the array.
    private var events: [CacheEvent] = []
    private var start = 0
    /// The bytes of the values and keys kept.
    private var bytes = 0
    /// How many changes were dropped to keep the bound.
    private(set) var dropped = 0

    /// - Complexity: O(1) amortized (each change is dropped, and moved, at most once).
    mutating func append(_ event: CacheEvent) {
        bytes += Self.size(event)
        events.append(event)
        while events.count - start > Self.limit || (bytes > Self.byteLimit && events.count - start > 1) {
            bytes -= Self.size(events[start])
            events[start].stored = nil  // its value is released now, not at the next compaction
            events[start].key = ""
            start += 1
            dropped += 1
        }
        if start > 0 && start >= events.count / 2 {
            events.removeFirst(start)
            start = 0
        }
    }

    /// What a change counts against the byte limit: its value's compact text and its key.
    private static func size(_ event: CacheEvent) -> Int {
        (event.stored?.utf8Count ?? 0) + event.key.utf8.count
    }

    /// How many changes were ever appended (kept or dropped).
    var appended: Int { dropped + events.count - start }

    /// This timeline as one that began once `index` changes had been appended: the changes before
    /// are neither shown nor counted as dropped (a shell attached later saw none of them).
    /// - Complexity: O(1) (the copy shares the events).
    func since(_ index: Int) -> Timeline {
        var later = self
        let skipped = min(max(index - dropped, 0), events.count - start)
        later.start += skipped
        later.dropped = max(dropped - index, 0)
        return later
    }

    /// The changes kept that `include` picks, oldest first.
    /// - Complexity: O(changes kept).
    func filter(_ include: (CacheEvent) -> Bool) -> [CacheEvent] {
        events[start...].filter(include)
    }

    /// This timeline with `later`'s changes after its own, within the same bounds (what a
    /// recording set aside when it started, joined again when it stops).
    /// - Complexity: O(changes kept in `later`), amortized.
    func followed(by later: Timeline) -> Timeline {
        var joined = self
        joined.dropped += later.dropped
        for event in later.events[later.start...] { joined.append(event) }
        return joined
    }
}
