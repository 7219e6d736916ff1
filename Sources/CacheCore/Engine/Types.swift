/// The state of an entry at an instant (SPEC §1.1).
public enum EntryState: String, Sendable {
    case fresh, stale, expired, absent
}

/// Where a read's value came from.
public enum ValueSource: String, Sendable {
    case cache, server
}


/// What a read (`get`, `peek`, one key of `mget`) returns.
public struct ReadResult: Sendable, Equatable {
    public var key: String
    public var state: EntryState
    /// The value as the cache keeps it (its compact text); nil when there is none to serve.
    public var stored: StoredValue?
    public var ageMs: Int64?
    public var expiresInMs: Int64?
    public var source: ValueSource
    public var offline = false
    public var pending = false
    /// The tags and the error, out of line; nil when there are no tags and no error (a usual
    /// hit). So a result holds two references besides it (key and value), not four: building,
    /// moving and dropping a hit's result handles only those (the empty tag array alone took a
    /// retain and a release of some 40 instructions a get).
    var extras: Extras? = nil

    // Built by the memberwise initializer, `init(key:state:stored:ageMs:expiresInMs:source:offline:pending:extras:)`
    // (the other initializers are in an extension, so that it exists): an initializer written
    // out, assigning each property in turn, left a get hit with a copy of the whole result and the
    // destruction of the original once inlined (about 270 instructions a hit).

    /// The entry's tags (empty when none).
    public var tags: [String] {
        get { extras?.tags ?? [] }
        set { extras = Extras.make(tags: newValue, error: error) }
    }

    /// Why the read failed, when it did (the value may still be served, SPEC §7).
    public var error: String? {
        get { extras?.error }
        set { extras = Extras.make(tags: tags, error: newValue) }
    }

    /// `tags` and `error` when either is set. Immutable (a setter makes a new one), so a copy of a
    /// result never sees another's changes.
    final class Extras: Sendable {
        let tags: [String]
        let error: String?

        private init(tags: [String], error: String?) {
            self.tags = tags
            self.error = error
        }

        /// The record of `tags` and `error`; nil when there are no tags and no error.
        @inline(__always)
        static func make(tags: [String], error: String?) -> Extras? {
            tags.isEmpty && error == nil ? nil : Extras(tags: tags, error: error)
        }
    }

    public static func == (a: ReadResult, b: ReadResult) -> Bool {
        a.key == b.key && a.state == b.state && a.stored == b.stored && a.ageMs == b.ageMs
            && a.expiresInMs == b.expiresInMs && a.tags == b.tags && a.source == b.source && a.offline == b.offline
            && a.error == b.error && a.pending == b.pending
    }
}

extension ReadResult {
    init(key: String, state: EntryState, value: JSONValue?, ageMs: Int64?, expiresInMs: Int64?, tags: [String],
         source: ValueSource, offline: Bool = false, error: String? = nil, pending: Bool = false) {
        self.init(key: key, state: state, stored: value.map(StoredValue.init), ageMs: ageMs, expiresInMs: expiresInMs,
                  source: source, offline: offline, pending: pending, extras: Extras.make(tags: tags, error: error))
    }

    @inline(__always)
    init(key: String, state: EntryState, stored: StoredValue?, ageMs: Int64?, expiresInMs: Int64?, tags: [String],
         source: ValueSource, offline: Bool = false, error: String? = nil, pending: Bool = false) {
        self.init(key: key, state: state, stored: stored, ageMs: ageMs, expiresInMs: expiresInMs,
                  source: source, offline: offline, pending: pending, extras: Extras.make(tags: tags, error: error))
    }

    /// The value as a tree, parsed from the stored text each time it is read.
    /// - Complexity: O(size of the value).
    public var value: JSONValue? {
        get { stored?.json }
        set { stored = newValue.map(StoredValue.init) }
    }

    /// The value's compact text, as `get` prints it (no parsing); nil when there is no value.
    public var valueText: String? { stored?.text }
}

/// The causes an observer sees (B15).
public enum ChangeCause: String, Sendable {
    case stored, fetched, refreshed, patched, mutated, confirmed
    case rolledBack = "rolled-back"
    case invalidated, evicted, expired, cleared, skipped, pushed
    /// A request in flight for the key was cancelled: its answer will be discarded.
    case cancelled
}

/// One change reported to observers.
public struct CacheEvent: Sendable, Equatable {
    public var cause: ChangeCause
    /// The printed key; for `pushed`, the push type.
    public var key: String
    public var at: Int64
    public var state: EntryState
    /// The value as the cache keeps it (its compact text); nil when there is none.
    public var stored: StoredValue?
    public var source: ValueSource

    init(cause: ChangeCause, key: String, at: Int64, state: EntryState, stored: StoredValue?, source: ValueSource) {
        self.cause = cause
        self.key = key
        self.at = at
        self.state = state
        self.stored = stored
        self.source = source
    }

    init(cause: ChangeCause, key: String, at: Int64, state: EntryState, value: JSONValue?, source: ValueSource) {
        self.init(cause: cause, key: key, at: at, state: state, stored: value.map(StoredValue.init), source: source)
    }

    /// The value as a tree, parsed from the stored text each time it is read.
    public var value: JSONValue? {
        get { stored?.json }
        set { stored = newValue.map(StoredValue.init) }
    }

    /// The value's compact text (no parsing); nil when there is no value.
    public var valueText: String? { stored?.text }
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
    public enum Fate: String, Sendable { case stored, discarded, failed, pending, cancelled }
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
        /// A poll's next refetch (`poll KEY every=D`).
        case poll(key: String, everyMs: Int64)
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
        // Most keys differ from the prefix at their first byte: one byte read decides them.
        if key.utf8.first == UInt8(ascii: "d") && key.utf8.starts(with: "default:".utf8) { return String(key.dropFirst(8)) }
        return key
    }

    /// The namespace of a canonical key.
    public static func namespace(of key: String) -> Substring {
        if let colon = key.utf8.firstIndex(of: UInt8(ascii: ":")) {
            return key[..<colon]
        }
        return Substring(defaultNamespace)
    }

    // MARK: The one rule for keys and namespace names (SPEC §1)

    /// Why `key` is not a valid key, or nil when it is. A key is `NAMESPACE:ID` or `ID` (namespace
    /// `default`): not empty, without control characters (U+0000–U+001F, U+007F), white space or
    /// `*`; a namespace part is a valid namespace name and the id after the colon is not empty.
    /// The shell, configurations, snapshots and stores all check keys with this rule.
    /// - Complexity: O(n) in the length of `key`.
    public static func problem(withKey key: String) -> String? {
        isPlainASCIIKey(key) ? nil : characterProblem(withKey: key)
    }

    /// `problem(withKey:)` decided on the key's characters (for any key).
    static func characterProblem(withKey key: String) -> String? {
        guard !key.isEmpty else { return "keys are NAMESPACE:ID or ID" }
        if key.unicodeScalars.contains(where: isControl) { return "a key may not contain control characters" }
        if key.contains(where: \.isWhitespace) { return "a key may not contain white space" }
        if let colon = key.firstIndex(of: ":") {
            let namespace = key[..<colon]
            if namespace.isEmpty || key[key.index(after: colon)...].isEmpty { return "keys are NAMESPACE:ID or ID" }
            if namespace == "tag" { return "\"tag\" is not a namespace name" }
            if !namespace.allSatisfy(isNameCharacter) { return "namespace \"\(namespace)\" may use letters, digits, -, _ and ." }
        }
        if key.contains("*") { return "* is for patterns (keys, NS:*)" }
        return nil
    }

    /// A key of printable ASCII that the checks of `problem(withKey:)` all pass, decided on its
    /// bytes (false leaves the decision to those checks): the common key, checked without
    /// Unicode character properties.
    static func isPlainASCIIKey(_ key: String) -> Bool {
        if let plain = key.utf8.withContiguousStorageIfAvailable(isPlainASCIIKey) { return plain }
        return Array(key.utf8).withUnsafeBufferPointer(isPlainASCIIKey)
    }

    /// `isPlainASCIIKey` of a key's UTF-8 bytes, read through a pointer (a few instructions a
    /// byte, where a loop over a string's UTF-8 view took some 45): a key without a colon is
    /// bytes from `!` to `~` but `*`; one with a colon is name bytes (letters, digits, `-`, `_`,
    /// `.`), at least one and not `tag`, then the first colon, then at least one such byte
    /// (colons among them).
    static func isPlainASCIIKey(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = key.baseAddress, key.count > 0 else { return false }
        let n = key.count
        // Name bytes: bit c of the 128-bit set (`-` 0x2D, `.` 0x2E, digits, letters, `_` 0x5F).
        let nameLow: UInt64 = 0x03FF_6000_0000_0000
        let nameHigh: UInt64 = 0x07FF_FFFE_87FF_FFFE
        @inline(__always) func isName(_ c: UInt8) -> Bool {
            c < 0x40 ? (nameLow >> UInt64(c)) & 1 != 0 : c < 0x80 && (nameHigh >> UInt64(c & 63)) & 1 != 0
        }
        // Printable ASCII but space and `*`.
        @inline(__always) func isPlain(_ c: UInt8) -> Bool { c &- 0x21 < 0x5E && c != UInt8(ascii: "*") }
        var i = 0
        while i < n && isName(p[i]) { i += 1 }
        if i == n { return true }
        if p[i] == UInt8(ascii: ":") {
            // `NAMESPACE:ID`: a name, not empty and not `tag`, and an id not empty.
            if i == 0 || i == n - 1 { return false }
            if i == 3 && p[0] == UInt8(ascii: "t") && p[1] == UInt8(ascii: "a") && p[2] == UInt8(ascii: "g") { return false }
            i += 1
            while i < n {
                if !isPlain(p[i]) { return false }
                i += 1
            }
            return true
        }
        // A byte no name holds: a key without a colon, or none of these.
        while i < n {
            if !isPlain(p[i]) || p[i] == UInt8(ascii: ":") { return false }
            i += 1
        }
        return true
    }

    /// Why `name` is not a valid namespace name, or nil when it is: letters, digits, `-`, `_` and
    /// `.`, not empty, and not `tag` (which names tags in targets).
    public static func problem(withNamespace name: String) -> String? {
        guard !name.isEmpty, name.allSatisfy(isNameCharacter) else { return "use letters, digits, -, _ and ." }
        if name == "tag" { return "\"tag\" is not a namespace name (tag:T names a tag)" }
        return nil
    }

    /// A character of a namespace name: a letter, digit, `-`, `_` or `.`.
    public static func isNameCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || c == "-" || c == "_" || c == "."
    }

    /// U+0000–U+001F and U+007F: never in a key (they would reach a terminal or cut a C string).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }
}

