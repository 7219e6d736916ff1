import CacheCore

extension Session {
    /// Every command's handler, by name, from ``CommandCatalog``.
    static let handlers: [String: CommandHandler] = Dictionary(uniqueKeysWithValues: CommandCatalog.all.map { ($0.name, $0.run) })

    /// Habits from other shells, each run as the command it names: `exit`, `\q` (psql), `.quit` and
    /// `.exit` (sqlite3), `q` quit; `?` is `help`. Not commands of their own: `help` does not list them.
    static let aliases: [String: String] = ["exit": "quit", "\\q": "quit", ".quit": "quit", ".exit": "quit", "q": "quit", "?": "help"]

    func dispatch(_ name: String, _ command: RawCommand, _ source: SourceFile, on cache: isolated Cache) throws(ShellError) -> Reply {
        guard let handler = Self.handlers[name] ?? (command.words[0].kind == .bare ? Self.aliases[name].flatMap { Self.handlers[$0] } : nil) else {
            let word = command.words[0]
            if word.kind != .bare {
                throw ShellError("a command starts with its name, not a JSON value", at: word.offset)
            }
            // `GET`, as redis-cli takes it: commands are lower case, and the lower-case name is the fix.
            let lower = name.lowercased()
            if lower != name, Self.handlers[lower] != nil || Self.aliases[lower] != nil {
                throw ShellError("unknown command \"\(name)\" (commands are lower case: did you mean \(lower)?)", at: word.offset)
            }
            if name == "concurrent" && command.words.count == 1 {
                // The first line of an explore scenario's block: the file is not a script (SPEC §3.1).
                throw ShellError("unknown command \"concurrent\": this reads as an explore scenario, not a script; "
                                 + "run cachesh --explore FILE (or explore FILE)", at: word.offset)
            }
            let suggestion = Self.nearest(name, among: Self.commandNames)
            throw ShellError("unknown command \"\(name)\"" + (suggestion.map { " (did you mean \($0)?)" } ?? " (try help)"),
                             at: word.offset)
        }
        return try handler(self, cache, command, source)
    }

    func requestQuit() { quitRequested = true }

    /// Every command name, sorted: the order suggestions are tried in.
    static let commandNames = handlers.keys.sorted()

    /// The nearest of `names` (the first of equally near ones) that is close to `typed`, for a "did you mean" (nil when none is):
    /// one edit away (a swap of two neighbours counts as one), or two for a word of 5 or more
    /// characters that starts as the name does. So `gte` suggests `get` and `stast` `stats`, but
    /// `exit` does not suggest `evict`, nor `?` `at`, nor `nosuch` `touch` (two edits, the first
    /// letter one of them: a word that shares little with the name).
    /// - Complexity: O(names · n·m).
    static func nearest(_ typed: String, among names: [String]) -> String? {
        let length = typed.unicodeScalars.count
        let allowed = length >= 5 ? 2 : 1
        // Names whose lengths differ by more than `allowed` are further apart: skip the O(n·m) work.
        var best: (name: String, distance: Int)?
        for name in names where abs(name.unicodeScalars.count - length) <= allowed {
            let distance = editDistance(name, typed)
            guard distance <= 1 || name.unicodeScalars.first == typed.unicodeScalars.first else { continue }
            if distance <= allowed && distance < (best?.distance ?? Int.max) { best = (name, distance) }
        }
        return best?.name
    }

    /// The edit distance between two names, in Unicode scalars: insertions, deletions,
    /// substitutions and swaps of two neighbours (optimal string alignment).
    /// - Complexity: O(n·m) time and O(m) space for names of n and m scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var beforePrevious = Array(0...b.count)
        var previous = beforePrevious
        var row = previous
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, row) = (previous, row, beforePrevious)
        }
        return previous[b.count]
    }
}
