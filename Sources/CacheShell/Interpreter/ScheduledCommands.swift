import CacheCore

/// The commands `at` scheduled and not run yet, by the token the cache's scheduler knows them by:
/// their text and the place that scheduled it (a nested error names that file and line).
struct ScheduledCommands {
    struct Entry {
        var text: String
        var source: SourceFile
        var offset: Int
        /// Scheduled by a command the history holds as typed (a top-level one, or one such a
        /// command scheduled): a replay of the history (`--echo`, a recording) types that command,
        /// so there it names no file and is on line 1.
        var typed = false
    }

    private var entries: [Int: Entry] = [:]
    private var nextToken = 0

    /// Keeps a command; returns its token.
    mutating func add(_ entry: Entry) -> Int {
        let token = nextToken
        nextToken += 1
        entries[token] = entry
        return token
    }

    /// The command of `token`, now due: it is no longer kept.
    mutating func take(_ token: Int) -> Entry? { entries.removeValue(forKey: token) }

    subscript(token: Int) -> Entry? { entries[token] }

    /// The texts of the commands kept, in the order they were scheduled.
    var texts: [String] { entries.sorted { $0.key < $1.key }.map(\.value.text) }

    /// Forgets every command (a restore replaces them), tokens counting from 0 again.
    mutating func removeAll() {
        entries = [:]
        nextToken = 0
    }

    /// The fields a snapshot and a store write beside the scheduled command of `token`: its
    /// text, file and line; `asReplayed`: the file and line a replay of the history gives it
    /// (``Entry/typed``).
    func fields(_ token: Int, asReplayed: Bool = false) -> [String: JSONValue] {
        guard let entry = entries[token] else { return [:] }
        if asReplayed && entry.typed { return ["command": .string(entry.text), "file": .null, "line": .int(1)] }
        return ["command": .string(entry.text),
                "file": entry.source.name.map(JSONValue.string) ?? .null,
                "line": .int(Int64(entry.source.location(ofOffset: entry.offset).line))]
    }


    /// What is wrong with the table; empty when nothing is.
    func invariantViolations() -> [String] {
        entries.keys.contains(where: { $0 < 0 || $0 >= nextToken }) ? ["a scheduled command's token was never given"] : []
    }
}
