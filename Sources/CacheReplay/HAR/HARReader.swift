import CacheCore
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bounds of reading a HAR file (SPEC §7.1). Tests make them small; `replay` uses `standard`.
public struct HARLimits: Sendable, Equatable {
    /// The largest HAR file read: 1 GiB, as for a snapshot `restore` (a log of 10,000 requests
    /// with 50 MB of bodies is some 70 MB).
    public static let maxFileBytes: Int64 = 1 << 30
    /// The most entries in one log: 1,000,000 (a day of a busy app's requests).
    public static let maxEntries = 1_000_000
    /// The most bytes of one entry's JSON text: 32 MiB, room for a body at `maxBodyBytes` in
    /// base64 (a third larger) with its headers. The reader holds one entry at a time, so this
    /// (with `chunkBytes`) bounds what it holds, whatever the number of entries.
    public static let maxEntryBytes = 32 << 20
    /// The largest body of one response, as text or decoded from base64: 16 MiB, a cached
    /// value's size limit.
    public static let maxBodyBytes = 16 << 20
    /// Entries out of time order are sorted within this many entries; an entry earlier than one
    /// released this many entries before it is refused (`HAROrdering`).
    public static let orderWindow = 1_024
    /// The bytes read from the file at a time.
    public static let chunkBytes = 64 << 10

    public var fileBytes: Int64
    public var entries: Int
    public var entryBytes: Int
    public var bodyBytes: Int
    public var window: Int
    public var chunk: Int

    public init(fileBytes: Int64 = HARLimits.maxFileBytes, entries: Int = HARLimits.maxEntries,
                entryBytes: Int = HARLimits.maxEntryBytes, bodyBytes: Int = HARLimits.maxBodyBytes,
                window: Int = HARLimits.orderWindow, chunk: Int = HARLimits.chunkBytes) {
        self.fileBytes = fileBytes; self.entries = entries; self.entryBytes = entryBytes
        self.bodyBytes = bodyBytes; self.window = window; self.chunk = max(chunk, 16)
    }

    public static let standard = HARLimits()
}

/// Why a HAR file cannot be replayed: one line, naming the entry and the JSON path
/// (`entries[12].response.status: expected a number`), or for the file's structure the byte
/// offset (`at byte 3: ...`).
public struct HARError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// The same error as `replay` reports it: `FILE: error: ...`.
    public func replayError(file: String) -> ReplayError { ReplayError(file: file, message) }
}

/// Reads a HAR file (HTTP Archive 1.2, JSON) as a stream: finds `log.entries` whatever the
/// order of the members around it, and returns its entries one at a time, each parsed by the
/// strict JSON parser from its own bytes. Everything else (`version`, `creator`, `pages`,
/// unknown members) is checked as JSON and skipped as it is read, never held.
///
/// The reader holds at most one entry's bytes and one chunk (`bufferBytes`), so its memory is
/// bounded by the largest entry, not by the number of entries.
public final class HARReader {
    public let limits: HARLimits
    private let fd: FileDescriptor
    private let ownsDescriptor: Bool
    private var buffer: UnsafeMutableRawBufferPointer
    private var bytes: UnsafeMutablePointer<UInt8> { buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) }
    /// The next byte to read, and the end of those read, in `buffer`.
    private var pos = 0
    private var end = 0
    /// The file offset of `buffer[0]`.
    private var base: Int64 = 0
    /// Where the entry being read starts in `buffer`: bytes from there are kept on refills.
    private var captureStart: Int?
    /// What is kept from `captureStart`, for the error when it passes `limits.entryBytes`.
    private var captured = ""
    private var atEOF = false

    /// The bytes the reader holds now, and the most it held.
    public var bufferBytes: Int { buffer.count }
    public private(set) var peakBufferBytes = 0
    /// The entries returned so far.
    public private(set) var count = 0

    private enum Phase { case start, top(first: Bool), log(first: Bool), entries(first: Bool), done }
    private var phase = Phase.start
    private var sawLog = false
    private var sawEntries = false
    /// The file offset of the `{` of `log`, for an error about what it lacks.
    private var logOffset: Int64 = 0
    /// The file offset of the last key `member` read.
    private var keyOffset: Int64 = 0

    /// Reads from `fileDescriptor`, which it does not close.
    public init(fileDescriptor: FileDescriptor, limits: HARLimits = .standard) {
        self.fd = fileDescriptor
        self.ownsDescriptor = false
        self.limits = limits
        buffer = .allocate(byteCount: limits.chunk, alignment: 8)
        peakBufferBytes = buffer.count
    }

    /// Opens `path`: a regular file no larger than `limits.fileBytes`.
    public init(path: String, limits: HARLimits = .standard) throws(HARError) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw HARError("cannot read: \(String(cString: strerror(errno)))") }
        if let problem = FileKind.notRegular(st) { throw HARError("cannot read: \(problem)") }
        if Int64(st.st_size) > limits.fileBytes { throw Self.tooLarge(limits) }
        let raw = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard raw >= 0 else { throw HARError("cannot read: \(String(cString: strerror(errno)))") }
        self.fd = FileDescriptor(rawValue: raw)
        self.ownsDescriptor = true
        self.limits = limits
        buffer = .allocate(byteCount: limits.chunk, alignment: 8)
        peakBufferBytes = buffer.count
    }

    deinit {
        if ownsDescriptor { try? fd.close() }
        buffer.deallocate()
    }

    private static func tooLarge(_ limits: HARLimits) -> HARError {
        HARError("larger than \(byteText(limits.fileBytes)), the most cachesh reads from a HAR file")
    }

    // MARK: Entries

    /// The next entry of `log.entries` (its index is `count - 1` after the call), parsed; nil
    /// after the last, once the rest of the file has been checked.
    public func next() throws(HARError) -> JSONValue? {
        while true {
            switch phase {
            case .start:
                try skipByteOrderMark()
                try skipWhitespace()
                guard let byte = try peek() else { throw structure("an empty file, not a HAR log (expected '{')") }
                guard byte == UInt8(ascii: "{") else {
                    throw structure("not a HAR log: expected '{' (a JSON object with \"log\"), found \(describe(byte))")
                }
                pos += 1
                phase = .top(first: true)
            case .top(let first):
                guard let key = try member(first: first, closing: "the top object") else {
                    if !sawLog { throw HARError("at byte \(offset - 1): not a HAR log: the top object has no \"log\"") }
                    try skipWhitespace()
                    if try peek() != nil { throw structure("unexpected \(describe(bytes[pos])) after the JSON value") }
                    phase = .done
                    continue
                }
                if key == "log" {
                    if sawLog { throw HARError("at byte \(keyOffset): duplicate key \"log\"") }
                    sawLog = true
                    try skipWhitespace()
                    guard try peek() == UInt8(ascii: "{") else { throw structure("log: expected an object") }
                    logOffset = offset
                    pos += 1
                    phase = .log(first: true)
                } else {
                    try skipValue(depth: 1)
                    phase = .top(first: false)
                }
            case .log(let first):
                guard let key = try member(first: first, closing: "log") else {
                    if !sawEntries {
                        throw HARError("at byte \(logOffset): log has no \"entries\" (a HAR log lists its requests in log.entries)")
                    }
                    phase = .top(first: false)
                    continue
                }
                if key == "entries" {
                    if sawEntries { throw HARError("at byte \(keyOffset): duplicate key \"entries\" in log") }
                    sawEntries = true
                    try skipWhitespace()
                    guard try peek() == UInt8(ascii: "[") else { throw structure("log.entries: expected an array") }
                    pos += 1
                    phase = .entries(first: true)
                } else {
                    try skipValue(depth: 2)
                    phase = .log(first: false)
                }
            case .entries(let first):
                try skipWhitespace()
                guard let byte = try peek() else { throw structure("unexpected end of the file in log.entries, expected ']' (a file cut short?)") }
                if byte == UInt8(ascii: "]") {
                    pos += 1
                    phase = .log(first: false)
                    continue
                }
                if !first {
                    guard byte == UInt8(ascii: ",") else { throw structure("unexpected \(describe(byte)) in log.entries, expected ',' or ']'") }
                    pos += 1
                    try skipWhitespace()
                }
                phase = .entries(first: false)
                return try entry()
            case .done:
                return nil
            }
        }
    }

    /// The next entry's bytes, checked, kept and parsed.
    private func entry() throws(HARError) -> JSONValue {
        let index = count
        guard index < limits.entries else {
            throw HARError("entries[\(index)]: more than \(limits.entries) entries, the most a HAR log may have")
        }
        guard let first = try peek() else { throw structure("unexpected end of the file in log.entries (a file cut short?)") }
        guard first == UInt8(ascii: "{") else {
            throw HARError("entries[\(index)]: expected an object, found \(describe(first)) (at byte \(offset))")
        }
        captureStart = pos
        captured = "entries[\(index)]"
        defer { captureStart = nil }
        do throws(HARError) {
            try skipValue(depth: 3)
        } catch {
            // A syntax error names the entry; a limit or a failed read is the file's.
            guard error.message.hasPrefix("at byte ") else { throw error }
            // Nesting too deep is its own place: no path of 512 steps.
            let path = error.message.contains("nested deeper") ? ""
                : Self.jsonPath(UnsafeBufferPointer(start: bytes + captureStart!, count: max(0, min(pos, end) - captureStart!)))
            throw HARError("entries[\(index)]\(path): \(error.message)")
        }
        let start = captureStart!
        // The buffer grows a chunk past the bound: an entry between the two is refused here.
        if pos - start > limits.entryBytes {
            throw HARError("\(captured): longer than \(byteText(Int64(limits.entryBytes))), the most one HAR entry may be")
        }
        let entryOffset = base + Int64(start)
        let text = UnsafeBufferPointer(start: bytes + start, count: pos - start)
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONValue(parsing: text)
        } catch {
            let path = error.message.contains("nested deeper") ? ""
                : Self.jsonPath(UnsafeBufferPointer(start: text.baseAddress, count: min(max(0, error.offset), text.count)))
            throw HARError(Self.entryError(error, index: index, path: path, fileOffset: entryOffset + Int64(error.offset)))
        }
        count += 1
        if buffer.count > 4 * limits.chunk && end - pos <= limits.chunk {
            // A large entry grew the buffer: give the memory back.
            let smaller = UnsafeMutableRawBufferPointer.allocate(byteCount: limits.chunk, alignment: 8)
            smaller.baseAddress!.copyMemory(from: buffer.baseAddress! + pos, byteCount: end - pos)
            buffer.deallocate()
            buffer = smaller
            base += Int64(pos)
            end -= pos
            pos = 0
        }
        return value
    }

    /// A strict parser's error in entry `index` as a line: a key given twice names its path.
    static func entryError(_ error: JSONError, index: Int, path: String = "", fileOffset: Int64) -> String {
        let prefix = "duplicate key "
        let message = Array(error.message.utf8)
        if error.message.hasPrefix(prefix),
           let at = (prefix.utf8.count..<max(prefix.utf8.count, message.count - 3)).last(where: { message[$0..<$0 + 4].elementsEqual(" at ".utf8) }) {
            let path = String(decoding: message[(at + 4)...], as: UTF8.self)
            let key = String(decoding: message[prefix.utf8.count..<at], as: UTF8.self)
            return "entries[\(index)]\(path == "the top" ? "" : "." + path): duplicate key \(key)"
        }
        return "entries[\(index)]\(path): \(error.message) (at byte \(fileOffset))"
    }

    /// The JSON path, inside an entry, of the value being read at the end of `text` (the entry's
    /// bytes up to a syntax error): `.response.headers[2].value`, or "" at the entry's own level.
    /// Bounded by the entry's bytes and nesting (the reader refused deeper ones before).
    static func jsonPath(_ text: UnsafeBufferPointer<UInt8>) -> String {
        enum Frame { case object(key: String?, afterColon: Bool), array(Int) }
        var stack: [Frame] = []
        var i = 0
        while i < text.count {
            let b = text[i]
            switch b {
            case UInt8(ascii: "{"): stack.append(.object(key: nil, afterColon: false))
            case UInt8(ascii: "["): stack.append(.array(0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !stack.isEmpty { stack.removeLast() }
            case UInt8(ascii: ","):
                switch stack.last {
                case .array(let n)?: stack[stack.count - 1] = .array(n + 1)
                case .object?: stack[stack.count - 1] = .object(key: nil, afterColon: false)
                case nil: break
                }
            case UInt8(ascii: ":"):
                if case .object(let key, _)? = stack.last { stack[stack.count - 1] = .object(key: key, afterColon: true) }
            case UInt8(ascii: "\""):
                var j = i + 1
                var bytes: [UInt8] = []
                while j < text.count, text[j] != UInt8(ascii: "\"") {
                    if text[j] == UInt8(ascii: "\\") { j += 1 }
                    if j < text.count { bytes.append(text[j]) }
                    j += 1
                }
                if case .object(nil, false)? = stack.last {
                    stack[stack.count - 1] = .object(key: String(decoding: bytes, as: UTF8.self), afterColon: false)
                }
                i = j
            default: break
            }
            i += 1
        }
        var path = ""
        // Each container's place in its parent, then the value read in the innermost.
        for (depth, frame) in stack.enumerated() {
            switch frame {
            case .object(let key?, let afterColon) where afterColon || depth < stack.count - 1:
                path += "." + key
            case .array(let n):
                path += "[\(n)]"
            default:
                break
            }
        }
        return path
    }

    // MARK: Structure

    /// The file offset of `pos`.
    private var offset: Int64 { base + Int64(pos) }

    private func structure(_ message: String) -> HARError {
        HARError("at byte \(offset): \(message)")
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// The next member's key of an object whose `{` (or previous member) was read; nil at its `}`.
    private func member(first: Bool, closing what: String) throws(HARError) -> String? {
        try skipWhitespace()
        guard let byte = try peek() else { throw structure("unexpected end of the file in \(what), expected '}' (a file cut short?)") }
        if byte == UInt8(ascii: "}") {
            pos += 1
            return nil
        }
        if !first {
            guard byte == UInt8(ascii: ",") else { throw structure("unexpected \(describe(byte)) in \(what), expected ',' or '}'") }
            pos += 1
            try skipWhitespace()
        }
        guard try peek() == UInt8(ascii: "\"") else { throw structure("expected a string key in \(what)") }
        // Kept only to compare with "log" and "entries": a key is held while it is read.
        keyOffset = offset
        captureStart = pos
        captured = "a key in \(what)"
        try skipString()
        let keyBytes = UnsafeBufferPointer(start: bytes + captureStart! + 1, count: pos - captureStart! - 2)
        let key = keyBytes.count <= 16 ? String(decoding: keyBytes, as: UTF8.self) : ""
        captureStart = nil
        try skipWhitespace()
        guard try peek() == UInt8(ascii: ":") else { throw structure("expected ':' after a key in \(what)") }
        pos += 1
        return key
    }

    // MARK: Reading

    /// The byte at `pos`, reading more when needed; nil at the end of the file.
    @inline(__always)
    private func peek() throws(HARError) -> UInt8? {
        if pos < end { return bytes[pos] }
        return try refill() ? bytes[pos] : nil
    }

    /// Reads more bytes after `end`, first moving what is kept (from `captureStart`, else from
    /// `pos`) to the front, growing the buffer when an entry fills it; false at the end of the file.
    private func refill() throws(HARError) -> Bool {
        if atEOF { return false }
        let keep = captureStart ?? pos
        if keep > 0 {
            let n = end - keep
            if n > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + keep, byteCount: n) }
            base += Int64(keep)
            pos -= keep
            end -= keep
            if captureStart != nil { captureStart = 0 }
        }
        if end == buffer.count {
            // Only an entry (or a key) being kept fills the buffer.
            if end >= limits.entryBytes {
                throw HARError("\(captured): longer than \(byteText(Int64(limits.entryBytes))), the most one HAR entry may be")
            }
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: min(buffer.count * 2, limits.entryBytes + limits.chunk), alignment: 8)
            larger.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: end)
            buffer.deallocate()
            buffer = larger
            peakBufferBytes = max(peakBufferBytes, buffer.count)
        }
        let n: Int
        do {
            n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end..<min(buffer.count, end + limits.chunk)]))
        } catch {
            throw HARError("cannot read: \(String(cString: strerror((error as? Errno)?.rawValue ?? EIO)))")
        }
        if n == 0 {
            atEOF = true
            return false
        }
        end += n
        if base + Int64(end) > limits.fileBytes { throw Self.tooLarge(limits) }
        return true
    }

    private func skipWhitespace() throws(HARError) {
        while true {
            while pos < end {
                switch bytes[pos] {
                case 0x20, 0x0A, 0x0D, 0x09: pos += 1
                default: return
                }
            }
            guard try refill() else { return }
        }
    }

    /// Reads past a UTF-8 byte order mark at the start, which some exporters write.
    private func skipByteOrderMark() throws(HARError) {
        while end - pos < 3, try refill() {}
        if end - pos >= 3, bytes[pos] == 0xEF, bytes[pos + 1] == 0xBB, bytes[pos + 2] == 0xBF { pos += 3 }
    }

    /// Reads past one JSON value nested `depth` levels in the file, checking it by the grammar
    /// the strict parser reads (RFC 8259): keeps nothing but what `captureStart` asks kept.
    private func skipValue(depth: Int) throws(HARError) {
        try skipWhitespace()
        guard let byte = try peek() else { throw structure("unexpected end of the file, expected a value (a file cut short?)") }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < JSONValue.documentDepth else { throw structure("JSON nested deeper than \(JSONValue.documentDepth) levels") }
            let object = byte == UInt8(ascii: "{")
            let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
            pos += 1
            try skipWhitespace()
            if try peek() == close {
                pos += 1
                return
            }
            while true {
                if object {
                    try skipWhitespace()
                    guard try peek() == UInt8(ascii: "\"") else { throw structure(unexpected("a string key")) }
                    try skipString()
                    try skipWhitespace()
                    guard try peek() == UInt8(ascii: ":") else { throw structure(unexpected("':' after an object key")) }
                    pos += 1
                }
                try skipValue(depth: depth + 1)
                try skipWhitespace()
                guard let next = try peek() else { throw structure("unexpected end of the file, expected '\(Character(Unicode.Scalar(close)))' (a file cut short?)") }
                pos += 1
                if next == close { return }
                guard next == UInt8(ascii: ",") else {
                    pos -= 1
                    throw structure(unexpected("',' or '\(Character(Unicode.Scalar(close)))'"))
                }
            }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try skipNumber()
        case UInt8(ascii: "t"): try skipWord("true")
        case UInt8(ascii: "f"): try skipWord("false")
        case UInt8(ascii: "n"): try skipWord("null")
        default:
            throw structure(unexpected("a JSON value"))
        }
    }

    private func unexpected(_ expected: String) -> String {
        pos < end ? "unexpected \(describe(bytes[pos])), expected \(expected)" : "unexpected end of the file, expected \(expected)"
    }

    private func skipWord(_ word: StaticString) throws(HARError) {
        let start = offset
        for k in 0..<word.utf8CodeUnitCount {
            guard try peek() == word.utf8Start[k] else { throw HARError("at byte \(start): \(unexpected("a JSON value"))") }
            pos += 1
        }
    }

    /// Reads past a string whose `"` is at `pos`: no control characters, escapes as JSON has them.
    private func skipString() throws(HARError) {
        let open = offset
        pos += 1
        while true {
            // Eight bytes at a time while none is a quote, a backslash or a control character.
            while end - pos >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(bytes + pos).loadUnaligned(as: UInt64.self))
                if Self.hasSpecialByte(word) { break }
                pos += 8
            }
            while pos < end {
                let byte = bytes[pos]
                if byte == UInt8(ascii: "\"") {
                    pos += 1
                    return
                }
                if byte == UInt8(ascii: "\\") {
                    guard pos + 6 <= end || atEOF else { break }  // the escape whole in the buffer
                    guard pos + 1 < end else { throw HARError("at byte \(open): unterminated string (a file cut short?)") }
                    switch bytes[pos + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        pos += 2
                    case UInt8(ascii: "u"):
                        guard pos + 6 <= end, (2..<6).allSatisfy({ isHex(bytes[pos + $0]) }) else {
                            throw structure("invalid \\u escape (needs 4 hex digits)")
                        }
                        pos += 6
                    default:
                        throw structure("invalid escape in a string")
                    }
                    continue
                }
                if byte < 0x20 { throw structure("control character in a string") }
                pos += 1
            }
            guard try refill() else { throw HARError("at byte \(open): unterminated string (a file cut short?)") }
        }
    }

    /// Whether one of the eight bytes of `word` is `"`, `\\` or below 0x20 (bytes of 0x80 and
    /// above, as in UTF-8, are none of these).
    @inline(__always)
    private static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let control = (word &- ones &* 0x20) & ~word & high
        return (control | zeroByte(word ^ (ones &* 0x22)) | zeroByte(word ^ (ones &* 0x5C))) != 0
    }

    private func isHex(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
    }

    /// A number by the JSON grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    /// (its range is the parser's to check, for an entry).
    private func skipNumber() throws(HARError) {
        let start = offset
        func digit() throws(HARError) -> Bool {
            guard let b = try peek(), b >= 0x30, b <= 0x39 else { return false }
            return true
        }
        func digits(_ what: String) throws(HARError) {
            guard try digit() else { throw HARError("at byte \(start): invalid number: expected a digit \(what)") }
            while try digit() { pos += 1 }
        }
        if try peek() == UInt8(ascii: "-") { pos += 1 }
        if try peek() == UInt8(ascii: "0") {
            pos += 1
            if try digit() { throw HARError("at byte \(start): invalid number: leading zero") }
        } else {
            try digits("after '-'")
        }
        if try peek() == UInt8(ascii: ".") {
            pos += 1
            try digits("after '.'")
        }
        if let e = try peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            pos += 1
            if let sign = try peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { pos += 1 }
            try digits("in the exponent")
        }
    }
}

/// `n` bytes as a limit reads: `16 MiB`, `1 GiB`, else the count.
func byteText(_ n: Int64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 { return "\(n >> 30) GiB" }
    if n >= 1 << 20 && n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
    if n >= 1 << 10 && n % (1 << 10) == 0 { return "\(n >> 10) KiB" }
    return "\(n) bytes"
}
