import CacheCore

/// Text with its control characters escaped as all output writes them (`\u001b`), for what is
/// printed outside a session's replies: the executable's own messages, which name files given on
/// the command line (a name may hold an escape sequence).
public enum VisibleText {
    /// `text` with U+0000-U+001F (but line feed and tab), U+007F and U+0080-U+009F escaped.
    /// - Complexity: O(n) in the length of `text`.
    public static func of(_ text: String) -> String { Render.visible(text) }
}

/// Human output: aligned `name: value` lines and tables, states coloured on a terminal.
enum Render {
    static func stateText(_ state: String, colour: Bool) -> String {
        guard colour else { return state }
        let code: String
        switch state {
        case "fresh": code = "32"
        case "stale": code = "33"
        case "expired": code = "31"
        default: code = "2"
        }
        return "\u{1B}[\(code)m\(state)\u{1B}[0m"
    }

    /// `text` without the colour `stateText` gives a state word: each `ESC[<code>m<word>ESC[0m`
    /// becomes `<word>`. Other bytes, escape characters included, are kept.
    /// - Complexity: O(n) in the length of `text`.
    static func withoutColour(_ text: String) -> String {
        guard text.utf8.contains(0x1B) else { return text }
        let bytes = Array(text.utf8)
        let reset: [UInt8] = [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")]
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x1B, let (word, next) = colouredWord(bytes, at: i, reset: reset) {
                result += bytes[word]
                i = next
            } else {
                result.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The word of a coloured state at `start` (`ESC[32mfresh ESC[0m`) and the index after it.
    private static func colouredWord(_ bytes: [UInt8], at start: Int, reset: [UInt8]) -> (Range<Int>, Int)? {
        var i = start + 1
        guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        let codeStart = i
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
        let code = String(decoding: bytes[codeStart..<i], as: UTF8.self)
        guard ["32", "33", "31", "2"].contains(code), i < bytes.count, bytes[i] == UInt8(ascii: "m") else { return nil }
        i += 1
        let wordStart = i
        while i < bytes.count, (bytes[i] >= UInt8(ascii: "a") && bytes[i] <= UInt8(ascii: "z")) || bytes[i] == UInt8(ascii: "-")
            || bytes[i] == UInt8(ascii: "_") { i += 1 }
        guard i > wordStart, i + reset.count <= bytes.count, Array(bytes[i..<i + reset.count]) == reset else { return nil }
        return (wordStart..<i, i + reset.count)
    }

    /// A field as a human reads it: a cached or server value (`value`) as its JSON text, so `"1"`
    /// and `1` differ; other strings (keys, states, messages) bare, with control characters escaped.
    static func text(_ value: JSONValue, field: String = "value") -> String {
        if field != "value", case .string(let s) = value { return visible(s) }
        return value.compactText
    }

    /// `text` with every control character that could drive a terminal (U+0000–U+001F but line
    /// feed and tab, U+007F, U+0080–U+009F) written as its JSON escape (`\u001b`), and so every
    /// character that reorders or breaks what a terminal shows: the bidirectional marks,
    /// embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)
    /// and the line and paragraph separators (U+2028, U+2029).
    /// - Complexity: O(n); `text` itself (no copy) when it has none, the usual case.
    static func visible(_ text: String) -> String {
        let found = text.utf8.withContiguousStorageIfAvailable(hasControl) ?? hasControl(Array(text.utf8))
        guard found else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v) || isReordering(v) {
                let hex = String(v, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// A bidirectional or line-separator character `visible` escapes.
    @inline(__always)
    static func isReordering(_ v: UInt32) -> Bool {
        v == 0x061C || v == 0x200E || v == 0x200F || (0x2028...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }

    /// Whether UTF-8 `bytes` hold a control character `visible` escapes: one tight pass over the
    /// bytes (the usual answer is no).
    static func hasControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // The usual text (a key, a value's compact JSON) is printable ASCII: told in a few
        // instructions a word (the search below took about 350 for a 45-byte value).
        if isPrintableASCII(bytes) { return false }
        // Eight bytes at a time, with exact per-byte masks (no carries between bytes): a word with
        // no byte below 0x20 but line feed and tab, no 0x7F and no 0xC2 is plain; a word with one
        // is looked at byte by byte, with the byte after it (a C1 control is 0xC2 0x80...0x9F).
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F, ones: UInt64 = 0x0101_0101_0101_0101
        @inline(__always) func equal(_ w: UInt64, _ byte: UInt8) -> UInt64 {
            let x = w ^ (ones &* UInt64(byte))
            return ~(((x & lows) &+ lows) | x | lows)
        }
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let below = ~((w & lows) &+ (ones &* 0x60)) & ~w & ~lows
                let flagged = (below & ~equal(w, 0x0A) & ~equal(w, 0x09)) | equal(w, 0x7F) | equal(w, 0xC2)
                    | equal(w, 0xE2) | equal(w, 0xD8)
                if flagged != 0 {
                    let end = min(bytes.count, i + 9)
                    for j in i..<end where isControlByte(bytes[j], after: j > 0 ? bytes[j - 1] : 0) || isReordering(bytes, at: j) {
                        return true
                    }
                }
                i += 8
            }
        }
        for j in i..<bytes.count where isControlByte(bytes[j], after: j > 0 ? bytes[j - 1] : 0) || isReordering(bytes, at: j) {
            return true
        }
        return false
    }

    /// Whether every byte of `bytes` is printable ASCII (0x20...0x7E), eight at a time: such
    /// text holds no control character.
    @inline(__always)
    static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        guard count >= 8 else {
            for byte in bytes where byte < 0x20 || byte >= 0x7F { return false }
            return true
        }
        let raw = UnsafeRawPointer(base)
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// No byte with its high bit set; then no carry leaves a byte: b + 0x60 has its high bit
        /// when b >= 0x20, and b + 0x01 when b >= 0x7F.
        @inline(__always) func printable(_ w: UInt64) -> Bool {
            w & highs == 0 && (w &+ 0x6060_6060_6060_6060) & ~(w &+ 0x0101_0101_0101_0101) & highs == highs
        }
        var i = 0
        while i + 8 < count {
            if !printable(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return false }
            i += 8
        }
        // The last eight bytes (some looked at already).
        return printable(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
    }

    /// Whether a bidirectional or line-separator character (`isReordering`) starts at `j`: in
    /// UTF-8, 0xD8 0x9C or 0xE2 0x80 0x8E–0x8F, 0xA8–0xAE, or 0xE2 0x81 0xA6–0xA9.
    @inline(__always)
    private static func isReordering(_ bytes: UnsafeBufferPointer<UInt8>, at j: Int) -> Bool {
        let lead = bytes[j]
        if lead == 0xD8 { return j + 1 < bytes.count && bytes[j + 1] == 0x9C }
        guard lead == 0xE2, j + 2 < bytes.count else { return false }
        let second = bytes[j + 1], third = bytes[j + 2]
        if second == 0x80 { return third == 0x8E || third == 0x8F || (0xA8...0xAE).contains(third) }
        return second == 0x81 && (0xA6...0xA9).contains(third)
    }

    private static func hasControl(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(hasControl) }

    /// Whether `byte` (after `previous`) starts or is a control character `visible` escapes.
    @inline(__always)
    private static func isControlByte(_ byte: UInt8, after previous: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x0A && byte != 0x09) || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte))
    }

    /// Output on its way to the terminal with every control character `visible` escapes escaped:
    /// the last guard that no byte of data or input drives the terminal, whatever path it took.
    /// With `colour`, the state colours `stateText` writes (`ESC[32mfresh ESC[0m`) stay; data
    /// never holds one, as values, keys, messages and `echo` text are escaped where they are made.
    /// - Complexity: O(n); `text` itself when it holds nothing to escape.
    static func safeForTerminal(_ text: String, colour: Bool) -> String {
        guard colour, text.utf8.contains(0x1B) else { return visible(text) }
        let bytes = Array(text.utf8)
        let reset: [UInt8] = [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")]
        var out = ""
        var plainStart = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x1B, let (_, next) = colouredWord(bytes, at: i, reset: reset) {
                out += visible(String(decoding: bytes[plainStart..<i], as: UTF8.self))
                out += String(decoding: bytes[i..<next], as: UTF8.self)
                i = next
                plainStart = i
            } else {
                i += 1
            }
        }
        return out + visible(String(decoding: bytes[plainStart...], as: UTF8.self))
    }

    /// `name: value` lines, names padded to one width (independent of the terminal).
    static func fieldLines(_ fields: [String: JSONValue], order: [String], colour: Bool) -> [String] {
        var names = order.filter { fields[$0] != nil }
        names += fields.keys.filter { !order.contains($0) }.sorted()
        let width = names.map(\.count).max() ?? 0
        return names.map { name in
            let value = fields[name]!
            var shown = text(value, field: name)
            if name == "state", case .string(let s) = value { shown = stateText(s, colour: colour) }
            if name.hasSuffix("_ms"), case .int(let ms) = value, let words = durationWords(ms) { shown += " (" + words + ")" }
            return name + ":" + String(repeating: " ", count: width - name.count + 1) + shown
        }
    }

    /// `words` joined by spaces into lines of at most `width` columns: the first starting with
    /// `first`, the others with `indent` spaces. A word longer than a line gets a line of its own.
    static func wrap(_ words: [String], first: String, indent: Int, width: Int) -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        for word in words {
            if !empty && TextWidth.of(line) + 1 + TextWidth.of(word) > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines
    }

    /// A duration in words for human output beside its milliseconds (SPEC §4): nil under a second,
    /// where the number says it; whole seconds from a minute on (`58801200` is `16h20m1s`).
    static func durationWords(_ ms: Int64) -> String? {
        guard ms.magnitude >= 1_000 else { return nil }
        return TimeText.formatDuration(ms.magnitude >= 60_000 ? ms / 1_000 * 1_000 : ms)
    }

    /// The columns human output fits (SPEC §4): a transcript recorded anywhere verifies anywhere.
    /// Only the terminal's copy of a reply lays its tables out to the terminal's own width.
    static let width = 80

    /// An aligned table: a header row and one row per item, columns padded to their widest cell
    /// in display columns (CJK and emoji take two). The last column is not padded. A table whose
    /// columns before the last (and the last one's header) do not fit `width` columns is shown as
    /// records instead (``records(_:_:colourColumn:colour:)``).
    static func table(_ columns: [String], _ rows: [[String]], colourColumn: Int? = nil, colour: Bool = false,
                      width: Int = Render.width) -> [String] {
        // A duration column (`age_ms`) also says each duration in words.
        let durations = columns.indices.filter { columns[$0].hasSuffix("_ms") }
        var rows = rows
        if !durations.isEmpty {
            for r in rows.indices {
                for i in durations where i < rows[r].count {
                    if let ms = Int64(rows[r][i]), let words = durationWords(ms) { rows[r][i] += " (" + words + ")" }
                }
            }
        }
        var widths = columns.map(TextWidth.of)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], TextWidth.of(cell)) }
        }
        // The last column is free text (a value, a list of keys) that may run on as a value line
        // does; the columns before it, and its header, must fit.
        if widths.dropLast().reduce(0, +) + 2 * max(widths.count - 1, 0) + (columns.last.map(TextWidth.of) ?? 0) > width {
            return records(columns, rows, colourColumn: colourColumn, colour: colour)
        }
        func line(_ cells: [String], colourize: Bool) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let shown = colourize && i == colourColumn ? stateText(cell, colour: colour) : cell
                if i == cells.count - 1 {
                    out += shown
                } else {
                    out += shown + String(repeating: " ", count: widths[i] - TextWidth.of(cell) + 2)
                }
            }
            return out
        }
        return [line(columns, colourize: false)] + rows.map { line($0, colourize: true) }
    }

    /// A table too wide for the screen, one record per row (as `psql`'s expanded display):
    /// `column: cell` lines, names padded to one width, records apart by a blank line.
    static func records(_ columns: [String], _ rows: [[String]], colourColumn: Int? = nil, colour: Bool = false) -> [String] {
        let nameWidth = columns.map(TextWidth.of).max() ?? 0
        var lines: [String] = []
        for (r, row) in rows.enumerated() {
            if r > 0 { lines.append("") }
            for (i, cell) in row.enumerated() where i < columns.count {
                let shown = i == colourColumn ? stateText(cell, colour: colour) : cell
                lines.append(TextWidth.pad(columns[i] + ":", to: nameWidth + 2) + shown)
            }
        }
        return lines
    }

    static func eventLine(_ event: CacheEvent, clockStart: Int64, colour: Bool) -> String {
        let time = TimeText.iso8601(ms: event.at)
        if event.cause == .pushed {
            return "* \(time) pushed \(event.key)"
        }
        var line = "* \(time) \(event.cause.rawValue) \(event.key) \(stateText(event.state.rawValue, colour: colour))"
        if let text = event.valueText { line += " " + text }
        line += " (\(event.source.rawValue))"
        return line
    }
}
