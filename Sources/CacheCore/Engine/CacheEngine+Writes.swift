extension CacheEngine {
    /// Stores a value as if just fetched; the entry becomes the most recently used.
    /// With mutations pending, the value replaces the base and the log stays applied on top.
    /// - Complexity: O(1) amortized, eviction included (plus the value's size for the id index).
    /// - Returns: the keys changed (the key, then any evicted by the namespace's `max`).
    @discardableResult
    public func put(_ key: String, _ value: JSONValue, tags: [String] = []) -> [String] {
        put(key, StoredValue(value), tags: tags)
    }

    /// `put` of a value in its stored form.
    @discardableResult
    public func put(_ key: String, _ value: StoredValue, tags: [String] = []) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        // The usual key is its own canonical form, hashed with the key index's copy of the hash
        // keys (as `get` does): `KeyIndex.canonical`, not inlined here, read the global's (a
        // `swift_once` check) and returned the key (some 10 instructions a put).
        let (key, hash) = KeyIndex.hashIfCanonical(key, state.entries.keyIndex.seeds).map { (key, $0) }
            ?? KeyIndex.canonical(key)
        // One access to the engine's state finds the key and, when it is new, stores it and (when
        // nothing hears of changes, so that no report comes between) evicts for it.
        let hooked = self.hooked
        let (s, step, changed) = state.putStep(key: key, hash: hash, value: value, tags: tags, evicting: !hooked)
        switch step {
        case .cached(let slot):
            // The usual put again (no tags, nothing of the entry out of line): one step.
            let again = state.putAgainStep(slot, value: value, tags: tags, put: s)
            if again.applied {
                if let scan = again.scan { scheduler.insert(scan) }
            } else {
                let i = Int(slot)
                if var log = slots[i].log {
                    log.base = value.json
                    log.baseSeq = s
                    slots[i].log = log
                    entries.setValue(slot, recompute(log))
                } else {
                    entries.setValue(slot, value)
                }
                if slots[i].tags != tags { entries.setTags(slot, tags) }
                // A put is no server version: every event applies to it (SPEC §1.1 Versions).
                if slots[i].version != nil { slots[i].version = nil }
                slots[i].notePut(s)
                slots[i].invalidated = false
                restamp(slot)
                entries.touch(slot)
            }
            emit(.stored, slot: slot, source: .cache)
            return changed
        case .stored(let slot, let ns, let max, let scan, let evicted):
            if let scan { scheduler.insert(scan) }
            guard hooked else {
                // The step evicted when the namespace went over its `max`: what is left is what
                // `finishEviction` does but tell observers (its responses in flight void, its HTTP
                // responses dropped, its deferred mutations forgotten), and to go on if the
                // namespace is still over.
                guard let evicted else { return changed }
                // The evicted key is the second changed (`EngineState.Evicted`).
                if evicted.requestsByKey { requestTable.voidResponses(forKey: changed[1]) }
                dropHTTPVariants(changed[1], ns: ns)
                if defersMutations { forgetDeferredMutations(ofEvicted: changed[1]) }
                // Only a `max` of 0 evicts the key put (one integer compared, not the keys).
                guard evicted.more else { return max == 0 ? Self.eachOnce(changed) : changed }
                var changed = changed
                evictOverflow(ns, over: max, sparing: slot, into: &changed)
                return max == 0 ? Self.eachOnce(changed) : changed
            }
            emit(.stored, slot: slot, source: .cache)
            var changed = changed
            // (What emit ran cannot change a policy, but read it again to be sure.)
            let max = namespaces.maxEntries(ns)
            evictOverflow(ns, over: max, sparing: slot, into: &changed)
            return max == 0 ? Self.eachOnce(changed) : changed
        }
    }

    /// A put's changed keys (the key put, then those evicted, each once) with the key put listed
    /// once: a put into a namespace whose `max` is 0 stores its key and evicts it again, and is
    /// one change of that key.
    /// - Complexity: O(k) for k keys evicted, one comparison each, nothing allocated unless the
    ///   key put was evicted (a put evicts few; only a put that evicted calls it).
    static func eachOnce(_ keys: [String]) -> [String] {
        guard keys.count > 1, keys[1...].contains(keys[0]) else { return keys }
        return [keys[0]] + keys.dropFirst().filter { $0 != keys[0] }
    }

    /// Expires an entry now, or sets a new time to expiry `delay` from now (`expire KEY in=D`).
    /// - Returns: the keys changed: for an immediate expiry, only an entry it moved into `expired`.
    @discardableResult
    public func expire(_ key: String, in delay: Int64? = nil) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let key = KeyName.canonical(key)
        guard let slot = entrySlot(forKey: key) else { return [] }
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
            scheduler.insert(ScheduledItem(time: slots[i].expiresAt, seq: s,
                                      work: .expiryOverride(slot: slot, storedSeq: slots[i].storedSeq)))
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
        defer { if checksInvariants { checkInvariants() } }
        return invalidateTargets(target)
    }

    /// `invalidate` without the check of invariants (for `push`, which checks once at its end).
    func invalidateTargets(_ target: Target) -> [String] {
        _ = nextSeq()
        var changed: [String] = []
        let targets = resolve(target)
        switch target {
        case .key(let key):
            let key = KeyName.canonical(key)
            if !dropsInvalidation(of: key) { requestTable.markInvalidated(key) }
        case .namespace(let name): requestTable.markInvalidated { KeyName.namespace(of: $0) == name && !dropsInvalidation(of: $0) }
        case .tag:
            for slot in targets where !dropsInvalidation(of: slots[Int(slot)].key) { requestTable.markInvalidated(slots[Int(slot)].key) }
        }
        for slot in targets {
            let i = Int(slot)
            if dropsInvalidation(of: slots[i].key) { continue }
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

    /// Whether an invalidation of `key` is dropped: `invalidate-drops-unwatched` is on for its
    /// namespace and nobody watches it (not active, no `watch` covering it) (SPEC §1.2).
    func dropsInvalidation(of key: String) -> Bool {
        guard isNaiveCreatingNone(.invalidateDropsUnwatched, key: key) else { return false }
        return !behaviours.active.contains(key) && !observers.isWatched(key, namespace: String(KeyName.namespace(of: key)))
    }

    /// The cached entries a target names, in a deterministic order.
    func resolve(_ target: Target) -> [Int32] {
        switch target {
        case .key(let key):
            return entrySlot(forKey: KeyName.canonical(key)).map { [$0] } ?? []
        case .namespace(let name):
            guard let ns = namespaces.slot(named: name) else { return [] }
            return entries.ordered.slots(inNamespace: ns)
        case .tag(let tag):
            return sortedByKey(entries.tagIndex[tag] ?? [])
        }
    }

    /// Removes one entry (not an LRU eviction: `evictions` does not count it); its responses in
    /// flight are void and its queued mutations dropped.
    @discardableResult
    public func evict(_ key: String) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        return evictKey(key)
    }

    /// `evict` without the check of invariants (for `push`, which checks once at its end).
    func evictKey(_ key: String) -> [String] {
        let key = KeyName.canonical(key)
        _ = nextSeq()
        requestTable.voidResponses(forKey: key)
        mutationQueue.drop { $0 == key }
        dropDeferred { $0 == key }
        guard let slot = entrySlot(forKey: key) else { return [] }
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
        defer { if checksInvariants { checkInvariants() } }
        _ = nextSeq()
        if let namespace {
            return removeAll(inNamespaces: [namespace])
        }
        return removeAll(inNamespaces: nil)
    }

    /// Memory-pressure purge (B13): the namespaces marked purgeable, or everything if none is.
    @discardableResult
    public func memoryWarning() -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        _ = nextSeq()
        let purgeable = namespaces.all.filter { $0.policy.purgeable }.map(\.name)
        return removeAll(inNamespaces: purgeable.isEmpty ? nil : Set(purgeable))
    }

    private func removeAll(inNamespaces names: Set<String>?) -> [String] {
        let inScope: (String) -> Bool = { key in names?.contains(String(KeyName.namespace(of: key))) ?? true }
        requestTable.voidResponses(where: inScope)
        mutationQueue.drop(keysWhere: inScope)
        dropDeferred(where: inScope)
        var removed: [String] = []
        for slot in entries.ordered.recencyOrder() where inScope(slots[Int(slot)].key) {
            let key = slots[Int(slot)].key
            let ns = slots[Int(slot)].namespace
            removeEntry(slot)
            removed.append(key)
            emit(.cleared, key: key, namespace: ns)
        }
        return removed
    }
}
