import CacheCore

/// What the shell's commands share for HTTP namespaces (docs/SPEC.md, HTTP namespaces): reading
/// `headers=` and `status=`, normalizing a key's target, and printing an HTTP read.
enum HTTPCommands {
    /// The most field lines one `headers=` may give (docs/SPEC.md §7.1).
    static let maxFieldLines = 100
    /// The most bytes of names and values one `headers=` may give (docs/SPEC.md §7.1).
    static let maxFieldBytes = 16_384

    /// The header fields of a `headers={...}` option: a JSON object whose member names are field
    /// names (RFC 9110 §5.1 tokens) and whose values are strings, or arrays of strings for a field
    /// sent on several lines; kept in the order written.
    /// - Throws: one error naming the first problem; nothing is half-read.
    static func headers(_ text: Substring, at offset: Int, command: String) throws(ShellError) -> HTTPFields {
        let value = try ServerScriptCommands.jsonOption(text, at: offset)
        guard case .object(let members) = value, let order = JSONValue.memberOrder(ofObject: String(text)) else {
            throw ShellError("\(command): headers= is a JSON object of field names and values, as {\"Cache-Control\":\"max-age=60\"}", at: offset)
        }
        var fields = HTTPFields()
        var bytes = 0
        for name in order {
            if let problem = HTTPFields.nameProblem(name) { throw ShellError("\(command): " + problem, at: offset) }
            let values: [JSONValue]
            switch members[name]! {
            case .string: values = [members[name]!]
            case .array(let list) where !list.isEmpty: values = list
            default:
                throw ShellError("\(command): the value of \(name) in headers= is a string, or an array of strings for several lines", at: offset)
            }
            for line in values {
                guard case .string(let text) = line else {
                    throw ShellError("\(command): the value of \(name) in headers= is a string, or an array of strings for several lines", at: offset)
                }
                guard !text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) else {
                    throw ShellError("\(command): the value of \(name) in headers= holds a control character (a field value may not)", at: offset)
                }
                bytes += name.utf8.count + text.utf8.count
                fields.append(name, text)
            }
        }
        if fields.lines.count > maxFieldLines {
            throw ShellError("\(command): headers= gives \(fields.lines.count) field lines; at most \(maxFieldLines)", at: offset)
        }
        if bytes > maxFieldBytes {
            throw ShellError("\(command): headers= holds \(bytes) bytes of names and values; at most \(maxFieldBytes)", at: offset)
        }
        return fields
    }

    /// `fields` as the JSON object `headers=` reads back to them: a field on several lines as an
    /// array of its values, at the place of its first line. Lines of one field apart from each
    /// other (`A`, `B`, `A`) come back together; the fields' meaning is the same (RFC 9110 §5.3).
    /// - Returns: the object's compact text, its members in the fields' order.
    static func headersObject(_ fields: HTTPFields) -> String {
        var order: [String] = []
        var values: [String: [JSONValue]] = [:]
        for line in fields {
            if values[line.name] == nil { order.append(line.name) }
            values[line.name, default: []].append(.string(line.value))
        }
        let members = order.map { name in
            JSONValue.string(name).compactText + ":" + (values[name]!.count == 1 ? values[name]![0] : .array(values[name]!)).compactText
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A `status=N` option: a final status code, 200 to 599 (docs/SPEC.md §7.1).
    static func status(_ text: Substring, at offset: Int, command: String) throws(ShellError) -> Int {
        guard text.utf8.count == 3, let n = Int(text), (200...599).contains(n) else {
            throw ShellError("\(command): status= is a final HTTP status code from 200 to 599, not \(JSONValue.string(String(text)).compactText)", at: offset)
        }
        return n
    }

    /// The key of the word at `offset`, its target normalized when it is of an HTTP namespace.
    /// A text or binary body from `text=` or `binary=` (nil when neither is given), for `command`.
    /// `text="..."` is a JSON string (or a bare word; a command's 16 MiB bounds it);
    /// `binary=SIZE:sha256:HEX` the bytes' size and SHA-256.
    static func body(_ args: Arguments, command: String) throws(ShellError) -> (HTTPBody, Word)? {
        if let (_, word) = args.option("text"), args.option("binary") != nil {
            throw ShellError("\(command): give text= or binary=, not both", at: word.offset)
        }
        if let (text, word) = args.option("text") {
            guard case .string(let body) = try ServerScriptCommands.jsonOption(text, at: word.offset + 5, bareIsText: true) else {
                throw ShellError("\(command): text= takes the body's text, a JSON string (text=\"<p>hi</p>\")", at: word.offset + 5)
            }
            return (.text(body), word)
        }
        if let (text, word) = args.option("binary") {
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[1] == "sha256", let size = Int(parts[0]), size >= 0, size <= 1 << 40,
                  HTTPBody.digestProblem(String(parts[2])) == nil else {
                throw ShellError("\(command): binary= is SIZE:sha256:HEX, the bytes' size and their SHA-256 in 64 lowercase hex digits "
                                 + "(binary=8:sha256:4c1f...)", at: word.offset + 7)
            }
            return (.binary(size: size, sha256: String(parts[2])), word)
        }
        return nil
    }

    /// A body as a read shows it: JSON as compact JSON, `text "..."` (quoted as JSON quotes),
    /// `binary N bytes sha256:HEX`.
    static func bodyText(_ body: HTTPBody) -> String {
        switch body {
        case .json(let value): value.compactText
        case .text(let text): "text " + JSONValue.string(text).compactText
        case .binary(let size, let digest): "binary \(size) \(size == 1 ? "byte" : "bytes") sha256:\(digest)"
        }
    }

    static func key(_ key: String, at offset: Int, _ cache: isolated Cache) throws(ShellError) -> String {
        guard cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil else { return key }
        do { return try Cache.httpKey(key) } catch { throw ShellError(error.message, at: offset) }
    }

    /// What an HTTP read prints: the status served, the header fields as the app gets them (with
    /// `Age`), `cache_status` (RFC 9211), and the body.
    static func readReply(_ r: HTTPReadResult) -> Reply {
        var fields: [String: JSONValue] = [
            "key": .string(r.key),
            "status": r.status.map { .int(Int64($0)) } ?? .null,
            "headers": .array(r.fields.lines.map { .array([.string($0.name), .string($0.value)]) }),
            "cache_status": .string(r.cacheStatus.text),
            "body": r.body?.entryValue ?? .null,
        ]
        // A text or binary body says so (a JSON body's output is as it was).
        if let body = r.body, body.kind != "json" { fields["body_kind"] = .string(body.kind) }
        if r.status == nil { fields["pending"] = .bool(true) }
        let label = "cache_status: "
        func pad(_ name: String) -> String { name + String(repeating: " ", count: label.count - name.count) }
        var human = [pad("key:") + r.key, pad("status:") + (r.status.map(String.init) ?? "(pending: the response is still to come)")]
        for (i, line) in r.fields.lines.enumerated() {
            human.append((i == 0 ? pad("headers:") : pad("")) + "\(line.name): \(line.value)")
        }
        human.append(label + r.cacheStatus.text)
        if let body = r.body { human.append(pad("body:") + bodyText(body)) }
        return Reply(fields, human: human)
    }

    // MARK: request

    /// The methods `request` sends: the unsafe ones (RFC 9110 §9.2.1) and HEAD (RFC 9111 §4.3.5).
    static let unsafeMethods = ["POST", "PUT", "DELETE", "PATCH", "HEAD"]

    static let request = CommandSpec(
        name: "request", summary: "send an unsafe method (or HEAD) to an HTTP key; its answer invalidates what it changed (RFC 9111 4.4)",
        arguments: [.oneOf(.word("POST"), .word("PUT"), .word("DELETE"), .word("PATCH"), .word("HEAD"),
                           meaning: "the method; a HEAD is answered from a fresh stored GET response (a hit, nothing sent), else sent, and its 200 updates the stored responses its validators match and drops the others (RFC 9111 4.3.5)"),
                    .key(meaning: "a key of an HTTP namespace (a path with its query)"),
                    .placeholder("VALUE", meaning: "the request's body, JSON (PUT and PATCH make it the server's value)").optional],
        options: [.json("headers", placeholder: "{...}", meaning: "the request's header fields, a JSON object")],
        flags: [.flag("nowait", meaning: "send it and return at once")],
        example: "request POST api:/feed {\"text\":\"hi\"}", run: request,
        writes: CallForm(.httpRequest) { call, returned, w throws(Diagnostic) in
            guard case .httpRequest(let method, let key, let request, let body, let nowait) = call else { throw w.notItsKind(call) }
            guard unsafeMethods.contains(method) else { throw w.fail("request \(method): the shell sends POST, PUT, DELETE, PATCH or HEAD") }
            try w.checkKey(key)
            let command = "request \(method) \(key)" + headersOption(request) + (body.map { " " + TranscriptWriter.optionJSON($0) } ?? "")
                + (nowait ? " --nowait" : "")
            guard case .http(let result) = returned else { return (command, nil) }
            return (command, readReply(result))
        })

    /// ` headers={...}` for a request's fields (its members in their order); empty for none.
    static func headersOption(_ fields: HTTPFields) -> String {
        fields.isEmpty ? "" : " headers=" + TranscriptWriter.optionJSON(compact: headersObject(fields))
    }

    /// `request METHOD KEY [headers={...}] [VALUE] [--nowait]`: never answered from the cache; a
    /// 2xx or 3xx answer invalidates KEY and the same-origin Location and Content-Location.
    static func request(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(try request.joiningJSONOptions(command, source), source, for: request)
        try args.expect(2...3)
        let methodWord = args.positional[0]
        guard methodWord.kind == .bare, unsafeMethods.contains(methodWord.text) else {
            throw ShellError("request: the method is POST, PUT, DELETE, PATCH or HEAD (get reads), not \(Arguments.describe(methodWord))",
                             at: methodWord.offset)
        }
        var key = try args.key(1, in: cache)
        guard cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil else {
            throw ShellError("request: \(key) is not a key of an HTTP namespace (ns NAME http)", at: args.positional[1].offset)
        }
        key = try Self.key(key, at: args.positional[1].offset, cache)
        var fields = HTTPFields()
        if let (text, word) = args.option("headers") { fields = try headers(text, at: word.offset + 8, command: "request") }
        let body = args.positional.count == 3 ? try args.value(2) : nil
        let result: HTTPReadResult
        do {
            result = try cache.httpRequest(methodWord.text, key, request: fields, body: body,
                                           nowait: args.flag("nowait") || session.frames.inScheduled)
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
        return readReply(result)
    }

    // MARK: explain

    /// `explain KEY` of an HTTP key with stored responses: each one's freshness arithmetic
    /// (RFC 9111 §4.2) and what a read that selects it does now.
    static func explainReply(_ key: String, _ explanations: [HTTPExplanation]) -> Reply {
        func duration(_ ms: Int64) -> String { (ms < 0 ? "-" : "") + TimeText.formatDuration(abs(ms)) }
        var human = ["key:       \(key)", "responses: \(explanations.count)"]
        var list: [JSONValue] = []
        for (i, e) in explanations.enumerated() {
            let vary = e.varyValues.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            let fresh = e.lifetimeMs > e.ageMs
            human.append("response \(i + 1): \(e.status)" + (vary.isEmpty ? "" : " for " + vary))
            human.append("  lifetime:  \(duration(e.lifetimeMs)) (\(e.lifetimeSource))")
            human.append("  age:       \(duration(e.ageMs)) = max(apparent \(duration(e.apparentAgeMs)), Age \(duration(e.ageFieldMs))"
                         + " + delay \(duration(e.responseDelayMs))) + resident \(duration(e.residentMs))")
            human.append("  " + (fresh ? "fresh:     for \(duration(e.lifetimeMs - e.ageMs)) more" : "stale:     for \(duration(e.ageMs - e.lifetimeMs))"))
            human.append("  next read: \(e.next)")
            list.append(.object([
                "status": .int(Int64(e.status)), "vary": .object(e.varyValues.mapValues(JSONValue.string)),
                "lifetime_ms": .int(e.lifetimeMs), "lifetime_from": .string(e.lifetimeSource), "age_ms": .int(e.ageMs),
                "apparent_age_ms": .int(e.apparentAgeMs), "age_field_ms": .int(e.ageFieldMs),
                "response_delay_ms": .int(e.responseDelayMs), "resident_ms": .int(e.residentMs),
                "fresh": .bool(fresh), "next": .string(e.next),
            ]))
        }
        return Reply(["key": .string(key), "responses": .array(list)], human: human)
    }
}
