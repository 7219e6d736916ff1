// The validation handshake (B10): what the client knows per namespace, sent to the origin;
// the answer turns namespaces stale and stores fresh items.

extension CacheEngine {
    /// The request the client would send now: for each namespace holding entries, the oldest
    /// `stored_at` among them (the time up to which the whole namespace is known current).
    /// - Complexity: O(n).
    public func validationRequest() -> [String: Int64] {
        var request: [String: Int64] = [:]
        for ns in namespaces.indices where entries.ordered.count(inNamespace: Int32(ns)) > 0 {
            var oldest = Int64.max
            for s in entries.ordered.slots(inNamespace: Int32(ns)) { oldest = min(oldest, slots[Int(s)].storedAt) }
            request[namespaces[Int32(ns)].name] = oldest
        }
        return request
    }

    /// Sends the validation handshake; with `wait`, runs the clock until the answer arrives and
    /// applies it (entries of invalidated namespaces stored before the request turn stale; items
    /// are stored as fetch responses for cached keys). Without `wait` the answer is reported to
    /// the delegate when it arrives.
    public func validate(items: Bool, wait: Bool = true) throws(CacheError) -> ValidationResult {
        defer { if checksInvariants { checkInvariants() } }
        let request = validationRequest()
        if wait, let refusal = endOfTimeRefusal(sending: .validate, keys: []) { throw refusal }
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
        statistics.countRequest(inNamespaces: request.keys.sorted().map { namespaceSlot(named: $0) })
        guard wait else { return ValidationResult(request: request, response: nil, error: nil, keys: []) }
        try run(until: id)
        return requestTable.validationOutcomes[id] ?? ValidationResult(request: request, response: nil, error: nil, keys: [])
    }

    /// Delivers a deferred validation answer (an app's async origin).
    public func deliver(validation id: UInt64, _ result: Result<[String: NamespaceVerdict], OriginFailure>) {
        defer { if checksInvariants { checkInvariants() } }
        deliver(id, .validation(result))
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
                if verdict.invalidate, let ns = namespaces.slot(named: name) {
                    for slot in entries.ordered.slots(inNamespace: ns) where slots[Int(slot)].storedSeq < request.id {
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
                    guard entrySlot(forKey: key) != nil else { continue }
                    if storeResponse(key: key, value: value, request: request.id, refresh: true, invalidated: false),
                       !result.keys.contains(key) {
                        result.keys.append(key)
                    }
                }
            }
            setFate(request.id, .stored)
        }
        if request.waiters > 0 {
            unitHasWork = true
            requestTable.setValidationOutcome(request.id, result)
        } else {
            delegate?.cacheEngine(self, validated: result)
        }
    }
}
