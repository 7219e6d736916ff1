/// Where commands start and end in a source's bytes, past blank lines, separators and comments.
enum SourceScan {
    /// Where the line starts on which the command after `from` begins, past blank lines and
    /// comment lines: where a command still arriving is kept from.
    static func lineStart(ofCommandAfter from: Int, in bytes: [UInt8]) -> Int {
        var i = from
        var lineStart = from
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): i += 1
            case UInt8(ascii: "\n"):
                i += 1
                lineStart = i
            case UInt8(ascii: "#"):
                while i < bytes.count && bytes[i] != UInt8(ascii: "\n") { i += 1 }
            default:
                return lineStart
            }
        }
        return lineStart
    }

    /// A lexed command's bytes (first word to last) as a line read alone must hold them to lex the
    /// same: a last word that ends in `;` (`40s;` in `advance 40s;;`, or in `advance 40s; # note`)
    /// gets one more, since a `;` that ends a line ends the command and is dropped (SPEC §3). The
    /// history, and so `--echo` and a recording, writes a command so.
    static func readAlone(_ command: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard command.last == UInt8(ascii: ";") else { return command }
        return ArraySlice(Array(command) + [UInt8(ascii: ";")])
    }

    /// ``readAlone(_:)`` for a command made as text (a recording's `server next KEY` for a key
    /// that ends in `;`).
    static func readAlone(_ command: String) -> String {
        command.utf8.last == UInt8(ascii: ";") ? command + ";" : command
    }

    /// The bytes of a command that did not lex, between where the lexer started looking for it and
    /// where it stopped: without the blank lines, comments and separators before it, nor the
    /// blanks after it.
    static func commandSpan(_ bytes: [UInt8], from: Int, to: Int, semicolons: Bool) -> Range<Int> {
        var start = from
        while start < to {
            switch bytes[start] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): start += 1
            case UInt8(ascii: ";") where semicolons: start += 1
            case UInt8(ascii: "#"):
                // A comment runs to the line's end, or with `semicolons` (`-c`) to the next `;`.
                while start < to && bytes[start] != UInt8(ascii: "\n") && !(semicolons && bytes[start] == UInt8(ascii: ";")) {
                    start += 1
                }
            default:
                return start..<trimmedEnd(bytes, start, to, semicolons)
            }
        }
        return to..<to
    }

    private static func trimmedEnd(_ bytes: [UInt8], _ start: Int, _ end: Int, _ semicolons: Bool) -> Int {
        var end = end
        while end > start, [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(bytes[end - 1])
                || (semicolons && bytes[end - 1] == UInt8(ascii: ";")) { end -= 1 }
        return end
    }

}
