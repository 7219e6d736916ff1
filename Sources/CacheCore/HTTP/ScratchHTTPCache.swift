/// A scratch cache driven synchronously by one caller, for a replay of an HTTP log (`replay
/// FILE.har`, docs/SPEC.md §5.5): the engine of a `Cache` without the actor, each read not waiting
/// (its answer comes as the clock is advanced). Not `Sendable`: it belongs to the replay that made
/// it, which runs it to the end on one thread.
public final class ScratchHTTPCache {
    private let engine: CacheEngine

    /// A new, empty cache over `origin`, its clock at `clockStart` (ms since the Unix epoch).
    public init(origin: any HTTPOrigin, clockStart: Int64) {
        engine = CacheEngine(origin: origin, clockStart: clockStart)
    }

    /// The virtual clock (ms since the Unix epoch).
    public var now: Int64 { engine.now }

    /// Moves the clock forward, completing the requests whose answers come by then.
    public func advance(by ms: Int64) throws(CacheError) { try engine.advance(by: ms) }

    /// Defines or changes a namespace, as `ns` does.
    public func defineNamespace(_ name: String, _ change: PolicyChange) throws(CacheError) {
        try engine.defineNamespace(name, change)
    }

    /// The HTTP settings of `key`'s namespace; nil when it is not an HTTP one.
    public func httpSettings(ofKey key: String) -> HTTPNamespace? { engine.httpSettings(ofKey: key) }

    /// An app's GET of `key`: served, validated or forwarded as RFC 9111 decides; a read that
    /// sends returns at once with `status` nil.
    public func read(_ key: String, request: HTTPFields) throws(CacheError) -> HTTPReadResult {
        try engine.httpGet(try CacheEngine.httpKey(key), request: request, nowait: true)
    }

    /// An app's unsafe request (or HEAD) of `key`, sent without waiting.
    public func send(_ method: String, _ key: String, request: HTTPFields) throws(CacheError) -> HTTPReadResult {
        try engine.httpRequest(method, try CacheEngine.httpKey(key), request: request, nowait: true)
    }

    /// `explain`'s figures for the stored response a request of `key` with `request`'s fields
    /// selects (its `next` left empty); nil when none is selected.
    public func freshness(_ key: String, request: HTTPFields) -> HTTPExplanation? { engine.httpFreshness(key, request: request) }

    /// `explain`'s arithmetic of `key`'s stored responses; nil when none is stored.
    public func explain(_ key: String) -> [HTTPExplanation]? { engine.httpExplain(key) }
}
