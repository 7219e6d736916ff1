// How the engine's reports reach the cache: the relay (the engine's delegate), the cache's
// handlers of each report (its recorder, its delegate, its streams, the reads waiting for a
// request) and what runs after every call (`finish`).

extension Cache {
    /// Called by the relay for each event, inside the engine's call.
    fileprivate func engineObserved(_ event: CacheEvent) {
        recorder?.append(.observed(event))
        if !streams.isEmpty { streamEvents.append(event) }
        delegate?.cache(self, observed: event)
    }

    fileprivate func engineRunScheduled(_ token: Int) {
        delegate?.cache(self, runScheduled: token)
    }

    fileprivate func engineValidated(_ result: ValidationResult) {
        recorder?.append(.validated(result, at: engine.now))
        delegate?.cache(self, validated: result)
    }

    /// A request completed (inside the step that ran it): the reads waiting for it get their
    /// result now, computed as of its completion, as a replay on the virtual clock computes it.
    /// An attempt that failed and will be retried is only noted.
    fileprivate func engineCompleted(_ completion: RequestCompletion) {
        recorder?.append(.completed(id: completion.id, answer: completion.answer, at: engine.now, http: completion.http))
        guard !completion.retried, let readers = waiting.removeValue(forKey: completion.id) else { return }
        finishReads(readers, request: completion.id)
    }

    /// Hands each waiting read its result. In virtual mode the outcomes stay for a blocking read
    /// of the same request (the shell clears them at its next command).
    func finishReads(_ readers: [WaitingRead], request id: UInt64) {
        for (i, reader) in readers.enumerated() {
            let result = engine.finishAwaitedRead(reader.key, request: id, last: asyncOrigin != nil && i == readers.count - 1)
            recorder?.append(.read(request: id, result: result, at: engine.now))
            if let continuation = reader.continuation {
                continuation.resume(returning: result)
            } else {
                delegate?.cache(self, finishedRead: result)
            }
        }
    }

    /// Notes that the engine has moved its clock: for the order of live answers, and the recording.
    func noteStep() {
        lastStepSeq = engine.seq
        guard let recorder else { return }
        recorder.noteSent(engine)
        recorder.append(.step(to: engine.now))
    }

    /// After each call: streams get their events; in live mode, calls start, finished readers
    /// resume and the timer is set for the next due item.
    func finish() {
        if !streamEvents.isEmpty { deliverStreamEvents() }
        guard let asyncOrigin else { return }
        startAsyncWork(asyncOrigin)
        resumeFinishedReaders()
        armTimer()
    }

    /// Hands the events noted since the last call to the streams that watch them. A function of
    /// its own, not inlined: in `finish` itself, the metadata of the generic types it iterates
    /// (the streams' continuations and their results) was made at every call, with no stream
    /// at all (some 80 instructions a command of the shell's batch).
    @inline(never)
    private func deliverStreamEvents() {
        let events = streamEvents
        streamEvents.removeAll()
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
}

/// A read waiting for its request: an app's suspended `get` (its continuation), or a read whose
/// result goes to the delegate (none).
struct WaitingRead {
    var key: String
    var continuation: CheckedContinuation<ReadResult, Never>?
}

/// Hands the engine's reports to its `Cache`, inside the cache's isolation.
///
/// Why the relay may enter the cache's isolation without asking the runtime (which costs more
/// than a `put` in the engine): the relay is the delegate of one engine only, `Cache.engine`, set
/// in the cache's initialisers. That engine is actor-isolated state (a non-`Sendable` `let` of the
/// actor, never handed out: the compiler's region checking keeps it inside the actor's isolation),
/// and it calls its delegate only synchronously from its own methods. So every call here comes
/// from a method of the engine called from code isolated to the cache, on the cache's executor.
/// Debug builds still check it (`assumeIsolated`).
///
/// The cache owns the relay and the engine, and the engine runs only inside the cache's methods,
/// so the cache is alive whenever the relay is called: it is held `unowned(unsafe)`, which costs
/// no reference counting (a `weak` load costs a runtime call).
///
/// Each report goes through a closure that captures nothing, made once (`Handler`), called with
/// the cache and the report: a closure literal that captured the report, handed on as an escaping
/// function, cost two allocations per report (its context and a thunk's), about 1,000
/// instructions, twice per put that evicts when the shell notes every change.
final class EngineRelay: CacheEngineDelegate {
    // Unchecked exclusivity: assigned once, in the cache's initialisers, before the engine can
    // call the relay, and only loaded after; no two accesses to it can overlap.
    @exclusivity(unchecked) unowned(unsafe) var cache: Cache?
    /// The engine whose `relay` this is, held so that it is still there when this relay goes
    /// (with its cache): `deinit` clears the engine's unowned `relay`, so an engine that outlived
    /// its cache would never call a relay that is gone, as its weak `delegate` never did. (None
    /// does: the cache owns its engine, and a clock group holds the cache, not only the engine,
    /// while it runs the engine's items; see `ClockGroup.Member`.) The engine holds this relay
    /// unowned: no cycle.
    var engine: CacheEngine?

    deinit {
        engine?.relay = nil
    }

    /// A report's handler: what the cache does with it, isolated to the cache.
    typealias Handler<Report> = @Sendable (isolated Cache, Report) -> Void

    private static let observed: Handler<CacheEvent> = { $0.engineObserved($1) }
    private static let runScheduled: Handler<Int> = { $0.engineRunScheduled($1) }
    private static let validated: Handler<ValidationResult> = { $0.engineValidated($1) }
    private static let completed: Handler<RequestCompletion> = { $0.engineCompleted($1) }
    /// The handler of a change noted: takes the event out of `pointer` (moved, so that it is
    /// never copied on its way to the delegate when no tap is set; the caller does not destroy it).
    ///
    /// Why a pointer: a handler called through `unsafeBitCast` (see `onCache`) is called through
    /// a thunk that takes its arguments in memory, and an event passed as itself was copied into
    /// that memory and the original dropped (some 180 instructions a change noted).
    private static let noted: @Sendable (isolated Cache, UnsafeMutablePointer<CacheEvent>) -> Void = { cache, pointer in
        let event = pointer.move()
        // The delegate hears every change only when it asked (`reportsAllChanges`), not because
        // an inspector's tap did.
        if let tap = cache.changeTap {
            if cache.allChangesRequested { cache.delegate?.cache(cache, noted: event) }
            tap(event)
        } else if cache.allChangesRequested {
            cache.delegate?.cache(cache, noted: event)
        }
    }

    /// Calls `handler` with the cache isolated (see the type's comment for why it already is).
    @inline(__always)
    private func onCache<Report: Sendable>(_ handler: @escaping Handler<Report>, _ report: Report) {
        guard let cache else { return }
        #if DEBUG
        cache.assumeIsolated { handler($0, report) }
        #else
        // What `assumeIsolated` does once its check has passed: the function called with the
        // cache as its isolated argument (the two function types differ only in that attribute).
        unsafeBitCast(handler, to: (@Sendable (Cache, Report) -> Void).self)(cache, report)
        #endif
    }

    func cacheEngine(_ engine: CacheEngine, observed event: CacheEvent) {
        onCache(Self.observed, event)
    }

    func cacheEngine(_ engine: CacheEngine, runScheduled token: Int) {
        onCache(Self.runScheduled, token)
    }

    func cacheEngine(_ engine: CacheEngine, validated result: ValidationResult) {
        onCache(Self.validated, result)
    }

    func cacheEngine(_ engine: CacheEngine, completed request: RequestCompletion) {
        onCache(Self.completed, request)
    }

    func cacheEngine(_ engine: CacheEngine, noted event: consuming CacheEvent) {
        noted { $0.initialize(to: copy event) }
    }

    /// A change noted, from the engine (`CacheEngine.relay`, called directly): `onCache` of the
    /// handler that takes the event, which `make` initializes straight in the memory the handler
    /// takes it from.
    @inline(__always)
    func noted(_ make: (UnsafeMutablePointer<CacheEvent>) -> Void) {
        guard let cache else { return }
        #if DEBUG
        cache.preconditionIsolated()
        #endif
        withUnsafeTemporaryAllocation(of: CacheEvent.self, capacity: 1) { buffer in
            let pointer = buffer.baseAddress!
            make(pointer)
            // As `onCache`: the handler called with the cache as its isolated argument. It
            // moves the event out: the memory is left uninitialized, as it is given back.
            unsafeBitCast(Self.noted, to: (@Sendable (Cache, UnsafeMutablePointer<CacheEvent>) -> Void).self)(cache, pointer)
        }
    }
}
