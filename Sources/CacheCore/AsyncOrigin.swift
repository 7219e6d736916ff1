/// The origin of a cache that has none yet: every request fails at once.
public final class NoOrigin: Origin {
    public init() {}
    public var isOnline: Bool { true }
    public func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        .after(latencyMs: 0, .failure(OriginFailure("no origin")))
    }
    public func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        .after(latencyMs: 0, .failure(OriginFailure("no origin")))
    }
    public func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]> {
        .after(latencyMs: 0, .failure(OriginFailure("no origin")))
    }
}

/// An origin whose answers come from an app's `async` functions: every request is `.deferred`
/// and its call is started by the `Cache` actor right after the engine sends it. With an `http`
/// function, an HTTP namespace's requests go to it with their method and fields (`cachesh proxy`).
public final class AsyncOrigin: HTTPOrigin {
    enum Call {
        case fetch(UInt64, [String], @Sendable ([String]) async throws -> [String: JSONValue])
        case mutate(UInt64, MutationRequest, @Sendable (MutationRequest) async throws -> [String: JSONValue])
        case http(UInt64, HTTPRequest, @Sendable (HTTPRequest) async throws -> HTTPAnswer)

        /// The request the call is made for.
        var requestID: UInt64 {
            switch self {
            case .fetch(let id, _, _), .mutate(let id, _, _), .http(let id, _, _): id
            }
        }
    }
    var fetchFunction: (@Sendable ([String]) async throws -> [String: JSONValue])?
    var mutateFunction: (@Sendable (MutationRequest) async throws -> [String: JSONValue])?
    var httpFunction: (@Sendable (HTTPRequest) async throws -> HTTPAnswer)?
    private var started: [Call] = []
    // Unchecked exclusivity: a `Bool` only ever read or assigned whole, never passed inout, so no
    // two accesses to it can overlap; the engine reads it on every `get`.
    @exclusivity(unchecked) public var isOnline = true

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

    /// An HTTP namespace's request: to the `http` function when there is one, else a fetch of its
    /// key (a `200` with the value, or a `404`).
    public func http(_ request: HTTPRequest, requestID: UInt64, at now: Int64) -> OriginReply<HTTPAnswer> {
        guard let httpFunction else {
            switch fetch(keys: [request.key], requestID: requestID, at: now) {
            case .deferred: return .deferred
            case .after(let ms, let result): return .after(latencyMs: ms, result.map { HTTPAnswer($0[0]) })
            }
        }
        started.append(.http(requestID, request, httpFunction))
        return .deferred
    }
}
