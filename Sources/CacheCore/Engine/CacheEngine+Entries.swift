// Entries in and out of the cache, with what each move means for the other parts: expiry
// tracking on the way in, the store's change log on the way out.

extension CacheEngine {
    /// The slot of the cached entry of `key` (in canonical form), or nil; `hash` is the key's
    /// `KeyIndex.hash` when already taken.
    ///
    /// Reads the key index and the entries' keys through stored properties: the same lookup as
    /// a method of `EntryTable` copied the whole table first (a retain and release of each of its
    /// buffers, some 900 instructions).
    /// - Complexity: O(1) expected: one hash, one bucket line, the entry's key on a hash match.
    @inline(__always)
    func entrySlot(forKey key: String, hash: UInt32? = nil) -> Int32? {
        state.entrySlot(forKey: key, hash: hash ?? KeyIndex.hash(key))
    }

    /// Stores a new entry as the most recently used and queues its expiry; `put` is the sequence
    /// number of the `put` storing it (nil for a fetched value).
    /// - Complexity: O(1) amortized, plus the size of `value` for the id index.
    func insertEntry(key: String, namespace ns: Int32, value: JSONValue, tags: [String], request: UInt64,
                     put: UInt64? = nil, hash: UInt32? = nil) -> Int32 {
        insertEntry(key: key, namespace: ns, value: StoredValue(value), tags: tags, request: request, put: put, hash: hash)
    }

    /// `insertEntry` of a value in its stored form.
    func insertEntry(key: String, namespace ns: Int32, value: StoredValue, tags: [String], request: UInt64,
                     put: UInt64? = nil, hash: UInt32? = nil) -> Int32 {
        let (slot, scan) = state.insertEntry(key: key, namespace: ns, value: value, tags: tags, request: request,
                                             put: put, hash: hash ?? KeyIndex.hash(key))
        if let scan { scheduler.insert(scan) }
        return slot
    }

    /// Removes an entry from every index and list, with its HTTP responses; the slot is reused.
    /// - Returns: the entry's key.
    /// - Complexity: O(1) plus its ids and tags.
    @discardableResult
    func removeEntry(_ slot: Int32) -> String {
        let ns = slots[Int(slot)].namespace
        let key = state.removeEntry(slot)
        dropHTTPVariants(key, ns: ns)
        return key
    }

    /// Sorts slots by printed key, for a deterministic order where a set gives none.
    /// - Complexity: O(k log k).
    func sortedByKey<S: Sequence<Int32>>(_ slots: S) -> [Int32] {
        slots.sorted { self.slots[Int($0)].key < self.slots[Int($1)].key }
    }
}
