// Push notifications (B9): a push's rule turned into invalidations, refreshes and evictions.

extension CacheEngine {
    /// Runs a push notification through its rule: invalidations, refreshes and evictions of the
    /// rule's targets with `{name}` filled from `arguments`. Observers of everything see `pushed`.
    /// - Throws: `CacheError` for a push type with no rule or a missing argument; nothing changes.
    /// - Returns: the keys changed, in the order invalidate, refresh, evict.
    @discardableResult
    public func push(_ type: String, arguments: [String: String]) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let targets = try rules.targets(of: type, arguments: arguments)
        _ = nextSeq()
        emitPushed(type)
        var changed: [String] = []
        for target in targets.invalidate { changed += invalidateTargets(target) }
        var toRefresh: [String] = []
        for target in targets.refresh {
            for slot in resolve(target) {
                let key = slots[Int(slot)].key
                if requestTable.fetch(forKey: key) == nil && !toRefresh.contains(key) { toRefresh.append(key) }
            }
        }
        if !toRefresh.isEmpty && origin.isOnline {
            sendFetch(toRefresh, refresh: Array(repeating: true, count: toRefresh.count))
            changed += toRefresh
        }
        for target in targets.evict {
            for slot in resolve(target) { changed += evictKey(slots[Int(slot)].key) }
        }
        return changed
    }
}
