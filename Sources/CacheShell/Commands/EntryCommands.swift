import CacheCore

/// `put`, `get`, `mget`, `peek`, `touch`, `keys`, `expire`, `invalidate`, `evict`, `clear`,
/// `memory-warning`: the read path (B3–B7), inspection, and local writes (B1, B6, B9, B13).
enum EntryCommands {
    static let family = CommandFamily(title: "Reading and writing", commands: [
        put, get, HTTPCommands.request, mget, pages, peek, touch, keys, expire, invalidate, evict, clear, memoryWarning,
    ])

    static let readOrder = ["key", "state", "value", "source", "age_ms", "expires_in_ms", "tags", "offline", "pending", "error"]

    /// The SPEC §4 fields of a read.
    static func fields(_ r: ReadResult, isGet: Bool) -> [String: JSONValue] {
        var f: [String: JSONValue] = [
            "key": .string(r.key),
            "state": .string(r.state.rawValue),
            "value": r.value ?? .null,
            "age_ms": r.ageMs.map(JSONValue.int) ?? .null,
            "expires_in_ms": r.expiresInMs.map(JSONValue.int) ?? .null,
            "tags": .array(r.tags.map(JSONValue.string)),
        ]
        if isGet {
            f["source"] = .string(r.source.rawValue)
            if r.offline { f["offline"] = .bool(true) }
            if let error = r.error { f["error"] = .string(error) }
            if r.pending { f["pending"] = .bool(true) }
        }
        return f
    }

    static let put = CommandSpec(
        name: "put", summary: "store a value as if just fetched",
        arguments: [.key(meaning: Meaning.key), .value(meaning: "JSON; a bare word that is not JSON is a string")],
        options: [.tags("tags", meaning: "tags for invalidate tag:T, comma-separated")],
        example: "put feed:home [{\"id\":1,\"likes\":3}] tags=home", run: put,
        writes: CallForm(.put) { call, returned, w throws(Diagnostic) in
            guard case .put(let key, let value, let tags) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            for tag in tags {
                try w.checkWord(tag, "tag")
                if tag.contains(",") { throw w.fail("the tag \(JSONValue.string(tag).compactText) holds a comma: tags=a,b cannot give it") }
            }
            if Set(tags).count != tags.count { throw w.fail("put gives a tag twice, which tags=a,b cannot express") }
            return ("put \(key) \(value.compactText)" + (tags.isEmpty ? "" : " tags=" + tags.joined(separator: ",")), w.keys(returned))
        })

    static func put(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let words = command.words
        if words.count == 3 && !words[1].isOptionOrFlag && !words[2].isOptionOrFlag {
            // The common form, `put KEY VALUE`: the same checks in the same order, without sorting words.
            let key = try Arguments.key(words[1])
            return .keys(cache.put(key, try Arguments.storedValue(words[2]), tags: []))
        }
        let args = try Arguments(command, source, for: put)
        try args.expect(2...2)
        let key = try args.key(0)
        let value = try args.value(1)
        var tags: [String] = []
        if let (text, word) = args.option("tags") {
            tags = try Arguments.tags(text, at: word, command: "put", option: "tags")
            var seen = Set<String>()
            tags = tags.filter { seen.insert($0).inserted }
        }
        return .keys(cache.put(key, value, tags: tags))
    }

    static let get = CommandSpec(
        name: "get", summary: "read as the app does: serve, refresh or fetch",
        arguments: [.key(meaning: Meaning.key)],
        options: [.json("headers", placeholder: "{...}",
                        meaning: "in an HTTP namespace, the request's header fields, a JSON object (as {\"Cache-Control\":\"no-cache\"})")],
        flags: [
            .flag("force", meaning: "always send a new request and wait for it"),
            .flag("nowait", meaning: "start what the read would start and return at once with what the cache has"),
            .flag("async", meaning: "read as an app awaits: at once if served, else waiting: true now and a read event line when it completes"),
        ],
        example: "get feed:home --nowait", run: get,
        writes: CallForm(.get, .httpGet) { call, returned, w throws(Diagnostic) in
            if case .httpGet(let key, let request, let nowait) = call {
                // An HTTP read: `get KEY headers={...} [--nowait]`, printed as the shell prints one.
                try w.checkKey(key)
                let command = "get \(key)" + HTTPCommands.headersOption(request) + (nowait ? " --nowait" : "")
                guard case .http(let result) = returned else { return (command, nil) }
                return (command, HTTPCommands.readReply(result))
            }
            guard case .get(let key, let force, let mode) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            let command = "get \(key)" + (force ? " --force" : "") + (mode == .nowait ? " --nowait" : mode == .async ? " --async" : "")
            switch returned {
            case .read(let r): return (command, .read(r, isGet: true))
            case .waiting: return (command, waiting(KeyName.canonical(key)))
            default: return (command, nil)
            }
        })

    static func get(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        if command.words.count == 2 && !command.words[1].isOptionOrFlag {
            // The common form, `get KEY`: no flags to sort out.
            let key = try Arguments.key(command.words[1])
            try Arguments.checkNotNamespace(key, at: command.words[1].offset, cache, command: "get",
                                            typedBare: !command.words[1].text.contains(":"))
            if cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil { return try httpGet(session, cache, command, source) }
            do {
                return .read(try cache.read(key, force: false, nowait: session.frames.inScheduled), isGet: true)
            } catch {
                throw ShellError(error.message, at: command.offset)
            }
        }
        let args = try Arguments(try get.joiningJSONOptions(command, source), source, for: get)
        // The usage an error quotes is the ordinary form, as it always was (help get shows headers=).
        try args.expect(1...1, usage: "KEY [--force] [--nowait] [--async]")
        let key = try args.key(0, in: cache)
        if cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil { return try httpGet(session, cache, command, source) }
        if let (_, word) = args.option("headers") {
            throw ShellError("get: headers= is for a key of an HTTP namespace (ns NAME http); \(key) is not one", at: word.offset)
        }
        if args.flag("async") { return try asyncGet(key, args, on: cache) }
        let result: ReadResult
        do {
            result = try cache.read(key, force: args.flag("force"), nowait: args.flag("nowait") || session.frames.inScheduled)
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
        return .read(result, isGet: true)
    }

    /// `get KEY [headers={...}] [--nowait]` of a key of an HTTP namespace (docs/SPEC.md, HTTP
    /// namespaces): RFC 9111 decides on the clock.
    static func httpGet(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(try get.joiningJSONOptions(command, source), source, for: get)
        try args.expect(1...1)
        let key = try HTTPCommands.key(try args.key(0, in: cache), at: args.positional[0].offset, cache)
        for flag in ["force", "async"] where args.flag(flag) {
            throw ShellError("get --\(flag) is not for a key of an HTTP namespace: send headers={\"Cache-Control\":\"no-cache\"} to validate",
                             at: command.offset)
        }
        var request = HTTPFields()
        if let (text, word) = args.option("headers") { request = try HTTPCommands.headers(text, at: word.offset + 8, command: "get") }
        do {
            return HTTPCommands.readReply(try cache.httpRead(key, request: request, nowait: args.flag("nowait") || session.frames.inScheduled))
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
    }

    static let mget = CommandSpec(
        name: "mget", summary: "read many keys with one server request",
        arguments: [.key(meaning: "the keys, answered in this order").repeated],
        flags: [.flag("nowait", meaning: "send the request and return at once with what the cache has")],
        example: "mget feed:home profile:42", run: mget,
        writes: CallForm(.mget) { call, returned, w throws(Diagnostic) in
            guard case .mget(let list, let nowait) = call else { throw w.notItsKind(call) }
            for key in list { try w.checkKey(key) }
            let command = "mget " + list.joined(separator: " ") + (nowait ? " --nowait" : "")
            guard case .reads(let results) = returned else { return (command, nil) }
            return (command, mgetReply(results))
        })

    static func mget(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: mget)
        try args.expect(1...Int.max)
        var keys: [String] = []
        for i in args.positional.indices { keys.append(try args.key(i, in: cache)) }
        let results: [ReadResult]
        do { results = try cache.mget(keys, nowait: args.flag("nowait") || session.frames.inScheduled) } catch { throw ShellError(error.message, at: command.offset) }
        return mgetReply(results)
    }

    /// What `mget` prints.
    static func mgetReply(_ results: [ReadResult]) -> Reply {
        let rows = results.map { r -> [String] in
            var notes: [String] = []
            if r.offline { notes.append("offline") }
            if r.pending { notes.append("pending") }
            if let error = r.error { notes.append("error: \(error)") }
            return [r.key, r.state.rawValue, r.source.rawValue, r.ageMs.map(String.init) ?? "-",
                    r.expiresInMs.map(String.init) ?? "-", notes.joined(separator: ", "),
                    r.valueText ?? "null"]
        }
        return Reply(["results": .array(results.map { .object(fields($0, isGet: true)) })],
                     table: TableText(["key", "state", "source", "age_ms", "expires_in_ms", "notes", "value"], rows,
                                      colourColumn: 1))
    }

    static let pages = CommandSpec(
        name: "pages", summary: "read a paged list: its pages, the next one, or all refetched",
        arguments: [.key(meaning: "the list; its pages are the keys KEY@1, KEY@2, ...")],
        flags: [
            .flag("next", meaning: "fetch the page after the last one cached (page 1 when none is), as get of it does"),
            .flag("refetch", meaning: "send one new request for every cached page and wait for it"),
            .flag("nowait", meaning: "send what the read would send and return at once with what the cache has"),
        ],
        example: "pages feed:timeline", run: pages,
        writes: CallForm(.pages) { call, returned, w throws(Diagnostic) in
            guard case .pages(let key, let refetch, let nowait, let next) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            if next && refetch { throw w.fail("a pages call both next and refetch, which no command makes") }
            let command = "pages \(key)" + (next ? " --next" : "") + (refetch ? " --refetch" : "") + (nowait ? " --nowait" : "")
            guard case .reads(let results) = returned else { return (command, nil) }
            if next, results.count == 1 { return (command, .read(results[0], isGet: true)) }
            return (command, mgetReply(results))
        })

    /// `pages LIST [--next | --refetch] [--nowait]` (SPEC §1.1 Pages).
    static func pages(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: pages)
        try args.expect(1...1)
        let key = try args.key(0, in: cache)
        if args.flag("next") && args.flag("refetch") {
            throw ShellError("pages: --next and --refetch do not go together", at: command.offset)
        }
        let nowait = args.flag("nowait") || session.frames.inScheduled
        if args.flag("next") {
            do { return .read(try cache.nextPage(key, nowait: nowait), isGet: true) } catch { throw ShellError(error.message, at: command.offset) }
        }
        do {
            return mgetReply(try cache.pages(key, refetch: args.flag("refetch"), nowait: nowait))
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
    }

    static let peek = CommandSpec(
        name: "peek", summary: "inspect an entry without touching anything",
        arguments: [.key(meaning: Meaning.key)],
        example: "peek feed:home", run: peek,
        writes: CallForm(.peek) { call, returned, w throws(Diagnostic) in
            guard case .peek(let key) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            guard case .read(let r) = returned else { return ("peek \(key)", nil) }
            return ("peek \(key)", .read(r, isGet: false))
        })

    static func peek(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: peek)
        try args.expect(1...1)
        return .read(cache.peek(try args.key(0, in: cache)), isGet: false)
    }

    static let touch = CommandSpec(
        name: "touch", summary: "use an entry for its eviction order without reading it",
        arguments: [.key(meaning: Meaning.key)],
        example: "touch feed:home", run: touch,
        writes: CallForm(.touch) { call, returned, w throws(Diagnostic) in
            guard case .touch(let key) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            return ("touch \(key)", w.keys(returned))
        })

    static func touch(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: touch)
        try args.expect(1...1)
        return .keys(cache.touch(try args.key(0, in: cache)))
    }

    static let keys = CommandSpec(
        name: "keys", summary: "entries, least recently used first, with state and age",
        arguments: [.pattern(meaning: "a glob over the printed key: * (also matches :), ?, [...]; at most 1024 bytes").optional],
        example: "keys feed:*", run: keys,
        writes: CallForm(.keys) { call, returned, w throws(Diagnostic) in
            guard case .keys(let pattern) = call else { throw w.notItsKind(call) }
            if let pattern { try w.checkWord(pattern, "keys pattern") }
            guard case .entries(let entries) = returned else { return ("keys", nil) }
            return ("keys" + (pattern.map { " " + $0 } ?? ""), keysReply(entries))
        })

    static func keys(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: keys)
        try args.expect(0...1)
        if let word = args.positional.first, word.text.utf8.count > Glob.maxLength {
            throw ShellError("keys: pattern longer than \(Glob.maxLength) bytes (\(word.text.utf8.count))", at: word.offset)
        }
        if let word = args.positional.first { try Arguments.checkPattern(word.text, at: word, cache, command: "keys") }
        let pattern = args.positional.first.map { Glob(KeyName.canonical($0.text)) }
        return keysReply(cache.keys(matching: pattern).map { KeyEntry(key: $0.key, state: $0.state, ageMs: $0.ageMs) })
    }

    /// What `keys` prints.
    static func keysReply(_ entries: [KeyEntry]) -> Reply {
        let rows = entries.map { [$0.key, $0.state.rawValue, String($0.ageMs)] }
        let fields: [String: JSONValue] = ["entries": .array(entries.map {
            .object(["key": .string($0.key), "state": .string($0.state.rawValue), "age_ms": .int($0.ageMs)])
        })]
        if entries.isEmpty { return Reply(fields, human: ["(no entries)"]) }
        return Reply(fields, table: TableText(["key", "state", "age_ms"], rows, colourColumn: 1))
    }

    static let expire = CommandSpec(
        name: "expire", summary: "expire an entry now, or set its time to expiry",
        arguments: [.key(meaning: Meaning.key)],
        options: [.duration("in", meaning: "set the time to expiry to D from now instead")],
        example: "expire feed:home in=30s", run: expire,
        writes: CallForm(.expire) { call, returned, w throws(Diagnostic) in
            guard case .expire(let key, let delay) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            if let delay, delay < 0 { throw w.fail("expire in a negative time cannot be typed") }
            return ("expire \(key)" + (delay.map { " in=" + TimeText.formatDuration($0) } ?? ""), w.keys(returned))
        })

    static func expire(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: expire)
        try args.expect(1...1)
        let key = try args.key(0, in: cache)
        var delay: Int64?
        if let (text, word) = args.option("in") {
            delay = try Arguments.duration(text, at: word.offset + 3)
        }
        return .keys(cache.expire(key, in: delay))
    }

    static let invalidate = CommandSpec(
        name: "invalidate", summary: "mark entries stale so the next read refreshes them",
        arguments: [.oneOf(.key(meaning: "one entry"), .namespaceScope(meaning: "every entry of namespace NS"),
                           .tag(meaning: "every entry tagged T"))],
        example: "invalidate tag:home", run: invalidate,
        writes: CallForm(.invalidate) { call, returned, w throws(Diagnostic) in
            guard case .invalidate(let target) = call else { throw w.notItsKind(call) }
            switch target {
            case .key(let key): try w.checkKey(key)
            case .namespace(let ns): try w.checkNamespace(ns)
            case .tag(let tag): try w.checkWord(tag, "tag")
            }
            return ("invalidate " + RecordingFormat.targetText(target), w.keys(returned))
        })

    static func invalidate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: invalidate)
        try args.expect(1...1)
        let target = try args.target(0, in: cache)
        if case .namespace(let name) = target { _ = try Arguments.knownNamespace(name, at: args.positional[0], cache, command: "invalidate") }
        return .keys(cache.invalidate(target))
    }

    static let evict = CommandSpec(
        name: "evict", summary: "remove one entry",
        arguments: [.key(meaning: Meaning.key)],
        example: "evict feed:home", run: evict,
        writes: CallForm(.evict) { call, returned, w throws(Diagnostic) in
            guard case .evict(let key) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            return ("evict \(key)", w.keys(returned))
        })

    static func evict(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: evict)
        try args.expect(1...1)
        return .keys(cache.evict(try args.key(0, in: cache)))
    }

    static let clear = CommandSpec(
        name: "clear", summary: "remove all entries (logout), or one namespace's",
        arguments: [.oneOf(.namespace(), .namespaceScope(), meaning: "only this namespace (a known one)").optional],
        example: "clear feed", run: clear,
        writes: CallForm(.clear) { call, returned, w throws(Diagnostic) in
            guard case .clear(let namespace) = call else { throw w.notItsKind(call) }
            if let namespace { try w.checkNamespace(namespace) }
            return ("clear" + (namespace.map { " " + $0 } ?? ""), w.keys(returned))
        })

    static func clear(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: clear)
        try args.expect(0...1)
        let namespace = try args.positional.first.map { word throws(ShellError) in
            // `clear feed:*` as `invalidate feed:*` writes it.
            let name = word.kind == .bare && word.text.hasSuffix(":*")
                ? Word(text: String(word.text.dropLast(2)), kind: .bare, offset: word.offset, end: word.end - 2) : word
            return try Arguments.knownNamespace(try Arguments.namespace(name), at: word, cache, command: "clear")
        }
        return .keys(cache.clear(namespace: namespace))
    }

    static let memoryWarning = CommandSpec(
        name: "memory-warning", summary: "purge the purgeable namespaces (all if none is)",
        example: "memory-warning", run: memoryWarning,
        writes: CallForm(.memoryWarning) { _, returned, w in ("memory-warning", w.keys(returned)) })

    static func memoryWarning(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: memoryWarning)
        try args.expect(0...0)
        return .keys(cache.memoryWarning())
    }
}
