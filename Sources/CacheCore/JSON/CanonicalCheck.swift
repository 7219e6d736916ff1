// The common value's fast check: text already in canonical compact form, in its plainest kind
// (ASCII strings with no escape, integers), read eight bytes at a time where it can be.

/// Whether a whole UTF-8 text is one JSON value already in the canonical compact form in its
/// plainest kind: no blank anywhere; strings (keys too) of printable ASCII with no escape;
/// numbers that are integers of at most 18 digits with no leading zero and not `-0`; each
/// object's keys in increasing byte order; nested at most `maxDepth` deep. What the shell's and a
/// client's values mostly are (`{"id":10437,"likes":599,"title":"item 10437"}`).
///
/// Each such text is one `CanonicalScanner` takes as it is (no rewriting, ending at the end): the
/// same bytes, the same value. Anything else answers false (a blank, an escape, a non-ASCII
/// byte, a fraction, a key out of order, text that is not JSON...), and the caller goes the
/// scanner's way, which gives that text's value or error as before: this check only ever skips
/// work, it decides nothing the scanner would decide otherwise.
///
/// Why: the scanner checked such a text at some 19 instructions a byte (its writer, its reader,
/// its state kept for a rewrite that never comes, a call per key and value). Here strings and
/// digit runs are read as 64-bit words, each tested for its first byte that ends the run.
enum CanonicalCheck {
    /// Whether `bytes`, as a whole, is such a text (see the type's comment).
    /// - Complexity: O(n).
    static func isPlainCanonical(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        // Bounded as the reader bounds it (`JSONReader.init`): a larger `maxDepth` would take
        // deeper text than the scanner, and recursion deep enough to exhaust the stack.
        let depth = min(maxDepth, JSONValue.documentDepth)
        return Reader(p: base, n: bytes.count, maxDepth: depth).value(at: 0, depth: 0) == bytes.count
    }

    /// Reads at byte offsets into `p[0..<n]`; each method returns the offset just after what it
    /// read, or -1 where the text is not of the plain canonical kind.
    private struct Reader {
        let p: UnsafePointer<UInt8>
        let n: Int
        let maxDepth: Int

        /// The value at `i` (`i < n`), its containers counted from `depth`.
        func value(at i: Int, depth: Int) -> Int {
            switch p[i] {
            case UInt8(ascii: "\""):
                let close = stringEnd(from: i + 1)
                return close < 0 ? -1 : close + 1
            case UInt8(ascii: "{"):
                guard depth < maxDepth else { return -1 }
                return object(at: i, depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < maxDepth else { return -1 }
                return array(at: i, depth: depth + 1)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return integer(at: i)
            case UInt8(ascii: "t"):
                return word(at: i, 0x74, 0x72, 0x75, 0x65)  // true
            case UInt8(ascii: "f"):
                return word(at: i + 1, 0x61, 0x6C, 0x73, 0x65)  // (f)alse
            case UInt8(ascii: "n"):
                return word(at: i, 0x6E, 0x75, 0x6C, 0x6C)  // null
            default:
                return -1
            }
        }

        /// Four given bytes at `i`.
        @inline(__always)
        private func word(at i: Int, _ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> Int {
            guard i + 4 <= n, p[i] == a, p[i + 1] == b, p[i + 2] == c, p[i + 3] == d else { return -1 }
            return i + 4
        }

        /// A member's or an element's value at `i` (`i < n`): a string or an integer read here,
        /// anything else through `value` (a call, and a recursion for a container).
        @inline(__always)
        private func member(at i: Int, depth: Int) -> Int {
            let byte = p[i]
            if byte == UInt8(ascii: "\"") {
                let close = stringEnd(from: i &+ 1)
                return close < 0 ? -1 : close &+ 1
            }
            if byte &- UInt8(ascii: "0") < 10 { return integer(at: i) }
            return value(at: i, depth: depth)
        }

        // Offsets are below `n`, the count of a buffer in memory: `&+` cannot overflow.
        private func object(at open: Int, depth: Int) -> Int {
            var i = open &+ 1
            guard i < n else { return -1 }
            if p[i] == UInt8(ascii: "}") { return i &+ 1 }
            var previousStart = 0
            var previousEnd = -1  // no key yet
            while true {
                guard i < n, p[i] == UInt8(ascii: "\"") else { return -1 }
                let start = i &+ 1
                let close = stringEnd(from: start)
                guard close >= 0, previousEnd < 0 || less(previousStart, previousEnd, start, close) else { return -1 }
                previousStart = start
                previousEnd = close
                i = close &+ 1
                guard i &+ 1 < n, p[i] == UInt8(ascii: ":") else { return -1 }
                i = member(at: i &+ 1, depth: depth)
                guard i >= 0, i < n else { return -1 }
                let separator = p[i]
                i &+= 1
                if separator == UInt8(ascii: ",") { continue }
                return separator == UInt8(ascii: "}") ? i : -1
            }
        }

        private func array(at open: Int, depth: Int) -> Int {
            var i = open &+ 1
            guard i < n else { return -1 }
            if p[i] == UInt8(ascii: "]") { return i &+ 1 }
            while true {
                guard i < n else { return -1 }
                i = member(at: i, depth: depth)
                guard i >= 0, i < n else { return -1 }
                let separator = p[i]
                i &+= 1
                if separator == UInt8(ascii: ",") { continue }
                return separator == UInt8(ascii: "]") ? i : -1
            }
        }

        /// Byte order of the keys `p[a..<aEnd]` and `p[b..<bEnd]` (the order of strings, for ASCII).
        @inline(__always)
        private func less(_ a: Int, _ aEnd: Int, _ b: Int, _ bEnd: Int) -> Bool {
            let aCount = aEnd &- a, bCount = bEnd &- b
            let common = min(aCount, bCount)
            var k = 0
            while k < common {
                let x = p[a &+ k], y = p[b &+ k]
                if x != y { return x < y }
                k &+= 1
            }
            return aCount < bCount
        }

        /// The eight bytes at `i` (`i + 8 <= n`), the first in the low byte.
        @inline(__always)
        private func load(_ i: Int) -> UInt64 {
            UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
        }

        private static let ones: UInt64 = 0x0101_0101_0101_0101
        private static let highs: UInt64 = 0x8080_8080_8080_8080

        /// The high bit of each byte of `w` that may not stand as it is in a canonical string:
        /// below 0x20, 0x7F or above, a quote or a backslash. Exact for every byte (no carry
        /// crosses from one byte to the next), so the lowest bit set marks the first such byte.
        @inline(__always)
        private static func stringStops(_ w: UInt64) -> UInt64 {
            let low = w & ~highs  // each byte's low seven bits: no sum below carries out of its byte
            let control = ~((w | highs) &- ones &* 0x20) & highs  // low seven bits below 0x20
            let del = (low &+ ones) & highs  // low seven bits 0x7F
            let quote = ~((low ^ (ones &* 0x22)) &+ ones &* 0x7F) & highs
            let backslash = ~((low ^ (ones &* 0x5C)) &+ ones &* 0x7F) & highs
            return (w & highs) | control | del | quote | backslash
        }

        /// The high bit of each byte of `w` that is not an ASCII digit (exact, as `stringStops`).
        @inline(__always)
        private static func nonDigits(_ w: UInt64) -> UInt64 {
            let below = ~((w | highs) &- ones &* 0x30) & highs  // low seven bits below "0"
            let above = ((w & ~highs) &+ ones &* 0x46) & highs  // low seven bits above "9"
            return (w & highs) | below | above
        }

        /// The closing quote of a string whose text starts at `i`, every byte before it printable
        /// ASCII other than a backslash; -1 for any other string.
        @inline(__always)
        private func stringEnd(from start: Int) -> Int {
            var i = start
            while i &+ 8 <= n {
                let stops = Self.stringStops(load(i))
                if stops != 0 {
                    let k = i &+ stops.trailingZeroBitCount &>> 3
                    return p[k] == UInt8(ascii: "\"") ? k : -1
                }
                i &+= 8
            }
            while i < n {
                let byte = p[i]
                if byte == UInt8(ascii: "\"") { return i }
                if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") { return -1 }
                i &+= 1
            }
            return -1
        }

        /// An integer of at most 18 digits, no leading zero (`0` alone), not `-0`, and not the
        /// start of a fraction or an exponent: the numbers the writer writes as they are read.
        @inline(__always)
        private func integer(at start: Int) -> Int {
            var i = start
            if p[i] == UInt8(ascii: "-") {
                i += 1
                guard i < n, p[i] != UInt8(ascii: "0") else { return -1 }
            }
            let digits = i
            if i < n && p[i] == UInt8(ascii: "0") {
                i += 1
            } else {
                var stopped = false
                while i &+ 8 <= n {
                    let others = Self.nonDigits(load(i))
                    if others != 0 {
                        i &+= others.trailingZeroBitCount &>> 3
                        stopped = true
                        break
                    }
                    i &+= 8
                }
                if !stopped {
                    while i < n && p[i] &- UInt8(ascii: "0") < 10 { i &+= 1 }
                }
            }
            guard i > digits, i &- digits <= 18 else { return -1 }
            if i < n && (p[i] == UInt8(ascii: ".") || p[i] | 0x20 == UInt8(ascii: "e")) { return -1 }
            return i
        }
    }
}
