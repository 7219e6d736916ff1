/// Commands declared together: one subsection of the man page's COMMANDS, in its order, and
/// (mostly) one file of `Commands/`.
public struct CommandFamily: Sendable {
    /// The man page's subsection title (`Reading and writing`).
    public let title: String
    /// Its commands, in the order `help` and the man page list them.
    public let commands: [CommandSpec]
}

/// Every command of the shell, in the order of SPEC §3 and the man page: the source of `help`, the
/// handler table, tab completion, argument hints and the man page's command list.
public enum CommandCatalog {
    /// The families, in the order of the man page's COMMANDS subsections.
    public static let families: [CommandFamily] = [
        ConfigCommands.family,
        ClockCommands.family,
        EntryCommands.family,
        RealtimeCommands.family,
        LifecycleCommands.family,
        ServerCommands.family,
        ObserveCommands.family,
        SessionCommands.family,
    ]

    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = families.flatMap(\.commands)

    /// The command named `name`, or nil.
    /// - Complexity: O(1).
    public static func info(_ name: String) -> CommandSpec? {
        byName[name].map { all[$0] }
    }

    private static let byName: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })

    /// What the value of each option name is. An option name means one thing in every command
    /// (`tags=` is always a list of tags), so a value completes the same wherever it is typed.
    static let optionKinds: [String: CommandSpec.Option.Kind] = {
        var kinds: [String: CommandSpec.Option.Kind] = [:]
        for spec in all + all.flatMap(\.subcommands) {
            for option in spec.options where option.kind != .pushParameters { kinds[option.name] = option.kind }
        }
        return kinds
    }()
}
