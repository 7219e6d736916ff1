import CacheCore
import NIOCore

/// How the proxy keeps a body: text when it is UTF-8 (every tool that shows values shows it),
/// else `{"base64": TEXT}` as a JSON body, so the bytes can be served again (a binary body of
/// `HTTPBody` keeps only its size and digest).
enum ProxyBody {
    static func value(_ bytes: [UInt8]) -> HTTPBody {
        if let text = String(validating: bytes, as: UTF8.self) { return .text(text) }
        return .json(json(bytes))
    }

    /// The bytes sent for a stored body (text copied once, straight into the buffer).
    static func buffer(_ body: HTTPBody?) -> ByteBuffer {
        switch body {
        case .text(let text)?: return ByteBuffer(string: text)
        case .json(let value)?: return ByteBuffer(bytes: bytes(json: value))
        case .binary?, nil: return ByteBuffer()
        }
    }

    /// A request's body (the engine keeps those as JSON): a JSON string when it is UTF-8 text,
    /// else `{"base64": TEXT}`.
    static func json(_ bytes: [UInt8]) -> JSONValue {
        if let text = String(validating: bytes, as: UTF8.self) { return .string(text) }
        return .object(["base64": .string(Base64.encode(bytes))])
    }

    /// The bytes of a body kept by `json`.
    static func bytes(json value: JSONValue?) -> [UInt8] {
        switch value {
        case .string(let text)?: return Array(text.utf8)
        case .object(let o)?:
            if case .string(let text)? = o["base64"], let bytes = Base64.decode(text) { return bytes }
            return Array(JSONValue.object(o).compactText.utf8)
        case nil, .null?: return []
        case let other?: return Array(other.compactText.utf8)
        }
    }
}

/// Standard base64 (RFC 4648 §4), with padding.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i]), b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        var table = [Int16](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int16(i) }
        var out: [UInt8] = []
        var buffer: UInt32 = 0, bits = 0
        for c in text.utf8 {
            if c == UInt8(ascii: "=") { break }
            let v = table[Int(c)]
            guard v >= 0 else { return nil }
            buffer = buffer << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xff))
            }
        }
        return out
    }
}
