import CacheCore

/// `get`, `mget`, `peek`, `keys`: the read path (B3–B7) and inspection.
enum ReadCommands {
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

    private static let getFlags: Set<String> = ["force", "nowait", "async"]

    static func get(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, flags: getFlags)
        try args.expect(1...1, usage: "KEY [--force] [--nowait|--async]")
        let key = try args.key(0)
        if args.flag("async") { return try asyncGet(key, args, on: cache) }
        let result: ReadResult
        do {
            result = try cache.read(key, force: args.flag("force"), nowait: args.flag("nowait") || session.inScheduled)
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
        return .read(result, isGet: true)
    }

    static func mget(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(1...Int.max, usage: "KEY...")
        var keys: [String] = []
        for i in args.positional.indices { keys.append(try args.key(i)) }
        let results: [ReadResult]
        do { results = try cache.mget(keys) } catch { throw ShellError(error.message, at: command.offset) }
        return mgetReply(results, colour: session.options.colour)
    }

    /// What `mget` prints.
    static func mgetReply(_ results: [ReadResult], colour: Bool) -> Reply {
        let rows = results.map { r -> [String] in
            var notes: [String] = []
            if r.offline { notes.append("offline") }
            if r.pending { notes.append("pending") }
            if let error = r.error { notes.append("error: \(error)") }
            return [r.key, r.state.rawValue, r.source.rawValue, r.ageMs.map(String.init) ?? "-",
                    r.expiresInMs.map(String.init) ?? "-", notes.joined(separator: ", "),
                    (r.value ?? .null).compactText]
        }
        return Reply(["results": .array(results.map { .object(fields($0, isGet: true)) })],
                     human: Render.table(["key", "state", "source", "age_ms", "expires_in_ms", "notes", "value"], rows,
                                         colourColumn: 1, colour: colour))
    }

    static func peek(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(1...1, usage: "KEY")
        return .read(cache.peek(try args.key(0)), isGet: false)
    }

    static func keys(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(0...1, usage: "[PATTERN]")
        if let word = args.positional.first, word.text.utf8.count > Glob.maxLength {
            throw ShellError("keys: pattern longer than \(Glob.maxLength) bytes (\(word.text.utf8.count))", at: word.offset)
        }
        let pattern = args.positional.first.map { Glob(KeyName.canonical($0.text)) }
        return keysReply(cache.keys(matching: pattern).map { KeyEntry(key: $0.key, state: $0.state, ageMs: $0.ageMs) },
                         colour: session.options.colour)
    }

    /// What `keys` prints.
    static func keysReply(_ entries: [KeyEntry], colour: Bool) -> Reply {
        let rows = entries.map { [$0.key, $0.state.rawValue, String($0.ageMs)] }
        return Reply(["entries": .array(entries.map {
            .object(["key": .string($0.key), "state": .string($0.state.rawValue), "age_ms": .int($0.ageMs)])
        })], human: entries.isEmpty ? ["(no entries)"] : Render.table(["key", "state", "age_ms"], rows, colourColumn: 1,
                                                                       colour: colour))
    }
}
