import CacheCore

/// The commands `at` scheduled and not run yet, by the token the cache's scheduler knows them by:
/// their text and the place that scheduled it (a nested error names that file and line).
struct ScheduledCommands {
    struct Entry {
        var text: String
        var source: SourceFile
        var offset: Int
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

    /// Forgets every command (a restore replaces them), tokens counting from 0 again.
    mutating func removeAll() {
        entries = [:]
        nextToken = 0
    }

    /// The fields a snapshot and a store write beside the scheduled command of `token`: its
    /// text, file and line.
    func fields(_ token: Int) -> [String: JSONValue] {
        guard let entry = entries[token] else { return [:] }
        return ["command": .string(entry.text),
                "file": entry.source.name.map(JSONValue.string) ?? .null,
                "line": .int(Int64(entry.source.location(ofOffset: entry.offset).line))]
    }

    /// What is wrong with the table; empty when nothing is.
    func invariantViolations() -> [String] {
        entries.keys.contains(where: { $0 < 0 || $0 >= nextToken }) ? ["a scheduled command's token was never given"] : []
    }
}
