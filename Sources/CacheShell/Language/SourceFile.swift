import CacheCore
import Synchronization
/// Text of a script, a `-c` argument or typed input, with what it takes to
/// turn byte offsets into line numbers.
public struct SourceFile: Sendable {
    /// How errors name this source (`script.cachesh`, `-c`, `<stdin>`); nil when typed interactively.
    public let name: String?
    /// The source text (built from `bytes` when asked for: the source is held once).
    public var text: String { String(decoding: bytes, as: UTF8.self) }
    /// The UTF-8 bytes of `text`, which the lexer scans and all offsets index.
    let bytes: [UInt8]
    /// Byte offset at which each line starts; the first is 0, and ascending. Found when first
    /// asked for (an error's line, a scheduled command's): a batch runs most pieces of its input
    /// without asking, and building the table cost some 130 instructions a line.
    private var lineStarts: [Int] { lineTable.starts(of: bytes) }
    private let lineTable = LineTable()
    /// The line number of the text's first line in the whole input (a piece of a stream).
    private let firstLine: Int
    /// For the `-c` argument, whose commands `;` separates on one line: the column, in
    /// characters, at which the text starts on its first line (1; a command `at` scheduled from
    /// `-c` starts further on). Errors then name the command's column too (`-c:1:12: error:`,
    /// SPEC §7). Nil for every other source: errors name the line alone.
    public let firstColumn: Int?

    /// Wraps `text`; `firstLine` is where the text starts in its input
    /// when it is a piece of a longer one (standard input or a script, read as it arrives).
    ///
    /// - Complexity: O(n) in the length of `text`.
    public init(name: String?, text: String, firstLine: Int = 1, firstColumn: Int? = nil) {
        self.init(name: name, utf8: Array(text.utf8), firstLine: firstLine, firstColumn: firstColumn)
    }

    /// Wraps text given as UTF-8 bytes (a piece of a stream), as `init(name:text:firstLine:)` would
    /// the `String` decoded from them: bytes that are not UTF-8 become U+FFFD.
    ///
    /// - Complexity: O(n) in the number of bytes.
    public init(name: String?, bytes: UnsafeBufferPointer<UInt8>, firstLine: Int = 1) {
        if bytes.isAllASCII {
            self.init(name: name, utf8: Array(bytes), firstLine: firstLine, firstColumn: nil)
        } else {
            self.init(name: name, text: String(decoding: bytes, as: UTF8.self), firstLine: firstLine)
        }
    }

    /// Wraps bytes known to be UTF-8 (``FileIO/firstInvalidUTF8(_:)`` found no bad byte in them):
    /// the same source as `init(name:bytes:firstLine:)` makes of them, which need not look
    /// whether they are ASCII (UTF-8 decodes to itself).
    ///
    /// - Complexity: O(n) in the number of bytes.
    public init(name: String?, validUTF8 bytes: UnsafeBufferPointer<UInt8>, firstLine: Int = 1) {
        // Bytes that are not UTF-8 would stay raw here where `init(name:bytes:firstLine:)` repairs
        // them, and the lexer's offsets would no longer be those of `text`.
        assert(FileIO.firstInvalidUTF8(bytes) == nil, "SourceFile(validUTF8:) of bytes that are not UTF-8")
        self.init(name: name, utf8: Array(bytes), firstLine: firstLine, firstColumn: nil)
    }

    private init(name: String?, utf8 bytes: [UInt8], firstLine: Int, firstColumn: Int?) {
        self.name = name
        self.firstLine = firstLine
        self.firstColumn = firstColumn
        self.bytes = bytes
    }

    /// The number of lines the text starts (one more than its line feeds).
    /// - Complexity: O(n) in the number of bytes, unless the line table was built.
    public var lineCount: Int { lineTable.count ?? LineTable.lineFeeds(in: bytes) + 1 }

    /// The 1-based line and byte column of a byte offset.
    ///
    /// Offsets before the start clamp to line 1; offsets past the end fall on the last line.
    /// - Complexity: O(log n) in the number of lines.
    public func location(ofOffset offset: Int) -> (line: Int, column: Int) {
        // Find the last line that starts at or before `offset`.
        var low = 0
        var high = lineStarts.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle }
        }
        return (low + firstLine, max(offset - lineStarts[low], 0) + 1)
    }

    /// The 1-based column of a byte offset in characters (Unicode code points, not bytes: `é`
    /// is one column, as a person counts), for a source whose errors name columns
    /// (``firstColumn``); nil for the others.
    ///
    /// - Complexity: O(log n) in the number of lines, and O(m) in the length of the line before `offset`.
    public func column(ofOffset offset: Int) -> Int? {
        guard let firstColumn else { return nil }
        let line = location(ofOffset: offset).line
        let lineStart = lineStarts[line - firstLine]
        let end = min(max(offset, lineStart), bytes.count)
        // A code point starts at every byte but a continuation byte (0b10xxxxxx).
        let characters = bytes[lineStart..<end].reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        return (line == firstLine ? firstColumn : 1) + characters
    }

    /// The line a user reads for a diagnostic: `NAME:LINE: error: MESSAGE`, or
    /// `error: MESSAGE` for typed input (SPEC §7).
    ///
    /// - Complexity: O(log n) in the number of lines.
    public func render(_ diagnostic: Diagnostic) -> String {
        guard let name else { return "error: \(diagnostic.message)" }
        return "\(name):\(location(ofOffset: diagnostic.offset).line): error: \(diagnostic.message)"
    }
}

/// A source's line table, built once, when first asked for, and shared by the copies of the
/// source (which hold the same bytes).
private final class LineTable: Sendable {
    private let table = Mutex<[Int]?>(nil)

    /// The line count, if the table was built.
    var count: Int? { table.withLock { $0?.count } }

    /// The offsets at which the lines of `bytes` start, built on the first call.
    /// - Complexity: O(n) in the number of bytes on the first call, O(1) after.
    func starts(of bytes: [UInt8]) -> [Int] {
        table.withLock { table in
            if let table { return table }
            let built = Self.build(bytes)
            table = built
            return built
        }
    }

    private static func build(_ bytes: [UInt8]) -> [Int] {
        var starts = [0]
        bytes.withUnsafeBufferPointer { bytes in
            // Eight bytes at a time: a word with no line feed (no zero byte once XORed with
            // 0x0A in every byte) is skipped whole; in one with some, only the bytes flagged are
            // looked at (a script's line is a few words long: each byte of its line feed's word
            // looked at cost about 40 instructions a line). The flags are exact up to the first
            // line feed; one above it may be a byte 0x0B after a line feed (the borrow), hence the look.
            guard let base = bytes.baseAddress else { return }
            let raw = UnsafeRawPointer(base)
            let lineFeeds: UInt64 = 0x0A0A_0A0A_0A0A_0A0A, ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            var offset = 0
            while offset + 8 <= bytes.count {
                // Byte i of the word in bits 8i...8i+7, whatever the machine's byte order.
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) ^ lineFeeds
                var flagged = (word &- ones) & ~word & highs
                while flagged != 0 {
                    let i = offset + flagged.trailingZeroBitCount >> 3
                    if bytes[i] == UInt8(ascii: "\n") { starts.append(i + 1) }
                    flagged &= flagged &- 1
                }
                offset += 8
            }
            for i in offset..<bytes.count where bytes[i] == UInt8(ascii: "\n") { starts.append(i + 1) }
        }
        return starts
    }

    /// How many line feeds `bytes` holds, eight bytes at a time.
    static func lineFeeds(in bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return 0 }
            let raw = UnsafeRawPointer(base)
            let lineFeeds: UInt64 = 0x0A0A_0A0A_0A0A_0A0A, lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            var count = 0
            var offset = 0
            while offset + 8 <= bytes.count {
                // Each byte of `lanes` counts the line feeds at its place in up to 255 words (no
                // lane overflows), then the lanes are summed: a bit count a word, which this
                // target has no instruction for, cost some 30 instructions a word.
                var lanes: UInt64 = 0
                let end = min(bytes.count & ~7, offset + 255 * 8)
                while offset < end {
                    let x = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ lineFeeds
                    // Exact for each byte (no carry leaves a byte): 0x80 where `x` has a zero
                    // byte, which is where the word has a line feed; moved down to 0x01.
                    lanes &+= (~(((x & lows) &+ lows) | x | lows)) >> 7
                    offset += 8
                }
                // Pairs of lanes in four 16-bit lanes (each at most 510), summed into the top one.
                let pairs = (lanes & 0x00FF_00FF_00FF_00FF) &+ ((lanes >> 8) & 0x00FF_00FF_00FF_00FF)
                count += Int((pairs &* 0x0001_0001_0001_0001) >> 48)
            }
            for i in offset..<bytes.count where bytes[i] == UInt8(ascii: "\n") { count += 1 }
            return count
        }
    }
}
