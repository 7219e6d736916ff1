/// The kinds of request the cache sends to its origin.
public enum RequestKind: String, Sendable {
    case fetch, mutate, validate
}

/// Why an origin request failed; a result, not a command error.
public struct OriginFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The origin's answer for one key.
public enum KeyAnswer: Sendable, Equatable {
    case value(JSONValue)
    case notFound
}

/// The origin's verdict on one namespace in a validation handshake (B10).
public struct NamespaceVerdict: Sendable, Equatable {
    public var invalidate: Bool
    /// The current values of the changed keys, when asked for (`validate --items`).
    public var items: [String: JSONValue]?
    public init(invalidate: Bool, items: [String: JSONValue]? = nil) {
        self.invalidate = invalidate; self.items = items
    }
}

/// How an origin answers a request: after a latency with a result decided when it was sent,
/// or later, by a call to `CacheEngine.deliver(...)` (an app's asynchronous network call).
public enum OriginReply<Answer: Sendable>: Sendable {
    case after(latencyMs: Int64, Result<Answer, OriginFailure>)
    case deferred
}

/// A mutation as the cache sends it: a patch of one key, or of an entity in every key embedding it.
public struct MutationRequest: Sendable, Equatable {
    public var keys: [String]
    public var patch: Patch
    public var entityID: String?
    public init(keys: [String], patch: Patch, entityID: String?) {
        self.keys = keys; self.patch = patch; self.entityID = entityID
    }
}

/// The server the cache talks to. Called synchronously by the engine when it sends a request,
/// with the request's id (for `deliver`) and the current time.
public protocol Origin: AnyObject {
    /// False while the origin cannot be reached: the cache sends nothing and serves what it has.
    var isOnline: Bool { get }
    /// Fetch of one or many keys (a bulk fetch answers all in one reply, in the order asked).
    func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]>
    /// A mutation; the answer is the current value of each key after it.
    func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]>
    /// The validation handshake: for each namespace, the time up to which the client knows it current.
    func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]>
}
