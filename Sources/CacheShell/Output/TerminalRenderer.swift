import CacheCore

/// The user's copy of each outcome: text with colour on a terminal, escaped so that no data can
/// drive it, handed to the sink (the executable's terminal) or collected for ``Session/takeOutput()``.
/// In a batch, a command whose reply is all it printed is written straight into the batch's
/// output buffer, with no text made on the way.
///
/// With a store, it is also the commit gate (SPEC §5.3): output reporting changes not committed
/// yet is held, handed on only after the commit that makes them durable (``release()``), and
/// dropped if that commit fails (``discard()``).
struct TerminalRenderer {
    /// Receives output when it is handed on; nil: it collects until taken.
    var sink: ((_ text: String, _ isError: Bool) -> Void)?
    /// The buffer the sink writes standard output into, when set with it (a batch).
    var buffer: OutputBuffer?
    /// Whether a lone reply may go straight into ``buffer``: set by the session from its setup
    /// (a batch keeping only its last history entry, with no recording, `--echo` nor colour).
    var writesStraight = false
    /// The columns a reply's table fits before it is shown as records: ``Render/width``, or a
    /// terminal's own width when standard output is one (SPEC §4). The history's copy, and so a
    /// recording and `--echo`, always keeps ``Render/width``.
    var width = Render.width
    /// Text rendered and not handed on yet, in order: (text, isError).
    private(set) var waiting: [(text: String, isError: Bool)] = []
    /// The UTF-8 bytes of the texts of ``waiting``.
    private var waitingBytes = 0
    /// With no sink, the bytes of the texts at the front of ``waiting`` already handed on
    /// (``release()``, ``releaseCommitted()``), kept there for ``take()``: no longer held.
    private var releasedBytes = 0
    /// With a store, where in ``buffer`` the replies written straight there and not committed yet
    /// begin (nothing flushes them before the commit; a failed one takes them back).
    private var heldFrom: Int?
    /// With a store committing on a writer thread: the output of the group whose commit is in
    /// flight, the front of what is held: how many of ``waiting`` are its, and where its replies
    /// written straight into ``buffer`` end (nil when it wrote none there).
    private var committing: (items: Int, bufferEnd: Int?, bytes: Int)?

    /// Renders a finished top-level command. `held`: with a store, its output waits for the commit.
    /// (The outcome is not changed: `inout` only spares a copy of the session's stored value.)
    @inline(__always)
    mutating func show(_ outcome: inout Outcome, colour: Bool, held: Bool) {
        if writesStraight && waiting.isEmpty && outcome.isLoneReply, let buffer {
            writeStraight(outcome.reply, name: outcome.name, mode: outcome.replyMode, into: buffer, held: held)
        } else {
            showAsText(&outcome, colour: colour)
        }
    }

    /// ``show(_:colour:held:)`` as text, to be handed on.
    private mutating func showAsText(_ outcome: inout Outcome, colour: Bool) {
        for item in outcome.items { add(item.text(colour: colour, width: width), isError: item.isError, colour: colour) }
        guard outcome.hasReply else { return }
        let text = outcome.reply.text(command: outcome.name, mode: outcome.replyMode, colour: colour, width: width)
        if !text.isEmpty { add(text, isError: false, colour: colour) }
    }

    /// Adds text as a terminal shows it: what could drive the terminal escaped, colour kept.
    mutating func add(_ text: String, isError: Bool, colour: Bool) {
        let shown = Render.safeForTerminal(text, colour: colour)
        waitingBytes += shown.utf8.count
        waiting.append((shown, isError))
    }

    /// Adds text already made as the output shows it (`--echo`'s transcript entries).
    mutating func addShown(_ text: String) {
        if !text.isEmpty {
            waitingBytes += text.utf8.count
            waiting.append((text, false))
        }
    }

    /// Writes a reply straight into `buffer`, byte for byte what `show` would hand the sink.
    private mutating func writeStraight(_ reply: Reply, name: String, mode: OutputMode, into buffer: OutputBuffer, held: Bool) {
        let width = width
        writeStraight(into: buffer, held: held) { out in reply.write(into: &out, command: name, mode: mode, colour: false, width: width) }
    }

    /// The bytes of output held for the commit not made yet, with a store: those of the commands
    /// run since the last commit was made or handed to the writer thread, not those of a commit
    /// in flight (`StoreLink.heldOutputLimit` ends a commit group at a bound of them, at the same
    /// commands whether commits are made on the writer thread or not).
    var groupByteCount: Int {
        // Before it: what was handed on (kept for `take` with no sink), and the group in flight.
        var bytes = waitingBytes - releasedBytes
        var from = heldFrom
        if let (_, end, inFlight) = committing {
            bytes = waitingBytes - inFlight
            if let end { from = end }
        }
        guard let from, let buffer else { return bytes }
        return bytes + buffer.count - from
    }

    /// Whether a lone reply shown now would be written straight into the buffer (``show(_:colour:held:)``).
    var writesStraightNow: Bool { writesStraight && waiting.isEmpty && buffer != nil }

    /// Writes a lone reply straight into the buffer, as ``show(_:colour:held:)`` does when
    /// ``writesStraightNow``: `write` writes its text, without colour, and returns whether it may
    /// hold a control character (`Reply.write`).
    @inline(__always)
    mutating func writeStraight(held: Bool, _ write: (inout ByteWriter) -> Bool) {
        guard let buffer else { preconditionFailure("a reply written straight with no buffer") }
        writeStraight(into: buffer, held: held, write)
    }

    @inline(__always)
    private mutating func writeStraight(into buffer: OutputBuffer, held: Bool, _ write: (inout ByteWriter) -> Bool) {
        // The buffer's writer taken out while the reply is written (one access to it, not one per
        // use), and put back before anything else can write to the buffer.
        var out = buffer.writer
        let from = out.count
        if write(&out) {
            escapeWritten(from: from, in: &out)
        }
        buffer.writer = out
        if held {
            if heldFrom == nil { heldFrom = from }
        } else if out.count >= OutputBuffer.flushSize {
            buffer.flush()
        }
    }

    /// What `add` would do to the text written from `from` on: escape what could drive the terminal.
    @inline(never)
    private func escapeWritten(from: Int, in out: inout ByteWriter) {
        let text = Render.visible(out.text(from: from))
        out.removeLast(from: from)
        out.append(text)
    }

    /// Hands everything rendered to the sink (with no sink, keeps it for ``take()``); replies
    /// written straight into the buffer are no longer held, and the buffer is flushed when full.
    mutating func release() {
        precondition(committing == nil, "output released while a commit is in flight")
        // Whether anything waits first: after each command of a batch, usually nothing does, and
        // the sink is then not taken out (a retain and a release of its context).
        // (With nothing waiting, nothing is counted as handed on either.)
        if !waiting.isEmpty {
            if let sink {
                for (text, isError) in waiting { sink(text, isError) }
                waiting.removeAll(keepingCapacity: true)
                waitingBytes = 0
                releasedBytes = 0
            } else {
                releasedBytes = waitingBytes
            }
        }
        if heldFrom != nil {
            heldFrom = nil
            if let buffer, buffer.count >= OutputBuffer.flushSize { buffer.flush() }
        }
    }

    /// Marks everything held as the output of the group whose commit is now in flight on the
    /// writer thread: ``releaseCommitted()`` hands it on once that commit ends; what the
    /// commands after it show is held behind it, for the next commit.
    mutating func holdForCommitInFlight() {
        precondition(committing == nil, "one commit in flight at a time")
        committing = (waiting.count, heldFrom == nil ? nil : buffer?.count, waitingBytes)
    }

    /// Hands on the output of the group whose commit ended (``holdForCommitInFlight()``), as
    /// ``release()`` would have then; what the commands since showed stays held. The buffer is
    /// flushed up to the held replies once that part is full.
    mutating func releaseCommitted() {
        guard let (items, end, bytes) = committing else { return }
        committing = nil
        // Where the later commands' replies written straight into the buffer begin, if any.
        let later: Int? = if let end, let buffer { buffer.count > end ? end : nil } else { heldFrom }
        if let sink, items > 0 {
            // (A reply is written straight only when nothing waits before it, so while these
            // waited, no later reply went into the buffer: the sink appends after this group's.)
            precondition(later == nil, "a later reply in the buffer before earlier text")
            for (text, isError) in waiting[..<items] {
                sink(text, isError)
                waitingBytes -= text.utf8.count
            }
            waiting.removeFirst(items)
        } else {
            releasedBytes = bytes
        }
        heldFrom = later
        guard let buffer else { return }
        if let later {
            if later >= OutputBuffer.flushSize {
                let heldBytes = buffer.count - later
                buffer.flush(before: later)
                heldFrom = buffer.count - heldBytes
            }
        } else if buffer.count >= OutputBuffer.flushSize {
            buffer.flush()
        }
    }

    /// Drops everything held for a commit that failed: it reports changes that are not durable
    /// (with a commit in flight, the output of its group and of every command run since).
    mutating func discard() {
        waiting.removeAll(keepingCapacity: true)
        waitingBytes = 0
        releasedBytes = 0
        if let from = heldFrom, let buffer {
            buffer.writer.removeLast(from: min(from, buffer.count))
        }
        heldFrom = nil
        committing = nil
    }

    /// Takes the output not handed on.
    mutating func take() -> [(text: String, isError: Bool)] {
        defer {
            waiting.removeAll(keepingCapacity: true)
            waitingBytes = 0
            releasedBytes = 0
        }
        return waiting
    }

    /// What is wrong with the renderer; empty when nothing is.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if writesStraight && buffer == nil { problems.append("writes straight with no buffer") }
        if let from = heldFrom, from > (buffer?.count ?? -1) { problems.append("holds bytes past the buffer's end") }
        /// The UTF-8 bytes of `texts`.
        func utf8Count(_ texts: ArraySlice<(text: String, isError: Bool)>) -> Int { texts.reduce(0) { $0 + $1.text.utf8.count } }
        if waitingBytes != utf8Count(waiting[...]) { problems.append("counts \(waitingBytes) bytes waiting, not those of its texts") }
        if releasedBytes > waitingBytes { problems.append("counts \(releasedBytes) bytes handed on of \(waitingBytes) waiting") }
        if let (items, end, inFlight) = committing {
            if items > waiting.count { problems.append("a commit in flight holds more text than waits") }
            if inFlight != utf8Count(waiting[..<min(items, waiting.count)]) {
                problems.append("a commit in flight counts \(inFlight) bytes, not those of its texts")
            }
            if let end, end > (buffer?.count ?? -1) || heldFrom == nil { problems.append("a commit in flight holds bytes not held") }
        }
        return problems
    }
}
