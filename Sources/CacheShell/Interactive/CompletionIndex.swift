import CacheCore
import Synchronization

/// What completion and hints know about a session at one instant: the cached keys (sorted by
/// their UTF-8 bytes, so every prefix is one contiguous range), namespaces, tags and push types.
///
/// An immutable value: the interpreter publishes a new one after each command and a line
/// editor's callbacks read it without waiting for the cache.
public struct CompletionSnapshot: Sendable {
    /// Cached keys in UTF-8 byte order.
    public private(set) var keys: [String] = []
    /// The state of `keys[i]` when the snapshot was taken.
    public private(set) var states: [EntryState] = []
    /// The time to expiry of `keys[i]` when the snapshot was taken (`Int64.max`: never).
    public private(set) var expiresInMs: [Int64] = []
    /// Namespace names, sorted.
    public var namespaces: [String] = []
    /// Tags carried by at least one entry, sorted.
    public var tags: [String] = []
    /// Push types of the configuration, sorted, each with the `{name}` parameters its rule uses.
    public var pushTypes: [(name: String, parameters: [String])] = []

    public init() {}

    /// What a snapshot is made of, copied from a cache (a snapshot sorts the keys).
    public struct Source: Sendable {
        public var keys: [(key: String, state: EntryState, expiresInMs: Int64)]
        public var namespaces: [String]
        public var tags: [String]
        public var pushTypes: [(name: String, parameters: [String])]
    }

    /// A snapshot of the given keys, in any order.
    /// - Complexity: O(n log n).
    public init(keys: [(key: String, state: EntryState, expiresInMs: Int64)], namespaces: [String] = [],
                tags: [String] = [], pushTypes: [(name: String, parameters: [String])] = []) {
        setKeys(keys)
        self.namespaces = namespaces.sorted()
        self.tags = tags.sorted()
        self.pushTypes = pushTypes.sorted { $0.name < $1.name }
    }

    /// Replaces the keys.
    /// - Complexity: O(n log n).
    mutating func setKeys(_ entries: [(key: String, state: EntryState, expiresInMs: Int64)]) {
        let sorted = entries.sorted { Bytes.precedes($0.key, $1.key) }
        keys = sorted.map(\.key)
        states = sorted.map(\.state)
        expiresInMs = sorted.map(\.expiresInMs)
    }

    /// The positions of the keys that start with `prefix` (byte-wise).
    /// - Complexity: O(log n) comparisons.
    public func keyRange(prefix: String) -> Range<Int> {
        let low = Bytes.lowerBound(keys, prefix, pastPrefix: false)
        let high = Bytes.lowerBound(keys, prefix, pastPrefix: true)
        return low..<max(low, high)
    }

    /// The state and time to expiry of a cached key, or nil when it is not cached.
    /// - Complexity: O(log n) comparisons.
    public func summary(of key: String) -> (state: EntryState, expiresInMs: Int64)? {
        let i = Bytes.lowerBound(keys, key, pastPrefix: false)
        guard i < keys.count, keys[i] == key else { return nil }
        return (states[i], expiresInMs[i])
    }
}

/// The latest ``CompletionSnapshot`` of a session, shared between the interpreter (which
/// updates it after each command) and a line editor's synchronous callbacks (which read it).
public final class CompletionIndex: Sendable {
    private struct State {
        var snapshot = CompletionSnapshot()
        /// What the keys were built from: (sequence number, clock, entry count); nil before the first build.
        var keysBuiltFrom: (seq: UInt64, now: Int64, count: Int)?
    }

    private let state = Mutex(State())

    public init() {}

    /// The latest snapshot.
    /// - Complexity: O(1): the arrays are shared, not copied.
    public var snapshot: CompletionSnapshot {
        state.withLock { $0.snapshot }
    }

    /// Takes a new snapshot of the cache. The keys are rebuilt only when the cache's sequence
    /// number, clock or entry count moved since the last update.
    /// - Complexity: O(n log n) in the number of keys when they are rebuilt, else O(t + p) in
    ///   the number of tags and push types.
    public func update(from cache: isolated Cache) {
        let mark = (seq: cache.sequence, now: cache.now, count: cache.count)
        let previous = state.withLock { $0 }
        var next = previous.snapshot
        if previous.keysBuiltFrom.map({ $0 != mark }) ?? true {
            next.setKeys(cache.keySummaries())
        }
        next.namespaces = cache.namespacePolicies().map(\.name)
        next.tags = cache.tagsInUse()
        next.pushTypes = cache.pushRules.map { ($0.key, $0.value.parameters) }.sorted { $0.name < $1.name }
        let published = next
        state.withLock {
            $0.snapshot = published
            $0.keysBuiltFrom = mark
        }
    }
}

/// Byte-wise (UTF-8) ordering of strings: the order a prefix range needs, and cheaper than
/// `String`'s Unicode-aware comparison.
enum Bytes {
    /// Whether `a` sorts before `b` by their UTF-8 bytes.
    static func precedes(_ a: String, _ b: String) -> Bool {
        compare(a, b) < 0
    }

    /// Negative, zero or positive as `a` sorts before, with, or after `b`.
    static func compare(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let n = min(x.count, y.count)
                var i = 0
                while i < n {
                    if x[i] != y[i] { return Int(x[i]) - Int(y[i]) }
                    i += 1
                }
                return x.count - y.count
            }
        }
    }

    /// The first position in `sorted` whose element is not below `prefix` — or, with
    /// `pastPrefix`, not below every string that starts with `prefix`.
    static func lowerBound(_ sorted: [String], _ prefix: String, pastPrefix: Bool) -> Int {
        var low = 0, high = sorted.count
        var prefix = prefix
        prefix.withUTF8 { p in
            while low < high {
                let mid = (low + high) / 2
                var element = sorted[mid]
                let below = element.withUTF8 { e -> Bool in
                    let n = min(e.count, p.count)
                    var i = 0
                    while i < n {
                        if e[i] != p[i] { return e[i] < p[i] }
                        i += 1
                    }
                    // They agree on their first n bytes: `element` is below `prefix` when it is shorter,
                    // and below everything past the prefix range in any case (UTF-8 has no 0xFF byte).
                    return pastPrefix || e.count < p.count
                }
                if below { low = mid + 1 } else { high = mid }
            }
        }
        return low
    }

    /// The longest common prefix of two strings, cut at a character boundary.
    static func commonPrefix(_ a: String, _ b: String) -> String {
        var result = ""
        var bi = b.makeIterator()
        for c in a {
            guard let d = bi.next(), c == d else { break }
            result.append(c)
        }
        return result
    }
}
