/// A growable array of plain values (no references) that owns its memory alone: the simulation's
/// per-slot and per-bucket state.
///
/// An `Array` checks, on every write, that no other array shares its storage (a call into the
/// runtime, about a tenth of a simulation's time, most of it on a miss, which writes to several
/// arrays). This one is noncopyable, so its storage has exactly one owner and a write needs no
/// check. Every index is checked as an `Array`'s is (a bad one stops the process).
///
/// Memory safety: `base` points to `capacity` elements allocated by this value, of which the
/// first `count` are initialized; every read and write checks `index < count` first. The value
/// cannot be copied, so no second owner can free or reallocate the storage, and `deinit`
/// deallocates it once. `Element` is `BitwiseCopyable`: there is nothing to deinitialize, and a
/// move to bigger storage is a copy of bytes.
struct SlotArray<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    /// The number of elements.
    private(set) var count: Int

    /// An empty array with room for `capacity` elements before it grows.
    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1)
        base = .allocate(capacity: self.capacity)
        count = 0
    }

    /// `count` copies of `value`.
    init(repeating value: Element, count: Int) {
        capacity = Swift.max(count, 1)
        base = .allocate(capacity: capacity)
        base.initialize(repeating: value, count: count)
        self.count = count
    }

    deinit { base.deallocate() }

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> Element {
        @inline(__always) get {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index out of range")
            return base[index]
        }
        @inline(__always) set {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index out of range")
            base[index] = newValue
        }
    }

    @inline(__always)
    mutating func append(_ value: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: value)
        count += 1
    }

    /// Removes and returns the last element (the array is not empty).
    @inline(__always)
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast of an empty array")
        count -= 1
        return base[count]
    }

    /// Moves the elements to storage twice as big.
    @inline(never)
    private mutating func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }
}
