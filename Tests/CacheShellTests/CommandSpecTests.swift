@testable import CacheShell
import CacheCore
import Testing
import TestSupport

/// What follows from a command's declaration: its synopsis and help lines, how its words are
/// parsed, its forms for completion, and the dispatch of subcommands.
@Suite struct CommandSpecTests {
    static let probe = CommandSpec(
        name: "probe", summary: "a command declared only here",
        arguments: [
            .key(meaning: "the key"),
            .value(meaning: "the value"),
            .oneOf(.namespace(meaning: "one namespace"), .word("all", meaning: "every namespace")).optional,
        ],
        options: [.duration("ttl", meaning: "how long"), .tags("tags", meaning: "which tags")],
        flags: [.flag("force", meaning: "always", negation: "never")],
        example: "probe feed:a 1", run: { _, _, _, _ in .ok() })

    @Test func synopsisAndHelpLinesFollowTheDeclaration() {
        let spec = Self.probe
        #expect(spec.synopsis == "probe KEY VALUE [NS|all] [ttl=D] [tags=a,b] [--force]")
        #expect(spec.help.map(\.name) == ["KEY", "VALUE", "NS", "all", "ttl=D", "tags=a,b", "--force", "--no-force"])
        #expect(spec.help.map(\.meaning) == ["the key", "the value", "one namespace", "every namespace", "how long",
                                             "which tags", "always", "never"])
        #expect(spec.optionNames == ["ttl=", "tags=", "--force", "--no-force"])
        #expect(spec.usageWithArgumentsRequired == "KEY VALUE NS|all [ttl=D] [tags=a,b] [--force]")
    }

    @Test func parsingFollowsTheDeclaration() {
        let parsing = Self.probe.parsing
        #expect(parsing.skip == 1)
        #expect(parsing.options == ["ttl", "tags"])
        #expect(parsing.flags == ["force", "no-force"])
        // Up to the JSON value, words are taken as they stand.
        #expect(parsing.leading == 2)
        #expect(Self.probe.usage == "KEY VALUE [NS|all] [ttl=D] [tags=a,b] [--force]")
    }

    private static func arguments(_ text: String, _ spec: CommandSpec) -> Result<Arguments, ShellError> {
        let source = SourceFile(name: nil, text: text)
        var lexer = Lexer(source, semicolonSeparates: false)
        guard case .success(let command)? = lexer.next() else { fatalError("\(text) does not lex") }
        return Result { () throws(ShellError) in try Arguments(command, source, for: spec) }
    }

    @Test func argumentsAreSortedAsDeclared() throws {
        let args = try Self.arguments("probe k a=b all ttl=5s --no-force", Self.probe).get()
        #expect(args.positional.map(\.text) == ["k", "a=b", "all"])
        #expect(args.option("ttl")?.value == "5s")
        #expect(args.flag("no-force"))
        #expect(throws: ShellError("probe has no flag --zz (it takes --force, --no-force)", at: 10)) {
            try Self.arguments("probe k 1 --zz", Self.probe).get()
        }
        #expect(throws: ShellError("probe has no option zz= (it takes tags=, ttl=)", at: 10)) {
            try Self.arguments("probe k 1 zz=1", Self.probe).get()
        }
        let tooMany = try Self.arguments("probe k 1 all more", Self.probe).get()
        #expect(throws: ShellError("probe takes KEY VALUE [NS|all] [ttl=D] [tags=a,b] [--force]; unexpected \"more\"", at: 14)) {
            try tooMany.expect(2...3)
        }
    }

    @Test func formsCarryTheDeclaredKindsForCompletion() {
        let form = CommandForm(Self.probe)
        let slots = form.slots
        #expect(slots.count == 3)
        #expect(slots[0].kinds == [.key] && slots[0].literals.isEmpty)
        #expect(slots[2].kinds == [.namespace] && slots[2].literals == ["all"] && slots[2].optional)
        #expect(form.remainder(filled: 1, typedOptions: ["ttl=5s"]) == "VALUE [NS|all] [tags=a,b] [--force]")
    }

    @Test func placeholdersAndOptionsOfNoKindShowAsDeclared() {
        let spec = CommandSpec(
            name: "probe", summary: "s", arguments: [.placeholder("STATE", meaning: "a state")],
            options: [.text("field", placeholder: "NAME", meaning: "a field")], example: "probe fresh",
            run: { _, _, _, _ in .ok() })
        #expect(spec.synopsis == "probe STATE [field=NAME]")
        #expect(spec.help.map(\.name) == ["STATE", "field=NAME"])
        #expect(CommandForm(spec).slots.map(\.kinds) == [[.text]])
        #expect(spec.parsing.options == ["field"] && spec.parsing.leading == 0)
    }

    static let parent = CommandSpec(
        name: "probe", summary: "subcommands declared only here",
        subcommands: [
            CommandSpec(subcommand: "one", summary: "the first", arguments: [.key()], run: { _, _, _, _ in .ok(["form": "one"]) }),
            CommandSpec(subcommand: "two", summary: "the second", arguments: [.value().optional],
                        run: { _, _, _, _ in .ok(["form": "two"]) }),
        ],
        example: "probe one feed:a")

    @Test func subcommandsAreListedAndDispatched() async throws {
        let spec = Self.parent
        #expect(spec.synopsis == "probe SUBCOMMAND ...")
        #expect(spec.help.map(\.name) == ["one KEY", "two [VALUE]"])
        #expect(spec.subcommands[1].parsing.skip == 2 && spec.subcommands[1].parsing.leading == 1)
        #expect(spec.subcommands[1].usage == "[VALUE]")
        #expect(CommandForm.forms(of: spec).map { $0.remainder(filled: 0, typedOptions: []) } == ["one KEY", "two [VALUE]"])
        let replies = await TestShell().run { session, cache in
            ["probe two", "probe", "probe three"].map { text -> String in
                let source = SourceFile(name: nil, text: text)
                var lexer = Lexer(source, semicolonSeparates: false)
                guard case .success(let command)? = lexer.next() else { return "does not lex" }
                do throws(ShellError) {
                    return try spec.run(session, cache, command, source).fields["form"]?.compactText ?? "-"
                } catch {
                    return error.message
                }
            }
        }
        #expect(replies == ["\"two\"", "probe needs one of: one, two", "unknown probe command \"three\" (use one, two)"])
    }

    // MARK: The catalog

    @Test func everyDeclarationIsWellFormed() {
        for spec in CommandCatalog.all + CommandCatalog.all.flatMap(\.subcommands) {
            for argument in spec.arguments {
                #expect(!argument.alternatives.isEmpty, "\(spec.name)")
                for alternative in argument.alternatives {
                    // A placeholder is written as the synopsis shows it (`KEY`, `NS:*`), not a meaning.
                    #expect(!alternative.text.isEmpty && !alternative.text.contains(" "), "\(spec.name): \(alternative.text)")
                    if alternative.kind != .word {
                        #expect(alternative.text.contains { $0.isUppercase }, "\(spec.name): \(alternative.text)")
                    }
                }
            }
            // Only the last argument may take the rest of the command.
            #expect(spec.arguments.dropLast().allSatisfy { !$0.takesRest }, "\(spec.name)")
            #expect(Set(spec.optionNames).count == spec.optionNames.count, "\(spec.name): an option is declared twice")
            #expect(Set(spec.help.map(\.name)).count == spec.help.count, "\(spec.name): two help lines share a name")
        }
        #expect(CommandCatalog.families.allSatisfy { !$0.commands.isEmpty })
        #expect(Session.handlers.count == CommandCatalog.all.count)
    }

    /// An option's value completes by what its name means (`tags=` is a list of tags), so a name
    /// must mean one thing in every command.
    @Test func anOptionNameHasOneKindInEveryCommand() {
        var kinds: [String: CommandSpec.Option.Kind] = [:]
        for spec in CommandCatalog.all + CommandCatalog.all.flatMap(\.subcommands) {
            for option in spec.options where option.kind != .pushParameters {
                if let kind = kinds[option.name] { #expect(kind == option.kind, "\(spec.name): \(option.name)=") }
                kinds[option.name] = option.kind
            }
        }
        #expect(CommandCatalog.optionKinds == kinds)
    }

    /// `at`'s help names the commands it refuses to schedule, which ClockCommands lists apart.
    @Test func atExplainsExactlyWhatItCannotSchedule() throws {
        let meaning = try #require(CommandCatalog.info("at")?.help.last?.meaning)
        let named = meaning.replacingOccurrences(of: "any command but ", with: "")
            .replacingOccurrences(of: " and ", with: ", ").components(separatedBy: ", ")
        #expect(Set(named) == ClockCommands.unschedulable)
        #expect(ClockCommands.unschedulable.allSatisfy { CommandCatalog.info($0) != nil })
    }

    /// `at D COMMAND` and `expect COMMAND` (then its PATH=VALUE checks) run another command:
    /// completion goes on with it. No other command takes a command line.
    @Test func onlyAtAndExpectTakeACommandLine() {
        #expect(Set(CommandCatalog.all.filter { $0.commandLineIndex != nil }.map(\.name)) == ["at", "expect"])
        #expect(CommandCatalog.info("at")?.commandLineIndex == 1)
        #expect(CommandCatalog.info("expect")?.commandLineIndex == 0)
    }
}
