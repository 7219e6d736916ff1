/// A persistent store of an engine's whole state (SPEC §5.3), kept as rows: one per entry (its
/// snapshot JSON and its recency stamp), one per line of the request log, one per key of the
/// origin's data (`OriginState`), and one state document with everything else.
///
/// The core decides what the rows hold and reads them back (`CacheEngine.takeChanges`,
/// `Snapshot(stored:)`); a store only keeps them, so an app can back it by any database and a test
/// by memory. A commit must be atomic: after a crash the store holds the rows of the last
/// completed commit.
public protocol PersistentStore: AnyObject {
    /// Everything the store holds but its entries, or nil when it is new (holds no state yet).
    /// - Throws: `StoreError` when the store cannot be read, or is not one this build reads.
    func load() throws(StoreError) -> StoredState?

    /// Calls `each` with every entry row, least recent first, without holding them all; stops at
    /// the first error `each` throws and rethrows it.
    /// - Throws: `StoreError` when the store cannot be read, or from `each`.
    func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError)

    /// `loadEntries` in the order the store reads its rows fastest, which need not be recency
    /// order (for SQLite, the table's own: recency order for rows written and not read since),
    /// for a reader that orders them itself (`Snapshot.takeRowsInAnyOrder`). The default is
    /// `loadEntries`.
    /// - Throws: `StoreError` when the store cannot be read, or from `each`.
    func loadEntriesInStoredOrder(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError)

    /// Applies the changes in one transaction: all of them or none.
    /// - Throws: `StoreError` when the transaction failed; then nothing of it was applied.
    func commit(_ changes: StoreChanges) throws(StoreError)

    /// Ends the use of the store at a clean exit: leaves what was committed where a copy of the
    /// store finds it (for SQLite, the database file alone) and lets another process open it.
    /// Commits after it fail; a second close does nothing.
    /// - Throws: `StoreError` when that fails; what was committed stays committed.
    func close() throws(StoreError)

    /// Whether the store can only be read (a file without write permission): a session on it
    /// runs only what changes nothing it keeps, and commits nothing.
    var isReadOnly: Bool { get }

    /// The store as messages name it (for SQLite, its file as given).
    var path: String { get }
}

extension PersistentStore {
    /// A store whose fastest order is recency order.
    public func loadEntriesInStoredOrder(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
        try loadEntries(each)
    }

    /// A store with nothing to finish (one in memory) closes by doing nothing.
    public func close() throws(StoreError) {}

    /// A store is written unless it says otherwise.
    public var isReadOnly: Bool { false }

    /// A store with no file.
    public var path: String { "the store" }
}

/// One entry row, in typed columns: its key, its recency stamp (larger is more recent), its value
/// as compact JSON text, its times in ms since the epoch (nil for never), its store sequence
/// number, the sequence numbers of the request that stored it and of its last local write and put
/// (0 for none), its tags as a JSON array (nil for none) and, as a JSON object, the fields most
/// entries do not have (`invalidated`, `expiry_counted`, `expiry_overridden`, `expiry_seq`,
/// `mutations`, and outside LRU `rank`, `uses`, `visited`, as in a snapshot's entry; nil for none).
///
/// `rowID` names the row: the engine gives each entry's row an id (positive, unique among the
/// rows, larger for a newer row; 0 for none) and a store reads and writes rows by it, so it need
/// not find a row by its key. A row loaded from a store carries the id the store keeps it under.
public struct StoredEntry: Sendable, Equatable {
    public var key: String
    /// The row's id (0: none given).
    public var rowID: Int64
    public var recency: Int64
    /// The value as compact JSON text. An entry read from a store keeps the value parsed into the
    /// engine's stored form (``withValueUTF8(_:)`` lends its text): no string is made for it.
    public var value: String {
        get {
            switch valueText {
            case .text(let text): return text
            case .stored(let stored): return stored.text
            }
        }
        set { valueText = .text(newValue) }
    }
    /// The value's text: a string, or the engine's stored value (its compact text).
    private var valueText: ValueText
    private enum ValueText: Sendable {
        case text(String)
        case stored(StoredValue)
    }
    public var storedAt: Int64
    public var staleAt: Int64?
    public var expiresAt: Int64?
    public var seq: Int64
    public var storedRequest: Int64
    public var lastWrite: Int64
    public var lastPut: Int64
    public var tags: String?
    public var extra: String?
    public init(key: String, recency: Int64, value: String, storedAt: Int64, staleAt: Int64?, expiresAt: Int64?,
                seq: Int64, storedRequest: Int64 = 0, lastWrite: Int64 = 0, lastPut: Int64 = 0,
                tags: String? = nil, extra: String? = nil, rowID: Int64 = 0) {
        // Each field set here, not by delegating to another initializer (which builds the entry
        // apart and copies it: a retain and release of each reference, per row).
        self.key = key; self.rowID = rowID; self.recency = recency; self.valueText = .text(value); self.storedAt = storedAt
        self.staleAt = staleAt; self.expiresAt = expiresAt; self.seq = seq
        self.storedRequest = storedRequest; self.lastWrite = lastWrite; self.lastPut = lastPut
        self.tags = tags; self.extra = extra
    }

    /// An entry read from a store's row, its value given as the UTF-8 bytes of its JSON text
    /// (read where the store keeps them, during the call): a text of ASCII bytes (every value
    /// cachesh writes) that reads as JSON is kept as its stored value, so loading parses it once,
    /// with no string and no tree (`Snapshot.append` takes the value as it is); any other text is
    /// kept as a string (invalid UTF-8 repaired, as a `String` would read it) and read by `append`
    /// as before, which reports a damaged value.
    public init(key: String, recency: Int64, valueUTF8 bytes: UnsafeBufferPointer<UInt8>, storedAt: Int64, staleAt: Int64?,
                expiresAt: Int64?, seq: Int64, storedRequest: Int64, lastWrite: Int64, lastPut: Int64,
                tags: String?, extra: String?, rowID: Int64) {
        // The value first, then every field at once (set after the others in a branch, it made
        // Swift copy the row built so far and destroy the copy, per row).
        let text: ValueText
        if bytes.isAllASCII, let stored = try? StoredValue(parsingJSON: bytes, maxDepth: JSONValue.maxDepth) {
            text = .stored(stored)
        } else {
            text = .text(String(decoding: bytes, as: UTF8.self))
        }
        self.key = key; self.rowID = rowID; self.recency = recency; self.valueText = text; self.storedAt = storedAt
        self.staleAt = staleAt; self.expiresAt = expiresAt; self.seq = seq
        self.storedRequest = storedRequest; self.lastWrite = lastWrite; self.lastPut = lastPut
        self.tags = tags; self.extra = extra
    }

    /// The value as the engine keeps it, when the row holds it so (read from a store that
    /// parsed it, or taken from an engine); nil for a value held as text.
    var storedValue: StoredValue? {
        if case .stored(let stored) = valueText { return stored }
        return nil
    }

    /// Calls `body` with the UTF-8 bytes of the value's compact text, where they are kept.
    public func withValueUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch valueText {
        case .text(var text): return try text.withUTF8(body)
        case .stored(let stored): return try stored.withUTF8(body)
        }
    }

    /// Equal when every field of the row's contents is, the value compared as text (however it is
    /// held); the row id, where a store keeps the row, is not compared.
    public static func == (a: StoredEntry, b: StoredEntry) -> Bool {
        a.key == b.key && a.recency == b.recency && a.storedAt == b.storedAt && a.staleAt == b.staleAt
            && a.expiresAt == b.expiresAt && a.seq == b.seq && a.storedRequest == b.storedRequest
            && a.lastWrite == b.lastWrite && a.lastPut == b.lastPut && a.tags == b.tags && a.extra == b.extra
            && a.withValueUTF8 { x in b.withValueUTF8 { y in x.elementsEqual(y) } }
    }

    /// The fields with columns of their own (the rest go in `extra`).
    static let columnFields = ["key", "value", "state", "stored_at", "stale_at", "expires_at", "tags", "seq",
                               "stored_request", "last_write", "last_put"]
}

/// An entry that only moved in the recency order: its row (`rowID`, as `StoredEntry`'s) keeps
/// everything but the stamp.
public struct StoredRecency: Sendable, Equatable {
    public var key: String
    public var recency: Int64
    public var rowID: Int64
    public init(key: String, recency: Int64, rowID: Int64 = 0) { self.key = key; self.recency = recency; self.rowID = rowID }
}

/// One line of the request log, at its position (0 is the oldest), as snapshot JSON.
public struct StoredLogLine: Sendable, Equatable {
    public var position: Int64
    public var body: String
    public init(position: Int64, body: String) { self.position = position; self.body = body }
}

/// One key of the origin's data (`OriginState.data` and `modifiedAt`): its value as JSON text
/// (nil once deleted) and when it last changed (ms since the epoch). A row with neither is
/// deleted. The origin's settings stay in the state document, as it wrote them.
public struct StoredServerKey: Sendable, Equatable {
    public var key: String
    public var value: String?
    public var modifiedAt: Int64?
    /// The header fields the key of an HTTP namespace is served with, as a JSON array of
    /// `[name, value]` pairs (schema 7); nil for none.
    public var headers: String?
    public init(key: String, value: String?, modifiedAt: Int64?, headers: String? = nil) {
        self.key = key; self.value = value; self.modifiedAt = modifiedAt; self.headers = headers
    }
}

/// Everything a store holds but its entries (which `PersistentStore.loadEntries` streams): the state
/// document, the request log in order, the origin's keys in any order.
public struct StoredState: Sendable {
    public var state: String
    public var log: [StoredLogLine]
    public var server: [StoredServerKey]
    /// How many entry rows there are (room to reserve).
    public var entryCount: Int
    public init(state: String, log: [StoredLogLine], server: [StoredServerKey], entryCount: Int = 0) {
        self.state = state; self.log = log; self.server = server; self.entryCount = entryCount
    }
}

/// The rows one commit writes. Applied in this order: with `replacesAll`, every row goes first;
/// with `logCleared`, every log row; then `removedKeys` are deleted, then `entries`, `recencies`,
/// `log` and `server` rows written (replacing rows of the same key or position), then the state
/// document. A key is in at most one of `entries` and `recencies`.
///
/// Entry rows are named by their row ids (`StoredEntry.rowID`): an entry row replaces the row of
/// its id, a new id is a new row, `removedRowIDs[i]` is the id of `removedKeys[i]`'s row (0 when
/// it had none: the entry came and went between two commits). With `replacesAll` the ids are
/// 1, 2, ... in recency order. An entry row whose id is `firstNewRowID` or more is new: the store
/// holds no row of that id (it may insert the row without looking for one).
///
/// The ids are the cache's (it gives them), so a store takes the changes of one cache only, the
/// one that read it or wrote it anew: two caches committing to one store would give two rows one
/// id. (The shell holds a store's lock for one session at a time.)
public struct StoreChanges: Sendable {
    /// Whether committing these changes would leave a store whose state document is `state`
    /// as it is: no row to write, move or remove, and the same document.
    public func changesNothing(besides state: String) -> Bool {
        !replacesAll && !logCleared && removedKeys.isEmpty && removedRowIDs.isEmpty && rows.isEmpty
            && recencies.isEmpty && log.isEmpty && server.isEmpty && self.state == state
    }

    public var replacesAll = false
    public var firstNewRowID: Int64 = .max
    public var logCleared = false
    public var removedKeys: [String] = []
    public var removedRowIDs: [Int64] = []
    /// The entry rows written, as a store binds them (the engine writes them from its slots).
    public var rows = StoredEntryRows()
    /// `rows` as entries (for tests and stores that take rows one by one): each read decodes
    /// them, each write encodes them all anew.
    public var entries: [StoredEntry] {
        get { rows.entries }
        set { rows = StoredEntryRows(newValue) }
    }
    public var recencies: [StoredRecency] = []
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
    /// The row id of each of `removedKeys` (0 for none).
    var removedRowIDs: [Int64] = []
    var logCleared = false
    /// Positions of request-log lines added or changed (repeats allowed).
    var logPositions: [Int] = []
}

extension CacheEngine {
    /// Starts noting what changes, for `takeChanges`.
    /// - Parameter everything: the first `takeChanges` writes the whole state (a new store); else
    ///   only what changes from now on (a store this state was just read from, whose rows' ids
    ///   the entries keep; when they do not, everything is written all the same).
    public func startTrackingChanges(everything: Bool) {
        defer { if checksInvariants { checkInvariants() } }
        slots.tracking = true
        _ = slots.takeChanged()
        changes = ChangeLog(replacedAll: everything || !slots.keepsRowIDs)
        slots.keepRowIDs()
        origin.persistentState?.startTrackingChanges()
    }

    /// The changes last taken were not committed (the commit failed, and the store holds the rows
    /// as they were): the next `takeChanges` writes everything anew, so the store and the
    /// engine's row ids agree again whatever the failed commit did.
    public func changesNotCommitted() {
        guard changes != nil else { return }
        changes = ChangeLog(replacedAll: true)
    }

    /// The rows that changed since the last call (everything, the first time or after `restore`).
    /// An entry that only moved in the recency order (a `get`) is a `StoredRecency`, not a row.
    ///
    /// - Parameters:
    ///   - scheduledCommand: the fields written beside each scheduled command, as for
    ///     `makeSnapshot`.
    ///   - rows: buffers to write the entry rows into (those of the changes last committed: their
    ///     rows are removed, their room kept, `StoredEntryRows.removeAll`).
    /// - Complexity: O(k + r + d) for k entries changed, r requests and queued items, d server keys
    ///   changed; O(n) for n entries when everything is written.
    public func takeChanges(scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] },
                            reusing rows: consuming StoredEntryRows = StoredEntryRows()) -> StoreChanges {
        defer { if checksInvariants { checkInvariants() } }
        var out = StoreChanges()
        // (Consumed: a copy still held here would make the first row's write copy the buffers.)
        out.rows = consume rows
        out.rows.removeAll()
        let log = changes ?? ChangeLog(replacedAll: true)
        changes = ChangeLog()
        let (written, moved) = slots.takeChanged()
        let originState = origin.persistentState
        let serverKeys = originState?.takeChangedKeys() ?? []
        out.state = JSONValue.object(snapshotState(scheduledCommand: scheduledCommand, forStore: true)).compactText
        if log.replacedAll {
            out.replacesAll = true
            out.rows.reserveCapacity(entries.count)
            let order = entries.ordered.recencyOrder()
            slots.renumberRows(order)
            out.firstNewRowID = 1
            appendRows(order, ids: order.map { slots.rowID(Int($0)) }, to: &out.rows)
            out.log = requestLog.indices.map(storedLogLine)
            if let originState {
                for key in originState.allKeys() { out.server.append(originState.storedKey(key)) }
            }
            return out
        }
        out.removedKeys = log.removedKeys
        out.removedRowIDs = log.removedRowIDs
        out.firstNewRowID = slots.nextRowID
        out.rows.reserveCapacity(written.count)
        // A new entry's row gets the next id here, in the order first written: new rows go at
        // the right edge of a store's table, in order.
        let ids = slots.rowIDsForWrite(written)
        appendRows(written, ids: ids, to: &out.rows)
        out.recencies.reserveCapacity(moved.count)
        for s in moved {
            let id = slots.rowID(Int(s))
            // (Every live entry got its row when it was first taken; one without is written whole.)
            if id == 0 {
                appendRow(s, rowID: slots.rowIDForWrite(Int(s)), to: &out.rows)
                continue
            }
            out.recencies.append(StoredRecency(key: slots[Int(s)].key, recency: Int64(bitPattern: slots[Int(s)].recency), rowID: id))
        }
        out.logCleared = log.logCleared
        var seen = Set<Int>()
        for position in log.logPositions where position < requestLog.count && seen.insert(position).inserted {
            out.log.append(storedLogLine(position))
        }
        if let originState { out.server = serverKeys.map(originState.storedKey) }
        return out
    }

    /// Appends the rows of the slots of `list` whose ids (`ids`, in the same order) are not 0:
    /// runs of plain rows by `EntrySlots.appendPlainRows` (an entry that `rowIsPlain`, in an LRU
    /// namespace that is not an HTTP one, whose keys may have responses to write, its value
    /// holding its text), each other row between them by `appendRow`.
    private func appendRows(_ list: [Int32], ids: [Int64], to rows: inout StoredEntryRows) {
        var plain = entries.ordered.lruNamespaces
        if hasHTTPNamespaces {
            // (Only an HTTP namespace's keys have responses: `noteHTTPNamespaces` forgets the
            // others'.)
            for ns in namespaces.indices where ns < plain.count && namespaces.policy(Int32(ns)).http != nil { plain[ns] = false }
        }
        var k = 0
        while k < list.count {
            k = slots.appendPlainRows(list, ids: ids, from: k, plainNamespaces: plain, to: &rows)
            if k < list.count {
                appendRow(list[k], rowID: ids[k], to: &rows)
                k += 1
            }
        }
    }

    /// Appends the row of the entry in `slot` to `rows`, each field read where the slot keeps it
    /// (the entry is not copied out, which retains and releases every reference it holds): its
    /// key's bytes, its value's compact text as the engine keeps it (no tree built and printed, no
    /// string made), and its fields encoded in place (`EntryRowFields`).
    ///
    /// What `extra` holds is what the entry's snapshot object holds beyond the row's columns
    /// (`snapshotEntryExtras`, the one list of those fields); an entry with nothing of it (nothing
    /// out of line, no flag of its own, an LRU namespace that is not an HTTP one) whose value
    /// holds its text (most entries) is written by `EntrySlots.appendPlainRows` instead
    /// (`appendRows`), with no dictionary built.
    private func appendRow(_ slot: Int32, rowID: Int64, to rows: inout StoredEntryRows) {
        let i = Int(slot)
        var extra = snapshotEntryExtras(slot)
        for name in ["stored_request", "last_write", "last_put"] { extra[name] = nil }
        let extraText = extra.isEmpty ? nil : JSONValue.object(extra).compactText
        var tagsText = slots[i].tags.isEmpty ? nil : Self.strings(slots[i].tags).compactText
        let keyCount = slots[i].key.utf8.count
        let valueCount = slots[i].stored.utf8Count
        let start = rows.byteCount
        let textRoom = tagsText == nil && extraText == nil
            ? 0 : 2 * EntryRowFields.maxCountBytes + (tagsText?.utf8.count ?? 0) + (extraText?.utf8.count ?? 0)
        rows.makeRoom(start + keyCount + valueCount + EntryRowFields.maxNumberBytes + textRoom)
        let staleAt = slots[i].staleAt, expiresAt = slots[i].expiresAt
        // The key, the value and the fields written where the buffer has room for them (one
        // access to it, no capacity checked per piece).
        let (keyEnd, valueEnd, fieldsEnd) = rows.bytes.withUnsafeMutableBufferPointer { buffer -> (Int, Int, Int) in
            let out = buffer.baseAddress!
            var at = start + StoredEntryRows.copyKey(slots[i].key, to: out + start)
            let keyEnd = at
            slots[i].stored.withUTF8 { v in
                if let base = v.baseAddress { (out + at).update(from: base, count: v.count) }
            }
            at += valueCount
            let valueEnd = at
            at += EntryRowFields.writeNumbers(storedAt: slots[i].storedAt, staleAt: staleAt == .max ? nil : staleAt,
                                              expiresAt: expiresAt == .max ? nil : expiresAt,
                                              seq: Int64(bitPattern: slots[i].storedSeq),
                                              storedRequest: Int64(bitPattern: slots[i].storedRequest),
                                              lastWrite: Int64(bitPattern: slots[i].lastLocalWrite),
                                              lastPut: Int64(bitPattern: slots[i].lastPut),
                                              tags: tagsText != nil, extra: extraText != nil, into: out + at)
            if tagsText != nil { at += tagsText!.withUTF8 { EntryRowFields.writeText($0, into: out + at) } }
            if var extraText { at += extraText.withUTF8 { EntryRowFields.writeText($0, into: out + at) } }
            return (keyEnd, valueEnd, at)
        }
        rows.appendRow(rowID: rowID, recency: Int64(bitPattern: slots[i].recency), keyEnd: keyEnd, valueEnd: valueEnd,
                       fieldsEnd: fieldsEnd)
    }

    private func storedLogLine(_ position: Int) -> StoredLogLine {
        StoredLogLine(position: Int64(position), body: Self.logJSON(requestLog[position]).compactText)
    }
}

extension StoredEntry {
    /// The fields of an entry row written by schema 3 (snapshot JSON in one text column) in typed
    /// columns, for the upgrade of such a store.
    /// - Throws: `SnapshotError` when the text is not an entry object of a snapshot.
    public init(key: String, recency: Int64, snapshotJSON text: String) throws(SnapshotError) {
        let json: JSONValue
        do { json = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch {
            throw SnapshotError(path: "", "damaged entry \(key) (not valid JSON: \(error.message))")
        }
        var o = try SnapshotObject(json, SnapshotPath("entry \(key)"))
        // Written by an older cachesh, whose rows may hold times as numbers.
        o.isStoreRow = true
        var rest = o.fields
        for name in Self.columnFields { rest[name] = nil }
        let tags = try o.strings("tags")
        self.init(key: key, recency: recency, value: try o.value("value").compactText, storedAt: try o.time("stored_at"),
                  staleAt: try Self.never(o.timeOrNever("stale_at")), expiresAt: try Self.never(o.timeOrNever("expires_at")),
                  seq: Int64(bitPattern: try o.seq("seq")), storedRequest: Int64(bitPattern: try o.seq("stored_request", default: 0)),
                  lastWrite: Int64(bitPattern: try o.seq("last_write", default: 0)),
                  lastPut: Int64(bitPattern: try o.seq("last_put", default: 0)),
                  tags: tags.isEmpty ? nil : CacheEngine.strings(tags).compactText,
                  extra: rest.isEmpty ? nil : JSONValue.object(rest).compactText)
    }

    private static func never(_ ms: Int64) -> Int64? { ms == .max ? nil : ms }

    /// The row as a snapshot's entry object (its `state` is not stored: it follows from the times
    /// and is checked, not read, by decoding).
    func snapshotObject() throws(SnapshotError) -> JSONValue {
        func parse(_ text: String, _ what: String) throws(SnapshotError) -> JSONValue {
            do { return try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch {
                throw SnapshotError(path: "entries", "damaged entry \(key) (\(what) is not valid JSON: \(error.message))")
            }
        }
        var f: [String: JSONValue] = [:]
        if let extra {
            guard case .object(let fields) = try parse(extra, "extra") else {
                throw SnapshotError(path: "entries", "damaged entry \(key) (extra is not a JSON object)")
            }
            f = fields
        }
        for name in Self.columnFields where f[name] != nil {
            throw SnapshotError(path: "entries", "damaged entry \(key) (extra holds \(name))")
        }
        f["key"] = .string(key)
        f["value"] = try parse(value, "value")
        f["state"] = .string(EntryState.fresh.rawValue)
        f["stored_at"] = .int(storedAt)
        f["stale_at"] = staleAt.map(JSONValue.int) ?? .null
        f["expires_at"] = expiresAt.map(JSONValue.int) ?? .null
        f["tags"] = try tags.map { text throws(SnapshotError) in try parse(text, "tags") } ?? .array([])
        f["seq"] = .int(seq)
        if storedRequest != 0 { f["stored_request"] = .int(storedRequest) }
        if lastWrite != 0 { f["last_write"] = .int(lastWrite) }
        if lastPut != 0 { f["last_put"] = .int(lastPut) }
        return .object(f)
    }
}

/// A store's entry rows as `Snapshot.append(_:)` reads them: straight into the entry table the
/// engine will run on (no list of decoded entries beside it), with what the checks of the rows
/// before need.
struct StoredRows {
    /// The entries read so far, least recent first; slot i holds row i.
    var table: EntryTable
    /// Namespace slots by name.
    var namespaceIndex: [String: Int]
    /// Each row's recency stamp, by slot (set in the table by `finishStored`).
    var recencies: [UInt64] = []
    /// Rows may come in any order (`Snapshot.takeRowsInAnyOrder`): `finishStored` orders them.
    var anyOrder = false
    /// Each row came after the one before in recency order (so far).
    var inOrder = true
    /// A row came without a row id (0 or less), or with one past `Snapshot.largestKeptRowID`: the
    /// table keeps none (the first commit writes every row anew, numbered from 1).
    var rowIDsMissing = false
    /// The eviction ranks of the entries of each namespace outside LRU, by namespace slot, then by slot.
    var ranks: [[Int32: OrderedSlots.Rank]]
    /// Ranks taken, by namespace slot.
    var seenRanks: [Set<Int64>]
    /// Rows read, by namespace slot.
    var perNamespace: [Int]
    /// The mutations in flight and queued, which a row's mutation log may wait for.
    var known: (inFlight: Set<UInt64>, queued: Set<UInt64>)
    /// The namespace of the row before (its name, which holds no colon, and its slot): rows of
    /// one namespace mostly come together, and bytes compared are cheaper than a name cut out of
    /// the key and hashed.
    var lastNamespace: (name: String, slot: Int)?

    /// The slot of the namespace of `key` (`KeyName.namespace(of:)`), nil for a namespace the
    /// state does not declare.
    mutating func namespaceSlot(ofKey key: String) -> Int? {
        if let last = lastNamespace {
            // The key starts with the name and a colon: its first colon, so that is its namespace.
            let same = key.utf8.withContiguousStorageIfAvailable { k in
                last.name.utf8.withContiguousStorageIfAvailable { n in
                    guard k.count > n.count && k[n.count] == UInt8(ascii: ":") else { return false }
                    for i in 0..<n.count where k[i] != n[i] { return false }
                    return true
                }
            }
            if same == true { return last.slot }
        }
        let name = KeyName.namespace(of: key)
        guard let slot = namespaceIndex[String(name)] else { return nil }
        lastNamespace = (String(name), slot)
        return slot
    }
}

extension Snapshot {
    /// The largest row id a cache keeps as its row's: a row loaded with a larger one (never given
    /// by cachesh, which counts from 1) makes the first commit write every row anew, numbered from
    /// 1, so that giving the next new row an id can never pass `Int64.max`.
    static let largestKeptRowID = Int64.max / 2

    /// A snapshot read from a store: the state document, log and server rows first
    /// (`init(stored:)`), then each entry row in recency order (`append`), then `finishStored`.
    /// - Throws: `SnapshotError` naming the first problem (a damaged or foreign store).
    /// - Complexity: O(size of the rows).
    public init(stored: StoredState) throws(SnapshotError) {
        let state: JSONValue
        do { state = try JSONValue(parsing: stored.state, maxDepth: JSONValue.documentDepth) } catch {
            throw SnapshotError(path: "", "damaged store state (not valid JSON: \(error.message))")
        }
        guard case .object(var top) = state else { throw SnapshotError(path: "", "damaged store state (expected a JSON object)") }
        top["entries"] = .array([])
        if case .object(var server)? = top["server"] {
            var log: [JSONValue] = []
            log.reserveCapacity(stored.log.count)
            for line in stored.log {
                // Line i is at position i: the engine writes each line back at its index, so a
                // gap would leave a line behind that the next open reads in the wrong place.
                if line.position != Int64(log.count) {
                    throw SnapshotError(path: "server.log[\(log.count)]", "damaged log row: at position \(line.position), not \(log.count) (the positions are 0, 1, 2, ...)")
                }
                do { log.append(try JSONValue(parsing: line.body, maxDepth: JSONValue.documentDepth)) } catch {
                    throw SnapshotError(path: "server.log[\(log.count)]", "damaged log line (not valid JSON: \(error.message))")
                }
            }
            server["log"] = .array(log)
            if server["data"] != nil {
                var data: [String: JSONValue] = [:]
                var modified: [String: JSONValue] = [:]
                var headers: [String: JSONValue] = [:]
                for row in stored.server {
                    if let text = row.value {
                        do { data[row.key] = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch {
                            throw SnapshotError(path: "server.data.\(row.key)", "damaged server data (not valid JSON: \(error.message))")
                        }
                    }
                    if let ms = row.modifiedAt { modified[row.key] = CacheEngine.time(ms) }
                    if let text = row.headers {
                        do { headers[row.key] = try JSONValue(parsing: text, maxDepth: 2) } catch {
                            throw SnapshotError(path: "server.headers.\(row.key)", "damaged server headers (not valid JSON: \(error.message))")
                        }
                    }
                }
                server["data"] = .object(data)
                server["modified_at"] = .object(modified)
                // Only when some key has them, as a snapshot writes them.
                if !headers.isEmpty { server["headers"] = .object(headers) }
            }
            top["server"] = .object(server)
        }
        try self.init(.object(top), entriesFollow: true)
        var namespaceIndex: [String: Int] = [:]
        for (i, ns) in namespaces.enumerated() { namespaceIndex[ns.name] = i }
        var rows = StoredRows(table: EntryTable(idField: idField, namespaceCount: namespaces.count, capacity: stored.entryCount),
                              namespaceIndex: namespaceIndex,
                              ranks: Array(repeating: [:], count: namespaces.count),
                              seenRanks: Array(repeating: [], count: namespaces.count),
                              perNamespace: Array(repeating: 0, count: namespaces.count),
                              known: mutationsKnown)
        rows.recencies.reserveCapacity(stored.entryCount)
        rows.table.slots.keepRowIDs()
        self.stored = rows
    }

    /// Lets `append` take the rows in any order (`PersistentStore.loadEntriesInStoredOrder`);
    /// `finishStored` then orders them by their stamps (in O(n), most often finding them in
    /// order already) and refuses two rows of one stamp. Only where every namespace is LRU,
    /// whose order follows from the stamps alone (outside LRU, a namespace's order is read from
    /// rows in recency order). The state read is the same as from rows in recency order, but
    /// for which slot holds which entry. A row refused is named by its place in the order read,
    /// not in recency order: a reader given an error reads the rows again, in recency order
    /// (`loadEntries`), and reports what that gives.
    /// - Returns: whether rows may come in any order (false: they must come least recent first).
    public mutating func takeRowsInAnyOrder() -> Bool {
        guard stored != nil, stored!.recencies.isEmpty else { preconditionFailure("takeRowsInAnyOrder after the first row") }
        guard namespaces.allSatisfy({ $0.policy.eviction == .lru }) else { return false }
        stored!.anyOrder = true
        return true
    }

    /// Checks one entry row (the next in recency order) and adds it to a snapshot read from a store.
    /// A row is checked as a snapshot's entry is, against the state read before it: each field on
    /// its own, then the entry against the clock, sequence numbers, mutations and its namespace's
    /// policy (`checkEntry`). A key seen before is found in the table's key index: no set of keys
    /// is kept beside it.
    /// - Throws: `SnapshotError` for a damaged row; the snapshot is then not to be used.
    public mutating func append(_ row: StoredEntry) throws(SnapshotError) {
        guard stored != nil else { preconditionFailure("append to a snapshot not read from a store") }
        let index = stored!.recencies.count
        let path = SnapshotPath("entries").element(index)
        // Arguments read from `stored` before each call of a method of `self`: read in the call,
        // they made Swift copy the whole snapshot for it (a retain and a release of each of its
        // references, per row).
        var previousRecency = stored!.recencies.last
        let known = stored!.known
        if stored!.anyOrder, let previous = previousRecency {
            // Their order is `finishStored`'s to check: a stamp before the last is no error yet.
            if row.recency >= 0 && UInt64(row.recency) <= previous { stored!.inOrder = false }
            previousRecency = nil
        }
        try checkRowNumbers(row, path: path, previousRecency: previousRecency)
        var entry: Entry
        var rank: OrderedSlots.Rank?
        if row.extra == nil, let ns = stored!.namespaceSlot(ofKey: row.key), let plain = try plainEntry(row, namespace: ns, path: path) {
            entry = plain
        } else {
            if stored!.table.slot(forKey: row.key) != nil { throw SnapshotError(path: path.field("key"), "\(row.key) appears twice") }
            // `decodeEntry` appends to `entries` and `ranks` (and names the row by their count):
            // the entry is moved on into the table at once.
            var checks = EntryChecks(seen: [], seenRanks: [])
            swap(&checks.seenRanks, &stored!.seenRanks)
            defer { swap(&checks.seenRanks, &stored!.seenRanks) }
            let namespaceIndex = stored!.namespaceIndex
            do { try decodeEntry(row.snapshotObject(), namespaceIndex: namespaceIndex, checks: &checks, storeRow: true) } catch {
                var error = error
                if error.path.hasPrefix("entries[0]") { error.path = "entries[\(index)]" + error.path.dropFirst("entries[0]".count) }
                throw error
            }
            entry = entries.removeLast()
            rank = ranks.removeLast()
        }
        try checkEntry(entry, at: index, known: known)
        let ns = Int(entry.namespace)
        stored!.perNamespace[ns] += 1
        // Moved into the table (not used after): no copy of the entry and its references.
        let slot = stored!.table.insert(consume entry)
        if row.rowID > 0 && row.rowID <= Self.largestKeptRowID {
            stored!.table.slots.setRowID(Int(slot), row.rowID)
        } else {
            stored!.rowIDsMissing = true
        }
        if let rank { stored!.ranks[ns][slot] = rank }
        stored!.recencies.append(UInt64(bitPattern: row.recency))
    }

    /// Sorts the rows' stamps (`stamps[slot]`) into recency order, in place, each made
    /// `(stamp - least) << 32 | slot`: a radix sort of the bits in which the stamps differ from
    /// the least (passes of 11 bits: two for stamps spanning less than 2^22, three below 2^32),
    /// stable, with one buffer of the same size beside it while it sorts (8 MB at 1 M rows).
    /// - Returns: the least stamp; nil, with `stamps` in no order, when two rows share a stamp
    ///   or the stamps span 2^32 or more (rows to be read in recency order instead).
    /// - Complexity: O(n) for n stamps.
    static func sortByStamps(_ stamps: inout [UInt64]) -> UInt64? {
        guard var least = stamps.first else { return 0 }
        var most = least
        for s in stamps {
            least = Swift.min(least, s)
            most = Swift.max(most, s)
        }
        let span = most - least
        guard span < 1 << 32, stamps.count < 1 << 31 else { return nil }
        let bits = UInt64.bitWidth - span.leadingZeroBitCount
        let digitBits = 11
        let mask = UInt64(1 << digitBits - 1)
        var scratch = [UInt64](repeating: 0, count: stamps.count)
        var counts = [Int](repeating: 0, count: 1 << digitBits)
        stamps.withUnsafeMutableBufferPointer { a in
            for i in a.indices { a[i] = (a[i] &- least) << 32 | UInt64(i) }
        }
        var shift = 32
        while shift < 32 + bits {
            stamps.withUnsafeBufferPointer { from in
                scratch.withUnsafeMutableBufferPointer { to in
                    counts.withUnsafeMutableBufferPointer { c in
                        c.update(repeating: 0)
                        for k in from { c[Int(truncatingIfNeeded: k >> UInt64(shift) & mask)] += 1 }
                        var sum = 0
                        for d in c.indices {
                            let n = c[d]
                            c[d] = sum
                            sum += n
                        }
                        for k in from {
                            let d = Int(truncatingIfNeeded: k >> UInt64(shift) & mask)
                            to[c[d]] = k
                            c[d] += 1
                        }
                    }
                }
            }
            swap(&stamps, &scratch)
            shift += digitBits
        }
        let shared = stamps.withUnsafeBufferPointer { a in
            a.indices.dropFirst().contains { a[$0] >> 32 == a[$0 - 1] >> 32 }
        }
        return shared ? nil : least
    }

    /// The integers only a store's row carries, checked against what the engine does with them
    /// (a snapshot's entries pass the same checks through their JSON, `decodeEntry`): the
    /// recency stamp, from which the engine counts on by one for every read and write, lies in
    /// 0...`largestKeptRowID` and each is larger than the one before (the rows come in recency
    /// order); the entry's age and the time left to its stale and expiry instants (`now - stored_at`,
    /// `stale_at - now`, `expires_at - now`), which reads compute, are numbers the engine holds.
    private func checkRowNumbers(_ row: StoredEntry, path: SnapshotPath, previousRecency: UInt64?) throws(SnapshotError) {
        if row.recency < 0 || row.recency > Self.largestKeptRowID {
            throw SnapshotError(path: path.field("recency"), "\(row.recency) is not a recency stamp (0 to \(Self.largestKeptRowID))")
        }
        if let previousRecency, UInt64(row.recency) <= previousRecency {
            throw SnapshotError(path: path.field("recency"), "\(row.recency) is not after the stamp of the row before (\(previousRecency)): two rows share a place in the recency order")
        }
        if now.subtractingReportingOverflow(row.storedAt).overflow {
            throw SnapshotError(path: path.field("stored_at"), "\(row.storedAt) is so far from now that the entry's age is no number")
        }
        // Each field on its own (no list of them built per row).
        func checkLeft(_ name: String, _ time: Int64?) throws(SnapshotError) {
            if let time, time != .max, time.subtractingReportingOverflow(now).overflow {
                throw SnapshotError(path: path.field(name), "\(time) is so far from now that the time left is no number")
            }
        }
        try checkLeft("stale_at", row.staleAt)
        try checkLeft("expires_at", row.expiresAt)
    }

    /// A row without rare fields of an LRU namespace as an entry, checked as `decodeEntry` checks
    /// an entry object, without building one: the common case, once per entry when a store is opened.
    /// - Parameter ns: the slot of the row's namespace.
    /// - Returns: nil, having changed nothing, for a row of a namespace outside LRU (whose entries
    ///   have eviction fields: `decodeEntry` tells what is missing).
    private func plainEntry(_ row: StoredEntry, namespace ns: Int, path: SnapshotPath) throws(SnapshotError) -> Entry? {
        func fail(_ name: String, _ message: String) -> SnapshotError { SnapshotError(path: path.field(name), message) }
        let key = row.key
        guard namespaces[ns].policy.eviction == .lru else { return nil }
        try SnapshotObject.checkKey(key) { fail("key", $0) }
        guard stored!.table.slot(forKey: key) == nil else { throw fail("key", "\(key) appears twice") }
        // The value as the store parsed it (`StoredEntry(valueUTF8:)`), else parsed here; either
        // is the stored form of the same JSON (`StoredValue(parsingJSON:)`).
        let value: StoredValue
        if let parsed = row.storedValue {
            value = parsed
        } else {
            do { value = try StoredValue(parsingJSON: row.value, maxDepth: JSONValue.maxDepth) } catch {
                throw SnapshotError(path: "entries", "damaged entry \(key) (value is not valid JSON: \(error.message))")
            }
        }
        // Only a long text can print longer than a value may be (its compact text at most 6
        // times as long).
        if value.utf8Count > JSONValue.maxBytes / 8, let problem = value.json.sizeProblem { throw fail("value", problem) }
        var tags: [String] = []
        if let text = row.tags {
            let list: JSONValue
            do { list = try JSONValue(parsing: text, maxDepth: 1) } catch {
                throw SnapshotError(path: "entries", "damaged entry \(key) (tags is not valid JSON: \(error.message))")
            }
            guard case .array(let items) = list else { throw fail("tags", "expected an array") }
            tags.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                guard case .string(let tag) = item else { throw SnapshotError(path: path.child("tags").element(i).text, "expected a string") }
                tags.append(tag)
            }
        }
        // Each field on its own, in this order (no list of them built per row).
        func checkSeq(_ name: String, _ n: Int64) throws(SnapshotError) {
            if n < 0 || n > SnapshotObject.maxSeq {
                throw fail(name, n < 0 ? "expected a sequence number (a whole number, not negative)"
                                       : "\(n) is past the largest sequence number, \(SnapshotObject.maxSeq) (2^53)")
            }
        }
        try checkSeq("seq", row.seq)
        try checkSeq("stored_request", row.storedRequest)
        try checkSeq("last_write", row.lastWrite)
        try checkSeq("last_put", row.lastPut)
        func checkTime(_ name: String, _ t: Int64) throws(SnapshotError) {
            if t < 0 { throw fail(name, "is before 1970-01-01T00:00:00.000Z") }
        }
        try checkTime("stored_at", row.storedAt)
        try checkTime("stale_at", row.staleAt ?? 0)
        try checkTime("expires_at", row.expiresAt ?? 0)
        var entry = Entry(key: key, namespace: Int32(ns), stored: value, tags: tags, storedAt: row.storedAt,
                          staleAt: row.staleAt ?? .max, expiresAt: row.expiresAt ?? .max)
        entry.storedSeq = UInt64(row.seq)
        entry.storedRequest = UInt64(row.storedRequest)
        // Both at once: set one by one, a row whose two equal its stored request (every put's)
        // made and dropped a record out of line for the moment between (an allocation a row).
        entry.setWrites(local: UInt64(row.lastWrite), put: UInt64(row.lastPut))
        return entry
    }

    /// Ends the reading of a store's rows: checks what needs them all (each namespace's `max`,
    /// SIEVE's hands) and puts the stamps and eviction orders in the table.
    /// - Throws: `SnapshotError` for a namespace over its `max` or a hand on no entry of its namespace.
    public mutating func finishStored() throws(SnapshotError) {
        guard var rows = stored else { preconditionFailure("finishStored on a snapshot not read from a store") }
        stored = nil
        for (n, ns) in namespaces.enumerated() {
            if let max = ns.policy.max, rows.perNamespace[n] > max {
                throw SnapshotError(path: "namespaces.\(ns.name).max", "is \(max), but the store holds \(rows.perNamespace[n]) entries of \(ns.name)")
            }
        }
        for (n, key) in hands.sorted(by: { $0.key < $1.key }) {
            guard let slot = rows.table.slot(forKey: key), rows.table.slots[Int(slot)].namespace == Int32(n) else {
                throw SnapshotError(path: SnapshotPath("namespaces").child(namespaces[n].name).child("hand").text,
                                    "\(key) is not an entry of this namespace")
            }
        }
        if rows.inOrder {
            rows.table.restoreRecencies(rows.recencies)
        } else {
            guard let base = Self.sortByStamps(&rows.recencies) else {
                throw SnapshotError(path: "entries", "rows not in recency order that share a stamp, or whose stamps span 2^32 or more: to be read in recency order")
            }
            rows.table.restoreRecencies(inOrder: rows.recencies.lazy.map { (slot: Int32(truncatingIfNeeded: $0), stamp: base + $0 >> 32) })
        }
        rows.recencies = []
        if rows.rowIDsMissing { rows.table.slots.dropRowIDs() }
        for (n, ns) in namespaces.enumerated() where ns.policy.eviction != .lru {
            let hand = hands[n].flatMap { rows.table.slot(forKey: $0) } ?? -1
            rows.table.restoreOrder(Int32(n), ns.policy.eviction, ranks: rows.ranks[n], hand: hand, nextRank: nextRanks[n] ?? 0)
        }
        rows.ranks = []
        rows.seenRanks = []
        stored = rows
    }
}
