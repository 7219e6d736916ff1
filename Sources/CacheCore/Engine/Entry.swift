/// A cached entry, stored in a slot of the engine's slot array and linked into two
/// recency lists (global and per namespace) by slot index.
struct Entry {
    var key: String
    var namespace: Int32
    var value: JSONValue
    var tags: [String]
    /// Entity ids embedded in `value` (kept to update the id index when the value changes).
    var ids: [String]
    var storedAt: Int64
    /// Sequence number of the store that set `storedAt`: orders expiries due at the same instant.
    var storedSeq: UInt64 = 0
    /// `Int64.max` when the namespace has no stale threshold.
    var staleAt: Int64
    var expiresAt: Int64
    /// `expire` set `expiresAt` by hand; `ns` recomputation drops that.
    var expiryOverridden = false
    /// Sequence number of the scheduler item that reports an `expire in=` override (orders it among items due then).
    var expirySeq: UInt64 = 0
    var invalidated = false
    /// The expiry has been counted and reported; reset by a new store.
    var expiryReported = false
    /// Sequence number of the last local write (`put` or event) — B12.
    var lastLocalWrite: UInt64 = 0
    /// Sequence number of the last `put` (while mutations are pending, events join the log instead of discarding).
    var lastPut: UInt64 = 0
    /// Sequence number of the request (or put) whose value is stored now — B12.
    var storedRequest: UInt64 = 0
    /// Bumped by every store, so old expiry records of this slot are recognised as dead.
    var generation: UInt32 = 0
    /// Pending optimistic mutations: the confirmed base plus a log (B11).
    var log: MutationLog?

    var globalPrev: Int32 = -1
    var globalNext: Int32 = -1
    var nsPrev: Int32 = -1
    var nsNext: Int32 = -1
    var live = true
    /// Recency stamp: larger is more recent (the order of the recency lists, kept by a store).
    var recency: UInt64 = 0
    /// Written to since a store last took the changes (see `EntrySlots`).
    var marked = false

    func state(at now: Int64) -> EntryState {
        if now >= expiresAt { return .expired }
        if invalidated || now >= staleAt { return .stale }
        return .fresh
    }
}

/// An entry with mutations in flight: its confirmed base plus pending mutations and realtime
/// patches in arrival order (SPEC §1.1, B11).
struct MutationLog {
    struct Item {
        /// Sequence number at which it was applied locally.
        var seq: UInt64
        var patch: Patch
        var entityID: String?
        /// The mutation it belongs to; nil for a realtime event.
        var mutation: UInt64?
        /// When it reached the server: an event's own seq, a mutation's request seq; nil while queued.
        var reachedServer: UInt64?
    }
    var base: JSONValue
    /// Sequence number of the request (or put) whose value is the base.
    var baseSeq: UInt64
    var items: [Item] = []
    /// Mutations of this entry not yet answered (sent or queued).
    var pending: Set<UInt64> = []
}

/// A namespace: its policy, its recency list, its expiry FIFO and its counters.
struct NamespaceState {
    var name: String
    var policy: Policy
    /// Defined by `ns` or a configuration (else used implicitly with the default policy).
    var defined: Bool
    var head: Int32 = -1
    var tail: Int32 = -1
    var count = 0
    /// Expiry records in expiry order (entries of a namespace share a ttl); dead ones are skipped lazily.
    var expiryFIFO = Deque<ExpiryRecord>()
    /// Bumped when the FIFO is rebuilt, so a scheduled scan of the old one is ignored.
    var expiryEpoch: UInt32 = 0
    var scanScheduled = false
    var stats = Stats()
}

struct ExpiryRecord {
    var time: Int64
    var seq: UInt64
    var slot: Int32
    var generation: UInt32
}

import DequeModule
