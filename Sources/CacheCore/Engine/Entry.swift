/// A cached entry, stored in a slot of an `EntryStore` (inside the engine's `EntryTable`), which
/// also links it into two recency lists (global and per namespace) by slot index.
///
/// What a read needs (key, value, tags, times, state flags) comes first, so a read of a cached
/// entry touches as few cache lines as it can.
struct Entry {
    var key: String
    var value: JSONValue
    var tags: [String]
    var storedAt: Int64
    /// `Int64.max` when the namespace has no stale threshold.
    var staleAt: Int64
    var expiresAt: Int64
    var namespace: Int32
    var invalidated = false
    var live = true
    /// `expire` set `expiresAt` by hand; `ns` recomputation drops that.
    var expiryOverridden = false
    /// The expiry has been counted and reported; reset by a new store.
    var expiryReported = false
    /// Bumped by every store, so old expiry records of this slot are recognised as dead.
    var generation: UInt32 = 0
    /// Entity ids embedded in `value` (kept to update the id index when the value changes).
    var ids: [String]
    /// Sequence number of the store that set `storedAt`: orders expiries due at the same instant.
    var storedSeq: UInt64 = 0
    /// Sequence number of the scheduler item that reports an `expire in=` override (orders it among items due then).
    var expirySeq: UInt64 = 0
    /// Sequence number of the last local write (`put` or event) — B12.
    var lastLocalWrite: UInt64 = 0
    /// Sequence number of the last `put` (while mutations are pending, events join the log instead of discarding).
    var lastPut: UInt64 = 0
    /// Sequence number of the request (or put) whose value is stored now — B12.
    var storedRequest: UInt64 = 0
    /// Pending optimistic mutations: the confirmed base plus a log (B11).
    var log: MutationLog?
    /// Recency stamp: larger is more recent (the order of the recency lists, kept by a store).
    var recency: UInt64 = 0
    /// Written to since a store last took the changes (see `EntrySlots`).
    var marked = false

    init(key: String, namespace: Int32, value: JSONValue, tags: [String], ids: [String],
         storedAt: Int64, staleAt: Int64, expiresAt: Int64) {
        self.key = key
        self.value = value
        self.tags = tags
        self.storedAt = storedAt
        self.staleAt = staleAt
        self.expiresAt = expiresAt
        self.namespace = namespace
        self.ids = ids
    }

    func state(at now: Int64) -> EntryState {
        if now >= expiresAt { return .expired }
        if invalidated || now >= staleAt { return .stale }
        return .fresh
    }

    /// What a read of this entry returns at `now` (`pending` left false for the caller to set).
    func readResult(at now: Int64, source: ValueSource) -> ReadResult {
        ReadResult(key: key, state: state(at: now), value: value, ageMs: now - storedAt,
                   expiresInMs: expiresAt == .max ? .max : expiresAt - now, tags: tags, source: source)
    }

    /// Derives the stale and expiry times from `storedAt` and `policy`, dropping an `expire`
    /// override and a reported expiry.
    /// - Returns: the record that queues the expiry of the entry in `slot`.
    mutating func applyTimes(_ policy: Policy, slot: Int32) -> ExpiryRecord {
        staleAt = policy.stale.map { storedAt.addingClamped($0) } ?? .max
        expiresAt = storedAt.addingClamped(policy.ttl)
        expiryOverridden = false
        expiryReported = false
        return ExpiryRecord(time: expiresAt, seq: storedSeq, slot: slot, generation: generation)
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
        /// The value shown just before the mutation was applied: kept only when its namespace has
        /// `rollback-to-snapshot` on, for the naive rollback.
        var before: JSONValue? = nil
        /// Not applied any more: a naive rollback put back the value shown before an earlier
        /// mutation, dropping this one's effect; it is kept for its own answer (and rollback).
        var inert = false
    }
    var base: JSONValue
    /// Sequence number of the request (or put) whose value is the base.
    var baseSeq: UInt64
    var items: [Item] = []
    /// Mutations of this entry not yet answered (sent or queued).
    var pending: Set<UInt64> = []
}
