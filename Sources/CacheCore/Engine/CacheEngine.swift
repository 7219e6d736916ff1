/// Receives what the engine reports while it runs: observer events, scheduled external work
/// (the shell's `at` commands), validation answers that nobody waits for.
@_spi(Engine) public protocol CacheEngineDelegate: AnyObject {
    func cacheEngine(_ engine: CacheEngine, observed event: CacheEvent)
    func cacheEngine(_ engine: CacheEngine, runScheduled token: Int)
    func cacheEngine(_ engine: CacheEngine, validated result: ValidationResult)
    /// A request completed (default: nothing); see `RequestCompletion`.
    func cacheEngine(_ engine: CacheEngine, completed request: RequestCompletion)
    /// With `reportsAllChanges`, every change to an entry, watched or not (default: nothing).
    func cacheEngine(_ engine: CacheEngine, noted event: consuming CacheEvent)
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
/// queue), `observers`, `rules` (push rules) and `statistics`. Those a `get` hit and a `put`
/// change (`entries`, `namespaces`, `expiry`, `statistics`, with the clock and the sequence
/// number) sit together in one stored property, `state` (`EngineState`), so that each such
/// operation is one access (checked at run time only in debug builds; see `state`). The engine's methods coordinate them; with `checksInvariants` on, every public operation that can change the state ends with
/// a check of every part and of how they agree (`invariantViolations()`).
@_spi(Engine) public final class CacheEngine {
    /// Most scheduled items (not counting expiries) one command may run before it is stopped (SPEC §7).
    public static let runawayLimit = 1_000_000

    /// The server the cache talks to (kept in `originCell`).
    public internal(set) var origin: any Origin {
        @inline(__always) get { originCell.origin }
        set { originCell.origin = newValue }
    }
    /// The origin, in a value of its own so that a `get` asks whether it is online with no
    /// retain and release of it (see `OriginCell`).
    ///
    /// Unchecked exclusivity in optimized builds, checked in debug builds (as `state`). Why no
    /// two accesses to it can overlap where one of them writes: the property is internal; it is
    /// read and assigned whole through `origin` (a read of one reference, whose calls run on
    /// that reference after the access ended), and its one mutating method, `isOnline()`, runs
    /// only the origin's `isOnline`, which reads a property of the origin and never reaches the
    /// engine (`Origin.isOnline` says so; every origin of the package stores it or answers
    /// `true`). Checked, every read and write paid a dynamic access check.
    #if DEBUG
    var originCell: OriginCell
    #else
    @exclusivity(unchecked) var originCell: OriginCell
    #endif
    /// The virtual clock's start (SPEC §2: 2026-01-01T00:00:00.000Z); replaced by `restore`.
    public internal(set) var clockStart: Int64
    /// The clock, the sequence number, the entries, the namespaces, the expiry FIFOs, the
    /// counters and the store's change log: what a `get` hit and a `put` read and change, in one
    /// stored property so that each is one access (see `EngineState`).
    ///
    /// Unchecked exclusivity in optimized builds, checked in debug builds (every test runs with the
    /// dynamic check). Why no two accesses to it can overlap where one of them writes: the
    /// property is internal, and it is reached only through itself and the engine's accessors of
    /// its parts (`now`, `seq`, `entries`, `namespaces`, `expiry`, `statistics`, `changes`,
    /// `slots`). An access lasts for one call on the state or a part (or one read or write of a
    /// field), and that call runs no code of the engine: the methods of `EngineState`,
    /// `EntryTable`, `OrderedSlots`, `EntrySlots`, `KeyIndex`, `IDIndex`, `NamespaceTable`,
    /// `ExpiryQueues`, `Statistics`, `ChangeLog` and `Entry` call no delegate, observer, origin or
    /// other engine method, and the only closures they take (`KeyIndex.find`'s `matches`,
    /// `ExpiryQueues.compact`'s `keeping`, `StoredValue.withUTF8`'s body, the standard
    /// collection methods on the parts) are given inside `EngineState` and `EntryTable`, reading
    /// the parts in hand, or by the engine, reading the state (a read overlapping a read does
    /// not conflict). One reader writes: `statistics`'s read adds the hits held to their
    /// namespace (`foldHits`) before it yields, a write access of the state; it is read only
    /// outside any other access to the state (by `stats`, `statsByNamespace`, `snapshotState`
    /// and the invariant check, never inside a closure given to a part). Arguments of a mutating call on a part (`statistics.countRequest(...
    /// namespaceSlot(named:))`) are evaluated before the call's access begins; a call that only
    /// reads a part begins its read first, so a slot that may create a namespace is taken in a
    /// statement of its own before any read of the namespaces (`namespaces.policy(namespaceSlot(
    /// forKey:))` read the table as it was and trapped on the new slot). Checked, every
    /// `get` hit and `put` paid a dynamic access check (`swift_beginAccess` and its end, about
    /// 117 instructions).
    #if DEBUG
    var state: EngineState
    #else
    @exclusivity(unchecked) var state: EngineState
    #endif
    /// Current virtual time, ms since the Unix epoch.
    public internal(set) var now: Int64 {
        @inline(__always) get { state.now }
        set { state.now = newValue }
    }
    /// The global sequence number of the last event (SPEC §1.1).
    public internal(set) var seq: UInt64 {
        @inline(__always) get { state.seq }
        set { state.seq = newValue }
    }
    // Unchecked exclusivity: a weak reference only ever loaded or assigned whole, never passed
    // inout or held in an access across a call (a call on the delegate runs on the strong
    // reference loaded), so no two accesses to it can overlap; checked, each report of a change
    // paid a dynamic access check to load it.
    @exclusivity(unchecked) public weak var delegate: (any CacheEngineDelegate)?
    /// The relay of the `Cache` that owns this engine, which hears every change noted (`note`)
    /// in place of the delegate: a direct call, with the event moved, where the delegate's costs
    /// a weak load, a release of an object with a side table and a protocol call (some 250
    /// instructions a change noted, with the event's copy).
    ///
    /// Unretained: the cache owns the relay (`Cache.relay`, a `let`) and sets this in
    /// its initialisers; the relay clears it when it goes (`EngineRelay.deinit`, which holds this
    /// engine until then). So whenever this is non-nil the relay is alive. Both run on the cache's
    /// executor (the engine only inside the cache's methods, or a clock group's run of its items
    /// on that executor). Unchecked exclusivity: only ever loaded or assigned whole, never held
    /// in an access across a call.
    /// Held as `Unmanaged` and called through `_withUnsafeGuaranteedRef`: a reference loaded from
    /// an `unowned(unsafe)` property is retained for the call and released after, and the relay,
    /// also the engine's weak `delegate`, counts its references in a side table (some 100
    /// instructions a change).
    @exclusivity(unchecked) var relay: Unmanaged<EngineRelay>?
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

    /// The entries: slots, recency lists, key, id and tag indexes (in `state`).
    var entries: EntryTable {
        @inline(__always) _read { yield state.entries }
        @inline(__always) _modify { yield &state.entries }
    }
    /// The namespaces by slot and name, with their policies (in `state`).
    var namespaces: NamespaceTable {
        @inline(__always) _read { yield state.namespaces }
        @inline(__always) _modify { yield &state.namespaces }
    }
    /// The expiry FIFO of each namespace (in `state`).
    var expiry: ExpiryQueues {
        @inline(__always) _read { yield state.expiry }
        @inline(__always) _modify { yield &state.expiry }
    }
    /// Work in time: completions, expiry scans and overrides, `at` commands.
    var scheduler = Scheduler()
    /// Requests in flight, by id and key, and the outcomes readers wait for. Not in `state`: the
    /// engine passes it closures that read the entries. `state.requestsByKey` follows it.
    var requestTable = RequestTable() {
        didSet { state.requestsByKey = !requestTable.fetchInFlight.isEmpty || !requestTable.byKey.isEmpty }
    }
    /// Every request sent, with its fate.
    var serverLog = ServerLog()
    /// Optimistic mutations waiting for the origin, and the one being replayed.
    var mutationQueue = MutationQueue()
    /// The scopes observers watch.
    var observers = Observers() { didSet { noteHooks() } }
    /// Report every change to an entry to the delegate (`cacheEngine(_:noted:)`), watched or not:
    /// the shell's `timeline` keeps them. Off by default: a change nobody asked for costs nothing.
    public var reportsAllChanges = false { didSet { noteHooks() } }
    /// The push rules.
    var rules = PushRules()
    /// The HTTP namespaces' stored responses and requests in flight (docs/SPEC.md, HTTP namespaces).
    var http = HTTPStore()
    /// Whether some namespace is an HTTP one (kept by `noteHTTPNamespaces()`): until one is, a
    /// read or a completion reads this flag and nothing of `http`.
    // Unchecked exclusivity: a `Bool` only ever read or assigned whole (in `noteHTTPNamespaces`),
    // never passed inout or held in an access across a call, so no two accesses to it can
    // overlap; checked, every `get` command and completion would pay a dynamic access check.
    @exclusivity(unchecked) public internal(set) var hasHTTPNamespaces = false
    /// The counters, in total and per namespace (in `state`). Read with the hits that
    /// `Statistics.countHit` holds apart added to their namespace's counter.
    var statistics: Statistics {
        @inline(__always) _read {
            if state.statistics.unfoldedHits != 0 { state.statistics.foldHits() }
            yield state.statistics
        }
        @inline(__always) _modify { yield &state.statistics }
    }
    /// What changed since a store last took the changes; nil when no store tracks them (in `state`).
    var changes: ChangeLog? {
        @inline(__always) _read { yield state.changes }
        @inline(__always) _modify { yield &state.changes }
    }
    /// The app's behaviours an app opts into: active keys and polls (`AppBehaviours`).
    var behaviours = AppBehaviours() { didSet { noteHooks() } }
    /// What may have to hear of or act on a change to an entry: something is watched, every change
    /// is reported, or an app behaviour (deferred mutations, active keys) is on. When none, `emit`
    /// returns at once. Kept by `noteHooks()` after every write to the properties it depends on,
    /// so that a change reads one flag set instead of those properties (each read of one was a
    /// dynamic access check).
    // Unchecked exclusivity: the set is only ever read or assigned whole (in `noteHooks`), never
    // passed inout or held in an access across a call, so no two accesses to it can overlap;
    // checked, each change to an entry paid a dynamic access check to read it.
    @exclusivity(unchecked) private(set) var hooks: Hooks = []
    /// Whether anything may have to hear of or act on a change to an entry (`hooks`).
    var hooked: Bool {
        @inline(__always) get { !hooks.isEmpty }
    }
    /// Some mutation waits for a key's value (`behaviours.deferredMutations` is not empty): an
    /// eviction must forget it. Kept by `noteHooks()`, as `hooks` is, so that an evicting put
    /// reads this flag instead of `behaviours`.
    // Unchecked exclusivity: the flag is only ever read or assigned whole (in `noteHooks`), never
    // passed inout or held in an access across a call, so no two accesses to it can overlap;
    // checked, each eviction paid a dynamic access check (about 75 instructions) to read it.
    @exclusivity(unchecked) private(set) var defersMutations = false

    /// What listens to changes to entries (`hooks`).
    struct Hooks: OptionSet {
        let rawValue: UInt8
        /// Some scope is watched (`observers` is not empty).
        static let observers = Hooks(rawValue: 1 << 0)
        /// `reportsAllChanges`.
        static let allChanges = Hooks(rawValue: 1 << 1)
        /// Patches of mutations wait for their key's value (`behaviours.deferred`).
        static let deferred = Hooks(rawValue: 1 << 2)
        /// Some key is active (`behaviours.active`).
        static let active = Hooks(rawValue: 1 << 3)
    }
    /// Whether the scheduler may have counted an item run, or the request table noted outcomes,
    /// since the unit of work began (`beginUnitOfWork` then starts them afresh). Set before each
    /// `scheduler.next(upTo:)` and each `setOutcomes`/`setValidationOutcome`, the only ways
    /// either gains anything to start afresh.
    // Unchecked exclusivity: a `Bool` only ever read or assigned whole, never passed inout or
    // held in an access across a call, so no two accesses to it can overlap.
    @exclusivity(unchecked) var unitHasWork = false
    /// How many scheduled commands are running (nested): while one is, reads never wait (SPEC §2).
    var runningScheduled = 0
    /// The other caches on this one's clock (the shell's clients) and this engine's place among
    /// them; nil for a cache alone (SPEC §2 Clients).
    var clockGroup: ClockGroup?
    var clockPlace = 0
    /// Live mode: how long a deferred request (an app's async call) waits for its answer where
    /// no namespace of its keys sets `timeout=` (the `Cache`'s `requestTimeout`); nil in
    /// virtual mode, where a deferred request waits until it is answered.
    var liveTimeout: Int64?

    /// A new, empty cache over `origin`, its clock at `clockStart`.
    public init(origin: any Origin, clockStart: Int64 = TimeText.virtualEpochMs) {
        self.originCell = OriginCell(origin: origin)
        self.clockStart = clockStart
        self.state = EngineState(now: clockStart)
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
    /// How many of the oldest lines the request log dropped to stay within its bound, since it
    /// was last cleared (`ServerLog.limit`).
    public var requestLogDropped: Int { serverLog.dropped }

    /// The entries by slot (kept in `entries`, which owns their indexes and recency links). Read
    /// through stored properties only, so no part is copied to read an entry.
    var slots: EntrySlots {
        @inline(__always) _read { yield state.entries.ordered.entries }
        @inline(__always) _modify { yield &state.entries.slots }
    }

    /// Sets `hooks` from what it depends on.
    private func noteHooks() {
        var hooks: Hooks = []
        if !observers.isEmpty { hooks.insert(.observers) }
        if reportsAllChanges { hooks.insert(.allChanges) }
        if !behaviours.deferred.isEmpty { hooks.insert(.deferred) }
        if !behaviours.active.isEmpty { hooks.insert(.active) }
        self.hooks = hooks
        defersMutations = !behaviours.deferredMutations.isEmpty
    }

    /// Lets at most `items` more scheduled items run in all (not counting expiries); the error
    /// past that names `reason` (the budget of a stranger's input, SPEC §7.1).
    public func setScheduledBudget(_ items: Int, reason: String) {
        scheduler.setBudget(items, reason: reason)
    }

    /// Lets `items` more scheduled items run, when a budget is set.
    public func growScheduledBudget(by items: Int) { scheduler.growBudget(by: items) }

    /// Starts a unit of the caller's work (a shell command, a live step): the runaway limit counts
    /// scheduled items per unit, and the outcomes of requests noted are this unit's.
    public func beginUnitOfWork() {
        defer { if checksInvariants { checkInvariants() } }
        // Most units run no scheduled item and note no outcome (a put, a get hit): then there is
        // nothing to start afresh, and the two parts are not reached (each access to one was a
        // dynamic check, some 200 instructions a shell command).
        guard unitHasWork else { return }
        unitHasWork = false
        scheduler.beginUnitOfWork()
        requestTable.beginUnitOfWork()
    }

    @inline(__always)
    func nextSeq() -> UInt64 {
        state.nextSeq()
    }
}

// MARK: - Namespaces and statistics

extension CacheEngine {
    /// The namespace slot for a name, created with the default policy when new.
    func namespaceSlot(named name: Substring) -> Int32 {
        state.namespaceSlot(named: name)
    }

    func namespaceSlot(named name: String) -> Int32 { namespaceSlot(named: Substring(name)) }

    @inline(__always)
    func namespaceSlot(forKey key: String) -> Int32 {
        state.namespaceSlot(forKey: key)
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
