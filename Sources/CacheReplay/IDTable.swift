/// A map from 64-bit key ids to slot numbers: open addressing with linear probing and
/// backward-shift deletion, so it never holds tombstones. An id and its slot share a 16-byte
/// bucket, so a probe reads one cache line (two arrays, one of ids and one of slots, read two).
/// Grows by doubling when three quarters full.
struct IDTable {
    struct Bucket {
        var id: UInt64
        /// -1: empty.
        var slot: Int32
    }

    private var buckets: [Bucket]
    private var mask: Int
    private var shift: UInt64
    private(set) var count = 0

    /// A table that holds `capacity` ids without growing.
    init(capacity: Int = 16) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        buckets = Array(repeating: Bucket(id: 0, slot: -1), count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    /// Fibonacci hashing over a multiplied id: oracle ids are often small consecutive numbers.
    @inline(__always)
    private static func home(_ id: UInt64, _ shift: UInt64) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot of `id`, or -1.
    @inline(__always)
    func find(_ id: UInt64) -> Int32 {
        let mask = mask
        var i = Self.home(id, shift)
        return buckets.withUnsafeBufferPointer { b in
            while true {
                let bucket = b[i]
                if bucket.slot < 0 { return -1 }
                if bucket.id == id { return bucket.slot }
                i = (i + 1) & mask
            }
        }
    }

    /// Maps `id` (not present) to `slot`.
    @inline(__always)
    mutating func insert(_ id: UInt64, _ slot: Int32) {
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        let mask = mask
        var i = Self.home(id, shift)
        buckets.withUnsafeMutableBufferPointer { b in
            while b[i].slot >= 0 { i = (i + 1) & mask }
            b[i] = Bucket(id: id, slot: slot)
        }
        count += 1
    }

    /// Changes the slot of a present `id`.
    @inline(__always)
    mutating func update(_ id: UInt64, _ slot: Int32) {
        let mask = mask
        var i = Self.home(id, shift)
        buckets.withUnsafeMutableBufferPointer { b in
            while b[i].slot >= 0 {
                if b[i].id == id { b[i].slot = slot; return }
                i = (i + 1) & mask
            }
        }
    }

    /// Removes `id` if present, shifting later entries of its probe run back.
    @inline(__always)
    mutating func remove(_ id: UInt64) {
        let mask = mask
        let shift = shift
        let removed: Bool = buckets.withUnsafeMutableBufferPointer { b in
            var i = Self.home(id, shift)
            while true {
                if b[i].slot < 0 { return false }
                if b[i].id == id { break }
                i = (i + 1) & mask
            }
            // Backward shift: move each later entry of the run into the hole when its home
            // does not lie cyclically in (hole, its position].
            var hole = i
            var j = (i + 1) & mask
            while b[j].slot >= 0 {
                let k = Self.home(b[j].id, shift)
                let stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j)
                if !stays {
                    b[hole] = b[j]
                    hole = j
                }
                j = (j + 1) & mask
            }
            b[hole].slot = -1
            return true
        }
        if removed { count -= 1 }
    }

    private mutating func grow() {
        let old = buckets
        let size = buckets.count * 2
        buckets = Array(repeating: Bucket(id: 0, slot: -1), count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        count = 0
        for bucket in old where bucket.slot >= 0 { insert(bucket.id, bucket.slot) }
    }

    /// Bytes held by the table's array.
    var bytes: Int { buckets.count * MemoryLayout<Bucket>.stride }
}
