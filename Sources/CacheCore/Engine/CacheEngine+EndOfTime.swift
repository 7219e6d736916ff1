// Waits the virtual clock cannot end. Work due past the clock's end (`Int64.max` ms) is clamped
// there, and the clock never reaches it (`advance` refuses to, SPEC §2). A read or validation
// that waits for an answer due there would run the clock to its end, after which it could never
// move again: it is refused before anything is sent, counted or moved. What only a wait can find
// out (a retry's backoff or latency, a latency changed by a scheduled command) stops the wait
// before the end instead, as the runaway limit stops a command (SPEC §7).

extension CacheEngine {
    /// The clock's end as printed: +292278994-08-17T07:12:55.807Z.
    static var endOfTime: String { TimeText.iso8601(ms: .max) }

    /// The refusal of a wait for `request` (`fetch KEY...`, `validate`), saying why it would never
    /// end and, for a fetch, the ways out: a `timeout=` that gives up on it, a read that does not
    /// wait, `cancel`.
    private func endOfTimeError(_ request: String, _ why: String) -> CacheError {
        let words = request.split(separator: " ")
        var wayOut = ""
        if words.first == "fetch", let key = words.dropFirst().first {
            wayOut = " (ns \(KeyName.namespace(of: String(key))) timeout=D gives up on it; get \(key) --nowait reads without"
                + " waiting, and cancel \(key) then drops the request)"
        }
        return CacheError("waiting for the answer to \(request) would never end: \(why)\(wayOut)")
    }

    /// How `request` is named in messages: `fetch a b`, `validate`.
    private func requestText(_ kind: RequestKind, _ keys: [String]) -> String {
        ([kind.rawValue] + keys).joined(separator: " ")
    }

    /// When the answer to request `id` is due as far as is known now: its completion, or the
    /// time it is sent again (a retry); nil when it is not in flight or waits for a deferred answer.
    private func knownDue(_ id: UInt64) -> Int64? {
        guard let request = requestTable[id] else { return nil }
        return request.completesAt ?? behaviours.retries[id]?.due
    }

    /// The smallest `timeout=` among the namespaces of `keys`, creating none (a namespace not
    /// met yet has the default policy: no timeout).
    private func timeoutCreatingNone(_ keys: [String]) -> Int64? {
        var result: Int64?
        for key in keys {
            guard let ns = namespaces.slot(named: String(KeyName.namespace(of: key))),
                  let t = namespaces.policy(ns).timeout else { continue }
            result = min(result ?? .max, t)
        }
        return result
    }

    /// Why waiting for request `id`, in flight, would run the clock to its end; nil when it would not.
    func endOfTimeRefusal(waitingFor id: UInt64) -> CacheError? {
        guard knownDue(id) == .max, let request = requestTable[id] else { return nil }
        return endOfTimeError(requestText(request.kind, request.keys),
                              "the request in flight is due there; nothing was done")
    }

    /// Why waiting for the answer to a fetch of `keys` sent now would run the clock to its end;
    /// nil when it would not, or when the origin cannot tell (an app's origin).
    /// - Complexity: O(keys); changes nothing.
    func endOfTimeRefusal(sending kind: RequestKind, keys: [String]) -> CacheError? {
        guard origin.isOnline else { return nil }
        let latency = kind == .validate ? origin.latencyIfSentValidation() : origin.latencyIfSent(fetch: keys)
        guard let latency else { return nil }
        // As `register` times it: a `timeout=` shorter than the latency ends the wait first.
        let timeout = kind == .validate ? nil : timeoutCreatingNone(keys)
        let text = requestText(kind, keys)
        if latency == .max && timeout == nil {
            return endOfTimeError(text, "its answer never comes (server next --no-answer) and no timeout= gives up on it; nothing was sent")
        }
        let wait = timeout.map { latency > $0 ? $0 : latency } ?? latency
        guard now.addingClamped(max(0, wait)) == .max else { return nil }
        return endOfTimeError(text, "it is answered \(TimeText.formatDuration(wait)) from now; nothing was sent")
    }

    /// Why a blocking `get` of `key` (canonical, not served at once) would run the clock to its
    /// end; `slot` is its entry's (-1: not cached). Mirrors the slow path of `get`.
    func endOfTimeRefusal(reading key: String, slot: Int32, force: Bool) -> CacheError? {
        let ns = slot >= 0 ? slots[Int(slot)].namespace : namespaces.slot(named: String(KeyName.namespace(of: key)))
        let joins = !force || ns.map { isNaive(.joinRefetch, ns: $0) } ?? false
        if joins, let inFlight = requestTable.fetch(forKey: key) { return endOfTimeRefusal(waitingFor: inFlight) }
        return endOfTimeRefusal(sending: .fetch, keys: [key])
    }

    /// Why a blocking `mget` of `keys` (canonical) would run the clock to its end: the requests
    /// in flight it would wait for, then the one it would send. Mirrors `mget`; changes nothing.
    /// - Complexity: O(keys).
    func endOfTimeRefusal(readingAll keys: [String]) -> CacheError? {
        var toSend: [String] = []
        var planned = Set<String>()
        var waitsForBulk = false
        var joined: [UInt64] = []
        for key in keys {
            var state = EntryState.absent
            if let slot = entrySlot(forKey: key) {
                state = slots[Int(slot)].state(at: now)
                if state == .expired && isNaive(.serveExpired, ns: slots[Int(slot)].namespace) { state = .stale }
            }
            switch state {
            case .fresh:
                break
            case .stale:
                if requestTable.fetch(forKey: key) == nil && planned.insert(key).inserted { toSend.append(key) }
            case .expired, .absent:
                if let inFlight = requestTable.fetch(forKey: key) {
                    if !joined.contains(inFlight) { joined.append(inFlight) }
                } else {
                    if planned.insert(key).inserted { toSend.append(key) }
                    waitsForBulk = true
                }
            }
        }
        for id in joined {
            if let refusal = endOfTimeRefusal(waitingFor: id) { return refusal }
        }
        return waitsForBulk ? endOfTimeRefusal(sending: .fetch, keys: toSend) : nil
    }

    /// Runs scheduled work until request `id` has completed (or nothing is left to run before
    /// the clock's end).
    /// - Throws: `CacheError` when the answer turns out to be due at the clock's end (a retry's
    ///   backoff, a latency changed while waiting): the wait stops before it, keeping what it ran,
    ///   the clock at the last item run, the request still in flight (SPEC §7); or on a runaway.
    func run(until id: UInt64) throws(CacheError) {
        defer { clockGroup?.follow(self) }
        while requestTable[id] != nil {
            if try runNext(upTo: .max - 1) { continue }
            // Nothing left before the end. A deferred answer (a strict divergence) never comes:
            // the reader gets what the cache has, as when nothing at all is left to run.
            guard knownDue(id) == .max, let request = requestTable[id] else { return }
            throw endOfTimeError(requestText(request.kind, request.keys),
                                 "stopped waiting at \(TimeText.iso8601(ms: now)), the request still in flight")
        }
    }
}
