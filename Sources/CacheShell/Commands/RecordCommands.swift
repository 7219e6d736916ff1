#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CacheCore
import CacheServer

/// `record FILE [--from-start]` / `record stop`: write this session as a transcript (SPEC §6).
///
/// A recording always replays in a fresh session. `record FILE` records from here on: it starts
/// with the state now as one line, `restore {SNAPSHOT}` in compact JSON (`output json` first in a
/// JSON session), then each command as it runs, until `record stop`. `record FILE --from-start`
/// (the interactive shell, which keeps its history) writes the session from its start instead:
/// `output json` when it began in JSON mode, `restore {SNAPSHOT}` (one line) of the state it began
/// from when there is one, then every command so far with its output (a `load FILE` written as
/// `load {CONFIG}`). `#` comments are written as `cachesh> # ...` lines, as `--echo` prints them.
/// The transcript names no other file, so it alone is the bug report. Errors are
/// written in their interactive form. `record` commands themselves are not written: a replay must
/// not write files, and their output is not part of the session being recorded.
enum RecordCommands {
    static let record = CommandSpec(
        name: "record", summary: "write this session from here on as a transcript, until record stop",
        arguments: [.oneOf(.file(meaning: "the transcript to write, in plain text (colour stays on the screen): a regular file (or the one a symbolic link leads to), replaced by the whole recording at record stop or when the session ends (a failed write leaves the old file), its mode kept"),
                           .word("stop", meaning: "stop writing"))],
        flags: [.flag("from-start", meaning: "write the whole session from its start (the interactive shell), not from here on")],
        example: "record session.transcript", run: record)

    static func record(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: record)
        try args.expect(1...1, usage: "FILE (or stop)")
        let word = args.positional[0]
        if word.kind == .bare && word.text == "stop" {
            if args.flag("from-start") { throw ShellError("record stop: --from-start goes with record FILE", at: word.offset) }
            guard let recording = session.recording else {
                throw ShellError("record stop: not recording (record FILE starts)", at: word.offset)
            }
            session.recording = nil
            session.joinTimelineAfterRecording()
            if let failure = recording.stop() {
                throw ShellError("record: could not write \(recording.name): \(failure)", at: word.offset)
            }
            let count = recording.commandCount
            return .ok(["file": .string(recording.name), "commands": .int(Int64(count)), "stopped": .bool(true)],
                       human: ["recorded \(count) command\(count == 1 ? "" : "s") to \(recording.name)"])
        }
        // (`record stop` needs no wait: while a recording is open, commits are synchronous.)
        try session.touchFile("write", word.text, at: word.offset)
        guard session.frames.runsTopLevel else {
            throw ShellError("record runs only as a command of its own, not from a sourced file", at: command.offset)
        }
        if let current = session.recording {
            throw ShellError("already recording to \(current.name) (record stop first)", at: word.offset)
        }
        let fromStart = args.flag("from-start")
        if fromStart && !session.keepsWholeHistory {
            throw ShellError("record --from-start: a script, -c or standard input keeps no history (only the interactive shell does); record FILE records from here on", at: command.offset)
        }
        if !fromStart, let problem = startProblem(session, cache) { throw ShellError("record: " + problem, at: word.offset) }
        let path = session.resolvePath(word.text, relativeTo: source)
        if let problem = session.storeFileProblem(path) { throw ShellError("record: cannot write \(path): \(problem)", at: word.offset) }
        let recording: Recording
        do {
            recording = try Recording(name: word.text, path: path, session: session, fromStart: fromStart, on: cache)
        } catch {
            throw ShellError("record: cannot write \(error.path): \(error.description)", at: word.offset)
        }
        session.recording = recording
        if !fromStart {
            session.timelineBeforeRecording = session.timeline
            session.timeline = Timeline()
        }
        let count = recording.commandCount
        return .ok(["file": .string(word.text), "commands": .int(Int64(count)), "from_start": .bool(fromStart)],
                   human: [fromStart ? "recording to \(word.text) (\(count) command\(count == 1 ? "" : "s") so far)"
                                     : "recording to \(word.text) from here on"])
    }

    // MARK: The history a recording starts from

    /// Why a recording cannot start from here on: the session holds what no command after a
    /// `restore` can make again, so the transcript would not replay as the session ran.
    static func startProblem(_ session: Session, _ cache: isolated Cache) -> String? {
        if session.clients.several {
            return "the session has \(session.clients.all.count) clients, and a recording starts from one snapshot, which holds "
                + "the current client's cache alone: record before client NAME makes a second client (SPEC §3 Clients)"
        }
        let reads = cache.waitingReadKeys
        if !reads.isEmpty {
            let shown = reads.prefix(3).joined(separator: " ") + (reads.count > 3 ? " ..." : "")
            return "a read started with --async is waiting for its answer (\(shown)), and a snapshot does not hold it: "
                + "record before the read starts, or after its answer (advance)"
        }
        if !session.persisted.entries.isEmpty {
            return "the session has a persisted cache (persist), which a snapshot does not keep: "
                + "record before the first persist, or persist --clear first"
        }
        if let path = session.schedule.texts.lazy.compactMap(Session.fileNamed(byScheduled:)).first {
            return "a command at scheduled reads or writes a file (\(path)), which a restored snapshot may not schedule: "
                + "record before it is scheduled, or after it runs (advance)"
        }
        return nil
    }

    /// The commands that make again what the server holds beside its snapshot: strict mode and
    /// the answers queued by `server next` (each key's in order, the keys sorted, then the
    /// validations'). A recording from here on writes them after its `restore`, whose snapshot
    /// leaves them out (`withoutServerScript`).
    static func serverScript(_ server: SimulatedServer) -> [(command: String, reply: Reply)] {
        var commands: [(String, Reply)] = []
        var strict = ServerScriptCommands.strictReply(true)
        strict.subcommand = "strict"
        if server.strict { commands.append(("server strict on", strict)) }
        let next = { (key: String?, answer: ScriptedAnswer) in
            var reply = ServerScriptCommands.queued(key)
            reply.subcommand = "next"
            commands.append((SourceScan.readAlone("server next " + ([key ?? "--validate"] + nextOptions(answer)).joined(separator: " ")), reply))
        }
        for key in server.scripted.keys.sorted() {
            for answer in server.scripted[key] ?? [] { next(key, answer) }
        }
        for answer in server.scriptedValidations { next(nil, answer) }
        return commands
    }

    /// `document` without the server's scripted answers and strict mode (`server.next`,
    /// `server.next_validations`, `server.strict`): a recording from here on writes them after
    /// its `restore` as the commands that make them (`serverScript`), which read as what they do.
    static func withoutServerScript(_ document: JSONValue) -> JSONValue {
        guard case .object(var top) = document, case .object(var server)? = top["server"] else { return document }
        for name in ["next", "next_validations", "strict"] { server[name] = nil }
        top["server"] = .object(server)
        return .object(top)
    }

    /// The options of `server next` that queue `answer`.
    static func nextOptions(_ answer: ScriptedAnswer) -> [String] {
        var options: [String] = []
        if let latency = answer.latency { options.append("latency=" + TimeText.formatDuration(latency)) }
        let error = { (message: String) in "error=" + TranscriptWriter.optionJSON(.string(message)) }
        switch answer.outcome {
        case .data: break
        case .value(let value):
            switch answer.body {
            case .text(let text)?: options.append("text=" + TranscriptWriter.optionJSON(.string(text)))
            case .binary(let size, let digest)?: options.append("binary=\(size):sha256:\(digest)")
            case .json?, nil: options.append("value=" + TranscriptWriter.optionJSON(value))
            }
        case .notFound: options.append("--not-found")
        case .failure(let message): options.append(message == "server error" ? "--fail" : error(message))
        case .noAnswer: options.append("--no-answer")
        case .lostAnswer(let message):
            options.append("--lost-answer")
            if message != "answer lost" { options.append(error(message)) }
        case .verdicts(let verdicts): options.append("value=" + TranscriptWriter.optionJSON(RecordingFormat.encodeVerdicts(verdicts)))
        }
        if let version = answer.version { options.append("version=\(version)") }
        if let status = answer.status { options.append("status=\(status)") }
        if let headers = answer.headers { options.append("headers=" + TranscriptWriter.optionJSON(compact: HTTPCommands.headersObject(headers))) }
        if answer.commit { options.append("--commit") }
        return options
    }

    // MARK: What a recording writes

    /// The first line of every recording and its last: `--verify` fails a file that starts with
    /// the first but does not end with the last (a recording that lost its end, SPEC §6).
    static let firstComment = "# recorded by cachesh (a whole recording ends with # end of recording)"
    static let lastComment = "# end of recording"

    /// Why `transcript` cannot be verified as it stands: a recording whose end was lost. Nil for
    /// a whole recording and for every transcript that does not start as a recording does.
    static func cutShort(_ transcript: Transcript) -> String? {
        guard transcript.steps.first?.command == firstComment, transcript.steps.last?.command != lastComment else { return nil }
        return "a recording cut short: it starts with \"\(firstComment)\" but its last command is not "
            + "\"\(lastComment)\" (the file lost its end; to verify part of a recording on purpose, delete its first line)"
    }

    /// True when `command` runs `record`, which a recording leaves out.
    static func isRecordCommand(_ command: String) -> Bool {
        firstWords(command, 1) == ["record"]
    }

    /// The first `count` words of `command`, or fewer when it has fewer or does not lex.
    private static func firstWords(_ command: String, _ count: Int) -> [String] {
        var lexer = Lexer(SourceFile(name: nil, text: command), semicolonSeparates: false)
        guard case .success(let raw)? = lexer.next() else { return [] }
        return raw.words.prefix(count).map(\.text)
    }

    /// One command and its output as a recording writes them (the history already holds errors
    /// in their interactive form).
    static func entry(command: String, output: String) -> String {
        TranscriptSyntax.render(command: command, output: output)
    }

    /// The transcript text a recording starts with. From here on (`record FILE`): the state now
    /// as one line, `restore {SNAPSHOT}` in compact JSON (with `output json` before it in a JSON
    /// session). From the start (`record FILE --from-start`, the interactive shell only): the
    /// state the session began from when there is one (a store, a `restore`), on one line too,
    /// then every command so far. It names no other file: a configuration loaded from a file is
    /// written as `load {CONFIG}`, so the transcript alone replays, under `--safe` too.
    static func header(for session: Session, fromStart: Bool, on cache: isolated Cache) -> (text: String, commands: Int) {
        var history = session.history.entries[...]
        // The mode the history began in: a JSON session's recording starts with `output json`.
        let mode = fromStart ? session.history.entries.startMode ?? session.options.mode : session.options.mode
        var text = entry(command: firstComment, output: "")
        var commands = 0
        if mode == .json {
            let reply = JSONValue.object(["command": "output", "mode": "json", "ok": true]).compactText
            text += entry(command: "output json", output: reply + "\n")
            commands += 1
        }
        if !fromStart {
            let state = stateCommands(for: session, mode: mode, on: cache)
            text += state.text
            commands += state.commands
            history = history[history.endIndex...]
        } else if let base = session.baseSnapshot.map({ (try? JSONValue.canonicalCompactText(parsing: $0, maxDepth: JSONValue.documentDepth)) ?? $0 }) {
            text += restoreEntry(base, mode: mode, on: cache)
            commands += 1
            // The command that set the base is replaced by a restore of the base itself.
            if let first = history.first, firstWords(first.command, 1) == ["restore"] { history = history.dropFirst() }
        }
        for (command, output) in history where !isRecordCommand(command) {
            text += entry(command: command, output: output)
            if !command.hasPrefix("#") { commands += 1 }
        }
        return (text, commands)
    }
}

extension RecordCommands {
    /// The state at this point as the commands that make it again, each with what a replay
    /// prints for it: `restore {SNAPSHOT}` on one line, then the server's queued answers and strict
    /// mode (``serverScript(_:)``), which the snapshot leaves out. A recording from here on starts
    /// with them, and so does `--echo` of a session opened on a store that held one.
    static func stateCommands(for session: Session, mode: OutputMode, on cache: isolated Cache) -> (text: String, commands: Int) {
        var text = restoreEntry(withoutServerScript(session.makeSnapshot(asReplayed: true, on: cache)).compactText, mode: mode, on: cache)
        var commands = 1
        for (command, reply) in serverScript(session.server) {
            text += entry(command: command, output: reply.text(command: "server", mode: mode, colour: false))
            commands += 1
        }
        return (text, commands)
    }

    /// `restore SNAPSHOT` (compact JSON) with what a fresh session replaying it prints, as
    /// `--verify` will.
    private static func restoreEntry(_ snapshot: String, mode: OutputMode, on cache: isolated Cache) -> String {
        var snapshot = snapshot
        while snapshot.hasSuffix("\n") { snapshot.removeLast() }
        let restored = (try? Snapshot(parsing: snapshot)).map { ($0.entryCount, $0.now) } ?? (cache.count, cache.now)
        let reply = SnapshotCommands.restoredInline(entries: restored.0, now: restored.1)
        return entry(command: "restore " + snapshot, output: reply.text(command: "restore", mode: mode, colour: false))
    }
}

extension Session {
    /// What `--echo` writes first for a session opened on a store that held one (SPEC §6): the
    /// state it opened with as the commands that make it again (``RecordCommands/stateCommands(for:mode:on:)``),
    /// so the echo replays from the same state; empty for a store opened new. `problem` says why
    /// there is none when the state holds what no command after a `restore` makes again (a
    /// command `at` scheduled that reads a file).
    public func echoStart(on cache: isolated Cache) -> (text: String, problem: String?) {
        guard storeHeldASession else { return ("", nil) }
        if let problem = RecordCommands.startProblem(self, cache) { return ("", problem) }
        return (RecordCommands.stateCommands(for: self, mode: options.mode, on: cache).text, nil)
    }
}

/// An open `record FILE`: the transcript, written as each top-level command ends into a
/// temporary file beside the target (`FileIO.Replacement`), which replaces the target when the
/// recording stops (`record stop`, or the session's end). So the file at the target is always a
/// whole recording (the old file until then): a write that fails (a full disk) removes the
/// temporary file and leaves the old one as it was, and a process killed while recording leaves
/// the old file, with what was recorded beside it in the temporary file (`.NAME.XXXXXX`).
final class Recording {
    /// A file a recording could not write.
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var description: String
    }

    /// The file as the user named it.
    let name: String
    /// Commands written so far.
    private(set) var commandCount = 0
    /// The temporary file being written; nil once stopped, or once a write failed.
    private var pending: FileIO.Replacement?
    /// The first write that failed, reported by `record stop`.
    private var failure: String?

    /// Starts the transcript at `path` with the session so far, in a temporary file beside it.
    /// - Throws: `Failure` when the target cannot be replaced or the temporary file written.
    init(name: String, path: String, session: Session, fromStart: Bool, on cache: isolated Cache) throws(Failure) {
        self.name = name
        let header = RecordCommands.header(for: session, fromStart: fromStart, on: cache)
        let pending: FileIO.Replacement
        do { pending = try FileIO.Replacement(path) } catch { throw Failure(path: path, description: error.description) }
        do { try FileIO.write(pending.descriptor, header.text) } catch {
            pending.abandon()
            throw Failure(path: path, description: error.description)
        }
        self.pending = pending
        commandCount = header.commands
    }

    /// A recording dropped without a stop ends as a stop would (its error, if any, untold).
    deinit { _ = stop() }

    /// Writes one top-level command and its output (a `record` command is left out).
    func append(command: String, output: String) {
        guard let pending, !RecordCommands.isRecordCommand(command) else { return }
        do { try FileIO.write(pending.descriptor, RecordCommands.entry(command: command, output: output)) } catch {
            // Nothing of this recording replaces the old file: it is as it was.
            failure = error.description
            pending.abandon()
            self.pending = nil
            return
        }
        if !command.hasPrefix("#") { commandCount += 1 }
    }

    /// Ends the recording (`record stop`, the session's end): the transcript replaces the file
    /// at its path, whole.
    /// - Returns: the error of the first write that failed, or of the replacing; then the file
    ///   at the path is as it was before `record`.
    func stop() -> String? {
        if let pending {
            self.pending = nil
            // The last line says the recording is whole (`RecordCommands.cutShort`).
            do { try FileIO.write(pending.descriptor, RecordCommands.entry(command: RecordCommands.lastComment, output: "")) } catch {
                pending.abandon()
                failure = failure ?? error.description
                return failure
            }
            do { close(try pending.commit()) } catch { failure = failure ?? error.description }
        }
        return failure
    }
}

extension Session {
    /// `make`'s reply, and where it differs, what it answers over the whole timeline: while a
    /// recording from here on runs, `timeline` and `explain` look back no further than its start
    /// (its replay knows nothing earlier), but a replay of the session's history (`--echo`,
    /// `record --from-start`), which leaves `record` out, has the changes set aside too
    /// (``Reply/views(shown:replayed:)``).
    /// - Complexity: `make` twice, and O(changes kept) to join the two timelines, while changes are
    ///   set aside; else `make` once.
    /// - Parameter cache: the cache the command runs on, whose client's timeline `make` reads
    ///   (``timeline(of:)``).
    func answerOverTimeline(_ cache: Cache, _ make: () -> Reply) -> Reply {
        let shown = make()
        // The changes set aside are the first client's (the session had only that client then).
        guard let before = timelineBeforeRecording else { return shown }
        let owner = client(of: cache)
        guard owner == nil || owner?.name == ClientTable.firstName else { return shown }
        if let owner, clients.current !== owner {
            let since = owner.timeline
            owner.timeline = before.followed(by: since)
            defer { owner.timeline = since }
            return .views(shown: shown, replayed: make())
        }
        let since = timeline
        timeline = before.followed(by: since)
        defer { timeline = since }
        return .views(shown: shown, replayed: make())
    }

    /// Joins the timeline set aside when a recording from here on started with the changes made
    /// since, in the first client's timeline (the session had only that client then).
    func joinTimelineAfterRecording() {
        guard let before = timelineBeforeRecording else { return }
        timelineBeforeRecording = nil
        if let current = clients.current, current.name != ClientTable.firstName, let first = clients.named(ClientTable.firstName) {
            first.timeline = before.followed(by: first.timeline)
        } else {
            timeline = before.followed(by: timeline)
        }
    }
}
