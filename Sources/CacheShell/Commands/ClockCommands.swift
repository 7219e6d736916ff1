import CacheCore

/// `now`, `advance`, `at`: the virtual clock (SPEC §2).
enum ClockCommands {
    static let family = CommandFamily(title: "Time", commands: [now, advance, at])

    /// Commands `at` cannot schedule.
    /// Most `at` one command may nest (`at 1s at 1s ... echo`), itself included (SPEC §7.1).
    static let maxNesting = 16
    static let unschedulable: Set<String> = ["advance", "source", "load", "restore", "record", "quit", "client"]

    static func nowFields(_ cache: isolated Cache) -> [String: JSONValue] {
        ["now": .string(TimeText.iso8601(ms: cache.now)), "now_ms": .int(cache.now - cache.clockStart)]
    }

    static let now = CommandSpec(name: "now", summary: "show the virtual time", example: "now", run: now)

    static func now(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: now)
        try args.expect(0...0)
        return Reply(nowFields(cache), order: ["now", "now_ms"])
    }

    static let advance = CommandSpec(
        name: "advance", summary: "move the virtual clock, running what falls due",
        arguments: [.duration(meaning: Meaning.duration)],
        example: "advance 30s", run: advance)

    static func advance(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: advance)
        try args.expect(1...1, usage: "D (\(Meaning.duration))")
        let duration = try args.duration(0)
        // The end of time (`Int64.max`) is where work scheduled past it waits (`at 106751991167d`
        // is clamped there): the clock never reaches it, and an advance that would is refused,
        // nothing run, instead of moving less than asked (and running that work, and polls at
        // the same instant again and again, up to the runaway limit).
        let (target, overflow) = cache.now.addingReportingOverflow(duration)
        if overflow || target == .max {
            let end = TimeText.iso8601(ms: .max)
            let room = cache.now < .max - 1 ? "; it can move at most \(TimeText.formatDuration(.max - 1 - cache.now)) from now" : ""
            throw ShellError("advance \(args.positional[0].text): the clock would reach its end (\(end))" + room,
                             at: args.positional[0].offset)
        }
        do { try cache.advance(by: duration) } catch { throw ShellError(error.message, at: command.offset) }
        return Reply(nowFields(cache), order: ["now", "now_ms"])
    }

    static let at = CommandSpec(
        name: "at", summary: "schedule a command D from now",
        arguments: [
            .duration(meaning: Meaning.duration + "; 0ms runs at the next scheduling step"),
            .commandLine(meaning: "any command but advance, source, load, restore, record, client and quit"),
        ],
        example: "at 5m get feed:home", run: at)

    static func at(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: at)
        try args.expect(2...Int.max)
        let delay = try args.duration(0)
        let (text, offset) = args.rest(from: 2)
        // Each level of `at D at D ... COMMAND` prints the rest of the line when it is scheduled
        // and when it runs: without a bound, output quadratic in the line's length. Each level's
        // duration and the command at the end are checked now, as the first level's are, and
        // that command's words as far as they alone decide (`ScheduledCheck`), so that a line that
        // would fail when it runs is refused when typed.
        var nesting = 1
        var i = 2
        let words = command.words
        var name = Session.aliases[words[i].text] ?? words[i].text
        while name == "at" {
            guard i + 2 < words.count else { throw ShellError("at needs D COMMAND", at: words[i].offset) }
            nesting += 1
            if nesting > maxNesting {
                throw ShellError("at nested more than \(maxNesting) deep (at D at D ... COMMAND)", at: words[i].offset)
            }
            _ = try Arguments.duration(Substring(words[i + 1].text), at: words[i + 1].offset)
            i += 2
            name = Session.aliases[words[i].text] ?? words[i].text
        }
        if unschedulable.contains(name) {
            throw ShellError("\(name) cannot be scheduled with at", at: words[i].offset)
        }
        guard Session.handlers[name] != nil, let spec = CommandCatalog.info(name) else {
            throw ShellError("unknown command \"\(name)\" (try help)", at: words[i].offset)
        }
        try ScheduledCheck.check(RawCommand(words: Array(words[i...]), offset: words[i].offset, end: command.end), source, spec)
        let token = session.schedule.add(Session.ScheduledEntry(text: text, source: source, offset: offset, typed: session.frames.runsTyped))
        let id = cache.schedule(after: delay, token: token)
        // The engine clamps a due time past the end of time the same way (`at 106751991167d`).
        let (sum, overflow) = cache.now.addingReportingOverflow(delay)
        let due = overflow ? Int64.max : sum
        return .ok(["id": .int(Int64(id)), "due": .string(TimeText.iso8601(ms: due)), "scheduled": .string(text)],
                   human: [due == .max ? "scheduled never (at the clock's end, which it never reaches): \(text)"
                                       : "scheduled at \(TimeText.iso8601(ms: due)): \(text)"])
    }
}

extension Session {
    /// Runs a command `at` scheduled, from the scheduler, in a frame of its own: reads never
    /// block; its result prints as an `at TIME:` item (an `"event": "at"` line); its error fails
    /// the command that ran the scheduler.
    func runScheduledCommand(_ entry: ScheduledEntry, on cache: isolated Cache) {
        // The text keeps the name and line of the place that scheduled it: a file it names
        // resolves beside that script, and an `at` it runs schedules with that place too, so a
        // nested command's error still says FILE:LINE (SPEC §6, §7).
        let local = SourceFile(name: entry.source.name, text: entry.text,
                               firstLine: entry.source.location(ofOffset: entry.offset).line,
                               firstColumn: entry.source.column(ofOffset: entry.offset))
        frames.pushScheduled(text: entry.text, time: TimeText.iso8601(ms: cache.now), typed: entry.typed)
        defer { frames.pop() }
        var lexer = Lexer(local, semicolonSeparates: false)
        while let next = lexer.next() {
            switch next {
            case .failure(let diagnostic):
                report(ShellError(diagnostic.message, at: diagnostic.offset), in: local, command: nil,
                       span: local.bytes.indices)
            case .success(let command):
                let written = command.words.first?.text ?? ""
                let name = Session.aliases[written] ?? written
                _ = perform(command.offset..<command.end, in: local, named: name, on: cache) { session, cache throws(ShellError) in
                    guard !ClockCommands.unschedulable.contains(name) else {
                        throw ShellError("\(name) cannot be scheduled with at", at: command.offset)
                    }
                    return (name, try session.dispatch(name, command, local, on: cache))
                }
            }
        }
    }
}
