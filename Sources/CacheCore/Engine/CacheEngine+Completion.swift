// Read accessors for an interactive shell's completion index: plain reads that touch
// neither recency nor statistics nor the origin.

extension CacheEngine {
    /// Every cached key with its state and time to expiry now (`Int64.max` when it never
    /// expires), in slot order — the same state and `expiresInMs` that `peek` reports.
    /// - Complexity: O(n) in the number of slots.
    public func keySummaries() -> [(key: String, state: EntryState, expiresInMs: Int64)] {
        var out: [(key: String, state: EntryState, expiresInMs: Int64)] = []
        out.reserveCapacity(entries.count)
        for entry in slots where entry.live {
            out.append((entry.key, entry.state(at: now), entry.expiresAt == .max ? .max : entry.expiresAt - now))
        }
        return out
    }

    /// The tags at least one cached entry carries, sorted.
    /// - Complexity: O(t log t) in the number of tags.
    public func tagsInUse() -> [String] {
        entries.tagIndex.keys.sorted()
    }
}
