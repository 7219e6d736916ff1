import CacheCore

/// `server ...`: the simulated server's data, latency, failures, connectivity and log.
enum ServerCommands {
    static let family = CommandFamily(title: "The simulated server", commands: [server])

    static let server = CommandSpec(
        name: "server", summary: "change or show the simulated server",
        subcommands: [set, patch, delete, show, latency, fail, offline, online, log,
                      ServerScriptCommands.next, ServerScriptCommands.strict],
        example: "server set feed:home [{\"id\":1,\"likes\":3}]")

    static let set = CommandSpec(
        subcommand: "set", summary: "set the server's value without telling the client",
        arguments: [.key(), .value().optional],
        options: [.count("version", meaning: "the key's server version from now on: each later change adds 1, "
                            + "and its answers carry it (0 to 2^53)"),
                  .json("headers", placeholder: "{...}", meaning: "in an HTTP namespace, the header fields the key is served with "
                            + "from now on, a JSON object (else those it had); the server adds Date and answers conditional requests with 304"),
                  .json("text", placeholder: "\"...\"", meaning: "in an HTTP namespace, a text body (a JSON string) instead of a JSON VALUE"),
                  .text("binary", placeholder: "SIZE:sha256:HEX", meaning: "in an HTTP namespace, a binary body, as its size and SHA-256, instead of a JSON VALUE")],
        run: set)

    /// `set` as an HTTP key parses it: the VALUE a word like any other, so `text=` and `binary=`
    /// are options (a bare VALUE holding `=` is written quoted there).
    static let setHTTP = CommandSpec(
        subcommand: "set", summary: set.summary,
        arguments: [.key(), .placeholder("VALUE", meaning: "the value, JSON").optional],
        options: set.options, run: set.run)

    static func set(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let joined = try Self.set.joiningJSONOptions(command, source)
        var args = try Arguments(joined, source, for: set)
        if cache.hasHTTPNamespaces, let first = args.positional.first, cache.httpSettings(ofKey: first.text) != nil {
            // An HTTP key's VALUE is not taken as it stands: text= and binary= are options there.
            args = try Arguments(joined, source, for: setHTTP)
        }
        let body = try HTTPCommands.body(args, command: "server set")
        try args.expect(body == nil ? 2...2 : 1...1, usage: body == nil ? "KEY VALUE" : "KEY text=... or KEY binary=... (the body, without a VALUE)")
        var key = try args.key(0)
        var headers: HTTPFields?
        if cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil {
            key = try HTTPCommands.key(key, at: args.positional[0].offset, cache)
            if let (text, word) = args.option("headers") { headers = try HTTPCommands.headers(text, at: word.offset + 8, command: "server set") }
        } else if let (_, word) = args.option("headers") ?? args.option("text") ?? args.option("binary") {
            throw ShellError("server set: \(word.text.prefix { $0 != "=" })= is for a key of an HTTP namespace (ns NAME http); \(key) is not one", at: word.offset)
        }
        if let (body, word) = body {
            if let (_, version) = args.option("version") { throw ShellError("server set: version= goes with a JSON VALUE", at: version.offset) }
            _ = word
            server.set(key, body: body, at: cache.now, headers: headers)
            return .ok(["key": .string(key)], human: ["server: set \(key)"])
        }
        server.set(key, try args.value(1), at: cache.now, version: try args.version(), headers: headers)
        return .ok(["key": .string(key)], human: ["server: set \(key)"])
    }

    static let patch = CommandSpec(
        subcommand: "patch", summary: "patch the server's value without telling the client",
        arguments: [.key(), .patch()],
        run: patch)

    static func patch(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: Self.patch)
        try args.expect(2...2)
        let key = try args.key(0)
        let patch = try args.patch(1)
        let value: JSONValue?
        do { value = try server.patched(key, patch) } catch { throw ShellError("\(error)", at: args.positional[1].offset) }
        guard let value else { throw ShellError("the server has no \(key)", at: args.positional[0].offset) }
        server.set(key, value, at: cache.now)
        return .ok(["key": .string(key), "value": value], human: ["server: \(key) = \(value.compactText)"])
    }

    static let delete = CommandSpec(
        subcommand: "delete", summary: "delete the server's value; a fetch then fails with not found",
        arguments: [.key()],
        run: delete)

    static func delete(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: delete)
        try args.expect(1...1)
        let key = try args.key(0)
        let existed = server.delete(key, at: cache.now)
        return .ok(["key": .string(key), "deleted": .bool(existed)],
                   human: [existed ? "server: deleted \(key)" : "server: no \(key) to delete"])
    }

    static let show = CommandSpec(
        subcommand: "show", summary: "the server's data, or one value with its modification time",
        arguments: [.key().optional],
        run: show)

    static func show(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: show)
        try args.expect(0...1)
        if args.positional.count == 1 {
            let key = try HTTPCommands.key(try args.key(0), at: args.positional[0].offset, cache)
            let value = server.data[key]
            var fields: [String: JSONValue] = ["key": .string(key), "value": value ?? .null,
                                               "modified_at": server.modifiedAt[key].map { .string(TimeText.iso8601(ms: $0)) } ?? .null]
            // A numbered key's version (SPEC §1.1 Versions), only when it has one.
            if let version = server.versions[KeyName.canonical(key)] { fields["version"] = .int(Int64(version)) }
            // An HTTP key's header fields (docs/SPEC.md, HTTP namespaces), only when it has some.
            if let headers = server.headers[KeyName.canonical(key)] {
                var object: [String: JSONValue] = [:]
                for line in headers.lines where object[line.name] == nil { object[line.name] = .string(headers[line.name] ?? "") }
                fields["headers"] = .object(object)
            }
            return Reply(fields, order: ["key", "value", "modified_at", "version", "headers"])
        }
        let keys = server.data.keys.sorted()
        var data: [String: JSONValue] = [:]
        for key in keys { data[key] = server.data[key]! }
        let rows = keys.map { [$0, TimeText.iso8601(ms: server.modifiedAt[$0] ?? cache.clockStart), server.data[$0]!.compactText] }
        let latency = "latency: \(TimeText.formatDuration(server.latency))" + (server.isOnline ? "" : ", offline")
        let fields: [String: JSONValue] = ["data": .object(data), "latency_ms": .int(server.latency), "online": .bool(server.isOnline),
                                           "latencies_ms": .object(server.latencies.mapValues { .int($0) })]
        if keys.isEmpty { return Reply(fields, human: ["(no data)", latency]) }
        return Reply(fields, table: TableText(["key", "modified_at", "value"], rows, after: [latency]))
    }

    static let latency = CommandSpec(
        subcommand: "latency", summary: "answer after D (default 100ms), or only KEY's requests",
        arguments: [.duration(), .key().optional],
        run: latency)

    static func latency(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: latency)
        try args.expect(1...2)
        let ms = try args.duration(0)
        if args.positional.count == 2 {
            let key = try args.key(1, in: cache)
            server.latencies[key] = ms
            return .ok(["key": .string(key), "latency_ms": .int(ms)], human: ["server: latency of \(key) \(TimeText.formatDuration(ms))"])
        }
        server.latency = ms
        return .ok(["latency_ms": .int(ms)], human: ["server: latency \(TimeText.formatDuration(ms))"])
    }

    static let fail = CommandSpec(
        subcommand: "fail", summary: "the next N requests (for KEY) fail",
        arguments: [.count(), .key().optional],
        run: fail)

    static func fail(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: fail)
        try args.expect(1...2)
        let n = try args.count(0, what: "N")
        let key = args.positional.count == 2 ? try args.key(1, in: cache) : nil
        server.fail(next: n, key: key)
        var fields: [String: JSONValue] = ["fail": .int(Int64(n))]
        if let key { fields["key"] = .string(key) }
        return .ok(fields, human: ["server: the next \(n) request\(n == 1 ? "" : "s")" + (key.map { " for \($0)" } ?? "") + " will fail"])
    }

    static let offline = CommandSpec(
        subcommand: "offline", summary: "send no request; every cached value is served, flagged offline",
        run: offline)

    static func offline(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: offline)
        try args.expect(0...0)
        server.isOnline = false
        return .ok(["online": .bool(false)], human: ["server: offline"])
    }

    static let online = CommandSpec(
        subcommand: "online", summary: "send requests again, first the queued mutations",
        run: online,
        writes: CallForm(.originOnline) { _, _, _ in ("server online", .ok(["online": .bool(true)], human: ["server: online"])) })

    static func online(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let server = session.server
        let args = try Arguments(command, source, for: online)
        try args.expect(0...0)
        server.isOnline = true
        // Every client's cache sees the server again (SPEC §3 Clients).
        try session.forEachClient(cache) { $0.originDidComeOnline() }
        return .ok(["online": .bool(true)], human: ["server: online"])
    }

    static let log = CommandSpec(
        subcommand: "log", summary: "the requests received (the last 10000), with times and fates; clear forgets them",
        arguments: [.word("clear").optional],
        run: log,
        writes: CallForm(.clearRequestLog) { _, _, _ in ("server log clear", .ok(human: ["server: log cleared"])) })

    static func log(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: Self.log)
        try args.expect(0...1)
        if let word = args.positional.first {
            guard word.text == "clear" else { throw ShellError("server log takes nothing or clear", at: word.offset) }
            cache.clearRequestLog()
            return .ok(human: ["server: log cleared"])
        }
        let log = cache.requestLog
        let dropped = cache.requestLogDropped
        let rows = log.map { [String($0.atMs), $0.kind.rawValue, $0.fate.rawValue, $0.keys.joined(separator: " ")] }
        // The log keeps the latest requests only: say how many older ones it no longer lists.
        let note = dropped == 0 ? [] : ["(\(dropped) earlier request\(dropped == 1 ? "" : "s") dropped: the log keeps the last \(Cache.requestLogLimit))"]
        var fields: [String: JSONValue] = ["requests": .array(log.map {
            .object(["at_ms": .int($0.atMs), "kind": .string($0.kind.rawValue),
                     "keys": .array($0.keys.map(JSONValue.string)), "fate": .string($0.fate.rawValue)])
        })]
        if dropped > 0 { fields["dropped"] = .int(Int64(dropped)) }
        if log.isEmpty { return Reply(fields, human: note + ["(no requests)"]) }
        return Reply(fields, table: TableText(before: note, ["at_ms", "kind", "fate", "keys"], rows))
    }
}
