/// One form of a command as completion and hints see it: its positional slots, options and flags in
/// synopsis order, each with the text the synopsis shows (for hints). Built from the command's
/// ``CommandSpec``: a command has one form, or one per subcommand (`server set KEY VALUE`).
struct CommandForm {
    /// A positional argument: literal words (`set`, `reset`), placeholders (`KEY|NS:*`), or both.
    struct Slot {
        var literals: [String] = []
        var kinds: [CommandSpec.Argument.Kind] = []
        var repeats = false
        var optional = false
    }

    enum Token {
        case slot(Slot, text: String)
        /// `name=` or `--flag`; `name` is empty for `push`'s `name=value` parameters.
        case option(name: String, text: String)
    }

    var tokens: [Token]

    var slots: [Slot] {
        tokens.compactMap { if case .slot(let slot, _) = $0 { slot } else { nil } }
    }

    /// The form of a command's declared arguments, options and flags, after `leading` literal
    /// words (a subcommand's name).
    init(_ spec: CommandSpec, leading: [String] = []) {
        tokens = leading.map { .slot(Slot(literals: [$0]), text: $0) }
        for argument in spec.arguments {
            var slot = Slot(repeats: argument.repeats, optional: argument.isOptional)
            for alternative in argument.alternatives {
                if alternative.kind == .word { slot.literals.append(alternative.text) } else { slot.kinds.append(alternative.kind) }
            }
            tokens.append(.slot(slot, text: argument.synopsis))
        }
        for option in spec.options {
            tokens.append(.option(name: option.kind == .pushParameters ? "" : option.name + "=", text: option.synopsis))
        }
        for flag in spec.flags {
            tokens.append(.option(name: "--" + flag.name, text: flag.synopsis))
        }
    }

    private init(tokens: [Token]) {
        self.tokens = tokens
    }

    /// Every form of a command, without its name: its own, or each subcommand's.
    static func forms(of spec: CommandSpec) -> [CommandForm] {
        spec.subcommands.isEmpty ? [CommandForm(spec)] : spec.subcommands.map { CommandForm($0, leading: [$0.name]) }
    }

    /// What the synopsis shows after the name, as a form: the hint before any argument is typed
    /// (`SUBCOMMAND ...` for a command with subcommands).
    static func synopsis(of spec: CommandSpec) -> CommandForm {
        guard !spec.subcommands.isEmpty else { return CommandForm(spec) }
        return CommandForm(tokens: [.slot(Slot(kinds: [.text]), text: "SUBCOMMAND"), .slot(Slot(repeats: true), text: "...")])
    }

    static func isOptionCharacter(_ c: Character) -> Bool {
        c.isLowercase || c == "-" || c.isNumber
    }

    /// Whether a typed word is an option (`ttl=5m`, `--force`) rather than a positional argument.
    static func isOptionWord(_ word: String) -> Bool {
        if word.hasPrefix("--") { return true }
        guard let eq = word.firstIndex(of: "="), eq != word.startIndex else { return false }
        return word[..<eq].allSatisfy(isOptionCharacter)
    }

    /// Matches typed positional words against the slots: the slot the next word fills (nil past
    /// the last), or nil for the whole result when a literal slot got another word.
    func slotAfter(_ positional: [String]) -> (slot: Slot?, index: Int)? {
        let slots = self.slots
        var i = 0
        for word in positional {
            guard i < slots.count else { return (nil, i) }
            let slot = slots[i]
            if slot.kinds.isEmpty && !slot.literals.contains(word) { return nil }
            if !slot.repeats { i += 1 }
        }
        return (i < slots.count ? slots[i] : nil, i)
    }

    /// The synopsis left once `filled` positional slots and the typed options are given:
    /// what a hint shows.
    func remainder(filled: Int, typedOptions: [String]) -> String {
        var slotIndex = 0
        var parts: [String] = []
        for token in tokens {
            switch token {
            case .slot(let slot, let text):
                defer { slotIndex += 1 }
                if slotIndex < filled && !slot.repeats { continue }
                if slotIndex < filled && slot.repeats {
                    parts.append(text.hasPrefix("[") ? text : "[\(text)]")
                    continue
                }
                parts.append(text)
            case .option(let name, let text):
                if !name.isEmpty && typedOptions.contains(where: { name.hasSuffix("=") ? $0.hasPrefix(name) : $0 == name }) {
                    continue
                }
                parts.append(text)
            }
        }
        return parts.joined(separator: " ")
    }
}

extension CommandSpec {
    /// The position of the argument that is a command line of its own (`COMMAND` in
    /// `at D COMMAND`): completion and hints go on with that command.
    var commandLineIndex: Int? {
        arguments.firstIndex { $0.takesRest && $0.alternatives.contains { $0.kind == .command } }
    }
}
