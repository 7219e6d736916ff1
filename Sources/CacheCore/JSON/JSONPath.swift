/// Where in a JSON text a byte is, as a path (`entries[0].seq`), for errors that name a member:
/// worked out again from the text only when such an error is made, so reading keeps no path.
enum JSONPath {
    /// The offset of the `occurrence`-th member named `key` of the object whose `{` is at `open`.
    static func offsetOfKey(_ key: String, occurrence: Int, inObjectAt open: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var r = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
        r.i = open + 1
        var seen = 0
        while r.i < bytes.count {
            r.skipWhitespace()
            let start = r.i
            guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: "\""), let name = try? r.parseString() else { return open }
            if name == key {
                seen += 1
                if seen == occurrence { return start }
            }
            r.skipWhitespace()
            guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: ":") else { return open }
            r.i += 1
            guard (try? r.skipValue(depth: 0)) != nil else { return open }
            r.skipWhitespace()
            guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: ",") else { return open }
            r.i += 1
        }
        return open
    }

    /// The path of the member or element that holds the byte at `offset` (empty at the top),
    /// for a member's key: the path of its object, then `.key`.
    static func path(to offset: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> String {
        enum Level { case object(key: String?), array(index: Int) }
        var levels: [Level] = []
        var lastString: String?
        var i = 0
        while i < min(offset, bytes.count) {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                var r = JSONReader(bytes)
                r.i = i
                guard let s = try? r.parseString() else { return render(levels) }
                lastString = s
                i = r.i
                continue
            case UInt8(ascii: "{"): levels.append(.object(key: nil))
            case UInt8(ascii: "["): levels.append(.array(index: 0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !levels.isEmpty { levels.removeLast() }
            case UInt8(ascii: ":"):
                if case .object? = levels.last { levels[levels.count - 1] = .object(key: lastString) }
            case UInt8(ascii: ","):
                switch levels.last {
                case .array(let n)?: levels[levels.count - 1] = .array(index: n + 1)
                case .object?: levels[levels.count - 1] = .object(key: nil)
                case nil: break
                }
            default: break
            }
            i += 1
        }
        // At a key: the path of its object then the key itself.
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "\""), case .object? = levels.last {
            var r = JSONReader(bytes)
            r.i = offset
            if let key = try? r.parseString() { levels[levels.count - 1] = .object(key: key) }
        }
        return render(levels)

        func render(_ levels: [Level]) -> String {
            var text = ""
            for level in levels {
                switch level {
                case .object(let key?): text += text.isEmpty ? key : "." + key
                case .object(nil): break
                case .array(let n): text += "[\(n)]"
                }
            }
            return text.isEmpty ? "the top" : text
        }
    }
}
