/// Key → slot of the live entries: an open-addressing hash table of 8-byte buckets, each the
/// low 32 bits of the key's hash and the slot + 1 (0: an empty bucket), probed linearly.
///
/// The index does not hold the keys: a lookup compares the key only against the stored key of a
/// slot whose bucket carries the same 32 hash bits (the caller's `matches`), so a hit reads one
/// bucket line and the entry it leads to, and a miss usually no entry at all. A removal shifts
/// the buckets after it back (no tombstones), so probe chains stay as short as if the removed key
/// had never been there and a removal needs no rehash of other keys: a bucket's home is its
/// stored hash bits.
///
/// Keys are hashed with Swift's `Hasher`, seeded per process: the bucket order differs from run
/// to run, so nothing may iterate the index for anything a user sees (only the invariant check
/// walks it).
///
/// Complexity: lookup, insertion and removal are O(1) expected (one hash each; a table at most
/// three quarters full); growth doubles the table, O(1) amortized per insertion.
struct KeyIndex {
    /// `hash << 32 | (slot + 1)`, or 0 when empty; the count is a power of two, at least 8.
    private var buckets: [UInt64]
    private var mask: Int
    /// The number of keys.
    private(set) var count = 0

    init(capacity: Int = 0) {
        let size = Self.size(for: capacity)
        buckets = Array(repeating: 0, count: size)
        mask = size - 1
    }

    /// The smallest power of two (at least 8) holding `n` keys at most three quarters full.
    private static func size(for n: Int) -> Int {
        var size = 8
        while size - size / 4 < n { size <<= 1 }
        return size
    }

    /// The number of buckets.
    var bucketCount: Int { buckets.count }

    /// The hash of a key (its canonical form; equal keys, equal hashes).
    @inline(__always)
    static func hash(_ key: String) -> UInt32 {
        UInt32(truncatingIfNeeded: key.hashValue)
    }

    /// The slot of the key whose hash is `hash` and whose stored key `matches`, or nil.
    /// `matches` is called only for slots whose bucket carries the same hash.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func find(hash: UInt32, where matches: (Int32) -> Bool) -> Int32? {
        let tag = UInt64(hash) << 32
        var i = Int(hash) & mask
        // The table is never full, so an empty bucket ends the probe within its size.
        for _ in 0...mask {
            let b = buckets[i]
            if b == 0 { return nil }
            if b & 0xFFFF_FFFF_0000_0000 == tag {
                let slot = Int32(truncatingIfNeeded: b & 0xFFFF_FFFF) - 1
                if matches(slot) { return slot }
            }
            i = (i + 1) & mask
        }
        return nil
    }

    /// Adds a key known to be absent (its hash and slot), growing the table when it would be over
    /// three quarters full.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func insert(hash: UInt32, slot: Int32) {
        precondition(slot >= 0, "a slot is never negative")
        if count + 1 > buckets.count - buckets.count / 4 { grow() }
        place(UInt64(hash) << 32 | UInt64(UInt32(slot) + 1))
        count += 1
    }

    /// Removes the key whose hash is `hash` and which is in `slot`; false when there is none.
    /// The buckets after it in its probe run move back into the hole where their probe allows.
    /// - Complexity: O(1) expected.
    @discardableResult
    mutating func remove(hash: UInt32, slot: Int32) -> Bool {
        let wanted = UInt64(hash) << 32 | UInt64(UInt32(slot) + 1)
        var i = Int(hash) & mask
        var found = false
        for _ in 0...mask {
            let b = buckets[i]
            if b == 0 { break }
            if b == wanted { found = true; break }
            i = (i + 1) & mask
        }
        guard found else { return false }
        var hole = i
        var j = (i + 1) & mask
        for _ in 0...mask {
            let b = buckets[j]
            if b == 0 { break }
            let home = Int(truncatingIfNeeded: b >> 32) & mask
            // The bucket at j may move back to the hole when the hole lies on its probe path
            // (from its home up to j, cyclically).
            if (j &- home) & mask >= (j &- hole) & mask {
                buckets[hole] = b
                hole = j
            }
            j = (j + 1) & mask
        }
        buckets[hole] = 0
        count -= 1
        return true
    }

    /// Forgets every key, keeping the table's size.
    mutating func removeAll() {
        for i in buckets.indices { buckets[i] = 0 }
        count = 0
    }

    /// Makes room for `n` keys without growing.
    mutating func reserveCapacity(_ n: Int) {
        let size = Self.size(for: n)
        if size > buckets.count { rehash(size) }
    }

    private mutating func grow() { rehash(buckets.count * 2) }

    private mutating func rehash(_ size: Int) {
        let old = buckets
        buckets = Array(repeating: 0, count: size)
        mask = size - 1
        for b in old where b != 0 { place(b) }
    }

    /// Puts a bucket in the first empty place from its home.
    @inline(__always)
    private mutating func place(_ bucket: UInt64) {
        var i = Int(truncatingIfNeeded: bucket >> 32) & mask
        for _ in 0...mask {
            if buckets[i] == 0 { buckets[i] = bucket; return }
            i = (i + 1) & mask
        }
        preconditionFailure("key index full")
    }

    /// Every (hash, slot) held, in bucket order (which depends on the process's hash seed: for
    /// checks only).
    func contents() -> [(hash: UInt32, slot: Int32)] {
        buckets.compactMap { b in
            b == 0 ? nil : (UInt32(truncatingIfNeeded: b >> 32), Int32(truncatingIfNeeded: b & 0xFFFF_FFFF) - 1)
        }
    }

    /// What is wrong with the table's own structure: a bucket that its probe from home cannot
    /// reach (an empty bucket between them), a slot held twice, a count that disagrees, a table
    /// fuller than three quarters.
    /// - Complexity: O(buckets).
    func structureViolations() -> [String] {
        var v: [String] = []
        var held = 0
        var slots = Set<Int32>()
        for i in buckets.indices where buckets[i] != 0 {
            let b = buckets[i]
            held += 1
            let slot = Int32(truncatingIfNeeded: b & 0xFFFF_FFFF) - 1
            if !slots.insert(slot).inserted { v.append("key index: slot \(slot) is held twice") }
            var p = Int(truncatingIfNeeded: b >> 32) & mask
            while p != i {
                if buckets[p] == 0 {
                    v.append("key index: bucket \(i) (slot \(slot)) is cut off from its home by an empty bucket at \(p)")
                    break
                }
                p = (p + 1) & mask
            }
        }
        if held != count { v.append("key index: \(held) buckets hold keys, its count is \(count)") }
        if count > buckets.count - buckets.count / 4 { v.append("key index: \(count) keys in \(buckets.count) buckets") }
        return v
    }

    /// Test hook: puts a bucket for `slot` with `hash` regardless of what the table holds.
    mutating func testingPlace(hash: UInt32, slot: Int32) {
        place(UInt64(hash) << 32 | UInt64(UInt32(slot) + 1))
        count += 1
    }
}
