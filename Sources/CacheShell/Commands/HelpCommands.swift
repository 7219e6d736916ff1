import CacheCore

/// `help [COMMAND]`: the command list, or one command explained, from ``CommandCatalog``.
enum HelpCommands {
    /// Synopses longer than this do not widen the list's first column (so one long synopsis
    /// does not push every summary off the screen).
    static let synopsisColumnLimit = 40

    static let help = CommandSpec(
        name: "help", summary: "list the commands, or explain one",
        arguments: [.command(meaning: "a command name").optional],
        example: "help get", run: help)

    /// Runs `help` or `help COMMAND`.
    /// - Throws: `ShellError` at the word when COMMAND names no command, or for extra words.
    static func help(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: help)
        try args.expect(0...1)
        guard let word = args.positional.first else { return list() }
        guard let info = CommandCatalog.info(word.text) else {
            if let alias = Session.aliases[word.text], let info = CommandCatalog.info(alias) { return explain(info) }
            let suggestion = Session.nearest(word.text, among: Session.commandNames)
            throw ShellError("unknown command \(Arguments.describe(word))"
                             + (suggestion.map { " (did you mean \($0)?)" } ?? " (help lists them)"), at: word.offset)
        }
        return explain(info)
    }

    /// Every command: its synopsis and summary, one line each, summaries aligned.
    /// - Complexity: O(commands).
    static func list() -> Reply {
        let all = CommandCatalog.all
        let width = all.map(\.synopsis.count).filter { $0 <= synopsisColumnLimit }.max() ?? 0
        var lines = all.map { info in
            info.synopsis + String(repeating: " ", count: max(width - info.synopsis.count, 0) + 2) + info.summary
        }
        lines.append("help COMMAND explains one command, with its arguments and an example")
        let commands = all.map { info -> JSONValue in
            .object(["name": .string(info.name), "synopsis": .string(info.synopsis), "summary": .string(info.summary)])
        }
        return Reply(["commands": .array(commands)], human: lines)
    }

    /// One command: synopsis, summary, its arguments aligned, and an example.
    static func explain(_ info: CommandSpec) -> Reply {
        var lines = [info.synopsis, info.summary]
        let width = info.help.map(\.name.count).filter { $0 <= synopsisColumnLimit }.max() ?? 0
        for argument in info.help {
            lines.append("  " + argument.name + String(repeating: " ", count: max(width - argument.name.count, 0) + 2) + argument.meaning)
        }
        lines.append("example: " + info.example)
        let arguments = info.help.map { argument -> JSONValue in
            .object(["name": .string(argument.name), "meaning": .string(argument.meaning)])
        }
        return Reply([
            "name": .string(info.name), "synopsis": .string(info.synopsis), "summary": .string(info.summary),
            "arguments": .array(arguments), "example": .string(info.example),
        ], human: lines)
    }
}
