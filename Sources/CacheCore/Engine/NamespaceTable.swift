#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A namespace: its name, its policy and whether it was defined (its recency list is in
/// `OrderedSlots`, its expiry FIFO in `ExpiryQueues`, its counters in `Statistics`, all by slot).
struct NamespaceState {
    var name: String
    var policy: Policy
    /// Defined by `ns` or a configuration (else used implicitly with the default policy).
    var defined: Bool
}

/// The namespaces by slot (the index other parts keep per-namespace state by) and by name.
/// Slots are handed out in order of first use and never reused.
///
/// Invariants (`invariantViolations()`):
/// - the name index maps each namespace's name to its slot, and nothing else;
/// - the last namespace found by key, when remembered, is the one the index gives;
/// - every policy is one `ns` would accept (no negative duration or count, a positive timeout).
struct NamespaceTable {
    private(set) var all: [NamespaceState] = []
    private var index: [String: Int32] = [:]
    /// Each namespace's name packed (`PackedName`), by slot: what `slot(forKey:)` compares a
    /// key's namespace with, two integers against two, no string touched.
    private var packedNames: [PackedName] = []
    /// The slot of the namespace `slot(forKey:)` found last (-1: none yet): most runs of keys
    /// share one.
    private var lastSlot: Int32 = -1
    /// Whether some namespace has (or had) a `dedupe=` window: until one does, a fetch notes nothing.
    private(set) var dedupes = false
    /// The namespaces' `max` added up, each counted up to `maxCounted`: what the engine reserves
    /// room for (`CacheEngine.reserveDeclaredEntries`), kept as policies change so that an `ns`
    /// does not add them up again.
    private(set) var maxTotal = 0
    /// The most of one namespace's `max` that `maxTotal` counts (the engine's reserve limit).
    static let maxCounted = 1 << 15
    /// How many of the first namespaces `slot(forKey:)` compares a key with before it looks the
    /// name up: a comparison of a few bytes against a substring made and hashed.
    private static let namesCompared = 8

    init() {}

    /// The namespaces of a snapshot, in slot order.
    /// - Complexity: O(k) for k namespaces.
    init(restoring namespaces: [NamespaceState]) {
        all = namespaces
        packedNames = namespaces.map { PackedName($0.name) }
        for (i, ns) in namespaces.enumerated() { index[ns.name] = Int32(i) }
        dedupes = namespaces.contains { $0.policy.dedupe != nil }
        maxTotal = namespaces.reduce(0) { $0 + Self.counted($1.policy.max) }
    }

    /// What a namespace's `max` adds to `maxTotal`.
    private static func counted(_ max: Int?) -> Int { min(max ?? 0, maxCounted) }

    var count: Int { all.count }
    var indices: Range<Int> { all.indices }

    subscript(ns: Int32) -> NamespaceState {
        @inline(__always) get { all[Int(ns)] }
    }

    /// The policy in force for a namespace slot.
    /// - Complexity: O(1).
    @inline(__always)
    func policy(_ ns: Int32) -> Policy { all[Int(ns)].policy }

    /// A namespace's `ttl` and `stale`, read in place (`policy(_:)` copies the whole policy, its
    /// set of naive policies retained and released).
    /// - Complexity: O(1).
    @inline(__always)
    func times(_ ns: Int32) -> (ttl: Int64, stale: Int64?) {
        (all[Int(ns)].policy.ttl, all[Int(ns)].policy.stale)
    }

    /// A namespace's `max`, read in place.
    /// - Complexity: O(1).
    @inline(__always)
    func maxEntries(_ ns: Int32) -> Int? { all[Int(ns)].policy.max }

    /// Whether a namespace has naive policy `p` switched on, read in place.
    /// - Complexity: O(1).
    @inline(__always)
    func isNaive(_ p: NaivePolicy, ns: Int32) -> Bool {
        let naive = all[Int(ns)].policy.naive
        return !naive.isEmpty && naive.contains(p)
    }

    /// The slot of an existing namespace.
    /// - Complexity: O(1).
    func slot(named name: String) -> Int32? { index[name] }

    /// The slot for a name, created with the default policy when new.
    /// - Returns: the slot and whether it was created (the other parts then need one more).
    /// - Complexity: O(1) amortized.
    mutating func slot(creating name: Substring) -> (slot: Int32, created: Bool) {
        if let i = index[String(name)] { return (i, false) }
        let i = Int32(all.count)
        all.append(NamespaceState(name: String(name), policy: Policy(), defined: false))
        packedNames.append(PackedName(String(name)))
        index[String(name)] = i
        return (i, true)
    }

    /// The slot of a key's namespace, created when new; remembers it for the next key.
    /// - Complexity: O(1) amortized; no hashing when the namespace is the one found last or one
    ///   of the first few (keys of a handful of namespaces interleaved, as an app's are).
    mutating func slot(forKey key: String) -> (slot: Int32, created: Bool) {
        let packed = key.utf8.withContiguousStorageIfAvailable { PackedName(namespaceOf: $0) } ?? nil
        if let packed {
            // A name of at most 15 bytes: two integers compared with two per namespace tried.
            if lastSlot >= 0 && packedNames[Int(lastSlot)] == packed { return (lastSlot, false) }
            for i in 0..<min(packedNames.count, Self.namesCompared) where packedNames[i] == packed {
                lastSlot = Int32(i)
                return (Int32(i), false)
            }
        } else if lastSlot >= 0 {
            // A longer name (or a string not stored contiguously): its bytes compared.
            switch Self.key(key, isIn: all[Int(lastSlot)].name) {
            case true?: return (lastSlot, false)
            case false?:
                for i in 0..<min(all.count, Self.namesCompared) where Self.key(key, isIn: all[i].name) == true {
                    lastSlot = Int32(i)
                    return (Int32(i), false)
                }
            case nil: if all[Int(lastSlot)].name == KeyName.namespace(of: key) { return (lastSlot, false) }
            }
        }
        let found = slot(creating: KeyName.namespace(of: key))
        lastSlot = found.slot
        return found
    }

    /// Whether the namespace of `key` (as `KeyName.namespace(of:)` reads it) is `name`, a name
    /// without a colon, compared on their UTF-8 bytes without making a substring; nil when a
    /// string is not stored contiguously (then ask `KeyName.namespace(of:)`).
    /// - Complexity: O(length of `name`); O(length of `key`) for the default namespace.
    @inline(__always)
    static func key(_ key: String, isIn name: String) -> Bool? {
        let colon = UInt8(ascii: ":")
        return key.utf8.withContiguousStorageIfAvailable { k -> Bool? in
            name.utf8.withContiguousStorageIfAvailable { n -> Bool in
                if k.count > n.count && k[n.count] == colon
                    && (n.isEmpty || memcmp(k.baseAddress!, n.baseAddress!, n.count) == 0) {
                    return true
                }
                // A key without a colon is in the default namespace.
                return name == KeyName.defaultNamespace && !k.contains(colon)
            }
        } ?? nil
    }

    /// Sets a namespace's policy and whether it counts as defined.
    /// - Complexity: O(1).
    mutating func setPolicy(_ ns: Int32, _ policy: Policy, defined: Bool) {
        maxTotal += Self.counted(policy.max) - Self.counted(all[Int(ns)].policy.max)
        all[Int(ns)].policy = policy
        all[Int(ns)].defined = defined
        if policy.dedupe != nil { dedupes = true }
    }
}

// MARK: - Invariants

extension NamespaceTable {
    /// What is wrong with the table, one message per broken rule (see the type's invariants);
    /// empty when it is sound.
    /// - Complexity: O(k) for k namespaces.
    func invariantViolations() -> [String] {
        var v: [String] = []
        if index.count != all.count { v.append("namespace index: holds \(index.count) names for \(all.count) namespaces") }
        for i in all.indices {
            let ns = all[i]
            if index[ns.name] != Int32(i) {
                v.append("namespace index: \(ns.name) maps to \(index[ns.name].map(String.init) ?? "nothing"), not slot \(i)")
            }
            let p = ns.policy
            if p.ttl < 0 || (p.stale ?? 0) < 0 || (p.max ?? 0) < 0 || (p.timeout ?? 1) <= 0 || (p.staleIfError ?? 0) < 0
                || p.retry < 0 || p.retry > Policy.maxRetries || p.backoff < 0 || (p.dedupe ?? 0) < 0 {
                v.append("namespace \(ns.name): policy out of range: \(p)")
            }
        }
        let total = all.reduce(0) { $0 + Self.counted($1.policy.max) }
        if maxTotal != total { v.append("namespace table: the maxes add up to \(total), not \(maxTotal)") }
        if lastSlot >= Int32(all.count) {
            v.append("namespace index: the last namespace found, slot \(lastSlot), is past the \(all.count) namespaces")
        }
        if packedNames.count != all.count {
            v.append("namespace index: \(packedNames.count) packed names for \(all.count) namespaces")
        } else {
            for i in all.indices where packedNames[i] != PackedName(all[i].name) {
                v.append("namespace index: the packed name of slot \(i) is not \(all[i].name)'s")
            }
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "NamespaceTable invariants broken:\n" + violations.joined(separator: "\n"))
    }
}

/// A namespace's name of at most 15 bytes as two integers: its first eight bytes, then the rest
/// with its length in the top byte (zeros past its end). A longer name packs as `long`, equal to
/// no packed name of a key (whose length is at most 15). Made for `NamespaceTable.slot(forKey:)`:
/// comparing a key's namespace with a name took some 90 instructions (the two strings' storage
/// reached, retained and released); two integer comparisons take a handful.
struct PackedName: Equatable {
    var low: UInt64
    var high: UInt64

    /// Packs no name (longer than 15 bytes).
    static let long = PackedName(low: 0, high: UInt64.max)

    private init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// `bytes` as a name: nil past 15 bytes.
    private init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= 15 else { return nil }
        var low: UInt64 = 0, high: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { low |= UInt64(byte) << (i * 8) } else { high |= UInt64(byte) << ((i - 8) * 8) }
        }
        self.init(low: low, high: high | UInt64(bytes.count) << 56)
    }

    /// A namespace's name packed; `long` for a longer one.
    init(_ name: String) {
        var name = name
        self = name.withUTF8 { PackedName(bytes: $0) } ?? .long
    }

    /// The namespace of the key whose UTF-8 bytes are `key`, as `KeyName.namespace(of:)` reads it
    /// (up to the first colon; `default` for a key without one), packed; nil when that name is
    /// longer than 15 bytes or the key has no colon in its first 16 bytes but is longer (then ask
    /// `KeyName.namespace(of:)`).
    /// - Complexity: O(1): at most 16 bytes read.
    @inline(__always)
    init?(namespaceOf key: UnsafeBufferPointer<UInt8>) {
        guard let base = key.baseAddress else { return nil }
        let n = key.count
        var low: UInt64 = 0, high: UInt64 = 0
        var i = 0
        while i < n {
            let byte = base[i]
            if byte == UInt8(ascii: ":") {
                self.init(low: low, high: high | UInt64(truncatingIfNeeded: i) << 56)
                return
            }
            if i == 15 { return nil }
            if i < 8 { low |= UInt64(byte) << (i &* 8) } else { high |= UInt64(byte) << ((i &- 8) &* 8) }
            i &+= 1
        }
        // No colon in the whole key: the default namespace.
        self = Self.defaultNamespace
    }

    private static let defaultNamespace = PackedName(KeyName.defaultNamespace)
}
