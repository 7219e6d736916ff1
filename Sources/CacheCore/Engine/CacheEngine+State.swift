// The parts of the engine's state that a `get` hit and a `put` change, in one value, and the
// steps of those operations written as its methods.

/// The clock, the sequence number, the entries, the namespaces, the expiry FIFOs, the counters
/// and the store's change log: the state a `get` hit and a `put` read and change, held in one
/// stored property of the engine (`CacheEngine.state`; the engine's `now`, `seq`, `entries`,
/// `namespaces`, `expiry`, `statistics` and `changes` read and write through it).
///
/// Each access to a stored property of a class is checked for exclusivity at run time (about 80
/// instructions: `swift_beginAccess` and its end); a `put` that evicts reached these six parts
/// through some 23 such accesses. A mutating method of this value is one access of the engine's
/// property, and inside it the parts are fields of a struct, whose exclusivity the compiler
/// checks statically, for nothing at run time. So the hot operations are written here, each
/// called once per operation.
struct EngineState {
    /// Current virtual time, ms since the Unix epoch.
    var now: Int64
    /// The global sequence number of the last event (SPEC §1.1).
    var seq: UInt64 = 0
    /// The entries: slots, recency lists, key, id and tag indexes.
    var entries = EntryTable()
    /// The namespaces by slot and name, with their policies.
    var namespaces = NamespaceTable()
    /// The expiry FIFO of each namespace.
    var expiry = ExpiryQueues()
    /// The counters, in total and per namespace.
    var statistics = Statistics()
    /// Whether the engine's request table holds a fetch in flight or a request by key: when
    /// not, no key has a fetch in flight or a response to void (kept by the engine).
    var requestsByKey = false
    /// What changed since a store last took the changes; nil when no store tracks them.
    var changes: ChangeLog?
    /// The keys the last `put` changed, which it returns: kept so that the next put reuses the
    /// array's buffer when its caller has let go of it (as a caller that ignores the result, or
    /// reads it and drops it, has), instead of allocating one per put. A caller that keeps the
    /// array keeps its own copy: the next put, finding the buffer shared, takes a new one.
    private(set) var changedKeys: [String] = []

    init(now: Int64) {
        self.now = now
        // Room for a put's key and the one it evicts from a full namespace.
        changedKeys.reserveCapacity(2)
    }

    @inline(__always)
    mutating func nextSeq() -> UInt64 {
        seq &+= 1
        return seq
    }

    /// The slot of the cached entry of `key` (canonical form) whose `KeyIndex.hash` is `hash`, or nil.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func entrySlot(forKey key: String, hash: UInt32) -> Int32? {
        entries.keyIndex.find(hash: hash) { entries.ordered.entries[Int($0)].key == key }
    }

    // MARK: Namespaces

    /// The namespace slot for a name, created with the default policy when new.
    mutating func namespaceSlot(named name: Substring) -> Int32 {
        let (slot, created) = namespaces.slot(creating: name)
        if created { addNamespaceParts() }
        return slot
    }

    /// The slot of a key's namespace, created with the default policy when new.
    @inline(__always)
    mutating func namespaceSlot(forKey key: String) -> Int32 {
        let (slot, created) = namespaces.slot(forKey: key)
        if created { addNamespaceParts() }
        return slot
    }

    /// Gives the parts kept by namespace slot their state for a namespace just created.
    private mutating func addNamespaceParts() {
        entries.addNamespace()
        expiry.addNamespace()
        statistics.addNamespace()
    }

    // MARK: Entries in and out

    /// Stores a new entry as the most recently used and queues its expiry (see
    /// `CacheEngine.insertEntry`).
    /// - Returns: its slot, and the expiry scan to schedule, when the namespace had none.
    /// - Complexity: O(1) amortized, plus the size of `value` for the id index.
    mutating func insertEntry(key: String, namespace ns: Int32, value: StoredValue, tags: [String], request: UInt64,
                              put: UInt64?, hash: UInt32) -> (slot: Int32, scan: ScheduledItem?) {
        let s = nextSeq()
        // The entry is made whole here, its times included (as `applyTimes` derives them from
        // `storedAt`), and moved into its slot: no copy of the record on the way.
        let (staleAt, expiresAt) = timesStoredNow(ns)
        if let put, put == request {
            // A put (its request is the put itself): the record made in one go.
            let entry = Entry.stored(byPut: put, storedSeq: s, key: key, namespace: ns, stored: value, tags: tags,
                                     storedAt: now, staleAt: staleAt, expiresAt: expiresAt)
            let slot = entries.insert(consume entry, hash: hash)
            return (slot, enqueueExpiry(ExpiryRecord(slot: slot, seq: s), in: ns))
        }
        var entry = Entry(key: key, namespace: ns, stored: value, tags: tags, storedAt: now,
                          staleAt: staleAt, expiresAt: expiresAt)
        entry.setSequence(storedRequest: request, storedSeq: s)
        if let put { entry.setWrites(local: put, put: put) }
        let slot = entries.insert(consume entry, hash: hash)
        return (slot, enqueueExpiry(ExpiryRecord(slot: slot, seq: s), in: ns))
    }

    /// The stale and expiry times of an entry of namespace `ns` stored now: what `applyTimes`
    /// derives from an entry's `storedAt` (`.max` for no stale time), for a record made whole at
    /// once (`insertEntry`, `replaceVictim`, `putAgainStep`).
    @inline(__always)
    func timesStoredNow(_ ns: Int32) -> (staleAt: Int64, expiresAt: Int64) {
        let times = namespaces.times(ns)
        return (times.stale.map { now.addingClamped($0) } ?? .max, now.addingClamped(times.ttl))
    }

    /// Derives an entry's stale and expiry times from its `storedAt` and its namespace's policy,
    /// drops an `expire` override and a reported expiry, and queues the expiry.
    /// - Returns: the expiry scan to schedule, when the namespace had none.
    /// - Complexity: O(1) amortized (one append to the namespace's expiry FIFO).
    mutating func applyTimes(_ slot: Int32) -> ScheduledItem? {
        let i = Int(slot)
        let ns = entries.ordered.entries[i].namespace
        let times = namespaces.times(ns)
        let record = entries.slots[i].applyTimes(ttl: times.ttl, stale: times.stale, slot: slot)
        return enqueueExpiry(record, in: ns)
    }

    /// Queues an entry's expiry record in its namespace's FIFO.
    /// - Returns: the expiry scan to schedule, when the namespace had none.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func enqueueExpiry(_ record: ExpiryRecord, in ns: Int32) -> ScheduledItem? {
        expiry.enqueue(record, in: ns)
        let scan = expiry.scanScheduled(ns) ? nil : claimExpiryScan(ns)
        // Records of entries evicted, removed or stored again since are dropped lazily at the head
        // (an entry removed while its record leads goes at once, see `removeEntry`); when they
        // outnumber the namespace's entries, drop them all, so the FIFO stays within twice the
        // entries (plus a little) however long the run: O(1) amortized per append.
        if expiry.count(ns) > 2 * entries.ordered.count(inNamespace: ns) + 64 {
            expiry.compact(ns) { r in Self.isLive(r, in: entries.ordered.entries) }
        }
        return scan
    }

    /// Claims the scan of a namespace's FIFO, unless one is scheduled: for its first live record,
    /// at that record's time and its entry's sequence number, once the dead records before it are
    /// dropped (a scan of a dead record would only drop it). Nil when one is scheduled or no
    /// record is live.
    /// - Complexity: O(1) plus the dead records dropped.
    mutating func claimExpiryScan(_ ns: Int32) -> ScheduledItem? {
        guard !expiry.scanScheduled(ns) else { return nil }
        while let head = expiry.head(ns) {
            if Self.isLive(head, in: entries.ordered.entries) {
                // A live record's time is its entry's, its sequence number the entry's `storedSeq`.
                return expiry.claimScan(ns, time: entries.ordered.entries[Int(head.slot)].expiresAt, seq: head.seq)
            }
            expiry.removeHead(ns)
        }
        return nil
    }

    /// Whether an expiry record still stands for its entry's expiry (else it is skipped).
    @inline(__always)
    static func isLive(_ r: ExpiryRecord, in slots: EntrySlots) -> Bool {
        let e = slots[Int(r.slot)]
        return e.live && e.storedSeq == r.seq && !e.expiryOverridden && !e.expiryReported
    }

    /// Removes an entry from every index and list (the slot is reused) and notes its key for a store.
    /// Its expiry record, when it leads its FIFO (the usual case for the least recent entry of a
    /// namespace whose entries are put and evicted in turn), is dropped with it: the record is dead
    /// from now on, and a dead record at the head would only wait for a scan or a compaction.
    /// - Returns: the entry's key.
    /// - Complexity: O(1) plus its ids and tags.
    @inline(__always)
    mutating func removeEntry(_ slot: Int32) -> String {
        removeEntry(slot, hash: entries.keyIndex.hash(entries.ordered.entries[Int(slot)].key))
    }

    /// `removeEntry(_:)` with the hash of the entry's key (`KeyIndex.hash`) already taken.
    @inline(__always)
    mutating func removeEntry(_ slot: Int32, hash: UInt32) -> String {
        let ns = entries.ordered.entries[Int(slot)].namespace
        let storedSeq = entries.ordered.entries[Int(slot)].storedSeq
        let key = entries.remove(slot, hash: hash)
        expiry.dropHead(ns, ifOf: slot, seq: storedSeq)
        // The slot's row id goes with the entry (a key put again later is a new row). Only with
        // a store: read through stored properties, the check costs a cache without one nothing.
        var rowID: Int64 = 0
        if entries.ordered.entries.keepsRowIDs { rowID = entries.slots.takeRowID(Int(slot)) }
        if changes != nil {
            changes!.removedKeys.append(key)
            changes!.removedRowIDs.append(rowID)
        }
        return key
    }

    /// Evicts the policy's next victim of a namespace holding more than `max` entries, sparing
    /// `sparing` unless it is the only one: removes it and counts the eviction (the engine voids
    /// its responses in flight, when `requestsByKey`).
    /// - Returns: the evicted key, whether the namespace still holds more than `max` entries and
    ///   `requestsByKey`; nil when it is within `max`.
    /// - Complexity: O(1) (SIEVE: amortized), plus its ids and tags.
    @inline(__always)
    mutating func evictOne(_ ns: Int32, over max: Int, sparing: Int32) -> (key: String, more: Bool, requestsByKey: Bool)? {
        guard let victim = entries.victim(inNamespace: ns, over: max, sparing: sparing) else { return nil }
        let key = removeEntry(victim)
        statistics.count(\.evictions, ns)
        return (key, entries.ordered.count(inNamespace: ns) > max, requestsByKey)
    }

    /// The victim of a put of a new key into LRU namespace `ns` that holds exactly `max` entries
    /// (at least one), found before the new entry is stored, and the hash of its key; nil for
    /// any other put. The victim is the same after the new entry is stored: that entry is then
    /// the most recent of at least two, so it is never the least recent, and storing moves no
    /// other entry.
    ///
    /// Why before: at a million entries the victim's place in the recency queue and its entry
    /// each miss the cache, as does the new key's bucket. Found after the new entry is stored
    /// (some 800 instructions later), the victim's misses began only once the new key's had
    /// ended; found here, just after the new key's lookup, they are under way at the same time.
    /// (Its key's bucket, which needs the hash of its key, is still read at the removal.)
    @inline(__always)
    mutating func lruVictimBeforeStoring(_ ns: Int32, max: Int) -> (slot: Int32, hash: UInt32)? {
        guard max > 0, entries.ordered.count(inNamespace: ns) == max,
              entries.ordered.eviction(ofNamespace: ns) == .lru,
              let victim = entries.victim(inNamespace: ns, over: max - 1) else { return nil }
        prefetchNextVictims(ns)
        return (victim, entries.keyIndex.hash(entries.ordered.entries[Int(victim)].key))
    }

    /// Asks the processor for what the next evictions of LRU namespace `ns` will read, once
    /// `lruVictim` has found this one (the queue's head is the victim's item): the entry (both
    /// its lines) and place of the slot three items on, and the key index's bucket of the next
    /// item's key (whose entry a put two before asked for, so its key is read from the cache).
    /// The items are the likely victims of the next puts (those a get moves on are skipped then,
    /// and a hint for them is lost, nothing else). At a million entries each line is a miss of
    /// its own, and an evicting put waited on three in a row (the victim's place, its entry, its
    /// key's bucket); asked for a put or more ahead, they arrive while the puts before them run:
    /// `CoreBenchmarks put` at 1 M, 2.2-2.7x a `Dictionary` lookup before, 1.5-1.7x with
    /// (Benchmarks/README.md). A hint changes no state and reads no slot past the end.
    /// - Complexity: O(1) (the key's bytes hashed, as the eviction hashes them).
    @inline(__always)
    func prefetchNextVictims(_ ns: Int32) {
        let far = entries.ordered.queuedSlot(Int(ns), ahead: 3)
        if far >= 0 { entries.ordered.prefetch(far) }
        let near = Int(entries.ordered.queuedSlot(Int(ns), ahead: 1))
        if near >= 0 && near < entries.ordered.entries.count {
            entries.keyIndex.prefetchBucket(of: entries.ordered.entries[near].key)
        }
    }

    /// Stores a put's new entry (key absent, hash `hash`, sequence number `put`) in the slot of
    /// `victim`, the least recent entry of its full LRU namespace `ns` (its key's hash
    /// `victimHash`), evicting it: what `insertEntry` followed by `removeEntry(victim, hash:)`
    /// did, as one replacement (`EntryTable.replace`). The entry's record, its expiry record,
    /// the victim's expiry record dropped when it leads, the victim's row id and the store's note
    /// of its removal are as they were; the sequence numbers taken too. The caller makes sure
    /// the namespace's expiry scan is scheduled, so appending the new entry's expiry record
    /// claims none: with none scheduled the queue is empty (`ExpiryQueues`' invariant), the
    /// append would claim a scan for the new record, and this step returns no scan to schedule.
    /// - Returns: the evicted key.
    /// - Complexity: O(1) amortized, plus the tags of both, plus the size of both values once
    ///   the id index is built.
    @inline(__always)
    mutating func replaceVictim(_ victim: Int32, victimHash: UInt32, key: String, namespace ns: Int32, value: StoredValue,
                                tags: [String], put: UInt64, hash: UInt32) -> String {
        let s = nextSeq()
        let (staleAt, expiresAt) = timesStoredNow(ns)
        let entry = Entry.stored(byPut: put, storedSeq: s, key: key, namespace: ns, stored: value, tags: tags,
                                 storedAt: now, staleAt: staleAt, expiresAt: expiresAt)
        let victimSeq = entries.ordered.entries[Int(victim)].storedSeq
        // The victim's row id goes with it (the new key is a new row, given its id when written).
        var rowID: Int64 = 0
        if entries.ordered.entries.keepsRowIDs { rowID = entries.slots.takeRowID(Int(victim)) }
        let evictedKey = entries.replace(victim, victimHash: victimHash, with: consume entry, hash: hash)
        // A scan is scheduled (the caller's check): no scan to claim.
        let claimed = enqueueExpiry(ExpiryRecord(slot: victim, seq: s), in: ns)
        assert(claimed == nil, "replaceVictim runs only while its namespace's expiry scan is scheduled")
        expiry.dropHead(ns, ifOf: victim, seq: victimSeq)
        if changes != nil {
            changes!.removedKeys.append(evictedKey)
            changes!.removedRowIDs.append(rowID)
        }
        return evictedKey
    }

    // MARK: The operations

    /// What `put` found and did: the key was cached (its slot; the engine updates it), or a new
    /// entry was stored (its slot and namespace, the namespace's `max`, an expiry scan to
    /// schedule, and the first entry evicted for it when the step evicted).
    enum PutStep {
        case cached(slot: Int32)
        case stored(slot: Int32, ns: Int32, max: Int?, scan: ScheduledItem?, evicted: Evicted?)
    }

    /// An entry `put` evicted in its step: whether the namespace is still over its `max` and
    /// `requestsByKey` (the engine then voids the key's responses in flight). Its key is the
    /// second of the keys changed: held there only, so that the step's result holds no
    /// reference (dropping one that did was an outlined destroy of the enum, some 40
    /// instructions, and its key's retain and release).
    struct Evicted {
        var more: Bool
        var requestsByKey: Bool
    }

    /// `put`'s first step: takes the put's sequence number `s`, and stores the value as a new
    /// entry when the key (canonical, its hash `hash`) is not cached; with `evicting`, it also
    /// evicts the namespace's first victim when the new entry puts it over its `max` (the engine
    /// asks for that only when nothing hears of changes, so that no report comes between).
    /// - Returns: also the keys changed so far (the key, and the key evicted), in the array kept
    ///   for the purpose (`changedKeys`).
    @inline(__always)
    mutating func putStep(key: String, hash: UInt32, value: StoredValue, tags: [String],
                          evicting: Bool) -> (s: UInt64, step: PutStep, changed: [String]) {
        let s = nextSeq()
        if let slot = entrySlot(forKey: key, hash: hash) {
            noteChangedKeys(key, nil)
            return (s, .cached(slot: slot), changedKeys)
        }
        let ns = namespaceSlot(forKey: key)
        let max = namespaces.maxEntries(ns)
        if evicting, let max, let early = lruVictimBeforeStoring(ns, max: max) {
            // A full LRU namespace: one eviction, of the victim found before storing; in the
            // victim's own slot when its namespace's expiry scan is scheduled (as it is but for
            // the first put after a scan ran dry).
            if expiry.scanScheduled(ns) {
                let evictedKey = replaceVictim(early.slot, victimHash: early.hash, key: key, namespace: ns, value: value,
                                               tags: tags, put: s, hash: hash)
                statistics.count(\.evictions, ns)
                noteChangedKeys(key, evictedKey)
                let evicted = Evicted(more: false, requestsByKey: requestsByKey)
                return (s, .stored(slot: early.slot, ns: ns, max: max, scan: nil, evicted: evicted), changedKeys)
            }
            let (slot, scan) = insertEntry(key: key, namespace: ns, value: value, tags: tags, request: s, put: s, hash: hash)
            let evictedKey = removeEntry(early.slot, hash: early.hash)
            statistics.count(\.evictions, ns)
            noteChangedKeys(key, evictedKey)
            let evicted = Evicted(more: false, requestsByKey: requestsByKey)
            return (s, .stored(slot: slot, ns: ns, max: max, scan: scan, evicted: evicted), changedKeys)
        }
        let (slot, scan) = insertEntry(key: key, namespace: ns, value: value, tags: tags, request: s, put: s, hash: hash)
        guard evicting, let max, let e = evictOne(ns, over: max, sparing: slot) else {
            noteChangedKeys(key, nil)
            return (s, .stored(slot: slot, ns: ns, max: max, scan: scan, evicted: nil), changedKeys)
        }
        noteChangedKeys(key, e.key)
        let evicted = Evicted(more: e.more, requestsByKey: e.requestsByKey)
        return (s, .stored(slot: slot, ns: ns, max: max, scan: scan, evicted: evicted), changedKeys)
    }

    /// The rest of a put of sequence number `put` over the cached entry in `slot` (`putStep`'s
    /// `.cached`), in this one access when the put has no tags, no id index is built and the
    /// entry holds nothing out of line (`Entry.storeAgain`): the value, the writes' sequence
    /// numbers, the times from now, the store's sequence number and its expiry record, the
    /// recency. The engine's steps one by one (`setValue`, `notePut`, `restamp`, `touch`) were
    /// each an access of their own, each setter checking for fields out of line: some 480
    /// instructions more a put again in the shell's batch (1,360 against 880).
    /// - Returns: whether it applied (else nothing changed but the slot's mark for a store, and
    ///   the caller takes the steps one by one); the expiry scan to schedule, when the namespace
    ///   had none.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func putAgainStep(_ slot: Int32, value: StoredValue, tags: [String],
                               put: UInt64) -> (applied: Bool, scan: ScheduledItem?) {
        guard tags.isEmpty, case .none = entries.idIndex else { return (false, nil) }
        let i = Int(slot)
        let ns = entries.ordered.entries[i].namespace
        let (staleAt, expiresAt) = timesStoredNow(ns)
        // The sequence number `restamp` would take next; taken only once the record is written.
        let storedSeq = seq &+ 1
        // (A write that does not apply still marks the slot for a store: the steps one by one
        // write it next.)
        guard entries.slots[i].storeAgain(byPut: put, storedSeq: storedSeq, stored: value, storedAt: now,
                                          staleAt: staleAt, expiresAt: expiresAt) else { return (false, nil) }
        _ = nextSeq()
        let scan = enqueueExpiry(ExpiryRecord(slot: slot, seq: storedSeq), in: ns)
        entries.touch(slot, namespace: ns)
        return (true, scan)
    }

    /// Makes `changedKeys` hold `key`, then `evicted` if any, writing over the keys it holds
    /// (in its buffer, when no caller holds it any more).
    /// - Complexity: O(1): it holds at most two keys.
    @inline(__always)
    private mutating func noteChangedKeys(_ key: String, _ evicted: String?) {
        if changedKeys.isEmpty { changedKeys.append(key) } else { changedKeys[0] = key }
        let count = evicted == nil ? 1 : 2
        if let evicted {
            if changedKeys.count < 2 { changedKeys.append(evicted) } else { changedKeys[1] = evicted }
        }
        while changedKeys.count > count { changedKeys.removeLast() }
    }

    /// The report of a change to the entry in `slot`, its fields read in place. (Mutating only so
    /// that it runs on the engine's state in place: a method that is not may copy the state.)
    @inline(__always)
    mutating func changeEvent(_ cause: ChangeCause, slot: Int32, source: ValueSource) -> CacheEvent {
        let i = Int(slot)
        return CacheEvent(cause: cause, key: entries.ordered.entries[i].key, at: now, state: entries.ordered.entries[i].state(at: now),
                          stored: entries.ordered.entries[i].stored, source: source)
    }

    /// `changeEvent` made in the uninitialized memory at `event` (the relay's, from which the
    /// handler moves it on).
    @inline(__always)
    mutating func initializeChangeEvent(_ event: UnsafeMutablePointer<CacheEvent>, _ cause: ChangeCause, slot: Int32, source: ValueSource) {
        let i = Int(slot)
        event.initialize(to: CacheEvent(cause: cause, key: entries.ordered.entries[i].key, at: now,
                                        state: entries.ordered.entries[i].state(at: now),
                                        stored: entries.ordered.entries[i].stored, source: source))
    }

    /// What a `get` of a cached entry (online) found besides a fresh hit: the entry's slot (-1:
    /// not cached) and namespace and the state it is served in. Plain values only, so that
    /// passing it back costs no copy of references.
    struct Found {
        var slot: Int32 = -1
        var ns: Int32 = -1
        var state = EntryState.absent
        /// A fresh hit, counted and touched, left for the caller to read because the key may have
        /// a fetch in flight (`requestsByKey`: its result's `pending` needs the request table).
        var freshHit = false
    }

    /// `get`'s first step, online: takes a sequence number; for a fresh hit (unless `force`),
    /// touches the entry and counts the hit (as `CacheEngine.get` does); any other cached entry
    /// is left for the caller to touch.
    /// - Returns: the slot of the fresh hit, for the caller to read with `freshHitResult`, when no
    ///   request by key exists (so `pending` is false); -1 for anything else, `found` saying what
    ///   was found (`freshHit`: a hit for the caller to read).
    ///
    /// The result is made by a call of its own, the last of `get`'s: so it is built in `get`'s
    /// caller's memory, where a result returned from here (an optional) was built in a
    /// temporary of `get` and copied (some 25 instructions a hit).
    @inline(__always)
    mutating func getStep(key: String, hash: UInt32, force: Bool, found: inout Found) -> Int32 {
        _ = nextSeq()
        guard let slot = entrySlot(forKey: key, hash: hash) else { return -1 }
        let i = Int(slot)
        let ns = entries.ordered.entries[i].namespace
        var state = entries.ordered.entries[i].state(at: now)
        // serve-expired: an expired value is served as a stale one is.
        if state == .expired && namespaces.isNaive(.serveExpired, ns: ns) { state = .stale }
        found.slot = slot
        found.ns = ns
        found.state = state
        // Not a fresh hit: the caller touches the entry, once it knows the read can go on (a
        // read that would wait until the clock's end is refused, nothing touched).
        guard !force && state == .fresh else { return -1 }
        entries.touch(slot, namespace: ns)
        statistics.countHit(ns)
        guard !requestsByKey else {
            found.freshHit = true
            return -1
        }
        return slot
    }

    /// What a `get` of the fresh entry in `slot` returns (`Entry.readResult`, its fields read in
    /// place; `pending` false). Mutating only so that it runs on the engine's state in place.
    @inline(__always)
    mutating func freshHitResult(_ slot: Int32) -> ReadResult {
        let i = Int(slot)
        let expiresAt = entries.ordered.entries[i].expiresAt
        return ReadResult(key: entries.ordered.entries[i].key, state: .fresh, stored: entries.ordered.entries[i].stored,
                          ageMs: now - entries.ordered.entries[i].storedAt,
                          expiresInMs: expiresAt == .max ? .max : expiresAt - now,
                          source: .cache, extras: entries.ordered.entries[i].readExtras)
    }
}

extension Entry {
    /// Derives the stale and expiry times from `storedAt`, a namespace's `ttl` and `stale` (nil:
    /// never stale by age), dropping an `expire` override and a reported expiry.
    /// - Returns: the record that queues the expiry of the entry in `slot`.
    @inline(__always)
    mutating func applyTimes(ttl: Int64, stale: Int64?, slot: Int32) -> ExpiryRecord {
        staleAt = stale.map { storedAt.addingClamped($0) } ?? .max
        expiresAt = storedAt.addingClamped(ttl)
        expiryOverridden = false
        expiryReported = false
        return ExpiryRecord(slot: slot, seq: storedSeq)
    }
}
