@testable import CacheShell
import CacheCore
import Foundation
import Testing
import TestSupport

/// Runs `lines` typed into a fresh session and returns everything it printed.
private func typed(_ lines: String, options: SessionOptions = SessionOptions()) async -> String {
    await TestShell(options: options).typed(lines)
}

/// Errors that mean a command line was written wrongly, as opposed to failing on the session's state.
private let usageErrorMarkers = [
    "unknown command", "has no option", "has no flag", "given twice", " needs ", " takes ", "cannot be scheduled",
]

private func usageError(in output: String) -> String? {
    output.split(separator: "\n").first { line in
        line.hasPrefix("error: ") && usageErrorMarkers.contains { line.contains($0) }
    }.map(String.init)
}

@Suite struct HelpTests {
    @Test func helpListsTheCommandsByTopicOnOneScreen() async {
        let lines = await typed("help").split(separator: "\n").map(String.init)
        #expect(lines.first == "Commands by topic (help COMMAND explains one, with an example):")
        #expect(lines.contains("Time: now advance at"))
        #expect(lines.suffix(2) == ["help states, help transcripts and help naive explain those ideas.",
                                    "help all lists every command with its synopsis; quit (or Ctrl-D) leaves."])
        // An 80x24 terminal shows it whole, with the command line and the next prompt.
        #expect(lines.count <= 22)
        #expect(lines.allSatisfy { TextWidth.of($0) <= 80 }, "\(lines.filter { TextWidth.of($0) > 80 })")
        let named = lines.dropFirst().dropLast(2).flatMap { line in
            (line.split(separator: ":", maxSplits: 1).last ?? "").split(separator: " ").map(String.init)
        }
        #expect(named == CommandCatalog.all.map(\.name))
        for family in CommandCatalog.families {
            #expect(lines.contains { $0.hasPrefix(family.title + ": " + family.commands[0].name) }, "\(family.title)")
        }
    }

    /// `help naive` names every naive switch, in `naive=` order, with what it turns off and its
    /// public thread, within 80 columns.
    @Test func helpNaiveNamesEverySwitchWithWhatItTurnsOffAndItsThread() async {
        let lines = await typed("help naive").split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { TextWidth.of($0) <= 80 }, "\(lines.filter { TextWidth.of($0) > 80 })")
        #expect(HelpCommands.naiveSwitches.map(\.0) == NaivePolicy.allCases)
        let named = lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(named == NaivePolicy.allCases.map(\.rawValue))
        let text = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(text.contains("focus refetches every active key, fresh ones too (TanStack/query#512)"), "\(text)")
        for row in HelpCommands.naiveSwitches { #expect(text.contains("(" + row.thread + ")"), "\(row.0)") }
    }

    @Test func helpAllShowsEverySynopsisAndSummaryWithinEightyColumns() async {
        let lines = await typed("help all").split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { TextWidth.of($0) <= 80 }, "\(lines.filter { TextWidth.of($0) > 80 })")
        let text = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        for info in CommandCatalog.all {
            #expect(text.contains(info.synopsis) && text.contains(info.summary), "\(info.name)")
        }
        #expect(lines.contains("Time:"))
        #expect(lines.contains("  advance D"))
        #expect(lines.contains("      move the virtual clock, running what falls due"))
        #expect(lines.last == "help COMMAND explains one command, with its arguments and an example")
    }

    @Test func helpOfEveryCommandFitsEightyColumns() async {
        for info in CommandCatalog.all {
            let lines = await typed("help " + info.name).split(separator: "\n").map(String.init)
            // A synopsis is one line, as typed; everything else wraps.
            #expect(lines.dropFirst().allSatisfy { TextWidth.of($0) <= 80 }, "\(lines.filter { TextWidth.of($0) > 80 })")
        }
    }

    @Test func helpGetShowsSynopsisSummaryArgumentsAndExample() async {
        #expect(await typed("help get") == """
            get KEY [headers={...}] [--force] [--nowait] [--async]
            read as the app does: serve, refresh or fetch
              KEY            NAMESPACE:ID, or ID for namespace default (feed:home,
                             profile:42)
              headers={...}  in an HTTP namespace, the request's header fields, a JSON
                             object (as {"Cache-Control":"no-cache"})
              --force        always send a new request and wait for it
              --nowait       start what the read would start and return at once with what
                             the cache has
              --async        read as an app awaits: at once if served, else waiting: true
                             now and a read event line when it completes
            example: get feed:home --nowait

            """)
    }

    @Test func helpServerListsEverySubcommandForm() async {
        #expect(await typed("help server") == """
            server SUBCOMMAND ...
            change or show the simulated server
              set KEY [VALUE] [version=N] [headers={...}] [text="..."]
                [binary=SIZE:sha256:HEX]
                  set the server's value without telling the client
              patch KEY PATCH  patch the server's value without telling the client
              delete KEY       delete the server's value; a fetch then fails with not found
              show [KEY]       the server's data, or one value with its modification time
              latency D [KEY]  answer after D (default 100ms), or only KEY's requests
              fail N [KEY]     the next N requests (for KEY) fail
              offline          send no request; every cached value is served, flagged
                               offline
              online           send requests again, first the queued mutations
              log [clear]      the requests received (the last 10000), with times and fates;
                               clear forgets them
              next [KEY] [VALUE] [latency=D] [value=JSON] [error=TEXT] [version=N]
                [status=N] [headers={...}] [text="..."] [binary=SIZE:sha256:HEX] [--fail]
                [--not-found] [--no-answer] [--lost-answer] [--commit] [--validate]
                  queue the answer to KEY's next request (--validate: the next
                  validation's), taken in order: VALUE or value=JSON (else the data),
                  latency=D, --fail or error=TEXT, --not-found, --no-answer, --lost-answer
                  (a mutation applied, its answer lost), --commit (applied, then failed)
              strict on|off    on: a request with nothing queued gets no answer and fails
                               its command, naming it
            example: server set feed:home [{"id":1,"likes":3}]

            """)
    }

    @Test func helpOfACommandWithoutArgumentsShowsNoArgumentLines() async {
        #expect(await typed("help pending") == """
            pending
            requests in flight, queued mutations, scheduled commands
            example: pending

            """)
    }

    @Test func jsonHelpListsNameSynopsisAndSummary() async {
        let output = await typed("help", options: SessionOptions(mode: .json))
        #expect(output.hasPrefix(#"{"command":"help","commands":[{"name":"load","summary":"load a configuration: namespaces, push rules, server","synopsis":"load FILE|{CONFIG}"},{"name":"ns","#))
        #expect(output.hasSuffix(#"{"name":"quit","summary":"leave the shell","synopsis":"quit"}],"ok":true}"# + "\n"))
        #expect(output.components(separatedBy: #"{"name":"#).count - 1 == CommandCatalog.all.count)
        #expect(output.split(separator: "\n").count == 1)
    }

    @Test func jsonHelpOfOneCommand() async {
        #expect(await typed("help expire", options: SessionOptions(mode: .json)) == #"""
            {"arguments":[{"meaning":"NAMESPACE:ID, or ID for namespace default (feed:home, profile:42)","name":"KEY"},{"meaning":"set the time to expiry to D from now instead","name":"in=D"}],"command":"help","example":"expire feed:home in=30s","name":"expire","ok":true,"summary":"expire an entry now, or set its time to expiry","synopsis":"expire KEY [in=D]"}

            """#)
    }

    @Test(arguments: [
        ("help nosuch", "error: unknown command \"nosuch\" (help lists them)\n"),
        ("help gett", "error: unknown command \"gett\" (did you mean get?)\n"),
        ("help pee", "error: unknown command \"pee\" (did you mean peek?)\n"),
        ("help get put", "error: help: get has no subcommands (help get explains it)\n"),
        ("help get put x", "error: help takes [COMMAND|all|states|transcripts|naive] [SUBCOMMAND]; unexpected \"x\"\n"),
        ("help --all", "error: help has no flag --all\n"),
    ])
    func helpRefusesWhatIsNotACommand(line: String, expected: String) async {
        let session = await TestShell()
        #expect(await session.typed(line) == expected)
        #expect(await session.anyFailed)
    }

    @Test func unknownCommandErrorPointsAtTheWord() async throws {
        let source = SourceFile(name: "script.cachesh", text: "echo one\nhelp   nosuch\n")
        var lexer = Lexer(source, semicolonSeparates: false)
        _ = lexer.next()
        let command = try #require(try lexer.next()?.get())
        let thrown = await TestShell().run { session, cache in
            do throws(ShellError) { _ = try HelpCommands.help(session, cache, command, source) } catch { return Optional(error) }
            return nil
        }
        #expect(thrown == ShellError("unknown command \"nosuch\" (help lists them)", at: 16))
        let session = await TestShell()
        #expect(await session.scriptText(source) == "one\nscript.cachesh:2: error: unknown command \"nosuch\" (help lists them)\n")
    }

    /// A suggestion two edits away starts as the name does: `nosuch` is no typo of `touch`.
    @Test func twoEditSuggestionsKeepTheFirstLetter() {
        #expect(Session.nearest("nosuch", among: ["touch"]) == nil)
        #expect(Session.nearest("tuoch", among: ["touch"]) == "touch")
        #expect(Session.nearest("tocuhs", among: ["touch"]) == "touch")
        #expect(Session.nearest("xouch", among: ["touch"]) == "touch")
        #expect(Session.nearest("yoech", among: ["touch"]) == nil)
        #expect(Session.nearest("stast", among: Session.commandNames) == "stats")
    }

    @Test func jsonHelpErrorNamesTheCommand() async {
        #expect(await typed("help nosuch", options: SessionOptions(mode: .json))
                == #"{"column":null,"command":"help","error":"unknown command \"nosuch\" (help lists them)","file":null,"line":null,"ok":false}"# + "\n")
    }

    // MARK: The catalog against the code

    @Test func catalogNamesEveryCommandTheShellRunsAndNoOther() async {
        let names = CommandCatalog.all.map(\.name)
        #expect(Set(names).count == names.count, "a command is listed twice")
        #expect(Set(names) == Set(Session.handlers.keys))
        for info in CommandCatalog.all {
            #expect(info.synopsis.split(separator: " ").first.map(String.init) == info.name)
            #expect(info.example.split(separator: " ").first.map(String.init) == info.name)
            #expect(!info.summary.isEmpty && !info.summary.contains("\n"))
            #expect(CommandCatalog.info(info.name)?.synopsis == info.synopsis)
        }
        #expect(CommandCatalog.info("nosuch") == nil)
        #expect(CommandCatalog.info("server")?.subcommands.map(\.name) == ServerCommands.server.subcommands.map(\.name))
    }

    /// Commands whose example needs a file or state a fresh session lacks: they must still be
    /// written correctly, but may fail (`load config.json` with no such file).
    static let examplesNeedingFilesOrState: Set<String> = ["load", "source", "restore", "record", "push", "mutate", "replay", "replay-merge", "explore",
                                                           "keys", "clear", "stats", "diff", "cancel", "request"]

    @Test(arguments: CommandCatalog.all.map(\.name))
    func exampleRunsInAFreshSession(name: String) async throws {
        let info = try #require(CommandCatalog.info(name))
        // --safe: an example that would read or write a file is refused, never touches the disk.
        let session = await TestShell(options: SessionOptions(safe: true))
        let output = await session.typed(info.example)
        #expect(usageError(in: output) == nil, "\(info.example)")
        let failed = await session.anyFailed
        if !Self.examplesNeedingFilesOrState.contains(name) {
            #expect(!failed, "\(info.example) failed: \(output)")
        }
    }

    @Test func examplesNeedingStateSucceedOnceItExists() async {
        let session = await TestShell()
        #expect(await session.typed("put feed:home [{\"id\":1,\"likes\":3}]\n" + CommandCatalog.info("mutate")!.example)
                == "keys: feed:home\nkeys: feed:home\n")
        #expect(await !session.anyFailed)
        for name in ["keys", "stats", "clear"] {
            _ = await session.typed(CommandCatalog.info(name)!.example)
            #expect(await !session.anyFailed, "\(name) once feed holds an entry")
        }
        // request sends to a key of an HTTP namespace.
        _ = await session.typed("ns api http\n" + CommandCatalog.info("request")!.example)
        #expect(await !session.anyFailed, "request once api is an HTTP namespace")
    }

    /// The option and flag names a command's own parser lists when given an unknown one.
    private static func accepted(by example: String, probe: String) async -> Set<String> {
        let output = await typed(example + " " + probe, options: SessionOptions(safe: true))
        guard output.contains("has no"), let open = output.range(of: "(it takes ") else { return [] }
        let list = output[open.upperBound...].prefix { $0 != ")" }
        return Set(list.components(separatedBy: ", "))
    }

    @Test(arguments: CommandCatalog.all.map(\.name))
    func optionsAreExactlyWhatTheCommandAccepts(name: String) async throws {
        let info = try #require(CommandCatalog.info(name))
        for option in info.optionNames {
            let probe = option.hasSuffix("=") ? option + "1s" : option
            let output = await typed(info.example + " " + probe, options: SessionOptions(safe: true))
            #expect(!output.contains("has no option") && !output.contains("has no flag"), "\(probe): \(output)")
        }
        let flags = await Self.accepted(by: info.example, probe: "--zzz")
        let options = await Self.accepted(by: info.example, probe: "zzz=1")
        // A command with forms (`server set ...`) is probed through its example's form.
        let form = info.subcommands.first { info.example.hasPrefix("\(info.name) \($0.name) ") }
        // `at D COMMAND`: a word after the command line is the scheduled command's, whose own
        // options `at` checks when it schedules it.
        let words = info.example.split(separator: " ").map(String.init)
        if info.arguments.last?.takesRest == true, info.arguments.last?.alternatives.first?.kind == .command,
           let scheduled = CommandCatalog.info(words[2]) {
            #expect(info.optionNames.isEmpty)
            #expect(flags.union(options) == Set(scheduled.optionNames))
            return
        }
        #expect(flags.union(options) == Set(info.optionNames + (form?.optionNames ?? [])))
    }

    @Test func argumentsNameEveryOptionOfTheSynopsis() async {
        for info in CommandCatalog.all {
            let names = info.help.map(\.name).joined(separator: " ")
            for option in info.optionNames {
                #expect(names.contains(option), "\(info.name): \(option) is not explained")
                // A negation (--no-purgeable) goes without saying beside its flag.
                let shown = option.hasPrefix("--no-") ? "--" + option.dropFirst(5) : option
                #expect(info.synopsis.contains(shown), "\(info.name): \(option) is not in the synopsis")
            }
        }
    }
}
