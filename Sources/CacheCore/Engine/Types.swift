/// The state of an entry at an instant (SPEC §1.1).
public enum EntryState: String, Sendable {
    case fresh, stale, expired, absent
}

/// Where a read's value came from.
public enum ValueSource: String, Sendable {
    case cache, server
}

/// A user-level error of a cache operation: nothing was changed.
public struct CacheError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a read (`get`, `peek`, one key of `mget`) returns.
public struct ReadResult: Sendable, Equatable {
    public var key: String
    public var state: EntryState
    public var value: JSONValue?
    public var ageMs: Int64?
    public var expiresInMs: Int64?
    public var tags: [String]
    public var source: ValueSource
    public var offline = false
    public var error: String?
    public var pending = false
}

/// The causes an observer sees (B15).
public enum ChangeCause: String, Sendable {
    case stored, fetched, refreshed, patched, mutated, confirmed
    case rolledBack = "rolled-back"
    case invalidated, evicted, expired, cleared, skipped, pushed
}

/// One change reported to observers.
public struct CacheEvent: Sendable, Equatable {
    public var cause: ChangeCause
    /// The printed key; for `pushed`, the push type.
    public var key: String
    public var at: Int64
    public var state: EntryState
    public var value: JSONValue?
    public var source: ValueSource
}

/// What an observer watches.
public enum WatchScope: Sendable, Hashable {
    case key(String)
    case namespace(String)
    case all
}

/// A target of `invalidate` and of push rules: one key, a namespace, a tag.
public enum Target: Sendable, Hashable {
    case key(String)
    case namespace(String)
    case tag(String)

    /// Parses `KEY`, `NS:*` or `tag:T`.
    public init(parsing text: String) {
        if text.hasPrefix("tag:") {
            self = .tag(String(text.dropFirst(4)))
        } else if text.hasSuffix(":*") {
            self = .namespace(String(text.dropLast(2)))
        } else {
            self = .key(text)
        }
    }
}

/// One line of the server log: a request the origin received and what became of its response.
public struct RequestLogEntry: Sendable, Equatable {
    public enum Fate: String, Sendable { case stored, discarded, failed, pending }
    public var id: UInt64
    public var atMs: Int64
    public var kind: RequestKind
    public var keys: [String]
    public var fate: Fate
}

/// Work the scheduler holds, as `pending` lists it.
public struct PendingItem: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case request(RequestKind, keys: [String])
        case queuedMutation(keys: [String])
        case scheduled(token: Int)
    }
    public var kind: Kind
    /// Due time; nil for a queued mutation (it waits for the origin).
    public var dueAt: Int64?
    public var id: UInt64
}

/// The result of a validation handshake (B10).
public struct ValidationResult: Sendable, Equatable {
    public var request: [String: Int64]
    public var response: [String: NamespaceVerdict]?
    public var error: String?
    /// Keys turned stale or stored by the answer.
    public var keys: [String]
}

/// Splits a key into namespace and id and prints it canonically: `home` and `default:home` are one key.
public enum KeyName {
    public static let defaultNamespace = "default"

    /// The canonical printed form.
    @inlinable
    public static func canonical(_ key: String) -> String {
        if key.utf8.starts(with: "default:".utf8) { return String(key.dropFirst(8)) }
        return key
    }

    /// The namespace of a canonical key.
    public static func namespace(of key: String) -> Substring {
        if let colon = key.utf8.firstIndex(of: UInt8(ascii: ":")) {
            return key[..<colon]
        }
        return Substring(defaultNamespace)
    }
}
