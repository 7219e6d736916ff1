// Cancelling a request in flight (`cancel KEY`): the app gives up on a fetch it started (a view
// closed, a search text changed). The request's answer is discarded whenever it comes.

extension CacheEngine {
    /// Cancels every fetch in flight holding `key` (a bulk fetch with all its keys): each leaves the
    /// requests in flight at once, its fate is `cancelled`, its answer is discarded when it
    /// arrives, and the readers waiting on it get what the cache has (an error, `cancelled`, for a
    /// key it does not have). Observers of each key see `cancelled`.
    /// - Throws: `CacheError` naming the key when no fetch of it is in flight; nothing changes.
    /// - Returns: the keys of the requests cancelled, in request order.
    /// - Complexity: O(requests holding the key · their keys).
    @discardableResult
    public func cancel(_ key: String) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let key = KeyName.canonical(key)
        let ids = (requestTable.byKey[key] ?? []).filter { requestTable[$0]?.kind == .fetch }
        guard !ids.isEmpty else { throw CacheError("no fetch of \(key) in flight: nothing to cancel") }
        _ = nextSeq()
        var keys: [String] = []
        for id in ids {
            guard var request = requestTable.remove(id) else { continue }
            behaviours.retries[id] = nil
            if !behaviours.pagesAtRequest.isEmpty { behaviours.pagesAtRequest[id] = nil }
            var outcomes: [String: KeyOutcome] = [:]
            for k in request.keys {
                outcomes[k] = entrySlot(forKey: k) == nil ? .failed("cancelled") : .discarded
                if !keys.contains(k) { keys.append(k) }
            }
            setFate(id, .cancelled)
            if request.waiters > 0 {
                unitHasWork = true
                requestTable.setOutcomes(id, outcomes)
            }
            // Its completion item stays queued, superseded: it finds the request gone, as a live answer does.
            if let due = request.completesAt { scheduler.supersede(completion: id, at: due) }
            request.answer = nil
            reportCompletion(request)
        }
        for k in keys {
            if let slot = entrySlot(forKey: k) { emit(.cancelled, slot: slot, source: .cache) } else {
                emit(.cancelled, key: k, namespace: namespaceSlot(forKey: k))
            }
        }
        return keys
    }
}
