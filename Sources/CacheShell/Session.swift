import CacheCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CacheServer

/// How command output is shown.
public enum OutputMode: String, Sendable {
    case human, json
}

/// Where a session may touch files.
public struct SessionOptions: Sendable {
    /// No command may read or write files (`--safe`).
    public var safe = false
    /// Colour states in human output (a terminal, no `NO_COLOR`).
    public var colour = false
    public var mode = OutputMode.human
    /// Stop a script at its first failing command (`--bail`).
    public var bail = false
    /// Print each top-level command after the prompt before its output, errors in the interactive
    /// form, all on standard output: the output is a transcript (`--echo`).
    public var echo = false
    /// Polled by long work (`replay`): true stops it (the interactive shell's Ctrl-C).
    public var interrupted: (@Sendable () -> Bool)?
    /// The scheduled work the whole input may make (a stranger's: `--safe`, `--verify`); nil: no
    /// bound but the runaway limit of each command.
    public var scheduledBudget: ScheduledBudget?
    public init(safe: Bool = false, colour: Bool = false, mode: OutputMode = .human, bail: Bool = false) {
        self.safe = safe; self.colour = colour; self.mode = mode; self.bail = bail
    }
}

/// One cachesh session: a client of a `Cache` actor over a simulated server, the interpreter
/// state (output mode, scheduled commands, recording) and the output it has produced.
///
/// A session lives inside its cache's isolation: it is made by `Session(cache:options:)` from code
/// isolated to the cache, and every method that runs commands takes that `isolated Cache`, so a
/// whole script or typed line runs in one hop onto the actor (`Session.with(options:_:)`).
public final class Session {
    /// The simulated server the cache fetches from (`server ...` commands shape it).
    public let server: SimulatedServer
    public var options: SessionOptions {
        get { settings }
        set {
            settings = newValue
            updateDirectTarget()
        }
    }
    /// Output not yet written out, in order: (text, isError).
    // Unchecked exclusivity (here, on `history` and on `timeline`): each access to these is a
    // read, an assignment or a mutating call of the standard library's collections (or of
    // `History`, `Timeline`, which only mutate their own collections) that calls back into no
    // code of this session, so no access to one can begin while another is under way; checked,
    // each access of every command paid a run-time check (about 80 instructions).
    @exclusivity(unchecked) var output: [(text: String, isError: Bool)] = []
    /// A command was rejected (exit status 1).
    public var anyFailed = false
    /// `quit` was run.
    public internal(set) var quitRequested: Bool {
        get { quitting }
        set { quitting = newValue }
    }

    // The state behind the public properties of a session, which the commands read and write:
    // internal, so that the compiler sees every access to them and can leave out the run-time
    // exclusivity checks a public stored property of a class costs on each access.
    /// ``options``.
    private(set) var settings: SessionOptions
    /// ``quitRequested``.
    private(set) var quitting = false
    /// ``keepsHistory``.
    private(set) var historyKept = true
    /// ``sink``.
    private(set) var outputSink: ((_ text: String, _ isError: Bool) -> Void)?
    /// ``store``.
    private(set) var openStore: SessionStore? {
        didSet { updateDirectTarget() }
    }

    /// Commands scheduled by `at`, by token.
    var scheduled: [Int: ScheduledEntry] = [:]
    var nextToken = 0
    /// Current `source` nesting, for the depth limit.
    var sourceDepth = 0
    /// Set while a command runs from the scheduler (`at`): reads never block.
    var inScheduled = false
    /// Nesting of commands being executed (`source`, `at`): only top-level ones enter the history.
    var depth = 0
    /// Every top-level (command, output) of this session so far (a comment on a line of its own
    /// as a command with no output), errors in the interactive form, for `record --from-start`.
    @exclusivity(unchecked) var history = History()
    /// Keep the history (off for benchmarks of huge batches that never record).
    public var keepsHistory: Bool {
        get { historyKept }
        set { historyKept = newValue }
    }
    /// Keep every command of the session for `record --from-start` (the interactive shell); when false (a
    /// batch: script, `-c`, standard input) only the last is kept, so memory does not grow with
    /// the length of the run, and `record --from-start` is refused.
    public var keepsWholeHistory: Bool {
        get { history.retainsAll }
        set {
            history.retainsAll = newValue
            updateDirectTarget()
        }
    }
    /// What the history notes for the command running now in place of its text and output: a
    /// `load FILE` is noted as `load {CONFIG}`, so a recording needs no other file.
    var historyRewrite: (command: String, output: String)?
    /// Error lines of `output` that a typed command prints differently (`error: ...`, or JSON with
    /// `file` and `line` null), by index in `output`: the history keeps that form.
    var interactiveForms: [Int: String] = [:]
    /// An open `record FILE`.
    var recording: Recording? {
        didSet { updateDirectTarget() }
    }

    /// Ends an open `record FILE` as the session ends: the transcript replaces its file.
    /// - Returns: the error line when it could not be written (the file is then as it was), or nil.
    public func endRecording() -> String? {
        guard let open = recording else { return nil }
        recording = nil
        return open.stop().map { "record: could not write \(open.name): \($0)" }
    }
    /// Every change to an entry this session, watched or not, for `timeline` and `explain`.
    @exclusivity(unchecked) var timeline = Timeline()
    /// The file commands `--safe` has refused so far, the last one's message: `--verify` stops a
    /// transcript's replay at the first.
    public internal(set) var safeRefusals = 0
    public internal(set) var lastSafeRefusal: String?
    /// The pretty snapshot this session's state began from (set by `restore` and by opening a store,
    /// which also clear `history`): a recording starts with `restore {SNAPSHOT}` of it, inline.
    /// Rendered from `baseDocument` only when first asked for: most sessions never record, and the text
    /// of a large cache costs seconds.
    public var baseSnapshot: String? {
        get {
            if baseText == nil, baseDocument == nil, let decoded = baseDecoded {
                baseDocument = decoded.document()
                baseDecoded = nil
            }
            if baseText == nil, let document = baseDocument { baseText = Self.documentText(document, newline: true) }
            return baseText
        }
        set {
            baseDocument = nil
            baseDecoded = nil
            baseText = newValue
        }
    }
    /// The snapshot document `baseSnapshot` renders.
    var baseDocument: JSONValue? {
        didSet { baseText = nil }
    }
    /// Or, when `baseDocument` is nil, the decoded snapshot it is made from (a store's state at open).
    var baseDecoded: Snapshot?
    private var baseText: String?
    /// The first request `server strict on` found nothing queued for, as the error line says it:
    /// `--verify` stops a transcript's replay there.
    public internal(set) var divergence: String?
    /// The directory relative paths of typed commands resolve against (a transcript's own directory);
    /// nil means the working directory.
    public var baseDirectory: String?
    /// The persistent store (`--store`): each top-level command's changes are committed to it
    /// before its output is handed on (`commitOrHold`); set by `open(store:)`.
    public internal(set) var store: SessionStore? {
        get { openStore }
        set { openStore = newValue }
    }

    struct ScheduledEntry {
        var text: String
        var source: SourceFile
        var offset: Int
    }

    public static let maxSourceDepth = 16

    /// A session on `cache`, which gets a new simulated server as its origin and this session as
    /// its delegate.
    public init(cache: isolated Cache, options: SessionOptions = SessionOptions()) {
        let server = SimulatedServer()
        self.server = server
        settings = options
        cache.useOrigin(server)
        cache.setDelegate(self)
        cache.reportsAllChanges = true
        if let budget = options.scheduledBudget { cache.setScheduledBudget(budget.initial, reason: budget.reason) }
    }

    /// Runs `body` with a new session on a new cache, in one hop onto the cache.
    public static func with<T: Sendable>(options: SessionOptions = SessionOptions(),
                                         _ body: @Sendable (Session, isolated Cache) throws -> T) async rethrows -> T {
        try await run(on: Cache(), options: options, body)
    }

    private static func run<T: Sendable>(on cache: isolated Cache, options: SessionOptions,
                                         _ body: @Sendable (Session, isolated Cache) throws -> T) rethrows -> T {
        let session = Session(cache: cache, options: options)
        return try body(session, cache)
    }

    /// Receives output after each top-level command when set (the executable's terminal);
    /// otherwise output collects until `takeOutput()`.
    public var sink: ((_ text: String, _ isError: Bool) -> Void)? {
        get { outputSink }
        set { outputSink = newValue }
    }

    /// The buffer the sink writes standard output into, when set with it (a batch): a top-level
    /// command whose reply is all it prints writes it straight there, with no copy on the way
    /// (``writeDirectly(_:command:outputFrom:)``), in order with what the sink is handed.
    public var directOutput: OutputBuffer? {
        didSet { updateDirectTarget() }
    }

    /// ``directOutput`` while the session's setup lets replies go straight to it: a batch that
    /// keeps only its last history entry, with no recording, `--echo` nor colour; else nil. Kept
    /// up to date by those properties, so a command checks one instead of each. With a store,
    /// the replies written there are held (``heldDirectBytes``): not flushed before the commit
    /// that covers them.
    private(set) var directTarget: OutputBuffer?

    /// With a store, how many bytes at the end of ``directOutput`` are replies of commands not
    /// committed yet: nothing flushes them before ``commitOrHold(final:on:)`` commits, and a
    /// failed commit takes them back. (Nothing else writes to the buffer while a source runs
    /// but the sink, which the session calls only after a commit; so they are its last bytes.)
    var heldDirectBytes = 0

    private func updateDirectTarget() {
        let allowed = !history.retainsAll && recording == nil && !settings.echo && !settings.colour
        directTarget = allowed ? directOutput : nil
    }

    /// Hands collected output to the sink.
    func drainToSink() {
        guard let sink = outputSink, !output.isEmpty else { return }
        for (text, isError) in output { sink(text, isError) }
        output.removeAll(keepingCapacity: true)
        if !interactiveForms.isEmpty { interactiveForms.removeAll() }
    }

    /// Takes the output produced so far.
    public func takeOutput() -> [(text: String, isError: Bool)] {
        defer {
            output.removeAll(keepingCapacity: true)
            interactiveForms.removeAll()
        }
        return output
    }

    func write(_ line: String) {
        output.append((Render.safeForTerminal(line, colour: options.colour) + "\n", false))
    }

    /// Writes finished lines, each already ending in a line feed, as one piece of output.
    func write(lines text: String) {
        output.append((Render.safeForTerminal(text, colour: options.colour), false))
    }

    func writeError(_ line: String) {
        output.append((Render.safeForTerminal(line, colour: options.colour) + "\n", true))
    }

    // MARK: Running sources

    /// Runs every command of a source (a script, `-c`, stdin, or one typed command).
    /// - Returns: false if a command failed.
    @discardableResult
    public func run(_ source: SourceFile, semicolonsSeparate: Bool = false, on cache: isolated Cache) -> Bool {
        run(source, semicolonsSeparate: semicolonsSeparate, holdingOpenJSON: false, on: cache).ok
    }

    /// Runs the commands of a piece of a stream (a script or standard input, read as it arrives)
    /// that ends at a line feed: a last command whose JSON value is still open at the end of the
    /// piece is not run (nor reported), as the rest of it has not arrived yet.
    /// - Returns: false if a command failed, and the offset from which the piece was not run
    ///   (the open command, and the blank lines or comments before it), or nil.
    /// - Parameter endsCommitGroup: with a store, commit what the piece ran (and hand on its
    ///   output) at its end, as at the end of any source; else its commands join the next
    ///   piece's group, and the caller ends it (`commitHeld`).
    public func runPiece(_ source: SourceFile, endsCommitGroup: Bool = true, on cache: isolated Cache) -> (ok: Bool, heldFrom: Int?) {
        run(source, semicolonsSeparate: false, holdingOpenJSON: true, endsCommitGroup: endsCommitGroup, on: cache)
    }

    private func run(_ source: SourceFile, semicolonsSeparate: Bool, holdingOpenJSON: Bool, endsCommitGroup: Bool = true,
                     on cache: isolated Cache) -> (ok: Bool, heldFrom: Int?) {
        var lexer = Lexer(source, semicolonSeparates: semicolonsSeparate)
        var ok = true
        var from = lexer.offset
        var held: Int?
        while !quitting {
            if readsPlainCommands && !semicolonsSeparate, let plain = runPlainCommand(at: lexer.offset, in: source, on: cache) {
                // The common form of `put` or `get`, run without the lexer (``runPlainCommand``).
                lexer.skip(to: plain.end)
                from = plain.end
                if !plain.ok { ok = false }
                if depth == 0 { openStore == nil ? drainToSink() : commitOrHold(final: false, on: cache) }
                if !ok && settings.bail { break }
                continue
            }
            let next = lexer.nextCommand()
            if next == nil && lexer.failure == nil {
                // The comments after the last command (or a typed `# note`), unless they are held
                // with a command still arriving (below).
                if depth == 0 && notesComments && !(holdingOpenJSON && lexer.endsInsideJSON) {
                    noteComments(in: source.bytes, from: from, to: source.bytes.count)
                    // Their echo goes out now; with a store, after the commit that ends the group.
                    if store == nil { drainToSink() }
                }
                break
            }
            if holdingOpenJSON, next == nil, lexer.endsInsideJSON {
                held = Self.lineStart(ofCommandAfter: from, in: source.bytes)
                break
            }
            defer { from = lexer.offset }
            if let command = next {
                if depth == 0 && notesComments { noteComments(in: source.bytes, from: from, to: command.offset) }
                if !execute(command, in: source, on: cache) { ok = false }
            } else if let diagnostic = lexer.failure {
                let start = output.count
                fail(ShellError(diagnostic.message, at: diagnostic.offset), in: source, command: nil)
                if depth == 0 && keepsHistory {
                    let span = source.name == nil ? source.bytes.indices
                        : Self.commandSpan(source.bytes, from: from, to: lexer.offset, semicolons: semicolonsSeparate)
                    noteHistory(source.bytes[span], outputFrom: start)
                }
                ok = false
            }
            if depth == 0 { store == nil ? drainToSink() : commitOrHold(final: false, on: cache) }
            if !ok && options.bail { break }
        }
        // A run that stops early (`quit`, --bail, a failed commit) ends its group all the same.
        if depth == 0 && store != nil && (endsCommitGroup || quitting || !ok) { commitOrHold(final: true, on: cache) }
        return (ok, held)
    }

    /// Whether `#` comments enter the history: only when something reads more than its last
    /// entry, or writes each entry out (`--echo`, an open recording, the interactive shell).
    private var notesComments: Bool {
        keepsHistory && (settings.echo || recording != nil || history.retainsAll)
    }

    /// Notes each comment of `bytes[from..<to]` (blank lines, separators and comments between two
    /// commands) that has a line of its own as a command with no output: `--echo` prints it and a
    /// recording writes it (`cachesh> # ...`), so a script's narration stays in its transcript.
    /// A comment after a command on its line is left out, and so is a script's `#!` first line.
    /// Comments are not counted as commands.
    /// - Complexity: O(n) in `to - from`.
    func noteComments(in bytes: [UInt8], from: Int, to: Int) {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        var i = from
        while i < to {
            guard bytes[i] == UInt8(ascii: "#") else {
                i += 1
                continue
            }
            var end = i
            while end < to && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            var lineStart = i
            while lineStart > 0 && blank(bytes[lineStart - 1]) { lineStart -= 1 }
            let shebang = i == 0 && i + 1 < to && bytes[i + 1] == UInt8(ascii: "!")
            if (lineStart == 0 || bytes[lineStart - 1] == UInt8(ascii: "\n")) && !shebang {
                var last = end
                while last > i && (blank(bytes[last - 1]) || bytes[last - 1] == UInt8(ascii: "\r")) { last -= 1 }
                history.append(command: bytes[i..<last], output: [String]())
                if let entry = history.last {
                    recording?.append(command: entry.command, output: "")
                    if settings.echo { output.append((RecordCommands.entry(command: entry.command, output: ""), false)) }
                }
            }
            i = end
        }
    }

    /// Where the line starts on which the command after `from` begins, past blank lines and
    /// comment lines: where a command still arriving is kept from.
    static func lineStart(ofCommandAfter from: Int, in bytes: [UInt8]) -> Int {
        var i = from
        var lineStart = from
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): i += 1
            case UInt8(ascii: "\n"):
                i += 1
                lineStart = i
            case UInt8(ascii: "#"):
                while i < bytes.count && bytes[i] != UInt8(ascii: "\n") { i += 1 }
            default:
                return lineStart
            }
        }
        return lineStart
    }

    /// The bytes of a command that did not lex, between where the lexer started looking for it and
    /// where it stopped: without the blank lines, comments and separators before it, nor the
    /// blanks after it.
    static func commandSpan(_ bytes: [UInt8], from: Int, to: Int, semicolons: Bool) -> Range<Int> {
        var start = from
        while start < to {
            switch bytes[start] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): start += 1
            case UInt8(ascii: ";") where semicolons: start += 1
            case UInt8(ascii: "#"):
                while start < to && bytes[start] != UInt8(ascii: "\n") { start += 1 }
            default:
                return start..<trimmedEnd(bytes, start, to, semicolons)
            }
        }
        return to..<to
    }

    private static func trimmedEnd(_ bytes: [UInt8], _ start: Int, _ end: Int, _ semicolons: Bool) -> Int {
        var end = end
        while end > start, [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(bytes[end - 1])
                || (semicolons && bytes[end - 1] == UInt8(ascii: ";")) { end -= 1 }
        return end
    }

    /// Runs one typed command (interactive use, transcripts): errors print as `error: ...`.
    /// - Returns: everything it printed.
    public func runTyped(_ text: String, on cache: isolated Cache) -> String {
        run(SourceFile(name: nil, text: text), on: cache)
        return takeOutput().map(\.text).joined()
    }

    /// Executes one lexed command, reporting its error with the source's name and line.
    func execute(_ command: RawCommand, in source: SourceFile, on cache: isolated Cache) -> Bool {
        guard let first = command.words.first else { return true }
        let topLevel = depth == 0
        depth += 1
        defer { depth -= 1 }
        if topLevel { cache.beginCommand() }
        let outputStart = output.count
        var ok = true
        // The reply and the command's name, for the history when the reply was written straight
        // to `directOutput` (no optional tuple: it would be moved by generic code).
        var reply = Reply.nothing
        var name = ""
        var direct = false
        do throws(ShellError) {
            if let refusal = readOnlyRefusal(command) { throw refusal }
            // The command's name looked up on its bytes; an alias (a bare word only) by `dispatch`.
            if let index = first.withUTF8({ CommandCatalog.names.lookup($0) }) {
                let spec = CommandCatalog.all[index]
                name = spec.name
                reply = try spec.run(self, cache, command, source)
            } else {
                name = first.text
                reply = try dispatch(name, command, source, on: cache)
            }
            direct = topLevel && writeDirectly(reply, command: name, outputFrom: outputStart)
            if !direct { emit(reply, command: name) }
        } catch {
            fail(error, in: source, command: first.text)
            ok = false
        }
        if let request = server.takeDivergence() {
            noteDivergence(request, command: command, in: source)
            ok = false
        }
        if topLevel && keepsHistory {
            if direct {
                noteHistory(source.bytes[command.offset..<command.end], outputFrom: outputStart, directReply: &reply, name: name)
            } else {
                noteHistory(source.bytes[command.offset..<command.end], outputFrom: outputStart)
            }
        }
        return ok
    }

    // MARK: The common commands of a batch

    /// The longest JSON value ``runPlainCommand(at:in:on:)`` takes: shorter than any value nested
    /// deeper than the lexer and the JSON reader allow (`Lexer.maxJSONDepth`, `JSONValue.maxDepth`;
    /// d levels take 2d bytes), so the two never disagree on one it runs.
    /// Run the commonest commands of a batch without the lexer (``runPlainCommand(at:in:on:)``);
    /// off only in tests that check it changes nothing.
    var readsPlainCommands = true

    static let maxPlainValueBytes = 2 * min(Lexer.maxJSONDepth, JSONValue.maxDepth)

    /// Runs the command after `offset` when it is in the commonest form of a batch, read straight
    /// from the bytes instead of through the lexer: `put KEY VALUE` or `get KEY` on one line of
    /// its own ending in a line feed, one space between the words, KEY a valid ASCII key that is
    /// no option nor flag, VALUE a JSON object or array that is valid and holds no line feed.
    /// What it runs, prints and notes is what ``execute(_:in:on:)`` does for the command the lexer
    /// would make of that line; any other line, or one whose key or value is not valid (whose
    /// error the lexer and the command's handler word), is left to them.
    /// - Returns: where the command ends (at its line feed, where the lexer stops) and whether it
    ///   succeeded; nil when the line is left to the lexer.
    /// - Complexity: O(n) in the length of the line.
    func runPlainCommand(at offset: Int, in source: SourceFile, on cache: isolated Cache) -> (end: Int, ok: Bool)? {
        // `put` and `get` change a store: on a read-only one, `execute` refuses them.
        if store?.readOnlyState != nil { return nil }
        let bytes = source.bytes
        var start = offset
        while start < bytes.count {
            let byte = bytes[start]
            guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
            else { break }
            start += 1
        }
        // `put ` or `get `, then a key that is a bare word: no quote, bracket, comment, option nor flag.
        guard start + 5 < bytes.count, bytes[start + 2] == UInt8(ascii: "t"), bytes[start + 3] == UInt8(ascii: " ") else { return nil }
        let isPut = bytes[start] == UInt8(ascii: "p") && bytes[start + 1] == UInt8(ascii: "u")
        guard isPut || (bytes[start] == UInt8(ascii: "g") && bytes[start + 1] == UInt8(ascii: "e")) else { return nil }
        let keyStart = start + 4
        switch bytes[keyStart] {
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "#"), UInt8(ascii: "-"): return nil
        default: break
        }
        // The key runs to the next space (put) or the line feed (get); bytes a key may not hold
        // (blanks among them) send the line to the lexer through `plainKey`.
        var keyEnd = keyStart
        while keyEnd < bytes.count, bytes[keyEnd] != UInt8(ascii: "\n"), bytes[keyEnd] != UInt8(ascii: " ") {
            if bytes[keyEnd] == UInt8(ascii: "=") { return nil }
            keyEnd += 1
        }
        guard keyEnd < bytes.count else { return nil }
        let end: Int
        var valueRange = 0..<0
        if isPut {
            let valueStart = keyEnd + 1
            guard bytes[keyEnd] == UInt8(ascii: " "), valueStart < bytes.count,
                  bytes[valueStart] == UInt8(ascii: "{") || bytes[valueStart] == UInt8(ascii: "[") else { return nil }
            // The line feed ending the line, if the value is short enough to be taken here.
            let valueEnd = bytes.withUnsafeBufferPointer { all -> Int in
                let limit = min(all.count - valueStart, Self.maxPlainValueBytes + 1)
                guard let found = memchr(all.baseAddress! + valueStart, Int32(UInt8(ascii: "\n")), limit) else { return all.count }
                return UnsafeRawPointer(found) - UnsafeRawPointer(all.baseAddress!)
            }
            guard valueEnd < bytes.count, valueEnd - valueStart <= Self.maxPlainValueBytes,
                  bytes[valueEnd - 1] == UInt8(ascii: "}") || bytes[valueEnd - 1] == UInt8(ascii: "]") else { return nil }
            valueRange = valueStart..<valueEnd
            end = valueEnd
        } else {
            // `get a:1;`: the lexer drops the `;` that ends the line.
            guard bytes[keyEnd] == UInt8(ascii: "\n"), bytes[keyEnd - 1] != UInt8(ascii: ";") else { return nil }
            end = keyEnd
        }
        let parsed: (key: String, value: StoredValue?)? = bytes.withUnsafeBufferPointer { all in
            guard let key = Arguments.keyIfPlain(UnsafeBufferPointer(rebasing: all[keyStart..<keyEnd])) else { return nil }
            guard isPut else { return (key, nil) }
            guard let value = Arguments.storedJSON(UnsafeBufferPointer(rebasing: all[valueRange])) else { return nil }
            return (key, value)
        }
        guard let parsed else { return nil }

        // What `execute` does around the handler, for this command.
        let topLevel = depth == 0
        depth += 1
        defer { depth -= 1 }
        if topLevel { cache.beginCommand() }
        let outputStart = output.count
        var ok = true
        var reply = Reply.nothing
        let name = isPut ? "put" : "get"
        var direct = false
        do throws(ShellError) {
            if let value = parsed.value {
                reply = .keys(cache.put(parsed.key, value, tags: []))
            } else {
                try Arguments.checkNotNamespace(parsed.key, at: keyStart, cache, command: "get",
                                                typedBare: !bytes[keyStart..<keyEnd].contains(UInt8(ascii: ":")))
                do {
                    reply = .read(try cache.read(parsed.key, force: false, nowait: inScheduled), isGet: true)
                } catch {
                    throw ShellError(error.message, at: start)
                }
            }
            direct = topLevel && writeDirectly(reply, command: name, outputFrom: outputStart)
            if !direct { emit(reply, command: name) }
        } catch {
            fail(error, in: source, command: name)
            ok = false
        }
        let divergence = server.takeDivergence()
        if let request = divergence {
            // The command as the lexer makes it, for the error line.
            var words = [Word(bytes: bytes, range: start..<start + 3, kind: .bare, offset: start, end: start + 3),
                         Word(bytes: bytes, range: keyStart..<keyEnd, kind: .bare, offset: keyStart, end: keyEnd)]
            if isPut { words.append(Word(bytes: bytes, range: valueRange, kind: .json, offset: valueRange.lowerBound, end: end)) }
            noteDivergence(request, command: RawCommand(words: words, offset: start, end: end), in: source)
            ok = false
        }
        if topLevel && historyKept {
            if direct && divergence == nil {
                // The reply is all the command printed (`writeDirectly` found no output before it,
                // and nothing came after): the history's one entry, as `noteHistory` would make it.
                history.appendLast(command: bytes[start..<end], reply: &reply, name: name, mode: settings.mode)
            } else if direct {
                noteHistory(bytes[start..<end], outputFrom: outputStart, directReply: &reply, name: name)
            } else {
                noteHistory(bytes[start..<end], outputFrom: outputStart)
            }
        }
        return (end, ok)
    }

    func fail(_ error: ShellError, in source: SourceFile, command: String?) {
        anyFailed = true
        if error.alreadyReported { return }
        // One line per error (SPEC §7), even when it quotes a word that spans lines, and a line
        // of a readable length, even when it quotes a word of megabytes.
        let message = Self.shortened(Self.oneLine(error.message))
        let diagnostic = Diagnostic(message: message, offset: error.offset)
        // The history keeps errors as typed commands print them, but not those of a sourced file,
        // which a replay names by that file too.
        let retyped = source.name != nil && (depth <= 1 || inScheduled)
        if options.mode == .json {
            var fields: [String: JSONValue] = ["error": .string(message), "command": command.map(JSONValue.string) ?? .null]
            if let name = source.name {
                fields["file"] = .string(name)
                fields["line"] = .int(Int64(source.location(ofOffset: error.offset).line))
            } else {
                fields["file"] = .null
                fields["line"] = .null
            }
            write(JSONValue.object(fields).compactText)
            if retyped {
                fields["file"] = .null
                fields["line"] = .null
                interactiveForms[output.count - 1] = JSONValue.object(fields).compactText + "\n"
            }
        } else {
            writeError(source.render(diagnostic))
            if retyped { interactiveForms[output.count - 1] = "error: \(message)\n" }
        }
    }

    /// `text` with its line breaks written as `\n` and `\r`, and its other control characters
    /// escaped (`Render.visible`): one printable line.
    /// - Complexity: O(n) in the length of `text`.
    static func oneLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else { return Render.visible(text) }
        var line = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            default: line.unicodeScalars.append(scalar)
            }
        }
        return Render.visible(line)
    }

    /// The most bytes of an error message: past it, ``shortened(_:)`` leaves out its middle.
    static let maxErrorBytes = 1000

    /// `message` when it is at most ``maxErrorBytes`` bytes long; else its start and its end with
    /// `... (N bytes left out) ...` between them, cut between characters: an error that quotes a
    /// word of megabytes (`unknown command "xxx..."`) is still a line a person reads, and still
    /// ends as it would (`" (try help)`).
    /// - Complexity: O(n) in the length of `message`.
    static func shortened(_ message: String) -> String {
        let bytes = message.utf8.count
        guard bytes > maxErrorBytes else { return message }
        let headBytes = maxErrorBytes * 3 / 4, tailBytes = maxErrorBytes / 5
        var head = message.startIndex, used = 0
        for i in message.indices {
            let size = message[i...].first!.utf8.count
            if used + size > headBytes { break }
            used += size
            head = message.index(after: i)
        }
        var tail = message.endIndex, kept = 0
        while tail > head {
            let before = message.index(before: tail)
            let size = message[before].utf8.count
            if kept + size > tailBytes { break }
            kept += size
            tail = before
        }
        return message[..<head] + " ... (\(bytes - used - kept) bytes left out) ... " + message[tail...]
    }

    /// Applies `--config FILE` before anything else; a recording of this session starts with its `load`.
    /// - Returns: false (after printing the error) when the file cannot be read or is refused.
    public func loadInitialConfiguration(path: String, on cache: isolated Cache) -> Bool {
        if let link = store, link.readOnlyState != nil {
            writeError("cachesh: --config: the store \(link.store.path) is read-only: loading a configuration would change it")
            drainToSink()
            return false
        }
        let text: String
        do { text = try FileIO.read(path) } catch {
            writeError("cachesh: cannot read \(path): \(error)")
            drainToSink()
            return false
        }
        do {
            _ = try applyConfiguration(text: text, from: path, at: 0, on: cache)
        } catch {
            writeError("cachesh: \(error.message)")
            drainToSink()
            return false
        }
        // A fresh session has no entries, so the load changes no keys: its reply is fixed.
        // A recording holds the configuration itself: its `load {CONFIG}` prints no file name.
        let inline = ConfigCommands.inlineLoad(text: text, changed: [], mode: options.mode)
        history.append(command: inline.command, output: inline.output)
        if options.echo, let last = history.last {
            write(lines: RecordCommands.entry(command: last.command, output: last.output))
            drainToSink()
        }
        return true
    }

    /// The error a file command fails with under `--safe` (`verb` is read or write), counted.
    func refusedBySafe(_ verb: String, _ what: String, at offset: Int) -> ShellError {
        let message = "--safe: commands may not \(verb) files (\(what))"
        safeRefusals += 1
        lastSafeRefusal = message
        return ShellError(message, at: offset)
    }

    /// The file a path in `source` names: relative paths resolve against the source's directory.
    func resolvePath(_ path: String, relativeTo source: SourceFile) -> String {
        if path == "~" || path.hasPrefix("~/") {
            // `~` is the home directory, as a shell would expand it (the word is never quoted here).
            if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty {
                return home + path.dropFirst()
            }
        }
        if path.hasPrefix("/") { return path }
        if source.name == nil, let base = baseDirectory { return base + "/" + path }
        guard let name = source.name, name.contains("/"), !name.hasPrefix("<"), name != "-c" else { return path }
        let directory = name[..<name.lastIndex(of: "/")!]
        return directory + "/" + path
    }
}

/// The last ``Timeline/limit`` changes to entries, oldest first: what `watch *` would have
/// printed, kept whether or not a watch was on. Memory is bounded by the count and by the bytes of
/// the values held (``Timeline/byteLimit``): a value is shared with the entry it was read from,
/// but once the entry changes only the timeline holds the old one, and 10,000 large values grown
/// by small patches took gigabytes.
struct Timeline {
    /// The changes kept: 10,000 (SPEC §3, `timeline`); older ones are dropped first.
    static let limit = 10_000
    /// The bytes of values and keys kept: 64 MiB (SPEC §7.1); older changes are dropped first,
    /// the newest always kept.
    static let byteLimit = 64 << 20
    /// The changes kept are `events[start...]`; the dropped ones before are removed in one go
    /// once they are half of the array.
    private var events: [CacheEvent] = []
    private var start = 0
    /// The bytes of the values and keys kept.
    private var bytes = 0
    /// How many changes were dropped to keep the bound.
    private(set) var dropped = 0

    /// - Complexity: O(1) amortized (each change is dropped, and moved, at most once).
    mutating func append(_ event: CacheEvent) {
        bytes += Self.size(event)
        events.append(event)
        while events.count - start > Self.limit || (bytes > Self.byteLimit && events.count - start > 1) {
            bytes -= Self.size(events[start])
            events[start].stored = nil  // its value is released now, not at the next compaction
            events[start].key = ""
            start += 1
            dropped += 1
        }
        if start > 0 && start >= events.count / 2 {
            events.removeFirst(start)
            start = 0
        }
    }

    /// What a change counts against the byte limit: its value's compact text and its key.
    private static func size(_ event: CacheEvent) -> Int {
        (event.stored?.utf8Count ?? 0) + event.key.utf8.count
    }

    /// The changes kept that `include` picks, oldest first.
    /// - Complexity: O(changes kept).
    func filter(_ include: (CacheEvent) -> Bool) -> [CacheEvent] {
        events[start...].filter(include)
    }
}

// MARK: - Engine callbacks

extension Session: CacheDelegate {
    public func cache(_ cache: isolated Cache, observed event: CacheEvent) {
        write(Self.eventLine(event, clockStart: cache.clockStart, mode: options.mode, colour: options.colour))
    }

    public func cache(_ cache: isolated Cache, noted event: CacheEvent) {
        // A benchmark's huge batch keeps no history, nor a timeline.
        if historyKept { timeline.append(event) }
    }

    public func cache(_ cache: isolated Cache, runScheduled token: Int) {
        guard let entry = scheduled.removeValue(forKey: token) else { return }
        runScheduledCommand(entry, on: cache)
    }

    public func cache(_ cache: isolated Cache, validated result: ValidationResult) {
        for line in Self.validatedLines(result, at: cache.now, mode: options.mode) { write(line) }
    }

    public func cache(_ cache: isolated Cache, finishedRead result: ReadResult) {
        write(lines: EntryCommands.readEventText(result, at: cache.now, clockStart: cache.clockStart, mode: options.mode,
                                                colour: options.colour))
    }

    /// An observer event's line (SPEC §4), without its line feed.
    static func eventLine(_ event: CacheEvent, clockStart: Int64, mode: OutputMode, colour: Bool) -> String {
        guard mode == .json else { return Render.eventLine(event, clockStart: clockStart, colour: colour) }
        return JSONValue.object(eventFields(event, clockStart: clockStart)).compactText
    }

    /// The fields of an observer event's JSON line.
    static func eventFields(_ event: CacheEvent, clockStart: Int64) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "event": .string(event.cause.rawValue),
            "key": .string(event.key),
            "at": .string(TimeText.iso8601(ms: event.at)),
            "at_ms": .int(event.at - clockStart),
            "state": .string(event.state.rawValue),
            "value": event.value ?? .null,
            "source": .string(event.source.rawValue),
        ]
        if event.cause == .pushed {
            fields["type"] = .string(event.key)
            fields["key"] = .null
            fields["state"] = .null
        }
        return fields
    }

    /// The lines of a validation answer nobody waited for, which arrived at `at`.
    static func validatedLines(_ result: ValidationResult, at: Int64, mode: OutputMode) -> [String] {
        var fields = RealtimeCommands.validationFields(result)
        fields["event"] = .string("validated")
        fields["at"] = .string(TimeText.iso8601(ms: at))
        if mode == .json { return [JSONValue.object(fields).compactText] }
        var lines = ["validated at \(TimeText.iso8601(ms: at)):"]
        for line in Render.fieldLines(fields.filter { $0.key != "event" && $0.key != "at" }, order: ["request", "response", "error", "keys"], colour: false) {
            lines.append("  " + line)
        }
        return lines
    }
}
