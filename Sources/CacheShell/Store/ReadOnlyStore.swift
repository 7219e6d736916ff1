import CacheCore

/// A session on a read-only store (`--store FILE` on a file without write permission, SPEC §5.3):
/// commands that change nothing the store keeps run; the others are refused before they run, so
/// the cache stays as the store holds it.
///
/// The store keeps the whole state: namespaces, entries with their recency and eviction state,
/// the clock, pending work, watches, active keys and polls, the server, the statistics. So a
/// `get` changes it (it counts a hit or a miss and makes the entry the most recent, or fetches)
/// and is refused; `peek` reads an entry without changing anything. What the store does not keep
/// may change: the output mode, scripted answers (`server next`, `server strict`), files written
/// by `snapshot FILE` and `record`.
extension Session {
    /// The error for `command` when the session's store is read-only and the command would
    /// change what it keeps; nil otherwise (an unknown command is left to its own error).
    func readOnlyRefusal(_ command: RawCommand) -> ShellError? {
        guard let link = store, link.readOnlyState != nil, let first = command.words.first,
              Self.wouldChangeStore(command.words[...]) else { return nil }
        let name = Self.describe(command.words[...])
        let hint = name.hasSuffix("get") || name.hasSuffix("pages") ? " (a read counts in the statistics and makes the entry the most recent; peek changes nothing)" : ""
        return ShellError("the store \(link.store.path) is read-only: \(name) would change it\(hint)", at: first.offset)
    }

    /// The command as a refusal names it: with its subcommand (`server set`, `stats reset`), and
    /// `expect` with the command it runs (`expect get`).
    private static func describe(_ words: ArraySlice<Word>) -> String {
        guard let first = words.first else { return "" }
        let name = commandName(first)
        let rest = words.dropFirst()
        switch name {
        case "server", "stats":
            // `server log clear` in full: `server log` alone changes nothing.
            return ([name] + rest.prefix(rest.first?.text == "log" ? 2 : 1).map(\.text)).joined(separator: " ")
        case "expect": return "expect " + describe(rest)
        default: return name
        }
    }

    /// The command a first word runs, as `execute` finds it: a command's name however it is
    /// written (`"put"` runs `put`), an alias only as a bare word.
    private static func commandName(_ first: Word) -> String {
        first.kind == .bare ? aliases[first.text] ?? first.text : first.text
    }

    /// Commands that never change what a store keeps, whatever their arguments.
    static let storeUnchanged: Set<String> = [
        "config", "now", "peek", "keys", "pending", "timeline", "explain", "snapshot", "diff", "replay", "source",
        "record", "output", "echo", "help", "quit", "persist",
    ]

    /// Commands that change it only with arguments: alone, they list (`ns`, `activate`, `poll`, `watch`, `client`).
    static let storeUnchangedAlone: Set<String> = ["ns", "activate", "poll", "watch", "client"]

    /// Whether the command `words` would change what a store keeps (an unknown command would not:
    /// it fails as it would anywhere). Its name and subcommand count however they are written:
    /// a quoted `"put"` runs `put`. `source` is not: each command it runs is checked itself;
    /// `expect` is as the command it runs.
    static func wouldChangeStore(_ words: ArraySlice<Word>) -> Bool {
        guard let first = words.first else { return false }
        let name = commandName(first)
        guard CommandCatalog.info(name) != nil else { return false }
        let rest = words.dropFirst()
        if storeUnchanged.contains(name) { return false }
        if storeUnchangedAlone.contains(name) {
            // `ns NAME` alone shows a namespace (the command refuses it for one not yet defined,
            // which it would define).
            if name == "ns" && rest.count == 1 && rest.first!.option == nil && !rest.first!.text.hasPrefix("--") { return false }
            return !rest.isEmpty
        }
        switch name {
        case "stats":
            return rest.first?.text == "reset"
        case "server":
            switch rest.first?.text {
            case "show": return false
            case "log": return rest.dropFirst().first?.text == "clear"
            case nil: return false
            default: return CommandCatalog.info("server")!.subcommands.contains { $0.name == rest.first!.text }
            }
        case "expect":
            return wouldChangeStore(rest)
        default:
            return true
        }
    }
}
