import CacheCore
/// One word of a command, with where it came from.
///
/// A lexed word keeps its bytes as a range of the source's bytes (shared, not copied): its
/// ``text`` is only built as a `String` when asked for, and the hot paths (a key, a JSON value, a
/// command name) read ``withUTF8(_:)`` instead.
public struct Word: Sendable, Equatable {
    /// How a word was written, which decides what ``Word/text`` holds.
    public enum Kind: Sendable, Equatable {
        /// Plain text up to whitespace; `text` is that text.
        case bare
        /// A JSON string such as `"two words"`; `text` is its decoded content.
        case quoted
        /// A JSON object or array; `text` is its raw source, brackets included.
        case json
    }

    /// The bytes `range` indexes (the whole source); empty when `decoded` holds the text.
    private var bytes: [UInt8]
    private var range: Range<Int>
    /// The text when it is not a plain range of the source (a quoted word with escapes, a word
    /// made by a command), with `isDecoded`. (Not an optional: copying a word stays cheap.)
    private var decoded: String
    private var isDecoded: Bool

    /// The word's text: see ``Kind``.
    public var text: String {
        get {
            if isDecoded { return decoded }
            return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
        }
        set {
            decoded = newValue
            isDecoded = true
            bytes = []
            range = 0..<0
        }
    }
    public var kind: Kind
    /// The bytes of its text or of its source, whichever is more (an upper bound on both).
    public var byteCount: Int { max(end - offset, isDecoded ? decoded.utf8.count : range.count) }
    /// Byte offset of the word's first byte in the source.
    public var offset: Int
    /// Byte offset just past the word's last byte (closing quote or bracket included).
    public var end: Int

    public init(text: String, kind: Kind, offset: Int, end: Int) {
        self.bytes = []
        self.range = 0..<0
        self.decoded = text
        self.isDecoded = true
        self.kind = kind
        self.offset = offset
        self.end = end
    }

    /// A word whose text is `bytes[range]`, held without a copy.
    init(bytes: [UInt8], range: Range<Int>, kind: Kind, offset: Int, end: Int) {
        self.bytes = bytes
        self.range = range
        self.decoded = ""
        self.isDecoded = false
        self.kind = kind
        self.offset = offset
        self.end = end
    }

    /// Calls `body` with the UTF-8 bytes of ``text``, without building it.
    @inline(__always)
    public func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if isDecoded {
            var decoded = decoded
            return try decoded.withUTF8(body)
        }
        return try bytes.withUnsafeBufferPointer { all in try body(UnsafeBufferPointer(rebasing: all[range])) }
    }

    /// Whether ``text`` is exactly `literal` (compared as bytes).
    @inline(__always)
    public func textEquals(_ literal: StaticString) -> Bool {
        withUTF8 { text in
            text.count == literal.utf8CodeUnitCount
                && text.elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }
    }

    public static func == (a: Word, b: Word) -> Bool {
        a.kind == b.kind && a.offset == b.offset && a.end == b.end
            && a.withUTF8 { x in b.withUTF8 { y in x.elementsEqual(y) } }
    }

    /// Name and value of a bare `name=value` word whose name matches `[a-z][a-z0-9-]*`.
    ///
    /// The value may be empty (`ttl=`), so the command can say what is missing.
    /// - Complexity: O(n) in the length of the name.
    public var option: (name: Substring, value: Substring)? {
        guard kind == .bare, let equals = optionNameLength else { return nil }
        let text = self.text
        let index = text.utf8.index(text.utf8.startIndex, offsetBy: equals)
        return (text[..<index], text[text.utf8.index(after: index)...])
    }

    /// The length of the name of a bare `name=value` word (the offset of its `=`), checked on its
    /// bytes; nil when the word is no option.
    private var optionNameLength: Int? {
        withUTF8 { bytes -> Int? in
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
                  Self.isName(UnsafeBufferPointer(rebasing: bytes[..<equals])) else { return nil }
            return equals
        }
    }

    /// Whether the word is a `name=value` option or a `--name` flag (checked on its bytes).
    var isOptionOrFlag: Bool {
        guard kind == .bare else { return false }
        return optionNameLength != nil || isFlag
    }

    private var isFlag: Bool {
        withUTF8 { bytes in
            bytes.count > 2 && bytes[0] == UInt8(ascii: "-") && bytes[1] == UInt8(ascii: "-")
                && Self.isName(UnsafeBufferPointer(rebasing: bytes[2...]))
        }
    }

    /// The name of a bare `--name` flag (without the dashes), where the name matches `[a-z][a-z0-9-]*`.
    ///
    /// - Complexity: O(n) in the length of the word.
    public var flag: Substring? {
        guard kind == .bare, isFlag else { return nil }
        return text.dropFirst(2)
    }

    private static func isName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = name.first, isLowercaseLetter(first) else { return false }
        return name.allSatisfy { byte in
            isLowercaseLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
        }
    }

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
    }
}

/// The words of one command, before any command parser has looked at them.
public struct RawCommand: Sendable, Equatable {
    /// At least one word.
    public var words: [Word]
    /// Byte offset of the first word.
    public var offset: Int
    /// Byte offset just past the last word, so `offset..<end` is the command's
    /// source without trailing blanks, line end or comment.
    public var end: Int

    public init(words: [Word], offset: Int, end: Int) {
        self.words = words
        self.offset = offset
        self.end = end
    }
}

/// Splits cachesh source into commands and words.
///
/// A command ends at a newline, or also at `;` when `semicolonSeparates` is
/// set (as for `cachesh -c`). Blank lines are skipped. A `#` that starts a
/// command, or that is a word of its own (`put a 1 # note`), begins a comment
/// that runs to the end of the line, or with `semicolonSeparates` to the next
/// `;`; a `#` inside a word or starting a longer word (`#3`) is text.
/// Words are separated by spaces and tabs, and are one of:
/// - a JSON object or array, from `{` or `[` until its brackets balance. Where
///   the command takes a JSON value (``CommandCatalog/mayContinueJSON(after:)``)
///   it may span lines: newlines and `;` inside it do not end the command.
///   Elsewhere its brackets must balance on its line (an error otherwise), and
///   text right after the closing bracket makes it one bare word (`[fg]*`).
/// - a JSON string, from `"` to the closing quote on the same line, escapes
///   decoded. Unescaped tabs and other control characters are kept as typed.
/// - a bare word: anything else, up to whitespace.
///
/// A JSON value or string must be followed by whitespace or the end of the
/// command. CRLF line ends are accepted. After an error, the lexer skips the
/// rest of that command (still honouring quotes and brackets in its later
/// words) so a caller can report the error and go on.
///
/// The lexer works on UTF-8 bytes, never recurses, and bounds JSON nesting at
/// ``maxJSONDepth`` levels.
public struct Lexer: IteratorProtocol, Sequence {
    /// The deepest JSON nesting a word may have (SPEC §7).
    public static let maxJSONDepth = 512

    private let bytes: [UInt8]
    private let semicolonSeparates: Bool
    /// The next byte to look at.
    private var position = 0
    /// Closing brackets the JSON word being scanned still expects, innermost last.
    /// Kept between words so scanning a JSON word does not allocate.
    private var expectedClosers: [UInt8] = []
    /// Set once the text has ended inside an open JSON value.
    private var endedInsideJSON = false

    /// Whether the text has ended inside an open JSON value that may span lines (the last
    /// command is not complete yet).
    var endsInsideJSON: Bool { endedInsideJSON }
    /// The words of the command being lexed so far, failed ones included, as
    /// ``CommandCatalog/mayContinueJSON(after:)`` looks at them.
    private var preceding: [PrecedingWord] = []

    /// The byte offset the lexer has reached: after a command (or a failed one), just past it.
    public var offset: Int { position }

    /// Prepares to lex `source`.
    ///
    /// - Complexity: O(1).
    public init(_ source: SourceFile, semicolonSeparates: Bool) {
        self.bytes = source.bytes
        self.semicolonSeparates = semicolonSeparates
    }

    /// The next command, a diagnostic for the next command that could not be
    /// lexed, or nil at the end of the source.
    ///
    /// - Complexity: O(n) in the length of the command's source.
    public mutating func next() -> Result<RawCommand, Diagnostic>? {
        if let command = nextCommand() { return .success(command) }
        return failure.map { .failure($0) }
    }

    /// Why the last ``nextCommand()`` returned nil: the command that could not be lexed, or nil
    /// at the end of the source.
    private(set) var failure: Diagnostic?

    /// Goes on from `offset` (the end of a command read without the lexer, at its line feed).
    mutating func skip(to offset: Int) {
        position = offset
        failure = nil
    }

    /// ``next()`` without the `Result`: the next command, or nil for one that could not be lexed
    /// (``failure``) or at the end of the source. The hot loop of a session moves a plain
    /// optional instead of an enum that generic code would destroy.
    mutating func nextCommand() -> RawCommand? {
        failure = nil
        while true {
            let start = position
            skipSeparators()
            guard position < bytes.count else { return nil }

            var words: [Word] = []
            words.reserveCapacity(8)
            preceding.removeAll(keepingCapacity: true)
            var failure: Diagnostic?
            while position < bytes.count {
                let byte = bytes[position]
                if byte == .lineFeed || (byte == .semicolon && semicolonSeparates) { break }
                // A `;` that ends the line ends the command, as in sqlite3 and psql (`get a:1;`).
                if byte == .semicolon && endsLine(after: position) {
                    position += 1
                    continue
                }
                if byte == .space || byte == .tab || byte == .carriageReturn {
                    position += 1
                    continue
                }
                if byte == .hash && (preceding.isEmpty || position + 1 == bytes.count || isWordEnd(bytes[position + 1])) {
                    skipComment()
                    continue
                }
                let wordStart = position
                let result = lexWord()
                switch result {
                case .word(let word):
                    words.append(word)
                case .failed(let diagnostic):
                    if failure == nil { failure = diagnostic }
                }
                if preceding.count < PrecedingWord.maxWords {
                    if case .word(let word) = result, word.kind == .bare {
                        preceding.append(bytes.withUnsafeBufferPointer { all in
                            PrecedingWord(bare: UnsafeBufferPointer(rebasing: all[wordStart..<position]))
                        })
                    } else {
                        preceding.append(PrecedingWord.notBare)
                    }
                }
                assert(position > wordStart, "lexer made no progress in a word")
            }
            assert(position > start, "lexer made no progress in a command")

            if let failed = failure {
                self.failure = failed
                return nil
            }
            if let first = words.first, let last = words.last {
                return RawCommand(words: words, offset: first.offset, end: last.end)
            }
            // A comment-only line: look for the next command.
        }
    }

    /// True when `text` ends inside an open JSON value, so an interactive
    /// shell should read another line (with the `...> ` prompt) before running it.
    ///
    /// - Complexity: O(n) in the length of `text`.
    public static func needsContinuation(_ text: String) -> Bool {
        var lexer = Lexer(SourceFile(name: nil, text: text), semicolonSeparates: false)
        while lexer.next() != nil {}
        return lexer.endedInsideJSON
    }

    /// The commands of `-c` text, each as the text of its own line, split exactly where
    /// `cachesh -c` splits them (a `;` or a line feed outside a quoted string or a JSON value; a
    /// comment runs to the next `;`): for a shell that sends them elsewhere to run (`attach -c`).
    /// A command that does not lex is kept whole, for its reader to report; the lines of a JSON
    /// value spanning lines are joined by a space, the blanks that start each continuation left
    /// out (the value means the same on one line).
    ///
    /// - Complexity: O(n) in the length of `text`.
    public static func inlineCommands(_ text: String) -> [String] {
        let source = SourceFile(name: nil, text: text)
        var lexer = Lexer(source, semicolonSeparates: true)
        var commands: [String] = []
        var from = 0
        while true {
            let span: Range<Int>
            if let command = lexer.nextCommand() {
                span = command.offset..<command.end
            } else if lexer.failure != nil {
                span = SourceScan.commandSpan(source.bytes, from: from, to: lexer.offset, semicolons: true)
            } else {
                break
            }
            from = lexer.offset
            var line: [UInt8] = []
            line.reserveCapacity(span.count)
            var i = span.lowerBound
            while i < span.upperBound {
                let byte = source.bytes[i]
                i += 1
                guard byte == .lineFeed else {
                    line.append(byte)
                    continue
                }
                if line.last == .carriageReturn { line.removeLast() }
                while i < span.upperBound, source.bytes[i] == .space || source.bytes[i] == .tab { i += 1 }
                line.append(.space)
            }
            if !line.isEmpty { commands.append(String(decoding: line, as: UTF8.self)) }
        }
        return commands
    }

    // MARK: Scanning

    private mutating func skipSeparators() {
        while position < bytes.count {
            switch bytes[position] {
            case .space, .tab, .carriageReturn, .lineFeed: position += 1
            case .semicolon where semicolonSeparates: position += 1
            default: return
            }
        }
    }

    /// Moves past a comment: to the line feed ending the current line (or with
    /// `semicolonSeparates`, to the next `;`), or to the end of the text.
    private mutating func skipComment() {
        while position < bytes.count && bytes[position] != .lineFeed && !(semicolonSeparates && bytes[position] == .semicolon) {
            position += 1
        }
    }

    /// Whether the `;` at `index` ends its line: only blanks follow it up to the line feed or
    /// the end of the text. Such a `;` ends the command; one inside a line is text unless
    /// `semicolonSeparates` (keys such as URLs may hold one).
    private func endsLine(after index: Int) -> Bool {
        guard !semicolonSeparates else { return false }
        var i = index + 1
        while i < bytes.count {
            switch bytes[i] {
            case .space, .tab, .carriageReturn: i += 1
            case .lineFeed: return true
            default: return false
            }
        }
        return true
    }

    private func isWordEnd(_ byte: UInt8) -> Bool {
        switch byte {
        case .space, .tab, .carriageReturn, .lineFeed: true
        case .semicolon: semicolonSeparates
        default: false
        }
    }

    /// Lexes the word at `position`, which is not blank, a separator or `#`.
    private mutating func lexWord() -> LexedWord {
        let result: LexedWord
        let what: String
        switch bytes[position] {
        case .quote:
            result = lexQuoted()
            what = "a quoted string"
        case .openBrace, .openBracket:
            let acrossLines = CommandCatalog.mayContinueJSON(after: preceding)
            result = lexJSON(acrossLines: acrossLines,
                             maxDepth: CommandCatalog.takesDocument(after: preceding) ? JSONValue.documentDepth : Self.maxJSONDepth)
            what = "a JSON value"
            if !acrossLines, case .word(let word) = result, position < bytes.count, !isWordEnd(bytes[position]),
               !(bytes[position] == .semicolon && endsLine(after: position)) {
                // Balanced brackets where no JSON is taken, then more text: one bare word (`[fg]*`).
                let rest = lexBare()
                return .word(Word(bytes: bytes, range: word.offset..<rest.end, kind: .bare, offset: word.offset, end: rest.end))
            }
        default:
            return .word(lexBare())
        }
        if case .word = result, position < bytes.count, !isWordEnd(bytes[position]),
           !(bytes[position] == .semicolon && endsLine(after: position)) {
            // Leave the stray text to be lexed (and dropped) as the next word.
            let stray = character(at: position)
            return .failed(Diagnostic(
                message: "unexpected \"\(stray)\" right after \(what); separate words with a space",
                offset: position))
        }
        return result
    }

    private mutating func lexBare() -> Word {
        let start = position
        // With `;` separating commands, a `;` inside the JSON value of a `name=` option
        // (`headers={"Cache-Control":"a;b"}`) is text: the value's strings and brackets are
        // followed from its `=` on. Blanks still end the word.
        var value = false, depth = 0, inString = false
        while position < bytes.count {
            let byte = bytes[position]
            if isWordEnd(byte) && !(byte == .semicolon && (inString || depth > 0)) { break }
            if semicolonSeparates {
                if inString {
                    if byte == .backslash, position + 1 < bytes.count, bytes[position + 1] == .quote || bytes[position + 1] == .backslash {
                        position += 1
                    } else if byte == .quote {
                        inString = false
                    }
                } else if value {
                    switch byte {
                    case .quote: inString = true
                    case .openBrace, .openBracket: depth += 1
                    case .closeBrace, .closeBracket: depth = Swift.max(0, depth - 1)
                    default: break
                    }
                } else if byte == UInt8(ascii: "="), position + 1 < bytes.count,
                          [.openBrace, .openBracket, .quote].contains(bytes[position + 1]) {
                    value = true
                }
            }
            position += 1
        }
        // `get a:1;`: the `;` ending the line is not part of the word (the caller skips it).
        if position - start > 1 && bytes[position - 1] == .semicolon && endsLine(after: position - 1) { position -= 1 }
        return Word(bytes: bytes, range: start..<position, kind: .bare, offset: start, end: position)
    }

    /// Lexes a JSON string that must close on its line, decoding its escapes.
    private mutating func lexQuoted() -> LexedWord {
        let open = position
        var index = open + 1
        var hasEscape = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == .quote || byte == .lineFeed { break }
            if byte == .backslash {
                hasEscape = true
                // An escape never swallows the line end, so `"a\` is unterminated.
                if index + 1 < bytes.count && bytes[index + 1] != .lineFeed { index += 1 }
            }
            index += 1
        }
        guard index < bytes.count, bytes[index] == .quote else {
            position = index
            return .failed(Diagnostic(
                message: "unterminated quoted string: the \" opened here has no closing \" on its line",
                offset: open))
        }
        position = index + 1
        let content = open + 1..<index
        guard hasEscape else { return .word(Word(bytes: bytes, range: content, kind: .quoted, offset: open, end: position)) }
        switch decodeEscapes(content) {
        case .success(let decoded): return .word(Word(text: decoded, kind: .quoted, offset: open, end: position))
        case .failure(let diagnostic): return .failed(diagnostic)
        }
    }

    /// Decodes the JSON escapes of a quoted string's content.
    private func decodeEscapes(_ range: Range<Int>) -> Result<String, Diagnostic> {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == .backslash else {
                decoded.append(byte)
                index += 1
                continue
            }
            let escape = index
            guard index + 1 < range.upperBound else {
                return .failure(Diagnostic(message: "quoted string ends with a lone \\", offset: escape))
            }
            let letter = bytes[index + 1]
            index += 2
            switch letter {
            case .quote, .backslash, .slash: decoded.append(letter)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(.lineFeed)
            case UInt8(ascii: "r"): decoded.append(.carriageReturn)
            case UInt8(ascii: "t"): decoded.append(.tab)
            case UInt8(ascii: "u"):
                guard let unit = hexQuad(at: index, before: range.upperBound) else {
                    return .failure(Diagnostic(
                        message: "invalid escape in quoted string: \\u needs four hex digits", offset: escape))
                }
                index += 4
                var scalarValue = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    // A high surrogate must be followed by an escaped low one.
                    guard index + 1 < range.upperBound, bytes[index] == .backslash,
                        bytes[index + 1] == UInt8(ascii: "u"),
                        let low = hexQuad(at: index + 2, before: range.upperBound), (0xDC00...0xDFFF).contains(low)
                    else {
                        return .failure(surrogateError(unit, at: escape))
                    }
                    index += 6
                    scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return .failure(surrogateError(unit, at: escape))
                }
                // Not a surrogate here, so always a valid scalar.
                UTF8.encode(Unicode.Scalar(scalarValue) ?? "\u{FFFD}") { decoded.append($0) }
            default:
                return .failure(Diagnostic(
                    message: "invalid escape \"\\\(character(at: escape + 1))\" in quoted string "
                        + "(use \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)",
                    offset: escape))
            }
        }
        return .success(String(decoding: decoded, as: UTF8.self))
    }

    private func surrogateError(_ unit: UInt16, at offset: Int) -> Diagnostic {
        let hex = String(unit, radix: 16, uppercase: true)
        return Diagnostic(
            message: "invalid escape \"\\u\(hex)\" in quoted string: a surrogate must be part of a pair",
            offset: offset)
    }

    /// The value of four hex digits starting at `index`, if they all come before `limit`.
    private func hexQuad(at index: Int, before limit: Int) -> UInt16? {
        guard index + 4 <= limit else { return nil }
        var value: UInt16 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Lexes a JSON object or array up to its balancing bracket, across lines
    /// when `acrossLines` (else a line feed before the balancing bracket is an error).
    ///
    /// Only brackets and strings are looked at; the JSON parser checks the rest.
    /// Nesting is tracked in ``expectedClosers`` (no recursion); past
    /// ``maxJSONDepth`` levels only a count is kept, to find where the value
    /// ends before reporting it as too deep.
    /// `maxDepth`: ``maxJSONDepth``, or more for a snapshot document (its own levels around values
    /// of that depth, as a snapshot file is read).
    private mutating func lexJSON(acrossLines: Bool, maxDepth: Int) -> LexedWord {
        let open = position
        expectedClosers.removeAll(keepingCapacity: true)
        var depth = 0
        var tooDeep: Diagnostic?
        var index = open
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case .openBrace, .openBracket:
                depth += 1
                if depth > maxDepth {
                    if tooDeep == nil {
                        tooDeep = Diagnostic(message: "JSON nested deeper than \(maxDepth) levels", offset: index)
                    }
                } else {
                    expectedClosers.append(byte == .openBrace ? .closeBrace : .closeBracket)
                }
                index += 1
            case .closeBrace, .closeBracket:
                if depth <= maxDepth, let expected = expectedClosers.popLast(), expected != byte {
                    position = index + 1
                    return .failed(tooDeep ?? Diagnostic(
                        message: "mismatched \"\(Character(Unicode.Scalar(byte)))\" in JSON value: "
                            + "expected \"\(Character(Unicode.Scalar(expected)))\"",
                        offset: index))
                }
                depth -= 1
                index += 1
                if depth == 0 {
                    position = index
                    if let tooDeep { return .failed(tooDeep) }
                    return .word(Word(bytes: bytes, range: open..<index, kind: .json, offset: open, end: index))
                }
            case .quote:
                let quote = index
                index += 1
                while index < bytes.count && bytes[index] != .quote && bytes[index] != .lineFeed {
                    if bytes[index] == .backslash && index + 1 < bytes.count && bytes[index + 1] != .lineFeed {
                        index += 1
                    }
                    index += 1
                }
                guard index < bytes.count, bytes[index] == .quote else {
                    position = index
                    return .failed(tooDeep ?? Diagnostic(
                        message: "unterminated string in JSON value: the \" opened here has no closing \" on its line",
                        offset: quote))
                }
                index += 1
            case .lineFeed where !acrossLines:
                position = index
                let opener = Character(Unicode.Scalar(bytes[open]))
                return .failed(tooDeep ?? Diagnostic(
                    message: "unbalanced \"\(opener)\": it is not closed on its line (only a JSON value may span lines; "
                        + "quote text that holds a bracket)", offset: open))
            case .semicolon where !acrossLines && semicolonSeparates:
                // In `-c` a `;` ends the command here as a line feed does: the commands after it
                // still run (`echo step [1 of 3; keys`).
                position = index
                let opener = Character(Unicode.Scalar(bytes[open]))
                return .failed(tooDeep ?? Diagnostic(
                    message: "unbalanced \"\(opener)\": it is not closed before the ; that ends its command (only a JSON "
                        + "value may hold a ; in -c; quote text that holds a bracket)", offset: open))
            default:
                index += 1
            }
        }
        position = index
        guard acrossLines else {
            if let tooDeep { return .failed(tooDeep) }
            let opener = Character(Unicode.Scalar(bytes[open]))
            return .failed(Diagnostic(
                message: "unbalanced \"\(opener)\": it is not closed on its line (only a JSON value may span lines; "
                    + "quote text that holds a bracket)", offset: open))
        }
        endedInsideJSON = true
        if let tooDeep { return .failed(tooDeep) }
        let opener = Character(Unicode.Scalar(bytes[open]))
        return .failed(Diagnostic(
            message: "unterminated JSON value: \"\(opener)\" opened here is never closed", offset: open))
    }

    /// A word, or why it could not be lexed (a concrete enum: moved without generic code).
    private enum LexedWord {
        case word(Word)
        case failed(Diagnostic)
    }

    // MARK: Text

    private func string(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// The whole character whose UTF-8 encoding starts at `offset`, for messages.
    private func character(at offset: Int) -> String {
        let lead = bytes[offset]
        let length = lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        return string(offset..<Swift.min(offset + length, bytes.count))
    }
}

extension UInt8 {
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let hash = UInt8(ascii: "#")
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let semicolon = UInt8(ascii: ";")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let closeBracket = UInt8(ascii: "]")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")
}
