extension JSONValue {
    /// One-line JSON with object keys sorted: the form of `--json` output and of values in human output.
    /// - Complexity: O(n log k) for n bytes of output and objects of at most k keys.
    public var compactText: String {
        var writer = JSONWriter(pretty: false)
        writer.write(self)
        return writer.text
    }

    /// Appends the compact form to `out`.
    public func write(compactTo out: inout String) {
        out += compactText
    }

    /// Indented JSON (two spaces, `"key": value`, sorted keys), the form of snapshot files.
    public func prettyText() -> String {
        var writer = JSONWriter(pretty: true)
        writer.write(self)
        return writer.text
    }

    /// How a double prints: integral values keep a `.0` so they read back as doubles
    /// (`42.0` stays distinct from `42`); others use the shortest text that reads back exactly.
    static func text(of double: Double) -> String {
        guard double.isFinite else { return "null" }
        if double == double.rounded() && abs(double) < 1e15 {
            let integral = Int64(double)
            return (integral == 0 && double.sign == .minus ? "-0" : String(integral)) + ".0"
        }
        return String(double)
    }
}

/// Writes JSON into a byte buffer: strings escaped as RFC 8259 requires, keys sorted.
///
/// Also the streaming writer of snapshots (`CacheEngine.snapshotText`): its `member`, `open` and
/// `close` write a document field by field in the layout `write` gives a tree, so both print
/// the same bytes.
struct JSONWriter {
    var bytes: [UInt8] = []
    let pretty: Bool

    init(pretty: Bool, capacity: Int = 64) {
        self.pretty = pretty
        // No room asked for, no call: `reserveCapacity(0)` of the empty array still goes through
        // the buffer's growth path (some 85 instructions), which the canonical scanner's writer,
        // made for every value parsed and unused for canonical text, paid each time.
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func write(_ value: JSONValue, indent: Int = 0) {
        switch value {
        case .null: appendASCII("null")
        case .bool(let b): appendASCII(b ? "true" : "false")
        case .int(let n): writeInt(n)
        case .double(let d): bytes.append(contentsOf: JSONValue.text(of: d).utf8)
        case .string(let s): writeString(s)
        case .array(let array):
            if array.isEmpty { appendASCII("[]"); return }
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in array {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                newline(indent + 1)
                write(element, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty { appendASCII("{}"); return }
            bytes.append(UInt8(ascii: "{"))
            var first = true
            // Keys are unique, so sorting the pairs by key is the order of the sorted keys.
            for (key, child) in object.sorted(by: { $0.key < $1.key }) {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                newline(indent + 1)
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if pretty { bytes.append(UInt8(ascii: " ")) }
                write(child, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    // MARK: Streaming

    /// Opens an object or array (`{` or `[`) whose members follow at `indent + 1`.
    @inline(__always)
    mutating func open(_ bracket: UInt8) { bytes.append(bracket) }

    /// Closes an object or array opened at `indent`; `empty` when no member was written.
    @inline(__always)
    mutating func close(_ bracket: UInt8, indent: Int, empty: Bool) {
        if !empty { newline(indent) }
        bytes.append(bracket)
    }

    /// Starts a member of an object at `indent` (its value follows): the separator, the line and
    /// `"name": `. `name` must need no escapes (a field name of the format).
    @inline(__always)
    mutating func member(_ name: StaticString, indent: Int, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        newline(indent)
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    /// `member` for a name held in a string (escaped as any string).
    mutating func member(_ name: String, indent: Int, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        newline(indent)
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    /// Starts an element of an array at `indent`.
    @inline(__always)
    mutating func element(indent: Int, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        newline(indent)
    }

    @inline(__always)
    mutating func newline(_ indent: Int) {
        guard pretty else { return }
        bytes.append(0x0A)
        for _ in 0..<indent { bytes.append(0x20); bytes.append(0x20) }
    }

    @inline(__always)
    mutating func appendBytes(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: utf8)
    }

    @inline(__always)
    mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A whole number in decimal, as `String(n)` writes it.
    mutating func writeInt(_ n: Int64) {
        if n >= 0 && n < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(n))
            return
        }
        var rest = n.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var k = 20
            repeat {
                k -= 1
                digits[k] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            if n < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[k..<20]))
        }
    }

    /// An instant as `CacheEngine.time` writes it: ISO 8601 text, or ms outside the years 0000–9999.
    mutating func writeTime(_ ms: Int64) {
        if ms >= CacheEngine.minISOTime && ms <= CacheEngine.maxISOTime {
            bytes.append(UInt8(ascii: "\""))
            TimeText.appendISO8601(ms: ms, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        } else {
            writeInt(ms)
        }
    }

    /// A JSON string: `"` and `\\` escaped, and every control character (U+0000–U+001F, U+007F
    /// and the C1 controls U+0080–U+009F) as an escape, so no printed value can drive a terminal.
    mutating func writeString(_ string: String) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { writeString(utf8: $0) }
        if done == nil { Array(string.utf8).withUnsafeBufferPointer { writeString(utf8: $0) } }
    }

    /// `writeString` of UTF-8 bytes. The common string, with nothing to escape, is one copy.
    mutating func writeString(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var plain = true
        for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || byte == 0xC2 {
            plain = false
            break
        }
        if plain {
            bytes.append(contentsOf: utf8)
        } else {
            writeEscaped(utf8)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        // A C1 control is 0xC2 followed by 0x80...0x9F in UTF-8: hold a 0xC2 until the next byte.
        var heldC2 = false
        for byte in utf8 {
            if heldC2 {
                heldC2 = false
                if (0x80...0x9F).contains(byte) {
                    escapeU(byte)
                    continue
                }
                bytes.append(0xC2)
            }
            switch byte {
            case UInt8(ascii: "\""): bytes.append(0x5C); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(0x5C); bytes.append(byte)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(0x5C); bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(0x5C); bytes.append(UInt8(ascii: "f"))
            case 0..<0x20, 0x7F: escapeU(byte)
            case 0xC2: heldC2 = true
            default: bytes.append(byte)
            }
        }
        if heldC2 { bytes.append(0xC2) }
    }

    /// The number of bytes `writeString` writes for `string` (quotes included).
    static func stringCount(_ string: String) -> Int {
        var string = string
        return string.withUTF8 { utf8 in
            var n = 2 + utf8.count
            var heldC2 = false
            for byte in utf8 {
                if heldC2 {
                    heldC2 = false
                    // A C1 control: `\u00XX` for its two bytes.
                    if (0x80...0x9F).contains(byte) { n += 4; continue }
                }
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: n += 1
                case 0..<0x20, 0x7F: n += 5
                case 0xC2: heldC2 = true
                default: break
                }
            }
            return n
        }
    }

    /// `\u00XX` in lowercase hex.
    private mutating func escapeU(_ byte: UInt8) {
        let hex: StaticString = "0123456789abcdef"
        appendASCII("\\u00")
        hex.withUTF8Buffer { digits in
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0xF)])
        }
    }
}
