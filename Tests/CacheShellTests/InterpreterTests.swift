import CacheCore
@testable import CacheShell
import Foundation
import Synchronization
import Testing
import TestSupport

/// The interpreter and its renderers: every command makes one outcome, the renderers print it,
/// and between two commands each part holds its rules.
@Suite struct InterpreterTests {
    /// Scripts that reach each path of the interpreter: the batch's plain commands, lexed ones,
    /// errors, `source`, `at` (a reply, an error, a nested `at`), observers, async reads, `load`
    /// of a file, `quit`.
    static let scripts: [String] = [
        "put a:1 {\"x\":1}\nget a:1\nget a:2\nput a:2 [1]\n",
        "put a:1 {\"x\":1}\nbogus\nget a:1 extra\nput b \"x\n",
        "watch a:*\nput a:1 {}\nat 1s put a:2 {}\nat 2s get nosuch extra\nat 1s at 1s get a:1\nadvance 5s\n",
        "server latency 1s a:1\nget a:1 --async\nadvance 2s\nsource inner.cachesh\nload config.json\nget a:1\n",
        "source broken.cachesh\nget a:1\nquit\nget a:1\n",
    ]

    /// Writes the files the scripts name into a fresh directory.
    static func directory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-interp-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try! "put i:1 {\"n\":1}\nget i:1\nget i:1 extra\n".write(toFile: path + "/inner.cachesh", atomically: true, encoding: .utf8)
        try! "put b {\"x\n".write(toFile: path + "/broken.cachesh", atomically: true, encoding: .utf8)
        try! "{\"namespaces\":{\"a\":{\"ttl\":\"1m\"}}}".write(toFile: path + "/config.json", atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `script` one command at a time in a session set up by `setUp`, checking every part's
    /// invariants after each command; returns the problems found.
    static func problems(_ script: String, in directory: String, setUp: @escaping @Sendable (Session) -> Void) async -> [String] {
        await Session.with { session, cache in
            setUp(session)
            var problems: [String] = []
            for line in script.split(separator: "\n") {
                session.run(SourceFile(name: directory + "/s.cachesh", text: line + "\n"), on: cache)
                problems += session.invariantViolations().map { "after \(line): \($0)" }
                _ = session.takeOutput()
            }
            return problems
        }
    }

    @Test(arguments: 0..<scripts.count)
    func everyPartHoldsItsRulesBetweenCommands(script: Int) async {
        let directory = Self.directory()
        let setUps: [@Sendable (Session) -> Void] = [
            { _ in },
            { $0.keepsWholeHistory = false },
            { session in session.keepsWholeHistory = false; session.directOutput = OutputBuffer() },
            { session in session.options.echo = true },
            { session in session.options.mode = .json; session.options.colour = true },
        ]
        for setUp in setUps {
            #expect(await Self.problems(Self.scripts[script], in: directory, setUp: setUp) == [])
        }
    }

    /// The checks find what they look for: a renderer told to write straight with nowhere to
    /// write, a top frame inside another, an outcome holding items while no command runs.
    @Test func theChecksCanFail() {
        var terminal = TerminalRenderer()
        terminal.writesStraight = true
        #expect(terminal.invariantViolations() == ["writes straight with no buffer"])
        var frames = FrameStack()
        frames.push(.top)
        frames.push(.top)
        #expect(frames.invariantViolations() == ["a top frame inside another"])
        var outcome = Outcome()
        outcome.items.append(.line("x", isError: false))
        #expect(outcome.invariantViolations() == ["an outcome holds items while no command runs"])
    }

    /// A batch's lone reply goes straight into the output buffer, byte for byte what the same
    /// command prints through the sink; a batch that neither echoes nor records keeps no history
    /// (nothing would read it), and one that echoes keeps the same text its output shows.
    @Test(arguments: [OutputMode.human, .json])
    func aReplyWrittenStraightIsWhatTheSinkWouldGet(mode: OutputMode) async {
        let script = "put a:1 {\"x\":\"\\u001b[31m\"}\nget a:1\nget b:1\n"
        let viaSink = await Session.with(options: SessionOptions(mode: mode)) { session, cache in
            session.keepsWholeHistory = false
            session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
            return (session.takeOutput().map(\.text).joined(), session.history.entries.count)
        }
        let straight = await Session.with(options: SessionOptions(mode: mode)) { session, cache in
            let buffer = OutputBuffer()
            session.keepsWholeHistory = false
            session.directOutput = buffer
            session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
            return (buffer.withBytes { String(decoding: $0, as: UTF8.self) } + session.takeOutput().map(\.text).joined(),
                    session.history.entries.count)
        }
        #expect(straight.0 == viaSink.0)
        #expect(straight.0.contains("\\u001b[31m"))
        #expect(straight.1 == 0 && viaSink.1 == 0)
        // With --echo the batch keeps its last command, and its entry is what it printed.
        var echoing = SessionOptions(mode: mode)
        echoing.echo = true
        let alone = await Session.with(options: SessionOptions(mode: mode)) { session, cache in
            session.keepsWholeHistory = false
            session.run(SourceFile(name: "s.cachesh", text: "get b:1\n"), on: cache)
            return session.takeOutput().map(\.text).joined()
        }
        let echoed = await Session.with(options: echoing) { session, cache in
            session.keepsWholeHistory = false
            session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
            return (session.takeOutput().map(\.text).joined(), session.history.lastAsTranscript)
        }
        #expect(echoed.1 == "cachesh> get b:1\n" + alone)
        #expect(echoed.0.hasSuffix(echoed.1))
    }

    /// A command that does not lex in a sourced file is that file's error in the history too
    /// (and so in `--echo` and a recording), as every other error of a sourced file is: a replay
    /// of the transcript names the same file.
    @Test func aSourcedFilesLexErrorKeepsItsFileInTheTranscript() async {
        let directory = Self.directory()
        let echoed = await Session.with(options: { var o = SessionOptions(); o.echo = true; return o }()) { session, cache in
            session.run(SourceFile(name: directory + "/s.cachesh", text: "source broken.cachesh\nsource inner.cachesh\n"), on: cache)
            return session.takeOutput().map(\.text).joined()
        }
        #expect(echoed.contains("cachesh> source broken.cachesh\n\(directory)/broken.cachesh:1: error: unterminated"))
        #expect(echoed.contains("cachesh> source inner.cachesh\nkeys: i:1\n"))
        #expect(echoed.contains("\(directory)/inner.cachesh:3: error: get takes KEY"))
    }

    /// A `source` in a batch (no history kept whole, no `--echo` nor recording) hands on each
    /// command's output as the command ends, as the same commands run as a script do: the file's
    /// output is never held until the `source` ends (600 `keys` of 2,000 keys through a `source`
    /// held 465 MB, 13.8 MB as a script). Seen from the sink, before each command of the file
    /// runs, and in what the whole run printed, in order, in both modes.
    @Test(arguments: [OutputMode.human, .json])
    func aSourcedFilesOutputIsHandedOnAsEachCommandEnds(mode: OutputMode) async {
        let directory = Self.directory()
        let commands = "echo one\nput i:1 1\necho three\nget i:1 extra\n"
        try! commands.write(toFile: directory + "/four.cachesh", atomically: true, encoding: .utf8)
        let handed = Mutex<[String]>([])
        let seen = Mutex<[Int]>([])
        var options = SessionOptions(mode: mode)
        options.interrupted = { seen.withLock { $0.append(handed.withLock { $0.count }) }; return false }
        let script = "source four.cachesh\nsource inner.cachesh\n"
        let asScript = await Session.with(options: SessionOptions(mode: mode)) { session, cache in
            session.keepsWholeHistory = false
            session.run(SourceFile(name: directory + "/four.cachesh", text: commands), on: cache)
            return session.takeOutput().map(\.text).joined()
        }
        let printed = await Session.with(options: options) { session, cache in
            session.keepsWholeHistory = false
            session.sink = { text, _ in handed.withLock { $0.append(text) } }
            session.run(SourceFile(name: directory + "/s.cachesh", text: script), on: cache)
            return handed.withLock { $0.joined() }
        }
        // Before each command of four.cachesh, the earlier ones' output had been handed on; then
        // come inner.cachesh's three.
        let before = seen.withLock { $0 }
        #expect(before.count == 7)
        #expect(Array(before.prefix(4)) == [0, 1, 2, 3])
        // What the file's commands print is what they print run as a script.
        #expect(printed.hasPrefix(asScript))
        let error = "get takes KEY [--force] [--nowait] [--async]; unexpected \\\"extra\\\""
        #expect(printed.hasSuffix(mode == .json
            ? "{\"column\":null,\"command\":\"get\",\"error\":\"\(error)\",\"file\":\"\(directory)/inner.cachesh\",\"line\":3,\"ok\":false}\n"
            : "\(directory)/inner.cachesh:3: error: get takes KEY [--force] [--nowait] [--async]; unexpected \"extra\"\n"))
    }
}
