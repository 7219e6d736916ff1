/// A map from 64-bit key ids to slot numbers: open addressing with linear probing and
/// backward-shift deletion, so it never holds tombstones. An id and its slot share a 16-byte
/// bucket, so a probe reads one cache line (two arrays, one of ids and one of slots, read two).
/// Grows by doubling when half full, up to 2^16 buckets (1 MiB, a core's second-level cache
/// here), and when three quarters full beyond: every miss of a replay finds, removes and inserts,
/// each a walk along a run of occupied buckets, and at three quarters full those runs were long
/// enough that a FIFO pass at `max=10000` took 40% longer than at a half; a bigger table keeps the
/// three quarters, so a sweep's largest sizes take no more memory than before. The buckets are a
/// `SlotArray`, so the table is noncopyable.
struct IDTable: ~Copyable {
    struct Bucket: BitwiseCopyable {
        var id: UInt64
        /// -1: empty.
        var slot: Int32
    }

    private var buckets: SlotArray<Bucket>
    private var mask: Int
    private var shift: UInt64
    private(set) var count = 0

    /// A table that holds `capacity` ids without growing.
    init(capacity: Int = 16) {
        var size = 16
        while Self.full(capacity, size) { size *= 2 }
        buckets = SlotArray(repeating: Bucket(id: 0, slot: -1), count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    /// Whether `count` ids are past the load limit of `size` buckets.
    @inline(__always)
    private static func full(_ count: Int, _ size: Int) -> Bool {
        size <= 1 << 16 ? count * 2 > size : count * 4 > size * 3
    }

    /// Fibonacci hashing over a multiplied id: oracle ids are often small consecutive numbers.
    @inline(__always)
    private static func home(_ id: UInt64, _ shift: UInt64) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot of `id`, or -1.
    @inline(__always)
    func find(_ id: UInt64) -> Int32 {
        var i = Self.home(id, shift)
        while true {
            let bucket = buckets[i]
            if bucket.slot < 0 { return -1 }
            if bucket.id == id { return bucket.slot }
            i = (i + 1) & mask
        }
    }

    /// Maps `id` (not present) to `slot`.
    @inline(__always)
    mutating func insert(_ id: UInt64, _ slot: Int32) {
        if Self.full(count + 1, buckets.count) { grow() }
        var i = Self.home(id, shift)
        while buckets[i].slot >= 0 { i = (i + 1) & mask }
        buckets[i] = Bucket(id: id, slot: slot)
        count += 1
    }

    /// Changes the slot of a present `id`.
    @inline(__always)
    mutating func update(_ id: UInt64, _ slot: Int32) {
        var i = Self.home(id, shift)
        while buckets[i].slot >= 0 {
            if buckets[i].id == id { buckets[i].slot = slot; return }
            i = (i + 1) & mask
        }
    }

    /// Removes `id` if present, shifting later entries of its probe run back.
    @inline(__always)
    mutating func remove(_ id: UInt64) {
        var i = Self.home(id, shift)
        while true {
            if buckets[i].slot < 0 { return }
            if buckets[i].id == id { break }
            i = (i + 1) & mask
        }
        // Backward shift: move each later entry of the run into the hole when its home
        // does not lie cyclically in (hole, its position].
        var hole = i
        var j = (i + 1) & mask
        while buckets[j].slot >= 0 {
            let k = Self.home(buckets[j].id, shift)
            let stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j)
            if !stays {
                buckets[hole] = buckets[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        buckets[hole].slot = -1
        count -= 1
    }

    private mutating func grow() {
        let size = buckets.count * 2
        var old = SlotArray(repeating: Bucket(id: 0, slot: -1), count: size)
        swap(&old, &buckets)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        count = 0
        for i in 0..<old.count where old[i].slot >= 0 { insert(old[i].id, old[i].slot) }
    }

    /// Bytes held by the table's array.
    var bytes: Int { buckets.count * MemoryLayout<Bucket>.stride }
}
