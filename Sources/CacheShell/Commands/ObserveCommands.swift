import CacheCore

/// `stats`, `watch`, `unwatch`, `timeline`, `explain`: statistics (B14), observers (B15), what
/// happened to a key, and why an entry is in its state.
enum ObserveCommands {
    static let family = CommandFamily(title: "Observing", commands: [stats, watch, unwatch, timeline, explain])

    static func scope(_ args: Arguments, _ i: Int, in cache: isolated Cache) throws(ShellError) -> WatchScope {
        let word = args.positional[i]
        if word.text == "*" { return .all }
        switch try args.target(i, in: cache) {
        case .key(let key): return .key(key)
        case .namespace(let ns): return .namespace(ns)
        case .tag: throw ShellError("\(args.name) takes KEY, NS:* or *", at: word.offset)
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
        example: "watch feed:*", run: watch,
        writes: CallForm(.watch) { call, _, w throws(Diagnostic) in
            guard case .watch(let scope) = call else { throw w.notItsKind(call) }
            try w.checkScope(scope)
            let text = RecordingFormat.scopeText(scope)
            return ("watch \(text)", .ok(["watching": .string(text)], human: ["watching \(text)"]))
        })

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
        let scope = try scope(args, 0, in: cache)
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
        flags: [.flag("keep-active", meaning: "leave the active keys active, as an app's unwatch does (else unwatch KEY makes KEY "
                      + "inactive, and unwatch alone every key)")],
        example: "unwatch feed:*", run: unwatch,
        writes: CallForm(.unwatch) { call, returned, w throws(Diagnostic) in
            guard case .unwatch(let scope) = call else { throw w.notItsKind(call) }
            guard let scope else { return ("unwatch", unwatchedAll) }
            try w.checkScope(scope)
            let text = RecordingFormat.scopeText(scope)
            let was: Bool
            if case .watched(let watched) = returned { was = watched } else { was = false }
            return ("unwatch \(text)", unwatched(text, was: was))
        })

    static func unwatch(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: unwatch)
        try args.expect(0...1)
        let keepActive = args.flag("keep-active")
        if args.positional.isEmpty {
            cache.unwatch(nil)
            if !keepActive { cache.clearActive() }
            return unwatchedAll
        }
        let scope = try scope(args, 0, in: cache)
        if case .key(let key) = scope, !keepActive { cache.setActive(key, false) }
        return unwatched(describe(scope), was: cache.unwatch(scope))
    }

    /// What `unwatch` prints: nothing watched any more.
    static var unwatchedAll: Reply { .ok(["unwatched": .string("all")], human: ["watching nothing"]) }

    /// What `unwatch SCOPE` prints, `scope` as `describe` gives it (also written by transcripts of recordings).
    static func unwatched(_ scope: String, was: Bool) -> Reply {
        .ok(["unwatched": .string(scope), "was_watching": .bool(was)],
            human: [was ? "stopped watching \(scope)" : "was not watching \(scope)"])
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
        example: "stats feed", run: stats,
        writes: CallForm(.resetStats) { _, _, _ in ("stats reset", .ok(human: ["stats reset"])) })

    static func stats(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: stats)
        try args.expect(0...1, usage: "[NS] or reset")
        if let word = args.positional.first {
            if word.text == "reset" {
                cache.resetStats()
                return .ok(human: ["stats reset"])
            }
            let ns = try Arguments.knownNamespace(try Arguments.namespace(word), at: word, cache, command: "stats")
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
        // One row per counter and a column per namespace, so it fits 80 columns (a table wider
        // than that, with many namespaces, turns into records).
        let all = perNamespace + [(name: "total", stats: total)]
        let columns = ["counter"] + all.map(\.name)
        var rows = total.fields.indices.map { i in [total.fields[i].name] + all.map { String($0.stats.fields[i].value) } }
        rows.append(["hit_ratio"] + all.map { ratio($0.stats) })
        return Reply(fields, table: TableText(columns, rows))
    }
}

// MARK: - explain, timeline

extension ObserveCommands {
    static let timeline = CommandSpec(
        name: "timeline", summary: "what happened to a key or a namespace this session, watched or not",
        arguments: [.oneOf(.key(meaning: "one key"), .namespaceScope(meaning: "every key of namespace NS"),
                           .word("*", meaning: "every key"))],
        example: "timeline feed:home", run: timeline)

    /// Runs `timeline KEY|NS:*|*`: the observer lines `watch` would have printed for it.
    static func timeline(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: timeline)
        try args.expect(1...1)
        let scope = try scope(args, 0, in: cache)
        if case .namespace(let name) = scope { _ = try Arguments.knownNamespace(name, at: args.positional[0], cache, command: "timeline") }
        return session.answerOverTimeline(cache) { timelineReply(scope, session, cache) }
    }

    /// `timeline`'s reply for `scope`, from the timeline of the client whose cache `cache` is.
    private static func timelineReply(_ scope: WatchScope, _ session: Session, _ cache: isolated Cache) -> Reply {
        let timeline = session.timeline(of: cache)
        let events = timeline.filter { event in
            switch scope {
            case .all: return true
            case .key(let key): return event.key == key
            case .namespace(let name): return KeyName.namespace(of: event.key) == name
            }
        }
        let dropped = timeline.dropped
        var human = events.map { Render.eventLine($0, clockStart: cache.clockStart, colour: session.options.colour) }
        if human.isEmpty { human = ["(no changes to \(describe(scope)) \(session.inspecting ? "since this shell attached" : "this session"))"] }
        if dropped > 0 {
            human.append("(\(dropped) earlier changes are not kept: the timeline keeps the last \(Timeline.limit), and at most \(Timeline.byteLimit >> 20) MiB of values)")
        }
        return Reply(["scope": .string(describe(scope)), "dropped": .int(Int64(dropped)),
                      "events": .array(events.map { .object(ItemText.eventFields($0, clockStart: cache.clockStart)) })],
                     human: human)
    }

    static let explain = CommandSpec(
        name: "explain", summary: "why an entry is in its state, and what is pending on it",
        arguments: [.key(meaning: Meaning.key)],
        example: "explain feed:home", run: explain)

    /// Runs `explain KEY`: its times, the reason for its state, its pending changes and requests,
    /// tags and ids, and its recency rank.
    static func explain(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: explain)
        try args.expect(1...1)
        var key = try args.key(0, in: cache)
        if cache.hasHTTPNamespaces, cache.httpSettings(ofKey: key) != nil {
            key = try HTTPCommands.key(key, at: args.positional[0].offset, cache)
            if let explanations = cache.httpExplain(key) { return HTTPCommands.explainReply(key, explanations) }
        }
        return session.answerOverTimeline(cache) { explainReply(key, session, cache) }
    }

    /// `explain`'s reply for `key`, from the timeline of the client whose cache `cache` is.
    private static func explainReply(_ key: String, _ session: Session, _ cache: isolated Cache) -> Reply {
        let now = cache.now
        let last = session.timeline(of: cache).filter { $0.key == key }.last
        let pages = pageStates(of: key, cache, session, now: now)
        guard let d = cache.details(of: key) else {
            let why = last.map { "\(key) is not cached: \($0.cause.rawValue) at \(TimeText.iso8601(ms: $0.at))" }
                ?? "\(key) is not cached (nothing happened to it \(session.inspecting ? "since this shell attached" : "this session"))"
            var fields: [String: JSONValue] = ["key": .string(key), "state": .string("absent"), "reason": .string(why)]
            guard let pages else { return Reply(fields, order: ["key", "state", "reason"]) }
            fields["pages"] = pages.json
            let human = Render.fieldLines(fields.merging(["pages": .string(pages.text)]) { $1 },
                                          order: ["key", "state", "reason", "pages"], colour: session.options.colour)
            return Reply(fields, human: human)
        }
        let time = { (ms: Int64) -> JSONValue in ms == .max ? .null : .string(TimeText.iso8601(ms: ms)) }
        let reason = reason(d, now: now, last: last)
        let pending = d.pending.map { change -> JSONValue in
            .object(["patch": change.patch, "sent": .bool(change.sent),
                     "mutation": change.mutation.map { .int(Int64($0)) } ?? .null])
        }
        let pendingText = d.pending.isEmpty ? "(none)" : d.pending.map { change in
            (change.mutation == nil ? "event " : change.sent ? "mutation sent " : "mutation queued ") + change.patch.compactText
        }.joined(separator: "; ")
        var fields: [String: JSONValue] = [
            "key": .string(d.key), "state": .string(d.state.rawValue), "reason": .string(reason),
            "stored_at": time(d.storedAt), "stale_at": d.staleAt.map(time) ?? .null, "expires_at": time(d.expiresAt),
            "age_ms": .int(now - d.storedAt), "tags": .array(d.tags.map(JSONValue.string)),
            "ids": .array(d.ids.map(JSONValue.string)), "pending": .array(pending),
            "fetching": d.fetchInFlight.map { .int(Int64($0)) } ?? .null,
            "recency_rank": .int(Int64(d.recencyRank)), "entries": .int(Int64(d.entries)),
        ]
        if d.expiresAt != .max { fields["expires_in_ms"] = .int(d.expiresAt - now) }
        if let version = d.version { fields["version"] = .int(Int64(version)) }
        if let pages { fields["pages"] = pages.json }
        var shown = fields
        if let pages { shown["pages"] = .string(pages.text) }
        let human = Render.fieldLines(shown.merging([
            "pending": .string(pendingText),
            "fetching": .string(d.fetchInFlight.map { "request \($0) in flight" } ?? "(no request in flight)"),
            "recency_rank": .string("\(d.recencyRank) of \(d.entries) (1 is the most recently used; the last is evicted first)"),
            "stale_at": .string(d.staleAt.map { TimeText.iso8601(ms: $0) } ?? "never by age (no stale threshold)"),
            "expires_at": .string(d.expiresAt == .max ? "never" : TimeText.iso8601(ms: d.expiresAt)
                                  + (d.expiryOverridden ? " (set by expire)" : "")),
            "reason": .string(reason),
        ]) { $1 }, order: ["key", "state", "reason", "stored_at", "age_ms", "stale_at", "expires_at", "expires_in_ms",
                            "pending", "fetching", "version", "tags", "ids", "recency_rank"] + (pages == nil ? [] : ["pages"]),
                        colour: session.options.colour)
            .filter { !$0.hasPrefix("entries:") }
        return Reply(fields, human: human)
    }

    /// The pages of the paged list `key` (SPEC §1.1 Pages), each with its state and why, for
    /// `explain`: nil when the list has no page cached.
    static func pageStates(of key: String, _ cache: isolated Cache, _ session: Session, now: Int64) -> (json: JSONValue, text: String)? {
        let pages = cache.pageKeys(of: key)
        guard !pages.isEmpty else { return nil }
        let wanted = Set(pages)
        var last: [String: CacheEvent] = [:]
        for event in session.timeline(of: cache).filter({ wanted.contains($0.key) }) { last[event.key] = event }
        var json: [JSONValue] = []
        var text: [String] = []
        for page in pages {
            guard let d = cache.details(of: page) else { continue }
            let why = reason(d, now: now, last: last[page])
            json.append(.object(["key": .string(page), "state": .string(d.state.rawValue), "reason": .string(why)]))
            text.append("\(page) \(d.state.rawValue) (\(why))")
        }
        return (.array(json), text.joined(separator: "; "))
    }

    /// Why the entry is in its state, in one line: the most specific cause known.
    static func reason(_ d: EntryDetails, now: Int64, last: CacheEvent?) -> String {
        let at = { (ms: Int64) in TimeText.iso8601(ms: ms) }
        switch d.state {
        case .expired:
            if d.expiryOverridden { return "expired at \(at(d.expiresAt)), a time set by expire" }
            return "expired at \(at(d.expiresAt)): older than its namespace's ttl"
        case .stale:
            if d.invalidated {
                if let last, last.cause == .invalidated {
                    return "invalidated at \(at(last.at))" + (d.staleAt.map { $0 > now ? "; it would turn stale by age at \(at($0))" : "" } ?? "")
                }
                return "invalidated (by a key, namespace, tag, push or validation)"
            }
            if let staleAt = d.staleAt { return "stale since \(at(staleAt)): older than its namespace's stale threshold" }
            return "stale"
        case .fresh:
            if let staleAt = d.staleAt, staleAt < d.expiresAt {
                return "fresh: stored \(TimeText.formatDuration(now - d.storedAt)) ago; stale at \(at(staleAt))"
            }
            return d.expiresAt == .max ? "fresh: it never expires" : "fresh: stored \(TimeText.formatDuration(now - d.storedAt)) ago; expires at \(at(d.expiresAt))"
        case .absent:
            return "not cached"
        }
    }
}
