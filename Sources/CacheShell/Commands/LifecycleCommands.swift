import CacheCore

/// `cancel`, `activate`, `deactivate`, `focus`, `poll`, `unpoll`: what an app does with its
/// requests besides reading — gives up on one, marks the keys it shows as active (refetched when
/// they turn stale or expire, on `focus` and on `server online`), comes back to the foreground,
/// refetches on a timer.
enum LifecycleCommands {
    static let family = CommandFamily(title: "Requests and app lifecycle",
                                      commands: [cancel, activate, deactivate, focus, poll, unpoll])

    static let cancel = CommandSpec(
        name: "cancel", summary: "cancel the fetch in flight for a key: its answer is discarded",
        arguments: [.key(meaning: "a key with a fetch in flight (a bulk fetch is cancelled with all its keys)")],
        example: "cancel feed:home", run: cancel,
        writes: CallForm(.cancel) { call, returned, w throws(Diagnostic) in
            guard case .cancel(let key) = call else { throw w.notItsKind(call) }
            try w.checkKey(key)
            return ("cancel \(key)", w.keys(returned))
        })

    static func cancel(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: cancel)
        try args.expect(1...1)
        let key = try args.key(0, in: cache)
        do { return .keys(try cache.cancel(key)) } catch {
            throw ShellError(error.message, at: args.positional[0].offset)
        }
    }

    static let activate = CommandSpec(
        name: "activate", summary: "make a key active (refetched when not fresh); alone, list them",
        arguments: [.key(meaning: "the key the app shows; it need not be cached or watched").optional],
        example: "activate feed:home", run: activate,
        // `setActive(key, false)` too: `deactivate KEY` is the same call.
        writes: CallForm(.setActive) { call, _, w throws(Diagnostic) in
            guard case .setActive(let typed, let isActive) = call else { throw w.notItsKind(call) }
            try w.checkKey(typed)
            let key = KeyName.canonical(typed)
            if isActive { return ("activate \(key)", activated(key)) }
            return ("deactivate \(key)", deactivated(key, was: w.active.contains(key)))
        })

    /// Runs `activate KEY` (`Cache.setActive(KEY, true)`; watches are unchanged) or, alone, lists
    /// the active keys as `watch` alone does.
    static func activate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: activate)
        try args.expect(0...1)
        guard !args.positional.isEmpty else {
            let keys = cache.activeKeys
            return Reply(["active": .array(keys.map(JSONValue.string))],
                         human: [keys.isEmpty ? "active: (nothing)" : "active: " + keys.joined(separator: " ")])
        }
        let key = try args.key(0, in: cache)
        cache.setActive(key, true)
        return activated(key)
    }

    /// What `activate KEY` prints (also written by transcripts of recordings).
    static func activated(_ key: String) -> Reply {
        .ok(["key": .string(key), "active": .bool(true)], human: ["\(key) is active"])
    }

    static let deactivate = CommandSpec(
        name: "deactivate", summary: "make a key inactive, or every key; watches stay",
        arguments: [.key(meaning: "a key given to activate; without it, no key stays active").optional],
        example: "deactivate feed:home", run: deactivate,
        writes: CallForm(.clearActive) { _, _, w in ("deactivate", deactivatedAll(w.active.sorted())) })

    /// Runs `deactivate KEY` (`Cache.setActive(KEY, false)`) or, alone, `Cache.clearActive()`;
    /// watches are unchanged. A key that is not active is no error, as `unpoll` of a key not polled.
    static func deactivate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: deactivate)
        try args.expect(0...1)
        guard !args.positional.isEmpty else {
            let keys = cache.activeKeys
            cache.clearActive()
            return deactivatedAll(keys)
        }
        let key = try args.key(0, in: cache)
        let was = cache.activeKeys.contains(key)
        cache.setActive(key, false)
        return deactivated(key, was: was)
    }

    /// What `deactivate KEY` prints (also written by transcripts of recordings).
    static func deactivated(_ key: String, was: Bool) -> Reply {
        .ok(["key": .string(key), "was_active": .bool(was)], human: [was ? "\(key) is no longer active" : "\(key) was not active"])
    }

    /// What `deactivate` prints: `keys`, those that were active (also written by transcripts of recordings).
    static func deactivatedAll(_ keys: [String]) -> Reply {
        .ok(["keys": .array(keys.map(JSONValue.string))], human: ["nothing is active"])
    }

    static let focus = CommandSpec(
        name: "focus", summary: "the app is back in the foreground: refetch the active keys that are not fresh",
        example: "focus", run: focus,
        writes: CallForm(.focus) { _, returned, w in ("focus", w.keys(returned)) })

    static func focus(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: focus)
        try args.expect(0...0)
        return .keys(cache.focus())
    }

    static let poll = CommandSpec(
        name: "poll", summary: "refetch a key every D; alone, list the polls",
        arguments: [.key(meaning: "the key to refetch (it need not be cached)").optional],
        options: [.duration("every", meaning: "the period, from now (needed with KEY); a new poll of KEY replaces the old")],
        example: "poll feed:home every=30s", run: poll,
        writes: CallForm(.poll) { call, _, w throws(Diagnostic) in
            guard case .poll(let typed, let every) = call else { throw w.notItsKind(call) }
            try w.checkKey(typed)
            if every < 0 { throw w.fail("poll every a negative time cannot be typed") }
            let key = KeyName.canonical(typed)
            return ("poll \(key) every=" + TimeText.formatDuration(every),
                    .ok(["key": .string(key), "every_ms": .int(every)], human: ["polling \(key) every \(TimeText.formatDuration(every))"]))
        })

    static func poll(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: poll)
        try args.expect(0...1)
        guard !args.positional.isEmpty else {
            if let (_, word) = args.option("every") { throw ShellError("poll needs a KEY before every=", at: word.offset) }
            return list(cache)
        }
        let key = try args.key(0, in: cache)
        guard let (value, word) = args.option("every") else {
            throw ShellError("poll needs every=D (poll KEY every=D)", at: args.end)
        }
        let every = try Arguments.duration(value, at: word.offset + 6)
        do { try cache.poll(key, every: every) } catch { throw ShellError(error.message, at: word.offset + 6) }
        return .ok(["key": .string(key), "every_ms": .int(every)],
                   human: ["polling \(key) every \(TimeText.formatDuration(every))"])
    }

    static func list(_ cache: isolated Cache) -> Reply {
        let polls = cache.polls
        let items: [JSONValue] = polls.map {
            .object(["key": .string($0.key), "every_ms": .int($0.everyMs), "due": .string(TimeText.iso8601(ms: $0.due))])
        }
        let rows = polls.map { [$0.key, TimeText.formatDuration($0.everyMs), TimeText.iso8601(ms: $0.due)] }
        if rows.isEmpty { return Reply(["polls": .array(items)], human: ["polling: (nothing)"]) }
        return Reply(["polls": .array(items)], table: TableText(["key", "every", "next"], rows))
    }

    static let unpoll = CommandSpec(
        name: "unpoll", summary: "stop polling a key, or every key",
        arguments: [.key(meaning: "a key given to poll; without it, every poll stops").optional],
        example: "unpoll feed:home", run: unpoll,
        writes: CallForm(.unpoll, .unpollAll) { call, returned, w throws(Diagnostic) in
            if case .unpollAll = call {
                guard case .keys(let keys) = returned else { return ("unpoll", nil) }
                return ("unpoll", .ok(["keys": .array(keys.map(JSONValue.string))], human: ["polling nothing"]))
            }
            guard case .unpoll(let typed) = call else { throw w.notItsKind(call) }
            try w.checkKey(typed)
            let key = KeyName.canonical(typed)
            let was: Bool
            if case .polled(let p) = returned { was = p } else { was = false }
            return ("unpoll \(key)", unpolled(key, was: was))
        })

    static func unpoll(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: unpoll)
        try args.expect(0...1)
        guard !args.positional.isEmpty else {
            return .ok(["keys": .array(cache.unpollAll().map(JSONValue.string))], human: ["polling nothing"])
        }
        let key = try args.key(0, in: cache)
        return unpolled(key, was: cache.unpoll(key))
    }

    /// What `unpoll KEY` prints (also written by transcripts of recordings).
    static func unpolled(_ key: String, was: Bool) -> Reply {
        .ok(["key": .string(key), "was_polling": .bool(was)], human: [was ? "stopped polling \(key)" : "was not polling \(key)"])
    }
}
