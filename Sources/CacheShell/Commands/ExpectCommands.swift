import CacheCore

/// `expect COMMAND ARGS... PATH=VALUE...`: a script asserts what it shows (SPEC §3).
///
/// The command runs as it would alone: a read-only one (`peek`, `keys`, `stats`, `pending`,
/// `server show`, `server log`, `now`, `config`), which touches no recency, statistic or request,
/// or a `get`, which runs as usual so its `source`, `error` and `offline` can be checked. Its
/// JSON result is then compared, field by field, with the trailing `PATH=VALUE` words: PATH is
/// dot-separated, numeric segments index arrays, a segment holding a `.` is written as a JSON
/// string (`value."a.b".c`: not the first, as a word starting with `"` is a quoted string); VALUE
/// is JSON (a bare word is a string) and compared with its type, so `value=1` is not `value="1"`. A VALUE with spaces follows `PATH=` as a word of its own
/// (`value= {"a": 1}`).
enum ExpectCommands {
    /// The commands `expect` may run.
    static let checkable: Set<String> = ["peek", "keys", "stats", "pending", "server", "now", "config", "get"]

    /// One assertion: where in the result, what it should be, and the word it came from.
    struct Assertion {
        var path: [PathSegment]
        var pathText: String
        var expected: JSONValue
        var offset: Int
    }

    enum PathSegment: Equatable {
        case field(String)
        case index(Int)
    }

    static let expect = CommandSpec(
        name: "expect", summary: "run a read-only command (or get) and check fields of its result",
        arguments: [
            .commandLine("COMMAND", meaning: "peek, keys, stats, pending, server show, server log, now, config or get with its arguments, then for each field of its JSON result to check, its path (a.b.0, a.\"b.c\".d) = the JSON it must equal, type and all (a bare word is a string; PATH= then a word for a value with spaces)"),
        ],
        example: "expect now now_ms=0", run: expect)

    static func expect(_ session: Session, _ cache: isolated Cache, _ command: RawCommand,
                       _ source: SourceFile) throws(ShellError) -> Reply {
        let words = command.words
        guard words.count >= 2 else {
            throw ShellError("expect needs a command and PATH=VALUE assertions (expect peek KEY state=fresh)", at: command.end)
        }
        let name = words[1]
        guard name.kind == .bare, checkable.contains(name.text) else {
            throw ShellError("expect runs peek, keys, stats, pending, server show, server log, now, config or get, not \(describe(name))",
                             at: name.offset)
        }
        if name.text == "server", words.count < 3 || !["show", "log"].contains(words[2].text) {
            throw ShellError("expect runs server show or server log", at: words.count >= 3 ? words[2].offset : command.end)
        }
        // The assertions are the words from the first PATH=VALUE on.
        guard let first = words.indices.dropFirst(2).first(where: { isAssertion(words[$0]) }) else {
            throw ShellError("expect needs at least one PATH=VALUE after the command", at: command.end)
        }
        var assertions: [Assertion] = []
        // The last inline VALUE when it opened JSON it did not close (`value={"a":"b` of
        // `value={"a":"b c"}`): a space split it, and the next word that is no assertion says so.
        var open: (pathText: String, start: Int, offset: Int)?
        var i = first
        while i < words.count {
            let word = words[i]
            guard isAssertion(word), let equals = word.text.firstIndex(of: "=") else {
                if let open { throw splitValueError(open, words[i...], source) }
                throw ShellError("expect: \(describe(word)) is not PATH=VALUE (assertions come after the command)", at: word.offset)
            }
            open = nil
            let pathText = String(word.text[..<equals])
            let path = try parsePath(pathText, at: word.offset)
            let valueText = String(word.text[word.text.index(after: equals)...])
            let expected: JSONValue
            if valueText.isEmpty {
                // `PATH=` then the value as the next word (a JSON value with spaces, a quoted string).
                guard i + 1 < words.count else { throw ShellError("expect: \(pathText)= needs a value", at: word.offset) }
                i += 1
                expected = try Arguments.value(words[i])
            } else {
                // JSON when it parses (`"3"`, `[1]`, `null`), else the word as a string.
                let valueWord = Word(text: valueText, kind: .bare, offset: word.offset + pathText.utf8.count + 1,
                                     end: word.end)
                if let json = try? JSONValue(parsing: valueText) { expected = json } else {
                    expected = try Arguments.value(valueWord)
                    if let c = valueText.first, "{[\"".contains(c) { open = (pathText, valueWord.offset, word.offset) }
                }
            }
            assertions.append(Assertion(path: path, pathText: pathText, expected: expected, offset: word.offset))
            i += 1
        }
        let inner = RawCommand(words: Array(words[1..<first]), offset: name.offset, end: words[first - 1].end)
        let reply = try session.dispatch(name.text, inner, source, on: cache)
        let result = JSONValue.object(reply.fields)
        for assertion in assertions {
            let found = lookUp(assertion.path, in: result)
            guard found == assertion.expected else {
                throw ShellError("expect: \(assertion.pathText): expected \(assertion.expected.compactText), found "
                                 + (found?.compactText ?? "nothing"), at: assertion.offset)
            }
        }
        return .ok(["checked": .int(Int64(assertions.count))], human: ["expect: ok"])
    }

    /// The error for an inline VALUE that a space split into words (`value={"a":"b c"}`): what to
    /// write instead, `PATH= VALUE` with the value as a word of its own, quoting the value from
    /// the source up to the word that closes it (or the general form when no word does).
    /// - Complexity: O(n) in the bytes of the rest of the command: one scan, one parse.
    static func splitValueError(_ open: (pathText: String, start: Int, offset: Int), _ rest: ArraySlice<Word>,
                                _ source: SourceFile) -> ShellError {
        if let last = rest.last, last.end <= source.bytes.count,
           let end = jsonEnd(source.bytes[open.start..<last.end]), rest.contains(where: { $0.end == end }) {
            // A long value is not quoted back: the general form says the same in one short line.
            let text = String(decoding: source.bytes[open.start..<end], as: UTF8.self)
            if end - open.start <= 200, (try? JSONValue(parsing: text)) != nil {
                return ShellError("expect: a space splits the value of \(open.pathText)= into words; write \(open.pathText)= \(text)"
                                  + " (PATH= then the value as a word of its own)", at: open.offset)
            }
        }
        return ShellError("expect: a space splits the value of \(open.pathText)= into words; write PATH= then the value as a word"
                          + " of its own (\(open.pathText)= {\"a\": \"b c\"})", at: open.offset)
    }

    /// Where the JSON array, object or string at the start of `bytes` ends (the offset after its
    /// closing byte), by its quotes and brackets alone; nil when it does not end before a line break.
    /// - Complexity: O(n).
    static func jsonEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        for i in bytes.indices {
            let c = bytes[i]
            if inString {
                if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return i + 1 }
                }
                continue
            }
            switch c {
            case UInt8(ascii: "\n"): return nil
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth <= 0 { return depth == 0 ? i + 1 : nil }
            default: break
            }
        }
        return nil
    }

    /// A bare word `PATH=VALUE` whose PATH starts like a field name or a quoted segment.
    static func isAssertion(_ word: Word) -> Bool {
        guard word.kind == .bare, let equals = word.text.firstIndex(of: "="), equals != word.text.startIndex else { return false }
        let first = word.text.first!
        return first.isLetter || first.isNumber || first == "_" || first == "\""
    }

    /// `a.b.0."c.d"` as segments: numeric segments are array indices, quoted ones JSON strings.
    static func parsePath(_ text: String, at offset: Int) throws(ShellError) -> [PathSegment] {
        var segments: [PathSegment] = []
        var rest = Substring(text)
        while true {
            var segment: String
            if rest.first == "\"" {
                // A JSON string segment: up to its closing quote.
                var index = rest.index(after: rest.startIndex)
                var escaped = false
                while index < rest.endIndex, escaped || rest[index] != "\"" {
                    escaped = !escaped && rest[index] == "\\"
                    index = rest.index(after: index)
                }
                guard index < rest.endIndex, case .string(let decoded)? = try? JSONValue(parsing: String(rest[...index])) else {
                    throw ShellError("expect: bad path \(text): a quoted segment needs its closing \"", at: offset)
                }
                segment = decoded
                rest = rest[rest.index(after: index)...]
                segments.append(.field(segment))
            } else {
                let end = rest.firstIndex(of: ".") ?? rest.endIndex
                segment = String(rest[..<end])
                guard !segment.isEmpty else { throw ShellError("expect: bad path \(text): an empty segment", at: offset) }
                guard !segment.contains("\"") else {
                    throw ShellError("expect: bad path \(text): a \" may only open a quoted segment", at: offset)
                }
                if let index = Int(segment), index >= 0, segment.allSatisfy(\.isNumber) {
                    segments.append(.index(index))
                } else {
                    segments.append(.field(segment))
                }
                rest = rest[end...]
            }
            if rest.isEmpty { return segments }
            guard rest.first == "." else { throw ShellError("expect: bad path \(text): segments are separated by .", at: offset) }
            rest = rest.dropFirst()
        }
    }

    /// The value at `path` in `value`, or nil when there is none.
    static func lookUp(_ path: [PathSegment], in value: JSONValue) -> JSONValue? {
        var current = value
        for segment in path {
            switch (segment, current) {
            case (.field(let name), .object(let object)):
                guard let next = object[name] else { return nil }
                current = next
            case (.index(let i), .array(let array)):
                guard i < array.count else { return nil }
                current = array[i]
            case (.index(let i), .object(let object)):
                // An object's field named by digits (`stats` keys are names, but a key may be `1`).
                guard let next = object[String(i)] else { return nil }
                current = next
            default:
                return nil
            }
        }
        return current
    }

    private static func describe(_ word: Word) -> String {
        word.kind == .bare ? "\"\(word.text)\"" : "a JSON value"
    }
}
