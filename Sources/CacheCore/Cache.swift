/// The cache an app embeds: a `CacheEngine` behind an actor.
///
/// Two ways to drive time:
/// - **Virtual** (`clock: nil`): time moves only through `advance(by:)` and blocking reads,
///   exactly as in the engine; every run is deterministic. This is how tests and the shell work.
/// - **Live** (`clock: SystemClock()` and an `AsyncOrigin`): before each call the engine is advanced
///   to the clock's time; requests go to the app's `async` fetch function and a blocking read
///   suspends until its answer is delivered.
///
/// Each method is one hop onto the actor; inside, everything is synchronous engine code.
public actor Cache {
    let engine: CacheEngine
    private let clock: (any CacheClock)?
    private let asyncOrigin: AsyncOrigin?
    private var waiting: [UInt64: [(key: String, continuation: CheckedContinuation<ReadResult, Never>)]] = [:]
    private var streams: [Int: (scope: WatchScope, continuation: AsyncStream<CacheEvent>.Continuation)] = [:]
    private var nextStream = 0
    private let relay = EventRelay()

    /// A cache over a synchronous origin (a simulated server), on the virtual clock.
    public init(origin: sending any Origin, clockStart: Int64 = TimeText.virtualEpochMs) {
        engine = CacheEngine(origin: origin, clockStart: clockStart)
        clock = nil
        asyncOrigin = nil
        engine.delegate = relay
    }

    /// A cache over an app's asynchronous fetch function, on a real (or injected) clock.
    public init(fetch: @escaping @Sendable ([String]) async throws -> [String: JSONValue],
                mutate: (@Sendable (MutationRequest) async throws -> [String: JSONValue])? = nil,
                clock: any CacheClock = SystemClock()) {
        let origin = AsyncOrigin()
        engine = CacheEngine(origin: origin, clockStart: clock.nowMs())
        self.clock = clock
        asyncOrigin = origin
        origin.fetchFunction = fetch
        origin.mutateFunction = mutate
        engine.delegate = relay
    }

    // MARK: Configuration

    public func configure(_ configuration: CacheConfiguration) throws(CacheError) {
        sync()
        try engine.configure(configuration)
        flush()
    }

    public func defineNamespace(_ name: String, _ change: PolicyChange) throws(CacheError) {
        sync()
        try engine.defineNamespace(name, change)
        flush()
    }

    // MARK: Reads

    /// The app's read (B3–B5). In live mode an expired or absent key suspends until its fetch
    /// is answered; in virtual mode the clock runs to the answer.
    public func get(_ key: String, force: Bool = false) async throws(CacheError) -> ReadResult {
        sync()
        guard let asyncOrigin else {
            defer { flush() }
            return try engine.get(key, force: force)
        }
        let result = try engine.get(key, force: force, nowait: true)
        flush()
        startAsyncWork(asyncOrigin)
        let canonical = KeyName.canonical(key)
        guard result.state == .absent || result.state == .expired || force,
              let id = engine.fetchInFlight[canonical] else { return result }
        engine.requests[id]?.waiters += 1
        return await withCheckedContinuation { continuation in
            waiting[id, default: []].append((canonical, continuation))
        }
    }

    public func mget(_ keys: [String]) throws(CacheError) -> [ReadResult] {
        sync()
        defer { flush() }
        return try engine.mget(keys)
    }

    public func peek(_ key: String) -> ReadResult {
        sync()
        return engine.peek(key)
    }

    // MARK: Writes

    @discardableResult
    public func put(_ key: String, _ value: JSONValue, tags: [String] = []) -> [String] {
        sync()
        defer { flush() }
        return engine.put(key, value, tags: tags)
    }

    @discardableResult
    public func invalidate(_ target: Target) -> [String] {
        sync()
        defer { flush() }
        return engine.invalidate(target)
    }

    @discardableResult
    public func evict(_ key: String) -> [String] {
        sync()
        defer { flush() }
        return engine.evict(key)
    }

    @discardableResult
    public func clear(namespace: String? = nil) -> [String] {
        sync()
        defer { flush() }
        return engine.clear(namespace: namespace)
    }

    @discardableResult
    public func memoryWarning() -> [String] {
        sync()
        defer { flush() }
        return engine.memoryWarning()
    }

    @discardableResult
    public func mutate(_ key: String, patch: Patch) throws(CacheError) -> [String] {
        sync()
        defer { flush(); if let asyncOrigin { startAsyncWork(asyncOrigin) } }
        return try engine.mutate(key, patch: patch)
    }

    @discardableResult
    public func event(_ key: String, patch: Patch) throws(CacheError) -> [String] {
        sync()
        defer { flush() }
        return try engine.event(key, patch: patch)
    }

    @discardableResult
    public func event(entity id: String, patch: Patch) throws(CacheError) -> [String] {
        sync()
        defer { flush() }
        return try engine.event(entity: id, patch: patch)
    }

    @discardableResult
    public func push(_ type: String, arguments: [String: String]) throws(CacheError) -> [String] {
        sync()
        defer { flush(); if let asyncOrigin { startAsyncWork(asyncOrigin) } }
        return try engine.push(type, arguments: arguments)
    }

    public func stats(namespace: String? = nil) -> Stats {
        engine.stats(namespace: namespace)
    }

    /// Moves the virtual clock (virtual mode only; live mode follows its clock).
    public func advance(by duration: Int64) throws(CacheError) {
        defer { flush() }
        try engine.advance(by: duration)
    }

    public var now: Int64 { engine.now }

    // MARK: Observers (B15)

    /// A stream of every change in `scope`, as it happens. Ends when the task iterating it is cancelled.
    public func changes(in scope: WatchScope) -> AsyncStream<CacheEvent> {
        let (stream, continuation) = AsyncStream<CacheEvent>.makeStream()
        let id = nextStream
        nextStream += 1
        streams[id] = (scope, continuation)
        engine.watch(scope)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.endStream(id) }
        }
        return stream
    }

    private func endStream(_ id: Int) {
        guard let ended = streams.removeValue(forKey: id) else { return }
        if !streams.values.contains(where: { $0.scope == ended.scope }) { engine.unwatch(ended.scope) }
    }

    // MARK: Plumbing

    /// Live mode: brings the engine to the clock's time.
    private func sync() {
        guard let clock else { return }
        let target = clock.nowMs()
        if target > engine.now { try? engine.advance(by: target - engine.now) }
    }

    /// Hands the events the engine reported to the streams watching them.
    private func flush() {
        let events = relay.take()
        guard !events.isEmpty else { return }
        for event in events {
            for (_, stream) in streams where Self.matches(stream.scope, event) { stream.continuation.yield(event) }
        }
    }

    private static func matches(_ scope: WatchScope, _ event: CacheEvent) -> Bool {
        switch scope {
        case .all: return true
        case .key(let key): return KeyName.canonical(key) == event.key
        case .namespace(let name): return KeyName.namespace(of: event.key) == name
        }
    }

    /// Starts the app's async calls for the requests the engine just sent.
    private func startAsyncWork(_ origin: AsyncOrigin) {
        for call in origin.takeStarted() {
            switch call {
            case .fetch(let id, let keys, let fetch):
                Task { [weak self] in
                    let result: Result<[KeyAnswer], OriginFailure>
                    do {
                        let values = try await fetch(keys)
                        result = .success(keys.map { values[$0].map(KeyAnswer.value) ?? .notFound })
                    } catch {
                        result = .failure(OriginFailure("\(error)"))
                    }
                    await self?.deliver(id, result)
                }
            case .mutate(let id, let request, let mutate):
                Task { [weak self] in
                    let result: Result<[KeyAnswer], OriginFailure>
                    do {
                        let values = try await mutate(request)
                        result = .success(request.keys.map { values[$0].map(KeyAnswer.value) ?? .notFound })
                    } catch {
                        result = .failure(OriginFailure("\(error)"))
                    }
                    await self?.deliver(id, result)
                }
            }
        }
    }

    private func deliver(_ id: UInt64, _ result: Result<[KeyAnswer], OriginFailure>) {
        sync()
        engine.deliver(fetch: id, result)
        try? engine.advance(by: 0)
        flush()
        guard let readers = waiting.removeValue(forKey: id) else { return }
        for reader in readers {
            var read = engine.peek(reader.key)
            switch engine.keyOutcomes[id]?[reader.key] {
            case .stored?: read.source = .server
            case .failed(let message)?: read.error = message
            default: break
            }
            reader.continuation.resume(returning: read)
        }
        engine.keyOutcomes[id] = nil
    }
}

/// Collects the events the engine reports during one call; the actor hands them to streams after it.
final class EventRelay: CacheEngineDelegate {
    private var events: [CacheEvent] = []
    func cacheEngine(_ engine: CacheEngine, observed event: CacheEvent) { events.append(event) }
    func cacheEngine(_ engine: CacheEngine, runScheduled token: Int) {}
    func cacheEngine(_ engine: CacheEngine, validated result: ValidationResult) {}
    func take() -> [CacheEvent] {
        defer { events.removeAll() }
        return events
    }
}

/// An origin whose answers come from an app's `async` functions: every request is `.deferred`
/// and its call is started by the `Cache` actor right after the engine sends it.
public final class AsyncOrigin: Origin {
    enum Call {
        case fetch(UInt64, [String], @Sendable ([String]) async throws -> [String: JSONValue])
        case mutate(UInt64, MutationRequest, @Sendable (MutationRequest) async throws -> [String: JSONValue])
    }
    var fetchFunction: (@Sendable ([String]) async throws -> [String: JSONValue])?
    var mutateFunction: (@Sendable (MutationRequest) async throws -> [String: JSONValue])?
    private var started: [Call] = []
    public var isOnline = true

    init() {}

    func takeStarted() -> [Call] {
        defer { started.removeAll() }
        return started
    }

    public func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        guard let fetchFunction else { return .after(latencyMs: 0, .failure(OriginFailure("no fetch function"))) }
        started.append(.fetch(requestID, keys, fetchFunction))
        return .deferred
    }

    public func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        guard let mutateFunction else { return .after(latencyMs: 0, .failure(OriginFailure("no mutate function"))) }
        started.append(.mutate(requestID, request, mutateFunction))
        return .deferred
    }

    public func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]> {
        .after(latencyMs: 0, .failure(OriginFailure("validation is not supported by this origin")))
    }
}
