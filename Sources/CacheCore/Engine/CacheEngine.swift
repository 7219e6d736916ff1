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
///
/// Its state is in parts, each a value type with one responsibility, its own invariants and a
/// check of them, held in a stored property and changed in place: `entries` (the entries, their
/// recency lists and indexes), `namespaces`, `expiry` (the per-namespace expiry FIFOs),
/// `scheduler`, `requestTable` (requests in flight), `serverLog`, `mutationQueue` (the offline
/// queue), `observers`, `rules` (push rules) and `statistics`. The engine's methods coordinate
/// them; with `checksInvariants` on, every public operation that can change the state ends with
/// a check of every part and of how they agree (`invariantViolations()`).
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
    /// Checks every invariant after each public operation that can change the state, and stops
    /// the process on a violation. For tests: a check is O(n) in the size of the state. Off, it
    /// costs one load and branch per operation.
    // Unchecked exclusivity: the flag is only ever read or assigned whole, never passed inout or
    // held in an access across a call, so no two accesses to it can overlap; checked, every
    // public operation paid a dynamic access check (about 85 instructions) to read it.
    @exclusivity(unchecked) public var checksInvariants = false
    /// What a failed check does with the violations (test hook; by default it stops the process).
    var invariantFailure: ([String]) -> Void = { violations in
        preconditionFailure("CacheEngine invariants broken:\n" + violations.joined(separator: "\n"))
    }

    /// The entries: slots, recency lists, key, id and tag indexes.
    var entries = EntryTable()
    /// The namespaces by slot and name, with their policies.
    var namespaces = NamespaceTable()
    /// The expiry FIFO of each namespace.
    var expiry = ExpiryQueues()
    /// Work in time: completions, expiry scans and overrides, `at` commands.
    var scheduler = Scheduler()
    /// Requests in flight, by id and key, and the outcomes readers wait for.
    var requestTable = RequestTable()
    /// Every request sent, with its fate.
    var serverLog = ServerLog()
    /// Optimistic mutations waiting for the origin, and the one being replayed.
    var mutationQueue = MutationQueue()
    /// The scopes observers watch.
    var observers = Observers()
    /// The push rules.
    var rules = PushRules()
    /// The counters, in total and per namespace.
    var statistics = Statistics()
    /// What changed since a store last took the changes; nil when no store tracks them.
    var changes: ChangeLog?
    /// The app's behaviours an app opts into: active keys and polls (`AppBehaviours`).
    var behaviours = AppBehaviours()

    /// A new, empty cache over `origin`, its clock at `clockStart`.
    public init(origin: any Origin, clockStart: Int64 = TimeText.virtualEpochMs) {
        self.origin = origin
        self.clockStart = clockStart
        self.now = clockStart
        _ = namespaceSlot(named: KeyName.defaultNamespace)
    }

    /// The number of cached entries.
    public var count: Int { entries.count }

    /// The id field of entities (B8).
    public var idField: String { entries.idField }

    /// The push rules by type (B9).
    public var pushRules: [String: PushRule] { rules.byType }

    /// Every request sent, in order, with its fate (the server log).
    public var requestLog: [RequestLogEntry] { serverLog.lines }

    /// The entries by slot (kept in `entries`, which owns their indexes and recency links). Read
    /// through stored properties only, so no part is copied to read an entry.
    var slots: EntrySlots {
        _read { yield entries.store.entries }
        _modify { yield &entries.slots }
    }

    /// Marks the start of a command: the runaway limit counts items per command.
    public func beginCommand() {
        defer { if checksInvariants { checkInvariants() } }
        scheduler.beginCommand()
        requestTable.beginCommand()
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
        let (slot, created) = namespaces.slot(creating: name)
        if created { addNamespaceParts() }
        return slot
    }

    func namespaceSlot(named name: String) -> Int32 { namespaceSlot(named: Substring(name)) }

    @inline(__always)
    func namespaceSlot(forKey key: String) -> Int32 {
        let (slot, created) = namespaces.slot(forKey: key)
        if created { addNamespaceParts() }
        return slot
    }

    /// Gives the parts kept by namespace slot their state for a namespace just created.
    private func addNamespaceParts() {
        entries.addNamespace()
        expiry.addNamespace()
        statistics.addNamespace()
    }

    @inline(__always)
    func count(_ counter: WritableKeyPath<Stats, Int>, _ ns: Int32, by n: Int = 1) {
        statistics.count(counter, ns, by: n)
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
