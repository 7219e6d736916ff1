/// Finds where commands end in a stream of bytes without keeping them, by the lexer's rule
/// (``Lexer``, semicolons not separating): a command ends at a line feed unless a JSON object or
/// array is open; a quoted string and a `#` comment end at the line's end; brackets inside JSON
/// strings do not count. Used to run standard input command by command as it arrives.
///
/// After any bytes that end with a line feed, ``insideJSON`` equals
/// `Lexer.needsContinuation` of everything scanned since the last complete command; the state
/// between calls is a few bytes and the open brackets (at most ``Lexer/maxJSONDepth``).
public struct CommandScanner: Sendable {
    private enum State: Sendable {
        /// Before a word (or between words of a command).
        case between
        case bare
        case quoted, quotedEscape
        case comment
        case json, jsonString, jsonStringEscape
    }

    private var state = State.between
    /// Closing brackets the open JSON value expects, innermost last (up to the depth limit).
    private var closers: [UInt8] = []
    /// Nesting of the open JSON value, past the limit included.
    private var depth = 0

    public init() {}

    /// True when the bytes scanned so far end inside an open JSON value (its strings included):
    /// the command goes on on the next line.
    public var insideJSON: Bool {
        switch state {
        case .json, .jsonString, .jsonStringEscape: true
        default: false
        }
    }

    /// Scans `bytes` and returns the offset just past the last line feed in them at which a
    /// command is complete (no JSON value open), or nil when there is none.
    ///
    /// - Complexity: O(n) in the number of bytes.
    public mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var lastEnd: Int?
        for (i, byte) in bytes.enumerated() {
            switch state {
            case .between:
                switch byte {
                case .space, .tab, .carriageReturn: break
                case .lineFeed: lastEnd = i + 1
                case .hash: state = .comment
                case .quote: state = .quoted
                case .openBrace, .openBracket: open(byte)
                default: state = .bare
                }
            case .bare:
                switch byte {
                case .space, .tab, .carriageReturn: state = .between
                case .lineFeed: state = .between; lastEnd = i + 1
                default: break
                }
            case .comment:
                if byte == .lineFeed { state = .between; lastEnd = i + 1 }
            case .quoted, .jsonString:
                let inJSON = state == .jsonString
                switch byte {
                case .quote: state = inJSON ? .json : .between
                case .lineFeed:
                    // An unterminated string ends the command at its line (the lexer reports it).
                    state = .between
                    lastEnd = i + 1
                case .backslash: state = inJSON ? .jsonStringEscape : .quotedEscape
                default: break
                }
            case .quotedEscape, .jsonStringEscape:
                if byte == .lineFeed {
                    state = .between
                    lastEnd = i + 1
                } else {
                    state = state == .jsonStringEscape ? .jsonString : .quoted
                }
            case .json:
                switch byte {
                case .openBrace, .openBracket: open(byte)
                case .closeBrace, .closeBracket:
                    if depth <= Lexer.maxJSONDepth, let expected = closers.popLast(), expected != byte {
                        // A mismatched bracket ends the value (the lexer reports it).
                        state = .between
                        depth = 0
                        closers.removeAll(keepingCapacity: true)
                    } else {
                        depth -= 1
                        if depth == 0 { state = .between }
                    }
                case .quote: state = .jsonString
                default: break
                }
            }
        }
        return lastEnd
    }

    private mutating func open(_ bracket: UInt8) {
        if state != .json {
            state = .json
            depth = 0
            closers.removeAll(keepingCapacity: true)
        }
        depth += 1
        if depth <= Lexer.maxJSONDepth { closers.append(bracket == .openBrace ? .closeBrace : .closeBracket) }
    }
}

extension UInt8 {
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let hash = UInt8(ascii: "#")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let closeBracket = UInt8(ascii: "]")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")
}
