/// What the `Cache` actor needs of the engine in live mode: reads that wait for their request,
/// the next due time, and the requests still without an answer.
extension CacheEngine {
    /// Starts an app's awaited read: what `get(nowait: true)` does, and when the read would wait
    /// (an absent or expired key, or `force`), registers as a waiter of the request it waits for.
    /// - Returns: what the cache has now, and the request to wait for (nil when the read is served).
    func startAwaitedRead(_ key: String, force: Bool) throws(CacheError) -> (ReadResult, UInt64?) {
        let canonical = KeyName.canonical(key)
        let result = try get(canonical, force: force, nowait: true)
        let servesExpired = isNaive(.serveExpired, key: canonical)
        guard origin.isOnline, result.state == .absent || (result.state == .expired && !servesExpired) || force,
              let id = fetchInFlight[canonical] ?? requestTable.byKey[canonical]?.last else { return (result, nil) }
        requests[id]?.waiters += 1
        return (result, id)
    }

    /// The result a reader waiting on request `id` gets for `key` once the request has completed;
    /// forgets the request's outcomes when `last` (its last waiter).
    func finishAwaitedRead(_ key: String, request id: UInt64, last: Bool) -> ReadResult {
        let canonical = KeyName.canonical(key)
        let read = result(for: canonical, outcome: keyOutcomes[id]?[canonical])
        if last { keyOutcomes[id] = nil }
        return read
    }

    /// Whether request `id` is still waiting for its answer.
    func isInFlight(_ id: UInt64) -> Bool { requests[id] != nil }

    /// The due time of the earliest scheduled item, if any.
    var nextDueTime: Int64? { scheduler.heap.min?.time }

    /// Replaces the origin (the shell attaches its simulated server to a new cache).
    func replaceOrigin(_ origin: any Origin) { self.origin = origin }
}
