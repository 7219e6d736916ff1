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
/// and its call is started by the `Cache` actor right after the engine sends it.
public final class AsyncOrigin: Origin {
    enum Call {
        case fetch(UInt64, [String], @Sendable ([String]) async throws -> [String: JSONValue])
        case mutate(UInt64, MutationRequest, @Sendable (MutationRequest) async throws -> [String: JSONValue])
    }
    var fetchFunction: (@Sendable ([String]) async throws -> [String: JSONValue])?
    var mutateFunction: (@Sendable (MutationRequest) async throws -> [String: JSONValue])?
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
}
