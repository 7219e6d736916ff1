/// The B14 counters: in total and per namespace slot.
///
/// `count` adds to both, except `requests`, which a bulk request or a validation counts once in
/// total and once in each namespace it involves (so the total is not the namespaces' sum).
///
/// Invariants (`invariantViolations()`):
/// - no counter is negative.
struct Statistics {
    private(set) var total = Stats()
    /// By namespace slot. Short of the hits `countHit` has not added yet (`unfoldedHits`): read
    /// through `CacheEngine.statistics`, which adds them first.
    private(set) var byNamespace: [Stats]
    /// Hits of namespace slot `hitNamespace` counted in `total` by `countHit` but not yet added to
    /// `byNamespace` (`foldHits` adds them). A `get` hit counts in a field of this value, not in
    /// the array, whose write was a uniqueness check and a bounds check (some 15 instructions)
    /// on every hit; the hits of a run of reads of one namespace are added to it once.
    private(set) var unfoldedHits = 0
    private var hitNamespace: Int32 = -1

    /// Zero counters for `namespaceCount` namespaces.
    /// - Complexity: O(k) for k namespaces.
    init(namespaceCount: Int = 0) {
        byNamespace = Array(repeating: Stats(), count: namespaceCount)
    }

    /// The counters of a snapshot.
    /// - Complexity: O(1).
    init(total: Stats, byNamespace: [Stats]) {
        self.total = total
        self.byNamespace = byNamespace
    }

    /// Adds the counters of one more namespace (the next namespace slot).
    /// - Complexity: O(1) amortized.
    mutating func addNamespace() { byNamespace.append(Stats()) }

    /// Counts a hit of namespace `ns`, as `count(\.hits, ns)` does; its namespace's counter is
    /// added to later (`foldHits`).
    /// - Complexity: O(1).
    @inline(__always)
    mutating func countHit(_ ns: Int32) {
        total.hits += 1
        if ns == hitNamespace {
            unfoldedHits += 1
        } else {
            startHits(ns)
        }
    }

    /// Adds the unfolded hits to their namespace's counter, then holds one hit of `ns`.
    @inline(never)
    private mutating func startHits(_ ns: Int32) {
        foldHits()
        hitNamespace = ns
        unfoldedHits = 1
    }

    /// Adds the hits counted by `countHit` to their namespace's counter.
    /// - Complexity: O(1).
    mutating func foldHits() {
        guard unfoldedHits != 0 else { return }
        byNamespace[Int(hitNamespace)].hits += unfoldedHits
        unfoldedHits = 0
    }

    /// Adds `n` to a counter in total and in namespace `ns`.
    /// - Complexity: O(1).
    @inline(__always)
    mutating func count(_ counter: WritableKeyPath<Stats, Int>, _ ns: Int32, by n: Int = 1) {
        total[keyPath: counter] += n
        byNamespace[Int(ns)][keyPath: counter] += n
    }

    /// Counts one request in total and once in each of `namespaces`.
    /// - Complexity: O(namespaces given).
    mutating func countRequest(inNamespaces namespaces: some Sequence<Int32>) {
        total.requests += 1
        for ns in namespaces { byNamespace[Int(ns)].requests += 1 }
    }

    /// Zeroes every counter.
    /// - Complexity: O(k) for k namespaces.
    mutating func reset() {
        unfoldedHits = 0
        total = Stats()
        for n in byNamespace.indices { byNamespace[n] = Stats() }
    }
}

// MARK: - Invariants

extension Statistics {
    /// What is wrong with the counters, one message per broken rule (see the type's invariants);
    /// empty when they are sound.
    /// - Complexity: O(k) for k namespaces.
    func invariantViolations() -> [String] {
        var v: [String] = []
        if Self.hasNegative(total) {
            for (name, value) in total.fields where value < 0 { v.append("statistics: total \(name) is \(value)") }
        }
        for ns in byNamespace.indices where Self.hasNegative(byNamespace[ns]) {
            for (name, value) in byNamespace[ns].fields where value < 0 {
                v.append("statistics: \(name) of namespace slot \(ns) is \(value)")
            }
        }
        return v
    }

    /// Whether a counter is negative (without building `fields`, which a check after every
    /// operation would pay for).
    private static func hasNegative(_ s: Stats) -> Bool {
        s.hits < 0 || s.staleHits < 0 || s.misses < 0 || s.requests < 0 || s.joined < 0 || s.refreshes < 0
            || s.refreshFailures < 0 || s.fetchFailures < 0 || s.evictions < 0 || s.expirations < 0
            || s.invalidations < 0 || s.rollbacks < 0
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "Statistics invariants broken:\n" + violations.joined(separator: "\n"))
    }
}
