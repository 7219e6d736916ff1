import CacheCore

/// `server ...`: the simulated server's data, latency, failures, connectivity and log.
enum ServerCommands {
    static let subcommands = ["set", "patch", "delete", "show", "latency", "fail", "offline", "online", "log", "next", "strict"]

    static func server(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        guard command.words.count >= 2 else {
            throw ShellError("server needs one of: " + subcommands.joined(separator: ", "), at: command.end)
        }
        let sub = command.words[1]
        let server = session.server
        switch sub.text {
        case "set":
            let args = try Arguments(command, source, skip: 2, leading: 2)
            try args.expect(2...2, usage: "KEY VALUE")
            let key = try args.key(0)
            server.set(key, try args.value(1), at: cache.now)
            return .ok(["key": .string(key)], human: ["server: set \(key)"])
        case "patch":
            let args = try Arguments(command, source, skip: 2, leading: 2)
            try args.expect(2...2, usage: "KEY PATCH")
            let key = try args.key(0)
            let patch = try args.patch(1)
            let value: JSONValue?
            do { value = try server.patched(key, patch) } catch { throw ShellError("\(error)", at: args.positional[1].offset) }
            guard let value else { throw ShellError("the server has no \(key)", at: args.positional[0].offset) }
            server.set(key, value, at: cache.now)
            return .ok(["key": .string(key), "value": value], human: ["server: \(key) = \(value.compactText)"])
        case "delete":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(1...1, usage: "KEY")
            let key = try args.key(0)
            let existed = server.delete(key, at: cache.now)
            return .ok(["key": .string(key), "deleted": .bool(existed)],
                       human: [existed ? "server: deleted \(key)" : "server: no \(key) to delete"])
        case "show":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(0...1, usage: "[KEY]")
            if args.positional.count == 1 {
                let key = try args.key(0)
                let value = server.data[key]
                return Reply(["key": .string(key), "value": value ?? .null,
                              "modified_at": server.modifiedAt[key].map { .string(TimeText.iso8601(ms: $0)) } ?? .null],
                             order: ["key", "value", "modified_at"])
            }
            let keys = server.data.keys.sorted()
            var data: [String: JSONValue] = [:]
            for key in keys { data[key] = server.data[key]! }
            let rows = keys.map { [$0, TimeText.iso8601(ms: server.modifiedAt[$0] ?? cache.clockStart), server.data[$0]!.compactText] }
            var human = Render.table(["key", "modified_at", "value"], rows)
            if keys.isEmpty { human = ["(no data)"] }
            human.append("latency: \(TimeText.formatDuration(server.latency))" + (server.isOnline ? "" : ", offline"))
            return Reply(["data": .object(data), "latency_ms": .int(server.latency), "online": .bool(server.isOnline),
                          "latencies_ms": .object(server.latencies.mapValues { .int($0) })], human: human)
        case "latency":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(1...2, usage: "D [KEY]")
            let ms = try args.duration(0)
            if args.positional.count == 2 {
                let key = try args.key(1)
                server.latencies[key] = ms
                return .ok(["key": .string(key), "latency_ms": .int(ms)], human: ["server: latency of \(key) \(TimeText.formatDuration(ms))"])
            }
            server.latency = ms
            return .ok(["latency_ms": .int(ms)], human: ["server: latency \(TimeText.formatDuration(ms))"])
        case "fail":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(1...2, usage: "N [KEY]")
            let n = try args.count(0, what: "N")
            let key = args.positional.count == 2 ? try args.key(1) : nil
            server.fail(next: n, key: key)
            var fields: [String: JSONValue] = ["fail": .int(Int64(n))]
            if let key { fields["key"] = .string(key) }
            return .ok(fields, human: ["server: the next \(n) request\(n == 1 ? "" : "s")" + (key.map { " for \($0)" } ?? "") + " will fail"])
        case "offline":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(0...0, usage: "no arguments")
            server.isOnline = false
            return .ok(["online": .bool(false)], human: ["server: offline"])
        case "online":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(0...0, usage: "no arguments")
            server.isOnline = true
            cache.originDidComeOnline()
            return .ok(["online": .bool(true)], human: ["server: online"])
        case "log":
            let args = try Arguments(command, source, skip: 2)
            try args.expect(0...1, usage: "[clear]")
            if let word = args.positional.first {
                guard word.text == "clear" else { throw ShellError("server log takes nothing or clear", at: word.offset) }
                cache.clearRequestLog()
                return .ok(human: ["server: log cleared"])
            }
            let log = cache.requestLog
            let rows = log.map { [String($0.atMs), $0.kind.rawValue, $0.fate.rawValue, $0.keys.joined(separator: " ")] }
            return Reply(["requests": .array(log.map {
                .object(["at_ms": .int($0.atMs), "kind": .string($0.kind.rawValue),
                         "keys": .array($0.keys.map(JSONValue.string)), "fate": .string($0.fate.rawValue)])
            })], human: log.isEmpty ? ["(no requests)"] : Render.table(["at_ms", "kind", "fate", "keys"], rows))
        case "next": return try ServerScriptCommands.next(session, cache, command, source)
        case "strict": return try ServerScriptCommands.strict(session, cache, command, source)
        default:
            throw ShellError("unknown server command \"\(sub.text)\" (use " + subcommands.joined(separator: ", ") + ")", at: sub.offset)
        }
    }
}
