/// The kinds of request the cache sends to its origin.
public enum RequestKind: String, Sendable {
    case fetch, mutate, validate
}

/// Why an origin request failed; a result, not a command error.
public struct OriginFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The client cannot tell whether the server applied the request: it gave up waiting (a
    /// `timeout=`) or the answer was lost on its way (SPEC §1.1 Unknown outcome). A failed
    /// mutation of unknown outcome is neither confirmed nor rolled back: its keys are refetched.
    public var outcomeUnknown: Bool
    public init(_ message: String, outcomeUnknown: Bool = false) {
        self.message = message
        self.outcomeUnknown = outcomeUnknown
    }

    /// The failure of a request the client gave up on after `limit` ms (a `timeout=`).
    public static func timedOut(after limit: Int64) -> OriginFailure {
        OriginFailure("timed out after \(TimeText.formatDuration(limit))", outcomeUnknown: true)
    }
    public var description: String { message }

    /// As snapshots and recordings write it: `{"error": TEXT}`, with `"unknown_outcome": true`
    /// only when it is so (files of other failures stay as they were).
    public var document: [String: JSONValue] {
        outcomeUnknown ? ["error": .string(message), "unknown_outcome": .bool(true)] : ["error": .string(message)]
    }
}

/// The origin's answer for one key.
public enum KeyAnswer: Sendable, Equatable {
    case value(JSONValue)
    /// A value with the server version it reflects (SPEC §1.1 Versions): the entry remembers it,
    /// and an event or answer not newer than it is ignored.
    case versioned(JSONValue, version: UInt64)
    case notFound

    /// The value, versioned or not; nil for `notFound`.
    public var value: JSONValue? {
        switch self {
        case .value(let v), .versioned(let v, _): v
        case .notFound: nil
        }
    }

    /// The largest version a cache keeps: 2^53, as its sequence numbers (SPEC §7.1).
    public static let maxVersion: UInt64 = 1 << 53

    /// The server version it reflects; nil when the origin gave none, or one past `maxVersion`
    /// (which no snapshot could hold: the value is then taken as unversioned).
    public var version: UInt64? {
        if case .versioned(_, let n) = self, n <= Self.maxVersion { return n }
        return nil
    }

    /// As snapshots and recordings write it: `{"value": V}`, with `"version": N` when it has one
    /// (so files of unversioned answers stay as they were), or `{"not_found": true}`.
    public var document: JSONValue {
        guard let value else { return .object(["not_found": .bool(true)]) }
        guard let version else { return .object(["value": value]) }
        return .object(["value": value, "version": .int(Int64(version))])
    }

    /// `value`, with `version` when there is one.
    public static func answer(_ value: JSONValue, version: UInt64?) -> KeyAnswer {
        version.map { .versioned(value, version: $0) } ?? .value(value)
    }
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
/// The idempotency key a mutation's attempts carry (SPEC §1.1 Retries): the mutation's id within
/// the cache that sent it, and that cache's place among the clients sharing one origin (SPEC §3
/// Clients), so two clients' first mutations never share a key.
public struct IdempotencyKey: Hashable, Sendable {
    public var client: Int
    public var mutation: UInt64
    public init(client: Int, mutation: UInt64) { self.client = client; self.mutation = mutation }
}

public struct MutationRequest: Sendable, Equatable {
    public var keys: [String]
    public var patch: Patch
    public var entityID: String?
    /// The idempotency key of a mutation sent with one (`mutate ... --idempotent`): its attempts
    /// all carry it, and an origin applies a key once, answering a retry of an applied mutation
    /// with the key's value (SPEC §1.1 Retries). nil: none.
    public var idempotencyKey: IdempotencyKey?
    public init(keys: [String], patch: Patch, entityID: String?, idempotencyKey: IdempotencyKey? = nil) {
        self.keys = keys; self.patch = patch; self.entityID = entityID; self.idempotencyKey = idempotencyKey
    }
}

/// The server the cache talks to. Called synchronously by the engine when it sends a request,
/// with the request's id (for `deliver`) and the current time.
public protocol Origin: AnyObject {
    /// False while the origin cannot be reached: the cache sends nothing and serves what it has.
    /// Asked on every read, while the engine holds its reference to the origin (`OriginCell`):
    /// it must not call the cache or its engine back (a stored property, or a constant, is what
    /// it is meant to be).
    var isOnline: Bool { get }
    /// Fetch of one or many keys (a bulk fetch answers all in one reply, in the order asked).
    func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]>
    /// A mutation; the answer is the current value of each key after it.
    func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]>
    /// The validation handshake: for each namespace, the time up to which the client knows it current.
    func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]>
    /// The origin's own state for snapshots and stores, if it keeps any (default: none).
    var persistentState: (any PersistentOrigin)? { get }
    /// How long after it is sent a fetch of `keys` sent now would be answered (`Int64.max`: never),
    /// without sending it or changing anything; nil when the origin cannot tell (the default) or
    /// would defer it. A read that waits checks it first: one whose answer would come at the end of
    /// the virtual clock's time is refused before anything is sent (SPEC §2).
    func latencyIfSent(fetch keys: [String]) -> Int64?
    /// The same for a validation sent now.
    func latencyIfSentValidation() -> Int64?
}

/// The state an origin keeps of its own, saved in a snapshot's `server` section beside the
/// engine's request log and in a store (SPEC §5.2–5.3): the shell's simulated server has some; an
/// app's network has none.
///
/// The core knows only its data by key, which a store keeps in rows of its own, and holds the rest
/// (the origin's settings) as the fields it was written with: the origin checks and reads them.
public struct OriginState: Sendable, Equatable {
    /// The origin's data by key.
    public var data: [String: JSONValue]
    /// When each key last changed (ms since the Unix epoch).
    public var modifiedAt: [String: Int64]
    /// The section's other fields, as the origin writes them (the engine adds `log`).
    public var settings: [String: JSONValue]
    /// The header fields each key of an HTTP namespace is served with (docs/SPEC.md §8), by key:
    /// written as the section's `headers` only when some key has them.
    public var headers: [String: HTTPFields] = [:]

    public init(data: [String: JSONValue], modifiedAt: [String: Int64], settings: [String: JSONValue]) {
        self.data = data; self.modifiedAt = modifiedAt; self.settings = settings
    }
}

/// An origin whose own state is saved by snapshots and stores. The engine reaches it through
/// `Origin.persistentState`, never by casting to a concrete type.
public protocol PersistentOrigin: AnyObject {
    /// The whole state; `withData: false` leaves `data` and `modifiedAt` empty (a store keeps
    /// them in rows of their own).
    func snapshot(withData: Bool) -> OriginState
    /// Checks a snapshot's state before anything is restored, without changing anything.
    /// - Throws: `SnapshotError` naming the first bad setting by its path (`server.NAME`).
    func check(_ state: OriginState) throws(SnapshotError)
    /// Replaces the whole state with one that `check` accepted.
    func restore(_ state: OriginState)
    /// Starts noting which keys change, for `takeChangedKeys`.
    func startTrackingChanges()
    /// The keys whose data or modification time changed since the last call, sorted.
    func takeChangedKeys() -> [String]
    /// Every key the origin has data or a modification time for, sorted.
    func allKeys() -> [String]
    /// One key's row for a store.
    func storedKey(_ key: String) -> StoredServerKey
}

extension Origin {
    /// None: an app's origin keeps no state of its own in snapshots.
    public var persistentState: (any PersistentOrigin)? { nil }
    /// Unknown: an app's origin cannot say when it will answer.
    public func latencyIfSent(fetch keys: [String]) -> Int64? { nil }
    /// Unknown: an app's origin cannot say when it will answer.
    public func latencyIfSentValidation() -> Int64? { nil }
}

/// The engine's reference to its origin, in a value of its own (`CacheEngine.originCell`).
///
/// Why: a method called on a reference read from a class's stored property runs after the
/// property's access has ended, so the compiler retains the reference for the call and releases
/// it after (the call might replace the property and free the object). Both are atomic
/// operations, which on x86-64 wait for every earlier store to reach the cache: a `get` hit,
/// which asks `isOnline` first, waited for the previous hit's recency writes to land. Called as
/// a mutating method of this value, `isOnline` runs inside the access to the engine's property,
/// which no other access may overlap, so the reference is used as it is held: no retain, no
/// release (Benchmarks/README.md, "get at 1 M: the origin's retain and release, and the
/// compaction's branch").
struct OriginCell {
    var origin: any Origin

    /// `origin.isOnline`, asked inside the access to the cell (see the type's description).
    @inline(__always)
    mutating func isOnline() -> Bool { origin.isOnline }
}
