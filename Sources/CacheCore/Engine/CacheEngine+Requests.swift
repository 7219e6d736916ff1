// Requests to the origin: sending and registering them, answers delivered later, completing
// them (B12's rules on what a response may store), and LRU eviction when a response adds an entry.

extension CacheEngine {
    /// The smallest `timeout` among the namespaces of `keys`.
    func timeout(for keys: [String]) -> Int64? {
        var result: Int64?
        for key in keys {
            // The slot first: creating it changes `namespaces`, which must not be read before.
            let ns = namespaceSlot(forKey: key)
            if let t = namespaces.policy(ns).timeout {
                result = min(result ?? .max, t)
            }
        }
        return result
    }

    /// Registers a sent request: log line, stats, per-key maps and its completion item.
    func register(_ request: inout InFlight, latency: Int64?, countNamespaces: Bool = true) {
        if let latency {
            var completesAt = now.addingClamped(max(0, latency))
            if let limit = timeout(for: request.keys), latency > limit {
                completesAt = now.addingClamped(limit)
                switch request.answer {
                case .keys?: request.answer = .keys(.failure(.timedOut(after: limit)))
                case .validation?: request.answer = .validation(.failure(.timedOut(after: limit)))
                case nil: break
                }
            }
            request.completesAt = completesAt
            scheduler.insert(ScheduledItem(time: completesAt, seq: request.id, work: .completion(request.id)))
        } else if let deadline = armLiveTimeout(&request) {
            scheduler.insert(ScheduledItem(time: deadline, seq: request.id, work: .completion(request.id)))
        }
        if serverLog.trimIfNeeded(), changes != nil {
            changes!.logCleared = true
            changes!.logPositions = Array(serverLog.lines.indices)
        }
        let position = serverLog.append(RequestLogEntry(
            id: request.id, atMs: now - clockStart, kind: request.kind,
            keys: request.kind == .validate ? request.validation.keys.sorted().map { "\($0):*" } : request.keys,
            fate: .pending))
        changes?.logPositions.append(position)
        if countNamespaces {
            var seen = Set<Int32>()
            var involved: [Int32] = []
            for key in request.keys {
                let ns = namespaceSlot(forKey: key)
                if seen.insert(ns).inserted { involved.append(ns) }
            }
            statistics.countRequest(inNamespaces: involved)
        }
        requestTable.add(request)
    }

    /// Sends one fetch for `keys` (a bulk fetch when more than one).
    /// - Returns: the request id.
    @discardableResult
    func sendFetch(_ keys: [String], refresh: [Bool]) -> UInt64 {
        let id = nextSeq()
        var request = InFlight(id: id, kind: .fetch, keys: keys, startedAt: now, refresh: refresh,
                               voided: Array(repeating: false, count: keys.count),
                               invalidatedAfterSend: Array(repeating: false, count: keys.count))
        let latency: Int64?
        switch origin.fetch(keys: keys, requestID: id, at: now) {
        case .after(let ms, let result):
            latency = ms
            request.answer = .keys(result)
        case .deferred:
            latency = nil
        }
        for (i, key) in keys.enumerated() where refresh[i] { count(\.refreshes, namespaceSlot(forKey: key)) }
        if namespaces.dedupes { noteFetchStart(keys) }
        register(&request, latency: latency)
        return id
    }

    /// Notes that a fetch of `keys` starts now, for the keys of namespaces with a `dedupe=` window.
    /// - Complexity: O(keys), amortized: the notes are pruned of passed windows when they double.
    private func noteFetchStart(_ keys: [String]) {
        for key in keys {
            // The slot first: it may create the key's namespace, which a table read in the same
            // expression would not hold (`namespaces.policy(namespaceSlot(...))` read the table
            // as it was before, and trapped on the new slot).
            let ns = namespaceSlot(forKey: key)
            if namespaces.policy(ns).dedupe != nil { behaviours.fetchStarts[key] = now }
        }
        guard behaviours.fetchStarts.count > max(64, 2 * behaviours.fetchStartsPruned) else { return }
        behaviours.fetchStarts = behaviours.fetchStarts.filter { key, start in
            let window = namespaces.slot(named: String(KeyName.namespace(of: key))).flatMap { namespaces.policy($0).dedupe }
            return window.map { now < start.addingClamped($0) } ?? false
        }
        behaviours.fetchStartsPruned = behaviours.fetchStarts.count
    }

    /// The fetch of `key` a read shares instead of sending its own, when one was sent less than
    /// the namespace's `dedupe=` ago (SPEC §1.2): `.some(id)` while it is in flight, `.some(nil)`
    /// once it completed (the read gets what the cache has); nil when the read sends its own.
    func dedupedFetch(_ key: String, ns: Int32) -> UInt64?? {
        guard namespaces.dedupes, let window = namespaces.policy(ns).dedupe, let start = behaviours.fetchStarts[key],
              now < start.addingClamped(window) else { return nil }
        return .some(requestTable.fetch(forKey: key))
    }

    /// Delivers the answer to a request whose origin replied `.deferred` (an app's async fetch);
    /// it completes at the next scheduling step.
    public func deliver(fetch id: UInt64, _ result: Result<[KeyAnswer], OriginFailure>) {
        defer { if checksInvariants { checkInvariants() } }
        deliver(id, .keys(result))
    }

    /// Gives a deferred request its answer; it completes at the next scheduling step.
    func deliver(_ id: UInt64, _ answer: InFlight.Answer) {
        guard requestTable.deliver(id, answer, at: now) else { return }
        scheduler.insert(ScheduledItem(time: now, seq: nextSeq(), work: .completion(id)))
    }

    /// Sets the fate of request `id` in the server log (if it is still listed there).
    func setFate(_ id: UInt64, _ fate: RequestLogEntry.Fate) {
        if let position = serverLog.setFate(id, fate) {
            changes?.logPositions.append(position)
        }
    }

    /// Forgets the request log (`server log clear`); requests in flight are no longer listed either.
    public func clearRequestLog() {
        defer { if checksInvariants { checkInvariants() } }
        serverLog.clear()
        if changes != nil {
            changes!.logCleared = true
            changes!.logPositions.removeAll()
        }
    }

    /// Completes request `id`: stores, discards or fails each key's response.
    func complete(_ id: UInt64) {
        if retryIfFailed(id) { return }
        guard let request = requestTable.remove(id) else { return }
        // The pages a next page's fetch held end with it however it ends (an HTTP answer, a
        // failure, no answer), not only when its answer is stored (`next-page-drops-writes`).
        defer { if !behaviours.pagesAtRequest.isEmpty { behaviours.pagesAtRequest[id] = nil } }
        if hasHTTPNamespaces, let exchange = http.exchanges.removeValue(forKey: request.id) {
            completeHTTP(request, exchange)
            if case .keys(.success)? = request.answer { return reportCompletion(request, http: exchange.answer) }
            return reportCompletion(request)
        }
        switch request.kind {
        case .fetch: completeFetch(request)
        case .mutate: completeMutation(request)
        case .validate: completeValidation(request)
        }
        reportCompletion(request)
    }

    private func completeFetch(_ request: InFlight) {
        guard case .keys(let result)? = request.answer else { return }
        var outcomes: [String: KeyOutcome] = [:]
        var anyStored = false
        // Keys LRU eviction removed while this answer is stored: their part is void too (B12).
        var evicted: [String] = []
        for (i, key) in request.keys.enumerated() {
            if request.voided[i] || evicted.contains(key) { outcomes[key] = .discarded; continue }
            let failure: String?
            switch result {
            case .failure(let f): failure = f.message
            case .success(let answers):
                switch answers[i] {
                case .notFound: failure = "not found"
                case .value(let v), .versioned(let v, _):
                    failure = nil
                    var invalidated = request.invalidatedAfterSend[i]
                    if !invalidated && !request.entityEvents.isEmpty && !request.entityEvents[i].isEmpty {
                        var ids = Set<String>()
                        v.collectEntityIDs(idField: idField, into: &ids)
                        invalidated = request.entityEvents[i].contains(where: ids.contains)
                    }
                    let stored = storeResponse(key: key, value: v, version: answers[i].version, request: request.id,
                                               refresh: request.refresh[i],
                                               invalidated: invalidated, evicted: &evicted)
                    anyStored = anyStored || stored
                    outcomes[key] = stored ? .stored : .discarded
                }
            }
            if let failure {
                count(request.refresh[i] ? \.refreshFailures : \.fetchFailures, namespaceSlot(forKey: key))
                outcomes[key] = .failed(failure)
            }
        }
        // A request fails when the origin failed it or no key of it could be answered (`not found`).
        let allFailed = outcomes.values.allSatisfy { if case .failed = $0 { true } else { false } }
        if case .failure = result { setFate(request.id, .failed) } else {
            setFate(request.id, anyStored ? .stored : allFailed ? .failed : .discarded)
        }
        if request.waiters > 0 {
            unitHasWork = true
            requestTable.setOutcomes(request.id, outcomes)
        }
        if !behaviours.pagesAtRequest.isEmpty {
            if anyStored { writeBackPages(ofRequest: request.id) } else { behaviours.pagesAtRequest[request.id] = nil }
        }
    }

    /// Stores a fetched value unless B12 says a newer local write wins.
    /// - Returns: whether it was stored.
    func storeResponse(key: String, value: JSONValue, version: UInt64? = nil, request: UInt64, refresh: Bool,
                       invalidated: Bool) -> Bool {
        var evicted: [String] = []
        return storeResponse(key: key, value: value, version: version, request: request, refresh: refresh,
                             invalidated: invalidated, evicted: &evicted)
    }

    /// Stores a fetched value unless B12 says a newer local write wins, or the entry holds a newer
    /// server version than the answer's (SPEC §1.1 Versions); appends the keys LRU eviction
    /// removed to make room to `evicted`.
    /// - Returns: whether it was stored.
    func storeResponse(key: String, value: JSONValue, version: UInt64? = nil, request: UInt64, refresh: Bool,
                       invalidated: Bool, evicted: inout [String]) -> Bool {
        if let slot = entrySlot(forKey: key) {
            let i = Int(slot)
            let naive = namespaces.policy(slots[i].namespace).naive
            let lastWins = naive.contains(.lastAnswerWins)
            let inOrder = naive.contains(.eventsInArrivalOrder)
            if var log = slots[i].log {
                if !lastWins && (request < slots[i].lastPut || request < log.baseSeq) { return false }
                log.base = value
                log.baseSeq = max(log.baseSeq, request)
                if naive.contains(.answerDropsMutations) {
                    log.items.removeAll()
                } else {
                    log.items.removeAll { ($0.reachedServer ?? .max) < request }
                }
                slots[i].version = log.rebase(version: version, inOrder: inOrder)
                slots[i].log = log
                entries.setValue(slot, recompute(log))
            } else {
                if !lastWins && (request < slots[i].lastLocalWrite || request < slots[i].storedRequest) { return false }
                if !inOrder && !lastWins, let version, let held = slots[i].version, version < held { return false }
                entries.setValue(slot, value)
                slots[i].version = version
            }
            // Restamped first: the stored request is then not past the store's sequence number
            // (which `Entry` keeps as an offset from it, out of line when negative).
            restamp(slot)
            slots[i].storedRequest = max(slots[i].storedRequest, request)
            slots[i].invalidated = invalidated && !lastWins
            emit(refresh ? .refreshed : .fetched, slot: slot, source: .server)
        } else {
            let ns = namespaceSlot(forKey: key)
            let slot = insertEntry(key: key, namespace: ns, value: value, tags: [], request: request)
            if version != nil { slots[Int(slot)].version = version }
            slots[Int(slot)].invalidated = invalidated && !isNaive(.lastAnswerWins, ns: ns)
            emit(.fetched, slot: slot, source: .server)
            evictOverflow(ns, sparing: slot, into: &evicted)
        }
        return true
    }

    /// Evicts entries of a namespace down to its `max`, each chosen by its policy (B6), sparing
    /// `sparing` (the entry just stored) unless it is the only one.
    /// - Returns: the evicted keys.
    @discardableResult
    func evictOverflow(_ ns: Int32, sparing: Int32 = -1) -> [String] {
        var evicted: [String] = []
        evictOverflow(ns, sparing: sparing, into: &evicted)
        return evicted
    }

    /// Evicts entries of a namespace down to its `max`, each chosen by its policy, appending their
    /// keys to `evicted`; `sparing` as above.
    /// - Complexity: O(1) per entry evicted (SIEVE: amortized), plus its ids and tags.
    func evictOverflow(_ ns: Int32, sparing: Int32 = -1, into evicted: inout [String]) {
        evictOverflow(ns, over: namespaces.maxEntries(ns), sparing: sparing, into: &evicted)
    }

    /// `evictOverflow` with the namespace's `max` already read (nil: none).
    @inline(__always)
    func evictOverflow(_ ns: Int32, over max: Int?, sparing: Int32, into evicted: inout [String]) {
        guard let max else { return }
        // Each turn removes one entry of the namespace, so this ends within its count. When no
        // more is over `max`, the loop ends without asking again, unless `emit` ran something.
        while let (key, more, requestsByKey) = state.evictOne(ns, over: max, sparing: sparing) {
            evicted.append(key)
            finishEviction(of: key, ns: ns, requestsByKey: requestsByKey)
            if !more && !hooked { break }
        }
    }

    /// What follows the eviction of `key` from namespace `ns` (`EngineState.evictOne` removed it
    /// and counted it): its responses in flight are void (when `requestsByKey`), its deferred
    /// mutations forgotten, its HTTP responses dropped, and observers told.
    @inline(__always)
    func finishEviction(of key: String, ns: Int32, requestsByKey: Bool) {
        if requestsByKey { requestTable.voidResponses(forKey: key) }
        dropHTTPVariants(key, ns: ns)
        forgetDeferredMutations(ofEvicted: key)
        emit(.evicted, key: key, namespace: ns)
    }
}
