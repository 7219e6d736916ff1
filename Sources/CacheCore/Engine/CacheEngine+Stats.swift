// Statistics (B14) as the shell and apps read them.

extension CacheEngine {
    /// The counters in total, or of one namespace.
    public func stats(namespace: String? = nil) -> Stats {
        guard let namespace else { return statistics.total }
        return namespaces.slot(named: namespace).map { statistics.byNamespace[Int($0)] } ?? Stats()
    }

    /// Every namespace's counters, by name (namespaces that are defined, hold entries or counted anything).
    public func statsByNamespace() -> [(name: String, stats: Stats)] {
        namespaces.indices
            .filter { namespaces[Int32($0)].defined || entries.ordered.count(inNamespace: Int32($0)) > 0
                || statistics.byNamespace[$0] != Stats() }
            .map { (namespaces[Int32($0)].name, statistics.byNamespace[$0]) }
            .sorted { $0.name < $1.name }
    }

    /// Zeroes every counter.
    public func resetStats() {
        defer { if checksInvariants { checkInvariants() } }
        statistics.reset()
    }
}
