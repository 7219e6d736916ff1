/// Everything the engine knows of one cached entry, for `explain` (why it is in its state).
public struct EntryDetails: Sendable {
    /// One change applied locally on top of the confirmed value: a mutation not yet answered, or
    /// a realtime event that arrived while one was pending.
    public struct PendingChange: Sendable {
        public var patch: JSONValue
        /// The mutation request it belongs to; nil for a realtime event.
        public var mutation: UInt64?
        /// Sent to the server (a mutation's request is in flight), or still queued (offline).
        public var sent: Bool
    }

    public var key: String
    public var state: EntryState
    public var value: JSONValue
    public var tags: [String]
    /// Entity ids embedded in the value.
    public var ids: [String]
    public var storedAt: Int64
    /// When it turns stale by age; nil when its namespace has no stale threshold.
    public var staleAt: Int64?
    /// When it expires; `Int64.max` for never.
    public var expiresAt: Int64
    /// Marked stale by an invalidation (a key, a namespace, a tag, a push, a validation).
    public var invalidated: Bool
    /// `expire` set its expiry by hand.
    public var expiryOverridden: Bool
    public var pending: [PendingChange]
    /// The fetch in flight for it, by request id.
    public var fetchInFlight: UInt64?
    /// Its place in the recency order: 1 is the most recently used of `entries`.
    public var recencyRank: Int
    public var entries: Int
    /// The server version its value reflects (SPEC §1.1 Versions); nil when it has none.
    public var version: UInt64? = nil
}

extension CacheEngine {
    /// What is known of `key`'s entry, or nil when it is not cached. Touches nothing.
    /// - Complexity: O(entries), for the recency rank.
    public func details(of key: String) -> EntryDetails? {
        let key = KeyName.canonical(key)
        guard let slot = entrySlot(forKey: key) else { return nil }
        let e = slots[Int(slot)]
        var newer = 0, live = 0
        for other in slots where other.live {
            live += 1
            if other.recency > e.recency { newer += 1 }
        }
        let pending = e.log?.items.map {
            EntryDetails.PendingChange(patch: $0.patch.document, mutation: $0.mutation, sent: $0.reachedServer != nil)
        } ?? []
        var details = EntryDetails(key: e.key, state: e.state(at: now), value: e.value, tags: e.tags, ids: entries.ids(ofSlot: slot),
                            storedAt: e.storedAt, staleAt: e.staleAt == .max ? nil : e.staleAt, expiresAt: e.expiresAt,
                            invalidated: e.invalidated, expiryOverridden: e.expiryOverridden, pending: pending,
                            fetchInFlight: requestTable.fetch(forKey: key), recencyRank: newer + 1, entries: live)
        details.version = e.version
        return details
    }
}
