import CacheCore
/// Text of a script, a `-c` argument or typed input, with what it takes to
/// turn byte offsets into line numbers.
public struct SourceFile: Sendable {
    /// How errors name this source (`script.cachesh`, `-c`, `<stdin>`); nil when typed interactively.
    public let name: String?
    /// The source text (built from `bytes` when asked for: the source is held once).
    public var text: String { String(decoding: bytes, as: UTF8.self) }
    /// The UTF-8 bytes of `text`, which the lexer scans and all offsets index.
    let bytes: [UInt8]
    /// Byte offset at which each line starts; the first is 0, and ascending.
    private let lineStarts: [Int]
    /// The line number of the text's first line in the whole input (a piece of a stream).
    private let firstLine: Int

    /// Wraps `text`, building its line table; `firstLine` is where the text starts in its input
    /// when it is a piece of a longer one (standard input or a script, read as it arrives).
    ///
    /// - Complexity: O(n) in the length of `text`.
    public init(name: String?, text: String, firstLine: Int = 1) {
        self.name = name
        self.firstLine = firstLine
        self.bytes = Array(text.utf8)
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            starts.append(offset + 1)
        }
        self.lineStarts = starts
    }

    /// The number of lines the text starts (one more than its line feeds).
    public var lineCount: Int { lineStarts.count }

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

    /// The line a user reads for a diagnostic: `NAME:LINE: error: MESSAGE`, or
    /// `error: MESSAGE` for typed input (SPEC §7).
    ///
    /// - Complexity: O(log n) in the number of lines.
    public func render(_ diagnostic: Diagnostic) -> String {
        guard let name else { return "error: \(diagnostic.message)" }
        return "\(name):\(location(ofOffset: diagnostic.offset).line): error: \(diagnostic.message)"
    }
}
