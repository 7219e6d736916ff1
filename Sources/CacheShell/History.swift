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
    mutating func append(command: ArraySlice<UInt8>, output: some Sequence<String>) {
        forgetPending()
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
    mutating func append(command: String, output: String) {
        append(command: ArraySlice(command.utf8), output: CollectionOfOne(output))
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
        commandBytes.removeAll()
        outputPieces.removeAll()
        ends.removeAll()
    }
}
