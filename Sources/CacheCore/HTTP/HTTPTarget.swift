/// The request target an HTTP cache keys a response by: a path and its query (RFC 9110 §7.1's
/// origin-form), normalized as RFC 3986 §6.2.2 says equivalent URIs are, so that `/a/./b`,
/// `/a/b` and `/%61/b` are one key.
public enum HTTPTarget {
    /// Why a text is not a target.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// `text` normalized: the fragment dropped; percent-encodings of unreserved characters
    /// decoded and the others' hex digits in upper case; every other byte a URI cannot hold as it
    /// is (spaces, controls, non-ASCII UTF-8, a `%` not followed by two hex digits) percent-encoded;
    /// the dot segments of the path removed (§5.2.4). The query is kept in its order: `?a=1&b=2`
    /// and `?b=2&a=1` are different keys, as they are to every HTTP cache.
    /// - Throws: when `text` does not start with `/` (a path), or holds `//` at its start (which
    ///   would name a host).
    /// - Complexity: O(n).
    public static func normalized(_ text: String) throws(Invalid) -> String {
        var bytes = Array(text.utf8)
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { bytes.removeSubrange(hash...) }
        guard bytes.first == UInt8(ascii: "/") else {
            throw Invalid(description: "an HTTP key is a path with its query, starting with / (as /feed?page=2)")
        }
        guard bytes.count < 2 || bytes[1] != UInt8(ascii: "/") else {
            throw Invalid(description: "an HTTP key starting with // names a host; give the path alone")
        }
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        let path = removingDotSegments(encoded(bytes[..<queryStart], inQuery: false))
        let query = queryStart < bytes.endIndex ? "?" + encoded(bytes[(queryStart + 1)...], inQuery: true) : ""
        return path + query
    }

    /// Whether `normalized(text)` would be `text` itself, told without making anything: a path
    /// of characters allowed as they are, no `%`, no fragment and no segment starting with a dot
    /// (which might be a dot segment); false is only "perhaps not".
    /// - Complexity: O(n).
    public static func isNormalized(_ text: Substring) -> Bool {
        let bytes = text.utf8
        guard bytes.first == UInt8(ascii: "/") else { return false }
        var inQuery = false
        var previous: UInt8 = 0
        for b in bytes {
            if b == UInt8(ascii: "?") && !inQuery {
                inQuery = true
            } else if !isAllowedAsIs(b, inQuery: inQuery) {
                return false
            } else if !inQuery && previous == UInt8(ascii: "/") && (b == UInt8(ascii: ".") || b == UInt8(ascii: "/")) {
                // A dot segment perhaps, or `//` (refused at the start: it would name a host).
                return false
            }
            previous = b
        }
        return true
    }

    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~")
    }

    /// sub-delims, `:` and `@` (a pchar's others), `/`, and `?` in a query.
    private static func isAllowedAsIs(_ b: UInt8, inQuery: Bool) -> Bool {
        if isUnreserved(b) { return true }
        switch b {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            return true
        case UInt8(ascii: "?"):
            return inQuery
        default:
            return false
        }
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func encoded(_ bytes: ArraySlice<UInt8>, inQuery: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "%"), i + 2 < bytes.endIndex,
               let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    out.append(decoded)
                } else {
                    out += [UInt8(ascii: "%"), hexDigits[Int(high)], hexDigits[Int(low)]]
                }
                i += 3
                continue
            }
            if isAllowedAsIs(b, inQuery: inQuery) {
                out.append(b)
            } else {
                out += [UInt8(ascii: "%"), hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]]
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4 on an absolute path (starting with `/`).
    private static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (i, segment) in segments.enumerated() {
            let last = i == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}
