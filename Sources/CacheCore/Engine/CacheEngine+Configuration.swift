// Configuration: namespace policies, `load`'s whole configuration, and what a policy change
// means for the entries' times.

extension CacheEngine {
    /// The policies of namespaces that are defined or hold entries, by name.
    public func namespacePolicies() -> [(name: String, policy: Policy, defined: Bool, count: Int)] {
        namespaces.indices.compactMap { n in
            let ns = namespaces[Int32(n)], count = entries.ordered.count(inNamespace: Int32(n))
            return ns.defined || count > 0 ? (ns.name, ns.policy, ns.defined, count) : nil
        }
        .sorted { $0.name < $1.name }
    }

    /// Every namespace's name, sorted (`Cache.knownNamespaces`).
    public func knownNamespaces() -> [String] {
        namespaces.indices.map { namespaces[Int32($0)].name }.sorted()
    }

    /// Whether `name` is a known namespace (one of ``knownNamespaces()``).
    /// - Complexity: O(1) on average.
    public func isKnownNamespace(_ name: String) -> Bool {
        namespaces.slot(named: name) != nil
    }

    /// The policy in force for a namespace.
    public func policy(of namespace: String) -> Policy {
        namespaces.slot(named: namespace).map { namespaces.policy($0) } ?? Policy()
    }

    /// Defines or changes a namespace (`ns`): only the options given change; every entry's times are
    /// recomputed from `stored_at` (dropping `expire` overrides); a new eviction policy starts from
    /// the entries in recency order (`OrderedSlots.setEviction`); then it evicts down to a lowered
    /// `max` and expires what is now due, counted and reported as usual.
    /// - Returns: the keys changed (evicted, then expired).
    @discardableResult
    public func defineNamespace(_ name: String, _ change: PolicyChange) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        try Self.validateNamespaceName(name)
        var policy = change.applied(to: policy(of: name))
        try Self.validate(policy)
        if change.http != nil && self.policy(of: name).http == nil {
            // Its entries would be values with no response to decide from.
            let held = namespaces.slot(named: name).map { entries.ordered.slots(inNamespace: $0).count } ?? 0
            if held > 0 { throw CacheError("\(name) holds \(held) entr\(held == 1 ? "y" : "ies"): a namespace becomes an HTTP one before any key of it is stored") }
            if change.ttl == nil { policy.ttl = HTTPNamespace.defaultKeep }
        }
        _ = nextSeq()
        let ns = namespaceSlot(named: name)
        namespaces.setPolicy(ns, policy, defined: true)
        if policy.http != nil { hasHTTPNamespaces = true }
        entries.setEviction(ns, policy.eviction)
        reserveDeclaredEntries()
        return recomputeTimes(ns)
    }

    /// At most this many entries are reserved for the namespaces' `max` (`reserveDeclaredEntries`),
    /// and one more: 3 MiB of slots, none of it in use until written, and below the size at which
    /// a table asks for huge pages (`HugePages.threshold`), whose first write takes 2 MiB at once.
    static let declaredEntriesReserveLimit = NamespaceTable.maxCounted

    /// Makes room for as many entries as the namespaces' `max` add up to, and one more (a put
    /// into a full namespace may store its entry before it evicts: in a shell session, and in
    /// FIFO, SIEVE and LFU namespaces), at most `declaredEntriesReserveLimit` + 1: a cache whose
    /// namespaces are bounded then fills its slots without moving them as they grow. Each move
    /// wrote the slots into new memory, the old freed: a batch of puts into namespaces of 10,000,
    /// 5,000 and 2,000 entries wrote some 3.5 MB of slots to keep 1.6 MB (`compare-redis.sh`'s
    /// batch: 2,257 page faults, 1,903 with the room reserved, each a few microseconds). Room that
    /// must grow while entries are held grows at least twofold, as an append would, so that
    /// `ns` commands raising the total a little at a time move the entries O(log n) times.
    /// - Complexity: O(1), or O(entries) when the slots move.
    func reserveDeclaredEntries() {
        let total = Swift.min(namespaces.maxTotal, Self.declaredEntriesReserveLimit)
        guard total > 0 else { return }
        let room = entries.slots.capacity
        guard room <= total else { return }
        let grown = entries.slots.isEmpty ? total + 1 : Swift.max(total + 1, Swift.min(2 * room, Self.declaredEntriesReserveLimit + 1))
        entries.reserveSlots(grown)
    }

    /// Replaces the configuration (`load`): namespaces not named return to the default policy;
    /// entries stay, their times recomputed as by `ns`.
    /// - Returns: the keys changed.
    @discardableResult
    public func configure(_ configuration: CacheConfiguration) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        for (name, policy) in configuration.namespaces.sorted(by: { $0.key < $1.key }) {
            try Self.validateNamespaceName(name)
            try Self.validate(policy)
            if policy.http != nil && self.policy(of: name).http == nil,
               let ns = namespaces.slot(named: name), !entries.ordered.slots(inNamespace: ns).isEmpty {
                throw CacheError("\(name) holds entries: a namespace becomes an HTTP one before any key of it is stored")
            }
        }
        // A namespace stops being an HTTP one only once no HTTP request of it is in flight: its
        // exchange would be completed as no request of its kind, and written into no snapshot.
        if hasHTTPNamespaces {
            for id in http.exchanges.keys.sorted() {
                guard let key = requestTable[id]?.keys.first else { continue }
                let name = String(KeyName.namespace(of: key))
                if configuration.namespaces[name]?.http == nil {
                    throw CacheError("\(name) has an HTTP request in flight (\(key)): it stays an HTTP namespace until the request completes (advance)")
                }
            }
        }
        // Every rule checked before anything changes: a broken one refuses the whole configuration.
        for (type, rule) in configuration.push.sorted(by: { $0.key < $1.key }) {
            if let problem = rule.templateProblem { throw CacheError("push rule \(JSONValue.string(type).compactText): \(problem)") }
        }
        _ = nextSeq()
        for name in configuration.namespaces.keys.sorted() { _ = namespaceSlot(named: name) }
        for n in namespaces.indices {
            let ns = Int32(n)
            if let policy = configuration.namespaces[namespaces[ns].name] {
                namespaces.setPolicy(ns, policy, defined: true)
            } else {
                namespaces.setPolicy(ns, Policy(), defined: false)
            }
            entries.setEviction(ns, namespaces.policy(ns).eviction)
        }
        rules = PushRules(configuration.push)
        noteHTTPNamespaces()
        reserveDeclaredEntries()
        if idField != configuration.idField {
            entries.changeIDField(configuration.idField)
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
        if policy.retry < 0 || policy.retry > Policy.maxRetries { throw CacheError("retry must be from 0 to \(Policy.maxRetries)") }
        if policy.backoff < 0 { throw CacheError("backoff must not be negative") }
        if let d = policy.dedupe, d < 0 { throw CacheError("dedupe must not be negative") }
    }

    private func recomputeTimes(_ ns: Int32) -> [String] {
        for slot in entries.ordered.slots(inNamespace: ns) {
            let i = Int(slot)
            let wasReported = slots[i].expiryReported && slots[i].expiresAt <= now
            let policy = namespaces.policy(ns)
            slots[i].staleAt = policy.stale.map { slots[i].storedAt.addingClamped($0) } ?? .max
            slots[i].expiresAt = slots[i].storedAt.addingClamped(policy.ttl)
            slots[i].expiryOverridden = false
            slots[i].expiryReported = wasReported && slots[i].expiresAt <= now
        }
        rebuildExpiryFIFO(ns)
        var changed = evictOverflow(ns)
        for slot in entries.ordered.slots(inNamespace: ns) where slots[Int(slot)].expiresAt <= now && !slots[Int(slot)].expiryReported {
            reportExpiry(slot)
            changed.append(slots[Int(slot)].key)
        }
        return changed
    }
}
