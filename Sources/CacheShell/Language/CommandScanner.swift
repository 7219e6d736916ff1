/// Finds where commands end in a stream of bytes without keeping them, by the lexer's rule
/// (``Lexer``, semicolons not separating): a command ends at a line feed unless a JSON object or
/// array that may span lines (``CommandCatalog/mayContinueJSON(after:)``) is open; a quoted
/// string, a `#` comment and brackets elsewhere end at the line's end; brackets inside JSON
/// strings do not count. Used to run standard input command by command as it arrives.
///
/// After any bytes that end with a line feed, ``insideJSON`` equals
/// `Lexer.needsContinuation` of everything scanned since the last complete command; the state
/// between calls is a few bytes, the open brackets (at most ``Lexer/maxJSONDepth``) and the
/// command's first words as the lexer keeps them (``PrecedingWord``).
public struct CommandScanner: Sendable {
    private enum State: Sendable {
        /// Before a word (or between words of a command).
        case between
        case bare
        /// Just after a `#` that does not start the command: a comment if a blank follows.
        case hash
        case quoted, quotedEscape
        case comment
        case json, jsonString, jsonStringEscape
    }

    private var state = State.between
    /// Closing brackets the open JSON value expects, innermost last (up to the depth limit).
    private var closers: [UInt8] = []
    /// Nesting of the open JSON value, past the limit included.
    private var depth = 0
    /// The open JSON value may span lines.
    private var acrossLines = true
    /// The command's words so far, as the lexer records them.
    private var preceding: [PrecedingWord] = []
    /// The word being scanned: its first bytes, and whether it is (so far) a bare word.
    private var word = WordHead()
    private var wordIsBare = false

    public init() {}

    /// True when the bytes scanned so far end inside an open JSON value (its strings included):
    /// the command goes on on the next line.
    public var insideJSON: Bool {
        switch state {
        case .json, .jsonString, .jsonStringEscape: acrossLines
        default: false
        }
    }

    /// Scans `bytes` and returns the offset just past the last line feed in them at which a
    /// command is complete (no JSON value open), or nil when there is none.
    ///
    /// - Complexity: O(n) in the number of bytes.
    public mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var lastEnd: Int?
        let n = bytes.count
        var i = 0
        while i < n {
            let byte = bytes[i]
            defer { i += 1 }
            switch state {
            case .between:
                switch byte {
                case .space, .tab, .carriageReturn: break
                case .lineFeed: endCommand(); lastEnd = i + 1
                case .hash where preceding.isEmpty: state = .comment
                case .hash: state = .hash
                case .quote: startWord(bare: false); state = .quoted
                case .openBrace, .openBracket:
                    startWord(bare: false)
                    acrossLines = CommandCatalog.mayContinueJSON(after: preceding)
                    open(byte)
                default: startWord(bare: true); keep(byte); state = .bare
                }
            case .hash:
                switch byte {
                case .space, .tab, .carriageReturn: state = .comment
                case .lineFeed: state = .between; endCommand(); lastEnd = i + 1
                default: startWord(bare: true); keep(.hash); keep(byte); state = .bare
                }
            case .bare:
                switch byte {
                case .space, .tab, .carriageReturn: endWord(); state = .between
                case .lineFeed: endWord(); state = .between; endCommand(); lastEnd = i + 1
                default:
                    // (After balanced brackets where no JSON value is taken, text makes the word bare.)
                    wordIsBare = true
                    // The rest of the word at once, up to a blank or the line's end.
                    var end = i + 1
                    while end < n && !Self.endsBare(bytes[end]) { end += 1 }
                    keep(bytes, i..<end)
                    i = end - 1
                }
            case .comment:
                if byte == .lineFeed {
                    state = .between; endCommand(); lastEnd = i + 1
                } else if let lineFeed = UnsafeBufferPointer(rebasing: bytes[i...]).firstIndex(of: .lineFeed) {
                    i += lineFeed - 1
                } else {
                    i = n - 1
                }
            case .quoted, .jsonString:
                let inJSON = state == .jsonString
                if !Self.endsString(byte) {
                    // Plain text of the string at once, up to a quote, a backslash or the line's end.
                    var end = i + 1
                    while end < n && !Self.endsString(bytes[end]) { end += 1 }
                    if inJSON { keep(bytes, i..<end) }
                    i = end - 1
                    continue
                }
                switch byte {
                case .quote:
                    if inJSON { state = .json } else { endWord(); state = .between }
                case .lineFeed:
                    // An unterminated string ends the command at its line (the lexer reports it).
                    state = .between
                    endCommand()
                    lastEnd = i + 1
                case .backslash: state = inJSON ? .jsonStringEscape : .quotedEscape
                default: break
                }
                if inJSON { keep(byte) }
            case .quotedEscape, .jsonStringEscape:
                if byte == .lineFeed {
                    state = .between
                    endCommand()
                    lastEnd = i + 1
                } else {
                    if state == .jsonStringEscape { keep(byte) }
                    state = state == .jsonStringEscape ? .jsonString : .quoted
                }
            case .json:
                if !Self.isJSONStructure(byte) {
                    // Bytes between brackets and strings at once.
                    var end = i + 1
                    while end < n && !Self.isJSONStructure(bytes[end]) { end += 1 }
                    keep(bytes, i..<end)
                    i = end - 1
                    continue
                }
                keep(byte)
                switch byte {
                case .openBrace, .openBracket: open(byte)
                case .closeBrace, .closeBracket:
                    if depth <= Lexer.maxJSONDepth, let expected = closers.popLast(), expected != byte {
                        // A mismatched bracket ends the value (the lexer reports it).
                        state = .between
                        depth = 0
                        closers.removeAll(keepingCapacity: true)
                        wordIsBare = false
                        endWord()
                    } else {
                        depth -= 1
                        if depth == 0 {
                            if acrossLines {
                                endWord()
                                state = .between
                            } else {
                                // Text right after it makes one bare word (`[fg]*`).
                                state = .bare
                                wordIsBare = false
                            }
                        }
                    }
                case .quote: state = .jsonString
                case .lineFeed where !acrossLines:
                    // Brackets that may not span lines end at the line (the lexer reports them).
                    state = .between
                    depth = 0
                    closers.removeAll(keepingCapacity: true)
                    endCommand()
                    lastEnd = i + 1
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
            keep(bracket)
        }
        depth += 1
        if depth <= Lexer.maxJSONDepth { closers.append(bracket == .openBrace ? .closeBrace : .closeBracket) }
    }

    private mutating func startWord(bare: Bool) {
        word.count = 0
        wordIsBare = bare
    }

    @inline(__always)
    private static func endsBare(_ byte: UInt8) -> Bool {
        byte == .space || byte == .tab || byte == .carriageReturn || byte == .lineFeed
    }

    @inline(__always)
    private static func endsString(_ byte: UInt8) -> Bool {
        byte == .quote || byte == .backslash || byte == .lineFeed
    }

    /// A byte the `.json` state acts on: a bracket, a quote or a line feed.
    @inline(__always)
    private static func isJSONStructure(_ byte: UInt8) -> Bool {
        switch byte {
        case .openBrace, .openBracket, .closeBrace, .closeBracket, .quote, .lineFeed: true
        default: false
        }
    }

    /// Keeps `bytes[range]` of the word, up to as many as the lexer keeps.
    private mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        word.append(UnsafeBufferPointer(rebasing: bytes[range]))
    }

    /// Keeps a byte of the word, up to as many as the lexer keeps.
    private mutating func keep(_ byte: UInt8) {
        word.append(byte)
    }

    /// The word ends: a bare word keeps its text, as the lexer does.
    private mutating func endWord() {
        if preceding.count < PrecedingWord.maxWords {
            preceding.append(wordIsBare ? word.withBytes { PrecedingWord(bare: $0) } : .notBare)
        }
        word.count = 0
    }

    private mutating func endCommand() {
        preceding.removeAll(keepingCapacity: true)
        word.count = 0
    }
}

/// The first ``PrecedingWord/maxBytes`` bytes of a word, held inline: keeping them allocates nothing.
private struct WordHead {
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// How many bytes are kept.
    var count = 0

    init() { assert(MemoryLayout.size(ofValue: storage) == PrecedingWord.maxBytes) }

    /// Keeps `byte` while there is room.
    mutating func append(_ byte: UInt8) {
        guard count < PrecedingWord.maxBytes else { return }
        let at = count
        withUnsafeMutableBytes(of: &storage) { $0[at] = byte }
        count += 1
    }

    /// Keeps as many of `bytes` as there is room for.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        let n = min(bytes.count, PrecedingWord.maxBytes - count)
        guard n > 0, let source = bytes.baseAddress else { return }
        let at = count
        withUnsafeMutableBytes(of: &storage) { ($0.baseAddress! + at).copyMemory(from: source, byteCount: n) }
        count += n
    }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeBytes(of: storage) { body(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)) }
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
