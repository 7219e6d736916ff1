import CacheCore

/// Bytes on their way to standard output, shared by the executable's terminal (which writes
/// them out) and a session (which writes replies straight into them).
public final class OutputBuffer {
    /// The bytes not written out yet (the buffer owns its storage: freed on `deinit`).
    // Unchecked exclusivity: every access is a read or assignment of the whole writer, or one of
    // its appends, which call no other code; so no two accesses can overlap, and a reply written
    // straight here saves a run-time check (about 80 instructions) on each.
    @exclusivity(unchecked) var writer: ByteWriter
    /// Writes the bytes out and empties the buffer; set by the owner of the file descriptor.
    public var flush: () -> Void = {}

    /// The size past which a writer calls ``flush``, so memory stays bounded.
    public static let flushSize = 1 << 16

    public init() {
        writer = ByteWriter(capacity: Self.flushSize + 4096)
    }

    deinit { writer.deallocate() }

    /// How many bytes wait to be written out.
    public var count: Int { writer.count }

    /// Appends the UTF-8 bytes of `text`.
    public func append(_ text: String) {
        writer.append(text)
    }

    /// Calls `body` with the bytes waiting to be written out.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(writer.written)
    }

    /// Writes out the bytes before offset `end` (``flush``) and keeps those from it on, which
    /// move to the front.
    /// - Complexity: O(count - end) besides the flush.
    public func flush(before end: Int) {
        precondition(end >= 0 && end <= count)
        let rest = Array(writer.written(from: end))
        writer.removeLast(from: end)
        flush()
        rest.withUnsafeBufferPointer { writer.append($0) }
    }

    /// Forgets the bytes (once written out), keeping the storage.
    public func removeAll() {
        writer.removeAll()
    }
}

/// UTF-8 text written straight into memory through a pointer, capacity checked once per append:
/// replies are many small pieces, which `Array.append(contentsOf:)` takes at many times the cost.
///
/// A writer refers to storage it does not free: whoever made it (``init(capacity:)``) calls
/// ``deallocate()`` on the writer it ends with, as an append may move the bytes to larger storage
/// (freeing the old). A copy of a writer must not be used once another copy has appended.
struct ByteWriter {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private(set) var capacity: Int

    /// New storage of `capacity` bytes (at least one).
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    /// Frees the storage; the writer must not be used after.
    func deallocate() { base.deallocate() }

    /// The bytes written.
    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// The bytes written from offset `start` on.
    func written(from start: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + start, count: count - start)
    }

    /// The written bytes from `start` on, as text.
    func text(from start: Int = 0) -> String { String(decoding: written(from: start), as: UTF8.self) }

    mutating func removeAll() { count = 0 }

    /// Forgets the bytes written from offset `start` on.
    mutating func removeLast(from start: Int) {
        precondition(start >= 0 && start <= count)
        count = start
    }

    /// Room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(n) }
    }

    @inline(never)
    private mutating func grow(_ n: Int) {
        let newCapacity = max(capacity * 2, count + n)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        ByteCopy.copy(from: source, to: base + count, count: bytes.count)
        count += bytes.count
    }

    /// A literal's bytes.
    @inline(__always)
    mutating func append(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// The UTF-8 bytes of `text` (in one copy). Disfavoured, so that a literal is appended as the
    /// `StaticString` it can be: made a `String`, its bytes were stored as well, but each left a
    /// call to release the string behind (about 15 instructions; some 19 in a get's lines).
    @inline(__always) @_disfavoredOverload
    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// A whole number in decimal.
    @inline(__always)
    mutating func appendInteger(_ n: Int64) {
        if n < 0 { append(UInt8(ascii: "-")) }
        appendInteger(n.magnitude)
    }

    /// A whole number in decimal, its digits written in place.
    mutating func appendInteger(_ n: UInt64) {
        reserve(20)
        if n < 10 {
            base[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: n)
            count += 1
            return
        }
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20 && n >= bound {
            digits += 1
            if digits < 20 { bound &*= 10 }
        }
        // Two digits at a time from a table of the pairs 00...99: half the divisions.
        let pairs = Self.digitPairs.utf8Start
        var rest = n
        var at = count + digits
        while rest >= 100 {
            let pair = Int(truncatingIfNeeded: rest % 100) &* 2
            rest /= 100
            at -= 2
            base[at] = pairs[pair]
            base[at + 1] = pairs[pair + 1]
        }
        if rest >= 10 {
            let pair = Int(truncatingIfNeeded: rest) &* 2
            base[at - 2] = pairs[pair]
            base[at - 1] = pairs[pair + 1]
        } else {
            base[at - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        }
        count += digits
    }

    /// `00`, `01`, ... `99`, one after the other.
    private static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

}
