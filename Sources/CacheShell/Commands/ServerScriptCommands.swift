import CacheCore
import CacheServer

/// `server next` and `server strict`: the answers a replay gives, in order, and whether a request
/// with nothing queued is a divergence (SPEC §3).
enum ServerScriptCommands {
    static let nextUsage = "KEY [VALUE] [latency=D] [value=JSON] [version=N] [--fail] [error=TEXT] [--not-found] [--no-answer] [--lost-answer] [--commit], or --validate ..."

    static let next = CommandSpec(
        subcommand: "next",
        summary: "queue the answer to KEY's next request (--validate: the next validation's), taken in order: "
            + "VALUE or value=JSON (else the data), latency=D, --fail or error=TEXT, --not-found, --no-answer, "
            + "--lost-answer (a mutation applied, its answer lost), --commit (applied, then failed)",
        // VALUE is not declared a JSON value: the options after the key are sorted as options.
        arguments: [.key(meaning: "the key whose next request gets this answer (left out with --validate)").optional,
                    .placeholder("VALUE", meaning: "the answer's value, JSON that may span lines (else the server's data)").optional],
        options: [.duration("latency", meaning: "answer after D instead of the server's latency"),
                  .json("value", placeholder: "JSON", meaning: "the answer's value, as an option"),
                  .json("error", placeholder: "TEXT", meaning: "fail with this message (a word or a JSON string); with --lost-answer, the message the client sees"),
                  .count("version", meaning: "the server version the answer carries (else the data's, if it has one)"),
                  .count("status", meaning: "in an HTTP namespace, the answer's status, 200 to 599 (else 200, or 404 when not found)"),
                  .json("headers", placeholder: "{...}", meaning: "in an HTTP namespace, the answer's header fields, a JSON object (else the key's own when it answers from the data)"),
                  .json("text", placeholder: "\"...\"", meaning: "in an HTTP namespace, a text body (a JSON string) instead of a JSON VALUE"),
                  .text("binary", placeholder: "SIZE:sha256:HEX", meaning: "in an HTTP namespace, a binary body, as its size and SHA-256, instead of a JSON VALUE")],
        flags: [.flag("fail", meaning: "fail with \"server error\""),
                .flag("not-found", meaning: "answer not found"),
                .flag("no-answer", meaning: "never answer (a timeout= fails the request)"),
                .flag("lost-answer", meaning: "apply a mutation, then lose its answer: it fails after the latency (\"answer lost\"), outcome unknown"),
                .flag("commit", meaning: "apply a mutation, then fail it (--fail, error=TEXT; alone: \"server error\") or leave it unanswered (--no-answer)"),
                .flag("validate", meaning: "queue the answer to the next validation instead (value= is its response)")],
        run: next)

    static let strict = CommandSpec(
        subcommand: "strict",
        summary: "on: a request with nothing queued gets no answer and fails its command, naming it",
        arguments: [.oneOf(.word("on"), .word("off"))],
        run: strict)

    static func next(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(try Self.next.joiningJSONOptions(command, source), source, for: Self.next)
        let body = try HTTPCommands.body(args, command: "server next")
        let validate = args.flag("validate")
        try args.expect(validate ? 0...1 : 1...2, usage: validate ? "--validate [latency=D] [value=JSON] [--fail] [error=TEXT]" : nextUsage)
        // The value may also follow the key as a word of its own (`server next KEY {...}`), which
        // can hold blanks and span lines as any JSON word.
        let valueWord = args.positional.count == (validate ? 1 : 2) ? args.positional.last : nil
        var latency: Int64?
        if let (text, word) = args.option("latency") { latency = try Arguments.duration(text, at: word.offset + 8) }
        var outcomes: [(String, ScriptedAnswer.Outcome)] = []
        var valueText: (Substring, Int)?
        if let (text, word) = args.option("value") { valueText = (text, word.offset + 6) }
        if let word = valueWord {
            if valueText != nil { throw ShellError("server next: give the value once (value= or a word after the key)", at: word.offset) }
            valueText = (Substring(word.text), word.offset)
        }
        if let (text, offset) = valueText {
            let value = valueWord == nil ? try jsonOption(text, at: offset) : try Arguments.value(valueWord!)
            if validate {
                do { outcomes.append(("value=", .verdicts(try RecordingFormat.verdicts(from: value)))) } catch {
                    throw ShellError("server next --validate: the value must be {NS: {\"invalidate\": BOOL, \"items\": {KEY: VALUE}}}: "
                                     + error.message, at: offset)
                }
            } else {
                outcomes.append(("value=", .value(value)))
            }
        }
        if let (body, _) = body { outcomes.append((body.kind + "=", .value(body.entryValue))) }
        if let (text, word) = args.option("error") {
            guard case .string(let message) = try jsonOption(text, at: word.offset + 6, bareIsText: true), !message.isEmpty else {
                throw ShellError("server next: error= takes the failure's message (a word or a JSON string)", at: word.offset + 6)
            }
            outcomes.append(("error=", .failure(message)))
        } else if args.flag("fail") {
            outcomes.append(("--fail", .failure("server error")))
        }
        if args.flag("not-found") {
            if validate { throw ShellError("server next --validate has no --not-found", at: command.offset) }
            outcomes.append(("--not-found", .notFound))
        }
        if args.flag("no-answer") { outcomes.append(("--no-answer", .noAnswer)) }
        if args.flag("fail") && args.option("error") != nil { outcomes.removeAll { $0.0 == "--fail" } }
        let commit = args.flag("commit")
        if validate, let flag = ["lost-answer", "commit"].first(where: { args.flag($0) }) {
            throw ShellError("server next --validate has no --\(flag): a validation changes no data", at: command.offset)
        }
        if args.flag("lost-answer") {
            // error=TEXT names the failure the client sees (a recorded timeout's, say).
            var message = "answer lost"
            if let i = outcomes.firstIndex(where: { $0.0 == "error=" }), case .failure(let text) = outcomes[i].1 {
                message = text
                outcomes.remove(at: i)
            }
            outcomes.append(("--lost-answer", .lostAnswer(message)))
        }
        if outcomes.count > 1 {
            throw ShellError("server next: give one of value=, error= (or --fail), --not-found, --no-answer and --lost-answer, not "
                             + outcomes.map(\.0).joined(separator: " and "), at: command.offset)
        }
        if commit {
            if let other = outcomes.first, other.0 == "value=" || other.0 == "text=" || other.0 == "binary=" || other.0 == "--not-found" || other.0 == "--lost-answer" {
                throw ShellError("server next: --commit goes with a failure (--fail, error=TEXT or --no-answer), not \(other.0)"
                                 + (other.0 == "--lost-answer" ? " (a lost answer is applied already)" : ""), at: command.offset)
            }
            if outcomes.isEmpty { outcomes.append(("--commit", .failure("server error"))) }
        }
        let version = try args.version()
        if let version = args.option("version"), validate || outcomes.contains(where: { $0.0 != "value=" }) || body != nil {
            throw ShellError("server next: version= goes with an answer that has a value (value=, or the data's)",
                             at: version.word.offset)
        }
        var answer = ScriptedAnswer(latency: latency, outcome: outcomes.first?.1 ?? .data, version: version, commit: commit)
        answer.body = body?.0
        let httpOptions = [args.option("status"), args.option("headers"), args.option("text"), args.option("binary")].compactMap { $0 }
        if validate {
            if let option = httpOptions.first { throw ShellError("server next --validate takes no status=, headers=, text= or binary=", at: option.word.offset) }
            session.server.queueValidation(answer)
            return queued(nil)
        }
        var key = try args.key(0, in: cache)
        if cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil {
            key = try HTTPCommands.key(key, at: args.positional[0].offset, cache)
            if let (text, word) = args.option("status") { answer.status = try HTTPCommands.status(text, at: word.offset + 7, command: "server next") }
            if let (text, word) = args.option("headers") {
                answer.headers = try HTTPCommands.headers(text, at: word.offset + 8, command: "server next")
            }
        } else if let option = httpOptions.first {
            throw ShellError("server next: status=, headers=, text= and binary= are for a key of an HTTP namespace (ns NAME http); \(key) is not one",
                             at: option.word.offset)
        }
        session.server.queue(answer, for: key)
        return queued(key)
    }

    /// What `server next` prints: `server: queued an answer for KEY` (or `for validate`).
    static func queued(_ key: String?) -> Reply {
        .ok([key == nil ? "validate" : "key": key.map(JSONValue.string) ?? .bool(true)],
            human: ["server: queued an answer for " + (key ?? "validate")])
    }

    static func strict(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: Self.strict)
        try args.expect(1...1)
        let word = args.positional[0]
        guard word.kind == .bare, word.text == "on" || word.text == "off" else {
            throw ShellError("server strict takes on or off, not \(Arguments.describe(word))", at: word.offset)
        }
        session.server.strict = word.text == "on"
        return strictReply(session.server.strict)
    }

    static func strictReply(_ on: Bool) -> Reply {
        .ok(["strict": .bool(on)], human: ["server: strict " + (on ? "on" : "off")])
    }

    // MARK: name=JSON options

    /// The words of a command with each `name=` option of `names` whose value is JSON (starting
    /// `{`, `[` or `"`) taken whole from the source: the lexer ends a bare word at a blank, so
    /// `error="timed out"` arrives as two words.
    /// - Complexity: O(n) in the length of the command.
    static func joinedJSONOptions(_ command: RawCommand, _ source: SourceFile, names: Set<String>) throws(ShellError) -> [Word] {
        var words: [Word] = []
        var skipUntil = 0
        let bytes = source.bytes
        for word in command.words {
            if word.offset < skipUntil {
                if word.end > skipUntil {
                    throw ShellError("unexpected text after a JSON value", at: skipUntil)
                }
                continue
            }
            guard word.kind == .bare, let option = word.option, names.contains(String(option.name)) else {
                words.append(word)
                continue
            }
            let start = word.offset + option.name.utf8.count + 1
            guard start < word.end, [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\"")].contains(bytes[start]) else {
                words.append(word)
                continue
            }
            guard let end = jsonEnd(bytes, from: start, limit: command.end) else {
                throw ShellError("\(option.name)=: the JSON value does not end on this line", at: start)
            }
            words.append(Word(text: String(decoding: bytes[word.offset..<end], as: UTF8.self), kind: .bare,
                              offset: word.offset, end: end))
            skipUntil = end
            if word.end > end { throw ShellError("unexpected text after a JSON value", at: end) }
        }
        return words
    }

    /// The end of the JSON value (object, array or string) that starts at `start`: its closing
    /// bracket or quote plus one, or nil when it does not close before `limit` or a line feed.
    /// - Complexity: O(n) in the length of the value.
    static func jsonEnd(_ bytes: [UInt8], from start: Int, limit: Int) -> Int? {
        var depth = 0
        var i = start
        var inString = false
        while i < limit {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\n") { return nil }
            if inString {
                if byte == UInt8(ascii: "\\") {
                    i += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return i + 1 }
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
            }
            i += 1
        }
        return nil
    }

    /// The value of a `name=` option: JSON when it starts `{`, `[` or `"`; otherwise a bare word as
    /// `put` reads one (or, with `bareIsText`, the text itself).
    static func jsonOption(_ text: Substring, at offset: Int, bareIsText: Bool = false) throws(ShellError) -> JSONValue {
        guard let first = text.utf8.first else { throw ShellError("a value is missing after =", at: offset) }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "\"") {
            let value: JSONValue
            do { value = try JSONValue(parsing: String(text)) } catch {
                throw ShellError("bad JSON: \(error.message)", at: offset + error.offset)
            }
            if text.utf8.count > JSONValue.maxBytes / 8, let problem = value.sizeProblem { throw ShellError(problem, at: offset) }
            return value
        }
        if bareIsText { return .string(String(text)) }
        return try Arguments.value(Word(text: String(text), kind: .bare, offset: offset, end: offset + text.utf8.count))
    }
}

extension Session {
    /// Fails `command`, which sent a request that strict mode found nothing queued for.
    func noteDivergence(_ request: String, span: Range<Int>, name: String, in source: SourceFile) {
        var text = String(decoding: source.bytes[span], as: UTF8.self)
        if let newline = text.firstIndex(of: "\n") { text = text[..<newline] + " ..." }
        if text.count > 80 { text = text.prefix(77) + "..." }
        let message = "server strict: nothing queued for the \(request) sent by \(text): the replay diverged"
        if divergence == nil { divergence = message }
        report(ShellError(message, at: span.lowerBound), in: source, command: name, span: span)
    }
}
