/// The B14 counters: in total and per namespace slot.
///
/// `count` adds to both, except `requests`, which a bulk request or a validation counts once in
/// total and once in each namespace it involves (so the total is not the namespaces' sum).
///
/// Invariants:
/// - no counter is negative.
struct Statistics {
    private(set) var total = Stats()
    /// By namespace slot.
    private(set) var byNamespace: [Stats]

    /// Zero counters for `namespaceCount` namespaces.
    init(namespaceCount: Int = 0) {
        byNamespace = Array(repeating: Stats(), count: namespaceCount)
    }

    /// The counters of a snapshot.
    init(total: Stats, byNamespace: [Stats]) {
        self.total = total
        self.byNamespace = byNamespace
    }

    /// Adds the counters of one more namespace (the next namespace slot).
    mutating func addNamespace() { byNamespace.append(Stats()) }

    /// Adds `n` to a counter in total and in namespace `ns`.
    /// - Complexity: O(1).
    @inline(__always)
    mutating func count(_ counter: WritableKeyPath<Stats, Int>, _ ns: Int32, by n: Int = 1) {
        total[keyPath: counter] += n
        byNamespace[Int(ns)][keyPath: counter] += n
    }

    /// Counts one request in total and once in each of `namespaces`.
    mutating func countRequest(inNamespaces namespaces: some Sequence<Int32>) {
        total.requests += 1
        for ns in namespaces { byNamespace[Int(ns)].requests += 1 }
    }

    /// Zeroes every counter.
    mutating func reset() {
        total = Stats()
        for n in byNamespace.indices { byNamespace[n] = Stats() }
    }
}
