import CacheCore

/// How a replay's scratch cache picks the entry to evict when a new one would exceed `max`.
///
/// Every policy evicts before it inserts (the new entry is never the victim) and treats every
/// read of a cached entry, whatever its state, as an access.
public enum EvictionPolicy: String, Sendable, CaseIterable, Hashable {
    /// Least recently used: an access makes the entry the most recent. No ties.
    case lru
    /// First in, first out: the entry stored earliest goes; accesses change nothing. No ties.
    case fifo
    /// SIEVE: an access sets the entry's visited bit; a hand walks from the oldest entry toward
    /// the newest, clearing visited bits, and evicts the first entry without one, wrapping to
    /// the oldest at the end; it stays where the victim was. New entries are unvisited and newest.
    case sieve
    /// Least frequently used: the entry with the fewest accesses since it was stored (a new
    /// entry has 1); among equals, the one that reached that count earliest. Counts are
    /// forgotten on eviction.
    case lfu
    /// Belady's optimal policy: the entry whose next access is farthest away (never accessed
    /// again counts as farthest). Needs each request's next access (`format=oracle`).
    case optimal
}

extension EvictionPolicy {
    /// The replay policy that evicts as a namespace's `Eviction` does.
    public init(_ eviction: Eviction) {
        switch eviction {
        case .lru: self = .lru
        case .fifo: self = .fifo
        case .sieve: self = .sieve
        case .lfu: self = .lfu
        }
    }
}

/// One combination of a sweep: the policy and the namespace options it replays with.
public struct ReplayConfiguration: Sendable, Hashable {
    public var policy: EvictionPolicy
    /// At most this many entries (at least 1); nil: no limit.
    public var max: Int?
    /// Entries expire this long after they are stored (ms); nil: never.
    public var ttl: Int64?
    /// Entries turn stale this long after they are stored (ms); nil: never stale by age.
    public var stale: Int64?

    public init(policy: EvictionPolicy = .lru, max: Int?, ttl: Int64?, stale: Int64?) {
        self.policy = policy; self.max = max; self.ttl = ttl; self.stale = stale
    }
}

/// What one combination did: the engine's counters (SPEC B14) for a get-only workload.
public struct ReplayCounters: Sendable, Hashable {
    /// Requests sent to the server: misses plus background refreshes.
    public var requests = 0
    public var hits = 0
    public var staleHits = 0
    public var misses = 0
    public var evictions = 0
    public var expirations = 0

    public init(requests: Int = 0, hits: Int = 0, staleHits: Int = 0, misses: Int = 0, evictions: Int = 0, expirations: Int = 0) {
        self.requests = requests; self.hits = hits; self.staleHits = staleHits
        self.misses = misses; self.evictions = evictions; self.expirations = expirations
    }

    /// `(hits + stale_hits) / (hits + stale_hits + misses)`, 0 when there were no reads (as `stats`).
    public var hitRatio: Double {
        let served = hits + staleHits
        let reads = served + misses
        return reads == 0 ? 0 : Double(served) / Double(reads)
    }
}

/// One request of a trace: a `get` at `time` of the key whose id is `id`.
public struct TraceRequest: Sendable, Equatable {
    /// Virtual ms since the trace's first request.
    public var time: Int64
    /// The key's id: its number in an oracle trace, else a 64-bit hash of its bytes.
    public var id: UInt64
    /// The request number (from 0) of the next request for the same key; `Int64.max` when none
    /// or unknown.
    public var nextAccess: Int64

    public init(time: Int64, id: UInt64, nextAccess: Int64 = .max) {
        self.time = time; self.id = id; self.nextAccess = nextAccess
    }
}

/// A replay stopped: a bad trace (`FILE:LINE: error: ...`), an unreadable file, an interrupt.
public struct ReplayError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String?
    public var line: Int?
    public var message: String

    public init(file: String? = nil, line: Int? = nil, _ message: String) {
        self.file = file; self.line = line; self.message = message
    }

    public var description: String {
        switch (file, line) {
        case (let file?, let line?): "\(file):\(line): error: \(message)"
        case (let file?, nil): "\(file): error: \(message)"
        default: "error: \(message)"
        }
    }
}
