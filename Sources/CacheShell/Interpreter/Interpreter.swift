import CacheCore

/// The interpreter: sources run in frames (``FrameStack``), each command in one wrapper
/// (``perform(_:in:named:on:_:)``) that makes its outcome, and each top-level outcome handed to the
/// renderers when the command ends (``finish(_:)``).
extension Session {
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

    /// Runs one typed command (interactive use, transcripts): errors print as `error: ...`.
    /// - Returns: everything it printed.
    public func runTyped(_ text: String, on cache: isolated Cache) -> String {
        run(SourceFile(name: nil, text: text), on: cache)
        return takeOutput().map(\.text).joined()
    }

    /// The top frame: the user's own commands, each a top-level command with its outcome.
    private func run(_ source: SourceFile, semicolonsSeparate: Bool, holdingOpenJSON: Bool, endsCommitGroup: Bool = true,
                     on cache: isolated Cache) -> (ok: Bool, heldFrom: Int?) {
        precondition(frames.isIdle, "a source runs at the top only when no other does")
        frames.push(.top)
        defer { frames.pop() }
        var lexer = Lexer(source, semicolonSeparates: semicolonsSeparate)
        var ok = true
        var from = lexer.offset
        var held: Int?
        while !frames.quitting {
            if frames.readsPlainCommands && !semicolonsSeparate, let plain = runPlainCommand(at: lexer.offset, in: source, on: cache) {
                // The common form of `put` or `get`, run without the lexer (``runPlainCommand``).
                lexer.skip(to: plain.end)
                from = plain.end
                if !plain.ok { ok = false }
                handOn(on: cache)
                if !ok && settings.bail { break }
                continue
            }
            let next = lexer.nextCommand()
            if next == nil && lexer.failure == nil {
                // The comments after the last command (or a typed `# note`), unless they are held
                // with a command still arriving (below).
                if notesHistory && !(holdingOpenJSON && lexer.endsInsideJSON) {
                    noteComments(in: source.bytes, from: from, to: source.bytes.count)
                    // Their echo goes out now; with a store, after the commit that ends the group.
                    if store == nil { terminal.release() }
                }
                break
            }
            if holdingOpenJSON, next == nil, lexer.endsInsideJSON {
                held = SourceScan.lineStart(ofCommandAfter: from, in: source.bytes)
                break
            }
            defer { from = lexer.offset }
            if let command = next {
                if notesHistory { noteComments(in: source.bytes, from: from, to: command.offset) }
                if !execute(command, in: source, on: cache) { ok = false }
            } else if let diagnostic = lexer.failure {
                // A command that does not lex is a top-level command all the same: its outcome is its error.
                let span = source.name == nil ? source.bytes.indices
                    : SourceScan.commandSpan(source.bytes, from: from, to: lexer.offset, semicolons: semicolonsSeparate)
                outcome.begin(mode: settings.mode)
                report(ShellError(diagnostic.message, at: diagnostic.offset), in: source, command: nil, span: span,
                       typedMessage: semicolonsSeparate && notesHistory ? Self.failureAlone(source.bytes[span]) : nil)
                finish(source.bytes[span])
                ok = false
            }
            handOn(on: cache)
            if !ok && settings.bail { break }
        }
        // A run that stops early (`quit`, --bail, a failed commit) ends its group all the same.
        if store != nil && (endsCommitGroup || frames.quitting || !ok) { commitOrHold(final: true, on: cache) }
        return (ok, held)
    }

    /// The error a command of `-c` that did not lex gives as a line of its own, where a `;`
    /// separates nothing: a transcript writes it so, and a replay types it (a bracket left open is
    /// not closed on its line, where `-c` says before the `;`). Nil if that line lexes.
    private static func failureAlone(_ command: ArraySlice<UInt8>) -> String? {
        var lexer = Lexer(SourceFile(name: nil, text: String(decoding: command, as: UTF8.self)), semicolonSeparates: false)
        guard lexer.nextCommand() == nil else { return nil }
        return lexer.failure?.message
    }

    /// After a top-level command: with a store, the commit gate decides when its output goes
    /// out; without one, it goes out now.
    private func handOn(on cache: isolated Cache) {
        if store == nil { terminal.release() } else { commitOrHold(final: false, on: cache) }
    }

    /// Runs the commands of `file` in a frame of `kind` (a `source`): each in the one wrapper.
    /// - Returns: how many ran, and whether all succeeded (the frame's result: a command that
    ///   failed was reported where it failed).
    func runFrame(_ file: SourceFile, kind: FrameStack.Kind, on cache: isolated Cache,
                  interrupted: (Int) throws(ShellError) -> Void = { _ throws(ShellError) in }) throws(ShellError) -> (commands: Int, ok: Bool) {
        frames.push(kind)
        defer { frames.pop() }
        var lexer = Lexer(file, semicolonSeparates: false)
        var count = 0
        while !frames.quitting, let next = lexer.next() {
            switch next {
            case .failure(let diagnostic):
                report(ShellError(diagnostic.message, at: diagnostic.offset), in: file, command: nil)
                return (count, false)
            case .success(let inner):
                try interrupted(count)
                count += 1
                if !execute(inner, in: file, on: cache) { return (count, false) }
            }
        }
        return (count, true)
    }

    // MARK: One command

    /// Executes one lexed command in the wrapper (``perform``).
    func execute(_ command: RawCommand, in source: SourceFile, on cache: isolated Cache) -> Bool {
        guard let first = command.words.first else { return true }
        // The user's commands run in the current client (SPEC §3 Clients); a scheduled one in
        // the client that scheduled it, whose cache runs it.
        if let current = clients.current, current.cache !== cache, !frames.inScheduled {
            let carried = SameExecutor((self, command, source))
            return cache.withClient(current.cache) { other in
                let (session, command, source) = carried.value
                return session.execute(command, in: source, on: other)
            }
        }
        return perform(command.offset..<command.end, in: source, named: first.text, on: cache) { session, cache throws(ShellError) in
            if let refusal = session.readOnlyRefusal(command) { throw refusal }
            // The command's name looked up on its bytes; an alias (a bare word only) by `dispatch`.
            if let index = first.withUTF8({ CommandCatalog.names.lookup($0) }) {
                let spec = CommandCatalog.all[index]
                return (spec.name, try spec.run(session, cache, command, source))
            }
            let name = first.text
            return (name, try session.dispatch(name, command, source, on: cache))
        }
    }

    /// The one wrapper every command runs in: a top-level one begins the cache's command and its
    /// outcome; the reply (or the error, with its source position) joins the outcome; a request
    /// strict mode found nothing queued for fails the command; a top-level outcome then goes to
    /// the renderers.
    /// - Parameters:
    ///   - span: the command's bytes in `source`.
    ///   - name: the command as written, for its error's `command` field.
    ///   - body: runs the command: its name (the reply's `command` field) and reply.
    /// - Returns: whether the command succeeded.
    @inline(__always)
    func perform(_ span: Range<Int>, in source: SourceFile, named name: String, on cache: isolated Cache,
                 _ body: (Session, isolated Cache) throws(ShellError) -> (name: String, reply: Reply)) -> Bool {
        let topLevel = frames.runsTopLevel
        if topLevel { beginTopLevelCommand(on: cache) }
        var ok = true
        do throws(ShellError) {
            // Two variables, not the tuple: a tuple holding a reply was destroyed through its type
            // metadata (the runtime's generic tuple_destroy, about 190 instructions a command).
            var (replyName, reply) = try body(self, cache)
            ok = hold(&reply, named: &replyName, topLevel: topLevel)
        } catch {
            report(error, in: source, command: name, span: span)
            ok = false
        }
        return endCommand(ok, divergence: frames.inScheduled ? nil : server.takeDivergence(), span: span, in: source,
                          named: name, topLevel: topLevel, on: cache)
    }

    /// ``perform(_:in:named:on:_:)`` for a top-level command whose reply is made of what its
    /// body returns (a put's changed keys, a get's read): when that reply is all the command
    /// printed and goes straight into the batch's buffer, `write` writes it there from the
    /// result, byte for byte what the reply `reply` makes would write, and no reply is made;
    /// else the reply is made and handed on as `perform` does. (A plain command of a batch
    /// paid some 500 instructions to build, move and destroy a reply it then wrote straight.)
    /// - Parameter write: writes the reply's text in a mode (`Reply.write`'s contract: returns
    ///   whether it may hold a control character).
    @inline(__always)
    func performPlain<Result>(_ span: Range<Int>, in source: SourceFile, named name: String, on cache: isolated Cache,
                              _ body: (Session, isolated Cache) throws(ShellError) -> Result,
                              write: (Result, OutputMode, inout ByteWriter) -> Bool,
                              reply: (Result) -> Reply) -> Bool {
        // A plain command runs in the top frame, with the session's one client (``runPlainCommand``):
        // no other client's command to begin (and no run-time check of an access to the clients).
        assert(frames.runsTopLevel && !clients.several, "a plain command runs at the top, with one client")
        cache.beginCommand()
        outcome.begin(mode: settings.mode)
        let result: Result
        do throws(ShellError) {
            result = try body(self, cache)
        } catch {
            return failedPlain(error, span: span, in: source, named: name, on: cache)
        }
        let divergence = frames.inScheduled ? nil : server.takeDivergence()
        // What `finish` would do with the reply as the outcome's lone item: `show` writes it straight
        // (`TerminalRenderer.show`), and the history, which no batch writing straight notes, is left alone.
        if divergence == nil && !notesHistory && terminal.writesStraightNow && outcome.isUntouched {
            let mode = settings.mode
            terminal.writeStraight(held: store != nil) { out in write(result, mode, &out) }
            // Nothing else to forget: the outcome holds no item, no reply and no rewrite (``Outcome/reset()``).
            outcome.open = false
            return true
        }
        var made = reply(result)
        var replyName = name
        let ok = hold(&made, named: &replyName, topLevel: true)
        return endCommand(ok, divergence: divergence, span: span, in: source, named: name, topLevel: true, on: cache)
    }

    /// The end of a plain command that failed (``performPlain``), out of line: the rare path kept
    /// out of the batch's loop, which the optimizer then inlines whole (with it inline, some 67
    /// instructions a command more, through a generic copy and its closures).
    @inline(never)
    private func failedPlain(_ error: ShellError, span: Range<Int>, in source: SourceFile, named name: String,
                             on cache: isolated Cache) -> Bool {
        report(error, in: source, command: name, span: span)
        return endCommand(false, divergence: frames.inScheduled ? nil : server.takeDivergence(), span: span, in: source,
                          named: name, topLevel: true, on: cache)
    }

    /// The start of a top-level command in ``perform(_:in:named:on:_:)``: the cache's command (each
    /// client's) and the outcome begin.
    @inline(__always)
    private func beginTopLevelCommand(on cache: isolated Cache) {
        cache.beginCommand()
        if clients.several { for client in clients.all where client.cache !== cache { cache.withClient(client.cache) { $0.beginCommand() } } }
        outcome.begin(mode: settings.mode)
    }

    /// A command's reply joins its outcome (a top-level one's own reply, else an item of it).
    /// - Returns: false for ``Reply/failedWithin``.
    @inline(__always)
    private func hold(_ reply: inout Reply, named replyName: inout String, topLevel: Bool) -> Bool {
        if reply.isFailure {
            anyFailed = true
            return false
        } else if topLevel {
            // Swapped in, not copied: a reply holds strings and arrays.
            swap(&outcome.reply, &reply)
            swap(&outcome.name, &replyName)
            outcome.replyMode = settings.mode
        } else if let run = frames.scheduledRun {
            add(.scheduled(reply, name: replyName, text: run.text, time: run.time, mode: settings.mode))
        } else {
            add(.reply(reply, name: replyName, mode: settings.mode))
        }
        return true
    }

    /// The end of ``perform(_:in:named:on:_:)``: a request strict mode found nothing queued for
    /// (`divergence`, taken from the server but in a scheduled command) fails the command; a
    /// top-level outcome then goes to the renderers.
    /// - Returns: whether the command succeeded (`ok`, unless it diverged).
    @inline(__always)
    private func endCommand(_ ok: Bool, divergence: String?, span: Range<Int>, in source: SourceFile, named name: String,
                            topLevel: Bool, on cache: isolated Cache) -> Bool {
        var ok = ok
        // A scheduled command's request is told by the command that ran the scheduler.
        if let request = divergence {
            // Its error follows what the command printed, whose JSON says the command failed.
            outcome.markLastReplyFailed()
            if topLevel { outcome.demoteReply() }
            noteDivergence(request, span: span, name: name, in: source)
            ok = false
        }
        if topLevel {
            finish(SourceScan.readAlone(source.bytes[span]))
        } else if !frames.inScheduled && !notesHistory {
            handOnItems()
            // With a store, the group also ends inside a `source` once its held output reaches
            // the bound (SPEC §5.3), so a long `source` holds no more than a script would.
            if let link = store, terminal.groupByteCount >= link.heldOutputLimit { commitOrHold(final: false, on: cache) }
        }
        return ok
    }

    /// After a command a `source` ran, when nothing keeps the whole of the top-level command's
    /// output (no history entry, `--echo` nor recording reads it): what it printed goes to the
    /// terminal now, as the same commands run as a script would, so a `source` holds none of
    /// its file's output until it ends (with a store, its text waits for the commit, SPEC §5.3).
    /// Only finished commands' items go: none is changed after its command ends.
    private func handOnItems() {
        guard !outcome.items.isEmpty else { return }
        for item in outcome.items {
            terminal.add(item.text(colour: settings.colour, width: terminal.width), isError: item.isError, colour: settings.colour)
        }
        outcome.items.removeAll(keepingCapacity: true)
        if store == nil { terminal.release() }
    }

    /// Adds a failed command's diagnostic to the outcome; `span`: the command's bytes in `source`,
    /// when known (its column and subcommand).
    /// - Parameter typedMessage: the message the command gives typed, when it differs (a `-c`
    ///   command that did not lex, ``Outcome/Report/typedMessage``).
    func report(_ error: ShellError, in source: SourceFile, command: String?, span: Range<Int>? = nil, typedMessage: String? = nil) {
        anyFailed = true
        var error = error
        if let run = frames.scheduledRun { error.message = "(at \(run.time)) " + error.message }
        // The history keeps errors as typed commands print them, but not those of a sourced file,
        // nor of a command a sourced file or a restored snapshot scheduled, which a replay names
        // by that file too (``FrameStack/runsTyped``).
        let retyped = source.name != nil && (frames.kinds.count <= 1 || frames.runsTyped)
        var made = DiagnosticsFormatter.report(error, in: source, command: command, span: span, retyped: retyped, mode: settings.mode)
        if let typedMessage { made.typedMessage = DiagnosticsFormatter.shortened(DiagnosticsFormatter.oneLine(typedMessage)) }
        add(.diagnostic(made))
    }

    /// Adds an item to the outcome of the command running now; with none (output from outside
    /// any command), it goes to the terminal at once.
    func add(_ item: Outcome.Item) {
        if let speaker { return add(.client(speaker, item), tagged: true) }
        add(item, tagged: true)
    }

    private func add(_ item: Outcome.Item, tagged: Bool) {
        if outcome.open {
            outcome.items.append(item)
        } else {
            terminal.add(item.text(colour: settings.colour, width: terminal.width), isError: item.isError, colour: settings.colour)
        }
    }

    /// Hands a finished top-level command's outcome (`command`: its bytes) to the renderers: the
    /// terminal's copy, the history's (and a recording's), or with `--echo` the transcript entry
    /// in place of the terminal's copy.
    func finish(_ command: ArraySlice<UInt8>) {
        let echoes = settings.echo && history.enabled
        if !echoes { terminal.show(&outcome, colour: settings.colour, held: store != nil) }
        // Noted only where something reads the history (``notesHistory``): a batch that neither
        // echoes nor records would keep its last command for nobody, at about a hundred
        // instructions a command.
        if notesHistory {
            history.note(&outcome, command: command, colour: settings.colour)
            if echoes { terminal.addShown(history.lastAsTranscript) }
        }
        outcome.reset()
    }

    // MARK: Comments

    /// Whether commands and `#` comments enter the history: only when something reads more than
    /// its last entry, or writes each entry out (`--echo`, an open recording, the interactive shell).
    var notesHistory: Bool {
        history.enabled && (settings.echo || history.recording != nil || history.entries.retainsAll)
    }

    /// Notes each comment of `bytes[from..<to]` (blank lines, separators and comments between two
    /// commands) that has a line of its own as a command with no output: `--echo` prints it and a
    /// recording writes it (`cachesh> # ...`), so a script's narration stays in its transcript.
    /// A comment after a command on its line is left out, and so is a script's `#!` first line.
    /// Comments are not counted as commands.
    /// - Complexity: O(n) in `to - from`.
    private func noteComments(in bytes: [UInt8], from: Int, to: Int) {
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
                history.noteComment(bytes[i..<last], mode: settings.mode)
                if settings.echo { terminal.addShown(history.lastAsTranscript) }
            }
            i = end
        }
    }
}
