
extension JSONValue {
    /// Objects and arrays nested deeper than this are refused (SPEC §7), so no input can exhaust the
    /// stack: the one limit for values, in the shell, the server, patches' results and documents.
    public static let maxDepth = 512

    /// The limit for a whole document that holds values (a snapshot, a store row): a value of
    /// `maxDepth` levels plus the document's own levels around it, so every value the shell
    /// accepted can be written and read back.
    public static let documentDepth = maxDepth + 16

    /// The number of nested levels: 0 for a scalar, 1 for `[]` or `{}`, 2 for `[[]]`.
    /// - Complexity: O(size of the value); recursion as deep as the value (at most `documentDepth`).
    public var depth: Int {
        switch self {
        case .array(let array): return 1 + (array.lazy.map(\.depth).max() ?? 0)
        case .object(let object): return 1 + (object.values.lazy.map(\.depth).max() ?? 0)
        default: return 0
        }
    }

    /// Parses one JSON text (RFC 8259), surrounding whitespace allowed.
    ///
    /// Strict: no comments, trailing commas, leading zeros, `+`, NaN or infinities.
    /// Integers that fit in 64 bits become `.int`; fractions, exponents and larger integers `.double`.
    /// An object with a key given twice is refused.
    /// - Complexity: O(n) in the length of the text.
    /// - Throws: `JSONError` with the offset of the first byte that is wrong.
    public init(parsing text: String, maxDepth: Int = JSONValue.maxDepth) throws(JSONError) {
        var text = text
        let result: Result<JSONValue, JSONError> = text.withUTF8 { bytes in
            var reader = JSONReader(bytes, maxDepth: maxDepth)
            return Result { () throws(JSONError) -> JSONValue in try reader.parseDocument() }
        }
        self = try result.get()
    }

    /// Parses one JSON text from UTF-8 bytes; see `init(parsing:)`.
    public init(parsing bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) {
        var reader = JSONReader(bytes)
        self = try reader.parseDocument()
    }
}

/// A byte-level recursive-descent JSON reader.
///
/// Recursion depth is bounded by `JSONValue.maxDepth`; every loop consumes at least one byte per turn.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// The next byte to read.
    var i = 0
    /// The deepest level an object or array was opened at (`parseValue` and `skipValue` keep it).
    var deepest = 0
    /// The members of the objects being parsed, innermost last (`parseObject`).
    private var members: [(key: String, value: JSONValue)] = []
    /// `skipValue`'s buffer for escaped strings, kept between strings.
    private var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.maxDepth) {
        self.bytes = bytes
        self.maxDepth = min(maxDepth, JSONValue.documentDepth)
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if i < bytes.count {
            throw JSONError(message: "unexpected \(describe(i)) after the JSON value", offset: i)
        }
        return value
    }

    mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i += 1
            default: return
            }
        }
    }

    /// The byte at `offset` as a user reads it in a message.
    private func describe(_ offset: Int) -> String {
        guard offset < bytes.count else { return "end of JSON" }
        let byte = bytes[offset]
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        if byte < 0x80 { return "character \\u\(hex4(UInt16(byte)))" }
        // A multi-byte character: show it whole.
        var end = offset + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        return "character '\(String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self))'"
    }

    /// The value starting at the next non-blank byte, nested `depth` levels in its document.
    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard i < bytes.count else { throw JSONError(message: "unexpected end of JSON, expected a value", offset: i) }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else {
                throw JSONError(message: "JSON nested deeper than \(maxDepth) levels", offset: i)
            }
            if depth >= deepest { deepest = depth + 1 }
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < maxDepth else {
                throw JSONError(message: "JSON nested deeper than \(maxDepth) levels", offset: i)
            }
            if depth >= deepest { deepest = depth + 1 }
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        default:
            throw JSONError(message: "unexpected \(describe(i)), expected a JSON value", offset: i)
        }
    }

    mutating func expectWord(_ word: StaticString) throws(JSONError) {
        let start = i
        let count = word.utf8CodeUnitCount
        let ok = word.withUTF8Buffer { expected in
            guard bytes.count - i >= count else { return false }
            for k in 0..<count where bytes[i + k] != expected[k] { return false }
            return true
        }
        guard ok else { throw JSONError(message: "unexpected \(describe(start)), expected a JSON value", offset: start) }
        i += count
    }

    private mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        let open = i
        i += 1  // {
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object([:])
        }
        // The members go on `members` (shared by every level) and into a dictionary of the right
        // size at the end: no rehashing as it grows.
        let mark = members.count
        if mark == 0 && members.capacity == 0 { members.reserveCapacity(16) }
        defer { members.removeSubrange(mark...) }
        while true {
            skipWhitespace()
            guard i < bytes.count else { throw JSONError(message: "unexpected end of JSON, expected '}'", offset: i) }
            guard bytes[i] == UInt8(ascii: "\"") else {
                throw JSONError(message: "unexpected \(describe(i)), expected a string key", offset: i)
            }
            let key = try parseString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw JSONError(message: "unexpected \(describe(i)), expected ':' after an object key", offset: i)
            }
            i += 1
            let value = try parseValue(depth: depth)
            members.append((key, value))
            skipWhitespace()
            guard i < bytes.count else { throw JSONError(message: "unexpected end of JSON, expected '}'", offset: i) }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                var object = [String: JSONValue](minimumCapacity: members.count - mark)
                for k in mark..<members.count { object[members[k].key] = members[k].value }
                // A key given twice: which value counts is not for the reader to guess.
                if object.count != members.count - mark { throw duplicateKey(from: mark, open: open) }
                return .object(object)
            }
            throw JSONError(message: "unexpected \(describe(i)), expected ',' or '}'", offset: i)
        }
    }

    /// The error for the first key given twice among `members[mark...]`, at its second place
    /// (found again in the text), with the JSON path of that member.
    private func duplicateKey(from mark: Int, open: Int) -> JSONError {
        var seen = Set<String>()
        var key = ""
        for k in mark..<members.count where !seen.insert(members[k].key).inserted {
            key = members[k].key
            break
        }
        let offset = JSONPath.offsetOfKey(key, occurrence: 2, inObjectAt: open, bytes)
        return JSONError(message: "duplicate key \(JSONValue.string(key).compactText) at \(JSONPath.path(to: offset, bytes))",
                         offset: offset)
    }

    private mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        i += 1  // [
        var array: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(array)
        }
        while true {
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard i < bytes.count else { throw JSONError(message: "unexpected end of JSON, expected ']'", offset: i) }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(array)
            }
            throw JSONError(message: "unexpected \(describe(i)), expected ',' or ']'", offset: i)
        }
    }

    /// A string starting at the opening quote; the common case (no escapes) is one copy.
    mutating func parseString() throws(JSONError) -> String {
        let open = i
        i += 1
        let start = i
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                i += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONError(message: "control character \\u\(hex4(UInt16(byte))) in a string", offset: i) }
            i += 1
        }
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "\""):
                i += 1
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw JSONError(message: "control character \\u\(hex4(UInt16(byte))) in a string", offset: i)
            default:
                buffer.append(byte)
                i += 1
            }
        }
        throw JSONError(message: "unterminated string", offset: open)
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONError) {
        let start = i
        i += 1
        guard i < bytes.count else { throw JSONError(message: "unterminated string", offset: start) }
        let c = bytes[i]
        i += 1
        switch c {
        case UInt8(ascii: "\""): buffer.append(0x22)
        case UInt8(ascii: "\\"): buffer.append(0x5C)
        case UInt8(ascii: "/"): buffer.append(0x2F)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4(escapeAt: start))
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard bytes.count - i >= 6, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                    throw JSONError(message: "unpaired surrogate in \\u escape", offset: start)
                }
                i += 2
                let low = UInt32(try parseHex4(escapeAt: i - 2))
                guard (0xDC00..<0xE000).contains(low) else {
                    throw JSONError(message: "unpaired surrogate in \\u escape", offset: start)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw JSONError(message: "unpaired surrogate in \\u escape", offset: start)
            }
            for unit in UTF8.encode(Unicode.Scalar(scalar)!)! { buffer.append(unit) }
        default:
            throw JSONError(message: "invalid escape \\\(Character(Unicode.Scalar(c < 0x80 ? c : UInt8(ascii: "?")))) in a string", offset: start)
        }
    }

    private mutating func parseHex4(escapeAt start: Int) throws(JSONError) -> UInt16 {
        guard bytes.count - i >= 4 else { throw JSONError(message: "invalid \\u escape (needs 4 hex digits)", offset: start) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw JSONError(message: "invalid \\u escape (needs 4 hex digits)", offset: start)
            }
            value = value << 4 | UInt16(digit)
            i += 1
        }
        return value
    }

    // MARK: Checking without building

    /// Reads past the value starting at the next non-blank byte, nested `depth` levels in its
    /// document, building nothing: it throws wherever `parseValue` would (possibly with another
    /// message: a caller that needs the message parses again), and accepts only what `parseValue`
    /// accepts but for an object with a key given twice (which it does not look for: a caller
    /// that needs that refused parses the value too). Keeps `deepest`.
    mutating func skipValue(depth: Int) throws(JSONError) {
        skipWhitespace()
        guard i < bytes.count else { throw JSONError(message: "unexpected end of JSON, expected a value", offset: i) }
        switch bytes[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < maxDepth else {
                throw JSONError(message: "JSON nested deeper than \(maxDepth) levels", offset: i)
            }
            if depth + 1 > deepest { deepest = depth + 1 }
            if bytes[i] == UInt8(ascii: "{") { try skipObject(depth: depth + 1) } else { try skipArray(depth: depth + 1) }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try parseNumber()
        case UInt8(ascii: "t"): try expectWord("true")
        case UInt8(ascii: "f"): try expectWord("false")
        case UInt8(ascii: "n"): try expectWord("null")
        default:
            throw JSONError(message: "unexpected \(describe(i)), expected a JSON value", offset: i)
        }
    }

    /// `skipValue` of an object whose `{` is at `i`.
    private mutating func skipObject(depth: Int) throws(JSONError) {
        i += 1
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw JSONError(message: "expected a string key", offset: i) }
            try skipString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw JSONError(message: "expected ':'", offset: i) }
            i += 1
            try skipValue(depth: depth)
            skipWhitespace()
            guard i < bytes.count else { throw JSONError(message: "expected '}'", offset: i) }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return
            }
            throw JSONError(message: "expected ',' or '}'", offset: i)
        }
    }

    /// `skipValue` of an array whose `[` is at `i`.
    private mutating func skipArray(depth: Int) throws(JSONError) {
        i += 1
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
            i += 1
            return
        }
        while true {
            try skipValue(depth: depth)
            skipWhitespace()
            guard i < bytes.count else { throw JSONError(message: "expected ']'", offset: i) }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return
            }
            throw JSONError(message: "expected ',' or ']'", offset: i)
        }
    }

    /// Reads past a string whose opening quote is at `i`, checking it as `parseString` does.
    mutating func skipString() throws(JSONError) {
        let open = i
        i += 1
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                i += 1
                return
            }
            if byte == UInt8(ascii: "\\") {
                var buffer = scratch
                scratch = []
                buffer.removeAll(keepingCapacity: true)
                try parseEscape(into: &buffer)
                scratch = buffer
                continue
            }
            if byte < 0x20 { throw JSONError(message: "control character in a string", offset: i) }
            i += 1
        }
        throw JSONError(message: "unterminated string", offset: open)
    }

    /// A number by the JSON grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = i
        var negative = false
        if bytes[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < bytes.count, isDigit(bytes[i]) else {
            throw JSONError(message: "invalid number: expected a digit after '-'", offset: start)
        }
        let intStart = i
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count && isDigit(bytes[i]) {
                throw JSONError(message: "invalid number: leading zero", offset: start)
            }
        } else {
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        let intEnd = i
        var isInteger = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else {
                throw JSONError(message: "invalid number: expected a digit after '.'", offset: start)
            }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else {
                throw JSONError(message: "invalid number: expected a digit in the exponent", offset: start)
            }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if isInteger && intEnd - intStart <= 19 {
            // Accumulate negatively so Int64.min fits.
            var value: Int64 = 0
            var fits = true
            for k in intStart..<intEnd {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(Int64(bytes[k] - UInt8(ascii: "0")))
                if o1 || o2 { fits = false; break }
                value = s
            }
            if fits {
                if negative { return .int(value) }
                if value != Int64.min { return .int(-value) }
            }
        }
        // One rule for numbers that would not survive being read (SPEC §7): too large for a
        // 64-bit float, so small that it would read as 0, or a whole number past 64 bits
        // (which would read as a float, no longer exact).
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger {
            throw JSONError(message: "number out of range: \(text) (a whole number must fit in 64 bits)", offset: start)
        }
        guard let double = Double(text), double.isFinite else {
            throw JSONError(message: "number out of range: \(text)", offset: start)
        }
        if double == 0 && hasNonZeroDigit(from: intStart) {
            throw JSONError(message: "number out of range: \(text) (too small for a 64-bit float, it would read as 0)", offset: start)
        }
        return .double(double)
    }

    /// Whether the digits of the number starting at `start`, before its exponent, are not all 0.
    private func hasNonZeroDigit(from start: Int) -> Bool {
        var k = start
        while k < bytes.count {
            let byte = bytes[k]
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return false }
            if byte != UInt8(ascii: "0") && byte != UInt8(ascii: ".") { return isDigit(byte) }
            k += 1
        }
        return false
    }

    @inline(__always) private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }
}

/// Four lowercase hex digits.
func hex4(_ value: UInt16) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(value >> 12 & 0xF)], digits[Int(value >> 8 & 0xF)],
                   digits[Int(value >> 4 & 0xF)], digits[Int(value & 0xF)]])
}

extension JSONValue {
    /// The keys of the JSON object `text` at its top level, in the order written (a `JSONValue`
    /// object keeps none); nil when `text` is not a JSON object. For what is shown in the order
    /// typed, as an HTTP message's header fields.
    public static func memberOrder(ofObject text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var reader = JSONReader(bytes)
            reader.skipWhitespace()
            guard reader.i < bytes.count, bytes[reader.i] == UInt8(ascii: "{") else { return nil }
            reader.i += 1
            var keys: [String] = []
            while true {
                reader.skipWhitespace()
                guard reader.i < bytes.count else { return nil }
                if bytes[reader.i] == UInt8(ascii: "}") { return keys }
                if bytes[reader.i] == UInt8(ascii: ",") { reader.i += 1; continue }
                guard bytes[reader.i] == UInt8(ascii: "\""), let key = try? reader.parseString() else { return nil }
                keys.append(key)
                reader.skipWhitespace()
                guard reader.i < bytes.count, bytes[reader.i] == UInt8(ascii: ":") else { return nil }
                reader.i += 1
                reader.skipWhitespace()
                guard (try? reader.skipValue(depth: 1)) != nil else { return nil }
            }
        }
    }
}
