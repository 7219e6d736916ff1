/// The B14 counters, for one namespace or in total.
public struct Stats: Sendable, Equatable {
    public var hits = 0
    public var staleHits = 0
    public var misses = 0
    public var requests = 0
    public var joined = 0
    public var refreshes = 0
    public var refreshFailures = 0
    public var fetchFailures = 0
    public var evictions = 0
    public var expirations = 0
    public var invalidations = 0
    public var rollbacks = 0

    public init() {}

    /// `(hits + stale_hits) / (hits + stale_hits + misses)`, 0 when there were no reads.
    public var hitRatio: Double {
        let served = hits + staleHits
        let reads = served + misses
        return reads == 0 ? 0 : Double(served) / Double(reads)
    }

    /// The counters by their SPEC names, in a fixed order.
    public var fields: [(name: String, value: Int)] {
        [("hits", hits), ("stale_hits", staleHits), ("misses", misses), ("requests", requests),
         ("joined", joined), ("refreshes", refreshes), ("refresh_failures", refreshFailures),
         ("fetch_failures", fetchFailures), ("evictions", evictions), ("expirations", expirations),
         ("invalidations", invalidations), ("rollbacks", rollbacks)]
    }
}
