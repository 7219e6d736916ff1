/// What one command of SPEC §3 takes and does: the source of `help`, tab completion,
/// argument hints and the man page's command list.
public struct CommandInfo: Sendable {
    /// The command's name, as typed (`get`).
    public var name: String
    /// One line: the name, then its arguments; ALL-CAPS words are arguments, `[...]` is optional,
    /// `a|b` is a choice, `...` repeats (`get KEY [--force] [--nowait]`).
    public var synopsis: String
    /// One line saying what it does.
    public var summary: String
    /// Each argument, option and flag of the synopsis with what it means, in synopsis order.
    public var arguments: [(name: String, meaning: String)]
    /// A line that runs as it stands (`get feed:home --nowait`).
    public var example: String
    /// The words that may follow the name to pick a form (`server set`, `stats reset`).
    public var subcommands: [String]
    /// The option (`ttl=`) and flag (`--force`) names the command accepts.
    public var options: [String]

    public init(name: String, synopsis: String, summary: String, arguments: [(name: String, meaning: String)],
                example: String, subcommands: [String] = [], options: [String] = []) {
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.arguments = arguments
        self.example = example
        self.subcommands = subcommands
        self.options = options
    }
}

/// Every command of the shell, in the order of SPEC §3, with what its handler accepts.
public enum CommandCatalog {
    /// The command named `name`, or nil.
    /// - Complexity: O(1).
    public static func info(_ name: String) -> CommandInfo? {
        byName[name].map { all[$0] }
    }

    private static let byName: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })

    private static let duration = "a duration: 250ms, 30s, 5m, 1h30m, 2d"
    private static let key = "NAMESPACE:ID, or ID for namespace default (feed:home, profile:42)"
    private static let patch = "a JSON merge patch; values may be {\"$inc\": N}, {\"$push\": V}, {\"$pull\": V}"

    public static let all: [CommandInfo] = [
        CommandInfo(
            name: "load", synopsis: "load FILE",
            summary: "load a configuration: namespaces, push rules, server",
            arguments: [("FILE", "a JSON configuration file, relative to the script that loads it; replaces the configuration in force (entries stay, their times are recomputed)")],
            example: "load config.json"),
        CommandInfo(
            name: "ns", synopsis: "ns [NAME] [ttl=D] [stale=D] [max=N] [stale-if-error=D] [timeout=D] [--purgeable]",
            summary: "define or change a namespace; alone, list them",
            arguments: [
                ("NAME", "the namespace (letters, digits, -, _ and .); only the options given change"),
                ("ttl=D", "entries expire D after they are stored (default 5m)"),
                ("stale=D", "entries turn stale D after they are stored; none: never stale by age"),
                ("max=N", "at most N entries, least recently used evicted first; none: no limit"),
                ("stale-if-error=D", "a failed fetch still serves a value expired less than D ago; none: 0"),
                ("timeout=D", "give up on a request after D (a failure); none: wait for the answer"),
                ("--purgeable", "a memory warning purges this namespace"),
                ("--no-purgeable", "a memory warning spares this namespace (unless no namespace is purgeable)"),
            ],
            example: "ns feed ttl=45m stale=5m max=100",
            options: ["ttl=", "stale=", "max=", "stale-if-error=", "timeout=", "--purgeable", "--no-purgeable"]),
        CommandInfo(
            name: "config", synopsis: "config",
            summary: "show the configuration in force",
            arguments: [], example: "config"),
        CommandInfo(
            name: "now", synopsis: "now",
            summary: "show the virtual time",
            arguments: [], example: "now"),
        CommandInfo(
            name: "advance", synopsis: "advance D",
            summary: "move the virtual clock, running what falls due",
            arguments: [("D", duration)],
            example: "advance 30s"),
        CommandInfo(
            name: "at", synopsis: "at D COMMAND",
            summary: "schedule a command D from now",
            arguments: [
                ("D", duration + "; 0ms runs at the next scheduling step"),
                ("COMMAND", "any command but advance, source, load, restore, record and quit"),
            ],
            example: "at 5m get feed:home"),
        CommandInfo(
            name: "put", synopsis: "put KEY VALUE [tags=a,b]",
            summary: "store a value as if just fetched",
            arguments: [
                ("KEY", key),
                ("VALUE", "JSON; a bare word that is not JSON is a string"),
                ("tags=a,b", "tags for invalidate tag:T, comma-separated"),
            ],
            example: "put feed:home [{\"id\":1,\"likes\":3}] tags=home",
            options: ["tags="]),
        CommandInfo(
            name: "get", synopsis: "get KEY [--force] [--nowait|--async]",
            summary: "read as the app does: serve, refresh or fetch",
            arguments: [
                ("KEY", key),
                ("--force", "always send a new request and wait for it"),
                ("--nowait", "start what the read would start and return at once with what the cache has"),
                ("--async", "read as an app awaits: at once if served, else waiting: true now and a read event line when it completes"),
            ],
            example: "get feed:home --nowait",
            options: ["--force", "--nowait", "--async"]),
        CommandInfo(
            name: "mget", synopsis: "mget KEY...",
            summary: "read many keys with one server request",
            arguments: [("KEY...", "the keys, answered in this order")],
            example: "mget feed:home profile:42"),
        CommandInfo(
            name: "peek", synopsis: "peek KEY",
            summary: "inspect an entry without touching anything",
            arguments: [("KEY", key)],
            example: "peek feed:home"),
        CommandInfo(
            name: "keys", synopsis: "keys [PATTERN]",
            summary: "entries, least recently used first, with state and age",
            arguments: [("PATTERN", "a glob over the printed key: * (also matches :), ?, [...]; at most 1024 bytes")],
            example: "keys feed:*"),
        CommandInfo(
            name: "expire", synopsis: "expire KEY [in=D]",
            summary: "expire an entry now, or set its time to expiry",
            arguments: [("KEY", key), ("in=D", "set the time to expiry to D from now instead")],
            example: "expire feed:home in=30s",
            options: ["in="]),
        CommandInfo(
            name: "invalidate", synopsis: "invalidate KEY|NS:*|tag:T",
            summary: "mark entries stale so the next read refreshes them",
            arguments: [
                ("KEY", "one entry"),
                ("NS:*", "every entry of namespace NS"),
                ("tag:T", "every entry tagged T"),
            ],
            example: "invalidate tag:home"),
        CommandInfo(
            name: "evict", synopsis: "evict KEY",
            summary: "remove one entry",
            arguments: [("KEY", key)],
            example: "evict feed:home"),
        CommandInfo(
            name: "clear", synopsis: "clear [NS]",
            summary: "remove all entries (logout), or one namespace's",
            arguments: [("NS", "only this namespace")],
            example: "clear feed"),
        CommandInfo(
            name: "memory-warning", synopsis: "memory-warning",
            summary: "purge the purgeable namespaces (all if none is)",
            arguments: [], example: "memory-warning"),
        CommandInfo(
            name: "mutate", synopsis: "mutate KEY|entity ID PATCH",
            summary: "optimistic mutation of an entry, or of an entity",
            arguments: [
                ("KEY", "the cached entry to change"),
                ("entity ID", "every cached entry embedding an object whose id field is ID"),
                ("PATCH", patch),
            ],
            example: "mutate feed:home {\"likes\":{\"$inc\":1}}",
            subcommands: ["entity"]),
        CommandInfo(
            name: "event", synopsis: "event patch|entity KEY|ID PATCH [--own]",
            summary: "realtime change of a key, or of an entity everywhere",
            arguments: [
                ("patch KEY", "change the value of KEY"),
                ("entity ID", "change every object, at any depth, whose id field is ID"),
                ("PATCH", patch),
                ("--own", "the echo of this client's own change: the cache skips it"),
            ],
            example: "event entity 1 {\"likes\":{\"$inc\":1}}",
            subcommands: ["patch", "entity"],
            options: ["--own"]),
        CommandInfo(
            name: "push", synopsis: "push TYPE [name=value...]",
            summary: "push notification, through the configured rules",
            arguments: [
                ("TYPE", "the push type a rule of the configuration names"),
                ("name=value", "fills {name} in the rule's targets"),
            ],
            example: "push friend-blocked user=42"),
        CommandInfo(
            name: "validate", synopsis: "validate [--items] [--async]",
            summary: "validation handshake; prints request and response",
            arguments: [("--items", "ask the server for the current values of the changed keys too"),
                        ("--async", "do not wait: the answer prints as a validated event line when it arrives")],
            example: "validate --items",
            options: ["--items", "--async"]),
        CommandInfo(
            name: "pending", synopsis: "pending",
            summary: "requests in flight, queued mutations, scheduled commands",
            arguments: [], example: "pending"),
        CommandInfo(
            name: "server", synopsis: "server SUBCOMMAND ...",
            summary: "change or show the simulated server",
            arguments: [
                ("set KEY VALUE", "set the server's value without telling the client"),
                ("patch KEY PATCH", "patch the server's value without telling the client"),
                ("delete KEY", "delete the server's value; a fetch then fails with not found"),
                ("show [KEY]", "the server's data, or one value with its modification time"),
                ("latency D [KEY]", "answer after D (default 100ms), or only KEY's requests"),
                ("fail N [KEY]", "the next N requests (for KEY) fail"),
                ("offline", "send no request; every cached value is served, flagged offline"),
                ("online", "send requests again, first the queued mutations"),
                ("log [clear]", "the requests received, with times and fates; clear forgets them"),
                ("next KEY [VALUE]", "queue the answer to KEY's next request, taken in order: VALUE or value=JSON (else the data), "
                 + "latency=D, --fail or error=TEXT, --not-found, --no-answer"),
                ("next --validate", "queue the answer to the next validation, with the same options"),
                ("strict on|off", "on: a request with nothing queued gets no answer and fails its command, naming it"),
            ],
            example: "server set feed:home [{\"id\":1,\"likes\":3}]",
            subcommands: ServerCommands.subcommands),
        CommandInfo(
            name: "stats", synopsis: "stats [NS|reset]",
            summary: "statistics per namespace and in total, or zero them",
            arguments: [("NS", "only this namespace"), ("reset", "zero every counter")],
            example: "stats feed",
            subcommands: ["reset"]),
        CommandInfo(
            name: "watch", synopsis: "watch [KEY|NS:*|*]",
            summary: "report every change to a key, a namespace or all",
            arguments: [("KEY", "one key"), ("NS:*", "every key of namespace NS"), ("*", "every key")],
            example: "watch feed:*"),
        CommandInfo(
            name: "unwatch", synopsis: "unwatch [KEY|NS:*|*]",
            summary: "stop watching one scope, or everything",
            arguments: [("KEY|NS:*|*", "a scope given to watch")],
            example: "unwatch feed:*"),
        CommandInfo(
            name: "snapshot", synopsis: "snapshot [FILE]",
            summary: "the whole session as JSON, shown or written to FILE",
            arguments: [("FILE", "write it here, pretty-printed, instead")],
            example: "snapshot"),
        CommandInfo(
            name: "restore", synopsis: "restore FILE|{SNAPSHOT}",
            summary: "replace the whole session with a snapshot",
            arguments: [("FILE", "a snapshot written by snapshot FILE"),
                        ("{SNAPSHOT}", "the snapshot document itself, which may span lines (reads no file)")],
            example: "restore snapshot.json"),
        CommandInfo(
            name: "source", synopsis: "source FILE",
            summary: "run a script in this session",
            arguments: [("FILE", "a .cachesh script, relative to the script that sources it")],
            example: "source setup.cachesh"),
        CommandInfo(
            name: "record", synopsis: "record FILE|stop",
            summary: "write this session as a transcript, until record stop",
            arguments: [("FILE", "the transcript to write, in plain text (colour stays on the screen)"), ("stop", "stop writing")],
            example: "record session.transcript",
            subcommands: ["stop"]),
        CommandInfo(
            name: "output", synopsis: "output [human|json]",
            summary: "human lines or one JSON object per command",
            arguments: [("human", "aligned tables and name: value lines"), ("json", "one JSON object per command")],
            example: "output json",
            subcommands: ["human", "json"]),
        CommandInfo(
            name: "echo", synopsis: "echo TEXT",
            summary: "print TEXT",
            arguments: [("TEXT", "the rest of the line")],
            example: "echo checkpoint 1"),
        CommandInfo(
            name: "help", synopsis: "help [COMMAND]",
            summary: "list the commands, or explain one",
            arguments: [("COMMAND", "a command name")],
            example: "help get"),
        CommandInfo(
            name: "quit", synopsis: "quit",
            summary: "leave the shell",
            arguments: [], example: "quit"),
    ]
}
