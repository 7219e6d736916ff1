/// A request in flight: explicit state, completed by the scheduler at start + latency.
struct InFlight {
    enum Answer {
        case keys(Result<[KeyAnswer], OriginFailure>)
        case validation(Result<[String: NamespaceVerdict], OriginFailure>)
    }
    let id: UInt64
    let kind: RequestKind
    var keys: [String]
    let startedAt: Int64
    var completesAt: Int64?
    /// Per key: a background refresh (true) or a blocking fetch (false).
    var refresh: [Bool]
    /// Per key: its response is void (`clear`, `evict`, memory warning, LRU eviction).
    var voided: [Bool]
    /// Per key: an invalidation arrived after the request was sent; store the response as stale.
    var invalidatedAfterSend: [Bool]
    var answer: Answer?
    var mutation: QueuedMutation?
    var validation: [String: Int64] = [:]
    var waiters = 0
}

/// What became of one key of a completed fetch, for the readers waiting on it.
enum KeyOutcome: Equatable {
    case stored
    case discarded
    case failed(String)
}

struct QueuedMutation {
    var id: UInt64
    var keys: [String]
    var patch: Patch
    var entityID: String?
}

extension CacheEngine {
    /// The smallest `timeout` among the namespaces of `keys`.
    private func timeout(for keys: [String]) -> Int64? {
        var result: Int64?
        for key in keys {
            if let t = namespaces[Int(namespaceSlot(forKey: key))].policy.timeout {
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
                let message = "timed out after \(TimeText.formatDuration(limit))"
                switch request.answer {
                case .keys?: request.answer = .keys(.failure(OriginFailure(message)))
                case .validation?: request.answer = .validation(.failure(OriginFailure(message)))
                case nil: break
                }
            }
            request.completesAt = completesAt
            heap.insert(ScheduledItem(time: completesAt, seq: request.id, work: .completion(request.id)))
        }
        logPosition[request.id] = requestLog.count
        changes?.logPositions.append(requestLog.count)
        requestLog.append(RequestLogEntry(id: request.id, atMs: now - clockStart, kind: request.kind,
                                          keys: request.kind == .validate ? request.validation.keys.sorted().map { "\($0):*" } : request.keys,
                                          fate: .pending))
        if countNamespaces {
            total.requests += 1
            var seen = Set<Int32>()
            for key in request.keys where seen.insert(namespaceSlot(forKey: key)).inserted {
                namespaces[Int(namespaceSlot(forKey: key))].stats.requests += 1
            }
        }
        for key in request.keys { requestsByKey[key, default: []].append(request.id) }
        requests[request.id] = request
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
        for (i, key) in keys.enumerated() {
            fetchInFlight[key] = id
            if refresh[i] { count(\.refreshes, namespaceSlot(forKey: key)) }
        }
        register(&request, latency: latency)
        return id
    }

    /// Delivers the answer to a request whose origin replied `.deferred` (an app's async fetch);
    /// it completes at the next scheduling step.
    public func deliver(fetch id: UInt64, _ result: Result<[KeyAnswer], OriginFailure>) {
        guard var request = requests[id], request.completesAt == nil else { return }
        request.answer = .keys(result)
        request.completesAt = now
        requests[id] = request
        heap.insert(ScheduledItem(time: now, seq: nextSeq(), work: .completion(id)))
    }

    /// Marks the responses in flight for `key` void: they will be discarded (SPEC §1.1 B12).
    func voidResponses(forKey key: String) {
        if !fetchInFlight.isEmpty { fetchInFlight.removeValue(forKey: key) }
        guard !requestsByKey.isEmpty, let ids = requestsByKey[key] else { return }
        for id in ids {
            guard var request = requests[id], let i = request.keys.firstIndex(of: key) else { continue }
            request.voided[i] = true
            requests[id] = request
        }
    }

    /// Voids every response in flight whose key satisfies `inScope` (namespace clear, clear all).
    func voidResponses(where inScope: (String) -> Bool) {
        for id in requests.keys.sorted() {
            for key in requests[id]!.keys where inScope(key) {
                voidResponses(forKey: key)
            }
        }
    }

    /// Notes that `key` was invalidated while requests for it are in flight: their responses are stored stale.
    func markInvalidatedInFlight(_ key: String) {
        guard let ids = requestsByKey[key] else { return }
        for id in ids {
            guard var request = requests[id], request.kind == .fetch,
                  let i = request.keys.firstIndex(of: key) else { continue }
            request.invalidatedAfterSend[i] = true
            requests[id] = request
        }
    }

    func setFate(_ id: UInt64, _ fate: RequestLogEntry.Fate) {
        if let position = logPosition.removeValue(forKey: id) {
            requestLog[position].fate = fate
            changes?.logPositions.append(position)
        }
    }

    /// Completes request `id`: stores, discards or fails each key's response.
    func complete(_ id: UInt64) {
        guard let request = requests.removeValue(forKey: id) else { return }
        for key in request.keys {
            if fetchInFlight[key] == id { fetchInFlight.removeValue(forKey: key) }
            if var ids = requestsByKey.removeValue(forKey: key) {
                ids.removeAll { $0 == id }
                if !ids.isEmpty { requestsByKey[key] = ids }
            }
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
        for (i, key) in request.keys.enumerated() {
            if request.voided[i] { outcomes[key] = .discarded; continue }
            let failure: String?
            switch result {
            case .failure(let f): failure = f.message
            case .success(let answers):
                switch answers[i] {
                case .notFound: failure = "not found"
                case .value(let v):
                    failure = nil
                    let stored = storeResponse(key: key, value: v, request: request.id,
                                               refresh: request.refresh[i],
                                               invalidated: request.invalidatedAfterSend[i])
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
        if request.waiters > 0 { keyOutcomes[request.id] = outcomes }
    }

    /// Stores a fetched value unless B12 says a newer local write wins.
    /// - Returns: whether it was stored.
    func storeResponse(key: String, value: JSONValue, request: UInt64, refresh: Bool, invalidated: Bool) -> Bool {
        if let slot = index[key] {
            let i = Int(slot)
            if var log = slots[i].log {
                if request < slots[i].lastPut || request < log.baseSeq { return false }
                log.base = value
                log.baseSeq = request
                log.items.removeAll { ($0.reachedServer ?? .max) < request }
                slots[i].log = log
                setValue(slot, recompute(log))
            } else {
                if request < slots[i].lastLocalWrite || request < slots[i].storedRequest { return false }
                setValue(slot, value)
            }
            slots[i].storedRequest = request
            restamp(slot)
            slots[i].invalidated = invalidated
            emit(refresh ? .refreshed : .fetched, slot: slot, source: .server)
        } else {
            let ns = namespaceSlot(forKey: key)
            let slot = insertEntry(key: key, namespace: ns, value: value, tags: [], request: request)
            slots[Int(slot)].invalidated = invalidated
            emit(.fetched, slot: slot, source: .server)
            evictOverflow(ns)
        }
        return true
    }

    /// Evicts least recently used entries of a namespace down to its `max` (B6).
    /// - Returns: the evicted keys.
    @discardableResult
    func evictOverflow(_ ns: Int32) -> [String] {
        var evicted: [String] = []
        evictOverflow(ns, into: &evicted)
        return evicted
    }

    /// Evicts least recently used entries of a namespace down to its `max`, appending their keys to `evicted`.
    /// - Complexity: O(1) per entry evicted, plus its ids and tags.
    func evictOverflow(_ ns: Int32, into evicted: inout [String]) {
        guard let max = namespaces[Int(ns)].policy.max else { return }
        while let victim = store.leastRecent(inNamespace: ns, over: max) {
            let key = removeEntry(victim)
            voidResponses(forKey: key)
            count(\.evictions, ns)
            evicted.append(key)
            emit(.evicted, key: key, namespace: ns)
        }
    }
}
