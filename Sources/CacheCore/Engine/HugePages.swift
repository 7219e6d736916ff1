#if canImport(Glibc)
import Glibc
#endif

/// Asks the system to back the engine's large tables with huge pages (2 MiB on x86-64 Linux), where
/// it lets a process ask (transparent huge pages in `madvise` mode, the usual default).
///
/// A `get` of a cache of a million entries reads at random places in three large tables (the key
/// index, the entries, the slots' places), and with 4 KiB pages each of those reads also misses
/// the TLB, which holds the addresses of a few megabytes of pages only: a page walk before the
/// memory read. With huge pages the same TLB covers gigabytes. Only tables of at least
/// `threshold` bytes ask, so a small cache keeps its memory as it is; a table that asks holds at
/// most one partly used huge page more than it would (its unused capacity is not touched).
///
/// Advice before the first write is not always enough: a table the allocator places in memory the
/// process used before (a freed table's pages, already mapped with small pages) stays on small
/// pages whatever it was advised. A get at 1 M entries found the key index so (`AnonHugePages: 0`
/// for its 16 MiB in `/proc/self/smaps`, the entries beside it on huge pages). So once a table's
/// contents are written, its whole huge pages are also collapsed (`MADV_COLLAPSE`, Linux 6.1 and
/// later; an older system refuses it and nothing changes): one copy of what is written, at most,
/// when the table is made or grows, never pages it has not written.
///
/// Nothing here changes what the engine does, only where its memory comes from: advice the system
/// may ignore (then nothing changes), on other systems nothing at all.
enum HugePages {
    /// Tables this large (bytes) or larger ask for huge pages.
    static let threshold = 4 << 20
    /// The huge page size asked for (x86-64 and arm64 Linux with 4 KiB base pages).
    static let size = 2 << 20

    /// Advises huge pages for the whole huge pages inside `bytes` bytes at `base`, when that many
    /// reach `threshold`. Pages already touched stay as they are until the system merges them.
    static func advise(_ base: UnsafeMutableRawPointer?, bytes: Int) {
        #if os(Linux)
        wholePages(base, bytes: bytes, MADV_HUGEPAGE)
        #endif
    }

    /// `MADV_COLLAPSE` (linux/mman.h; not in every C library's headers).
    static let collapseAdvice: Int32 = 25

    /// Asks the system to put the whole huge pages inside the `bytes` bytes at `base`, written
    /// already, on huge pages now (see the type's description), when that many reach `threshold`.
    /// - Complexity: O(bytes) at most (a copy of the pages not on huge pages yet).
    static func collapse(_ base: UnsafeMutableRawPointer?, bytes: Int) {
        #if os(Linux)
        wholePages(base, bytes: bytes, collapseAdvice)
        #endif
    }

    #if os(Linux)
    /// Gives `advice` for the whole huge pages inside the `bytes` bytes at `base`, when that many
    /// reach `threshold` (advice only: its result is not needed, the system may refuse it).
    private static func wholePages(_ base: UnsafeMutableRawPointer?, bytes: Int, _ advice: Int32) {
        guard let base, bytes >= threshold else { return }
        let start = (Int(bitPattern: base) + size - 1) & ~(size - 1)
        let end = (Int(bitPattern: base) + bytes) & ~(size - 1)
        guard end > start, let first = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(first, end - start, advice)
    }
    #endif

    /// An array of `count` copies of `value` whose storage asked for huge pages before any of
    /// it was written (so the system can back it with them from the start), and is collapsed into
    /// them once written.
    static func array<T: BitwiseCopyable>(repeating value: T, count: Int) -> [T] {
        [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            advise(UnsafeMutableRawPointer(buffer.baseAddress), bytes: buffer.count * MemoryLayout<T>.stride)
            buffer.initialize(repeating: value)
            initialized = buffer.count
            collapse(UnsafeMutableRawPointer(buffer.baseAddress), bytes: buffer.count * MemoryLayout<T>.stride)
        }
    }

    /// Makes room in `array` for one more element: when it is full and large, moves it to new
    /// storage of twice the room (as an append would) that asked for huge pages before the
    /// elements were copied in (the part copied is collapsed into them). Else leaves it to grow as
    /// it would.
    /// - Complexity: O(1) amortized (O(n) when it grows, as an append that grows).
    @inline(__always)
    static func makeRoomForAppend<T>(_ array: inout [T]) {
        guard array.count == array.capacity, array.count * MemoryLayout<T>.stride >= threshold / 2 else { return }
        grow(&array, to: 2 * array.count)
    }

    /// Makes room in `array` for `capacity` elements, in storage that asked for huge pages when it
    /// is large.
    static func reserve<T>(_ array: inout [T], _ capacity: Int) {
        guard capacity > array.capacity else { return }
        guard capacity * MemoryLayout<T>.stride >= threshold else {
            array.reserveCapacity(capacity)
            return
        }
        grow(&array, to: capacity)
    }

    @inline(never)
    private static func grow<T>(_ array: inout [T], to capacity: Int) {
        var grown: [T] = []
        grown.reserveCapacity(capacity)
        let bytes = grown.capacity * MemoryLayout<T>.stride
        // An empty array's buffer starts where its storage does.
        grown.withUnsafeMutableBufferPointer { advise(UnsafeMutableRawPointer($0.baseAddress), bytes: bytes) }
        grown.append(contentsOf: array)
        // Only what was copied: a collapse of the rest would write pages the table may never use.
        let written = grown.count * MemoryLayout<T>.stride
        grown.withUnsafeMutableBufferPointer { collapse(UnsafeMutableRawPointer($0.baseAddress), bytes: written) }
        array = grown
    }
}
