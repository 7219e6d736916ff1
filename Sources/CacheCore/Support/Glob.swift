/// A case-sensitive shell glob over printed keys: `*` (matches `:` too), `?`, `[abc]`, `[a-z]`, `[!x]`.
public struct Glob: Sendable, Equatable {
    public let pattern: String
    private let bytes: [UInt8]

    public init(_ pattern: String) {
        self.pattern = pattern
        self.bytes = Array(pattern.utf8)
    }

    /// Whether the pattern has no wildcard, so it names one key.
    public var isLiteral: Bool { !bytes.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") } }

    /// Whether `text` matches the whole pattern.
    /// - Complexity: O(m·n) in the worst case, with one backtrack point (classic greedy star matching).
    public func matches(_ text: String) -> Bool {
        match(Array(text.utf8))
    }

    private func match(_ text: [UInt8]) -> Bool {
        var p = 0, t = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < bytes.count {
                let c = bytes[p]
                if c == UInt8(ascii: "*") {
                    starP = p; starT = t; p += 1; continue
                }
                if c == UInt8(ascii: "?") { p += 1; t += 1; continue }
                if c == UInt8(ascii: "["), let (matched, next) = matchClass(at: p, byte: text[t]) {
                    if matched { p = next; t += 1; continue }
                } else if c == text[t] {
                    p += 1; t += 1; continue
                }
            }
            guard starP >= 0 else { return false }
            p = starP + 1; starT += 1; t = starT
        }
        while p < bytes.count && bytes[p] == UInt8(ascii: "*") { p += 1 }
        return p == bytes.count
    }

    /// Matches a bracket class starting at `start`; nil when the bracket is not closed (then `[` is literal).
    private func matchClass(at start: Int, byte: UInt8) -> (Bool, Int)? {
        var i = start + 1
        var negate = false
        if i < bytes.count && (bytes[i] == UInt8(ascii: "!") || bytes[i] == UInt8(ascii: "^")) { negate = true; i += 1 }
        var matched = false
        var first = true
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "]") && !first { return (matched != negate, i + 1) }
            first = false
            if i + 2 < bytes.count && bytes[i + 1] == UInt8(ascii: "-") && bytes[i + 2] != UInt8(ascii: "]") {
                if c <= byte && byte <= bytes[i + 2] { matched = true }
                i += 3
            } else {
                if c == byte { matched = true }
                i += 1
            }
        }
        return nil
    }
}
