import CacheCore

extension Session {
    typealias Handler = @Sendable (Session, isolated Cache, RawCommand, SourceFile) throws(ShellError) -> Reply

    /// Every command of SPEC §3, by name: one place per family (parse → run → render).
    static let handlers: [String: Handler] = [
        "load": ConfigCommands.load,
        "ns": ConfigCommands.ns,
        "config": ConfigCommands.config,
        "now": ClockCommands.now,
        "advance": ClockCommands.advance,
        "at": ClockCommands.at,
        "put": WriteCommands.put,
        "get": ReadCommands.get,
        "mget": ReadCommands.mget,
        "peek": ReadCommands.peek,
        "keys": ReadCommands.keys,
        "expire": WriteCommands.expire,
        "invalidate": WriteCommands.invalidate,
        "evict": WriteCommands.evict,
        "clear": WriteCommands.clear,
        "memory-warning": WriteCommands.memoryWarning,
        "mutate": RealtimeCommands.mutate,
        "event": RealtimeCommands.event,
        "push": RealtimeCommands.push,
        "validate": ValidationCommands.validate,
        "pending": ObserveCommands.pending,
        "server": ServerCommands.server,
        "stats": ObserveCommands.stats,
        "watch": ObserveCommands.watch,
        "unwatch": ObserveCommands.unwatch,
        "snapshot": SnapshotCommands.snapshot,
        "restore": SnapshotCommands.restore,
        "replay": ReplayCommands.replay,
        "source": SessionCommands.source,
        "record": RecordCommands.record,
        "output": SessionCommands.output,
        "echo": SessionCommands.echo,
        "help": HelpCommands.help,
        "quit": SessionCommands.quit,
    ]

    func dispatch(_ name: String, _ command: RawCommand, _ source: SourceFile, on cache: isolated Cache) throws(ShellError) -> Reply {
        guard let handler = Self.handlers[name] else {
            let word = command.words[0]
            if word.kind != .bare {
                throw ShellError("a command starts with its name, not a JSON value", at: word.offset)
            }
            // Names whose lengths differ by more than 2 are more than 2 edits apart: skip the O(n·m) work.
            let length = name.unicodeScalars.count
            let suggestion = Self.commandNames.first {
                abs($0.unicodeScalars.count - length) <= 2 && Self.editDistance($0, name) <= 2
            }
            throw ShellError("unknown command \"\(name)\"" + (suggestion.map { " (did you mean \($0)?)" } ?? " (try help)"),
                             at: word.offset)
        }
        return try handler(self, cache, command, source)
    }

    func requestQuit() { quitRequested = true }

    /// Every command name, sorted: the order suggestions are tried in.
    static let commandNames = handlers.keys.sorted()

    /// The Levenshtein distance between two names, in Unicode scalars.
    /// - Complexity: O(n·m) time and O(m) space for names of n and m scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var row = previous
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &row)
        }
        return previous[b.count]
    }
}
