// Canonical compact text (what `compactText` prints: keys sorted, numbers and escapes as the
// writer writes them) straight from JSON text, and the pretty form of such a text, both without
// building a tree: the common text, written by this program, is already in order and is only
// checked (compact) or copied in runs between blanks (pretty). For values kept as their canonical text, read from snapshots and
// written into them.

extension JSONValue {
    /// The canonical compact text of one JSON text: `JSONValue(parsing: text).compactText`.
    ///
    /// Checks and copies in one pass while each object's keys are plain ASCII in increasing order
    /// (as every canonical or pretty text has them); any other value (keys out of order, repeated,
    /// escaped or non-ASCII) goes through the tree (`CanonicalScanner`).
    /// - Complexity: O(n) for text in order; else O(n log k) for objects of at most k keys.
    /// - Throws: `JSONError` as `init(parsing:maxDepth:)` does.
    public static func canonicalCompactText(parsing text: String, maxDepth: Int = JSONValue.maxDepth) throws(JSONError) -> String {
        var text = text
        let result: Result<String, JSONError> = text.withUTF8 { bytes in
            Result { () throws(JSONError) -> String in try canonicalCompactText(utf8: bytes, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// `canonicalCompactText(parsing:)` of UTF-8 bytes.
    static func canonicalCompactText(utf8 bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.maxDepth) throws(JSONError) -> String {
        if CanonicalCheck.isPlainCanonical(bytes, maxDepth: maxDepth) { return String(decoding: bytes, as: UTF8.self) }
        var scanner = CanonicalScanner(bytes, maxDepth: maxDepth)
        if scanner.scan() && scanner.atEnd() { return scanner.withText { String(decoding: $0, as: UTF8.self) } }
        var reader = JSONReader(bytes, maxDepth: maxDepth)
        return try reader.parseDocument().compactText
    }

    /// The pretty text (`prettyText()`) of a value given as canonical compact text, at `indent`.
    /// - Precondition: `compact` is canonical compact text (a `compactText`).
    /// - Complexity: O(size of the text).
    public static func prettyText(ofCompact compact: String) -> String {
        var writer = JSONWriter(pretty: true, capacity: compact.utf8.count * 2)
        writer.writeCanonical(compact, indent: 0)
        return writer.text
    }
}

extension JSONWriter {
    /// Writes a value given as canonical compact text at `indent`: the same bytes as `write` of
    /// its tree. Compact, a copy; pretty, the text re-indented as it goes.
    /// - Precondition: `text` is canonical compact text (a `compactText`).
    mutating func writeCanonical(_ text: String, indent: Int) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { writeCanonical(utf8: $0, indent: indent) }
        if done == nil { Array(text.utf8).withUnsafeBufferPointer { writeCanonical(utf8: $0, indent: indent) } }
    }

    mutating func writeCanonical(utf8 text: UnsafeBufferPointer<UInt8>, indent: Int) {
        guard pretty else {
            bytes.append(contentsOf: text)
            return
        }
        var level = indent
        var k = 0
        let n = text.count
        while k < n {
            let byte = text[k]
            switch byte {
            case UInt8(ascii: "\""):
                // A string, through its closing quote (an escape's second byte never ends it).
                var end = k + 1
                while end < n && text[end] != UInt8(ascii: "\"") {
                    end += text[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                end = min(end + 1, n)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[k..<end]))
                k = end
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if k + 1 < n && text[k + 1] == byte + 2 {  // {} or []
                    bytes.append(byte)
                    bytes.append(byte + 2)
                    k += 2
                    continue
                }
                bytes.append(byte)
                level += 1
                newline(level)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                level -= 1
                newline(level)
                bytes.append(byte)
            case UInt8(ascii: ","):
                bytes.append(byte)
                newline(level)
            case UInt8(ascii: ":"):
                bytes.append(byte)
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
            k += 1
        }
    }
}

/// Checks one JSON value and gives its canonical compact text in the same pass, building no tree.
///
/// Text already canonical (a compact snapshot's values, most values typed in the shell) is only
/// checked: the value is then the input's own bytes, `text(from:)` copies nothing. Otherwise the
/// input is copied in runs between what differs (blanks are dropped; a number or a string not in
/// the writer's form is written as the writer writes it).
///
/// `scanValue` accepts exactly what `JSONReader.parseValue` accepts, within `maxDepth`, and gives
/// the same text as `compactText` of its tree, except that it answers false (and the caller reads
/// the value as a tree, which then gives its text or the reader's error) for text that is not
/// JSON, nested deeper than `maxDepth`, or has an object whose keys are not plain ASCII in
/// increasing order (such an object is sorted by its tree).
struct CanonicalScanner {
    private(set) var reader: JSONReader
    /// The canonical text of the input up to `runStart` (when `rewritten`); given memory only
    /// then, so that checking a canonical text allocates nothing.
    private var writer = JSONWriter(pretty: false, capacity: 0)
    /// Where the bytes copied as they are start: nothing from there on differs yet.
    private var runStart = 0
    /// Whether the canonical text differs from the input; if not, `writer` is not used.
    private(set) var rewritten = false
    /// Where the value scanned starts and ends.
    private var valueStart = 0
    private var valueEnd = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        reader = JSONReader(bytes, maxDepth: maxDepth)
    }

    /// The next byte to read.
    var position: Int {
        get { reader.i }
        set { reader.i = newValue }
    }

    /// Scans the value at the next non-blank byte (leaving `position` right after it); false
    /// where the tree is to read it (see the type's comment).
    mutating func scan() -> Bool {
        reader.skipWhitespace()
        valueStart = reader.i
        runStart = reader.i
        rewritten = false
        writer.bytes.removeAll(keepingCapacity: true)
        guard scanValue(depth: 0) else { return false }
        valueEnd = reader.i
        return true
    }

    /// Whether only blanks follow (skipped).
    mutating func atEnd() -> Bool {
        reader.skipWhitespace()
        return reader.i == reader.bytes.count
    }

    /// After a successful `scan`: calls `body` with the value's canonical compact text.
    mutating func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if !rewritten { return body(UnsafeBufferPointer(rebasing: reader.bytes[valueStart..<valueEnd])) }
        flush(upTo: valueEnd)
        runStart = valueEnd
        return writer.bytes.withUnsafeBufferPointer(body)
    }

    /// Copies the input from `runStart` to `end` to the text; what follows is written as it is to be.
    @inline(__always)
    private mutating func flush(upTo end: Int) {
        if !rewritten && writer.bytes.capacity == 0 { writer.bytes.reserveCapacity(256) }
        if end > runStart { writer.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: reader.bytes[runStart..<end])) }
        rewritten = true
    }

    /// Skips blanks, which the canonical text has none of.
    @inline(__always)
    private mutating func blanks() {
        let bytes = reader.bytes
        let i = reader.i
        guard i < bytes.count else { return }
        let byte = bytes[i]
        guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
        flush(upTo: i)
        reader.skipWhitespace()
        runStart = reader.i
    }

    private mutating func scanValue(depth: Int) -> Bool {
        let bytes = reader.bytes
        guard reader.i < bytes.count else { return false }
        switch bytes[reader.i] {
        case UInt8(ascii: "\""):
            return scanString()
        case UInt8(ascii: "{"):
            guard depth < reader.maxDepth else { return false }
            return scanObject(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < reader.maxDepth else { return false }
            return scanArray(depth: depth + 1)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return scanNumber()
        case UInt8(ascii: "t"):
            return (try? reader.expectWord("true")) != nil
        case UInt8(ascii: "f"):
            return (try? reader.expectWord("false")) != nil
        case UInt8(ascii: "n"):
            return (try? reader.expectWord("null")) != nil
        default:
            return false
        }
    }

    private mutating func scanObject(depth: Int) -> Bool {
        let bytes = reader.bytes
        reader.i += 1
        blanks()
        if reader.i < bytes.count && bytes[reader.i] == UInt8(ascii: "}") {
            reader.i += 1
            return true
        }
        var previous = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        var first = true
        while true {
            blanks()
            guard let key = plainKey(), first || Self.less(previous, key) else { return false }
            previous = key
            first = false
            blanks()
            guard reader.i < bytes.count, bytes[reader.i] == UInt8(ascii: ":") else { return false }
            reader.i += 1
            blanks()
            guard scanValue(depth: depth) else { return false }
            blanks()
            guard reader.i < bytes.count else { return false }
            let separator = bytes[reader.i]
            reader.i += 1
            if separator == UInt8(ascii: ",") { continue }
            return separator == UInt8(ascii: "}")
        }
    }

    private mutating func scanArray(depth: Int) -> Bool {
        let bytes = reader.bytes
        reader.i += 1
        blanks()
        if reader.i < bytes.count && bytes[reader.i] == UInt8(ascii: "]") {
            reader.i += 1
            return true
        }
        while true {
            blanks()
            guard scanValue(depth: depth) else { return false }
            blanks()
            guard reader.i < bytes.count else { return false }
            let separator = bytes[reader.i]
            reader.i += 1
            if separator == UInt8(ascii: ",") { continue }
            return separator == UInt8(ascii: "]")
        }
    }

    /// A key of printable ASCII without quote or backslash (written as it is read, and ordered
    /// by its bytes as strings are), read past its closing quote; nil for any other key.
    @inline(__always)
    private mutating func plainKey() -> UnsafeBufferPointer<UInt8>? {
        let bytes = reader.bytes
        guard reader.i < bytes.count, bytes[reader.i] == UInt8(ascii: "\"") else { return nil }
        let start = reader.i + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                reader.i = end + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<end])
            }
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") { return nil }
            end += 1
        }
        return nil
    }

    /// A number: as it is when the writer writes it so (an integer but `-0`; a fraction or an
    /// exponent in the shortest form); else as the writer writes it.
    private mutating func scanNumber() -> Bool {
        let bytes = reader.bytes
        let start = reader.i
        // The commonest number, an integer of at most 18 digits without a leading zero, ends at
        // a byte that is no part of a number: it is an `.int` printed as it is read (only `-0`
        // is not, and it has a leading zero), so it is only passed over.
        var end = bytes[start] == UInt8(ascii: "-") ? start + 1 : start
        let digits = end
        if end < bytes.count && bytes[end] != UInt8(ascii: "0") {
            while end < bytes.count && bytes[end] &- UInt8(ascii: "0") < 10 { end += 1 }
            if end > digits && end - digits <= 18
                && (end == bytes.count || (bytes[end] != UInt8(ascii: ".") && bytes[end] | 0x20 != UInt8(ascii: "e"))) {
                reader.i = end
                return true
            }
        }
        guard let number = try? reader.parseNumber() else { return false }
        switch number {
        case .int:
            // The grammar has no leading zeros or `+`, so an integer that fits prints as it is read, but `-0`.
            guard reader.i - start == 2 && bytes[start] == UInt8(ascii: "-") && bytes[start + 1] == UInt8(ascii: "0") else { return true }
        case .double(let d):
            var text = JSONValue.text(of: d)
            let same = text.withUTF8 { $0.elementsEqual(UnsafeBufferPointer(rebasing: bytes[start..<reader.i])) }
            if same { return true }
        default:
            break
        }
        flush(upTo: start)
        writer.write(number)
        runStart = reader.i
        return true
    }

    /// A string: as it is when every byte is as the writer writes it (no escape it does not use,
    /// valid UTF-8 without C1 controls or DEL); else decoded and written as the writer writes it.
    private mutating func scanString() -> Bool {
        let bytes = reader.bytes
        let open = reader.i
        let n = bytes.count
        var i = open + 1
        while i < n {
            let byte = bytes[i]
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                reader.i = i + 1
                return true
            }
            if byte == UInt8(ascii: "\\"), let length = Self.writtenEscape(bytes, at: i) {
                i += length
                continue
            }
            if byte >= 0x80, let length = Self.writtenUTF8(bytes, at: i) {
                i += length
                continue
            }
            break  // a control character (not JSON), DEL, an escape or UTF-8 the writer writes otherwise
        }
        reader.i = open
        guard let string = try? reader.parseString() else { return false }
        flush(upTo: open)
        writer.writeString(string)
        runStart = reader.i
        return true
    }

    /// The length of the escape at `i` if the writer writes its character so: `\"`, `\\`, `\n`,
    /// `\r`, `\t`, `\b`, `\f`, or `\u00xx` (lowercase) for another control character, DEL or a C1 control.
    @inline(__always)
    private static func writtenEscape(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        guard i + 1 < bytes.count else { return nil }
        switch bytes[i + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"),
             UInt8(ascii: "b"), UInt8(ascii: "f"):
            return 2
        case UInt8(ascii: "u"):
            guard i + 5 < bytes.count, bytes[i + 2] == UInt8(ascii: "0"), bytes[i + 3] == UInt8(ascii: "0"),
                  let high = lowerHex(bytes[i + 4]), let low = lowerHex(bytes[i + 5]) else { return nil }
            let c = high << 4 | low
            switch c {
            case 0x08, 0x09, 0x0A, 0x0C, 0x0D: return nil
            case 0..<0x20, 0x7F, 0x80...0x9F: return 6
            default: return nil
            }
        default:
            return nil
        }
    }

    @inline(__always)
    private static func lowerHex(_ byte: UInt8) -> UInt8? {
        if byte &- UInt8(ascii: "0") < 10 { return byte - UInt8(ascii: "0") }
        if byte &- UInt8(ascii: "a") < 6 { return byte - UInt8(ascii: "a") + 10 }
        return nil
    }

    /// The length of the UTF-8 sequence at `i` if it is valid and not a C1 control (which the
    /// writer escapes); nil otherwise.
    @inline(__always)
    private static func writtenUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        let n = bytes.count
        let lead = bytes[i]
        @inline(__always) func continuation(_ k: Int) -> Bool { k < n && bytes[k] & 0xC0 == 0x80 }
        switch lead {
        case 0xC2:
            guard i + 1 < n, bytes[i + 1] >= 0xA0 && bytes[i + 1] <= 0xBF else { return nil }
            return 2
        case 0xC3...0xDF:
            return continuation(i + 1) ? 2 : nil
        case 0xE0...0xEF:
            guard i + 2 < n, continuation(i + 2) else { return nil }
            let second = bytes[i + 1]
            let low: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
            let high: UInt8 = lead == 0xED ? 0x9F : 0xBF
            return second >= low && second <= high ? 3 : nil
        case 0xF0...0xF4:
            guard i + 3 < n, continuation(i + 2), continuation(i + 3) else { return nil }
            let second = bytes[i + 1]
            let low: UInt8 = lead == 0xF0 ? 0x90 : 0x80
            let high: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
            return second >= low && second <= high ? 4 : nil
        default:
            return nil
        }
    }

    /// Byte order, which is the order of strings for ASCII text.
    @inline(__always)
    private static func less(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = min(a.count, b.count)
        for k in 0..<n where a[k] != b[k] { return a[k] < b[k] }
        return a.count < b.count
    }
}
