import CacheCore
import HeapModule

/// Puts entries in time order within a window: up to `window` entries wait, and the earliest
/// (by start, then index) is released when one more comes. An entry that starts before one
/// already released is refused: it is further out of order than the window sorts.
public struct HAROrdering {
    public let window: Int
    private var waiting = Heap<Waiting>()
    private var released: (start: Int64, index: Int)?

    private struct Waiting: Comparable {
        let entry: HAREntry
        static func < (a: Waiting, b: Waiting) -> Bool {
            (a.entry.start, a.entry.index) < (b.entry.start, b.entry.index)
        }
        static func == (a: Waiting, b: Waiting) -> Bool { a.entry.index == b.entry.index }
    }

    public init(window: Int = HARLimits.orderWindow) { self.window = max(window, 1) }

    /// The entries waiting now (at most `window`).
    public var count: Int { waiting.count }

    /// Adds `entry`; returns the entry released, if the window is full.
    public mutating func add(_ entry: HAREntry) throws(HARError) -> HAREntry? {
        if let released, entry.start < released.start {
            throw HARError("entries[\(entry.index)]: starts at \(TimeText.iso8601(ms: entry.start)), before entries[\(released.index)] "
                           + "(\(TimeText.iso8601(ms: released.start))), which is more than \(window) entries before it: "
                           + "entries are put in time order within \(window) entries; sort the log by startedDateTime")
        }
        waiting.insert(Waiting(entry: entry))
        return waiting.count > window ? release() : nil
    }

    /// The earliest waiting entry (at the end of the log, until none is left).
    public mutating func release() -> HAREntry? {
        guard let next = waiting.popMin()?.entry else { return nil }
        released = (next.start, next.index)
        return next
    }
}

/// A HAR log read as a replay takes it: entries decoded, in time order, and a warning for
/// each entry skipped, one at a time from a `HARReader`.
public struct HARLog {
    public enum Item: Sendable, Equatable {
        case entry(HAREntry)
        /// `entries[3]: skipped: ...`
        case warning(String)
    }

    public let reader: HARReader
    private var ordering: HAROrdering
    private var finished = false
    /// Whether base64 bodies' digests are computed (a transcript names bodies by them; a replay
    /// counts their sizes only).
    public let digests: Bool

    public init(reader: HARReader, digests: Bool = true) {
        self.reader = reader
        self.digests = digests
        ordering = HAROrdering(window: reader.limits.window)
    }

    /// The next entry in time order, or a warning; nil after the last.
    public mutating func next() throws(HARError) -> Item? {
        while !finished {
            guard let value = try reader.next() else {
                finished = true
                break
            }
            switch try HAREntry.decode(value, index: reader.count - 1, limits: reader.limits, digests: digests) {
            case .skipped(let warning): return .warning(warning)
            case .entry(let entry):
                if let released = try ordering.add(entry) { return .entry(released) }
            }
        }
        return ordering.release().map(Item.entry)
    }
}
