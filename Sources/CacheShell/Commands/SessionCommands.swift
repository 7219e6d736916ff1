import CacheCore

/// `source`, `output`, `echo`, `quit`: the session itself.
enum SessionCommands {
    static func source(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(1...1, usage: "FILE")
        let word = args.positional[0]
        guard session.sourceDepth < Session.maxSourceDepth else {
            throw ShellError("source nested deeper than \(Session.maxSourceDepth) files (a source loop?)", at: word.offset)
        }
        let path = session.resolvePath(word.text, relativeTo: source)
        let text = try session.readFile(path, at: word.offset)
        let file = SourceFile(name: path, text: text)
        session.sourceDepth += 1
        defer { session.sourceDepth -= 1 }
        var lexer = Lexer(file, semicolonSeparates: false)
        var count = 0
        while !session.quitRequested, let next = lexer.next() {
            switch next {
            case .failure(let diagnostic):
                session.fail(ShellError(diagnostic.message, at: diagnostic.offset), in: file, command: nil)
                throw ShellError.reported(at: word.offset)
            case .success(let inner):
                count += 1
                if !session.execute(inner, in: file, on: cache) { throw ShellError.reported(at: word.offset) }
            }
        }
        return .ok(["file": .string(word.text), "commands": .int(Int64(count))], human: [])
    }

    static func output(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(0...1, usage: "human|json")
        guard let word = args.positional.first else {
            return Reply(["mode": .string(session.options.mode.rawValue)], human: ["output: \(session.options.mode.rawValue)"])
        }
        guard let mode = OutputMode(rawValue: word.text) else {
            throw ShellError("output takes human or json, not \"\(word.text)\"", at: word.offset)
        }
        session.options.mode = mode
        return .ok(["mode": .string(mode.rawValue)], human: [])
    }

    static func echo(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let (text, _) = Arguments.restOfCommand(command, source, from: 1)
        return Reply(["text": .string(text)], human: [Render.visible(text)])
    }

    static func quit(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(0...0, usage: "no arguments")
        session.requestQuit()
        return .ok(human: [])
    }
}

extension ShellError {
    /// A failure already reported by an inner command (`source`): fails without a second line.
    static func reported(at offset: Int) -> ShellError { ShellError(message: "", offset: offset, alreadyReported: true) }
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
