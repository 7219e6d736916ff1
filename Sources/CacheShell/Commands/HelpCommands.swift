import CacheCore

/// `help [COMMAND|all]`: the commands by topic, one command explained, or every synopsis, from
/// ``CommandCatalog``; every line fits ``width`` columns.
enum HelpCommands {
    /// Synopses longer than this do not widen the list's first column (so one long synopsis
    /// does not push every summary off the screen).
    static let synopsisColumnLimit = 40
    /// The columns human help fits, whatever the terminal (a transcript verifies anywhere).
    static let width = 80

    static let help = CommandSpec(
        name: "help", summary: "list the commands by topic, or explain one",
        arguments: [.oneOf(.command(meaning: "a command name: its synopsis, arguments and an example"),
                           .word("all", meaning: "every command with its synopsis and summary"),
                           .word("states", meaning: "what fresh, stale, expired and absent mean, and what get does in each"),
                           .word("transcripts", meaning: "what a transcript is, and how to write and check one"),
                           .word("naive", meaning: "what each naive switch (ns NAME naive=a,b) turns off, and its public thread")).optional,
                    .placeholder("SUBCOMMAND", meaning: "one form of a command that has them: help server next").optional],
        example: "help server next", run: help)

    /// The concept topics `help TOPIC` explains besides the commands, each a few lines.
    static let concepts: [String: [String]] = [
        "states": [
            "An entry is in one of four states (SPEC 1.1):",
            "  fresh    stored less than stale= ago: get serves it",
            "  stale    past stale= (or invalidated), not yet expired: get serves it and",
            "           refreshes it in the background",
            "  expired  past ttl=: get fetches and waits (offline and stale-if-error= still",
            "           serve it); it stays cached until evicted, cleared or refetched",
            "  absent   not cached: get fetches and waits",
            "peek shows the state without touching anything; explain KEY says why.",
            "ns NAME ttl=D stale=D sets the times; with a stale= not shorter than ttl=, no",
            "entry is ever served stale.",
        ],
        "transcripts": [
            "A transcript is a session as a terminal shows it: each command after cachesh>",
            "(further lines after ...>), then its output. It is a test: cachesh --verify",
            "FILE runs its commands and compares the output (exit 1 on a difference).",
            "  cachesh --echo bug.cachesh > bug.transcript   write one from a script",
            "  record FILE                                   write this session to one",
            "  cachesh --verify FILE --update                rewrite its outputs",
            "  cachesh --transcribe RECORDING                a recording as a transcript",
            "A transcript is not a script: cachesh FILE.transcript is refused.",
        ],
        "naive": naiveTopic(),
    ]

    /// What each naive switch turns off (SPEC 1.2), with the public thread that shows it: one
    /// row per switch, in the order `naive=` prints them.
    static let naiveSwitches: [(NaivePolicy, turnsOff: String, thread: String)] = [
        (.lastAnswerWins, "B12: every answer is stored fresh as it arrives, an older one over a newer write, and an invalidation during the fetch is lost", "vercel/swr#173"),
        (.rollbackToSnapshot, "B11's rollback of one mutation: a failure puts back the value shown before it, dropping what came since", "vercel/swr#1965"),
        (.answerDropsMutations, "B11 for fetches: a fetched answer replaces the value, pending mutations are no longer shown on it (a key still loading too)", "reduxjs/redux-toolkit#1512"),
        (.joinRefetch, "a refetch's own request: get --force, a push's refresh and the refetch of mutate --refetch join the fetch in flight", "TanStack/query#471"),
        (.serveExpired, "B3 past the ttl: an expired value is served while it is refreshed", "ben-manes/caffeine#282"),
        (.confirmDropsNewer, "B11 for confirmations: a mutation's answer is the value, newer pending mutations no longer shown on it", "vercel/swr#425"),
        (.confirmCommitsAll, "B11 for confirmations: the other pending mutations are written into the confirmed value, so their failure no longer removes them", "apollographql/apollo-client#6551"),
        (.silentRollback, "B15 for rollbacks: the value is rolled back but observers are not told", "apollographql/apollo-client#5790"),
        (.focusRefetchesFresh, "freshness on focus: focus refetches every active key, fresh ones too", "TanStack/query#512"),
        (.invalidateWaitsPoll, "the refetch of an invalidated active key when it is polled: the next poll turn refetches it", "reduxjs/redux-toolkit#4422"),
        (.invalidateDropsUnwatched, "B9 for keys nobody watches: an invalidation of a key not active and not watched is dropped", "TanStack/query#4456"),
        (.eventsInArrivalOrder, "versions (1.1) and B8's own echo: events apply as they arrive, an older one over a newer value, and the echo of the client's own write (--own) is applied", "firebase/firebase-ios-sdk#1591"),
        (.unknownOutcomeRollsBack, "1.1's unknown outcome: a mutation that timed out or whose answer was lost is rolled back, the entry fresh, though the server may have applied it", "vercel/swr#2093"),
        (.retryWithoutIdempotencyKey, "1.1's retries of mutations: every mutation is retried as ns retry= retries a fetch, and no retry carries an idempotency key, so the server applies each attempt (the double increment)", "serg-io/dynamodb-atomic-counter#4"),
        (.persistWholeCache, "B16 across clients: persist writes the client's whole cache of the namespace over the shared persisted copy, dropping the entries another client persisted", "apollographql/apollo-cache-persist#346"),
        (.pagesMarkedFresh, "the refetch of every page of a list (1.1 Pages): pages LIST reads page 1 alone and marks the other pages fresh with their old values", "vercel/swr#785"),
        (.nextPageDropsWrites, "a page's answer is its page's alone (1.1 Pages): the answer to pages LIST --next writes back the earlier pages as they were when it was sent", "TanStack/query#3579"),
        (.ignoreStaleExtensions, "RFC 5861 in an HTTP namespace: stale-while-revalidate and stale-if-error are ignored, so a stale response is validated and waited for, and a failed validation serves nothing stale", "square/okhttp#1083"),
        (.oneVariantPerURL, "Vary's secondary keys (RFC 9111 4.1) in an HTTP namespace: one response per key, the last, so each other variant's read is a miss that replaces it", "mizosoft/methanol#60"),
        (.notModifiedAsFailure, "a 304 is never a failure (RFC 9111 4.3.4) in an HTTP namespace: the read gets the 304 without a body, counted a failure, and the stored response is not freshened", "forwardemail/superagent#1096"),
        (.notModifiedAsEmpty, "a 304 freshens the stored response (RFC 9111 4.3.4) in an HTTP namespace: the 304 is stored as a 200 with an empty body, which every later read is served", "addisonj/node-cacher#24"),
        (.ignoreAge, "Age in the current age (RFC 9111 4.2.3) in an HTTP namespace: a response already old upstream is counted from its Date and arrival alone, so it stays fresh longer", "aliostad/CacheCow#257"),
    ]

    /// The `help naive` text: each switch, what it turns off and its thread, within ``width``.
    static func naiveTopic() -> [String] {
        var lines = [
            "A naive switch turns off one rule of SPEC 1.1 the way a client library did, so",
            "a script shows a public race with it on (ns NAME naive=a,b) and the fix with it",
            "off (naive=none). Each switch, what it turns off, and the thread:",
        ]
        for (policy, turnsOff, thread) in naiveSwitches {
            lines.append("  " + policy.rawValue)
            lines += Render.wrap((turnsOff + " (" + thread + ")").split(separator: " ").map(String.init),
                                 first: "      ", indent: 6, width: width)
        }
        lines.append("Besides the switches, ns NAME dedupe=D shares a fetch sent less than D ago with")
        lines.append("every read that would send one, refetches too (vercel/swr#271).")
        lines.append("Examples/races runs each race twice: switch on, then off.")
        return lines
    }

    /// Runs `help` or `help COMMAND`.
    /// - Throws: `ShellError` at the word when COMMAND names no command, or for extra words.
    static func help(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: help)
        try args.expect(0...2)
        guard let word = args.positional.first else { return topics() }
        if args.positional.count == 2 { return try explainSubcommand(word, args.positional[1]) }
        if word.text == "all" && word.kind == .bare { return list() }
        if word.kind == .bare, let lines = concepts[word.text] {
            return Reply(["topic": .string(word.text), "text": .array(lines.map(JSONValue.string))], human: lines)
        }
        guard let info = CommandCatalog.info(word.text) else {
            if let alias = Session.aliases[word.text], let info = CommandCatalog.info(alias) { return explain(info) }
            let suggestion = Session.nearest(word.text, among: Session.commandNames)
            throw ShellError("unknown command \(Arguments.describe(word))"
                             + (suggestion.map { " (did you mean \($0)?)" } ?? " (help lists them)"), at: word.offset)
        }
        return explain(info)
    }

    /// `help COMMAND SUBCOMMAND` (`help server next`): the form's synopsis, summary and arguments.
    /// - Throws: `ShellError` at the word that names no command with subcommands, or no form of it.
    static func explainSubcommand(_ word: Word, _ subWord: Word) throws(ShellError) -> Reply {
        guard let info = CommandCatalog.info(word.text) else {
            let suggestion = Session.nearest(word.text, among: Session.commandNames)
            throw ShellError("unknown command \(Arguments.describe(word))"
                             + (suggestion.map { " (did you mean \($0)?)" } ?? " (help lists them)"), at: word.offset)
        }
        let names = info.subcommands.map(\.name)
        guard !names.isEmpty else {
            throw ShellError("help: \(info.name) has no subcommands (help \(info.name) explains it)", at: subWord.offset)
        }
        guard let sub = info.subcommands.first(where: { $0.name == subWord.text }) else {
            let near = Session.nearest(subWord.text, among: names)
            throw ShellError("help: unknown \(info.name) command \(Arguments.describe(subWord))"
                             + (near.map { " (did you mean \($0)?)" } ?? " (use " + names.joined(separator: ", ") + ")"),
                             at: subWord.offset)
        }
        return explain(sub, prefix: info.name + " ")
    }

    /// The commands by topic (the man page's subsections), names only, so the list fits a 24-line
    /// screen; JSON lists every command as `help all` does.
    /// - Complexity: O(commands).
    static func topics() -> Reply {
        var lines = ["Commands by topic (help COMMAND explains one, with an example):"]
        for family in CommandCatalog.families {
            lines += Render.wrap(family.commands.map(\.name), first: family.title + ": ", indent: 4, width: width)
        }
        lines.append("help states, help transcripts and help naive explain those ideas.")
        lines.append("help all lists every command with its synopsis; quit (or Ctrl-D) leaves.")
        return Reply(["commands": .array(commandObjects())], human: lines)
    }

    /// Every command by topic: its synopsis, then its summary indented below it.
    /// - Complexity: O(commands).
    static func list() -> Reply {
        var lines: [String] = []
        for family in CommandCatalog.families {
            lines.append(family.title + ":")
            for info in family.commands {
                lines += Render.wrap(info.synopsis.split(separator: " ").map(String.init), first: "  ", indent: 4, width: width)
                lines += Render.wrap(info.summary.split(separator: " ").map(String.init), first: "      ", indent: 6, width: width)
            }
        }
        lines.append("help COMMAND explains one command, with its arguments and an example")
        return Reply(["commands": .array(commandObjects())], human: lines)
    }

    private static func commandObjects() -> [JSONValue] {
        CommandCatalog.all.map { info -> JSONValue in
            .object(["name": .string(info.name), "synopsis": .string(info.synopsis), "summary": .string(info.summary)])
        }
    }

    /// One command: synopsis, summary, its arguments aligned, and an example; `prefix` is the
    /// command's name before a subcommand's (`server `), which has no example of its own.
    static func explain(_ info: CommandSpec, prefix: String = "") -> Reply {
        let synopsis = prefix + info.synopsis
        var lines = Render.wrap(synopsis.split(separator: " ").map(String.init), first: "", indent: 4, width: Self.width)
            + Render.wrap(info.summary.split(separator: " ").map(String.init), first: "", indent: 0, width: Self.width)
        let width = info.help.map(\.name.count).filter { $0 <= synopsisColumnLimit }.max() ?? 0
        for argument in info.help {
            let meaning = argument.meaning.split(separator: " ").map(String.init)
            if argument.name.count <= synopsisColumnLimit {
                // A long meaning goes on below, under its own start.
                let lead = "  " + argument.name + String(repeating: " ", count: max(width - argument.name.count, 0) + 2)
                lines += Render.wrap(meaning, first: lead, indent: lead.count, width: Self.width)
            } else {
                // A wide name (a subcommand's synopsis) on lines of its own, its meaning below.
                lines += Render.wrap(argument.name.split(separator: " ").map(String.init), first: "  ", indent: 4, width: Self.width)
                lines += Render.wrap(meaning, first: "      ", indent: 6, width: Self.width)
            }
        }
        if !info.example.isEmpty { lines.append("example: " + info.example) }
        let arguments = info.help.map { argument -> JSONValue in
            .object(["name": .string(argument.name), "meaning": .string(argument.meaning)])
        }
        return Reply([
            "name": .string(prefix + info.name), "synopsis": .string(synopsis), "summary": .string(info.summary),
            "arguments": .array(arguments), "example": .string(info.example),
        ], human: lines)
    }
}
