import DequeModule

extension Snapshot {
    /// Checks a whole snapshot document and decodes it; nothing is applied anywhere.
    /// - Throws: `SnapshotError` naming the first problem and its JSON path.
    /// - Complexity: O(size of the document).
    public init(_ json: JSONValue) throws(SnapshotError) {
        try self.init(json, entriesFollow: false)
    }

    /// `init(_:)`; with `entriesFollow`, the document's `entries` are left for `append` (a
    /// store's rows) and so are the checks that need them all.
    init(_ json: JSONValue, entriesFollow: Bool) throws(SnapshotError) {
        try self.init(json, entrySource: entriesFollow ? .follow : .document)
    }

    /// Where the entries of a document being decoded are.
    enum EntrySource {
        /// In the document's `entries` array.
        case document
        /// Left for `append` (a store's rows).
        case follow
        /// Still in the text, read by `decodeEntries(text:)` (the document's `entries` is a placeholder).
        case text(EntryText)
    }

    init(_ json: JSONValue, entrySource: EntrySource) throws(SnapshotError) {
        guard case .object(let top) = json else { throw SnapshotError(path: "", "not a cachesh snapshot (expected a JSON object)") }
        guard case .string(let format)? = top["format"], format == Snapshot.format else {
            throw SnapshotError(path: "format", "not a cachesh snapshot (expected \"\(Snapshot.format)\")")
        }
        guard case .int(let version)? = top["version"] else { throw SnapshotError(path: "version", "missing or not a whole number") }
        guard version == Snapshot.version else {
            throw SnapshotError(path: "version", "snapshot version \(version) is not supported (this cachesh reads version \(Snapshot.version))")
        }
        let root = try SnapshotObject(json, SnapshotPath(""))
        try root.only(["format", "version", "clock_start", "now", "seq", "id_field", "namespaces", "push", "watches",
                       "active", "entries", "pending", "server", "stats"])
        let entries = try root.array("entries")
        try self.init(state: root, entries: entries, entrySource: entrySource)
    }

    /// Decodes the state fields of `root` and the entries given (unless `entriesFollow`).
    init(state root: SnapshotObject, entries: [JSONValue], entriesFollow: Bool) throws(SnapshotError) {
        try self.init(state: root, entries: entries, entrySource: entriesFollow ? .follow : .document)
    }

    /// Decodes the state fields of `root` and the entries from `entrySource`.
    init(state root: SnapshotObject, entries: [JSONValue], entrySource: EntrySource) throws(SnapshotError) {
        clockStart = try root.time("clock_start")
        now = try root.time("now")
        seq = try root.seq("seq")
        idField = try root.string("id_field")
        if idField.isEmpty { throw root.fail("id_field", "must not be empty") }
        try decodeNamespaces(root.object("namespaces"))
        try decodePush(root.object("push"))
        try decodeWatches(root, "watches")
        try decodeStats(root.object("stats"))
        var namespaceIndex: [String: Int] = [:]
        for (i, ns) in namespaces.enumerated() { namespaceIndex[ns.name] = i }
        switch entrySource {
        case .document: try decodeEntries(entries, namespaceIndex: namespaceIndex)
        case .follow: break
        case .text(let text): try decodeEntries(text: text, namespaceIndex: namespaceIndex)
        }
        try decodePending(root.object("pending"))
        try decodeBehaviours(root)
        try decodeServer(root.object("server"))
        try checkConsistency()
    }

    private mutating func decodeNamespaces(_ o: SnapshotObject) throws(SnapshotError) {
        var slots: [NamespaceState?] = Array(repeating: nil, count: o.fields.count)
        for name in o.fields.keys.sorted() {
            if name.isEmpty || name.contains(":") || name.contains("*") || name.contains(where: \.isWhitespace) || name == "tag" {
                throw o.fail(name, "bad namespace name")
            }
            let n = try o.object(name)
            try n.only(["index", "defined", "ttl_ms", "stale_ms", "max", "stale_if_error_ms", "timeout_ms", "purgeable",
                        "policy", "hand", "next_rank", "retry", "backoff_ms", "naive", "dedupe_ms", "http"])
            let i = try n.count("index")
            guard i < slots.count, slots[i] == nil else {
                throw n.fail("index", "expected each of 0 to \(slots.count - 1) once")
            }
            var policy = Policy()
            policy.ttl = try n.int("ttl_ms")
            if policy.ttl < 0 { throw n.fail("ttl_ms", "must not be negative") }
            policy.stale = try n.optionalDuration("stale_ms")
            if let max = try n.optionalInt("max") {
                guard max >= 0, max <= Int64(Int32.max) else { throw n.fail("max", "expected a count from 0 to \(Int32.max)") }
                policy.max = Int(max)
            }
            policy.staleIfError = try n.optionalDuration("stale_if_error_ms")
            policy.timeout = try n.optionalDuration("timeout_ms")
            if policy.timeout == 0 { throw n.fail("timeout_ms", "must be positive") }
            policy.purgeable = try n.bool("purgeable")
            if n.has("naive") {
                for (j, name) in try n.strings("naive").enumerated() {
                    guard let p = NaivePolicy(rawValue: name) else {
                        throw SnapshotError(path: n.path.child("naive").element(j).text, NaiveNameError(name: name).message)
                    }
                    policy.naive.insert(p)
                }
            }
            if n.has("dedupe_ms") {
                policy.dedupe = try n.int("dedupe_ms")
                if policy.dedupe! < 0 { throw n.fail("dedupe_ms", "must not be negative") }
            }
            if n.has("policy") {
                guard case .string(let text) = try n.value("policy"), let eviction = Eviction(rawValue: text) else {
                    throw n.fail("policy", "expected one of lru, fifo, sieve, lfu")
                }
                policy.eviction = eviction
            }
            if n.has("next_rank") {
                guard policy.eviction != .lru else { throw n.fail("next_rank", "only a namespace outside lru has ranks") }
                nextRanks[i] = UInt64(try n.count("next_rank"))
            }
            if n.has("hand") {
                guard policy.eviction == .sieve else { throw n.fail("hand", "only a sieve namespace has a hand") }
                hands[i] = try n.key("hand")
            }
            if n.has("retry") {
                let retry = try n.count("retry")
                guard retry <= Policy.maxRetries else { throw n.fail("retry", "expected 0 to \(Policy.maxRetries)") }
                policy.retry = retry
                policy.backoff = try n.int("backoff_ms")
                if policy.backoff < 0 { throw n.fail("backoff_ms", "must not be negative") }
            }
            if n.has("http") { policy.http = try Self.httpNamespace(n.object("http")) }
            slots[i] = NamespaceState(name: name, policy: policy, defined: try n.bool("defined"))
        }
        namespaces = slots.map { $0! }
        namespaceStats = Array(repeating: Stats(), count: namespaces.count)
    }

    private mutating func decodePush(_ o: SnapshotObject) throws(SnapshotError) {
        for type in o.fields.keys.sorted() {
            let r = try o.object(type)
            try r.only(["invalidate", "refresh", "evict"])
            let rule = PushRule(invalidate: try r.strings("invalidate"), refresh: try r.strings("refresh"),
                                evict: try r.strings("evict"))
            // As `load` refuses it: a push could never fill a broken placeholder.
            for action in ["invalidate", "refresh", "evict"] {
                for (i, target) in try r.strings(action).enumerated() {
                    if let problem = PushRule.templateProblem(target) {
                        throw SnapshotError(path: r.path.child(action).element(i).text, problem)
                    }
                }
            }
            pushRules[type] = rule
        }
    }

    private mutating func decodeWatches(_ root: SnapshotObject, _ name: String) throws(SnapshotError) {
        for (i, text) in try root.strings(name).enumerated() {
            if text == "*" {
                watches.insert(.all)
            } else if text.hasSuffix(":*") {
                watches.insert(.namespace(String(text.dropLast(2))))
            } else {
                try SnapshotObject.checkKey(text) { SnapshotError(path: "\(name)[\(i)]", $0) }
                watches.insert(.key(text))
            }
        }
    }

    private static func stats(_ o: SnapshotObject, allowing extra: Set<String> = []) throws(SnapshotError) -> Stats {
        try o.only(Set(Stats().fields.map(\.name)).union(extra))
        var s = Stats()
        s.hits = try o.count("hits")
        s.staleHits = try o.count("stale_hits")
        s.misses = try o.count("misses")
        s.requests = try o.count("requests")
        s.joined = try o.count("joined")
        s.refreshes = try o.count("refreshes")
        s.refreshFailures = try o.count("refresh_failures")
        s.fetchFailures = try o.count("fetch_failures")
        s.evictions = try o.count("evictions")
        s.expirations = try o.count("expirations")
        s.invalidations = try o.count("invalidations")
        s.rollbacks = try o.count("rollbacks")
        return s
    }

    private mutating func decodeStats(_ o: SnapshotObject) throws(SnapshotError) {
        total = try Self.stats(o, allowing: ["namespaces"])
        let per = try o.object("namespaces")
        // By name, looked up once for each: a document of many namespaces is read in linear time.
        var index: [String: Int] = [:]
        for (i, ns) in namespaces.enumerated() { index[ns.name] = i }
        for name in per.fields.keys.sorted() {
            guard let i = index[name] else {
                throw per.fail(name, "not a namespace of this snapshot")
            }
            namespaceStats[i] = try Self.stats(per.object(name))
        }
    }

    static let entryFields: Set<String> = [
        "key", "value", "state", "stored_at", "stale_at", "expires_at", "tags", "seq", "stored_request",
        "last_write", "last_put", "invalidated", "expiry_counted", "expiry_overridden", "expiry_seq", "mutations",
        "rank", "uses", "visited", "version", "http",
    ]

    private mutating func decodeEntries(_ list: [JSONValue], namespaceIndex: [String: Int]) throws(SnapshotError) {
        entries.reserveCapacity(list.count)
        var checks = EntryChecks(seen: [], seenRanks: Array(repeating: Set<Int64>(), count: namespaces.count),
                                 keys: KeyIndex(capacity: list.count))
        keyHashes.reserveCapacity(list.count)
        for item in list { try decodeEntry(item, namespaceIndex: namespaceIndex, checks: &checks) }
        try checkHands()
    }

    /// What the check of each entry needs to know of the entries before it.
    struct EntryChecks {
        /// The keys seen, when `keys` is nil.
        var seen: Set<String>
        /// Ranks taken, by namespace slot.
        var seenRanks: [Set<Int64>]
        /// The keys seen, by their hashes (`KeyIndex.hash`, kept in `keyHashes` for the
        /// engine's key index) to the entry that has it; nil to use `seen`.
        var keys: KeyIndex? = nil
    }

    /// Checks one entry object (the next one, least recent first) and appends it.
    mutating func decodeEntry(_ item: JSONValue, namespaceIndex: [String: Int], checks: inout EntryChecks,
                              storeRow: Bool = false) throws(SnapshotError) {
        var e = try SnapshotObject(item, SnapshotPath("entries").element(entries.count))
        e.isStoreRow = storeRow
        try e.only(Self.entryFields)
        try decodeEntry(fields: e, namespaceIndex: namespaceIndex, checks: &checks)
    }

    /// `decodeEntry` of an entry's fields, all of them known (`entryFields`).
    mutating func decodeEntry<Fields: SnapshotFields>(fields e: Fields, namespaceIndex: [String: Int],
                                                      checks: inout EntryChecks) throws(SnapshotError) {
        let key = try e.key("key")
        if checks.keys != nil {
            // The key is hashed once: for this check and, kept, for the engine's key index.
            let hash = KeyIndex.hash(key)
            guard checks.keys!.find(hash: hash, where: { entries[Int($0)].key == key }) == nil else {
                throw e.fail("key", "\(key) appears twice")
            }
            checks.keys!.insert(hash: hash, slot: Int32(entries.count))
            keyHashes.append(hash)
        } else {
            guard checks.seen.insert(key).inserted else { throw e.fail("key", "\(key) appears twice") }
        }
        guard let ns = namespaceIndex[String(KeyName.namespace(of: key))] else {
            throw e.fail("key", "namespace \(KeyName.namespace(of: key)) of \(key) is not in namespaces")
        }
        guard case .string(let stateText) = try e.value("state"), let claimed = EntryState(rawValue: stateText),
              claimed != .absent else {
            throw e.fail("state", "expected fresh, stale or expired")
        }
        var entry = Entry(key: key, namespace: Int32(ns), stored: try e.storedValue("value"), tags: try e.strings("tags"),
                          storedAt: try e.time("stored_at"), staleAt: try e.timeOrNever("stale_at"),
                          expiresAt: try e.timeOrNever("expires_at"))
        entry.storedSeq = try e.seq("seq")
        entry.storedRequest = try e.seq("stored_request", default: 0)
        entry.lastLocalWrite = try e.seq("last_write", default: 0)
        entry.lastPut = try e.seq("last_put", default: 0)
        entry.invalidated = try e.bool("invalidated", default: false)
        entry.expiryReported = try e.bool("expiry_counted", default: false)
        entry.expiryOverridden = try e.bool("expiry_overridden", default: false)
        entry.expirySeq = try e.seq("expiry_seq", default: 0)
        if e.hasVersion { entry.version = try e.version("version") }
        // The state follows from the times (and `invalidated`): one that says otherwise is damage.
        let state = entry.state(at: now)
        if state != claimed && !e.isStoreRow {
            throw e.fail("state", "is \(stateText), but the entry's times make it \(state.rawValue) at now (\(TimeText.iso8601(ms: now)))")
        }
        if e.has("mutations") { entry.log = try Self.mutationLog(e.object("mutations")) }
        if let responses = e.field("http") {
            // Only an HTTP namespace's entry has responses (the fast reader never sees the field).
            guard namespaces[ns].policy.http != nil else { throw e.fail("http", "\(key) is not a key of an HTTP namespace") }
            httpVariants[key] = try Self.httpResponses(SnapshotObject(fields: ["http": responses], path: e.path), now: now)
        }
        ranks.append(try Self.rank(e, namespaces[ns], seen: &checks.seenRanks[ns]))
        entries.append(entry)
    }

    /// After the last entry: SIEVE's hand of each namespace rests on an entry of it.
    /// - Complexity: O(e + h log h) for e entries and h hands.
    func checkHands() throws(SnapshotError) {
        guard !hands.isEmpty else { return }
        // The namespace of each entry a hand names, in one pass over the entries.
        var handed: [String: Int32] = [:]
        for key in hands.values { handed[key] = -1 }
        for entry in entries where handed[entry.key] != nil { handed[entry.key] = entry.namespace }
        for (n, key) in hands.sorted(by: { $0.key < $1.key }) {
            guard handed[key] == Int32(n) else {
                throw SnapshotError(path: SnapshotPath("namespaces").child(namespaces[n].name).child("hand").text,
                                    "\(key) is not an entry of this namespace")
            }
        }
    }

    /// An entry's eviction state: none under LRU; `rank` (unique in its namespace) otherwise,
    /// `uses` (at least 1) under LFU, `visited` under SIEVE.
    private static func rank<Fields: SnapshotFields>(_ e: Fields, _ ns: NamespaceState, seen: inout Set<Int64>) throws(SnapshotError) -> OrderedSlots.Rank? {
        let eviction = ns.policy.eviction
        guard eviction != .lru else {
            func refuse(_ field: String) -> SnapshotError {
                e.fail(field, "an entry of an lru namespace has no \(field) (its place is its recency)")
            }
            if e.has("rank") { throw refuse("rank") }
            if e.has("uses") { throw refuse("uses") }
            if e.has("visited") { throw refuse("visited") }
            return nil
        }
        if eviction != .lfu && e.has("uses") { throw e.fail("uses", "only an entry of an lfu namespace has uses") }
        if eviction != .sieve && e.has("visited") { throw e.fail("visited", "only an entry of a sieve namespace is visited") }
        let rank = try e.count("rank")
        guard seen.insert(Int64(rank)).inserted else { throw e.fail("rank", "rank \(rank) appears twice in namespace \(ns.name)") }
        var r = OrderedSlots.Rank(stamp: UInt64(rank))
        switch eviction {
        case .lru, .fifo: break
        case .sieve: r.uses = try e.bool("visited", default: false) ? 1 : 0
        case .lfu:
            let uses = try e.count("uses")
            guard uses >= 1 else { throw e.fail("uses", "expected at least 1") }
            r.uses = UInt64(uses)
        }
        return r
    }

    private static func mutationLog(_ o: SnapshotObject) throws(SnapshotError) -> MutationLog {
        try o.only(["base", "base_seq", "pending", "items"])
        var log = MutationLog(base: try o.value("base"), baseSeq: try o.seq("base_seq"))
        for (i, id) in try o.array("pending").enumerated() {
            guard case .int(let n) = id, n >= 0 else {
                throw SnapshotError(path: o.path.child("pending").element(i).text, "expected a sequence number")
            }
            log.pending.insert(UInt64(n))
        }
        let itemsPath = o.path.child("items")
        for (i, item) in try o.array("items").enumerated() {
            let it = try SnapshotObject(item, itemsPath.element(i))
            try it.only(["seq", "patch", "entity", "mutation", "reached_server", "before", "inert", "version"])
            log.items.append(.init(seq: try it.seq("seq"), patch: try patch(it, "patch"), entityID: try it.optionalString("entity"),
                                   mutation: try it.optionalSeq("mutation"), reachedServer: try it.optionalSeq("reached_server"),
                                   before: it.has("before") ? .some(try it.value("before")) : Optional<JSONValue>.none,
                                   inert: it.has("inert") ? try it.bool("inert") : false,
                                   version: it.has("version") ? try it.version("version") : nil))
        }
        return log
    }

    private static func patch(_ o: SnapshotObject, _ name: String) throws(SnapshotError) -> Patch {
        let document = try o.value(name)
        do { return try Patch(document) } catch { throw o.fail(name, "bad patch: \(error)") }
    }

    private static func mutation(_ o: SnapshotObject) throws(SnapshotError) -> QueuedMutation {
        try o.only(["id", "keys", "patch", "entity", "pessimistic", "refetch", "idempotent"])
        let keys = try o.keys("keys")
        if keys.isEmpty { throw o.fail("keys", "a mutation has at least one key") }
        return QueuedMutation(id: try o.seq("id"), keys: keys, patch: try patch(o, "patch"), entityID: try o.optionalString("entity"),
                              pessimistic: o.has("pessimistic") ? try o.bool("pessimistic") : false,
                              refetch: o.has("refetch") ? try o.bool("refetch") : false,
                              idempotent: try o.bool("idempotent", default: false))
    }

    private mutating func decodePending(_ o: SnapshotObject) throws(SnapshotError) {
        try o.only(["requests", "fetching", "queued_mutations", "replaying", "scheduled", "polls", "retries",
                    "deferred_mutations", "deferred_patches", "fetch_starts", "held_pages"])
        let requestsPath = o.path.child("requests")
        var byID: [UInt64: InFlight] = [:]
        var httpNamespaces: Set<String>?   // made at the first HTTP exchange
        for (i, item) in try o.array("requests").enumerated() {
            let r = try Self.request(SnapshotObject(item, requestsPath.element(i)))
            guard byID[r.id] == nil, requests.last.map({ $0.id < r.id }) ?? true else {
                throw SnapshotError(path: requestsPath.element(i).child("id").text, "requests must be in increasing id order")
            }
            byID[r.id] = r
            requests.append(r)
            let request = try SnapshotObject(item, requestsPath.element(i))
            if request.has("http") {
                let ns = KeyName.namespace(of: r.keys.first ?? "")
                if httpNamespaces == nil { httpNamespaces = Set(namespaces.filter { $0.policy.http != nil }.map(\.name)) }
                guard httpNamespaces?.contains(String(ns)) == true else {
                    throw request.fail("http", "\(r.keys.first ?? "") is not a key of an HTTP namespace")
                }
                httpExchanges[r.id] = try Self.httpExchange(request, kind: r.kind, keys: r.keys)
            }
        }
        let fetching = try o.object("fetching")
        // The keys of each fetch a `fetching` item names, as a set made once: a fetch of many
        // keys named by as many items is checked in linear time.
        var fetchKeys: [UInt64: Set<String>] = [:]
        for key in fetching.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { fetching.fail(key, $0) }
            let id = try fetching.seq(key)
            if fetchKeys[id] == nil, let r = byID[id], r.kind == .fetch { fetchKeys[id] = Set(r.keys) }
            guard fetchKeys[id]?.contains(key) == true else {
                throw fetching.fail(key, "request \(id) is not a fetch of \(key) in flight")
            }
            fetchInFlight[key] = id
        }
        let queuedPath = o.path.child("queued_mutations")
        for (i, item) in try o.array("queued_mutations").enumerated() {
            mutationQueue.append(try Self.mutation(SnapshotObject(item, queuedPath.element(i))))
        }
        replaying = try o.optionalSeq("replaying")
        if let id = replaying, byID[id]?.kind != .mutate {
            throw o.fail("replaying", "request \(id) is not a mutation in flight")
        }
        let scheduledPath = o.path.child("scheduled")
        var ids = Set<UInt64>()
        for (i, item) in try o.array("scheduled").enumerated() {
            let s = try SnapshotObject(item, scheduledPath.element(i))
            let id = try s.seq("id")
            guard ids.insert(id).inserted else { throw s.fail("id", "\(id) appears twice") }
            var fields = s.fields
            fields["id"] = nil
            fields["due"] = nil
            scheduledCommands.append(ScheduledCommand(id: id, due: try s.time("due"), fields: fields, path: s.path.text))
        }
    }

    private static func request(_ o: SnapshotObject) throws(SnapshotError) -> InFlight {
        try o.only(["id", "kind", "keys", "started_at", "completes_at", "refresh", "voided", "invalidated", "waiters",
                    "mutation", "validation", "answer", "entity_events", "http"])
        guard let kind = RequestKind(rawValue: try o.string("kind")) else { throw o.fail("kind", "expected fetch, mutate or validate") }
        let keys = try o.keys("keys")
        if kind != .validate && keys.isEmpty { throw o.fail("keys", "a \(kind.rawValue) request has at least one key") }
        var r = InFlight(id: try o.seq("id"), kind: kind, keys: keys, startedAt: try o.time("started_at"),
                         refresh: try o.bools("refresh", count: keys.count), voided: try o.bools("voided", count: keys.count),
                         invalidatedAfterSend: try o.bools("invalidated", count: keys.count))
        if o.has("entity_events") {
            let lists = try o.array("entity_events")
            guard lists.count == keys.count else { throw o.fail("entity_events", "expected one list per key (\(keys.count))") }
            let path = o.path.child("entity_events")
            for (i, list) in lists.enumerated() {
                guard case .array(let items) = list else {
                    throw SnapshotError(path: path.element(i).text, "expected an array of entity ids")
                }
                var ids: [String] = []
                for (j, item) in items.enumerated() {
                    guard case .string(let id) = item else {
                        throw SnapshotError(path: path.element(i).element(j).text, "expected an entity id (a string)")
                    }
                    ids.append(id)
                }
                r.entityEvents.append(ids)
            }
        }
        r.completesAt = try o.optionalTime("completes_at")
        r.waiters = try o.count("waiters", default: 0)
        switch kind {
        case .mutate:
            // An HTTP request of an unsafe method (POST, PUT, PATCH, DELETE) is a mutate request
            // with its exchange (`http`) and no queued mutation: the engine keeps it so, and it
            // is written so.
            if o.has("http") && !o.has("mutation") { break }
            let m = try mutation(o.object("mutation"))
            guard m.keys == keys else { throw o.fail("mutation", "its keys differ from the request's") }
            r.mutation = m
        case .validate:
            let v = try o.object("validation")
            for name in v.fields.keys.sorted() { r.validation[name] = try v.time(name) }
        case .fetch:
            if o.has("mutation") { throw o.fail("mutation", "only a mutate request has one") }
        }
        if kind != .validate && o.has("validation") { throw o.fail("validation", "only a validate request has one") }
        if try o.value("answer") != .null {
            let a = try o.object("answer")
            if a.has("error") {
                try a.only(["error", "unknown_outcome"])
                let failure = OriginFailure(try a.string("error"), outcomeUnknown: try a.bool("unknown_outcome", default: false))
                r.answer = kind == .validate ? .validation(.failure(failure)) : .keys(.failure(failure))
            } else if kind == .validate {
                try a.only(["verdicts"])
                let v = try a.object("verdicts")
                var verdicts: [String: NamespaceVerdict] = [:]
                for name in v.fields.keys.sorted() {
                    let n = try v.object(name)
                    try n.only(["invalidate", "items"])
                    var items: [String: JSONValue]?
                    if n.has("items") { items = try n.object("items").fields }
                    verdicts[name] = NamespaceVerdict(invalidate: try n.bool("invalidate"), items: items)
                }
                r.answer = .validation(.success(verdicts))
            } else {
                try a.only(["values"])
                let values = try a.array("values")
                guard values.count == keys.count else { throw a.fail("values", "expected \(keys.count) answers, one per key") }
                var answers: [KeyAnswer] = []
                let valuesPath = a.path.child("values")
                for (i, item) in values.enumerated() {
                    let v = try SnapshotObject(item, valuesPath.element(i))
                    if v.has("value") {
                        try v.only(["value", "version"])
                        answers.append(.answer(try v.dataValue("value"),
                                               version: v.has("version") ? try v.version("version") : nil))
                    } else {
                        try v.only(["not_found"])
                        guard try v.bool("not_found") else { throw v.fail("not_found", "expected true") }
                        answers.append(.notFound)
                    }
                }
                r.answer = .keys(.success(answers))
            }
        }
        return r
    }

    /// The `server` section: the engine's request log, then the origin's state. The core checks
    /// the origin's data by key; its settings are the origin's to check (`PersistentOrigin.check`,
    /// before a restore changes anything). A section without `data` holds no origin state.
    private mutating func decodeServer(_ o: SnapshotObject) throws(SnapshotError) {
        let logPath = o.path.child("log")
        for (i, item) in try o.array("log").enumerated() {
            let l = try SnapshotObject(item, logPath.element(i))
            try l.only(["id", "at_ms", "kind", "keys", "fate"])
            guard let kind = RequestKind(rawValue: try l.string("kind")) else { throw l.fail("kind", "expected fetch, mutate or validate") }
            guard let fate = RequestLogEntry.Fate(rawValue: try l.string("fate")) else {
                throw l.fail("fate", "expected stored, discarded, failed or pending")
            }
            requestLog.append(RequestLogEntry(id: try l.seq("id"), atMs: try l.int("at_ms"), kind: kind,
                                              keys: try l.strings("keys"), fate: fate))
        }
        requestLogDropped = try o.count("log_dropped", default: 0)
        guard o.has("data") else {
            try o.only(["log", "log_dropped"])
            return
        }
        let data = try o.object("data")
        for key in data.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { data.fail(key, $0) }
            _ = try data.dataValue(key)
        }
        let modified = try o.object("modified_at")
        var modifiedAt: [String: Int64] = [:]
        for key in modified.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { modified.fail(key, $0) }
            modifiedAt[key] = try modified.time(key)
        }
        var settings = o.fields
        for name in ["log", "log_dropped", "data", "modified_at", "headers"] { settings[name] = nil }
        server = OriginState(data: data.fields, modifiedAt: modifiedAt, settings: settings)
        if o.has("headers") { server!.headers = try Self.serverHeaders(o) }
    }
}
