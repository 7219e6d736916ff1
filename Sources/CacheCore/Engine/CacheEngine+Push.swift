// Push notifications (B9): a push's rule turned into invalidations, refreshes and evictions.

extension CacheEngine {
    /// Runs a push notification through its rule: invalidations, refreshes and evictions of the
    /// rule's targets with `{name}` filled from `arguments`. Observers of everything see `pushed`.
    ///
    /// A `refresh` target that has a fetch in flight gets a new request all the same (the answer
    /// in flight predates the push: it is stored stale if it arrives first, discarded if after),
    /// unless the namespace joins refetches to the request in flight (`join-refetch`). Offline, a
    /// `refresh` target is invalidated instead: nothing can be sent, and the value is no longer known current.
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
        var seen = Set<String>()
        for target in targets.refresh {
            for key in refreshKeys(target) where seen.insert(key).inserted {
                if requestTable.fetch(forKey: key) != nil && isNaive(.joinRefetch, key: key) { continue }
                toRefresh.append(key)
            }
        }
        if !toRefresh.isEmpty {
            if origin.isOnline {
                for key in toRefresh where requestTable.fetch(forKey: key) != nil { requestTable.markInvalidated(key) }
                sendFetch(toRefresh, refresh: Array(repeating: true, count: toRefresh.count))
                changed += toRefresh
            } else {
                for key in toRefresh { changed += invalidateTargets(.key(key)) }
            }
        }
        for target in targets.evict {
            for slot in resolve(target) { changed += evictKey(slots[Int(slot)].key) }
        }
        return changed
    }

    /// Whether `push(type, arguments:)` would run here: throws the error it would throw, changing nothing.
    public func checkPush(_ type: String, arguments: [String: String]) throws(CacheError) {
        _ = try rules.targets(of: type, arguments: arguments)
    }

    /// The keys a `refresh` target names: its cached entries, then (sorted) the keys not cached
    /// whose first fetch is in flight (a tag names cached entries only).
    func refreshKeys(_ target: Target) -> [String] {
        var keys = resolve(target).map { slots[Int($0)].key }
        var extra: [String] = []
        switch target {
        case .key(let key):
            let key = KeyName.canonical(key)
            if entrySlot(forKey: key) == nil && requestTable.fetch(forKey: key) != nil { extra.append(key) }
        case .namespace(let name):
            for key in requestTable.fetchInFlight.keys
            where entrySlot(forKey: key) == nil && KeyName.namespace(of: key) == name { extra.append(key) }
        case .tag:
            break
        }
        keys += extra.sorted()
        return keys
    }
}

extension CacheEngine {
    /// Whether the namespace of `key` has naive policy `p` switched on.
    @inline(__always)
    func isNaive(_ p: NaivePolicy, key: String) -> Bool {
        let ns = namespaceSlot(forKey: key)
        return namespaces.isNaive(p, ns: ns)
    }

    /// Whether the namespace of `key` has naive policy `p` switched on, creating no namespace (one
    /// not met yet has the default policy: none on).
    func isNaiveCreatingNone(_ p: NaivePolicy, key: String) -> Bool {
        guard let ns = namespaces.slot(named: String(KeyName.namespace(of: key))) else { return false }
        return namespaces.isNaive(p, ns: ns)
    }

    /// Whether namespace slot `ns` has naive policy `p` switched on.
    @inline(__always)
    func isNaive(_ p: NaivePolicy, ns: Int32) -> Bool {
        namespaces.isNaive(p, ns: ns)
    }
}
