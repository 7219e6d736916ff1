// Mutations of keys the cache does not have yet (absent, or still loading): instead of an error,
// the mutation is sent (or queued) at once and its patch waits for the key's answer. The first
// value stored for the key (a fetch's answer, a `put`) gets the waiting patches as pending log
// items (B11), less those its request already saw (they reached the server before it was sent);
// if the mutation's own answer comes first, it is stored as the key's value (`confirmed`).
// A failed one is dropped (`rolled-back`, `rollbacks+1`): nothing was shown.

/// How a mutation is applied (`mutate ... --pessimistic`, `--refetch`).
public struct MutationOptions: Sendable, Equatable {
    /// Not optimistic: nothing changes until the server confirms; then its answer is the value.
    /// A failure changes nothing (no rollback).
    public var pessimistic = false
    /// The server's answer has no body (HTTP 204; an app's mutate function returns no value for
    /// the key): on success the optimistic value stays and the keys are refetched.
    public var refetch = false
    /// Sent with an idempotency key (its id), so it is retried as a fetch is (`retry=N`,
    /// `backoff=D`) after a failure: the server applies a key once (SPEC §1.1 Retries).
    public var idempotent = false
    public init(pessimistic: Bool = false, refetch: Bool = false, idempotent: Bool = false) {
        self.pessimistic = pessimistic; self.refetch = refetch; self.idempotent = idempotent
    }
}

extension CacheEngine {
    /// A mutation of a key not cached: sent or queued now, its patch waiting for the key's value.
    func deferMutation(_ key: String, patch: Patch, options: MutationOptions) -> [String] {
        let mutation = nextSeq()
        if !options.pessimistic {
            behaviours.deferred[key, default: []].append(
                MutationLog.Item(seq: mutation, patch: patch, entityID: nil, mutation: mutation, reachedServer: nil))
        }
        behaviours.deferredMutations.insert(mutation)
        send(QueuedMutation(id: mutation, keys: [key], patch: patch, entityID: nil,
                            pessimistic: options.pessimistic, refetch: options.refetch, idempotent: options.idempotent))
        return [key]
    }

    /// Notes that mutation `id` was sent as request `request` (its waiting patches reached the server).
    func noteSent(mutation id: UInt64, request: UInt64) {
        guard behaviours.deferredMutations.contains(id) else { return }
        for key in behaviours.deferred.keys.sorted() {
            for j in behaviours.deferred[key]!.indices where behaviours.deferred[key]![j].mutation == id {
                behaviours.deferred[key]![j].reachedServer = request
            }
        }
    }

    /// The first value of a key was just stored (`emit` calls this before reporting it): the
    /// patches waiting for it join its log. A fetched value keeps only those its request did not see.
    func applyDeferred(_ slot: Int32, cause: ChangeCause) {
        let i = Int(slot)
        guard let items = behaviours.deferred.removeValue(forKey: slots[i].key) else { return }
        let request = slots[i].storedRequest
        var log = slots[i].log ?? MutationLog(base: slots[i].value, baseSeq: request)
        if cause == .fetched && isNaive(.answerDropsMutations, ns: slots[i].namespace) {
            // answer-drops-mutations: the fetched answer is shown as it is, as on a cached key;
            // the mutations stay pending for their own answers.
        } else {
            log.items += cause == .fetched ? items.filter { ($0.reachedServer ?? .max) >= request } : items
        }
        for item in items { if let m = item.mutation { log.pending.insert(m) } }
        slots[i].log = log
        entries.setValue(slot, recompute(log))
    }

    /// Completes mutation `mutation` for `key`, which was not cached when it was made and is not
    /// now (or whose answer is void).
    /// - Returns: whether the answer was applied (stored, or rolled back).
    func completeDeferred(_ key: String, mutation: QueuedMutation, request: InFlight, answer i: Int,
                          refetch: inout [String]) -> Bool {
        guard behaviours.deferredMutations.contains(mutation.id) else { return false }
        if var items = behaviours.deferred[key] {
            items.removeAll { $0.mutation == mutation.id }
            behaviours.deferred[key] = items.isEmpty ? nil : items
        }
        if !(request.keys.indices.contains { j in j != i && request.keys[j] == key }) {
            behaviours.deferredMutations.remove(mutation.id)
        }
        guard !request.voided[i], entrySlot(forKey: key) == nil, case .keys(let result)? = request.answer else { return false }
        let ns = namespaceSlot(forKey: key)
        switch result {
        case .success(let answers):
            switch answers[i] {
            case .value where mutation.refetch, .versioned where mutation.refetch, .notFound where mutation.refetch:
                refetch.append(key)
                return true
            case .value(let value), .versioned(let value, _):
                let slot = insertEntry(key: key, namespace: ns, value: value, tags: [], request: request.id)
                if let version = answers[i].version { slots[Int(slot)].version = version }
                applyDeferred(slot, cause: .confirmed)
                emit(.confirmed, slot: slot, source: .server)
                // The victim is chosen among the other entries (SPEC §1.1 Eviction), as for a fetch.
                evictOverflow(ns, sparing: slot)
                return true
            case .notFound:
                break
            }
        case .failure(let f):
            if f.outcomeUnknown && !isNaive(.unknownOutcomeRollsBack, ns: ns) {
                // Unknown outcome: nothing was shown, nothing is rolled back; a fetch of the key in
                // flight may predate the mutation, so its answer is stored stale (SPEC §1.1).
                requestTable.markInvalidated(key)
                return true
            }
        }
        if !mutation.pessimistic {
            count(\.rollbacks, ns)
            if isNaive(.silentRollback, ns: ns) {
                emitUnobserved(.rolledBack, key: key, namespace: ns)
            } else {
                emit(.rolledBack, key: key, namespace: ns)
            }
        }
        return true
    }

    /// Eviction by `max` removed `key`: the queued mutations of it made before keep their place
    /// in the queue (the server still gets them), but their answers no longer store the key
    /// again, as B12 voids the answers already in flight (SPEC §1.1).
    /// - Complexity: O(queued mutations), only while some mutation waits for a key's value.
    @inline(__always)
    func forgetDeferredMutations(ofEvicted key: String) {
        if defersMutations { forgetQueuedDeferredMutations(of: key) }
    }

    private func forgetQueuedDeferredMutations(of key: String) {
        for m in mutationQueue.queued where m.keys.contains(key) { behaviours.deferredMutations.remove(m.id) }
    }

    /// Drops the waiting patches of the keys `clear` or `evict` removes (their queued mutations are
    /// dropped and those in flight voided), and forgets the mutations no longer queued or in flight.
    /// - Complexity: O(waiting patches + queued mutations + requests in flight), when there are some.
    func dropDeferred(where inScope: (String) -> Bool) {
        guard !behaviours.deferredMutations.isEmpty else { return }
        for key in behaviours.deferred.keys.sorted() where inScope(key) { behaviours.deferred[key] = nil }
        var live = Set(mutationQueue.queued.map(\.id))
        for request in requests.values { if let m = request.mutation { live.insert(m.id) } }
        behaviours.deferredMutations.formIntersection(live)
        for key in behaviours.deferred.keys.sorted() {
            behaviours.deferred[key]!.removeAll { !live.contains($0.mutation ?? 0) }
            if behaviours.deferred[key]!.isEmpty { behaviours.deferred[key] = nil }
        }
    }

    /// The waiting patches in a snapshot: `{key, mutation, seq, patch, reached_server}`, in key order.
    func deferredJSON() -> [JSONValue] {
        var out: [JSONValue] = []
        for key in behaviours.deferred.keys.sorted() {
            for item in behaviours.deferred[key]! {
                out.append(.object(["key": .string(key), "mutation": item.mutation.map { .int(Int64($0)) } ?? .null,
                                    "seq": .int(Int64(item.seq)), "patch": item.patch.document,
                                    "reached_server": item.reachedServer.map { .int(Int64($0)) } ?? .null]))
            }
        }
        return out
    }
}
