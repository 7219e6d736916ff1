import CacheCore

/// `source`, `output`, `echo`, `quit`: the session itself; and the family of the man page's
/// "Snapshots, scripts and the session", whose other commands have files of their own.
enum SessionCommands {
    static let family = CommandFamily(title: "Snapshots, scripts and the session", commands: [
        SnapshotCommands.snapshot, SnapshotCommands.restore, SnapshotCommands.diff, ReplayCommands.replay, ReplayShards.merge, ExploreCommands.explore, source, ClientCommands.client, ClientCommands.persist, ClientCommands.hydrate, RecordCommands.record, ExpectCommands.expect, output, echo,
        HelpCommands.help, quit,
    ])

    static let source = CommandSpec(
        name: "source", summary: "run a script in this session",
        arguments: [.file(meaning: "a .cachesh script (a regular file of at most 64 MiB), relative to the script that sources it")],
        example: "source setup.cachesh", run: source)

    static func source(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: Self.source)
        try args.expect(1...1)
        let word = args.positional[0]
        guard session.frames.sources < Session.maxSourceDepth else {
            throw ShellError("source nested deeper than \(Session.maxSourceDepth) files (a source loop?)", at: word.offset)
        }
        let path = session.resolvePath(word.text, relativeTo: source)
        let text = try session.readFile(path, at: word.offset)
        let file = SourceFile(name: path, text: text)
        let (count, ok) = try session.runFrame(file, kind: .source, on: cache) { count throws(ShellError) in
            // Ctrl-C stops a long source between two of its commands: each ran whole.
            if let interrupted = session.options.interrupted, interrupted() {
                throw ShellError("interrupted (Ctrl-C) after \(count) command\(count == 1 ? "" : "s") of \(word.text)", at: word.offset)
            }
        }
        // A command of the file failed, and said so where it did: `source` fails with it.
        guard ok else { return .failedWithin }
        return .ok(["file": .string(word.text), "commands": .int(Int64(count))], human: [])
    }

    static let output = CommandSpec(
        name: "output", summary: "human lines or one JSON object per command",
        arguments: [.oneOf(.word("human", meaning: "aligned tables and name: value lines"),
                           .word("json", meaning: "one JSON object per command, with its command and ok (server: also subcommand)")).optional],
        example: "output json", run: output)

    static func output(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: output)
        try args.expect(0...1, usage: output.usageWithArgumentsRequired)
        guard let word = args.positional.first else {
            return Reply(["mode": .string(session.options.mode.rawValue)], human: ["output: \(session.options.mode.rawValue)"])
        }
        guard let mode = OutputMode(rawValue: word.text) else {
            throw ShellError("output takes human or json, not \"\(word.text)\"", at: word.offset)
        }
        session.options.mode = mode
        return .ok(["mode": .string(mode.rawValue)], human: [])
    }

    static let echo = CommandSpec(
        name: "echo", summary: "print TEXT",
        arguments: [.rest(meaning: "the rest of the line")],
        example: "echo checkpoint 1", run: echo)

    static func echo(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let (text, _) = Arguments.restOfCommand(command, source, from: 1)
        return Reply(["text": .string(text)], human: [Render.visible(text)])
    }

    static let quit = CommandSpec(name: "quit", summary: "leave the shell", example: "quit", run: quit)

    static func quit(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: quit)
        try args.expect(0...0)
        session.requestQuit()
        return .ok(human: [])
    }
}

extension Arguments {
    /// The source text of a command from word `i` on, without lexing it into typed words.
    static func restOfCommand(_ command: RawCommand, _ source: SourceFile, from i: Int) -> (text: String, offset: Int) {
        guard i < command.words.count else { return ("", command.end) }
        let start = command.words[i].offset
        var end = command.end
        while end > start, source.bytes[end - 1] == UInt8(ascii: " ") || source.bytes[end - 1] == UInt8(ascii: "\n")
                || source.bytes[end - 1] == UInt8(ascii: "\r") || source.bytes[end - 1] == UInt8(ascii: ";") {
            end -= 1
        }
        return (String(decoding: source.bytes[start..<end], as: UTF8.self), start)
    }
}
