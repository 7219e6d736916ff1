/// The cached entries and the ways to find them: the slots with their recency lists
/// (`OrderedSlots`), the key index, the id index (entity ids embedded in values, B8) and the tag
/// index. A value type held in one stored property of the engine and changed in place.
///
/// Invariants (`invariantViolations()`):
/// - those of `OrderedSlots` (free slots, recency lists, recency stamps) and, while kept, the
///   store's row ids (`EntrySlots.rowIDViolations`);
/// - the key index maps each live entry's key, in canonical form, to its slot, and nothing else;
///   each live entry keeps its key's hash (`Entry.keyHash`);
/// - each live entry's value is canonical text (it reads back and prints as it is), and the id
///   index, once built (before, the one a first read would build), maps each entity id to
///   exactly the live slots whose value embeds it under `idField` (one slot inline, more in a set
///   of two or more; see `IDIndex`);
/// - the tag index maps each tag to exactly the live slots carrying it, never to an empty set;
/// - a dead slot holds no value, tags or mutation log; a live entry's mutation log, when it has
///   one, has a mutation pending; no entry keeps an out-of-line record of usual values only.
///
/// An entry's ids are not kept: they are read off its value's text when it is indexed and again
/// when it is unindexed (a value does not change in between but through `setValue`).
///
/// The fields the indexes depend on (`key`, `namespace`, `live`, `stored`, `tags`) change
/// only through its methods; the engine writes an entry's other fields through `slots`.
///
/// The engine reads it through stored properties (`keyIndex`, `ordered.entries`) and mutating
/// methods (`slots(embedding:)`) rather than non-mutating methods: such a method called on a
/// value held in a class's property may copy the whole value first (a retain and release of each
/// of its buffers), which made a cache hit run a fifth more instructions (and a key lookup as a
/// method, 900 more).
struct EntryTable {
    /// The entries by slot and their recency lists.
    private(set) var ordered: OrderedSlots
    /// Key → slot of every live entry, comparing keys against the entries' own (`CacheEngine.entrySlot(forKey:)`).
    /// Lookup is O(1) (one hash).
    private(set) var keyIndex = KeyIndex()
    /// Entity id → slots of the live entries whose value embeds it (B8: an entity patch never
    /// scans); nil until something reads it. Only entity events and mutations read it, which most
    /// sessions never run: until then a put, a replace, a removal or a store's open reads no
    /// value for ids. The first read builds it from every live slot (`slots(embedding:)`, `buildIDIndex()`), and from
    /// then on every change keeps it in step. A new table (a restore, a store's open) starts
    /// without it; changing the id field drops it.
    private(set) var idIndex: IDIndex?
    /// Tag → slots of the live entries carrying it.
    private(set) var tagIndex: [String: Set<Int32>] = [:]
    /// The field holding an entity's id in values (B8), which the id index is built on.
    var idField: String { idKey.name }
    private var idKey: StoredValue.IDField

    /// An empty table with recency lists for `namespaceCount` namespaces, room for `capacity` entries.
    /// - Complexity: O(1); reserving room is O(capacity).
    init(idField: String = "id", namespaceCount: Int = 0, capacity: Int = 0) {
        idKey = StoredValue.IDField(idField)
        ordered = OrderedSlots(namespaceCount: namespaceCount)
        if capacity > 0 {
            ordered.reserveCapacity(capacity)
            keyIndex.reserveCapacity(capacity)
        }
    }

    /// Makes room for `n` entries in the slots, their places and the global recency queue (not
    /// in the key index: its buckets are written when made, so room it never filled would be
    /// memory in use). Room reserved and not yet written takes no memory once it is a mapping of
    /// its own (128 KiB and more, `Sources/CMalloc`); below that it is heap.
    /// - Complexity: O(count) when the storage moves, else O(1).
    mutating func reserveSlots(_ n: Int) {
        ordered.reserveCapacity(n)
    }

    /// The entries by slot; a write to a field the indexes depend on must go through a method.
    var slots: EntrySlots {
        _read { yield ordered.entries }
        _modify { yield &ordered.entries }
    }

    /// The number of live entries.
    var count: Int { keyIndex.count }

    /// The slot of the live entry whose key (in canonical form) is `key`, or nil. The engine
    /// looks keys up through its stored property instead (`CacheEngine.entrySlot(forKey:)`),
    /// which does not copy the table.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func slot(forKey key: String) -> Int32? {
        slot(forKey: key, hash: KeyIndex.hash(key))
    }

    /// `slot(forKey:)` with the key's hash (`KeyIndex.hash`) already taken.
    @inline(__always)
    func slot(forKey key: String, hash: UInt32) -> Int32? {
        keyIndex.find(hash: hash) { ordered.entries[Int($0)].key == key }
    }

    /// Makes room for the recency list of one more namespace (the next namespace slot).
    /// - Complexity: O(1) amortized.
    mutating func addNamespace() { ordered.addNamespace() }

    // MARK: Entries in and out

    /// Stores an entry as the most recently used and indexes its key, tags and (once the id
    /// index is built) ids.
    /// - Complexity: O(1) amortized, plus its tags, plus the size of its value once the id index is built.
    mutating func insert(_ entry: consuming Entry) -> Int32 {
        let hash = KeyIndex.hash(entry.key)
        return insert(consume entry, hash: hash)
    }

    /// `insert(_:)` with the key's hash (`KeyIndex.hash`) already taken; the key must be absent.
    /// The entry is moved into its slot (a caller passing its last use of it copies nothing) and
    /// given the hash there (changed before the move, it would be copied).
    mutating func insert(_ entry: consuming Entry, hash: UInt32) -> Int32 {
        let stored: StoredValue? = idIndex != nil && entry.stored.mayEmbedIDs ? entry.stored : nil
        let tags = entry.tags
        let slot = ordered.insert(consume entry)
        keyIndex.insert(hash: hash, slot: slot)
        stored?.forEachEntityIDKey(idKey) { idIndex?.insert(slot, for: $0) }
        for tag in tags { tagIndex[tag, default: []].insert(slot) }
        return slot
    }

    /// Removes an entry from the indexes and both recency lists; the slot is reused.
    /// - Returns: the entry's key.
    /// - Complexity: O(1) plus its tags, plus the size of its value once the id index is built.
    mutating func remove(_ slot: Int32) -> String {
        // The key is hashed again (the record keeps no hash: 4 bytes an entry, against some 20
        // instructions for a short key).
        remove(slot, hash: keyIndex.hash(ordered.entries[Int(slot)].key))
    }

    /// `remove(_:)` with the hash of the entry's key (`KeyIndex.hash`) already taken.
    @inline(__always)
    mutating func remove(_ slot: Int32, hash: UInt32) -> String {
        if idIndex != nil && ordered.entries[Int(slot)].stored.mayEmbedIDs {
            let stored = ordered.entries[Int(slot)].stored
            stored.forEachEntityIDKey(idKey) { idIndex?.remove(slot, for: $0) }
        }
        let removed = ordered.remove(slot)
        keyIndex.remove(hash: hash, slot: slot)
        for tag in removed.tags { Self.remove(slot, from: &tagIndex, at: tag) }
        return removed.key
    }

    /// Replaces the least recent entry of an LRU namespace (`victim`, whose key's hash is
    /// `victimHash`) by a new entry of the same namespace whose key is absent (its hash `hash`),
    /// in the victim's slot: the indexes and lists end as after `remove(victim, hash:
    /// victimHash)` and `insert(entry, hash: hash)`, but for the slot the new entry is in (see
    /// `OrderedSlots.replace`).
    ///
    /// The victim's key leaves the key index before the new one comes (with the key index at its
    /// size limit, an insertion first would grow it for a moment's extra key).
    /// - Returns: the victim's key.
    /// - Complexity: O(1) amortized, plus the tags of both, plus the size of both values once the
    ///   id index is built.
    @inline(__always)
    mutating func replace(_ victim: Int32, victimHash: UInt32, with entry: consuming Entry, hash: UInt32) -> String {
        keyIndex.remove(hash: victimHash, slot: victim)
        if idIndex != nil && ordered.entries[Int(victim)].stored.mayEmbedIDs {
            let stored = ordered.entries[Int(victim)].stored
            stored.forEachEntityIDKey(idKey) { idIndex?.remove(victim, for: $0) }
        }
        let stored: StoredValue? = idIndex != nil && entry.stored.mayEmbedIDs ? entry.stored : nil
        let tags = entry.tags
        let removed = ordered.replace(victim, with: consume entry)
        keyIndex.insert(hash: hash, slot: victim)
        // The victim's tags go before the new entry's come: a tag of both keeps the slot.
        for tag in removed.tags { Self.remove(victim, from: &tagIndex, at: tag) }
        stored?.forEachEntityIDKey(idKey) { idIndex?.insert(victim, for: $0) }
        for tag in tags { tagIndex[tag, default: []].insert(victim) }
        return removed.key
    }

    /// Makes an entry the most recently used, globally and in its namespace.
    /// - Complexity: O(1).
    @inline(__always)
    mutating func touch(_ slot: Int32) { ordered.touch(slot) }

    /// `touch` of an entry whose namespace slot, `ns`, the caller has read.
    @inline(__always)
    mutating func touch(_ slot: Int32, namespace ns: Int32) { ordered.touch(slot, namespace: ns) }

    /// The entry to evict from a namespace over `limit` entries, by its policy, sparing the entry
    /// just stored unless it is the only one (see `OrderedSlots.victim`).
    /// - Complexity: O(1) (SIEVE: amortized).
    mutating func victim(inNamespace ns: Int32, over limit: Int, sparing: Int32 = -1) -> Int32? {
        ordered.victim(inNamespace: ns, over: limit, sparing: sparing)
    }

    /// Changes a namespace's eviction policy; its entries start it in recency order.
    /// - Complexity: O(k log k) for k entries in the namespace.
    mutating func setEviction(_ ns: Int32, _ eviction: Eviction) { ordered.setEviction(ns, eviction) }

    /// Rebuilds a namespace's eviction order from saved ranks (see `OrderedSlots.restoreOrder`).
    mutating func restoreOrder(_ ns: Int32, _ eviction: Eviction, ranks: [Int32: OrderedSlots.Rank], hand: Int32, nextRank: UInt64) {
        ordered.restoreOrder(ns, eviction, ranks: ranks, hand: hand, nextRank: nextRank)
    }

    /// Replaces an entry's value, keeping the id index in step (untouched when the ids stay).
    /// - Complexity: O(size of the old and new value) once the id index is built; O(1) before.
    mutating func setValue(_ slot: Int32, _ value: StoredValue) {
        guard idIndex != nil else {
            ordered.entries[Int(slot)].stored = value
            return
        }
        let old = ordered.entries[Int(slot)].stored
        ordered.entries[Int(slot)].stored = value
        let (oldFirst, oldCount) = Self.firstID(of: old, idKey)
        let (newFirst, newCount) = Self.firstID(of: value, idKey)
        // The commonest change keeps the value's one id (or none): the index stays as it is.
        if oldCount == newCount && oldCount <= 1 && oldFirst == newFirst { return }
        // Else every old id goes and every new one comes (an id in both is taken off and
        // listed again), with no list of ids made to compare.
        if oldCount > 0 { old.forEachEntityIDKey(idKey) { idIndex?.remove(slot, for: $0) } }
        if newCount > 0 { value.forEachEntityIDKey(idKey) { idIndex?.insert(slot, for: $0) } }
    }

    /// The first id `value` embeds under `field` and how many it embeds (each time it is
    /// embedded), with no array made.
    /// - Complexity: O(size of the value).
    private static func firstID(of value: StoredValue, _ field: StoredValue.IDField) -> (IDIndex.Key?, Int) {
        guard value.mayEmbedIDs else { return (nil, 0) }
        var first: IDIndex.Key?
        var count = 0
        value.forEachEntityIDKey(field) { key in
            if count == 0 { first = key }
            count += 1
        }
        return (first, count)
    }

    /// `setValue` of a tree, stored as its canonical text.
    mutating func setValue(_ slot: Int32, _ value: JSONValue) {
        setValue(slot, StoredValue(value))
    }

    /// The entity ids the value of the entry in `slot` embeds, sorted.
    /// - Complexity: O(size of the value).
    func ids(ofSlot slot: Int32) -> [String] {
        ordered.entries[Int(slot)].stored.entityIDs(idKey)
    }

    /// Replaces an entry's tags, keeping the tag index in step.
    /// - Complexity: O(old and new tags).
    mutating func setTags(_ slot: Int32, _ tags: [String]) {
        for tag in ordered.entries[Int(slot)].tags { Self.remove(slot, from: &tagIndex, at: tag) }
        ordered.entries[Int(slot)].tags = tags
        for tag in tags { tagIndex[tag, default: []].insert(slot) }
    }

    /// Changes the id field; the id index, keyed by the old one, is dropped (the next read
    /// builds it on the new field).
    /// - Complexity: O(1).
    mutating func changeIDField(_ field: String) {
        idKey = StoredValue.IDField(field)
        idIndex = nil
    }

    // MARK: The id index, built on first use

    /// The live slots whose value embeds entity `id`, in no particular order; empty when none
    /// does. Builds the id index first if it is not built yet.
    /// - Complexity: O(1) plus the slots returned, once the index is built; its first read is
    ///   O(total size of the values).
    mutating func slots(embedding id: String) -> [Int32] {
        buildIDIndex()
        return idIndex![id]
    }

    /// Builds the id index if it is not built yet (see `idIndex`).
    /// - Complexity: O(1) once built; the first call O(n + total size of the values) for n slots.
    mutating func buildIDIndex() {
        if idIndex == nil { idIndex = freshIDIndex() }
    }

    /// An id index of every live slot's value, in one pass over the slots.
    /// - Complexity: O(n + total size of the values) for n slots.
    private func freshIDIndex() -> IDIndex {
        var index = IDIndex()
        let entries = ordered.entries
        for i in entries.indices where entries[i].live && entries[i].stored.mayEmbedIDs {
            let slot = Int32(i)
            entries[i].stored.forEachEntityIDKey(idKey) { index.insert(slot, for: $0) }
        }
        return index
    }

    /// Replaces the recency stamps of slots 0..<k (entries just inserted in recency order) with a
    /// store's, so rows not rewritten stay in order with new ones.
    /// - Complexity: O(k) for k stamps.
    mutating func restoreRecencies(_ stamps: [UInt64]) {
        ordered.restoreRecencies(stamps)
    }

    /// `restoreRecencies` of entries inserted in another order: each slot's stamp given with
    /// it, least recent first (the stamps increasing), as `order` lists them.
    /// - Complexity: O(k) for k slots.
    mutating func restoreRecencies<Order: Sequence<(slot: Int32, stamp: UInt64)>>(inOrder order: Order) {
        ordered.restoreRecencies(inOrder: order)
    }

    private static func remove(_ slot: Int32, from index: inout [String: Set<Int32>], at name: String) {
        guard var set = index.removeValue(forKey: name) else { return }
        set.remove(slot)
        if !set.isEmpty { index[name] = set }
    }
}

// MARK: - Invariants

extension EntryTable {
    /// What is wrong with the table, one message per broken rule (see the type's invariants);
    /// empty when it is sound.
    /// - Complexity: O(n + total size of the values) for n slots.
    func invariantViolations() -> [String] {
        var v = ordered.invariantViolations()
        let entries = ordered.entries
        // Not built yet: the index a first read would build is checked instead, leaving the
        // table as it is (a check that built it would hide a change not kept in step after).
        let idIndex = idIndex ?? freshIDIndex()
        v += entries.rowIDViolations()
        var live = 0
        for i in entries.indices {
            let e = entries[i]
            let slot = Int32(i)
            if e.hasIdleColdRecord { v.append("entry table: slot \(i) keeps an out-of-line record of usual values only") }
            guard e.live else {
                if e.stored != .null || !e.tags.isEmpty || e.log != nil {
                    v.append("entry table: dead slot \(i) still holds a value, tags or a mutation log")
                }
                continue
            }
            live += 1
            let found = keyIndex.find(hash: KeyIndex.hash(e.key)) { entries[Int($0)].key == e.key }
            if found != slot {
                v.append("key index: \(e.key) maps to slot \(found.map(String.init) ?? "none"), its entry is in slot \(i)")
            }
            if KeyName.canonical(e.key) != e.key { v.append("entry table: key \(e.key) is not in its printed form") }
            let tree = e.stored.json
            if case .deep = e.stored.storage {} else if tree.compactText != e.stored.text {
                v.append("entry table: the value of \(e.key) is not in canonical form: \(e.stored.text)")
            }
            var embedded = Set<String>()
            tree.collectEntityIDs(idField: idField, into: &embedded)
            let ids = ids(ofSlot: slot)
            if ids != embedded.sorted() {
                v.append("id index: \(e.key) reads as embedding ids \(ids), its value embeds \(embedded.sorted())")
            }
            for id in ids where !idIndex.contains(slot, for: id) {
                v.append("id index: id \(id) of \(e.key) does not lead to slot \(i)")
            }
            for tag in e.tags where tagIndex[tag]?.contains(slot) != true {
                v.append("tag index: tag \(tag) of \(e.key) does not lead to slot \(i)")
            }
            if let log = e.log, log.pending.isEmpty {
                v.append("entry table: \(e.key) has a mutation log with no mutation pending")
            }
        }
        if keyIndex.count != live { v.append("key index: holds \(keyIndex.count) keys, \(live) entries are live") }
        v += keyIndex.structureViolations()
        for (hash, slot) in keyIndex.contents() {
            guard slot >= 0, Int(slot) < entries.count, entries[Int(slot)].live else {
                v.append("key index: a key maps to slot \(slot), which holds no live entry")
                continue
            }
            if KeyIndex.hash(entries[Int(slot)].key) != hash {
                v.append("key index: a key maps to slot \(slot), which holds \(entries[Int(slot)].key) of another hash")
            }
        }
        v += idIndex.formViolations()
        Self.checkSetIndex(Dictionary(idIndex.all.map { ($0.id, Set($0.slots)) }, uniquingKeysWith: { a, _ in a }),
                           "id index", entries, listed: { e, id in e.stored.entityIDs(idKey).contains(id) }, into: &v)
        Self.checkSetIndex(tagIndex, "tag index", entries, listed: { $0.tags.contains($1) }, into: &v)
        return v
    }

    /// Checks that every set of an index is non-empty and names live slots that list its name.
    private static func checkSetIndex(_ index: [String: Set<Int32>], _ name: String, _ entries: EntrySlots,
                                      listed: (Entry, String) -> Bool, into v: inout [String]) {
        for (item, set) in index {
            if set.isEmpty { v.append("\(name): \(item) leads to no slot") }
            for slot in set {
                guard slot >= 0, Int(slot) < entries.count, entries[Int(slot)].live else {
                    v.append("\(name): \(item) leads to slot \(slot), which holds no live entry")
                    continue
                }
                if !listed(entries[Int(slot)], item) {
                    v.append("\(name): \(item) leads to \(entries[Int(slot)].key), which does not list it")
                }
            }
        }
    }

    /// Stops the process with the violations, if any (the swift-collections `_checkInvariants` habit).
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "EntryTable invariants broken:\n" + violations.joined(separator: "\n"))
    }

    /// Test hook: replaces an entry's value behind the id index's back, as a bug would.
    mutating func testingReplaceStored(_ slot: Int32, _ value: StoredValue) {
        ordered.entries[Int(slot)].stored = value
    }

    /// Test hook: makes the key index send `key` to `slot` (or forget it when nil), as a bug would.
    mutating func testingCorruptKeyIndex(_ key: String, slot: Int32?) {
        let hash = KeyIndex.hash(key)
        if let old = self.slot(forKey: key, hash: hash) { keyIndex.remove(hash: hash, slot: old) }
        if let slot { keyIndex.testingPlace(hash: hash, slot: slot) }
    }
}
