import CacheCore

/// What runs a command: it sorts the command's words with `Arguments(command, source, for: spec)`,
/// runs it on the cache (the shell is a client of the `Cache` actor, entered once per script or
/// typed line) and answers.
typealias CommandHandler = @Sendable (Session, isolated Cache, RawCommand, SourceFile) throws(ShellError) -> Reply

/// One command of the shell, declared once, beside its handler: its arguments, options and flags,
/// what each means, a one-line summary and an example that runs as it stands.
///
/// Everything else follows from the declaration:
/// - the synopsis (`get KEY [--force] [--nowait]`), and `help` and `help COMMAND`;
/// - parsing: the options and flags `Arguments(command, source, for: spec)` accepts, how many
///   leading words it takes as they stand (a JSON value may look like an option), and the usage an
///   arity error quotes;
/// - the handler table (``CommandCatalog``, `Session.dispatch`) and, for a command with
///   subcommands, the dispatch on its second word;
/// - completion and hints (`Completer`), from the kinds of the arguments;
/// - the man page check (ManPageTests holds man/cachesh.1 to ``CommandCatalog``);
/// - for a command that makes a call on the cache a recording holds (a core operation), how a
///   recording's call is written back as this command (`writes:`, a ``CallForm`` naming the
///   `CacheCall` kinds; `RecordingTranscript` finds it through ``CommandCatalog/callForm(_:)``).
///
/// Adding a command touches only:
/// 1. its family's file (`Commands/*Commands.swift`; a family is one subsection of the man page's
///    COMMANDS, see ``CommandCatalog/families``): a `static let NAME = CommandSpec(...)` beside its
///    handler `static func NAME(...)`, and `NAME` in the family's list at the place `help` shows it;
/// 2. the documents: its entry in man/cachesh.1 (in that subsection), its row in the table of SPEC
///    §3 (both checked by ManPageTests), a line in CHANGELOG.md;
/// 3. its tests.
///
/// A core operation adds, beside its command here, its engine method and, in CacheCore's
/// Cache.swift, its `Cache` method and `CacheCall` case: three source files.
///
/// A command that brings much machinery of its own may be declared in a file of its own beside it
/// (`record`, `snapshot`, `help`); then its family's list names it there, one more line.
///
/// A class, immutable: the catalog, the handler table and each handler share one declaration,
/// which a command's parse reaches with one reference rather than a copy of every field.
public final class CommandSpec: Sendable {
    /// The name as typed (`get`); for a subcommand, the word after its command's name (`set`).
    public let name: String
    /// One line saying what it does (for a subcommand, its line in its command's help).
    public let summary: String
    /// A line that runs as it stands (`get feed:home --nowait`); empty for a subcommand.
    public let example: String
    /// The positional arguments, in order.
    let arguments: [Argument]
    /// The `name=value` options, in synopsis order.
    let options: [Option]
    /// The `--name` flags, in synopsis order.
    let flags: [Flag]
    /// The forms picked by the second word (`server set`, `server show`), for a command that has them.
    let subcommands: [CommandSpec]
    let run: CommandHandler
    /// How a recording's calls of the kinds this command makes are written as this command
    /// (`RecordingTranscript`); nil for a command that makes no call a recording holds.
    let writes: CallForm?

    /// One line: the name, then the arguments, options and flags; ALL-CAPS words are arguments,
    /// `[...]` is optional, `a|b` is a choice, `...` repeats (`get KEY [--force] [--nowait]`). A
    /// command with subcommands shows `SUBCOMMAND ...` and its help lists their forms.
    ///
    /// Built when asked (by `help`, completion, the man page check), not with the catalog: the
    /// catalog is built at every start, and running a script needs none of these texts.
    public var synopsis: String { ([name] + synopsisParts).joined(separator: " ") }
    /// What `help COMMAND` lists between the summary and the example: each argument, option and
    /// flag with what it means, in synopsis order (for a command with subcommands, each form).
    /// Built when asked, as ``synopsis`` is.
    public var help: [(name: String, meaning: String)] {
        subcommands.isEmpty
            ? arguments.flatMap(\.help) + options.map(\.help) + flags.flatMap(\.help)
            : subcommands.map { ($0.synopsis, $0.summary) }
    }
    /// How `Arguments` sorts this command's words.
    let parsing: Parsing

    /// A command.
    /// - Parameters:
    ///   - arguments: the positional arguments, in order.
    ///   - options: `name=value` options (`.duration("ttl", meaning: ...)`).
    ///   - flags: `--name` flags (`.flag("force", meaning: ...)`).
    ///   - run: the handler.
    ///   - writes: how a recorded call this command makes is written as it, for a core operation.
    convenience init(name: String, summary: String, arguments: [Argument] = [], options: [Option] = [],
                     flags: [Flag] = [], example: String, run: @escaping CommandHandler, writes: CallForm? = nil) {
        self.init(name: name, summary: summary, example: example, arguments: arguments, options: options, flags: flags,
                  subcommands: [], depth: 1, writes: writes, run: run)
    }

    /// A command whose second word picks one of its forms (`server set KEY VALUE`); running it
    /// runs that form's handler.
    convenience init(name: String, summary: String, subcommands: [CommandSpec], example: String) {
        self.init(name: name, summary: summary, example: example, arguments: [], options: [], flags: [],
                  subcommands: subcommands, depth: 1, writes: nil) { session, cache, command, source throws(ShellError) in
            let form = try Self.form(named: command, name: name, among: subcommands)
            // Its JSON says which form answered (SPEC §4): `"command":"server","subcommand":"next"`.
            var reply = try form.run(session, cache, command, source)
            reply.subcommand = form.name
            return reply
        }
    }

    /// The form of a command with subcommands that its second word names (`set` of `server set
    /// KEY VALUE`); the command itself for one without.
    /// - Throws: when the word is missing or names no form.
    func form(of command: RawCommand) throws(ShellError) -> CommandSpec {
        subcommands.isEmpty ? self : try Self.form(named: command, name: name, among: subcommands)
    }

    /// The command with the value of each of its JSON options (`Option.json`) taken whole from
    /// the source (`ServerScriptCommands.joinedJSONOptions`): the words its handler sorts, and
    /// `at`'s check of it. The command as it is when it has none.
    /// - Complexity: O(n) in the length of the command.
    func joiningJSONOptions(_ command: RawCommand, _ source: SourceFile) throws(ShellError) -> RawCommand {
        let names = options.filter(\.joinsJSON).map(\.name)
        guard !names.isEmpty else { return command }
        return RawCommand(words: try ServerScriptCommands.joinedJSONOptions(command, source, names: Set(names)),
                          offset: command.offset, end: command.end)
    }

    private static func form(named command: RawCommand, name: String, among subcommands: [CommandSpec]) throws(ShellError) -> CommandSpec {
        guard command.words.count >= 2 else {
            throw ShellError("\(name) needs one of: " + subcommands.map(\.name).joined(separator: ", "), at: command.end)
        }
        let word = command.words[1]
        // A few forms each: searched in order, with no hash table to build at start-up.
        guard let form = subcommands.first(where: { $0.name == word.text }) else {
            throw ShellError("unknown \(name) command \"\(word.text)\" (use " + subcommands.map(\.name).joined(separator: ", ") + ")",
                             at: word.offset)
        }
        return form
    }

    /// One form of a command with subcommands (`set KEY VALUE` of `server`): its arguments start
    /// after the subcommand's name, and `summary` is its line in the command's help.
    convenience init(subcommand name: String, summary: String, arguments: [Argument] = [], options: [Option] = [],
                     flags: [Flag] = [], run: @escaping CommandHandler, writes: CallForm? = nil) {
        self.init(name: name, summary: summary, example: "", arguments: arguments, options: options, flags: flags,
                  subcommands: [], depth: 2, writes: writes, run: run)
    }

    private init(name: String, summary: String, example: String, arguments: [Argument], options: [Option], flags: [Flag],
                 subcommands: [CommandSpec], depth: Int, writes: CallForm?, run: @escaping CommandHandler) {
        self.name = name
        self.summary = summary
        self.example = example
        self.arguments = arguments
        self.options = options
        self.flags = flags
        self.subcommands = subcommands
        self.run = run
        self.writes = writes
        let verbatim = arguments.lastIndex { $0.takesRest || $0.alternatives.contains { $0.kind.isTakenAsItStands } }
        parsing = Parsing(
            skip: depth,
            options: options.contains { $0.kind == .pushParameters } ? nil : options.map(\.name),
            flags: flags.flatMap(\.names),
            leading: verbatim.map { arguments[$0].takesRest ? Int.max : $0 + 1 } ?? 0)
    }

    /// The synopsis after the name, word by word.
    private var synopsisParts: [String] {
        subcommands.isEmpty ? Self.parts(arguments, options, flags, requiringArguments: false) : ["SUBCOMMAND", "..."]
    }

    /// What an arity error says the command takes (`KEY [--force] [--nowait]`, `no arguments`).
    /// Built when an error needs it.
    var usage: String {
        let parts = synopsisParts
        return parts.isEmpty ? "no arguments" : parts.joined(separator: " ")
    }

    /// The option (`ttl=`) and flag (`--force`, `--no-purgeable`) names the command accepts, as
    /// typed up to the value; `push`'s `name=value` parameters, which may have any name, are not among them.
    var optionNames: [String] {
        options.filter { $0.kind != .pushParameters }.map { $0.name + "=" } + flags.flatMap(\.names).map { "--" + $0 }
    }

    /// What the command takes, as an arity error says it, every argument required
    /// (`NAME [ttl=D] ...` where the synopsis shows `[NAME] [ttl=D] ...`).
    var usageWithArgumentsRequired: String {
        Self.parts(arguments, options, flags, requiringArguments: true).joined(separator: " ")
    }

    /// The synopsis after the name, word by word.
    private static func parts(_ arguments: [Argument], _ options: [Option], _ flags: [Flag], requiringArguments: Bool) -> [String] {
        arguments.map { requiringArguments ? $0.text : $0.synopsis } + options.map(\.synopsis) + flags.map(\.synopsis)
    }

    /// How `Arguments` sorts the words of a command.
    struct Parsing: Sendable {
        /// Words before the arguments: the name, and a subcommand's name.
        let skip: Int
        /// The option names accepted; nil accepts any (`push`'s parameters). A few names each:
        /// searched in order, with no hash table to build at start-up.
        let options: [String]?
        /// The flag names accepted, without the dashes.
        let flags: [String]
        /// This many positionals are taken first whatever they look like (`put k a=b` stores the
        /// string `a=b`): up to the last argument that is a JSON value or the rest of the line.
        let leading: Int
    }
}

// MARK: - Arguments, options and flags

extension CommandSpec {
    /// One positional argument: a placeholder (`KEY`), a literal word (`reset`), or a choice of them
    /// (`KEY|NS:*|tag:T`), optional or repeated.
    struct Argument: Sendable {
        /// What a placeholder stands for: it decides what completion offers and how parsing takes the word.
        enum Kind: Sendable, Equatable {
            /// A literal word, typed as shown (`reset`, `*`).
            case word
            /// A cached key; a pattern over keys.
            case key, pattern
            /// A namespace name; every key of a namespace (`NS:*`); a tag (`tag:T`).
            case namespace, namespaceScope, tag
            /// A file; a push type of the configuration; a command name.
            case file, pushType, command
            /// JSON, taken as it stands even when it looks like an option or a flag.
            case value, patch
            /// Text completion has nothing to offer for (a key still completes once it has a colon).
            case duration, count, id, text

            /// Parsing takes the word as it stands: a value may look like `a=b` or `--x`.
            var isTakenAsItStands: Bool { self == .value || self == .patch }
        }

        /// One choice of an argument.
        struct Alternative: Sendable {
            /// As the synopsis shows it (`KEY`, `NS:*`, `entity`).
            let text: String
            let kind: Kind
            /// Its line in `help COMMAND`; nil for none.
            let meaning: String?
            /// The name of that line when it is more than `text` (`entity ID`).
            let label: String?
        }

        var alternatives: [Alternative]
        var isOptional = false
        var repeats = false
        /// Takes the rest of the command as it stands (`at D COMMAND`, `echo TEXT`).
        var takesRest = false
        /// One help line for the whole argument, named as the synopsis shows it without brackets
        /// (`KEY|NS:*|*`), instead of one per alternative.
        var meaning: String?

        private static func make(_ text: String, _ kind: Kind, _ meaning: String?) -> Argument {
            Argument(alternatives: [Alternative(text: text, kind: kind, meaning: meaning, label: nil)])
        }

        /// A placeholder of no kind above (`STATE`): completion offers nothing for it.
        static func placeholder(_ text: String, meaning: String? = nil) -> Argument { make(text, .text, meaning) }

        static func key(_ text: String = "KEY", meaning: String? = nil) -> Argument { make(text, .key, meaning) }
        static func pattern(_ text: String = "PATTERN", meaning: String? = nil) -> Argument { make(text, .pattern, meaning) }
        static func namespace(_ text: String = "NS", meaning: String? = nil) -> Argument { make(text, .namespace, meaning) }
        static func namespaceScope(_ text: String = "NS:*", meaning: String? = nil) -> Argument {
            make(text, .namespaceScope, meaning)
        }
        static func tag(_ text: String = "tag:T", meaning: String? = nil) -> Argument { make(text, .tag, meaning) }
        static func file(_ text: String = "FILE", meaning: String? = nil) -> Argument { make(text, .file, meaning) }
        static func pushType(_ text: String = "TYPE", meaning: String? = nil) -> Argument { make(text, .pushType, meaning) }
        static func command(_ text: String = "COMMAND", meaning: String? = nil) -> Argument { make(text, .command, meaning) }
        static func value(_ text: String = "VALUE", meaning: String? = nil) -> Argument { make(text, .value, meaning) }
        static func patch(_ text: String = "PATCH", meaning: String? = nil) -> Argument { make(text, .patch, meaning) }
        static func duration(_ text: String = "D", meaning: String? = nil) -> Argument { make(text, .duration, meaning) }
        static func count(_ text: String = "N", meaning: String? = nil) -> Argument { make(text, .count, meaning) }
        static func id(_ text: String = "ID", meaning: String? = nil) -> Argument { make(text, .id, meaning) }

        /// A command line, the rest of the command (`at D COMMAND`): completion and hints go on
        /// with that command.
        static func commandLine(_ text: String = "COMMAND", meaning: String? = nil) -> Argument {
            var argument = make(text, .command, meaning)
            argument.takesRest = true
            return argument
        }

        /// The rest of the command as it stands (`echo TEXT`).
        static func rest(_ text: String = "TEXT", meaning: String? = nil) -> Argument {
            var argument = make(text, .text, meaning)
            argument.takesRest = true
            return argument
        }

        /// A literal word (`reset`); `label` names its help line when that says more (`entity ID`).
        static func word(_ word: String, meaning: String? = nil, label: String? = nil) -> Argument {
            Argument(alternatives: [Alternative(text: word, kind: .word, meaning: meaning, label: label)])
        }

        /// A choice (`KEY|NS:*|tag:T`); `meaning` gives the whole choice one help line instead of
        /// one per alternative.
        static func oneOf(_ choices: Argument..., meaning: String? = nil) -> Argument {
            Argument(alternatives: choices.flatMap(\.alternatives), meaning: meaning)
        }

        /// The same argument, which may be left out (`[PATTERN]`).
        var optional: Argument {
            var argument = self
            argument.isOptional = true
            return argument
        }

        /// The same argument, one or more times (`KEY...`).
        var repeated: Argument {
            var argument = self
            argument.repeats = true
            return argument
        }

        /// As the synopsis shows it without the brackets of an optional argument (`KEY|NS:*|*`, `KEY...`).
        var text: String {
            alternatives.map(\.text).joined(separator: "|") + (repeats ? "..." : "")
        }

        /// As the synopsis shows it (`[KEY|NS:*|*]`).
        var synopsis: String { isOptional ? "[" + text + "]" : text }

        var help: [(name: String, meaning: String)] {
            if let meaning { return [(text, meaning)] }
            return alternatives.compactMap { alternative in
                alternative.meaning.map { (alternative.label ?? alternative.text + (repeats ? "..." : ""), $0) }
            }
        }
    }

    /// A `name=value` option.
    struct Option: Sendable {
        enum Kind: Sendable, Equatable {
            /// A duration (`ttl=5m`); a whole number (`max=100`); comma-separated tags (`tags=a,b`);
            /// anything else, which completion has nothing to offer for.
            case duration, count, tags, text
            /// Words of any `name=value`, filling `{name}` in a push rule's targets.
            case pushParameters
        }

        /// The name before `=` (`ttl`).
        let name: String
        /// What the value is shown as (`D` in `ttl=D`).
        let placeholder: String
        let kind: Kind
        let meaning: String
        /// A `.text` option whose value may be JSON spanning blanks (`headers={"A":"a, b"}`): the
        /// command's words are joined around it before they are sorted
        /// (``CommandSpec/joiningJSONOptions(_:_:)``).
        var joinsJSON = false

        static func duration(_ name: String, meaning: String) -> Option {
            Option(name: name, placeholder: "D", kind: .duration, meaning: meaning)
        }

        static func count(_ name: String, meaning: String) -> Option {
            Option(name: name, placeholder: "N", kind: .count, meaning: meaning)
        }

        static func tags(_ name: String, meaning: String) -> Option {
            Option(name: name, placeholder: "a,b", kind: .tags, meaning: meaning)
        }

        /// An option of no kind above, its value shown as `placeholder` (`field=NAME`).
        static func text(_ name: String, placeholder: String, meaning: String) -> Option {
            Option(name: name, placeholder: placeholder, kind: .text, meaning: meaning)
        }

        /// A `.text` option whose value may be JSON (an object, array or string) that spans
        /// blanks: `headers={"A":"a, b"}`, `error="timed out"` (`joinsJSON`).
        static func json(_ name: String, placeholder: String, meaning: String) -> Option {
            Option(name: name, placeholder: placeholder, kind: .text, meaning: meaning, joinsJSON: true)
        }

        /// Any number of `name=value` words, of any name (`push TYPE [name=value...]`).
        static func pushParameters(meaning: String) -> Option {
            Option(name: "name", placeholder: "value", kind: .pushParameters, meaning: meaning)
        }

        var synopsis: String { "[" + name + "=" + placeholder + (kind == .pushParameters ? "...]" : "]") }

        var help: (name: String, meaning: String) { (name + "=" + placeholder, meaning) }
    }

    /// A `--name` flag, and with a `negation` meaning, its `--no-name` (which the synopsis leaves out).
    struct Flag: Sendable {
        let name: String
        let meaning: String
        let negation: String?

        static func flag(_ name: String, meaning: String, negation: String? = nil) -> Flag {
            Flag(name: name, meaning: meaning, negation: negation)
        }

        /// The names it is typed as, without the dashes: `name`, and `no-name` with a negation.
        var names: [String] { negation == nil ? [name] : [name, "no-" + name] }

        var synopsis: String { "[--" + name + "]" }

        var help: [(name: String, meaning: String)] {
            [("--" + name, meaning)] + (negation.map { [("--no-" + name, $0)] } ?? [])
        }
    }
}

/// How a command writes a recorded call (`CacheCall`) of its kinds in a transcript
/// (`RecordingTranscript`): the command line, and the reply the shell prints for what the call
/// returned (nil when the call threw: the transcript prints its error). ``CommandCatalog``
/// holds every kind but `unsupported` written by exactly one command (CacheCallTests checks).
struct CallForm: Sendable {
    typealias Write = @Sendable (CacheCall, RecordedReturn, TranscriptWriter) throws(Diagnostic) -> (command: String, reply: Reply?)
    /// The kinds of call it writes.
    let kinds: [CacheCall.Kind]
    /// Writes a call of one of `kinds`, checking that the shell can type its words.
    let write: Write

    init(_ kinds: CacheCall.Kind..., write: @escaping Write) {
        self.kinds = kinds
        self.write = write
    }
}

/// Meanings several commands give their arguments.
enum Meaning {
    static let key = "NAMESPACE:ID, or ID for namespace default (feed:home, profile:42)"
    static let duration = "a duration: 250ms, 30s, 5m, 1h30m, 2d"
    static let patch = "a JSON merge patch; values may be {\"$inc\": N}, {\"$push\": V}, {\"$pull\": V}"
}
