import CacheCore

/// `stats`, `watch`, `unwatch`: statistics (B14) and observers (B15).
enum ObserveCommands {
    static let family = CommandFamily(title: "Observing", commands: [stats, watch, unwatch])

    static func scope(_ args: Arguments, _ i: Int) throws(ShellError) -> WatchScope {
        let word = args.positional[i]
        if word.text == "*" { return .all }
        switch try args.target(i) {
        case .key(let key): return .key(key)
        case .namespace(let ns): return .namespace(ns)
        case .tag: throw ShellError("watch takes KEY, NS:* or *", at: word.offset)
        }
    }

    static func describe(_ scope: WatchScope) -> String {
        switch scope {
        case .all: return "*"
        case .key(let key): return key
        case .namespace(let ns): return ns + ":*"
        }
    }

    static let watch = CommandSpec(
        name: "watch", summary: "report every change to a key, a namespace or all",
        arguments: [.oneOf(.key(meaning: "one key"), .namespaceScope(meaning: "every key of namespace NS"),
                           .word("*", meaning: "every key")).optional],
        flags: [.flag("active", meaning: "KEY only: also refetch it when it is invalidated or expires, on focus and on server online")],
        example: "watch feed:*", run: watch)

    static func watch(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: watch)
        try args.expect(0...1, usage: watch.usageWithArgumentsRequired)
        if args.positional.isEmpty {
            if args.flag("active") { throw ShellError("watch --active needs a KEY", at: command.words[1].offset) }
            let scopes = cache.watchedScopes.map(describe)
            let active = cache.activeKeys
            var fields: [String: JSONValue] = ["watching": .array(scopes.map(JSONValue.string))]
            var human = [scopes.isEmpty ? "watching: (nothing)" : "watching: " + scopes.joined(separator: " ")]
            if !active.isEmpty {
                fields["active"] = .array(active.map(JSONValue.string))
                human.append("active: " + active.joined(separator: " "))
            }
            return Reply(fields, human: human)
        }
        let scope = try scope(args, 0)
        let active = args.flag("active")
        if active {
            guard case .key(let key) = scope else { throw ShellError("--active takes one KEY, not a pattern", at: args.positional[0].offset) }
            cache.setActive(key, true)
        }
        cache.watch(scope)
        var fields: [String: JSONValue] = ["watching": .string(describe(scope))]
        if active { fields["active"] = .bool(true) }
        return .ok(fields, human: ["watching \(describe(scope))" + (active ? " (active)" : "")])
    }

    static let unwatch = CommandSpec(
        name: "unwatch", summary: "stop watching one scope, or everything",
        arguments: [.oneOf(.key(), .namespaceScope(), .word("*"), meaning: "a scope given to watch").optional],
        example: "unwatch feed:*", run: unwatch)

    static func unwatch(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: unwatch)
        try args.expect(0...1)
        if args.positional.isEmpty {
            cache.unwatch(nil)
            cache.clearActive()
            return .ok(["unwatched": .string("all")], human: ["watching nothing"])
        }
        let scope = try scope(args, 0)
        if case .key(let key) = scope { cache.setActive(key, false) }
        let was = cache.unwatch(scope)
        return .ok(["unwatched": .string(describe(scope)), "was_watching": .bool(was)],
                   human: [was ? "stopped watching \(describe(scope))" : "was not watching \(describe(scope))"])
    }

    static func statsFields(_ s: Stats) -> [String: JSONValue] {
        var f: [String: JSONValue] = [:]
        for (name, value) in s.fields { f[name] = .int(Int64(value)) }
        f["hit_ratio"] = .double(s.hitRatio)
        return f
    }

    static func ratio(_ s: Stats) -> String {
        let r = s.hitRatio
        let thousandths = Int((r * 1000).rounded())
        return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - String(thousandths % 1000).count))\(thousandths % 1000)"
    }

    static let stats = CommandSpec(
        name: "stats", summary: "statistics per namespace and in total, or zero them",
        arguments: [.oneOf(.namespace(meaning: "only this namespace"), .word("reset", meaning: "zero every counter")).optional],
        example: "stats feed", run: stats)

    static func stats(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: stats)
        try args.expect(0...1, usage: "[NS] or reset")
        if let word = args.positional.first {
            if word.text == "reset" {
                cache.resetStats()
                return .ok(human: ["stats reset"])
            }
            let ns = try Arguments.namespace(word)
            let s = cache.stats(namespace: ns)
            var fields = statsFields(s)
            fields["namespace"] = .string(ns)
            return Reply(fields, human: Render.fieldLines(statsFields(s).merging(["hit_ratio": .string(ratio(s))]) { $1 },
                                                          order: s.fields.map(\.name) + ["hit_ratio"], colour: false))
        }
        let total = cache.stats()
        let perNamespace = cache.statsByNamespace()
        var fields = statsFields(total)
        var namespaces: [String: JSONValue] = [:]
        for (name, s) in perNamespace { namespaces[name] = .object(statsFields(s)) }
        fields["namespaces"] = .object(namespaces)
        let columns = ["namespace"] + total.fields.map(\.name) + ["hit_ratio"]
        var rows = perNamespace.map { [$0.name] + $0.stats.fields.map { String($0.value) } + [ratio($0.stats)] }
        rows.append(["total"] + total.fields.map { String($0.value) } + [ratio(total)])
        return Reply(fields, human: Render.table(columns, rows))
    }
}
