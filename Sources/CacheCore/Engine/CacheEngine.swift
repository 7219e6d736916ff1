import DequeModule
import HeapModule

/// Receives what the engine reports while it runs: observer events, scheduled external work
/// (the shell's `at` commands), validation answers that nobody waits for.
public protocol CacheEngineDelegate: AnyObject {
    func cacheEngine(_ engine: CacheEngine, observed event: CacheEvent)
    func cacheEngine(_ engine: CacheEngine, runScheduled token: Int)
    func cacheEngine(_ engine: CacheEngine, validated result: ValidationResult)
    /// A request completed (default: nothing); see `RequestCompletion`.
    func cacheEngine(_ engine: CacheEngine, completed request: RequestCompletion)
}

/// The cache core: a deterministic, synchronous state machine over a virtual clock.
///
/// Every operation is a method call that finishes before it returns; work that takes time
/// (origin requests, `expire in=`, scheduled commands, expiries) sits in a priority queue ordered
/// by (due time, sequence number) and runs when `advance(by:)` or a blocking read moves the
/// clock. The same calls in the same order always give the same results: nothing here depends on
/// threads, tasks or the wall clock. Not thread-safe: wrap it in an actor (`Cache`) to share it.
public final class CacheEngine {
    /// Most scheduled items (not counting expiries) one command may run before it is stopped (SPEC §7).
    public static let runawayLimit = 1_000_000

    public internal(set) var origin: any Origin
    /// The virtual clock's start (SPEC §2: 2026-01-01T00:00:00.000Z); replaced by `restore`.
    public internal(set) var clockStart: Int64
    /// Current virtual time, ms since the Unix epoch.
    public internal(set) var now: Int64
    /// The global sequence number of the last event (SPEC §1.1).
    public internal(set) var seq: UInt64 = 0
    public weak var delegate: (any CacheEngineDelegate)?
    /// The id field of entities (B8).
    public internal(set) var idField = "id"
    public internal(set) var pushRules: [String: PushRule] = [:]
    /// Every request sent, in order, with its fate (the server log).
    public internal(set) var requestLog: [RequestLogEntry] = []

    // Entries: slots with a global recency list and one per namespace, a key index.
    var store = EntryStore()
    var index: [String: Int32] = [:]
    var namespaces: [NamespaceState] = []
    var namespaceIndex: [String: Int32] = [:]
    /// The namespace `namespaceSlot(forKey:)` found last: most runs of keys share one.
    var lastNamespace: (name: String, slot: Int32)?
    var idIndex: [String: Set<Int32>] = [:]
    var tagIndex: [String: Set<Int32>] = [:]

    // Work in time.
    var heap = Heap<ScheduledItem>()
    var requests: [UInt64: InFlight] = [:]
    var requestsByKey: [String: [UInt64]] = [:]
    var fetchInFlight: [String: UInt64] = [:]
    var keyOutcomes: [UInt64: [String: KeyOutcome]] = [:]
    var validationOutcomes: [UInt64: ValidationResult] = [:]
    var logPosition: [UInt64: Int] = [:]
    var mutationQueue = Deque<QueuedMutation>()
    var replaying: UInt64?
    var scheduledExternal: [UInt64: ScheduledCommand] = [:]
    var itemsRun = 0
    /// The largest (time, sequence) of a scheduled item run so far (live answers are placed after it).
    var maxRunKey: (time: Int64, seq: UInt64) = (.min, 0)

    var total = Stats()
    var watches: Set<WatchScope> = []

    /// The next recency stamp (see `Entry.recency`), kept by `store`.
    var nextRecency: UInt64 {
        get { store.nextRecency }
        set { store.nextRecency = newValue }
    }
    /// What changed since a store last took the changes; nil when no store tracks them.
    var changes: ChangeLog?

    /// A new, empty cache over `origin`, its clock at `clockStart`.
    public init(origin: any Origin, clockStart: Int64 = TimeText.virtualEpochMs) {
        self.origin = origin
        self.clockStart = clockStart
        self.now = clockStart
        _ = namespaceSlot(named: KeyName.defaultNamespace)
    }

    /// The number of cached entries.
    public var count: Int { index.count }

    /// The entries by slot (kept in `store`, which owns their recency links).
    var slots: EntrySlots {
        _read { yield store.entries }
        _modify { yield &store.entries }
    }

    /// Marks the start of a command: the runaway limit counts items per command.
    public func beginCommand() {
        itemsRun = 0
        keyOutcomes.removeAll(keepingCapacity: true)
        validationOutcomes.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    func nextSeq() -> UInt64 {
        seq &+= 1
        return seq
    }
}

// MARK: - Namespaces and statistics

extension CacheEngine {
    /// The namespace slot for a name, created with the default policy when new.
    func namespaceSlot(named name: Substring) -> Int32 {
        if let i = namespaceIndex[String(name)] { return i }
        let i = Int32(namespaces.count)
        namespaces.append(NamespaceState(name: String(name), policy: Policy(), defined: false))
        store.addNamespace()
        namespaceIndex[String(name)] = i
        return i
    }

    func namespaceSlot(named name: String) -> Int32 { namespaceSlot(named: Substring(name)) }

    func namespaceSlot(forKey key: String) -> Int32 {
        let name = KeyName.namespace(of: key)
        if let last = lastNamespace, last.name == name { return last.slot }
        let slot = namespaceSlot(named: name)
        lastNamespace = (String(name), slot)
        return slot
    }

    @inline(__always)
    func count(_ counter: WritableKeyPath<Stats, Int>, _ ns: Int32, by n: Int = 1) {
        total[keyPath: counter] += n
        namespaces[Int(ns)].stats[keyPath: counter] += n
    }
}

// MARK: - Slots and recency lists

extension CacheEngine {
    /// Stores a new entry as the most recently used; `put` is the sequence number of the `put`
    /// storing it (nil for a fetched value).
    /// - Complexity: O(1) amortized, plus the size of `value` for the id index.
    func insertEntry(key: String, namespace ns: Int32, value: JSONValue, tags: [String], request: UInt64,
                     put: UInt64? = nil) -> Int32 {
        let s = nextSeq()
        var entry = Entry(key: key, namespace: ns, value: value, tags: tags, ids: [],
                          storedAt: now, staleAt: .max, expiresAt: .max)
        entry.storedRequest = request
        entry.storedSeq = s
        if let put {
            entry.lastLocalWrite = put
            entry.lastPut = put
        }
        let slot = store.insert(entry)
        index[key] = slot
        indexIDs(slot, value)
        for tag in tags { tagIndex[tag, default: []].insert(slot) }
        applyTimes(slot)
        return slot
    }

    /// Removes an entry from every index and list; the slot is reused.
    /// - Returns: the entry's key.
    /// - Complexity: O(1) plus its ids and tags.
    @discardableResult
    func removeEntry(_ slot: Int32) -> String {
        let removed = store.remove(slot)
        changes?.removedKeys.append(removed.key)
        index.removeValue(forKey: removed.key)
        for id in removed.ids { removeFromIndex(&idIndex, id, slot) }
        for tag in removed.tags { removeFromIndex(&tagIndex, tag, slot) }
        return removed.key
    }

    /// Makes an entry the most recently used (globally and in its namespace).
    /// - Complexity: O(1).
    @inline(__always)
    func touch(_ slot: Int32) {
        store.touch(slot)
    }

    /// Slots of every entry in global recency order, least recent first.
    /// - Complexity: O(n).
    func slotsInRecencyOrder() -> [Int32] {
        store.recencyOrder()
    }

    /// Slots of one namespace in recency order.
    /// - Complexity: O(entries in the namespace).
    func slots(inNamespace ns: Int32) -> [Int32] {
        store.slots(inNamespace: ns)
    }

    /// Replaces an entry's value, keeping the id index in step.
    func setValue(_ slot: Int32, _ value: JSONValue) {
        unindexIDs(slot)
        slots[Int(slot)].value = value
        indexIDs(slot, value)
    }

    func setTags(_ slot: Int32, _ tags: [String]) {
        for tag in slots[Int(slot)].tags { removeFromIndex(&tagIndex, tag, slot) }
        slots[Int(slot)].tags = tags
        for tag in tags { tagIndex[tag, default: []].insert(slot) }
    }

    func indexIDs(_ slot: Int32) {
        indexIDs(slot, slots[Int(slot)].value)
    }

    /// Indexes the entity ids of `value`, the value of the entry in `slot`.
    func indexIDs(_ slot: Int32, _ value: JSONValue) {
        var ids = Set<String>()
        value.collectEntityIDs(idField: idField, into: &ids)
        guard !ids.isEmpty else { return }
        let list = ids.sorted()
        slots[Int(slot)].ids = list
        for id in list { idIndex[id, default: []].insert(slot) }
    }

    private func unindexIDs(_ slot: Int32) {
        let ids = slots[Int(slot)].ids
        guard !ids.isEmpty else { return }
        for id in ids { removeFromIndex(&idIndex, id, slot) }
        slots[Int(slot)].ids = []
    }

    private func removeFromIndex(_ index: inout [String: Set<Int32>], _ name: String, _ slot: Int32) {
        guard var set = index.removeValue(forKey: name) else { return }
        set.remove(slot)
        if !set.isEmpty { index[name] = set }
    }

    /// Rebuilds the id index (after the id field changed).
    func rebuildIDIndex() {
        idIndex.removeAll()
        for slot in slotsInRecencyOrder() {
            slots[Int(slot)].ids = []
            indexIDs(slot)
        }
    }

    /// Sorts slots by printed key, for a deterministic order where a set gives none.
    func sortedByKey(_ set: Set<Int32>) -> [Int32] {
        set.sorted { slots[Int($0)].key < slots[Int($1)].key }
    }
}

// MARK: - Times and expiry tracking

extension CacheEngine {
    /// Sets `storedAt = now` and derives the entry's stale and expiry times from its policy.
    func restamp(_ slot: Int32) {
        slots[Int(slot)].storedAt = now
        slots[Int(slot)].storedSeq = nextSeq()
        slots[Int(slot)].generation &+= 1
        applyTimes(slot)
    }

    /// Derives stale and expiry times from `storedAt` and the policy, and queues the expiry.
    /// - Complexity: O(1) amortized (one append to the namespace's expiry FIFO).
    func applyTimes(_ slot: Int32) {
        let ns = Int(slots[Int(slot)].namespace)
        let policy = namespaces[ns].policy
        let record = slots[Int(slot)].applyTimes(policy, slot: slot)
        if namespaces[ns].queueExpiry(record) { scheduleExpiryScan(Int32(ns)) }
    }

    func scheduleExpiryScan(_ ns: Int32) {
        let n = Int(ns)
        guard !namespaces[n].scanScheduled, let head = namespaces[n].expiryFIFO.first else { return }
        namespaces[n].scanScheduled = true
        heap.insert(ScheduledItem(time: head.time, seq: head.seq,
                                  work: .expiryScan(ns: ns, epoch: namespaces[n].expiryEpoch)))
    }

    /// Rebuilds a namespace's expiry FIFO after its times were recomputed.
    /// - Complexity: O(k log k) for the k entries of the namespace.
    func rebuildExpiryFIFO(_ ns: Int32) {
        let n = Int(ns)
        var records: [ExpiryRecord] = []
        for slot in slots(inNamespace: ns) where !slots[Int(slot)].expiryOverridden {
            let e = slots[Int(slot)]
            records.append(ExpiryRecord(time: e.expiresAt, seq: e.storedSeq, slot: slot, generation: e.generation))
        }
        records.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
        namespaces[n].expiryFIFO = Deque(records)
        namespaces[n].expiryEpoch &+= 1
        namespaces[n].scanScheduled = false
        scheduleExpiryScan(ns)
    }

    func isLive(_ r: ExpiryRecord) -> Bool {
        let e = slots[Int(r.slot)]
        return e.live && e.generation == r.generation && !e.expiryOverridden && !e.expiryReported
            && e.expiresAt == r.time
    }

    /// Counts and reports an entry's expiry once.
    func reportExpiry(_ slot: Int32) {
        guard !slots[Int(slot)].expiryReported else { return }
        slots[Int(slot)].expiryReported = true
        count(\.expirations, slots[Int(slot)].namespace)
        emit(.expired, slot: slot, source: .cache)
    }
}

// MARK: - The scheduler

struct ScheduledItem: Comparable {
    enum Work {
        case completion(UInt64)
        case expiryScan(ns: Int32, epoch: UInt32)
        case expiryOverride(slot: Int32, generation: UInt32)
        case external(UInt64)
    }
    var time: Int64
    var seq: UInt64
    var work: Work

    static func < (a: ScheduledItem, b: ScheduledItem) -> Bool { (a.time, a.seq) < (b.time, b.seq) }
    static func == (a: ScheduledItem, b: ScheduledItem) -> Bool { a.time == b.time && a.seq == b.seq }
}

struct ScheduledCommand {
    var token: Int
    var due: Int64
}

extension CacheEngine {
    /// Moves the clock forward by `duration`, running every item due up to then in (time, sequence)
    /// order, each with `now` at its time; then sets `now` to the target.
    /// - Throws: `CacheError` when the command runs more than `runawayLimit` items; the clock then
    ///   stays at the last item run.
    public func advance(by duration: Int64) throws(CacheError) {
        let target = now.addingClamped(max(0, duration))
        while try runNext(upTo: target) {}
        now = target
    }

    /// Runs the earliest item due at or before `limit`; false when there is none.
    /// - Complexity: O(log h) for h scheduled items.
    @discardableResult
    func runNext(upTo limit: Int64) throws(CacheError) -> Bool {
        guard let top = heap.min, top.time <= limit else { return false }
        switch top.work {
        case .expiryScan, .expiryOverride: break
        default:
            if itemsRun >= Self.runawayLimit {
                throw CacheError("stopped after running \(Self.runawayLimit) scheduled items in one command (runaway schedule?)")
            }
            itemsRun += 1
        }
        heap.removeMin()
        if (top.time, top.seq) > maxRunKey { maxRunKey = (top.time, top.seq) }
        if top.time > now { now = top.time }
        switch top.work {
        case .completion(let id):
            complete(id)
        case .expiryScan(let ns, let epoch):
            runExpiryScan(ns, epoch: epoch)
        case .expiryOverride(let slot, let generation):
            let e = slots[Int(slot)]
            if e.live && e.generation == generation && e.expiryOverridden && e.expiresAt == top.time {
                reportExpiry(slot)
            }
        case .external(let id):
            if let command = scheduledExternal.removeValue(forKey: id) {
                delegate?.cacheEngine(self, runScheduled: command.token)
            }
        }
        return true
    }

    private func runExpiryScan(_ ns: Int32, epoch: UInt32) {
        let n = Int(ns)
        guard namespaces[n].expiryEpoch == epoch else { return }
        namespaces[n].scanScheduled = false
        if let record = namespaces[n].expiryFIFO.first, record.time <= now {
            namespaces[n].expiryFIFO.removeFirst()
            if isLive(record) { reportExpiry(record.slot) }
        }
        // Drop dead records at the head so the next scan is scheduled for a live one.
        while let record = namespaces[n].expiryFIFO.first, !isLive(record) {
            namespaces[n].expiryFIFO.removeFirst()
        }
        scheduleExpiryScan(ns)
    }

    /// Runs scheduled work until request `id` has completed (or nothing is left to run).
    func run(until id: UInt64) throws(CacheError) {
        while requests[id] != nil {
            guard try runNext(upTo: .max) else { return }
        }
    }

    /// Schedules external work (the shell's `at`) `delay` ms from now; it runs at the next
    /// scheduling step at the earliest, never inline.
    /// - Returns: the item's id.
    @discardableResult
    public func schedule(after delay: Int64, token: Int) -> UInt64 {
        let id = nextSeq()
        let due = now.addingClamped(max(0, delay))
        scheduledExternal[id] = ScheduledCommand(token: token, due: due)
        heap.insert(ScheduledItem(time: due, seq: id, work: .external(id)))
        return id
    }
}

extension Int64 {
    /// Addition that stops at the bounds instead of trapping (a `ttl` of 100000d must not crash).
    @inline(__always)
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
