// MARK: - Push rules (B9)

extension CacheEngine {
    /// Runs a push notification through its rule: invalidations, refreshes and evictions of the
    /// rule's targets with `{name}` filled from `arguments`. Observers of everything see `pushed`.
    /// - Throws: `CacheError` for a push type with no rule or a missing argument; nothing changes.
    /// - Returns: the keys changed, in the order invalidate, refresh, evict.
    @discardableResult
    public func push(_ type: String, arguments: [String: String]) throws(CacheError) -> [String] {
        guard let rule = pushRules[type] else {
            let known = pushRules.keys.sorted()
            throw CacheError("no push rule for \"\(type)\"" + (known.isEmpty ? " (no rules are configured)" : " (rules: \(known.joined(separator: ", ")))"))
        }
        let missing = rule.parameters.filter { arguments[$0] == nil }
        if !missing.isEmpty {
            throw CacheError("push \"\(type)\" needs " + missing.map { "\($0)=VALUE" }.joined(separator: " "))
        }
        // A value is data, not a pattern: `user=*` must not turn `profile:{user}` into a whole namespace.
        for name in rule.parameters.sorted() where arguments[name]!.contains(where: { "*?[]{}".contains($0) }) {
            throw CacheError("push argument \(name)=\(arguments[name]!) may not contain * ? [ ] { or }")
        }
        /// The target with each `{name}` replaced in one left-to-right pass, so values are never rescanned.
        func fill(_ target: String) -> Target {
            var text = ""
            var rest = target[...]
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                text += rest[..<open]
                let name = String(rest[rest.index(after: open)..<close])
                text += arguments[name] ?? String(rest[open...close])
                rest = rest[rest.index(after: close)...]
            }
            text += rest
            return Target(parsing: text)
        }
        _ = nextSeq()
        emitPushed(type)
        var changed: [String] = []
        for target in rule.invalidate { changed += invalidate(fill(target)) }
        var toRefresh: [String] = []
        for target in rule.refresh {
            for slot in resolve(fill(target)) {
                let key = slots[Int(slot)].key
                if fetchInFlight[key] == nil && !toRefresh.contains(key) { toRefresh.append(key) }
            }
        }
        if !toRefresh.isEmpty && origin.isOnline {
            sendFetch(toRefresh, refresh: Array(repeating: true, count: toRefresh.count))
            changed += toRefresh
        }
        for target in rule.evict {
            for slot in resolve(fill(target)) { changed += evict(slots[Int(slot)].key) }
        }
        return changed
    }
}

// MARK: - Validation handshake (B10)

extension CacheEngine {
    /// The request the client would send now: for each namespace holding entries, the oldest
    /// `stored_at` among them (the time up to which the whole namespace is known current).
    /// - Complexity: O(n).
    public func validationRequest() -> [String: Int64] {
        var request: [String: Int64] = [:]
        for ns in namespaces.indices where store.count(inNamespace: Int32(ns)) > 0 {
            var oldest = Int64.max
            var s = store.head(inNamespace: Int32(ns))
            while s >= 0 { oldest = min(oldest, slots[Int(s)].storedAt); s = store.nextInNamespace(after: s) }
            request[namespaces[ns].name] = oldest
        }
        return request
    }

    /// Sends the validation handshake; with `wait`, runs the clock until the answer arrives and
    /// applies it (entries of invalidated namespaces stored before the request turn stale; items
    /// are stored as fetch responses for cached keys). Without `wait` the answer is reported to
    /// the delegate when it arrives.
    public func validate(items: Bool, wait: Bool = true) throws(CacheError) -> ValidationResult {
        let request = validationRequest()
        _ = nextSeq()
        guard origin.isOnline else {
            return ValidationResult(request: request, response: nil, error: "offline", keys: [])
        }
        let id = nextSeq()
        var inFlight = InFlight(id: id, kind: .validate, keys: [], startedAt: now, refresh: [], voided: [],
                                invalidatedAfterSend: [])
        inFlight.validation = request
        let latency: Int64?
        switch origin.validate(request, items: items, requestID: id, at: now) {
        case .after(let ms, let result):
            latency = ms
            inFlight.answer = .validation(result)
        case .deferred:
            latency = nil
        }
        if wait { inFlight.waiters = 1 }
        register(&inFlight, latency: latency, countNamespaces: false)
        total.requests += 1
        for name in request.keys.sorted() { namespaces[Int(namespaceSlot(named: name))].stats.requests += 1 }
        guard wait else { return ValidationResult(request: request, response: nil, error: nil, keys: []) }
        try run(until: id)
        return validationOutcomes[id] ?? ValidationResult(request: request, response: nil, error: nil, keys: [])
    }

    /// Delivers a deferred validation answer (an app's async origin).
    public func deliver(validation id: UInt64, _ result: Result<[String: NamespaceVerdict], OriginFailure>) {
        guard var request = requests[id], request.completesAt == nil else { return }
        request.answer = .validation(result)
        request.completesAt = now
        requests[id] = request
        heap.insert(ScheduledItem(time: now, seq: nextSeq(), work: .completion(id)))
    }

    func completeValidation(_ request: InFlight) {
        guard case .validation(let answer)? = request.answer else { return }
        var result = ValidationResult(request: request.validation, response: nil, error: nil, keys: [])
        switch answer {
        case .failure(let failure):
            result.error = failure.message
            setFate(request.id, .failed)
        case .success(let verdicts):
            result.response = verdicts
            for name in verdicts.keys.sorted() {
                let verdict = verdicts[name]!
                if verdict.invalidate, let ns = namespaceIndex[name] {
                    for slot in slots(inNamespace: ns) where slots[Int(slot)].storedSeq < request.id {
                        let i = Int(slot)
                        guard slots[i].state(at: now) == .fresh else { slots[i].invalidated = true; continue }
                        slots[i].invalidated = true
                        count(\.invalidations, ns)
                        result.keys.append(slots[i].key)
                        emit(.invalidated, slot: slot, source: .server)
                    }
                }
                for (key, value) in (verdict.items ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let key = KeyName.canonical(key)
                    guard index[key] != nil else { continue }
                    if storeResponse(key: key, value: value, request: request.id, refresh: true, invalidated: false),
                       !result.keys.contains(key) {
                        result.keys.append(key)
                    }
                }
            }
            setFate(request.id, .stored)
        }
        if request.waiters > 0 {
            validationOutcomes[request.id] = result
        } else {
            delegate?.cacheEngine(self, validated: result)
        }
    }
}

// MARK: - Pending work, statistics, observers

extension CacheEngine {
    /// Requests in flight, queued mutations and scheduled commands, by due time.
    public func pendingWork() -> [PendingItem] {
        var items: [PendingItem] = []
        for request in requests.values {
            let keys = request.kind == .validate ? request.validation.keys.sorted().map { "\($0):*" } : request.keys
            items.append(PendingItem(kind: .request(request.kind, keys: keys), dueAt: request.completesAt, id: request.id))
        }
        for (id, command) in scheduledExternal {
            items.append(PendingItem(kind: .scheduled(token: command.token), dueAt: command.due, id: id))
        }
        items.sort { ($0.dueAt ?? .max, $0.id) < ($1.dueAt ?? .max, $1.id) }
        for m in mutationQueue { items.append(PendingItem(kind: .queuedMutation(keys: m.keys), dueAt: nil, id: m.id)) }
        return items
    }

    /// Drops scheduled external work (for `restore`, which replaces everything).
    public func cancelScheduledCommands() { scheduledExternal.removeAll() }

    /// The counters in total, or of one namespace.
    public func stats(namespace: String? = nil) -> Stats {
        guard let namespace else { return total }
        return namespaceIndex[namespace].map { namespaces[Int($0)].stats } ?? Stats()
    }

    /// Every namespace's counters, by name (namespaces that are defined, hold entries or counted anything).
    public func statsByNamespace() -> [(name: String, stats: Stats)] {
        namespaces.indices
            .filter { namespaces[$0].defined || store.count(inNamespace: Int32($0)) > 0 || namespaces[$0].stats != Stats() }
            .map { (namespaces[$0].name, namespaces[$0].stats) }
            .sorted { $0.name < $1.name }
    }

    /// Zeroes every counter.
    public func resetStats() {
        total = Stats()
        for n in namespaces.indices { namespaces[n].stats = Stats() }
    }

    /// Starts reporting changes in `scope` to the delegate.
    public func watch(_ scope: WatchScope) {
        if case .key(let key) = scope { watches.insert(.key(KeyName.canonical(key))) } else { watches.insert(scope) }
    }

    /// Stops watching `scope`, or everything when nil.
    /// - Returns: whether something was being watched.
    @discardableResult
    public func unwatch(_ scope: WatchScope?) -> Bool {
        guard let scope else {
            defer { watches.removeAll() }
            return !watches.isEmpty
        }
        if case .key(let key) = scope { return watches.remove(.key(KeyName.canonical(key))) != nil }
        return watches.remove(scope) != nil
    }

    public var watchedScopes: [WatchScope] {
        watches.sorted { "\($0)" < "\($1)" }
    }

    @inline(__always)
    func emit(_ cause: ChangeCause, slot: Int32, source: ValueSource) {
        guard !watches.isEmpty else { return }
        let e = slots[Int(slot)]
        guard isWatched(e.key, namespace: e.namespace) else { return }
        delegate?.cacheEngine(self, observed: CacheEvent(cause: cause, key: e.key, at: now, state: e.state(at: now),
                                                          value: e.value, source: source))
    }

    /// Reports a change of a key that is no longer cached.
    func emit(_ cause: ChangeCause, key: String, namespace: Int32) {
        guard !watches.isEmpty, isWatched(key, namespace: namespace) else { return }
        delegate?.cacheEngine(self, observed: CacheEvent(cause: cause, key: key, at: now, state: .absent,
                                                          value: nil, source: .cache))
    }

    func emitPushed(_ type: String) {
        guard watches.contains(.all) else { return }
        delegate?.cacheEngine(self, observed: CacheEvent(cause: .pushed, key: type, at: now, state: .absent,
                                                          value: nil, source: .server))
    }

    private func isWatched(_ key: String, namespace: Int32) -> Bool {
        watches.contains(.all) || watches.contains(.key(key)) || watches.contains(.namespace(namespaces[Int(namespace)].name))
    }
}

extension CacheEngine {
    /// Forgets the request log (`server log clear`); requests in flight are no longer listed either.
    public func clearRequestLog() {
        requestLog.removeAll()
        logPosition.removeAll()
        if changes != nil {
            changes!.logCleared = true
            changes!.logPositions.removeAll()
        }
    }
}
