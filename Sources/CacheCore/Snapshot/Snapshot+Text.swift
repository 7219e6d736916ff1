// The snapshot document's text written in one pass: the entries straight from the engine into
// one byte buffer, each entry's fields in their sorted order, with no tree of the document and
// no sorting but inside values. The bytes are those of `makeSnapshot(...).prettyText()` (or
// `.compactText`): snapshots are compared byte for byte, so both must stay the same
// (SnapshotTextTests checks them against each other).

extension CacheEngine {
    /// The snapshot document (SPEC §5.2) as text: what `makeSnapshot(scheduledCommand:)`
    /// printed with `prettyText()` (`pretty`) or `compactText` gives, written without the tree.
    /// - Complexity: O(n + r + d) for n entries, r requests and queued items, d server keys;
    ///   O(k log k) more for each object of k keys inside a value.
    public func snapshotText(pretty: Bool, scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] }) -> String {
        String(decoding: snapshotBytes(pretty: pretty, scheduledCommand: scheduledCommand), as: UTF8.self)
    }

    /// `snapshotText` as UTF-8 bytes.
    public func snapshotBytes(pretty: Bool, scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] }) -> [UInt8] {
        let state = snapshotState(scheduledCommand: scheduledCommand)
        // About 300 bytes per small entry compact, 500 pretty: one reservation, few regrowths.
        var writer = JSONWriter(pretty: pretty, capacity: 4096 + entries.count * (pretty ? 512 : 320))
        writer.open(UInt8(ascii: "{"))
        var first = true
        var wroteEntries = false
        for (name, value) in state.sorted(by: { $0.key < $1.key }) {
            if !wroteEntries && "entries" < name {
                writer.member("entries", indent: 1, first: &first)
                writeEntries(&writer)
                wroteEntries = true
            }
            writer.member(name, indent: 1, first: &first)
            writer.write(value, indent: 1)
        }
        if !wroteEntries {
            writer.member("entries", indent: 1, first: &first)
            writeEntries(&writer)
        }
        writer.close(UInt8(ascii: "}"), indent: 0, empty: false)
        return writer.bytes
    }

    /// The `entries` array, least recent first, at indent 1.
    private func writeEntries(_ w: inout JSONWriter) {
        w.open(UInt8(ascii: "["))
        var first = true
        for s in entries.ordered.recencyOrder() {
            w.element(indent: 2, first: &first)
            writeEntry(s, &w)
        }
        w.close(UInt8(ascii: "]"), indent: 1, empty: first)
    }

    /// One entry as `snapshotEntry` builds it, its fields in sorted order, at indent 2.
    private func writeEntry(_ slot: Int32, _ w: inout JSONWriter) {
        let e = slots[Int(slot)]
        let ind = 3
        let eviction = entries.ordered.eviction(ofNamespace: e.namespace)
        let rank = eviction == .lru ? OrderedSlots.Rank(stamp: 0) : entries.ordered.ranks[Int(slot)]
        var first = true
        w.open(UInt8(ascii: "{"))
        w.member("expires_at", indent: ind, first: &first)
        writeTimeOrNever(e.expiresAt, &w)
        if e.expiryReported {
            w.member("expiry_counted", indent: ind, first: &first)
            w.appendASCII("true")
        }
        if e.expiryOverridden {
            w.member("expiry_overridden", indent: ind, first: &first)
            w.appendASCII("true")
            if !e.expiryReported {
                w.member("expiry_seq", indent: ind, first: &first)
                w.writeInt(Int64(e.expirySeq))
            }
        }
        if hasHTTPNamespaces, let responses = httpEntryJSON(e.key) {
            w.member("http", indent: ind, first: &first)
            w.write(responses, indent: ind)
        }
        if e.invalidated {
            w.member("invalidated", indent: ind, first: &first)
            w.appendASCII("true")
        }
        w.member("key", indent: ind, first: &first)
        w.writeString(e.key)
        if e.lastPut != 0 {
            w.member("last_put", indent: ind, first: &first)
            w.writeInt(Int64(e.lastPut))
        }
        if e.lastLocalWrite != 0 {
            w.member("last_write", indent: ind, first: &first)
            w.writeInt(Int64(e.lastLocalWrite))
        }
        if let log = e.log {
            w.member("mutations", indent: ind, first: &first)
            w.write(Self.mutationsJSON(log), indent: ind)
        }
        if eviction != .lru {
            w.member("rank", indent: ind, first: &first)
            w.writeInt(Int64(bitPattern: rank.stamp))
        }
        w.member("seq", indent: ind, first: &first)
        w.writeInt(Int64(e.storedSeq))
        w.member("stale_at", indent: ind, first: &first)
        writeTimeOrNever(e.staleAt, &w)
        w.member("state", indent: ind, first: &first)
        switch e.state(at: now) {
        case .fresh: w.appendASCII("\"fresh\"")
        case .stale: w.appendASCII("\"stale\"")
        case .expired: w.appendASCII("\"expired\"")
        case let state: w.writeString(state.rawValue)
        }
        w.member("stored_at", indent: ind, first: &first)
        w.writeTime(e.storedAt)
        if e.storedRequest != 0 {
            w.member("stored_request", indent: ind, first: &first)
            w.writeInt(Int64(e.storedRequest))
        }
        w.member("tags", indent: ind, first: &first)
        if e.tags.isEmpty {
            w.appendASCII("[]")
        } else {
            w.open(UInt8(ascii: "["))
            var firstTag = true
            for tag in e.tags {
                w.element(indent: ind + 1, first: &firstTag)
                w.writeString(tag)
            }
            w.close(UInt8(ascii: "]"), indent: ind, empty: false)
        }
        if eviction == .lfu {
            w.member("uses", indent: ind, first: &first)
            w.writeInt(Int64(bitPattern: rank.uses))
        }
        w.member("value", indent: ind, first: &first)
        e.stored.withUTF8 { w.writeCanonical(utf8: $0, indent: ind) }
        if let version = e.version {
            w.member("version", indent: ind, first: &first)
            w.writeInt(Int64(version))
        }
        if eviction == .sieve && rank.uses > 0 {
            w.member("visited", indent: ind, first: &first)
            w.appendASCII("true")
        }
        w.close(UInt8(ascii: "}"), indent: ind - 1, empty: false)
    }

    private func writeTimeOrNever(_ ms: Int64, _ w: inout JSONWriter) {
        if ms == .max { w.appendASCII("null") } else { w.writeTime(ms) }
    }
}
