extension CacheEngine {
    /// Stores a value as if just fetched; the entry becomes the most recently used.
    /// With mutations pending, the value replaces the base and the log stays applied on top.
    /// - Complexity: O(1) amortized, eviction included (plus the value's size for the id index).
    /// - Returns: the keys changed (the key, then any evicted by the namespace's `max`).
    @discardableResult
    public func put(_ key: String, _ value: JSONValue, tags: [String] = []) -> [String] {
        let key = KeyName.canonical(key)
        let s = nextSeq()
        if let slot = index[key] {
            let i = Int(slot)
            if var log = slots[i].log {
                log.base = value
                log.baseSeq = s
                slots[i].log = log
                setValue(slot, recompute(log))
            } else {
                setValue(slot, value)
            }
            if slots[i].tags != tags { setTags(slot, tags) }
            slots[i].lastLocalWrite = s
            slots[i].lastPut = s
            slots[i].storedRequest = s
            slots[i].invalidated = false
            restamp(slot)
            touch(slot)
            emit(.stored, slot: slot, source: .cache)
            return [key]
        }
        let ns = namespaceSlot(forKey: key)
        let slot = insertEntry(key: key, namespace: ns, value: value, tags: tags, request: s, put: s)
        emit(.stored, slot: slot, source: .cache)
        var changed = [key]
        evictOverflow(ns, into: &changed)
        return changed
    }

    /// Expires an entry now, or sets a new time to expiry `delay` from now (`expire KEY in=D`).
    /// - Returns: the keys changed: for an immediate expiry, only an entry it moved into `expired`.
    @discardableResult
    public func expire(_ key: String, in delay: Int64? = nil) -> [String] {
        let key = KeyName.canonical(key)
        guard let slot = index[key] else { return [] }
        let s = nextSeq()
        let i = Int(slot)
        if let delay, delay > 0 {
            let due = now.addingClamped(delay)
            // Of several items for one instant, the first reports: keep its sequence number.
            let sameItem = slots[i].expiryOverridden && !slots[i].expiryReported && slots[i].expiresAt == due
            if !sameItem { slots[i].expirySeq = s }
            slots[i].expiresAt = due
            slots[i].expiryOverridden = true
            slots[i].expiryReported = false
            heap.insert(ScheduledItem(time: slots[i].expiresAt, seq: s,
                                      work: .expiryOverride(slot: slot, generation: slots[i].generation)))
            return [key]
        }
        let wasExpired = slots[i].expiryReported
        slots[i].expiresAt = min(slots[i].expiresAt, now)
        slots[i].expiryOverridden = true
        guard !wasExpired else { return [] }
        reportExpiry(slot)
        return [key]
    }

    /// Marks the targets stale so the next read refreshes (B9); expired entries stay expired.
    /// A request in flight for a target has its response stored stale (the invalidation is not lost).
    /// - Returns: the keys it moved into `stale`.
    @discardableResult
    public func invalidate(_ target: Target) -> [String] {
        _ = nextSeq()
        var changed: [String] = []
        let targets = resolve(target)
        switch target {
        case .key(let key): markInvalidatedInFlight(KeyName.canonical(key))
        case .namespace(let name):
            for id in requests.keys.sorted() {
                for key in requests[id]!.keys where KeyName.namespace(of: key) == name { markInvalidatedInFlight(key) }
            }
        case .tag:
            for slot in targets { markInvalidatedInFlight(slots[Int(slot)].key) }
        }
        for slot in targets {
            let i = Int(slot)
            let state = slots[i].state(at: now)
            guard state != .expired else { continue }
            let wasFresh = state == .fresh
            slots[i].invalidated = true
            if wasFresh {
                count(\.invalidations, slots[i].namespace)
                changed.append(slots[i].key)
                emit(.invalidated, slot: slot, source: .cache)
            }
        }
        return changed
    }

    /// The cached entries a target names, in a deterministic order.
    func resolve(_ target: Target) -> [Int32] {
        switch target {
        case .key(let key):
            return index[KeyName.canonical(key)].map { [$0] } ?? []
        case .namespace(let name):
            guard let ns = namespaceIndex[name] else { return [] }
            return slots(inNamespace: ns)
        case .tag(let tag):
            return sortedByKey(tagIndex[tag] ?? [])
        }
    }

    /// Removes one entry (not an LRU eviction: `evictions` does not count it); its responses in
    /// flight are void and its queued mutations dropped.
    @discardableResult
    public func evict(_ key: String) -> [String] {
        let key = KeyName.canonical(key)
        _ = nextSeq()
        voidResponses(forKey: key)
        dropQueuedMutations { $0 == key }
        guard let slot = index[key] else { return [] }
        let ns = slots[Int(slot)].namespace
        removeEntry(slot)
        emit(.evicted, key: key, namespace: ns)
        return [key]
    }

    /// Removes every entry (logout), or those of one namespace; voids their responses in flight,
    /// cached or not, and drops their queued mutations (B13).
    /// - Complexity: O(entries removed + requests in flight).
    @discardableResult
    public func clear(namespace: String? = nil) -> [String] {
        _ = nextSeq()
        if let namespace {
            return removeAll(inNamespaces: [namespace])
        }
        return removeAll(inNamespaces: nil)
    }

    /// Memory-pressure purge (B13): the namespaces marked purgeable, or everything if none is.
    @discardableResult
    public func memoryWarning() -> [String] {
        _ = nextSeq()
        let purgeable = namespaces.filter { $0.policy.purgeable }.map(\.name)
        return removeAll(inNamespaces: purgeable.isEmpty ? nil : Set(purgeable))
    }

    private func removeAll(inNamespaces names: Set<String>?) -> [String] {
        let inScope: (String) -> Bool = { key in names?.contains(String(KeyName.namespace(of: key))) ?? true }
        voidResponses(where: inScope)
        dropQueuedMutations(where: inScope)
        var removed: [String] = []
        for slot in slotsInRecencyOrder() where inScope(slots[Int(slot)].key) {
            let key = slots[Int(slot)].key
            let ns = slots[Int(slot)].namespace
            removeEntry(slot)
            removed.append(key)
            emit(.cleared, key: key, namespace: ns)
        }
        return removed
    }
}

// MARK: - Configuration

extension CacheEngine {
    /// The policies of namespaces that are defined or hold entries, by name.
    public func namespacePolicies() -> [(name: String, policy: Policy, defined: Bool, count: Int)] {
        namespaces.indices.compactMap { n in
            let ns = namespaces[n], count = store.count(inNamespace: Int32(n))
            return ns.defined || count > 0 ? (ns.name, ns.policy, ns.defined, count) : nil
        }
        .sorted { $0.name < $1.name }
    }

    /// The policy in force for a namespace.
    public func policy(of namespace: String) -> Policy {
        namespaceIndex[namespace].map { namespaces[Int($0)].policy } ?? Policy()
    }

    /// Defines or changes a namespace (`ns`): only the options given change; every entry's times are
    /// recomputed from `stored_at` (dropping `expire` overrides); then it evicts down to a lowered
    /// `max` and expires what is now due, counted and reported as usual.
    /// - Returns: the keys changed (evicted, then expired).
    @discardableResult
    public func defineNamespace(_ name: String, _ change: PolicyChange) throws(CacheError) -> [String] {
        try Self.validateNamespaceName(name)
        let policy = change.applied(to: policy(of: name))
        try Self.validate(policy)
        _ = nextSeq()
        let ns = namespaceSlot(named: name)
        namespaces[Int(ns)].policy = policy
        namespaces[Int(ns)].defined = true
        return recomputeTimes(ns)
    }

    /// Replaces the configuration (`load`): namespaces not named return to the default policy;
    /// entries stay, their times recomputed as by `ns`.
    /// - Returns: the keys changed.
    @discardableResult
    public func configure(_ configuration: CacheConfiguration) throws(CacheError) -> [String] {
        for (name, policy) in configuration.namespaces.sorted(by: { $0.key < $1.key }) {
            try Self.validateNamespaceName(name)
            try Self.validate(policy)
        }
        _ = nextSeq()
        for name in configuration.namespaces.keys.sorted() { _ = namespaceSlot(named: name) }
        for n in namespaces.indices {
            if let policy = configuration.namespaces[namespaces[n].name] {
                namespaces[n].policy = policy
                namespaces[n].defined = true
            } else {
                namespaces[n].policy = Policy()
                namespaces[n].defined = false
            }
        }
        pushRules = configuration.push
        if idField != configuration.idField {
            idField = configuration.idField
            rebuildIDIndex()
        }
        var changed: [String] = []
        for n in namespaces.indices { changed += recomputeTimes(Int32(n)) }
        return changed
    }

    private static func validateNamespaceName(_ name: String) throws(CacheError) {
        guard let problem = KeyName.problem(withNamespace: name) else { return }
        throw CacheError(name == "tag" ? problem : "bad namespace name \"\(name)\": \(problem)")
    }

    private static func validate(_ policy: Policy) throws(CacheError) {
        if policy.ttl < 0 { throw CacheError("ttl must not be negative") }
        if let s = policy.stale, s < 0 { throw CacheError("stale must not be negative") }
        if let m = policy.max, m < 0 { throw CacheError("max must not be negative") }
        if let t = policy.timeout, t <= 0 { throw CacheError("timeout must be positive") }
        if let s = policy.staleIfError, s < 0 { throw CacheError("stale-if-error must not be negative") }
    }

    private func recomputeTimes(_ ns: Int32) -> [String] {
        for slot in slots(inNamespace: ns) {
            let i = Int(slot)
            let wasReported = slots[i].expiryReported && slots[i].expiresAt <= now
            let policy = namespaces[Int(ns)].policy
            slots[i].staleAt = policy.stale.map { slots[i].storedAt.addingClamped($0) } ?? .max
            slots[i].expiresAt = slots[i].storedAt.addingClamped(policy.ttl)
            slots[i].expiryOverridden = false
            slots[i].expiryReported = wasReported && slots[i].expiresAt <= now
        }
        rebuildExpiryFIFO(ns)
        var changed = evictOverflow(ns)
        for slot in slots(inNamespace: ns) where slots[Int(slot)].expiresAt <= now && !slots[Int(slot)].expiryReported {
            reportExpiry(slot)
            changed.append(slots[Int(slot)].key)
        }
        return changed
    }
}
