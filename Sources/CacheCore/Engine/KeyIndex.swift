internal import CPrefetch

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
/// Keys are hashed with `KeyHash`, keyed per process from Swift's hash seed: the bucket order
/// differs from run to run, so nothing may iterate the index for anything a user sees (only the
/// invariant check walks it).
///
/// A key's home bucket is its 32 hash bits scaled to the table's size (`TableSize.home`), so the
/// size need not be a power of two: the table grows by half (`TableSize`), which keeps it between
/// half and three quarters full where doubling let it fall to three eighths (at 1 M keys, 12 bytes
/// a key instead of 16.8).
///
/// Complexity: lookup, insertion and removal are O(1) expected (one hash each; a table at most
/// three quarters full); growth takes the table half as large again, O(1) amortized per insertion.
struct KeyIndex {
    /// `hash << 32 | (slot + 1)`, or 0 when empty; at least 8 of them (`TableSize`).
    private var buckets: [UInt64]
    /// The number of keys.
    private(set) var count = 0
    /// `KeyHash.seeds`, copied: the same in every index of the process, so a hash taken with
    /// either is the same hash. The engine's `get` hashes with this copy, read through its stored
    /// properties: a read of the global checks that it is initialized (a `swift_once` call, some
    /// 12 instructions a get).
    let seeds = KeyHash.seeds

    init(capacity: Int = 0) {
        buckets = HugePages.array(repeating: 0, count: TableSize.holding(capacity))
    }

    /// The number of buckets.
    var bucketCount: Int { buckets.count }

    /// The hash of a key (equal keys, equal hashes; `String`'s `==` is canonical equivalence, as
    /// `é` and `e` + U+0301, or `;` and U+037E): `KeyHash` of the UTF-8 bytes of an ASCII key,
    /// which is in Unicode normal form C as it is; for the rare key that is not ASCII,
    /// `nonASCIIHash`.
    /// - Complexity: O(length of the key).
    @inline(__always)
    static func hash(_ key: String) -> UInt32 {
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt32? in
            KeyHash.asciiHash(bytes, KeyHash.seeds)
        }
        if let ascii, let hash = ascii { return hash }
        return nonASCIIHash(key)
    }

    /// `KeyIndex.hash(key)`, with this index's copy of the seeds (no check that the global is set).
    /// - Complexity: O(length of the key).
    @inline(__always)
    func hash(_ key: String) -> UInt32 {
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt32? in
            KeyHash.asciiHash(bytes, seeds)
        }
        if let ascii, let hash = ascii { return hash }
        return Self.nonASCIIHash(key)
    }

    /// The Unicode scalars that are not ASCII but whose normal form C is (each a singleton
    /// decomposition): U+037E GREEK QUESTION MARK is `;`, U+1FEF GREEK VARIA is `` ` ``, U+212A
    /// KELVIN SIGN is `K`. No composition gives ASCII, so a key is equal to an ASCII key exactly
    /// when each of its scalars is ASCII or one of these (`KeyIndexTests` checks the list against
    /// the standard library's own Unicode data).
    static let asciiInNormalForm: [UInt32: UInt8] = [0x37E: 0x3B, 0x1FEF: 0x60, 0x212A: 0x4B]

    /// The hash of a key that is not ASCII. A key equal to an ASCII key (its scalars ASCII or in
    /// `asciiInNormalForm`) hashes as that key's bytes, as `hash` hashes the ASCII key; any other
    /// is hashed by the standard library's `Hasher`, whose hash of a `String` is the same for
    /// every canonically equivalent spelling (keys equal to it are not ASCII either). Public API
    /// only: no normalization of our own, whose tables would age with Unicode.
    @inline(never)
    static func nonASCIIHash(_ key: String) -> UInt32 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count)
        for scalar in key.unicodeScalars {
            if scalar.isASCII {
                bytes.append(UInt8(scalar.value))
            } else if let ascii = asciiInNormalForm[scalar.value] {
                bytes.append(ascii)
            } else {
                var hasher = Hasher()
                hasher.combine(key)
                let hash = UInt64(bitPattern: Int64(hasher.finalize()))
                return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
            }
        }
        return bytes.withUnsafeBufferPointer { KeyHash.hash($0) }
    }

    /// A key in canonical form (`KeyName.canonical`) and its hash: for an ASCII key without the
    /// `default:` prefix (the usual key, already canonical) one pass over its bytes decides both.
    @inline(__always)
    static func canonical(_ key: String) -> (key: String, hash: UInt32) {
        if let hash = hashIfCanonical(key, KeyHash.seeds) { return (key, hash) }
        let canonical = KeyName.canonical(key)
        return (canonical, hash(canonical))
    }

    /// The hash of a key that is its own canonical form as it is (ASCII, without the `default:`
    /// prefix: the usual key), decided in the one pass over its bytes that hashes them; nil for any
    /// other key (`canonical` then makes its canonical form). A caller that gets a hash uses the key
    /// as given, with no copy of it to make and drop.
    @inline(__always)
    static func hashIfCanonical(_ key: String, _ seeds: KeyHash.Seeds) -> UInt32? {
        let fast = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt32? in
            KeyHash.hasDefaultPrefix(bytes) ? nil : KeyHash.asciiHash(bytes, seeds)
        }
        return fast ?? nil
    }

    /// Asks the processor to bring the bucket where a look-up of `key` (a key as the entries
    /// hold it) begins into its cache, without waiting for it (`cachesh_prefetch`). An ASCII key
    /// only, the usual one: another is hashed by `nonASCIIHash`, which builds its bytes, more
    /// than a hint is worth.
    @inline(__always)
    func prefetchBucket(of key: String) {
        guard !buckets.isEmpty else { return }
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt32? in
            KeyHash.asciiHash(bytes, seeds)
        }
        guard let ascii, let hash = ascii else { return }
        let i = TableSize.home(hash, buckets.count)
        buckets.withUnsafeBufferPointer { cachesh_prefetch($0.baseAddress! + i) }
    }

    /// The slot of the key whose hash is `hash` and whose stored key `matches`, or nil.
    /// `matches` is called only for slots whose bucket carries the same hash.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func find(hash: UInt32, where matches: (Int32) -> Bool) -> Int32? {
        let tag = UInt64(hash) << 32
        let size = buckets.count
        var i = TableSize.home(hash, size)
        // The table is never full, so an empty bucket ends the probe within its size.
        for _ in 0..<size {
            let b = buckets[i]
            if b == 0 { return nil }
            if b & 0xFFFF_FFFF_0000_0000 == tag {
                let slot = Int32(truncatingIfNeeded: b & 0xFFFF_FFFF) - 1
                if matches(slot) { return slot }
            }
            i = TableSize.next(i, size)
        }
        return nil
    }

    /// Adds a key known to be absent (its hash and slot), growing the table when it would be over
    /// three quarters full.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func insert(hash: UInt32, slot: Int32) {
        precondition(slot >= 0, "a slot is never negative")
        if count + 1 > TableSize.limit(buckets.count) { grow() }
        place(UInt64(hash) << 32 | UInt64(UInt32(slot) + 1))
        count += 1
    }

    /// Removes the key whose hash is `hash` and which is in `slot`; false when there is none.
    /// The buckets after it in its probe run move back into the hole where their probe allows.
    /// - Complexity: O(1) expected.
    @discardableResult
    mutating func remove(hash: UInt32, slot: Int32) -> Bool {
        let wanted = UInt64(hash) << 32 | UInt64(UInt32(slot) + 1)
        let size = buckets.count
        var i = TableSize.home(hash, size)
        var found = false
        for _ in 0..<size {
            let b = buckets[i]
            if b == 0 { break }
            if b == wanted { found = true; break }
            i = TableSize.next(i, size)
        }
        guard found else { return false }
        var hole = i
        var j = TableSize.next(i, size)
        for _ in 0..<size {
            let b = buckets[j]
            if b == 0 { break }
            let home = TableSize.home(UInt32(truncatingIfNeeded: b >> 32), size)
            // The bucket at j may move back to the hole when the hole lies on its probe path
            // (from its home up to j, cyclically).
            if TableSize.distance(home, j, size) >= TableSize.distance(hole, j, size) {
                buckets[hole] = b
                hole = j
            }
            j = TableSize.next(j, size)
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
        let size = TableSize.holding(n)
        if size > buckets.count { rehash(size) }
    }

    private mutating func grow() { rehash(TableSize.grown(buckets.count)) }

    private mutating func rehash(_ size: Int) {
        let old = buckets
        buckets = HugePages.array(repeating: 0, count: size)
        for b in old where b != 0 { place(b) }
    }

    /// Puts a bucket in the first empty place from its home.
    @inline(__always)
    private mutating func place(_ bucket: UInt64) {
        let size = buckets.count
        var i = TableSize.home(UInt32(truncatingIfNeeded: bucket >> 32), size)
        for _ in 0..<size {
            if buckets[i] == 0 { buckets[i] = bucket; return }
            i = TableSize.next(i, size)
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
            var p = TableSize.home(UInt32(truncatingIfNeeded: b >> 32), buckets.count)
            while p != i {
                if buckets[p] == 0 {
                    v.append("key index: bucket \(i) (slot \(slot)) is cut off from its home by an empty bucket at \(p)")
                    break
                }
                p = TableSize.next(p, buckets.count)
            }
        }
        if held != count { v.append("key index: \(held) buckets hold keys, its count is \(count)") }
        if count > TableSize.limit(buckets.count) { v.append("key index: \(count) keys in \(buckets.count) buckets") }
        return v
    }

    /// Test hook: puts a bucket for `slot` with `hash` regardless of what the table holds.
    mutating func testingPlace(hash: UInt32, slot: Int32) {
        place(UInt64(hash) << 32 | UInt64(UInt32(slot) + 1))
        count += 1
    }
}

/// The hash of a key's bytes that the key index files it under: a folded multiply (the high and
/// low halves of a 128-bit product, xored) of the bytes, 16 at a time, mixed with keys drawn per
/// process. Swift's `Hasher` (SipHash-1-3) took some 230 instructions for a key of 8 bytes; this
/// takes about 30, on every `get`, `put` and lookup of a key.
///
/// The keys come from Swift's own per-process hash seed (a `Hasher`'s output), so, as with
/// `Hasher`, which keys share a bucket cannot be known from outside the process (no one can
/// choose keys that all collide), and `SWIFT_DETERMINISTIC_HASHING` makes them the same in
/// every run (what the instruction-count benchmarks set).
enum KeyHash {
    /// The per-process keys.
    struct Seeds {
        let s0: UInt64
        let s1: UInt64
        let s2: UInt64
        init() {
            func draw(_ n: UInt64) -> UInt64 {
                var hasher = Hasher()
                hasher.combine(n)
                return UInt64(bitPattern: Int64(hasher.finalize()))
            }
            s0 = draw(0x243F_6A88_85A3_08D3)
            s1 = draw(0x1319_8A2E_0370_7344)
            s2 = draw(0xA409_3822_299F_31D0)
        }
    }

    static let seeds = Seeds()

    /// The high and low halves of `a * b` (128 bits) xored: every bit of both factors reaches
    /// the low bits of the result.
    @inline(__always)
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return high ^ low
    }

    /// Whether the bytes start with `default:` (the default namespace's prefix, which a key's
    /// canonical form drops).
    @inline(__always)
    static func hasDefaultPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 8, let base = bytes.baseAddress else { return false }
        // "default:" read as a little-endian UInt64.
        return UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)) == 0x3A74_6C75_6166_6564
    }

    /// The hash of `bytes`: one folded multiply for at most 16 bytes, one more per 16 bytes
    /// beyond; the length is mixed in, so bytes read twice (the overlapping ends of a short key)
    /// cannot make two lengths collide.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        hashAndBits(bytes, seeds).hash
    }

    /// The hash of `bytes` (as `hash`) when every byte is ASCII (below 0x80), else nil.
    @inline(__always)
    static func asciiHash(_ bytes: UnsafeBufferPointer<UInt8>, _ seeds: Seeds) -> UInt32? {
        let (hash, bits) = hashAndBits(bytes, seeds)
        return bits & 0x8080_8080_8080_8080 == 0 ? hash : nil
    }

    /// The hash of `bytes` and the OR of the words it read. The words read cover every byte (the
    /// last 16 or 8 bytes read as two overlapping words, 4 to 7 as two overlapping halves, 1 to 3
    /// as the first, middle and last, each at its own byte's place), so the OR has a byte's high
    /// bit set exactly when some byte has it: a key is checked to be ASCII in the pass that
    /// hashes it, with no loop of its own over the bytes. (Unused, the OR costs nothing: the
    /// optimizer drops it.)
    @inline(__always)
    static func hashAndBits(_ bytes: UnsafeBufferPointer<UInt8>, _ seeds: Seeds) -> (hash: UInt32, bits: UInt64) {
        let n = bytes.count
        var acc = seeds.s0 &+ UInt64(truncatingIfNeeded: n)
        var lo: UInt64 = 0
        var hi: UInt64 = 0
        var bits: UInt64 = 0
        if n > 0, let base = bytes.baseAddress {
            let p = UnsafeRawPointer(base)
            if n >= 8 {
                var i = 0
                // Every 16 bytes but the last 16 (read below: the last 16 bytes of the key, or
                // the first 8 and the last 8 of a key shorter than 16, overlapping).
                while n - i > 16 {
                    let a = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    let b = p.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                    bits |= a | b
                    acc = fold(a ^ seeds.s1, b ^ acc)
                    i += 16
                }
                lo = p.loadUnaligned(fromByteOffset: n >= 16 ? n - 16 : 0, as: UInt64.self)
                hi = p.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            } else if n >= 4 {
                lo = UInt64(p.loadUnaligned(as: UInt32.self))
                hi = UInt64(p.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            } else {
                lo = UInt64(bytes[0])
                hi = UInt64(bytes[n / 2]) << 8 | UInt64(bytes[n - 1])
            }
        }
        bits |= lo | hi
        let h = fold(lo ^ seeds.s1, hi ^ acc)
        let m = fold(h ^ seeds.s2, 0x9E37_79B9_7F4A_7C15)
        return (UInt32(truncatingIfNeeded: m) ^ UInt32(truncatingIfNeeded: m >> 32), bits)
    }
}

/// The sizes of the engine's open-addressing tables (`KeyIndex`, the id index's `SmallIntTable`):
/// at least 8 buckets, at most three quarters full, grown by half (8, 12, 18, 27, ...). A key's
/// home is its 32 hash bits scaled to the size (the top half of their product with it: one
/// multiplication, where a power-of-two size took a mask), so any size serves; with growth by half
/// a table is between half and three quarters full after it first grows, where doubling let it fall
/// to three eighths.
enum TableSize {
    /// The most keys a table of `size` buckets holds: three quarters of it.
    @inline(__always)
    static func limit(_ size: Int) -> Int { size - size / 4 }

    /// The size a table of `size` buckets grows to: half as large again.
    @inline(__always)
    static func grown(_ size: Int) -> Int { size + size / 2 }

    /// The smallest size of the sequence 8, 12, 18, ... that holds `n` keys.
    static func holding(_ n: Int) -> Int {
        var size = 8
        while limit(size) < n { size = grown(size) }
        return size
    }

    /// The home bucket of 32 hash bits in a table of `size` buckets (below 2^32).
    @inline(__always)
    static func home(_ hash: UInt32, _ size: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(hash) &* UInt64(truncatingIfNeeded: size)) >> 32)
    }

    /// The bucket after `i`, cyclically.
    @inline(__always)
    static func next(_ i: Int, _ size: Int) -> Int {
        let j = i + 1
        return j == size ? 0 : j
    }

    /// How many buckets lie from `from` forward to `to`, cyclically.
    @inline(__always)
    static func distance(_ from: Int, _ to: Int, _ size: Int) -> Int {
        to >= from ? to - from : to + size - from
    }
}
