/// A snapshot document (SPEC §5.2, version 1) decoded and checked whole, ready to replace an
/// engine's state with `CacheEngine.restore(_:scheduleCommand:)`.
///
/// The document holds everything the engine needs to continue exactly: namespaces, entries in
/// recency order (least recent first) with their times, sequence numbers and mutation logs,
/// requests in flight with the answers the server already decided, queued mutations, scheduled
/// commands, the server's data, settings and log, statistics, watches, the clock and the sequence
/// counter. `CacheEngine.makeSnapshot` writes it; decoding refuses anything else with the JSON path
/// of the first problem, so a refused document changes nothing.
public struct Snapshot {
    /// The `format` field of every snapshot.
    public static let format = "cachesh-snapshot"
    /// The one version this build reads and writes.
    public static let version: Int64 = 1

    /// A command scheduled by `at`: the engine keeps its id and due time; `fields` are what the
    /// scheduler's owner (the shell) wrote beside them, for it to check and read back.
    public struct ScheduledCommand: Sendable {
        public var id: UInt64
        public var due: Int64
        public var fields: [String: JSONValue]
        /// Its JSON path (`pending.scheduled[2]`), for errors about `fields`.
        public var path: String
    }

    public internal(set) var clockStart: Int64 = 0
    public internal(set) var now: Int64 = 0
    var seq: UInt64 = 0
    var idField = "id"
    var pushRules: [String: PushRule] = [:]
    var watches: Set<WatchScope> = []
    /// Active keys and polls (written only when there are some, so older snapshots read the same).
    var behaviours = AppBehaviours()
    /// In slot order (the `index` of each namespace).
    var namespaces: [NamespaceState] = []
    /// Each namespace's counters, in slot order.
    var namespaceStats: [Stats] = []
    /// Least recently used first; slots and links are assigned by `restore`.
    var entries: [Entry] = []
    var requests: [InFlight] = []
    var fetchInFlight: [String: UInt64] = [:]
    var mutationQueue: [QueuedMutation] = []
    var replaying: UInt64?
    public internal(set) var scheduledCommands: [ScheduledCommand] = []
    /// The origin's own state (restored only into an engine whose origin keeps state: `Origin.persistentState`).
    var server: OriginState?
    var requestLog: [RequestLogEntry] = []
    /// Lines the log dropped to stay within its bound (`server.log_dropped`, absent when 0).
    var requestLogDropped = 0
    var total = Stats()
    /// Read from a store: its entry rows, already in an entry table (`append(_:)`, in
    /// PersistentStore.swift); `entries` and `ranks` are then empty.
    var stored: StoredRows?
    /// The hash of each entry's key (`KeyIndex.hash`), by entry, when decoding took them (else empty).
    var keyHashes: [UInt32] = []
    /// The eviction rank of each entry of a namespace not under LRU (nil under LRU), by entry.
    var ranks: [OrderedSlots.Rank?] = []
    /// SIEVE's hand of a namespace, by namespace slot: the key of the entry it rests on.
    var hands: [Int: String] = [:]
    /// The next rank stamp of a namespace not under LRU, by namespace slot.
    var nextRanks: [Int: UInt64] = [:]
    /// The stored responses of each HTTP key that has some (an entry's `http`), by key.
    var httpVariants: [String: [HTTPVariant]] = [:]
    /// The HTTP requests in flight (a request's `http`), by request id.
    var httpExchanges: [UInt64: HTTPExchange] = [:]

    /// The number of cached entries.
    public var entryCount: Int { stored?.table.count ?? entries.count }
}

// MARK: - Writing

extension CacheEngine {
    /// The whole state as a snapshot document (SPEC §5.2): deterministic, so two snapshots of the
    /// same state print the same bytes, and `restore` followed by `makeSnapshot` gives them back.
    ///
    /// - Parameter scheduledCommand: the fields to write beside each command scheduled with
    ///   `schedule(after:token:)` (the shell writes its text and where it came from), by token.
    /// - Complexity: O(n + r + d) for n entries, r requests and queued items, d server keys.
    public func makeSnapshot(scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] }) -> JSONValue {
        var list: [JSONValue] = []
        list.reserveCapacity(entries.count)
        for s in entries.ordered.recencyOrder() { list.append(snapshotEntry(s)) }
        var document = snapshotState(scheduledCommand: scheduledCommand)
        document["entries"] = .array(list)
        return .object(document)
    }

    /// Every top-level field of the snapshot but `entries`; `forStore` leaves the server's data,
    /// modification times and log empty (a store keeps them as rows of their own).
    /// - Complexity: O(r + d), independent of the number of entries; O(r) `forStore`.
    func snapshotState(scheduledCommand: (Int) -> [String: JSONValue], forStore: Bool = false) -> [String: JSONValue] {
        var namespaceFields: [String: JSONValue] = [:]
        var namespaceStats: [String: JSONValue] = [:]
        for (i, ns) in namespaces.all.enumerated() {
            let p = ns.policy
            var fields: [String: JSONValue] = [
                "index": .int(Int64(i)),
                "defined": .bool(ns.defined),
                "ttl_ms": .int(p.ttl),
                "stale_ms": p.stale.map(JSONValue.int) ?? .null,
                "max": p.max.map { .int(Int64($0)) } ?? .null,
                "stale_if_error_ms": p.staleIfError.map(JSONValue.int) ?? .null,
                "timeout_ms": p.timeout.map(JSONValue.int) ?? .null,
                "purgeable": .bool(p.purgeable),
            ].merging(evictionFields(Int32(i), p.eviction)) { $1 }
            // Only when set, so snapshots without retries read as they did before retries existed.
            // Also a backoff set without retry= (`ns todo backoff=2s`), which a later retry= uses.
            if p.retry > 0 || p.backoff != Policy.defaultBackoff { fields["retry"] = .int(Int64(p.retry)); fields["backoff_ms"] = .int(p.backoff) }
            // Written only when on, so a snapshot without naive policies reads as before.
            if !p.naive.isEmpty { fields["naive"] = .array(p.naive.sorted().map { .string($0.rawValue) }) }
            if let d = p.dedupe { fields["dedupe_ms"] = .int(d) }
            // Only for an HTTP namespace, so snapshots without one read as before.
            if let http = p.http { fields["http"] = Self.httpNamespaceJSON(http) }
            namespaceFields[ns.name] = .object(fields)
            let counters = statistics.byNamespace[i]
            if counters != Stats() { namespaceStats[ns.name] = Self.statsJSON(counters) }
        }
        var stats = Self.statsFields(statistics.total)
        stats["namespaces"] = .object(namespaceStats)

        var push: [String: JSONValue] = [:]
        for (type, rule) in pushRules {
            push[type] = .object(["invalidate": Self.strings(rule.invalidate), "refresh": Self.strings(rule.refresh),
                                  "evict": Self.strings(rule.evict)])
        }

        var scheduled: [JSONValue] = []
        for (id, command) in scheduler.commands.sorted(by: { $0.key < $1.key }) {
            var fields = scheduledCommand(command.token)
            fields["id"] = .int(Int64(id))
            fields["due"] = Self.time(command.due)
            scheduled.append(.object(fields))
        }
        var fetching: [String: JSONValue] = [:]
        for (key, id) in fetchInFlight { fetching[key] = .int(Int64(id)) }
        let pending: [String: JSONValue] = [
            "requests": .array(requests.keys.sorted().map { snapshotRequest(requests[$0]!) }),
            "fetching": .object(fetching),
            "queued_mutations": .array(mutationQueue.queued.map(Self.mutationJSON)),
            "replaying": mutationQueue.replaying.map { .int(Int64($0)) } ?? .null,
            "scheduled": .array(scheduled),
        ]
        let behaviourFields = snapshotBehaviours()

        var server: [String: JSONValue] = ["log": .array(forStore ? [] : requestLog.map(Self.logJSON))]
        if serverLog.dropped > 0 { server["log_dropped"] = .int(Int64(serverLog.dropped)) }
        if let state = origin.persistentState {
            server.merge(state.snapshot(withData: !forStore).fields) { $1 }
        }

        var top: [String: JSONValue] = [
            "format": .string(Snapshot.format),
            "version": .int(Snapshot.version),
            "clock_start": Self.time(clockStart),
            "now": Self.time(now),
            "seq": .int(Int64(seq)),
            "id_field": .string(idField),
            "namespaces": .object(namespaceFields),
            "push": .object(push),
            "watches": .array(observers.scopes.map(Self.watchText).sorted().map(JSONValue.string)),
            "pending": .object(pending.merging(behaviourFields.pending) { $1 }),
            "server": .object(server),
            "stats": .object(stats),
        ]
        if let active = behaviourFields.active { top["active"] = active }
        return top
    }

    /// A namespace's `policy` (left out for LRU, so LRU snapshots read as before), the next rank
    /// stamp it gives (`next_rank`) and SIEVE's `hand` (the key of the entry it rests on; left out
    /// at the oldest).
    private func evictionFields(_ ns: Int32, _ eviction: Eviction) -> [String: JSONValue] {
        guard eviction != .lru else { return [:] }
        var f: [String: JSONValue] = ["policy": .string(eviction.rawValue),
                                      "next_rank": .int(Int64(bitPattern: entries.ordered.nextRank(ofNamespace: ns)))]
        let hand = entries.ordered.hand(ofNamespace: ns)
        if eviction == .sieve && hand >= 0 { f["hand"] = .string(slots[Int(hand)].key) }
        return f
    }

    /// One entry of `entries`. Fields that are 0 or false are left out. Outside LRU its
    /// eviction state: `rank` (from its namespace's counter: FIFO, SIEVE: when it was stored;
    /// LFU: when it was last accessed), `uses` (LFU) and `visited` (SIEVE, when set).
    func snapshotEntry(_ slot: Int32) -> JSONValue {
        let e = slots[Int(slot)]
        var f = snapshotEntryExtras(slot)
        f["key"] = .string(e.key)
        f["value"] = e.value
        f["state"] = .string(e.state(at: now).rawValue)
        f["stored_at"] = Self.time(e.storedAt)
        f["stale_at"] = Self.timeOrNever(e.staleAt)
        f["expires_at"] = Self.timeOrNever(e.expiresAt)
        f["tags"] = Self.strings(e.tags)
        f["seq"] = .int(Int64(e.storedSeq))
        return .object(f)
    }

    /// The fields of an entry's snapshot object that most entries do not have (empty for most
    /// under LRU; outside it, the entry's eviction state).
    func snapshotEntryExtras(_ slot: Int32) -> [String: JSONValue] {
        let e = slots[Int(slot)]
        var f: [String: JSONValue] = [:]
        if e.storedRequest != 0 { f["stored_request"] = .int(Int64(e.storedRequest)) }
        if e.lastLocalWrite != 0 { f["last_write"] = .int(Int64(e.lastLocalWrite)) }
        if e.lastPut != 0 { f["last_put"] = .int(Int64(e.lastPut)) }
        if e.invalidated { f["invalidated"] = .bool(true) }
        if e.expiryReported { f["expiry_counted"] = .bool(true) }
        switch entries.ordered.eviction(ofNamespace: e.namespace) {
        case .lru: break
        case .fifo: f["rank"] = .int(Int64(bitPattern: entries.ordered.ranks[Int(slot)].stamp))
        case .sieve:
            f["rank"] = .int(Int64(bitPattern: entries.ordered.ranks[Int(slot)].stamp))
            if entries.ordered.ranks[Int(slot)].uses > 0 { f["visited"] = .bool(true) }
        case .lfu:
            f["rank"] = .int(Int64(bitPattern: entries.ordered.ranks[Int(slot)].stamp))
            f["uses"] = .int(Int64(bitPattern: entries.ordered.ranks[Int(slot)].uses))
        }
        if e.expiryOverridden {
            f["expiry_overridden"] = .bool(true)
            if !e.expiryReported { f["expiry_seq"] = .int(Int64(e.expirySeq)) }
        }
        if let log = e.log { f["mutations"] = Self.mutationsJSON(log) }
        if let version = e.version { f["version"] = .int(Int64(version)) }
        if let responses = httpEntryJSON(e.key) { f["http"] = responses }
        return f
    }

    /// An entry's `mutations` field.
    static func mutationsJSON(_ log: MutationLog) -> JSONValue {
        .object([
            "base": log.base,
            "base_seq": .int(Int64(log.baseSeq)),
            "pending": .array(log.pending.sorted().map { .int(Int64($0)) }),
            "items": .array(log.items.map { item in
                var fields: [String: JSONValue] = [
                    "seq": .int(Int64(item.seq)),
                    "patch": item.patch.document,
                    "entity": item.entityID.map(JSONValue.string) ?? .null,
                    "mutation": item.mutation.map { .int(Int64($0)) } ?? .null,
                    "reached_server": item.reachedServer.map { .int(Int64($0)) } ?? .null,
                ]
                if let before = item.before { fields["before"] = before }
                if item.inert { fields["inert"] = .bool(true) }
                if let version = item.version { fields["version"] = .int(Int64(version)) }
                return .object(fields)
            }),
        ])
    }

    func snapshotRequest(_ r: InFlight) -> JSONValue {
        var f: [String: JSONValue] = [
            "id": .int(Int64(r.id)),
            "kind": .string(r.kind.rawValue),
            "keys": Self.strings(r.keys),
            "started_at": Self.time(r.startedAt),
            "completes_at": r.completesAt.map(Self.time) ?? .null,
            "refresh": .array(r.refresh.map(JSONValue.bool)),
            "voided": .array(r.voided.map(JSONValue.bool)),
            "invalidated": .array(r.invalidatedAfterSend.map(JSONValue.bool)),
        ]
        if !r.entityEvents.isEmpty { f["entity_events"] = .array(r.entityEvents.map { Self.strings($0) }) }
        if r.waiters != 0 { f["waiters"] = .int(Int64(r.waiters)) }
        if let m = r.mutation { f["mutation"] = Self.mutationJSON(m) }
        if hasHTTPNamespaces, let exchange = httpRequestJSON(r.id) { f["http"] = exchange }
        if r.kind == .validate {
            f["validation"] = .object(r.validation.mapValues(Self.time))
        }
        switch r.answer {
        case nil:
            f["answer"] = .null
        case .keys(.failure(let failure))?, .validation(.failure(let failure))?:
            f["answer"] = .object(failure.document)
        case .keys(.success(let answers))?:
            f["answer"] = .object(["values": .array(answers.map(\.document))])
        case .validation(.success(let verdicts))?:
            f["answer"] = .object(["verdicts": .object(verdicts.mapValues { verdict in
                var v: [String: JSONValue] = ["invalidate": .bool(verdict.invalidate)]
                if let items = verdict.items { v["items"] = .object(items) }
                return .object(v)
            })])
        }
        return .object(f)
    }

    static func mutationJSON(_ m: QueuedMutation) -> JSONValue {
        var f: [String: JSONValue] = ["id": .int(Int64(m.id)), "keys": strings(m.keys), "patch": m.patch.document,
                                      "entity": m.entityID.map(JSONValue.string) ?? .null]
        // Only when set, so snapshots of plain mutations read as before.
        if m.pessimistic { f["pessimistic"] = true }
        if m.refetch { f["refetch"] = true }
        if m.idempotent { f["idempotent"] = true }
        return .object(f)
    }

    static func logJSON(_ l: RequestLogEntry) -> JSONValue {
        .object(["id": .int(Int64(l.id)), "at_ms": .int(l.atMs), "kind": .string(l.kind.rawValue),
                 "keys": strings(l.keys), "fate": .string(l.fate.rawValue)])
    }

    static func statsFields(_ s: Stats) -> [String: JSONValue] {
        var f: [String: JSONValue] = [:]
        for (name, value) in s.fields { f[name] = .int(Int64(value)) }
        return f
    }

    static func statsJSON(_ s: Stats) -> JSONValue { .object(statsFields(s)) }

    static func strings(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }

    static func watchText(_ scope: WatchScope) -> String {
        switch scope {
        case .all: return "*"
        case .namespace(let name): return name + ":*"
        case .key(let key): return key
        }
    }

    /// An instant as ISO 8601 with ms; one outside the years 0000–9999 (only extreme durations
    /// reach it) as its ms since the epoch, so it still reads back.
    static func time(_ ms: Int64) -> JSONValue {
        ms >= minISOTime && ms <= maxISOTime ? .string(TimeText.iso8601(ms: ms)) : .int(ms)
    }

    /// An instant, or null for never (`Int64.max`).
    static func timeOrNever(_ ms: Int64) -> JSONValue { ms == .max ? .null : time(ms) }

    /// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z.
    static let minISOTime: Int64 = -62_167_219_200_000
    static let maxISOTime: Int64 = 253_402_300_799_999
}

extension OriginState {
    /// The origin's data and settings as snapshot fields (the engine adds its `log`).
    var fields: [String: JSONValue] {
        var out = settings
        out["data"] = .object(data)
        out["modified_at"] = .object(modifiedAt.mapValues(CacheEngine.time))
        if !headers.isEmpty { out["headers"] = .object(headers.mapValues(\.json)) }
        return out
    }
}
