/// A map from 64-bit key ids to slot numbers: open addressing with linear probing and
/// backward-shift deletion, so it never holds tombstones and a lookup touches one or two cache
/// lines. Grows by doubling when three quarters full.
struct IDTable {
    private var ids: [UInt64]
    /// -1: empty.
    private var slots: [Int32]
    private var mask: Int
    private var shift: UInt64
    private(set) var count = 0

    /// A table that holds `capacity` ids without growing.
    init(capacity: Int = 16) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        ids = Array(repeating: 0, count: size)
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    /// Fibonacci hashing over a multiplied id: oracle ids are often small consecutive numbers.
    @inline(__always)
    private func home(_ id: UInt64) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot of `id`, or -1.
    @inline(__always)
    func find(_ id: UInt64) -> Int32 {
        ids.withUnsafeBufferPointer { ids in
            slots.withUnsafeBufferPointer { slots in
                var i = home(id)
                while true {
                    let s = slots[i]
                    if s < 0 { return -1 }
                    if ids[i] == id { return s }
                    i = (i + 1) & mask
                }
            }
        }
    }

    /// Maps `id` (not present) to `slot`.
    @inline(__always)
    mutating func insert(_ id: UInt64, _ slot: Int32) {
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let h = home(id)
        let mask = mask
        ids.withUnsafeMutableBufferPointer { ids in
            slots.withUnsafeMutableBufferPointer { slots in
                var i = h
                while slots[i] >= 0 { i = (i + 1) & mask }
                ids[i] = id
                slots[i] = slot
            }
        }
        count += 1
    }

    /// Changes the slot of a present `id`.
    @inline(__always)
    mutating func update(_ id: UInt64, _ slot: Int32) {
        let h = home(id)
        let mask = mask
        ids.withUnsafeBufferPointer { ids in
            slots.withUnsafeMutableBufferPointer { slots in
                var i = h
                while slots[i] >= 0 {
                    if ids[i] == id { slots[i] = slot; return }
                    i = (i + 1) & mask
                }
            }
        }
    }

    /// Removes `id` if present, shifting later entries of its probe run back.
    @inline(__always)
    mutating func remove(_ id: UInt64) {
        let h = home(id)
        let mask = mask
        let shift = shift
        let removed: Bool = ids.withUnsafeMutableBufferPointer { ids in
            slots.withUnsafeMutableBufferPointer { slots in
                var i = h
                while true {
                    if slots[i] < 0 { return false }
                    if ids[i] == id { break }
                    i = (i + 1) & mask
                }
                // Backward shift: move each later entry of the run into the hole when its home
                // does not lie cyclically in (hole, its position].
                var hole = i
                var j = (i + 1) & mask
                while slots[j] >= 0 {
                    let k = Int(truncatingIfNeeded: (ids[j] &* 0x9E37_79B9_7F4A_7C15) >> shift)
                    let stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j)
                    if !stays {
                        ids[hole] = ids[j]
                        slots[hole] = slots[j]
                        hole = j
                    }
                    j = (j + 1) & mask
                }
                slots[hole] = -1
                return true
            }
        }
        if removed { count -= 1 }
    }

    private mutating func grow() {
        let oldIDs = ids, oldSlots = slots
        let size = slots.count * 2
        ids = Array(repeating: 0, count: size)
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        count = 0
        for i in 0..<oldSlots.count where oldSlots[i] >= 0 { insert(oldIDs[i], oldSlots[i]) }
    }

    /// Bytes held by the table's arrays.
    var bytes: Int { slots.count * 12 }
}
