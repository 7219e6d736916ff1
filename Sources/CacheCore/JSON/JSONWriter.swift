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
struct JSONWriter {
    private var bytes: [UInt8] = []
    private let pretty: Bool

    init(pretty: Bool) {
        self.pretty = pretty
        bytes.reserveCapacity(64)
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func write(_ value: JSONValue, indent: Int = 0) {
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .int(let n): append(String(n))
        case .double(let d): append(JSONValue.text(of: d))
        case .string(let s): writeString(s)
        case .array(let array):
            if array.isEmpty { append("[]"); return }
            bytes.append(UInt8(ascii: "["))
            for (k, element) in array.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(element, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty { append("{}"); return }
            bytes.append(UInt8(ascii: "{"))
            for (k, key) in object.keys.sorted().enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if pretty { bytes.append(UInt8(ascii: " ")) }
                write(object[key]!, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func newline(_ indent: Int) {
        guard pretty else { return }
        bytes.append(0x0A)
        for _ in 0..<indent { bytes.append(0x20); bytes.append(0x20) }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A JSON string: `"` and `\\` escaped, and every control character (U+0000–U+001F, U+007F
    /// and the C1 controls U+0080–U+009F) as an escape, so no printed value can drive a terminal.
    private mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        // A C1 control is 0xC2 followed by 0x80...0x9F in UTF-8: hold a 0xC2 until the next byte.
        var heldC2 = false
        for byte in string.utf8 {
            if heldC2 {
                heldC2 = false
                if (0x80...0x9F).contains(byte) {
                    append("\\u" + hex4(UInt16(byte)))
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
            case 0..<0x20, 0x7F:
                append("\\u" + hex4(UInt16(byte)))
            case 0xC2:
                heldC2 = true
            default: bytes.append(byte)
            }
        }
        if heldC2 { bytes.append(0xC2) }
        bytes.append(UInt8(ascii: "\""))
    }
}
