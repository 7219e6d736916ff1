/// A command synopsis (`get KEY [--force] [--nowait]`) read as a small grammar: the positional
/// slots in order and the options, each with the text it was written as (for hints).
///
/// A synopsis may list variants, one per line or separated by ` / `
/// (`server set|patch|delete KEY [VALUE] / server show [KEY]`).
struct Synopsis {
    /// What a placeholder stands for, as far as completion is concerned.
    enum Kind: Equatable {
        case key, namespace, namespaceWildcard, tag, file, pushType, command, other
    }

    /// A positional argument: literal words (`set|patch`), placeholders (`KEY|NS:*`), or both.
    struct Slot {
        var literals: [String] = []
        var kinds: [Kind] = []
        var repeats = false
        var optional = false
    }

    enum Token {
        case slot(Slot, text: String)
        /// `name=` or `--flag`; `name` is empty for a generic `name=value` option.
        case option(name: String, text: String)
    }

    var tokens: [Token]

    var slots: [Slot] {
        tokens.compactMap { if case .slot(let slot, _) = $0 { slot } else { nil } }
    }

    var options: [String] {
        tokens.compactMap { if case .option(let name, _) = $0, !name.isEmpty { name } else { nil } }
    }

    /// Every form of a command, without its name. A synopsis that only says `SUBCOMMAND` stands
    /// for the forms its arguments list (`set KEY VALUE`, `show [KEY]`).
    static func variants(of info: CommandSpec) -> [Synopsis] {
        if info.synopsis.contains("SUBCOMMAND") {
            let forms = info.help.map(\.name).filter { name in
                info.subcommands.contains { name == $0.name || name.hasPrefix($0.name + " ") }
            }
            if !forms.isEmpty { return forms.map { Synopsis(parsing: Substring($0), command: info.name) } }
        }
        return variants(of: info.synopsis, command: info.name)
    }

    /// Every variant of a synopsis, without the command's name.
    static func variants(of synopsis: String, command: String) -> [Synopsis] {
        var lines: [Substring] = []
        for line in synopsis.split(whereSeparator: \.isNewline) {
            var rest = line[...]
            while let range = rest.firstRange(of: " / ") {
                lines.append(rest[..<range.lowerBound])
                rest = rest[range.upperBound...]
            }
            lines.append(rest)
        }
        return lines.map { Synopsis(parsing: $0, command: command) }
    }

    init(parsing text: Substring, command: String) {
        var words = Synopsis.words(text)
        if words.first == command { words.removeFirst() }
        tokens = words.map(Synopsis.token)
    }

    /// Splits at spaces outside brackets.
    private static func words(_ text: Substring) -> [String] {
        var words: [String] = []
        var current = ""
        var depth = 0
        for c in text {
            if c == "[" { depth += 1 }
            if c == "]" { depth = max(0, depth - 1) }
            if c == " " && depth == 0 {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    private static func token(_ word: String) -> Token {
        var inner = Substring(word)
        var optional = false
        while inner.hasPrefix("[") && inner.hasSuffix("]") && inner.count >= 2 {
            inner = inner.dropFirst().dropLast()
            optional = true
        }
        var repeats = false
        if inner.hasSuffix("...") {
            inner = inner.dropLast(3)
            repeats = true
        }
        if inner.hasPrefix("--") {
            return .option(name: String(inner.prefix { $0 != "|" && $0 != " " }), text: word)
        }
        if let eq = inner.firstIndex(of: "="), inner[..<eq].allSatisfy(isOptionCharacter), eq != inner.startIndex {
            let name = inner[..<eq]
            return .option(name: name == "name" ? "" : String(name) + "=", text: word)
        }
        var slot = Slot(repeats: repeats, optional: optional)
        for alternative in inner.split(separator: "|") {
            if alternative == "*" || alternative.allSatisfy(isOptionCharacter) {
                slot.literals.append(String(alternative))
            } else {
                slot.kinds.append(kind(of: alternative))
            }
        }
        return .slot(slot, text: word)
    }

    private static func kind(of placeholder: Substring) -> Kind {
        if placeholder == "NS:*" { return .namespaceWildcard }
        if placeholder.hasPrefix("tag:") { return .tag }
        if placeholder.contains("KEY") || placeholder == "PATTERN" { return .key }
        if ["NS", "NAME", "NAMESPACE"].contains(placeholder) { return .namespace }
        if placeholder.contains("FILE") || placeholder.contains("PATH") { return .file }
        if placeholder == "TYPE" { return .pushType }
        if placeholder == "COMMAND" { return .command }
        return .other
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
