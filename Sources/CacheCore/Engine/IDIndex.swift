/// Entity id → the live slots whose value embeds it. Most entities are cached in one entry, so an
/// id holds its one slot inline; an id embedded by two or more entries holds the index of a set of
/// its own. An id that is an integer's decimal text (`42`, whether the value held `42` or `"42"`)
/// is keyed by the integer: one in 32 bits shares an 8-byte bucket with what it holds
/// (`SmallIntTable`), a larger one takes a dictionary's 12 bytes, any other text 20.
struct IDIndex {
    /// What each id holds: a slot (`>= 0`), or `-(k + 1)` for the slots in `sets[k]`. By integer
    /// id in 32 bits, by other integer id, then by other ids.
    private var small = SmallIntTable()
    private var ints: [Int64: Int32] = [:]
    private var strings: [String: Int32] = [:]
    /// Sets of two or more slots; a free one (listed in `freeSets`) is empty.
    private var sets: [Set<Int32>] = []
    private var freeSets: [Int32] = []

    /// An id as the index keys it: the integer whose decimal text it is (as `String(n)` prints
    /// it), or its text. A put reads its value's ids as keys (`StoredValue.entityIDKeys`), with
    /// no string made for an integer.
    enum Key: Hashable {
        case int(Int64)
        case text(String)

        /// The key of an id given as text.
        init(_ id: String) {
            if let n = IDIndex.integer(id) { self = .int(n) } else { self = .text(id) }
        }

        /// The key of an id given as UTF-8 bytes: `Key(String(decoding: bytes, as: UTF8.self))`,
        /// with no string made for an integer's decimal text.
        /// - Complexity: O(n) in the number of bytes.
        init(utf8 bytes: UnsafeBufferPointer<UInt8>) {
            if let n = IDIndex.integer(utf8: bytes) { self = .int(n) } else { self = .text(String(decoding: bytes, as: UTF8.self)) }
        }
    }

    /// The integer whose decimal text `id` is, if it is one (as `String(n)` prints it).
    @inline(__always)
    private static func integer(_ id: String) -> Int64? {
        var id = id
        return id.withUTF8 { integer(utf8: $0) }
    }

    /// The integer whose decimal text `bytes` is, exactly as `String(n)` prints it: an optional
    /// `-`, then digits without a leading zero (`0` alone, not `-0`), within `Int64`; else nil.
    /// - Complexity: O(n) in the number of bytes (at most 20 read).
    static func integer(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        let n = bytes.count
        guard n > 0, n <= 20 else { return nil }
        let negative = bytes[0] == UInt8(ascii: "-")
        let first = negative ? 1 : 0
        guard first < n else { return nil }
        // No leading zero: `0` is the only text starting with one, and `-0` prints as `0`.
        if bytes[first] == UInt8(ascii: "0") { return n == 1 ? 0 : nil }
        // Accumulated negatively, so that Int64.min fits.
        var value: Int64 = 0
        for k in first..<n {
            let digit = bytes[k] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.subtractingReportingOverflow(Int64(digit))
            if o1 || o2 { return nil }
            value = s
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    /// The number of ids.
    var count: Int { small.count + ints.count + strings.count }

    /// What `id` holds: a slot (`>= 0`), a set (`< 0`), or nil.
    func raw(_ id: String) -> Int32? { raw(Key(id)) }

    @inline(__always)
    private func raw(_ id: Key) -> Int32? {
        switch id {
        case .int(let n):
            if let k = Int32(exactly: n) { return small[k] }
            return ints[n]
        case .text(let text):
            return strings[text]
        }
    }

    @inline(__always)
    private mutating func setRaw(_ id: Key, _ raw: Int32?) {
        switch id {
        case .int(let n):
            if let k = Int32(exactly: n) { small[k] = raw } else { ints[n] = raw }
        case .text(let text):
            strings[text] = raw
        }
    }

    /// The slots embedding `id`, in no particular order; empty when none does.
    /// - Complexity: O(1) plus the slots returned.
    subscript(id: String) -> [Int32] {
        guard let raw = raw(id) else { return [] }
        return raw >= 0 ? [raw] : Array(sets[Int(-raw - 1)])
    }

    /// Whether `slot` is listed for `id`.
    func contains(_ slot: Int32, for id: String) -> Bool {
        guard let raw = raw(id) else { return false }
        return raw >= 0 ? raw == slot : sets[Int(-raw - 1)].contains(slot)
    }

    /// Lists `slot` for `id`.
    /// - Complexity: O(1) amortized.
    mutating func insert(_ slot: Int32, for id: String) { insert(slot, for: Key(id)) }

    /// Lists `slot` for the id keyed `id`; listing it again changes nothing.
    /// - Complexity: O(1) amortized.
    mutating func insert(_ slot: Int32, for id: Key) {
        let found: Int32?
        // The commonest id, an integer in 32 bits not listed yet, is found absent and listed
        // in one probe.
        if case .int(let n) = id, let k = Int32(exactly: n) {
            found = small.valueOrInsert(k, slot)
        } else {
            found = raw(id)
            if found == nil { setRaw(id, slot) }
        }
        guard let raw = found else { return }
        if raw < 0 {
            sets[Int(-raw - 1)].insert(slot)
        } else if raw != slot {
            let pair: Set<Int32> = [raw, slot]
            let k: Int32
            if let free = freeSets.popLast() {
                k = free
                sets[Int(k)] = pair
            } else {
                k = Int32(sets.count)
                sets.append(pair)
            }
            setRaw(id, -k - 1)
        }
    }

    /// Takes `slot` off `id`'s list; an id left with one slot holds it inline again, one left
    /// with none is forgotten.
    /// - Complexity: O(1) amortized.
    mutating func remove(_ slot: Int32, for id: String) { remove(slot, for: Key(id)) }

    /// `remove(_:for:)` of the id keyed `id`; taking off a slot not listed changes nothing.
    /// - Complexity: O(1) amortized.
    mutating func remove(_ slot: Int32, for id: Key) {
        guard let raw = raw(id) else { return }
        if raw >= 0 {
            if raw == slot { setRaw(id, nil) }
            return
        }
        let k = Int(-raw - 1)
        sets[k].remove(slot)
        guard sets[k].count < 2 else { return }
        setRaw(id, sets[k].first)
        sets[k] = []
        freeSets.append(Int32(k))
    }

    /// Every id with what it holds, in no particular order (for the invariant checks).
    private var allRaw: [(id: String, raw: Int32)] {
        small.contents().map { (String($0.key), $0.raw) } + ints.map { (String($0.key), $0.value) }
            + strings.map { ($0.key, $0.value) }
    }

    /// Every id with its slots, in no particular order (for the invariant checks).
    var all: [(id: String, slots: [Int32])] {
        allRaw.map { ($0.id, $0.raw >= 0 ? [$0.raw] : Array(sets[Int(-$0.raw - 1)])) }
    }

    /// What is wrong with the index's own form: an integer id keyed as text or a 32-bit one keyed
    /// as a wider integer, a broken small-integer table, an id with a set of fewer than two
    /// slots, or a set that is neither some id's nor free.
    func formViolations() -> [String] {
        var v: [String] = small.structureViolations()
        for id in strings.keys where Self.integer(id) != nil { v.append("id index: integer id \(id) is keyed as text") }
        for n in ints.keys where Int32(exactly: n) != nil { v.append("id index: integer id \(n) is not in the small table") }
        var used = Set<Int32>()
        for (id, raw) in allRaw where raw < 0 {
            let k = -raw - 1
            guard Int(k) < sets.count else { v.append("id index: \(id) names set \(k) of \(sets.count)"); continue }
            if sets[Int(k)].count < 2 { v.append("id index: \(id) has a set of \(sets[Int(k)].count) slots, not inline") }
            if !used.insert(k).inserted { v.append("id index: set \(k) is shared by two ids") }
        }
        let free = Set(freeSets)
        if free.count != freeSets.count { v.append("id index: a free set is listed twice") }
        for k in free where used.contains(k) || !sets[Int(k)].isEmpty { v.append("id index: free set \(k) is in use") }
        if used.count + free.count != sets.count { v.append("id index: \(sets.count - used.count - free.count) sets are neither used nor free") }
        return v
    }
}

/// A map from 32-bit integers to `Int32` values other than `Int32.min`: an open-addressing hash
/// table of 8-byte buckets, each the key's bits over the value's, probed linearly. The hash is a
/// fixed multiplicative one (its bucket order is the same in every run, though nothing may depend
/// on it). A removal shifts the buckets after it back (no tombstones), as in `KeyIndex`.
///
/// Complexity: lookup, insertion and removal are O(1) expected (a table at most three quarters
/// full); growth takes the table half as large again (`TableSize`), O(1) amortized per insertion.
struct SmallIntTable {
    /// `key << 32 | value`, or `empty`; at least 8 of them (`TableSize`).
    private var buckets: [UInt64] = Array(repeating: Self.empty, count: 8)
    /// The number of keys.
    private(set) var count = 0

    /// A value no key holds (`Int32.min`, which is never a slot nor a set's index), marking an empty bucket.
    private static let empty = UInt64(UInt32(bitPattern: Int32.min))

    @inline(__always)
    private static func bucket(_ key: Int32, _ value: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: key)) << 32 | UInt64(UInt32(bitPattern: value))
    }

    @inline(__always)
    private static func key(_ bucket: UInt64) -> Int32 { Int32(truncatingIfNeeded: bucket >> 32) }

    @inline(__always)
    private static func value(_ bucket: UInt64) -> Int32 { Int32(truncatingIfNeeded: bucket) }

    /// The home bucket of a key (Fibonacci hashing: the top 32 bits of the key times 2^64 / φ,
    /// scaled to the table's size).
    @inline(__always)
    private func home(_ key: Int32) -> Int {
        let h = UInt64(UInt32(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15
        return TableSize.home(UInt32(truncatingIfNeeded: h >> 32), buckets.count)
    }

    /// The index of the bucket holding `key`, or nil.
    @inline(__always)
    private func find(_ key: Int32) -> Int? {
        var i = home(key)
        // The table is never full, so an empty bucket ends the probe within its size.
        for _ in 0..<buckets.count {
            let b = buckets[i]
            if b == Self.empty { return nil }
            if Self.key(b) == key { return i }
            i = TableSize.next(i, buckets.count)
        }
        return nil
    }

    /// The value of `key` if it has one; else sets it to `value` and returns nil: a lookup and
    /// an insertion in one probe.
    /// - Complexity: O(1) amortized.
    mutating func valueOrInsert(_ key: Int32, _ value: Int32) -> Int32? {
        precondition(value != Int32.min, "Int32.min marks an empty bucket")
        if count + 1 > TableSize.limit(buckets.count) { rehash(TableSize.grown(buckets.count)) }
        var i = home(key)
        for _ in 0..<buckets.count {
            let b = buckets[i]
            if b == Self.empty {
                buckets[i] = Self.bucket(key, value)
                count += 1
                return nil
            }
            if Self.key(b) == key { return Self.value(b) }
            i = TableSize.next(i, buckets.count)
        }
        preconditionFailure("small integer table full")
    }

    /// The value of `key`, or nil; setting nil removes the key.
    /// - Complexity: O(1) expected (a set: amortized).
    subscript(key: Int32) -> Int32? {
        get {
            guard let i = find(key) else { return nil }
            return Self.value(buckets[i])
        }
        set {
            if let value = newValue {
                precondition(value != Int32.min, "Int32.min marks an empty bucket")
                if let i = find(key) {
                    buckets[i] = Self.bucket(key, value)
                    return
                }
                if count + 1 > TableSize.limit(buckets.count) { rehash(TableSize.grown(buckets.count)) }
                place(Self.bucket(key, value))
                count += 1
            } else if let i = find(key) {
                removeBucket(at: i)
            }
        }
    }

    /// Empties bucket `i`, moving the buckets after it in its probe run back into the hole where
    /// their probe allows.
    private mutating func removeBucket(at i: Int) {
        let size = buckets.count
        var hole = i
        var j = TableSize.next(i, size)
        for _ in 0..<size {
            let b = buckets[j]
            if b == Self.empty { break }
            let home = home(Self.key(b))
            // The bucket at j may move back to the hole when the hole lies on its probe path
            // (from its home up to j, cyclically).
            if TableSize.distance(home, j, size) >= TableSize.distance(hole, j, size) {
                buckets[hole] = b
                hole = j
            }
            j = TableSize.next(j, size)
        }
        buckets[hole] = Self.empty
        count -= 1
    }

    private mutating func rehash(_ size: Int) {
        let old = buckets
        buckets = Array(repeating: Self.empty, count: size)
        for b in old where b != Self.empty { place(b) }
    }

    /// Puts a bucket in the first empty place from its home.
    @inline(__always)
    private mutating func place(_ bucket: UInt64) {
        var i = home(Self.key(bucket))
        for _ in 0..<buckets.count {
            if buckets[i] == Self.empty { buckets[i] = bucket; return }
            i = TableSize.next(i, buckets.count)
        }
        preconditionFailure("small integer table full")
    }

    /// Every key with its value, in bucket order (for checks only).
    func contents() -> [(key: Int32, raw: Int32)] {
        buckets.compactMap { b in b == Self.empty ? nil : (Self.key(b), Self.value(b)) }
    }

    /// What is wrong with the table's structure: a bucket its probe from home cannot reach, a key
    /// held twice, a count that disagrees, a table fuller than three quarters.
    /// - Complexity: O(buckets).
    func structureViolations() -> [String] {
        var v: [String] = []
        var held = 0
        var keys = Set<Int32>()
        for i in buckets.indices where buckets[i] != Self.empty {
            let key = Self.key(buckets[i])
            held += 1
            if !keys.insert(key).inserted { v.append("id index: integer id \(key) is held twice") }
            var p = home(key)
            while p != i {
                if buckets[p] == Self.empty {
                    v.append("id index: bucket \(i) (id \(key)) is cut off from its home by an empty bucket at \(p)")
                    break
                }
                p = TableSize.next(p, buckets.count)
            }
        }
        if held != count { v.append("id index: \(held) buckets hold integer ids, its count is \(count)") }
        if count > TableSize.limit(buckets.count) { v.append("id index: \(count) integer ids in \(buckets.count) buckets") }
        return v
    }
}
