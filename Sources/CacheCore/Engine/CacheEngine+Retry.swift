// Retries with backoff (`ns NAME retry=N backoff=D`): a fetch the origin fails (an error or a
// timeout; "not found" is an answer) is sent again up to N times, the k-th retry D·2^(k-1) after
// the failure before it. Each attempt is a line of the server log (the failed ones `failed`); the
// request stays in flight with its id throughout, so its readers keep waiting and see a failure
// only after the last attempt. A request's attempts keep the first one's place in the B12 order.
// A mutation is retried the same way only when it carries an idempotency key (`--idempotent`), or
// in a namespace with `retry-without-idempotency-key`, whose retries carry none (SPEC §1.2).

extension CacheEngine {
    /// The retries and first backoff for a request: the fewest retries among its keys' namespaces
    /// (a namespace without retries is never retried for another's sake), the longest backoff.
    func retryPolicy(for keys: [String]) -> (retries: Int, backoff: Int64) {
        var retries = Int.max
        var backoff: Int64 = 0
        for key in keys {
            let ns = namespaceSlot(forKey: key)
            let policy = namespaces.policy(ns)
            retries = min(retries, policy.retry)
            backoff = max(backoff, policy.backoff)
        }
        return (retries == .max ? 0 : retries, backoff)
    }

    /// Called as request `id` completes: if it is a fetch that failed and has retries left, logs
    /// the attempt `failed` and schedules the next one instead of completing it.
    /// - Returns: whether it will be sent again (then it stays in flight).
    func retryIfFailed(_ id: UInt64) -> Bool {
        guard let request = requestTable[id], case .keys(.failure(let failure))? = request.answer,
              (request.kind == .fetch && http.exchanges[id] == nil) || retriesMutation(request) else {
            behaviours.retries[id] = nil
            return false
        }
        let made = behaviours.retries[id]?.made ?? 0
        let unknown = failure.outcomeUnknown || behaviours.retries[id]?.outcomeUnknown == true
        var policy = Policy()
        (policy.retry, policy.backoff) = retryPolicy(for: request.keys)
        guard made < policy.retry, request.voided.contains(false) else {
            behaviours.retries[id] = nil
            // An attempt that may have been applied leaves the mutation's outcome unknown.
            if unknown && request.kind == .mutate && !failure.outcomeUnknown {
                requests[id]!.answer = .keys(.failure(OriginFailure(failure.message, outcomeUnknown: true)))
            }
            return false
        }
        setFate(id, .failed)
        // A recording notes each attempt's failure, so its replay answers attempt by attempt.
        reportCompletion(request, retried: true)
        requests[id]!.answer = nil
        requests[id]!.completesAt = nil
        let due = now.addingClamped(policy.backoffBeforeRetry(made + 1))
        let item = nextSeq()
        behaviours.retries[id] = RetryState(made: made, due: due, item: item, outcomeUnknown: unknown && request.kind == .mutate)
        scheduler.insert(ScheduledItem(time: due, seq: item, work: .retry(id)))
        return true
    }

    /// Sends request `id` again (its retry is due): a new line in the server log, a new completion.
    /// Offline, it fails at once with no more retries.
    func runRetry(_ id: UInt64, at time: Int64) {
        guard var state = behaviours.retries[id], state.due == time, var request = requestTable[id] else { return }
        state.made += 1
        state.due = nil
        state.item = nil
        guard origin.isOnline else {
            state.made = Int.max / 2
            behaviours.retries[id] = state
            request.answer = .keys(.failure(OriginFailure("offline", outcomeUnknown: state.outcomeUnknown)))
            request.completesAt = now
            requests[id] = request
            scheduler.insert(ScheduledItem(time: now, seq: nextSeq(), work: .completion(id)))
            return
        }
        behaviours.retries[id] = state
        let reply: OriginReply<[KeyAnswer]>
        if let m = request.mutation {
            let key = m.idempotent && !isNaive(.retryWithoutIdempotencyKey, keys: m.keys)
                ? IdempotencyKey(client: clockPlace, mutation: m.id) : nil
            reply = origin.mutate(MutationRequest(keys: m.keys, patch: m.patch, entityID: m.entityID, idempotencyKey: key),
                                  requestID: id, at: now)
        } else {
            reply = origin.fetch(keys: request.keys, requestID: id, at: now)
        }
        switch reply {
        case .after(let ms, let result):
            var completesAt = now.addingClamped(max(0, ms))
            request.answer = .keys(result)
            if let limit = timeout(for: request.keys), ms > limit {
                completesAt = now.addingClamped(limit)
                request.answer = .keys(.failure(.timedOut(after: limit)))
            }
            request.completesAt = completesAt
            scheduler.insert(ScheduledItem(time: completesAt, seq: nextSeq(), work: .completion(id)))
        case .deferred:
            request.answer = nil
            request.completesAt = nil
            // Live mode: the attempt's answer and timeout are ordered by the sequence number the
            // virtual clock gives its completion (`answerSeq`).
            let seq = nextSeq()
            behaviours.retries[id]?.attemptSeq = seq
            if let deadline = armLiveTimeout(&request) {
                scheduler.insert(ScheduledItem(time: deadline, seq: seq, work: .completion(id)))
            }
        }
        requests[id] = request
        let position = serverLog.append(RequestLogEntry(id: id, atMs: now - clockStart, kind: request.kind, keys: request.keys,
                                                        fate: .pending))
        changes?.logPositions.append(position)
        var involved: [Int32] = []
        for key in request.keys {
            let ns = namespaceSlot(forKey: key)
            if !involved.contains(ns) { involved.append(ns) }
        }
        statistics.countRequest(inNamespaces: involved)
    }

    /// Whether a failed mutation request is retried: it carries an idempotency key, or a namespace
    /// of its keys retries mutations without one (`retry-without-idempotency-key`).
    func retriesMutation(_ request: InFlight) -> Bool {
        guard let m = request.mutation else { return false }
        return m.idempotent || isNaive(.retryWithoutIdempotencyKey, keys: m.keys)
    }

    /// Whether naive policy `policy` is on in the namespace of any of `keys`.
    func isNaive(_ policy: NaivePolicy, keys: [String]) -> Bool {
        keys.contains { isNaive(policy, key: $0) }
    }

    /// The scheduled items of restored retries waiting to be sent.
    func retryItems() -> [ScheduledItem] {
        behaviours.retries.compactMap { id, state in
            guard let due = state.due, let item = state.item else { return nil }
            return ScheduledItem(time: due, seq: item, work: .retry(id))
        }
    }
}
