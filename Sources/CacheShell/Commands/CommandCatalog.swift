/// Commands declared together: one subsection of the man page's COMMANDS, in its order, and
/// (mostly) one file of `Commands/`.
public struct CommandFamily: Sendable {
    /// The man page's subsection title (`Reading and writing`).
    public let title: String
    /// Its commands, in the order `help` and the man page list them.
    public let commands: [CommandSpec]
}

/// Every command of the shell, in the order of SPEC §3 and the man page: the source of `help`, the
/// handler table, tab completion, argument hints and the man page's command list.
public enum CommandCatalog {
    /// The families, in the order of the man page's COMMANDS subsections.
    public static let families: [CommandFamily] = [
        ConfigCommands.family,
        ClockCommands.family,
        EntryCommands.family,
        RealtimeCommands.family,
        LifecycleCommands.family,
        ServerCommands.family,
        ObserveCommands.family,
        SessionCommands.family,
    ]

    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = families.flatMap(\.commands)

    /// The command named `name`, or nil.
    /// - Complexity: O(1).
    public static func info(_ name: String) -> CommandSpec? {
        byName[name].map { all[$0] }
    }

    private static let byName: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })

    /// What the value of each option name is. An option name means one thing in every command
    /// (`tags=` is always a list of tags), so a value completes the same wherever it is typed.
    static let optionKinds: [String: CommandSpec.Option.Kind] = {
        var kinds: [String: CommandSpec.Option.Kind] = [:]
        for spec in all + all.flatMap(\.subcommands) {
            for option in spec.options where option.kind != .pushParameters { kinds[option.name] = option.kind }
        }
        return kinds
    }()
}

// MARK: - Where a JSON value may span lines

/// What the lexer knows of a word already read in the command it is lexing: enough to find the
/// command's declaration and count its arguments (``CommandCatalog/mayContinueJSON(after:)``).
struct PrecedingWord: Sendable, Equatable {
    /// A bare word's UTF-8 text, its first ``PrecedingWord/maxBytes`` bytes at most; empty for a
    /// quoted word or a JSON value.
    var text: [UInt8]
    var isBare: Bool

    /// Bytes of a word kept: more than any command name.
    static let maxBytes = 64
    /// Words of a command kept: more than any declaration has before a JSON argument, `at` and
    /// `expect` nested a few times included. A bracket after more words may span lines.
    static let maxWords = 24
}

extension CommandCatalog {
    /// Whether a JSON object or array that starts after `preceding` (the words of its command read
    /// so far) may go on past the end of its line: yes where the command's declaration takes a
    /// JSON value (`put KEY VALUE`, `event patch KEY PATCH`, `restore {SNAPSHOT}`, a FILE, which may
    /// be given inline), and wherever it declares nothing (an unknown command, an extra word: the
    /// command reports those). No where it takes a key, a pattern, a name, a duration or text
    /// (`keys [fg]*`, `echo step [1 of 3`): there the brackets must balance on their line, and a
    /// word that balances and goes on (`[fg]*`) is one word.
    ///
    /// The lexer and ``CommandScanner`` both ask this, with the same words, so they agree on where
    /// a command ends.
    /// - Complexity: O(words) for up to ``PrecedingWord/maxWords`` words.
    static func mayContinueJSON(after preceding: [PrecedingWord]) -> Bool {
        guard preceding.count < PrecedingWord.maxWords else { return true }
        var words = preceding[...]
        // Nested command lines (`at 5s put k {`): each round looks at one command's declaration.
        for _ in 0..<PrecedingWord.maxWords {
            guard let first = words.first, first.isBare else { return true }
            let typed = String(decoding: first.text, as: UTF8.self)
            guard var spec = info(Session.aliases[typed] ?? typed) else { return true }
            words = words.dropFirst()
            if !spec.subcommands.isEmpty {
                guard let second = words.first, second.isBare,
                      let sub = spec.subcommands.first(where: { $0.name.utf8.elementsEqual(second.text) }) else { return true }
                spec = sub
                words = words.dropFirst()
            }
            // The positional this word is: options and flags after the leading ones do not count.
            var index = 0
            var position = words.startIndex
            var restStart: Int?
            while position < words.endIndex {
                if index < spec.arguments.count, spec.arguments[index].takesRest {
                    restStart = position
                    break
                }
                let word = words[position]
                if !(index >= spec.parsing.leading && word.isBare && isOptionOrFlag(word.text)) { index += 1 }
                position += 1
            }
            if let restStart {
                // Inside the rest of the line: a command line to look into, or text.
                guard spec.arguments[index].alternatives.contains(where: { $0.kind == .command }) else { return false }
                words = words[restStart...]
                continue
            }
            let argument: CommandSpec.Argument?
            if index < spec.arguments.count {
                argument = spec.arguments[index]
            } else if let last = spec.arguments.last, last.repeats {
                argument = last
            } else {
                argument = nil
            }
            guard let argument else { return true }
            return argument.alternatives.contains { alternative in
                switch alternative.kind {
                case .value, .patch, .file: true
                // The first word of a command line: a bracket there is no command, which the command reports.
                case .command: argument.takesRest
                case .text: argument.takesRest ? false : alternative.text.hasPrefix("{") || alternative.text.hasPrefix("[")
                default: false
                }
            }
        }
        return true
    }

    private static func isOptionOrFlag(_ text: [UInt8]) -> Bool {
        let word = Word(text: String(decoding: text, as: UTF8.self), kind: .bare, offset: 0, end: 0)
        return word.option != nil || word.flag != nil
    }
}
