// Canonical compact text (what `compactText` prints: keys sorted, numbers and escapes as the
// writer writes them) straight from JSON text, and the pretty form of such a text, both without
// building a tree: the common text, written by this program, is already in order and is copied
// nearly byte for byte. For values kept as their canonical text, read from snapshots and
// written into them.

extension JSONValue {
    /// The canonical compact text of one JSON text: `JSONValue(parsing: text).compactText`.
    ///
    /// Copies token by token while each object's keys are plain ASCII in increasing order (as
    /// every canonical or pretty text has them); any other object (keys out of order, repeated,
    /// escaped or non-ASCII) goes through the tree.
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
        var copier = CanonicalCopier(bytes, maxDepth: maxDepth)
        if let text = copier.copyDocument() { return text }
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

/// Copies JSON text into its canonical compact form token by token; nil where an object needs
/// the tree (its keys not plain ASCII in increasing order) or the text is not JSON (the tree
/// reader then says why).
struct CanonicalCopier {
    private var reader: JSONReader
    private var writer: JSONWriter

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        reader = JSONReader(bytes, maxDepth: maxDepth)
        writer = JSONWriter(pretty: false, capacity: bytes.count)
    }

    mutating func copyDocument() -> String? {
        guard copyValue(depth: 0) else { return nil }
        reader.skipWhitespace()
        guard reader.i == reader.bytes.count else { return nil }
        return writer.text
    }

    /// Copies the value at the next non-blank byte; false to leave the text to the tree.
    mutating func copyValue(depth: Int) -> Bool {
        reader.skipWhitespace()
        let bytes = reader.bytes
        guard reader.i < bytes.count else { return false }
        switch bytes[reader.i] {
        case UInt8(ascii: "{"):
            guard depth < reader.maxDepth else { return false }
            return copyObject(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < reader.maxDepth else { return false }
            return copyArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            return copyString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let number = try? reader.parseNumber() else { return false }
            writer.write(number)
            return true
        case UInt8(ascii: "t"):
            guard (try? reader.expectWord("true")) != nil else { return false }
            writer.appendASCII("true")
            return true
        case UInt8(ascii: "f"):
            guard (try? reader.expectWord("false")) != nil else { return false }
            writer.appendASCII("false")
            return true
        case UInt8(ascii: "n"):
            guard (try? reader.expectWord("null")) != nil else { return false }
            writer.appendASCII("null")
            return true
        default:
            return false
        }
    }

    private mutating func copyObject(depth: Int) -> Bool {
        let bytes = reader.bytes
        reader.i += 1
        writer.open(UInt8(ascii: "{"))
        reader.skipWhitespace()
        if reader.i < bytes.count && bytes[reader.i] == UInt8(ascii: "}") {
            reader.i += 1
            writer.open(UInt8(ascii: "}"))
            return true
        }
        var previous: UnsafeBufferPointer<UInt8>?
        var first = true
        while true {
            reader.skipWhitespace()
            guard let key = plainKey(), previous.map({ Self.less($0, key) }) ?? true else { return false }
            previous = key
            if !first { writer.open(UInt8(ascii: ",")) }
            first = false
            writer.open(UInt8(ascii: "\""))
            writer.appendBytes(key)
            writer.open(UInt8(ascii: "\""))
            writer.open(UInt8(ascii: ":"))
            reader.skipWhitespace()
            guard reader.i < bytes.count, bytes[reader.i] == UInt8(ascii: ":") else { return false }
            reader.i += 1
            guard copyValue(depth: depth) else { return false }
            reader.skipWhitespace()
            guard reader.i < bytes.count else { return false }
            if bytes[reader.i] == UInt8(ascii: ",") {
                reader.i += 1
                continue
            }
            guard bytes[reader.i] == UInt8(ascii: "}") else { return false }
            reader.i += 1
            writer.open(UInt8(ascii: "}"))
            return true
        }
    }

    private mutating func copyArray(depth: Int) -> Bool {
        let bytes = reader.bytes
        reader.i += 1
        writer.open(UInt8(ascii: "["))
        reader.skipWhitespace()
        if reader.i < bytes.count && bytes[reader.i] == UInt8(ascii: "]") {
            reader.i += 1
            writer.open(UInt8(ascii: "]"))
            return true
        }
        var first = true
        while true {
            if !first { writer.open(UInt8(ascii: ",")) }
            first = false
            guard copyValue(depth: depth) else { return false }
            reader.skipWhitespace()
            guard reader.i < bytes.count else { return false }
            if bytes[reader.i] == UInt8(ascii: ",") {
                reader.i += 1
                continue
            }
            guard bytes[reader.i] == UInt8(ascii: "]") else { return false }
            reader.i += 1
            writer.open(UInt8(ascii: "]"))
            return true
        }
    }

    /// A key of printable ASCII without quote or backslash (written as it is read, and ordered
    /// by its bytes as strings are), read past its closing quote; nil for any other key.
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

    /// A string value: plain ASCII copied, anything else decoded and written as the writer writes it.
    private mutating func copyString() -> Bool {
        let bytes = reader.bytes
        let start = reader.i + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                writer.open(UInt8(ascii: "\""))
                writer.appendBytes(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                writer.open(UInt8(ascii: "\""))
                reader.i = end + 1
                return true
            }
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") { break }
            end += 1
        }
        guard let string = try? reader.parseString() else { return false }
        writer.writeString(string)
        return true
    }

    /// Byte order, which is the order of strings for ASCII text.
    private static func less(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = min(a.count, b.count)
        for k in 0..<n where a[k] != b[k] { return a[k] < b[k] }
        return a.count < b.count
    }
}
