import Dispatch

/// The cache an app embeds, and the one the cachesh shell drives: a deterministic engine behind
/// an actor.
///
/// Two ways to drive time:
/// - **Virtual** (`Cache(origin:)`): time moves only through `advance(by:)` and blocking reads;
///   every run of the same calls gives the same results. Tests and the shell work this way.
/// - **Live** (`Cache(fetch:mutate:clock:)`): requests go to the app's `async` functions, the
///   engine follows the clock, and due work (expiries, `timeout=` failures, answers) happens at its
///   time without waiting for the app's next call. `get` suspends until its answer.
///
/// Every method is synchronous inside the actor: one hop from outside, none from code that runs
/// with the actor isolated (the shell runs a whole script or typed line with an `isolated Cache`).
/// A synchronous owner (a command-line tool) enters the actor with `withIsolation`, on its own
/// thread and without starting the concurrency runtime.
/// What happens during a call (observer events, scheduled work, validation answers nobody waited
/// for) reaches the `delegate` at once, in order, and `changes(in:)` streams after the call.
public actor Cache {
    /// The actor's executor: a serial Dispatch queue, so `withIsolation` can enter it synchronously.
    private nonisolated let executor: CacheExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let engine: CacheEngine
    let clock: (any CacheClock)?
    /// Live mode: `clock` is set.
    let isLive: Bool
    let asyncOrigin: AsyncOrigin?
    /// Reads waiting for a request, by its id: an app's `get` suspended in live mode, or a read
    /// started with `startRead` whose result goes to the delegate.
    var waiting: [UInt64: [WaitingRead]] = [:]
    /// Live mode: an app's HTTP reads and requests suspended until their request completes, by its id.
    var httpWaiting: [UInt64: [(pending: HTTPReadResult, resume: @Sendable (HTTPReadResult) -> Void)]] = [:]
    var streams: [Int: (scope: WatchScope, continuation: AsyncStream<CacheEvent>.Continuation)] = [:]
    private var nextStream = 0
    // Unchecked exclusivity: only appended to, read whole and emptied, calling no other code
    // meanwhile, so no two accesses overlap; `finish()` reads it after every call.
    @exclusivity(unchecked) var streamEvents: [CacheEvent] = []
    /// Live mode: the due time the timer task sleeps until, if one is running.
    var timerDue: Int64?
    private let relay: EngineRelay
    /// Where calls, steps, requests and events are noted while recording (`startRecording`).
    var recorder: CacheRecorder?
    /// The sequence number when the engine last stepped its clock.
    var lastStepSeq: UInt64 = 0
    /// While recording: the time of the last call and the sequence number of the step before it.
    var callMark: (time: Int64, stepSeq: UInt64) = (.min, 0)
    /// Live mode: how many restores the cache has had. A call carries the count it started
    /// under, and its answer is for no restored request (whose ids may be those of requests
    /// sent before the restore).
    var restores: UInt64 = 0

    // Unchecked exclusivity (the next three): each is only ever loaded or assigned whole, never
    // passed inout or held in an access across a call (a call on the delegate or the tap runs on
    // the reference or closure loaded, after the load's access ended), so no two accesses to one
    // can overlap; checked, every change noted paid a dynamic access check (about 75
    // instructions) to load the tap.
    /// Hears what happens inside each call, synchronously and in order (the shell prints it).
    @exclusivity(unchecked) public weak var delegate: (any CacheDelegate)?
    /// An inspector's tap on every change with its cause (`setChangeTap`, Cache+Inspection.swift);
    /// nil when nobody inspects.
    @exclusivity(unchecked) var changeTap: (@Sendable (CacheEvent) -> Void)?
    /// What `reportsAllChanges` was set to (the engine reports every change while this or the tap asks).
    @exclusivity(unchecked) var allChangesRequested = false

    /// A cache on the virtual clock over a synchronous origin (a simulated server, a test double).
    /// - Parameter clockStart: the virtual clock's start, ms since the Unix epoch (SPEC §2).
    public init(origin: sending any Origin = NoOrigin(), clockStart: Int64 = TimeText.virtualEpochMs) {
        executor = CacheExecutor()
        engine = CacheEngine(origin: origin, clockStart: clockStart)
        clock = nil
        isLive = false
        asyncOrigin = nil
        relay = EngineRelay()
        engine.delegate = relay
        engine.relay = .passUnretained(relay)
        relay.engine = engine
        relay.cache = self
    }

    /// A live cache over an app's asynchronous fetch (and mutate) functions and a clock.
    /// - Parameters:
    ///   - fetch: answers the keys it can; a key it leaves out is "not found"; throwing fails the request.
    ///   - mutate: sends a mutation; nil fails every mutation ("no mutate function").
    ///   - clock: the system clock, or an injected one in tests.
    ///   - requestTimeout: ms after which a call that has not answered fails, for namespaces
    ///     without `timeout=` (a call that never returns is a failure, never a hang).
    ///   - http: sends an HTTP namespace's requests (method, target key, fields) and returns the
    ///     answer; nil: they are fetches of their key.
    public init(fetch: @escaping @Sendable ([String]) async throws -> [String: JSONValue],
                mutate: (@Sendable (MutationRequest) async throws -> [String: JSONValue])? = nil,
                clock: any CacheClock = SystemClock(), requestTimeout: Int64 = 30_000,
                http: (@Sendable (HTTPRequest) async throws -> HTTPAnswer)? = nil) {
        let origin = AsyncOrigin()
        executor = CacheExecutor()
        engine = CacheEngine(origin: origin, clockStart: clock.nowMs())
        self.clock = clock
        isLive = true
        asyncOrigin = origin
        engine.liveTimeout = requestTimeout
        origin.fetchFunction = fetch
        origin.mutateFunction = mutate
        origin.httpFunction = http
        relay = EngineRelay()
        engine.delegate = relay
        engine.relay = .passUnretained(relay)
        relay.engine = engine
        relay.cache = self
    }

    /// A client cache on another's clock (SPEC §2 Clients): the same executor, the same clock
    /// start and time, an empty engine, joined to `group` at `place`.
    private init(sharing executor: CacheExecutor, group: ClockGroup, clockStart: Int64, now: Int64) {
        self.executor = executor
        let engine = CacheEngine(origin: NoOrigin(), clockStart: clockStart)
        engine.now = now
        engine.clockGroup = group
        self.engine = engine
        clock = nil
        isLive = false
        asyncOrigin = nil
        relay = EngineRelay()
        engine.delegate = relay
        engine.relay = .passUnretained(relay)
        relay.engine = engine
        relay.cache = self
        engine.clockPlace = group.join(self, engine: engine)
    }

    /// A new, empty cache on this cache's virtual clock (the shell's `client`, SPEC §2 Clients):
    /// it runs on this cache's executor, so code isolated to either may enter the other with
    /// `assumeIsolated`, and the scheduled work of all the caches made so runs in one order,
    /// (due time, the order the caches were made in, each one's sequence), whichever of them
    /// moves the clock. Give it an origin, a delegate and a configuration before use.
    /// Not for a live cache (its clock is the app's).
    public func makeClient() -> Cache {
        precondition(!isLive, "a live cache has no virtual clock to share")
        let group: ClockGroup
        if let existing = engine.clockGroup {
            group = existing
        } else {
            group = ClockGroup(queue: executor.queue)
            engine.clockGroup = group
            engine.clockPlace = group.join(self, engine: engine)
        }
        return Cache(sharing: executor, group: group, clockStart: engine.clockStart, now: engine.now)
    }

    /// Runs `body` isolated to `other`, a cache made by ``makeClient()`` from this one (or this
    /// one made from it, or two made from a third), synchronously, from code isolated to this
    /// cache: the session of several clients runs each client's command in its own cache.
    /// - Precondition: `other` runs on this cache's executor.
    public func withClient<T>(_ other: Cache, _ body: (isolated Cache) -> T) -> T {
        precondition(other.executor === executor, "withClient: the caches do not share an executor")
        // Safe: both caches run on one serial executor and this code runs on it now (we are
        // isolated to `self`), so `other`'s isolation holds here as it would after a hop, and
        // `body` runs synchronously on this thread before we return. The compiler cannot see
        // that two actors share an executor, so `body` is called through the same function
        // type without the `isolated` mark (the same calling convention: the parameter is an
        // ordinary one either way); `checkIsolated` still asserts the queue in `assumeIsolated`.
        return withoutActuallyEscaping(body) { body in
            let plain = unsafeBitCast(body, to: ((Cache) -> T).self)
            return plain(other)
        }
    }

    /// Runs `body` isolated to the cache on the calling thread, after any call in progress: how a
    /// synchronous program (the `cachesh` executable) drives the cache with no task hop.
    /// Never call it from code already isolated to this cache: that waits for itself.
    public nonisolated func withIsolation<T: Sendable>(_ body: (isolated Cache) throws -> T) rethrows -> T {
        try executor.queue.sync { try assumeIsolated(body) }
    }

    /// Sets the delegate (from code isolated to this cache).
    public func setDelegate(_ delegate: (any CacheDelegate)?) { self.delegate = delegate }

    /// Replaces the origin (virtual mode): the shell attaches its simulated server.
    public func useOrigin(_ origin: any Origin) { engine.replaceOrigin(origin) }

    // MARK: Time

    /// The current time, ms since the Unix epoch (virtual, or the clock's as of the last call).
    public var now: Int64 { engine.now }
    /// Where the virtual clock started; `now - clockStart` is the session's elapsed time.
    public var clockStart: Int64 { engine.clockStart }
    /// The global sequence number of the last event (SPEC §1.1); changes whenever anything does.
    public var sequence: UInt64 { engine.seq }
    /// The number of cached entries.
    public var count: Int { engine.count }

    /// Moves the virtual clock forward, running everything due on the way in (time, sequence) order.
    /// - Throws: `CacheError` when more than `CacheEngine.runawayLimit` items run in one command.
    /// - Complexity: O(k log h) for k items run out of h scheduled.
    public func advance(by duration: Int64) throws(CacheError) {
        defer {
            noteStep()
            finish()
        }
        try engine.advance(by: duration)
    }

    /// Lets at most `items` more scheduled items (requests' completions, polls, retries, `at`
    /// commands; not expiries) run from now on, in all commands: past that, a command that would
    /// run another fails (`stopped after running N scheduled items in all (REASON)`), keeping
    /// what it ran, as one stopped by the runaway limit does. The shell sets it for a stranger's
    /// input (`--safe`, `--verify`; SPEC §7.1).
    public func setScheduledBudget(_ items: Int, reason: String) { engine.setScheduledBudget(items, reason: reason) }

    /// Lets `items` more scheduled items run, when `setScheduledBudget` set a budget (more of a
    /// streamed input was read); nothing otherwise.
    public func growScheduledBudget(by items: Int) { engine.growScheduledBudget(by: items) }

    /// Starts the runaway limit's count afresh. The limit (a million items, SPEC §7)
    /// stops a unit of work that runs more scheduled items than it (requests' completions, polls,
    /// retries, external work; not expiries): a program that drives the virtual clock in units of
    /// its own calls this at the start of each (the shell: at each command). Live mode counts each
    /// step of the clock as one unit by itself.
    public func resetRunawayCount() { engine.beginUnitOfWork() }

    /// An external timer: `delay` ms from now, in (time, sequence) order with the cache's own
    /// work, the delegate's `cache(_:runScheduled:)` gets `token`, the caller's name for the work
    /// (the shell runs its `at` commands so). Never runs inline; snapshots keep it
    /// (`makeSnapshot(scheduledCommand:)`, `restore(_:scheduleCommand:)`).
    /// - Returns: the item's id. - Complexity: O(log h).
    @discardableResult
    public func schedule(after delay: Int64, token: Int) -> UInt64 {
        noting(.unsupported("schedule"), { _ in .nothing }) { engine.schedule(after: delay, token: token) }
    }

    /// Forgets all work scheduled with `schedule(after:token:)` (its tokens never reach the delegate).
    public func cancelScheduledWork() { engine.cancelScheduledCommands() }

    // MARK: Configuration

    /// Applies a whole configuration (namespaces, push rules, id field).
    /// - Returns: keys whose times changed. - Throws: `CacheError` for an invalid policy; nothing changes then.
    @discardableResult
    public func configure(_ configuration: CacheConfiguration) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.configure(configuration), RecordedReturn.keys) { () throws(CacheError) in try engine.configure(configuration) }
    }

    /// Defines or changes one namespace's policy (B1); existing entries get the new times.
    /// - Returns: keys evicted or re-timed. - Throws: `CacheError` for an invalid name or policy.
    @discardableResult
    public func defineNamespace(_ name: String, _ change: PolicyChange) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.defineNamespace(name: name, change: change), { .policy(engine.policy(of: name), keys: $0) }) {
            () throws(CacheError) in try engine.defineNamespace(name, change)
        }
    }

    /// The policy of a namespace (the default policy for one never defined).
    public func policy(of namespace: String) -> Policy { engine.policy(of: namespace) }

    /// What is known of `key`'s entry (times, why it is in its state, pending changes, recency),
    /// or nil when it is not cached. Touches nothing.
    /// - Complexity: O(entries).
    public func details(of key: String) -> EntryDetails? { engine.details(of: key) }

    /// Report every change to an entry to the delegate (`cache(_:noted:)`), watched or not, as an
    /// observer line would show it; off by default.
    public var reportsAllChanges: Bool {
        get { allChangesRequested }
        set {
            allChangesRequested = newValue
            engine.reportsAllChanges = newValue || changeTap != nil
        }
    }

    /// The name of every namespace the cache has met: defined by `ns` or a configuration, or the
    /// namespace of a key it has held or been asked for, even if it holds nothing now; sorted.
    /// - Complexity: O(namespaces log namespaces).
    public func knownNamespaces() -> [String] { engine.knownNamespaces() }
    /// Whether `name` is a known namespace. - Complexity: O(1) on average.
    public func isKnownNamespace(_ name: String) -> Bool { engine.isKnownNamespace(name) }

    /// Every namespace: defined ones and those created by a key, in creation order, with entry counts.
    /// - Complexity: O(namespaces).
    public func namespacePolicies() -> [(name: String, policy: Policy, defined: Bool, count: Int)] {
        engine.namespacePolicies()
    }

    /// The push rules by type (B9).
    public var pushRules: [String: PushRule] { engine.pushRules }
    /// The id field of entities (B8).
    public var idField: String { engine.idField }

    // MARK: Reads

    /// The app's read (B3–B5), awaited. Fresh and stale entries return at once (stale ones are
    /// refreshed in the background); an absent or expired key waits for its fetch: on the virtual
    /// clock the clock runs to the answer, in live mode the call suspends until it arrives.
    /// - Throws: `CacheError` only when the virtual clock runs away (SPEC §7) or would wait until
    ///   its end (SPEC §2).
    public func get(_ key: String, force: Bool = false) async throws(CacheError) -> ReadResult {
        guard asyncOrigin != nil else { return try read(key, force: force) }
        sync()
        let (result, waitFor) = try startAwaitedRead(key, force: force)
        finish()
        guard let id = waitFor else { return result }
        return await withCheckedContinuation { continuation in
            waiting[id, default: []].append(WaitingRead(key: key, continuation: continuation))
        }
    }

    /// The keys of the reads waiting for their requests (`startRead`, an app's suspended `get`),
    /// sorted, each once: a snapshot does not hold them.
    public var waitingReadKeys: [String] {
        Array(Set(waiting.values.joined().map(\.key))).sorted()
    }

    /// The app's awaited read without awaiting it (the shell's `get --async`): what `get` does,
    /// but when the read has to wait for its request, its result goes to the delegate's
    /// `cache(_:finishedRead:)` as the request completes.
    /// - Returns: the result when the read is served at once (`waiting` false); otherwise what
    ///   the cache has now and `waiting` true.
    public func startRead(_ key: String, force: Bool = false) throws(CacheError) -> (result: ReadResult, waiting: Bool) {
        sync()
        defer { finish() }
        let (result, waitFor) = try startAwaitedRead(key, force: force)
        guard let id = waitFor else { return (result, false) }
        waiting[id, default: []].append(WaitingRead(key: key, continuation: nil))
        return (result, true)
    }

    private func startAwaitedRead(_ key: String, force: Bool) throws(CacheError) -> (ReadResult, UInt64?) {
        try tryNoting(.get(key: key, force: force, mode: .async), { $0.1 == nil ? .read($0.0) : .waiting }) {
            () throws(CacheError) in try engine.startAwaitedRead(key, force: force)
        }
    }

    /// The read as one synchronous step (the shell's `get`).
    /// - Parameters:
    ///   - force: always send a new request and wait for it.
    ///   - nowait: return at once with what the cache has; the request starts as usual.
    ///     In live mode every `read` is `nowait`: only `get` suspends.
    /// - Throws: `CacheError` when the virtual clock runs away (SPEC §7) or would wait until its
    ///   end (SPEC §2: nothing changes then).
    /// - Complexity: a hit is O(1).
    public func read(_ key: String, force: Bool = false, nowait: Bool = false) throws(CacheError) -> ReadResult {
        sync()
        defer { finish() }
        let nowait = nowait || asyncOrigin != nil
        return try tryNoting(.get(key: key, force: force, mode: nowait ? .nowait : .blocking), RecordedReturn.read) {
            () throws(CacheError) in try engine.get(key, force: force, nowait: nowait)
        }
    }

    /// Bulk read (B7): one request for every key that needs one; waits (virtual clock) only when a
    /// key is expired or absent, and never with `nowait` or in live mode (as `read`).
    /// - Returns: results in the order asked.
    public func mget(_ keys: [String], nowait: Bool = false) throws(CacheError) -> [ReadResult] {
        sync()
        defer { finish() }
        let nowait = nowait || asyncOrigin != nil
        return try tryNoting(.mget(keys: keys, nowait: nowait), RecordedReturn.reads) { () throws(CacheError) in
            try engine.mget(keys, nowait: nowait)
        }
    }

    /// Reads every cached page of the paged list `key` (`KEY@1`, `KEY@2`, ...; page 1 when none
    /// is cached): as `mget` of them, or with `refetch` one new request for every page (an
    /// infinite query's refetch). Never waits with `nowait` or in live mode (as `mget`).
    /// - Returns: one result per page, in page order.
    public func pages(_ key: String, refetch: Bool = false, nowait: Bool = false) throws(CacheError) -> [ReadResult] {
        sync()
        defer { finish() }
        let nowait = nowait || asyncOrigin != nil
        return try tryNoting(.pages(key: key, refetch: refetch, nowait: nowait), RecordedReturn.reads) { () throws(CacheError) in
            try engine.readPages(key, refetch: refetch, nowait: nowait)
        }
    }

    /// Reads the page after the list's last cached page (`KEY@1` when none is) as `read` of it
    /// does: an infinite query's `fetchNextPage` (SPEC §1.1 Pages; `next-page-drops-writes`, §1.2).
    public func nextPage(_ key: String, nowait: Bool = false) throws(CacheError) -> ReadResult {
        sync()
        defer { finish() }
        let nowait = nowait || asyncOrigin != nil
        return try tryNoting(.pages(key: key, refetch: false, nowait: nowait, next: true), { .reads([$0]) }) { () throws(CacheError) in
            try engine.nextPage(key, nowait: nowait)
        }
    }

    /// The keys of the paged list's cached pages, `KEY@1` up to the first page not cached.
    public func pageKeys(of key: String) -> [String] {
        sync()
        return engine.pageKeys(of: key)
    }

    /// What the cache holds for a key, without touching recency, statistics or the origin.
    public func peek(_ key: String) -> ReadResult {
        sync()
        return noting(.peek(key: key), RecordedReturn.read) { engine.peek(key) }
    }

    /// An access without a read (the shell's `touch`, as redis's TOUCH): a fresh or stale entry
    /// moves in its eviction order as a read would move it (LRU: the most recently used; SIEVE:
    /// visited; LFU: one more use; FIFO: no change), and nothing else changes: no statistic,
    /// request, value or time. - Returns: the key touched; none when it is absent or expired.
    /// - Complexity: O(1).
    @discardableResult
    public func touch(_ key: String) -> [String] {
        sync()
        defer { finish() }
        return noting(.touch(key: key), RecordedReturn.keys) { engine.touch(key) }
    }

    /// Cached entries matching a glob (all when nil), sorted by key, with state and age.
    /// - Complexity: O(n · pattern) for n entries.
    public func keys(matching pattern: Glob? = nil) -> [(key: String, state: EntryState, ageMs: Int64)] {
        sync()
        return noting(.keys(pattern: pattern?.pattern), { .entries($0.map { KeyEntry(key: $0.key, state: $0.state, ageMs: $0.ageMs) }) }) {
            engine.keys(matching: pattern)
        }
    }

    /// Every key with its state and time to expiry, for completion. - Complexity: O(n).
    public func keySummaries() -> [(key: String, state: EntryState, expiresInMs: Int64)] { engine.keySummaries() }

    /// Tags of cached entries, sorted. - Complexity: O(tags).
    public func tagsInUse() -> [String] { engine.tagsInUse() }

    // MARK: Writes

    /// Stores a value fresh (B1/B12: a local write is newer than any answer in flight).
    /// - Returns: the keys evicted to make room. - Complexity: O(1) amortized plus the value's ids.
    @discardableResult
    public func put(_ key: String, _ value: JSONValue, tags: [String] = []) -> [String] {
        sync()
        defer { finish() }
        return noting(.put(key: key, value: value, tags: tags), RecordedReturn.keys) { engine.put(key, value, tags: tags) }
    }

    /// `put` of a value in its stored form (the shell's, read from its JSON text without a tree).
    @discardableResult
    public func put(_ key: String, _ value: StoredValue, tags: [String] = []) -> [String] {
        sync()
        defer { finish() }
        return noting(.put(key: key, value: value.json, tags: tags), RecordedReturn.keys) { engine.put(key, value, tags: tags) }
    }

    /// Expires a key now, or `in` ms from now (an override of its policy). - Returns: the keys changed.
    @discardableResult
    public func expire(_ key: String, in delay: Int64? = nil) -> [String] {
        sync()
        defer { finish() }
        return noting(.expire(key: key, in: delay), RecordedReturn.keys) { engine.expire(key, in: delay) }
    }

    /// Marks a key, a namespace or a tag stale (B9); answers in flight are then stored stale.
    /// - Returns: the keys invalidated. - Complexity: O(k) for k keys matched.
    @discardableResult
    public func invalidate(_ target: Target) -> [String] {
        sync()
        defer { finish() }
        return noting(.invalidate(target), RecordedReturn.keys) { engine.invalidate(target) }
    }

    /// Removes a key; answers in flight for it are discarded. - Returns: the keys removed.
    @discardableResult
    public func evict(_ key: String) -> [String] {
        sync()
        defer { finish() }
        return noting(.evict(key: key), RecordedReturn.keys) { engine.evict(key) }
    }

    /// Removes every entry (of one namespace). - Returns: the keys removed. - Complexity: O(n).
    @discardableResult
    public func clear(namespace: String? = nil) -> [String] {
        sync()
        defer { finish() }
        return noting(.clear(namespace: namespace), RecordedReturn.keys) { engine.clear(namespace: namespace) }
    }

    /// The system's memory warning (B13): evicts purgeable namespaces. - Returns: the keys removed.
    @discardableResult
    public func memoryWarning() -> [String] {
        sync()
        defer { finish() }
        return noting(.memoryWarning, RecordedReturn.keys) { engine.memoryWarning() }
    }

    // MARK: Mutations, events, push, validation

    /// An optimistic mutation of one key (B11): applied at once, sent to the origin, confirmed or
    /// rolled back; a key not cached yet gets the patch on its answer (`MutationOptions` for the other
    /// kinds). - Throws: `CacheError` when the patch does not apply.
    @discardableResult
    public func mutate(_ key: String, patch: Patch, options: MutationOptions = MutationOptions()) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.mutate(key: key, patch: patch.document, options: options),
                             RecordedReturn.keys) {
            () throws(CacheError) in try engine.mutate(key, patch: patch, options: options)
        }
    }

    /// An optimistic mutation of an entity in every entry embedding it (B8, B11).
    /// - Throws: `CacheError` when no cached entry embeds the entity or the patch does not apply.
    @discardableResult
    public func mutate(entity id: String, patch: Patch, options: MutationOptions = MutationOptions()) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.mutateEntity(id: id, patch: patch.document, options: options),
                             RecordedReturn.keys) {
            () throws(CacheError) in try engine.mutate(entity: id, patch: patch, options: options)
        }
    }

    /// A realtime patch of one key (B8); `own` marks the echo of this client's own mutation
    /// (skipped); `version`, the server version it reflects (SPEC §1.1 Versions: an entry already
    /// at that version or newer skips it).
    /// - Returns: the keys patched. - Throws: `CacheError` when the patch does not apply.
    @discardableResult
    public func event(_ key: String, patch: Patch, own: Bool = false, version: UInt64? = nil) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.event(key: key, patch: patch.document, own: own, version: version), RecordedReturn.keys) {
            () throws(CacheError) in try engine.event(key, patch: patch, own: own, version: version)
        }
    }

    /// A realtime patch of an entity wherever it is cached (B8). - Complexity: O(k) for k entries embedding it.
    @discardableResult
    public func event(entity id: String, patch: Patch, own: Bool = false) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.eventEntity(id: id, patch: patch.document, own: own), RecordedReturn.keys) {
            () throws(CacheError) in try engine.event(entity: id, patch: patch, own: own)
        }
    }

    /// Throws what `event(key, patch:own:version:)` would throw, changing nothing (an event
    /// checked on every client before it reaches any).
    public func checkEvent(_ key: String, patch: Patch, version: UInt64? = nil) throws(CacheError) {
        try engine.checkEvent(key, patch: patch, version: version)
    }

    /// Throws what `event(entity:patch:own:)` would throw, changing nothing.
    public func checkEvent(entity id: String, patch: Patch) throws(CacheError) {
        try engine.checkEvent(entity: id, patch: patch)
    }

    /// Throws what `push(type, arguments:)` would throw, changing nothing.
    public func checkPush(_ type: String, arguments: [String: String]) throws(CacheError) {
        try engine.checkPush(type, arguments: arguments)
    }

    /// A push notification (B9): runs the rule for `type` with its arguments.
    /// - Returns: the keys acted on. - Throws: `CacheError` for a missing argument.
    @discardableResult
    public func push(_ type: String, arguments: [String: String]) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.push(type: type, arguments: arguments), RecordedReturn.keys) {
            () throws(CacheError) in try engine.push(type, arguments: arguments)
        }
    }

    /// The validation handshake (B10); with `wait` the virtual clock runs to the answer.
    public func validate(items: Bool, wait: Bool = true) throws(CacheError) -> ValidationResult {
        sync()
        defer { finish() }
        let wait = wait && asyncOrigin == nil
        return try tryNoting(.validate(items: items, wait: wait), RecordedReturn.validation) {
            () throws(CacheError) in try engine.validate(items: items, wait: wait)
        }
    }

    /// The origin came back: queued mutations are replayed in order (B11).
    public func originDidComeOnline() {
        sync()
        defer { finish() }
        noting(.originOnline, { RecordedReturn.nothing }) { engine.originDidComeOnline() }
    }

    // MARK: Inspection

    /// Everything scheduled: requests in flight, queued mutations, scheduled commands, by due time.
    public func pendingWork() -> [PendingItem] { engine.pendingWork() }

    /// Counters of one namespace, or of all. - Complexity: O(1).
    public func stats(namespace: String? = nil) -> Stats { engine.stats(namespace: namespace) }
    /// Counters of every namespace in creation order.
    public func statsByNamespace() -> [(name: String, stats: Stats)] { engine.statsByNamespace() }
    /// Sets every counter to zero.
    public func resetStats() { noting(.resetStats, { RecordedReturn.nothing }) { engine.resetStats() } }

    /// Every request sent, in order, with its fate (the server log).
    public var requestLog: [RequestLogEntry] { engine.requestLog }
    /// How many of the oldest request log lines were dropped to keep it bounded (`ServerLog.limit`).
    public var requestLogDropped: Int { engine.requestLogDropped }
    /// The most lines the request log keeps after dropping old ones.
    public static var requestLogLimit: Int { ServerLog.limit }
    /// Forgets the request log.
    public func clearRequestLog() { noting(.clearRequestLog, { RecordedReturn.nothing }) { engine.clearRequestLog() } }

    // MARK: Observers (B15)

    /// Reports changes in `scope` to the delegate (`cache(_:observed:)`).
    public func watch(_ scope: WatchScope) { noting(.watch(scope), { RecordedReturn.nothing }) { engine.watch(scope) } }

    /// Stops reporting `scope` (every scope when nil). - Returns: whether it was watched.
    @discardableResult
    public func unwatch(_ scope: WatchScope?) -> Bool {
        noting(.unwatch(scope), { scope == nil ? .nothing : .watched($0) }) { engine.unwatch(scope) }
    }

    /// The scopes watched, sorted.
    public var watchedScopes: [WatchScope] { engine.watchedScopes }

    /// A stream of every change in `scope`, delivered after each call. Ends when the task
    /// iterating it is cancelled.
    public func changes(in scope: WatchScope) -> AsyncStream<CacheEvent> {
        let (stream, continuation) = AsyncStream<CacheEvent>.makeStream()
        let id = nextStream
        nextStream += 1
        streams[id] = (scope, continuation)
        watch(scope)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.endStream(id) }
        }
        return stream
    }

    private func endStream(_ id: Int) {
        guard let ended = streams.removeValue(forKey: id) else { return }
        if !streams.values.contains(where: { $0.scope == ended.scope }) { unwatch(ended.scope) }
    }

    // MARK: Snapshots and stores (SPEC §5.2–5.3)

    /// The whole state as a snapshot document; `scheduledCommand` gives the fields written beside
    /// each scheduled command's token. - Complexity: O(size of the state).
    public func makeSnapshot(scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] }) -> JSONValue {
        engine.makeSnapshot(scheduledCommand: scheduledCommand)
    }

    /// The snapshot document as text, pretty (a snapshot file's form) or compact: the bytes of
    /// `makeSnapshot(scheduledCommand:)` printed, written in one pass without the document.
    /// - Complexity: O(size of the state).
    public func snapshotText(pretty: Bool, scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] }) -> String {
        engine.snapshotText(pretty: pretty, scheduledCommand: scheduledCommand)
    }

    /// Checks a decoded snapshot's origin state as `restore` does first, without changing anything.
    public func checkOrigin(of snapshot: Snapshot) throws(SnapshotError) { try engine.checkOrigin(of: snapshot) }

    /// Replaces the whole state with a decoded snapshot; `scheduleCommand` turns each scheduled
    /// command back into a token.
    /// - Throws: `SnapshotError` when the origin refuses the snapshot's origin settings; then
    ///   nothing changed and nothing is recorded.
    public func restore(_ snapshot: Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) throws(SnapshotError) {
        try engine.checkOrigin(of: snapshot)
        // The requests in flight are the snapshot's from here on, and its ids may be those of
        // requests sent before: a read awaiting one of those ends at the restore, with its key as
        // restored (as one whose request a restore dropped always did), never with a restored
        // request's answer.
        let dropped = waiting, droppedHTTP = httpWaiting
        waiting = [:]
        httpWaiting = [:]
        noting(.restore(snapshot: makeSnapshot()), { RecordedReturn.nothing }) {
            // Calls not started yet are for requests the restore drops.
            _ = asyncOrigin?.takeStarted()
            engine.restoreChecked(snapshot, scheduleCommand: scheduleCommand)
            restores &+= 1
            // The restored request log is the snapshot's: no request of it was sent here.
            recorder?.skipSent(engine)
            // Inside the call, as the shell's `restore` ends its reads waiting (a replay's).
            for id in dropped.keys.sorted() { finishReads(dropped[id]!, request: id) }
            for id in droppedHTTP.keys.sorted() {
                for reader in droppedHTTP[id]! { reader.resume(engine.finishAwaitedHTTP(id, pending: reader.pending)) }
            }
        }
        finish()
    }

    /// Starts noting what changes, for `takeChanges` (a persistent store).
    public func startTrackingChanges(everything: Bool) { engine.startTrackingChanges(everything: everything) }

    /// The rows that changed since the last call, the entry rows written into `rows`' buffers
    /// (emptied first; see `CacheEngine.takeChanges`).
    public func takeChanges(scheduledCommand: (Int) -> [String: JSONValue] = { _ in [:] },
                            reusing rows: consuming StoredEntryRows = StoredEntryRows()) -> StoreChanges {
        engine.takeChanges(scheduledCommand: scheduledCommand, reusing: consume rows)
    }

    /// The changes last taken were not committed: the next `takeChanges` writes everything anew.
    public func changesNotCommitted() { engine.changesNotCommitted() }
}

// MARK: - Calls

/// A call on the cache with its arguments: what `Cache`'s methods record (`noting`), what a
/// recording's file holds (`RecordingFormat`, in the fields written here), and what CacheShell's
/// commands name (`CommandSpec`) and write back as commands (`RecordingTranscript`).
///
/// Adding a core operation: its engine method, its `Cache` method and case here (the case, its
/// `kind`, its fields in `recordedFields` and `init(recorded:)`: each switch is exhaustive, so a
/// case left out does not compile), and its shell command, which names the kind it writes.
public enum CacheCall: Sendable, Equatable {
    case get(key: String, force: Bool, mode: ReadMode)
    case mget(keys: [String], nowait: Bool = false)
    /// The pages of a paged list read (`refetch`: all refetched), SPEC §1.1 Pages.
    /// `next`: the page after the last one cached was read (`refetch` is then false).
    case pages(key: String, refetch: Bool, nowait: Bool = false, next: Bool = false)
    case peek(key: String)
    case touch(key: String)
    case keys(pattern: String?)
    case put(key: String, value: JSONValue, tags: [String])
    case expire(key: String, in: Int64?)
    case invalidate(Target)
    case evict(key: String)
    case clear(namespace: String?)
    case memoryWarning
    /// `patch` is the patch's document.
    case mutate(key: String, patch: JSONValue, options: MutationOptions = MutationOptions())
    case mutateEntity(id: String, patch: JSONValue, options: MutationOptions = MutationOptions())
    /// `version`: the server version the event reflects (SPEC §1.1 Versions), recorded only when given.
    case event(key: String, patch: JSONValue, own: Bool, version: UInt64? = nil)
    case eventEntity(id: String, patch: JSONValue, own: Bool)
    case push(type: String, arguments: [String: String])
    case validate(items: Bool, wait: Bool)
    case originOnline
    case defineNamespace(name: String, change: PolicyChange)
    case watch(WatchScope)
    case unwatch(WatchScope?)
    case resetStats
    case clearRequestLog
    case cancel(key: String)
    case setActive(key: String, active: Bool)
    case clearActive
    case focus
    case poll(key: String, every: Int64)
    case unpoll(key: String)
    case unpollAll
    /// The whole configuration applied.
    case configure(CacheConfiguration)
    /// A snapshot restored: the cache's state just after it, as a snapshot document.
    case restore(snapshot: JSONValue)
    /// An HTTP read (`httpRead`): its key, request fields and whether it waited.
    case httpGet(key: String, request: HTTPFields, nowait: Bool)
    /// An HTTP request of an unsafe method or HEAD (`httpRequest`).
    case httpRequest(method: String, key: String, request: HTTPFields, body: JSONValue?, nowait: Bool)
    /// A call a transcript cannot replay (`schedule`: work of the app's own), by name.
    case unsupported(String)

    /// The kind of a call, named as a recording writes it (its `name` field).
    public enum Kind: String, Sendable, CaseIterable {
        case get, mget, pages, peek, touch, keys, put, expire, invalidate, evict, clear
        case memoryWarning = "memory-warning", mutate, mutateEntity = "mutate-entity", event, eventEntity = "event-entity"
        case push, validate, originOnline = "origin-online", defineNamespace = "define-namespace", watch, unwatch
        case resetStats = "reset-stats", clearRequestLog = "clear-request-log", cancel, setActive = "set-active"
        case clearActive = "clear-active", focus, poll, unpoll, unpollAll = "unpoll-all", configure, restore, unsupported
        case httpGet = "http-get", httpRequest = "http-request"
    }

    public var kind: Kind {
        switch self {
        case .get: .get
        case .mget: .mget
        case .pages: .pages
        case .peek: .peek
        case .touch: .touch
        case .keys: .keys
        case .put: .put
        case .expire: .expire
        case .invalidate: .invalidate
        case .evict: .evict
        case .clear: .clear
        case .memoryWarning: .memoryWarning
        case .mutate: .mutate
        case .mutateEntity: .mutateEntity
        case .event: .event
        case .eventEntity: .eventEntity
        case .push: .push
        case .validate: .validate
        case .originOnline: .originOnline
        case .defineNamespace: .defineNamespace
        case .watch: .watch
        case .unwatch: .unwatch
        case .resetStats: .resetStats
        case .clearRequestLog: .clearRequestLog
        case .cancel: .cancel
        case .setActive: .setActive
        case .clearActive: .clearActive
        case .focus: .focus
        case .poll: .poll
        case .unpoll: .unpoll
        case .unpollAll: .unpollAll
        case .configure: .configure
        case .restore: .restore
        case .unsupported: .unsupported
        case .httpGet: .httpGet
        case .httpRequest: .httpRequest
        }
    }
}

extension CacheCall {
    /// The call's fields in a recording (SPEC §5.6), its `name` (`kind`) included.
    var recordedFields: [String: JSONValue] {
        typealias F = RecordingFormat
        var f: [String: JSONValue]
        switch self {
        case .get(let key, let force, let mode): f = ["key": .string(key), "force": .bool(force), "mode": .string(mode.rawValue)]
        case .mget(let keys, let nowait):
            f = ["keys": F.strings(keys)]
            if nowait { f["nowait"] = .bool(true) }
        case .pages(let key, let refetch, let nowait, let next):
            f = ["key": .string(key)]
            if refetch { f["refetch"] = .bool(true) }
            if next { f["next"] = .bool(true) }
            if nowait { f["nowait"] = .bool(true) }
        case .peek(let key): f = ["key": .string(key)]
        case .touch(let key): f = ["key": .string(key)]
        case .keys(let pattern): f = ["pattern": pattern.map(JSONValue.string) ?? .null]
        case .put(let key, let value, let tags): f = ["key": .string(key), "value": value, "tags": F.strings(tags)]
        case .expire(let key, let delay): f = ["key": .string(key), "in": F.optional(delay)]
        case .invalidate(let target): f = ["target": .string(F.targetText(target))]
        case .evict(let key): f = ["key": .string(key)]
        case .clear(let namespace): f = ["namespace": namespace.map(JSONValue.string) ?? .null]
        case .memoryWarning, .originOnline, .resetStats, .clearRequestLog, .clearActive, .focus, .unpollAll: f = [:]
        case .mutate(let key, let patch, let options): f = F.mutationFields(options, ["key": .string(key), "patch": patch])
        case .mutateEntity(let id, let patch, let options): f = F.mutationFields(options, ["id": .string(id), "patch": patch])
        case .event(let key, let patch, let own, let version):
            f = ["key": .string(key), "patch": patch, "own": .bool(own)]
            if let version { f["version"] = .int(Int64(version)) }
        case .eventEntity(let id, let patch, let own): f = ["id": .string(id), "patch": patch, "own": .bool(own)]
        case .push(let type, let arguments): f = ["type": .string(type), "arguments": .object(arguments.mapValues(JSONValue.string))]
        case .validate(let items, let wait): f = ["items": .bool(items), "wait": .bool(wait)]
        case .defineNamespace(let name, let change): f = ["namespace": .string(name), "change": F.changeFields(change)]
        case .watch(let scope): f = ["scope": .string(F.scopeText(scope))]
        case .unwatch(let scope): f = ["scope": scope.map { .string(F.scopeText($0)) } ?? .null]
        case .cancel(let key): f = ["key": .string(key)]
        case .setActive(let key, let active): f = ["key": .string(key), "active": .bool(active)]
        case .poll(let key, let every): f = ["key": .string(key), "every": .int(every)]
        case .unpoll(let key): f = ["key": .string(key)]
        case .configure(let configuration): f = F.configurationFields(configuration)
        case .restore(let snapshot): f = ["snapshot": snapshot]
        case .unsupported(let name): f = ["call": .string(name)]
        case .httpGet(let key, let request, let nowait):
            f = ["key": .string(key), "headers": request.json]
            if nowait { f["nowait"] = .bool(true) }
        case .httpRequest(let method, let key, let request, let body, let nowait):
            f = ["method": .string(method), "key": .string(key), "headers": request.json]
            if let body { f["body"] = body }
            if nowait { f["nowait"] = .bool(true) }
        }
        f["name"] = .string(kind.rawValue)
        return f
    }

    /// The call a recording's fields give (`recordedFields` read back).
    /// - Throws: a `Diagnostic` naming the field at fault.
    init(recorded f: RecordingFields) throws(Diagnostic) {
        typealias F = RecordingFormat
        let name = try f.string("name")
        guard let kind = Kind(rawValue: name) else { throw f.fail("name", "unknown call \"\(name)\"") }
        switch kind {
        case .get: self = .get(key: try f.string("key"), force: try f.bool("force"), mode: try f.enumValue("mode", ReadMode.self))
        case .mget: self = .mget(keys: try f.strings("keys"), nowait: try f.flag("nowait"))
        case .pages: self = .pages(key: try f.string("key"), refetch: try f.flag("refetch"), nowait: try f.flag("nowait"),
                                   next: try f.flag("next"))
        case .peek: self = .peek(key: try f.string("key"))
        case .touch: self = .touch(key: try f.string("key"))
        case .keys: self = .keys(pattern: try f.optionalString("pattern"))
        case .put: self = .put(key: try f.string("key"), value: try f.value("value"), tags: try f.strings("tags"))
        case .expire: self = .expire(key: try f.string("key"), in: try f.optionalInt("in"))
        case .invalidate: self = .invalidate(Target(parsing: try f.string("target")))
        case .evict: self = .evict(key: try f.string("key"))
        case .clear: self = .clear(namespace: try f.optionalString("namespace"))
        case .memoryWarning: self = .memoryWarning
        case .mutate: self = .mutate(key: try f.string("key"), patch: try f.value("patch"), options: try F.mutationOptions(f))
        case .mutateEntity: self = .mutateEntity(id: try f.string("id"), patch: try f.value("patch"), options: try F.mutationOptions(f))
        case .event: self = .event(key: try f.string("key"), patch: try f.value("patch"), own: try f.bool("own"),
                                   version: f.has("version") ? try f.version("version") : nil)
        case .eventEntity: self = .eventEntity(id: try f.string("id"), patch: try f.value("patch"), own: try f.bool("own"))
        case .push:
            let args = try f.object("arguments")
            var arguments: [String: String] = [:]
            for name in args.fields.keys { arguments[name] = try args.string(name) }
            self = .push(type: try f.string("type"), arguments: arguments)
        case .validate: self = .validate(items: try f.bool("items"), wait: try f.bool("wait"))
        case .originOnline: self = .originOnline
        case .defineNamespace: self = .defineNamespace(name: try f.string("namespace"), change: try F.change(f.object("change")))
        case .watch: self = .watch(F.scope(try f.string("scope")))
        case .unwatch: self = .unwatch(try f.optionalString("scope").map(F.scope))
        case .resetStats: self = .resetStats
        case .clearRequestLog: self = .clearRequestLog
        case .cancel: self = .cancel(key: try f.string("key"))
        case .setActive: self = .setActive(key: try f.string("key"), active: try f.bool("active"))
        case .clearActive: self = .clearActive
        case .focus: self = .focus
        case .poll: self = .poll(key: try f.string("key"), every: try f.int("every"))
        case .unpoll: self = .unpoll(key: try f.string("key"))
        case .unpollAll: self = .unpollAll
        case .configure: self = .configure(try F.configuration(f))
        case .restore: self = .restore(snapshot: try f.value("snapshot"))
        case .unsupported: self = .unsupported(try f.string("call"))
        case .httpGet: self = .httpGet(key: try f.string("key"), request: try F.fields(f, "headers"), nowait: try f.flag("nowait"))
        case .httpRequest:
            self = .httpRequest(method: try f.string("method"), key: try f.string("key"), request: try F.fields(f, "headers"),
                                body: f.has("body") ? .some(try f.value("body")) : Optional<JSONValue>.none, nowait: try f.flag("nowait"))
        }
    }
}
