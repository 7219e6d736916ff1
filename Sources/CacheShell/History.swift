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

    var startIndex: Int { 0 }
    var endIndex: Int { ends.count }

    /// Entry `i`: the command as typed and everything it printed.
    /// - Complexity: O(n) in the length of the entry.
    subscript(i: Int) -> (command: String, output: String) {
        let (commandStart, outputStart) = i == 0 ? (0, 0) : ends[i - 1]
        let (commandEnd, outputEnd) = ends[i]
        return (String(decoding: commandBytes[commandStart..<commandEnd], as: UTF8.self),
                outputPieces[outputStart..<outputEnd].joined())
    }

    /// Adds an entry: the command's source bytes and its output, in pieces.
    /// - Complexity: O(n) in the length of the command and the number of pieces.
    mutating func append(command: ArraySlice<UInt8>, output: some Sequence<String>) {
        if !retainsAll && !ends.isEmpty {
            commandBytes.removeAll(keepingCapacity: true)
            outputPieces.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
        }
        commandBytes.append(contentsOf: command)
        outputPieces.append(contentsOf: output)
        ends.append((commandBytes.count, outputPieces.count))
    }

    /// Adds an entry from its text.
    mutating func append(command: String, output: String) {
        append(command: ArraySlice(command.utf8), output: CollectionOfOne(output))
    }

    /// Forgets every entry (the session begins again from a restored state).
    mutating func removeAll() {
        commandBytes.removeAll()
        outputPieces.removeAll()
        ends.removeAll()
    }
}
