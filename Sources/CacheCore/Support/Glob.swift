/// A case-sensitive shell glob over printed keys: `*` (matches `:` too), `?`, `[abc]`, `[a-z]`, `[!x]`.
///
/// The pattern is compiled once into tokens (each bracket class into a 256-bit set), so matching
/// never rescans a class: a key of n bytes against a pattern of m bytes takes at most O(n·m) steps.
/// Patterns longer than ``maxLength`` bytes are refused by the commands that take them.
public struct Glob: Sendable, Equatable {
    /// The longest pattern, in UTF-8 bytes, that `keys` accepts: with keys of any length the cost
    /// of one match stays within O(key × 1024).
    public static let maxLength = 1024

    public let pattern: String
    private let tokens: [Token]

    /// One step of a compiled pattern.
    private enum Token: Sendable, Equatable {
        case star
        case any
        case byte(UInt8)
        /// A bracket class, negation applied: bit b of word b / 64 says whether byte b belongs.
        case set(UInt64, UInt64, UInt64, UInt64)

        func accepts(_ byte: UInt8) -> Bool {
            switch self {
            case .star, .any: return true
            case .byte(let b): return b == byte
            case .set(let w0, let w1, let w2, let w3):
                let word: UInt64
                switch byte >> 6 {
                case 0: word = w0
                case 1: word = w1
                case 2: word = w2
                default: word = w3
                }
                return word & (UInt64(1) << UInt64(byte & 63)) != 0
            }
        }
    }

    public init(_ pattern: String) {
        self.pattern = pattern
        self.tokens = Self.compile(Array(pattern.utf8))
    }

    public static func == (a: Glob, b: Glob) -> Bool { a.pattern == b.pattern }

    /// Whether the pattern has no wildcard, so it names one key.
    public var isLiteral: Bool {
        !pattern.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") }
    }

    /// Whether `text` matches the whole pattern.
    /// - Complexity: O(n·m) in the lengths of the text and the pattern (greedy star matching with
    ///   one backtrack point; each token is O(1)).
    public func matches(_ text: String) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable({ match($0) }) { return result }
        return Array(text.utf8).withUnsafeBufferPointer { match($0) }
    }

    private func match(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var p = 0, t = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < tokens.count {
                let token = tokens[p]
                if token == .star {
                    starP = p; starT = t; p += 1; continue
                }
                if token.accepts(text[t]) { p += 1; t += 1; continue }
            }
            guard starP >= 0 else { return false }
            p = starP + 1; starT += 1; t = starT
        }
        while p < tokens.count && tokens[p] == .star { p += 1 }
        return p == tokens.count
    }

    /// The tokens of a pattern. A `[` without a closing `]` is a literal `[`.
    /// - Complexity: O(m) in the length of the pattern.
    private static func compile(_ bytes: [UInt8]) -> [Token] {
        var tokens: [Token] = []
        // Where the next `]` at or after each index is, so an unclosed `[` costs O(1).
        var nextClose = [Int](repeating: bytes.count, count: bytes.count + 1)
        for i in stride(from: bytes.count - 1, through: 0, by: -1) {
            nextClose[i] = bytes[i] == UInt8(ascii: "]") ? i : nextClose[i + 1]
        }
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            switch c {
            case UInt8(ascii: "*"):
                // Consecutive stars match what one does.
                if tokens.last != .star { tokens.append(.star) }
                i += 1
            case UInt8(ascii: "?"):
                tokens.append(.any)
                i += 1
            case UInt8(ascii: "["):
                if let (token, next) = compileClass(bytes, at: i, nextClose: nextClose) {
                    tokens.append(token)
                    i = next
                } else {
                    tokens.append(.byte(c))
                    i += 1
                }
            default:
                tokens.append(.byte(c))
                i += 1
            }
        }
        return tokens
    }

    /// The class starting at `start` and the index after it; nil when it is not closed.
    /// A `]` right after `[` (or `[!`) is a member; `a-z` is a range unless `-` is last.
    private static func compileClass(_ bytes: [UInt8], at start: Int, nextClose: [Int]) -> (Token, Int)? {
        var i = start + 1
        var negate = false
        if i < bytes.count && (bytes[i] == UInt8(ascii: "!") || bytes[i] == UInt8(ascii: "^")) { negate = true; i += 1 }
        // The closing `]` is the first one after the first member.
        guard i < bytes.count, nextClose[i + 1] < bytes.count else { return nil }
        let close = nextClose[i + 1]
        var words: [UInt64] = [0, 0, 0, 0]
        func add(_ byte: UInt8) { words[Int(byte >> 6)] |= UInt64(1) << UInt64(byte & 63) }
        while i < close {
            let c = bytes[i]
            if i + 2 < bytes.count && bytes[i + 1] == UInt8(ascii: "-") && bytes[i + 2] != UInt8(ascii: "]") && i + 2 < close {
                if c <= bytes[i + 2] { for b in c...bytes[i + 2] { add(b) } }
                i += 3
            } else {
                add(c)
                i += 1
            }
        }
        if negate { words = words.map { ~$0 } }
        return (.set(words[0], words[1], words[2], words[3]), close + 1)
    }
}
