import CacheCore

/// The session's own copy of each outcome: plain text (no colour), errors in the form a typed
/// command prints them (a replay names no file), and `load FILE` as the configuration itself.
/// An open recording and `--echo` write the entries it makes, so the three never disagree.
struct HistoryRenderer {
    /// Every top-level command so far (or only the last: ``History/retainsAll``).
    var entries = History()
    /// Keep a history at all (off for benchmarks of huge batches that never record).
    var enabled = true
    /// An open `record FILE`.
    var recording: Recording?

    /// Notes a finished top-level command (its bytes in its source), taking its reply when the
    /// entry can keep it unrendered (a batch's lone reply).
    /// - Complexity: O(n) in the length of the command and its output.
    /// `colour`: the terminal's copy is coloured, and so may be the lines a command made itself.
    @inline(__always)
    mutating func note(_ outcome: inout Outcome, command: ArraySlice<UInt8>, colour: Bool) {
        // (A reply with two views exists only while a recording is open, and takes the other way.)
        if !entries.retainsAll && !colour && recording == nil && outcome.isLoneReply {
            // Only kept as the last entry, rendered if ever read. (The reply is swapped in, and
            // the previous one handed back to be let go.)
            entries.appendLast(command: command, reply: &outcome.reply, name: outcome.name, mode: outcome.replyMode)
            return
        }
        let recorded = noteRendered(&outcome, command: command, colour: colour)
        if let recording, let last = entries.last { recording.append(command: last.command, output: recorded ?? last.output) }
    }

    /// ``note(_:command:colour:)`` with the entry made as text now.
    /// - Returns: the output a recording writes where it differs from the history's: a reply with
    ///   two views (``Reply/views(shown:replayed:)``) is noted as a replay of the history prints
    ///   it, and recorded as the session printed it.
    private mutating func noteRendered(_ outcome: inout Outcome, command: ArraySlice<UInt8>, colour: Bool) -> String? {
        let noted = Self.output(of: outcome, colour: colour, replayed: true)
        entries.append(command: noted.command.map { ArraySlice($0.utf8) } ?? command, output: noted.pieces, mode: outcome.startMode)
        guard recording != nil, outcome.reply.hasViews || outcome.items.contains(where: \.hasViews) else { return nil }
        return Self.output(of: outcome, colour: colour, replayed: false).pieces.joined()
    }

    /// The pieces of output the history notes for `outcome`, and the command it notes in place of
    /// the one typed (`rewrite`); `replayed`: each reply with two views as a replay prints it.
    private static func output(of outcome: Outcome, colour: Bool, replayed: Bool) -> (command: String?, pieces: [String]) {
        // Colour is for the terminal's copy only: the history, and so `record`, holds plain
        // text, also where a command coloured lines of its own (a table's states).
        let plain = { (text: String) in Render.visible(colour ? Render.withoutColour(text) : text) }
        var pieces = outcome.items.map { plain($0.text(colour: false, typed: true, replayed: replayed)) }
        if let rewrite = outcome.rewrite {
            // The command as a replay types it, with what it printed before its reply (events,
            // the reads a `restore` ended), then the reply that form prints.
            return (rewrite.command, pieces + [plain(rewrite.output)])
        }
        if outcome.hasReply {
            let reply = replayed ? outcome.reply.replayed : outcome.reply
            let text = reply.text(command: outcome.name, mode: outcome.replyMode, colour: false)
            if !text.isEmpty { pieces.append(plain(text)) }
        }
        return (nil, pieces)
    }

    /// Notes a comment on a line of its own as a command with no output (a recording writes it).
    mutating func noteComment(_ bytes: ArraySlice<UInt8>, mode: OutputMode) {
        entries.append(command: bytes, output: [String](), mode: mode)
        if let recording, let last = entries.last { recording.append(command: last.command, output: "") }
    }

    /// The last entry as a transcript writes it (`--echo`); empty for a `record` command.
    var lastAsTranscript: String {
        guard let last = entries.last, !RecordCommands.isRecordCommand(last.command) else { return "" }
        return RecordCommands.entry(command: last.command, output: last.output)
    }

    /// What is wrong with the history; empty when nothing is.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if !entries.retainsAll && entries.count > 1 { problems.append("a batch's history holds more than its last entry") }
        if entries.isEmpty != (entries.startMode == nil) { problems.append("the history's first mode is set without entries, or missing") }
        return problems
    }
}

/// Every top-level command of a session and what it printed, oldest first, for `record` (which
/// writes the session from its start).
///
/// Noting a command costs a copy of its bytes and a reference to each piece of output it printed;
/// the strings of an entry are only built when a recording reads it.
struct History: RandomAccessCollection {
    /// The commands' UTF-8 bytes, back to back.
    private var commandBytes: [UInt8] = []
    /// The outputs, as the pieces the session printed them in.
    private var outputPieces: [String] = []
    /// Where each entry's command ends in `commandBytes` and its output in `outputPieces`; an entry
    /// starts where the one before it ends.
    private var ends: [(command: Int, output: Int)] = []
    /// Keep every entry (for `record`, which writes the session from its start); when false only
    /// the last entry is kept (what `--echo` and an open recording need), so a long batch holds
    /// no history.
    var retainsAll = true
    /// The output mode the first entry kept began in: a recording `--from-start` begins in it.
    private(set) var startMode: OutputMode?

    /// The one entry, when it is a reply written straight out and not rendered yet
    /// (``appendLast(command:reply:name:mode:)``): a batch's last command, kept without a copy.
    /// (Separate fields, not an optional tuple, which generic code would copy and destroy.)
    private var hasPending = false
    private var pendingCommand: ArraySlice<UInt8> = []
    private var pendingReply = Reply.nothing
    private var pendingName = ""
    private var pendingMode = OutputMode.human

    var startIndex: Int { 0 }
    var endIndex: Int { hasPending ? 1 : ends.count }

    /// Entry `i`: the command as typed and everything it printed.
    /// - Complexity: O(n) in the length of the entry.
    subscript(i: Int) -> (command: String, output: String) {
        if hasPending {
            let text = pendingReply.text(command: pendingName, mode: pendingMode, colour: false)
            return (String(decoding: pendingCommand, as: UTF8.self), Render.visible(text))
        }
        let (commandStart, outputStart) = i == 0 ? (0, 0) : ends[i - 1]
        let (commandEnd, outputEnd) = ends[i]
        return (String(decoding: commandBytes[commandStart..<commandEnd], as: UTF8.self),
                outputPieces[outputStart..<outputEnd].joined())
    }

    /// Adds an entry: the command's source bytes and its output, in pieces.
    /// - Complexity: O(n) in the length of the command and the number of pieces.
    mutating func append(command: ArraySlice<UInt8>, output: some Sequence<String>, mode: OutputMode) {
        forgetPending()
        if ends.isEmpty || !retainsAll { startMode = mode }
        if !retainsAll && !ends.isEmpty {
            commandBytes.removeAll(keepingCapacity: true)
            outputPieces.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
        }
        commandBytes.append(contentsOf: command)
        outputPieces.append(contentsOf: output)
        ends.append((commandBytes.count, outputPieces.count))
    }

    /// Makes the only entry a command (its source bytes, shared) and the reply it printed alone,
    /// rendered only if read. Only when the history keeps just the last entry.
    /// `reply` is taken (swapped with the entry it replaces).
    mutating func appendLast(command: ArraySlice<UInt8>, reply: inout Reply, name: String, mode: OutputMode) {
        precondition(!retainsAll, "the whole history keeps every entry's text")
        startMode = mode
        if !ends.isEmpty {
            commandBytes.removeAll(keepingCapacity: true)
            outputPieces.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
        }
        hasPending = true
        pendingCommand = command
        swap(&pendingReply, &reply)
        pendingName = name
        pendingMode = mode
    }

    /// Adds an entry from its text.
    mutating func append(command: String, output: String, mode: OutputMode) {
        append(command: ArraySlice(command.utf8), output: CollectionOfOne(output), mode: mode)
    }

    /// Forgets every entry (the session begins again from a restored state).
    /// Drops the unrendered entry, and what it holds on to.
    private mutating func forgetPending() {
        guard hasPending else { return }
        hasPending = false
        pendingCommand = []
        pendingReply = .nothing
    }

    mutating func removeAll() {
        forgetPending()
        startMode = nil
        commandBytes.removeAll()
        outputPieces.removeAll()
        ends.removeAll()
    }
}
