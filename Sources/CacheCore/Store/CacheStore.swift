/// A persistent store of an engine's whole state (SPEC §5.3), kept as rows: one per entry (its
/// snapshot JSON and its recency stamp), one per line of the request log, one per key of the
/// simulated server's data, and one state document with everything else.
///
/// The core decides what the rows hold and reads them back (`CacheEngine.takeChanges`,
/// `Snapshot(stored:)`); a store only keeps them, so an app can back it by any database and a test
/// by memory. A commit must be atomic: after a crash the store holds the rows of the last
/// completed commit.
public protocol CacheStore: AnyObject {
    /// Everything the store holds, or nil when it is new (holds no state yet).
    /// - Throws: `StoreError` when the store cannot be read, or is not one this build reads.
    func load() throws(StoreError) -> StoredState?

    /// Applies the changes in one transaction: all of them or none.
    /// - Throws: `StoreError` when the transaction failed; then nothing of it was applied.
    func commit(_ changes: StoreChanges) throws(StoreError)

    /// Ends the use of the store at a clean exit: leaves what was committed where a copy of the
    /// store finds it (for SQLite, the database file alone) and lets another process open it.
    /// Commits after it fail; a second close does nothing.
    /// - Throws: `StoreError` when that fails; what was committed stays committed.
    func close() throws(StoreError)
}

extension CacheStore {
    /// A store with nothing to finish (one in memory) closes by doing nothing.
    public func close() throws(StoreError) {}
}


/// One entry row: its key, its recency stamp (larger is more recent) and its snapshot JSON.
public struct StoredEntry: Sendable, Equatable {
    public var key: String
    public var recency: Int64
    public var body: String
    public init(key: String, recency: Int64, body: String) {
        self.key = key; self.recency = recency; self.body = body
    }
}

/// One line of the request log, at its position (0 is the oldest), as snapshot JSON.
public struct StoredLogLine: Sendable, Equatable {
    public var position: Int64
    public var body: String
    public init(position: Int64, body: String) { self.position = position; self.body = body }
}

/// One key of the simulated server: its data as JSON text (nil once deleted) and when it last
/// changed (ms since the epoch). A row with neither is deleted.
public struct StoredServerKey: Sendable, Equatable {
    public var key: String
    public var value: String?
    public var modifiedAt: Int64?
    public init(key: String, value: String?, modifiedAt: Int64?) {
        self.key = key; self.value = value; self.modifiedAt = modifiedAt
    }
}

/// Everything a store holds: the state document, entries in recency order (least recent first),
/// the request log in order, the server's keys in any order.
public struct StoredState: Sendable {
    public var state: String
    public var entries: [StoredEntry]
    public var log: [StoredLogLine]
    public var server: [StoredServerKey]
    public init(state: String, entries: [StoredEntry], log: [StoredLogLine], server: [StoredServerKey]) {
        self.state = state; self.entries = entries; self.log = log; self.server = server
    }
}

/// The rows one commit writes. Applied in this order: with `replacesAll`, every row goes first;
/// with `logCleared`, every log row; then `removedKeys` are deleted, then `entries`, `log` and
/// `server` rows written (replacing rows of the same key or position), then the state document.
public struct StoreChanges: Sendable {
    public var replacesAll = false
    public var logCleared = false
    public var removedKeys: [String] = []
    public var entries: [StoredEntry] = []
    public var log: [StoredLogLine] = []
    public var server: [StoredServerKey] = []
    public var state = ""
    public init() {}
}

/// What changed in an engine since a store last took it (kept only while a store tracks it).
struct ChangeLog {
    /// `restore` replaced everything: every row is written anew.
    var replacedAll = false
    var removedKeys: [String] = []
    var logCleared = false
    /// Positions of request-log lines added or changed (repeats allowed).
    var logPositions: [Int] = []
}

extension CacheEngine {
    /// Starts noting what changes, for `takeChanges`.
    /// - Parameter everything: the first `takeChanges` writes the whole state (a new store); else
    ///   only what changes from now on (a store this state was just read from).
    public func startTrackingChanges(everything: Bool) {
        defer { if checksInvariants { checkInvariants() } }
        slots.tracking = true
        _ = slots.takeMarked()
        changes = ChangeLog(replacedAll: everything)
        origin.persistentState?.startTrackingChanges()
    }

    /// The rows that changed since the last call (everything, the first time or after `restore`).
    ///
    /// - Parameter scheduledCommand: the fields written beside each scheduled command, as for
    ///   `makeSnapshot`.
    /// - Complexity: O(k + r + d) for k entries changed, r requests and queued items, d server keys
    ///   changed; O(n) for n entries when everything is written.
    public func takeChanges(scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] }) -> StoreChanges {
        defer { if checksInvariants { checkInvariants() } }
        var out = StoreChanges()
        let log = changes ?? ChangeLog(replacedAll: true)
        changes = ChangeLog()
        let marked = slots.takeMarked()
        let originState = origin.persistentState
        let serverKeys = originState?.takeChangedKeys() ?? []
        out.state = JSONValue.object(snapshotState(scheduledCommand: scheduledCommand, forStore: true)).compactText
        if log.replacedAll {
            out.replacesAll = true
            out.entries.reserveCapacity(entries.count)
            for s in entries.store.recencyOrder() { out.entries.append(storedEntry(s)) }
            out.log = requestLog.indices.map(storedLogLine)
            if let originState {
                for key in originState.allKeys() { out.server.append(originState.storedKey(key)) }
            }
            return out
        }
        out.removedKeys = log.removedKeys
        out.entries.reserveCapacity(marked.count)
        for s in marked where slots[Int(s)].live { out.entries.append(storedEntry(s)) }
        out.logCleared = log.logCleared
        var seen = Set<Int>()
        for position in log.logPositions where position < requestLog.count && seen.insert(position).inserted {
            out.log.append(storedLogLine(position))
        }
        if let originState { out.server = serverKeys.map(originState.storedKey) }
        return out
    }

    private func storedEntry(_ slot: Int32) -> StoredEntry {
        StoredEntry(key: slots[Int(slot)].key, recency: Int64(bitPattern: slots[Int(slot)].recency),
                    body: snapshotEntry(slot).compactText)
    }

    private func storedLogLine(_ position: Int) -> StoredLogLine {
        StoredLogLine(position: Int64(position), body: Self.logJSON(requestLog[position]).compactText)
    }
}

extension Snapshot {
    /// Reads a store's rows back into a checked snapshot, entries in their recency order.
    /// - Throws: `SnapshotError` naming the first problem (a damaged or foreign store).
    /// - Complexity: O(size of the rows).
    public init(stored: StoredState) throws(SnapshotError) {
        let state: JSONValue
        do { state = try JSONValue(parsing: stored.state, maxDepth: JSONValue.documentDepth) } catch {
            throw SnapshotError(path: "", "damaged store state (not valid JSON: \(error.message))")
        }
        guard case .object(var top) = state else { throw SnapshotError(path: "", "damaged store state (expected a JSON object)") }
        var entries: [JSONValue] = []
        entries.reserveCapacity(stored.entries.count)
        for entry in stored.entries {
            do { entries.append(try JSONValue(parsing: entry.body, maxDepth: JSONValue.documentDepth)) } catch {
                throw SnapshotError(path: "entries[\(entries.count)]", "damaged entry \(entry.key) (not valid JSON: \(error.message))")
            }
        }
        top["entries"] = .array(entries)
        if case .object(var server)? = top["server"] {
            var log: [JSONValue] = []
            log.reserveCapacity(stored.log.count)
            for line in stored.log {
                do { log.append(try JSONValue(parsing: line.body, maxDepth: JSONValue.documentDepth)) } catch {
                    throw SnapshotError(path: "server.log[\(log.count)]", "damaged log line (not valid JSON: \(error.message))")
                }
            }
            server["log"] = .array(log)
            if server["data"] != nil {
                var data: [String: JSONValue] = [:]
                var modified: [String: JSONValue] = [:]
                for row in stored.server {
                    if let text = row.value {
                        do { data[row.key] = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch {
                            throw SnapshotError(path: "server.data.\(row.key)", "damaged server data (not valid JSON: \(error.message))")
                        }
                    }
                    if let ms = row.modifiedAt { modified[row.key] = CacheEngine.time(ms) }
                }
                server["data"] = .object(data)
                server["modified_at"] = .object(modified)
            }
            top["server"] = .object(server)
        }
        try self.init(.object(top))
        recencies = stored.entries.map { UInt64(bitPattern: $0.recency) }
    }
}
