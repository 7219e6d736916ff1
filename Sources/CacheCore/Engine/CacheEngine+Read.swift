extension CacheEngine {
    /// The app's read (B3–B5): fresh → served; stale → served and refreshed in the background;
    /// expired or absent → fetched (or joined to the request in flight), waiting for the answer.
    ///
    /// - Parameters:
    ///   - force: always send a new request and wait (never joins).
    ///   - nowait: start what the read would start and return at once with what the cache has.
    /// - Complexity: a hit is O(1): one hash lookup and a recency touch.
    /// - Throws: `CacheError` when waiting runs away (SPEC §7), or when the answer it would wait
    ///   for is due at the clock's end (then nothing changed, SPEC §2).
    public func get(_ key: String, force: Bool = false, nowait: Bool = false) throws(CacheError) -> ReadResult {
        // The usual key is its own canonical form: read with the key as given (borrowed, so no
        // copy of it is made and dropped, some 30 instructions a hit), hashed with the key
        // index's copy of the hash keys (a field read, not a method call on the index, which
        // may copy the index first).
        //
        // A fresh hit is read here, not in `get(canonical:...)`: that function, not inlined,
        // built its result in a temporary of this one, which then copied it to the caller's (some
        // 25 instructions a hit).
        if let hash = KeyIndex.hashIfCanonical(key, state.entries.keyIndex.seeds) {
            // Asked inside the origin cell's access: no retain and release of the origin (`OriginCell`).
            guard originCell.isOnline() else { return offlineGet(canonical: key, hash: hash) }
            var found = EngineState.Found()
            let hit = state.getStep(key: key, hash: hash, force: force, found: &found)
            if hit >= 0 {
                if checksInvariants { checkInvariants() }
                return state.freshHitResult(hit)
            }
            return try get(key, found: found, force: force, nowait: nowait)
        }
        return try getCanonicalizing(key, force: force, nowait: nowait)
    }

    /// `get` of a key in canonical form whose hash is `hash`, offline.
    @inline(never)
    private func offlineGet(canonical key: String, hash: UInt32) -> ReadResult {
        defer { if checksInvariants { checkInvariants() } }
        _ = nextSeq()
        return offlineRead(key, entrySlot(forKey: key, hash: hash))
    }

    /// `get` of a key that is not its own canonical form as it is (not ASCII, or with the
    /// `default:` prefix): read with its canonical form.
    @inline(never)
    private func getCanonicalizing(_ key: String, force: Bool, nowait: Bool) throws(CacheError) -> ReadResult {
        let (key, hash) = KeyIndex.canonical(key)
        return try get(canonical: key, hash: hash, force: force, nowait: nowait)
    }

    /// `get` of a key in canonical form whose hash is `hash`.
    private func get(canonical key: String, hash: UInt32, force: Bool, nowait: Bool) throws(CacheError) -> ReadResult {
        // Asked inside the origin cell's access: no retain and release of the origin (`OriginCell`).
        guard originCell.isOnline() else { return offlineGet(canonical: key, hash: hash) }
        // One access to the engine's state finds, touches, counts and reads a fresh hit.
        var found = EngineState.Found()
        let hit = state.getStep(key: key, hash: hash, force: force, found: &found)
        if hit >= 0 {
            if checksInvariants { checkInvariants() }
            return state.freshHitResult(hit)
        }
        return try get(key, found: found, force: force, nowait: nowait)
    }

    /// `get` (online) after its first step (`EngineState.getStep`) found no fresh hit to return
    /// as it is, `found` saying what it found.
    private func get(_ key: String, found: EngineState.Found, force: Bool, nowait: Bool) throws(CacheError) -> ReadResult {
        defer { if checksInvariants { checkInvariants() } }
        // A fresh hit while requests by key exist: read with `pending` set.
        if found.freshHit { return read(found.slot) }
        let waits = !(nowait || runningScheduled > 0) && !(found.slot >= 0 && !force && found.state == .stale)
        if waits, let refusal = endOfTimeRefusal(reading: key, slot: found.slot, force: force) {
            // Nothing happened: give back the sequence number `getStep` took.
            seq &-= 1
            throw refusal
        }
        if found.slot >= 0 { entries.touch(found.slot) }
        if found.slot >= 0 && !force && found.state == .stale {
            count(\.staleHits, found.ns)
            if requestTable.fetch(forKey: key) == nil && dedupedFetch(key, ns: found.ns) == nil { sendFetch([key], refresh: [true]) }
            return read(found.slot)
        }
        let nowait = nowait || runningScheduled > 0
        let slot = found.slot >= 0 ? found.slot : nil
        let ns = slot.map { slots[Int($0)].namespace } ?? namespaceSlot(forKey: key)
        count(\.misses, ns)
        let id: UInt64
        if !force || isNaive(.joinRefetch, ns: ns), let inFlight = requestTable.fetch(forKey: key) {
            count(\.joined, ns)
            id = inFlight
        } else if let shared = dedupedFetch(key, ns: ns) {
            // Within the dedupe= window: the fetch in flight, or, once it completed, what it left.
            guard let inFlight = shared else { return current(key) }
            count(\.joined, ns)
            id = inFlight
        } else {
            id = sendFetch([key], refresh: [false])
        }
        if nowait { return current(key) }
        requestTable.addWaiter(id)
        try run(until: id)
        return result(for: key, outcome: requestTable.keyOutcomes[id]?[key])
    }

    /// Bulk read (B7): one request for every key that `get` would fetch or refresh and that has no
    /// request in flight; each key counts as it would for `get`. Waits only if a key is expired or
    /// absent, and not with `nowait` (what a scheduled `mget` and a live cache do): then every key
    /// gets what the cache has now, `pending` when a request for it is in flight.
    /// - Returns: results in the order asked.
    public func mget(_ keys: [String], nowait: Bool = false) throws(CacheError) -> [ReadResult] {
        defer { if checksInvariants { checkInvariants() } }
        let nowait = nowait || runningScheduled > 0
        let keys = keys.map(KeyName.canonical)
        if !nowait && origin.isOnline, let refusal = endOfTimeRefusal(readingAll: keys) { throw refusal }
        _ = nextSeq()
        guard origin.isOnline else { return keys.map { offlineRead($0, entrySlot(forKey: $0)) } }
        var toSend: [String] = []
        var refresh: [Bool] = []
        var planned = Set<String>()
        var waitOn: [String: UInt64?] = [:]   // key -> request it waits on (nil = the bulk one)
        var served: [String: ReadResult] = [:]  // fresh and stale keys: what get would serve now
        for key in keys {
            let slot = entrySlot(forKey: key)
            var state = EntryState.absent
            let ns = slot.map { slots[Int($0)].namespace } ?? namespaceSlot(forKey: key)
            if let slot {
                state = slots[Int(slot)].state(at: now)
                entries.touch(slot)
                if state == .expired && isNaive(.serveExpired, ns: ns) { state = .stale }
            }
            switch state {
            case .fresh:
                count(\.hits, ns)
                served[key] = read(slot!)
            case .stale:
                count(\.staleHits, ns)
                if requestTable.fetch(forKey: key) == nil && planned.insert(key).inserted {
                    toSend.append(key); refresh.append(true)
                }
                served[key] = read(slot!)
            case .expired, .absent:
                count(\.misses, ns)
                if let inFlight = requestTable.fetch(forKey: key) {
                    count(\.joined, ns)
                    waitOn[key] = inFlight
                } else if !planned.insert(key).inserted {
                    count(\.joined, ns)
                    if let i = toSend.firstIndex(of: key) { refresh[i] = false }
                    waitOn[key] = .some(nil)
                } else {
                    toSend.append(key); refresh.append(false)
                    waitOn[key] = .some(nil)
                }
            }
        }
        var bulk: UInt64?
        if !toSend.isEmpty { bulk = sendFetch(toSend, refresh: refresh) }
        if nowait {
            return keys.map { key in
                var r = waitOn[key] == nil ? (served[key] ?? current(key)) : current(key)
                r.pending = requestTable.fetch(forKey: key) != nil
                return r
            }
        }
        var ids: [UInt64] = []
        for key in keys {
            if let target = waitOn[key] {
                let id = target ?? bulk!
                if !ids.contains(id) { ids.append(id) }
            }
        }
        for id in ids { requestTable.addWaiter(id) }
        for id in ids { try run(until: id) }
        return keys.map { key in
            guard let target = waitOn[key] else {
                var r = served[key] ?? current(key)
                r.pending = requestTable.fetch(forKey: key) != nil
                return r
            }
            return result(for: key, outcome: requestTable.keyOutcomes[target ?? bulk!]?[key])
        }
    }

    /// Inspects an entry without touching recency, stats or the origin.
    public func peek(_ key: String) -> ReadResult {
        current(KeyName.canonical(key))
    }

    /// An access without a read (as redis's TOUCH): a fresh or stale entry is used as a read uses
    /// it, for its eviction order only (SPEC §1.1 Eviction: LRU, the most recently used; SIEVE,
    /// visited; LFU, one more use; FIFO, nothing). No statistic counts it; no request, value,
    /// time or observer event comes of it. An absent or expired key is not touched.
    /// - Returns: the key touched, or none. - Complexity: O(1).
    @discardableResult
    public func touch(_ key: String) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let key = KeyName.canonical(key)
        guard let slot = entrySlot(forKey: key), slots[Int(slot)].state(at: now) != .expired else { return [] }
        _ = nextSeq()
        entries.touch(slot)
        return [key]
    }

    /// Entries in global recency order, least recent first, optionally filtered by a glob.
    /// - Complexity: O(n).
    public func keys(matching pattern: Glob? = nil) -> [(key: String, state: EntryState, ageMs: Int64)] {
        var out: [(key: String, state: EntryState, ageMs: Int64)] = []
        for s in entries.ordered.recencyOrder() {
            let e = slots[Int(s)]
            if pattern?.matches(e.key) ?? true { out.append((e.key, e.state(at: now), now - e.storedAt)) }
        }
        return out
    }

    /// What the cache has for a key now.
    func current(_ key: String) -> ReadResult {
        if let slot = entrySlot(forKey: key) { return read(slot) }
        return ReadResult(key: key, state: .absent, value: nil, ageMs: nil, expiresInMs: nil, tags: [],
                          source: .cache, pending: requestTable.fetch(forKey: key) != nil)
    }

    @inline(__always)
    func read(_ slot: Int32, source: ValueSource = .cache) -> ReadResult {
        var r = slots[Int(slot)].readResult(at: now, source: source)
        r.pending = requestTable.fetch(forKey: r.key) != nil
        return r
    }

    /// Offline (B5): every cached value is served, flagged; an uncached key is an error result.
    private func offlineRead(_ key: String, _ slot: Int32?) -> ReadResult {
        guard let slot else {
            count(\.misses, namespaceSlot(forKey: key))
            var r = current(key)
            r.offline = true
            r.error = "offline"
            return r
        }
        let ns = slots[Int(slot)].namespace
        switch slots[Int(slot)].state(at: now) {
        case .fresh: count(\.hits, ns)
        case .stale: count(\.staleHits, ns)
        case .expired, .absent: count(\.misses, ns)
        }
        entries.touch(slot)
        var r = read(slot)
        r.offline = true
        return r
    }

    /// The result a waiting reader gets once its request completed.
    func result(for key: String, outcome: KeyOutcome?) -> ReadResult {
        switch outcome {
        case .stored?:
            if let slot = entrySlot(forKey: key) { return read(slot, source: .server) }
            return current(key)
        case .discarded?, nil:
            return current(key)
        case .failed(let message)?:
            guard let slot = entrySlot(forKey: key) else {
                // Nothing cached: the answer (not found, a server error) is the server's; a
                // cancelled fetch never got one.
                var r = current(key)
                if message != "cancelled" { r.source = .server }
                r.error = message
                return r
            }
            let e = slots[Int(slot)]
            var r = read(slot)
            r.error = message
            let allowance = namespaces.policy(e.namespace).staleIfError ?? 0
            if e.state(at: now) == .expired && now - e.expiresAt > allowance {
                r.value = nil
            }
            return r
        }
    }
}
