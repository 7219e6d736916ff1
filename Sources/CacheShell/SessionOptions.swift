// How a session shows its output, and what it may touch.

/// How command output is shown.
public enum OutputMode: String, Sendable {
    case human, json
}

/// Where a session may touch files.
public struct SessionOptions: Sendable {
    /// No command may read or write files (`--safe`).
    public var safe = false
    /// Colour states in human output (a terminal, no `NO_COLOR`).
    public var colour = false
    public var mode = OutputMode.human
    /// Stop a script at its first failing command (`--bail`).
    public var bail = false
    /// Print each top-level command after the prompt before its output, errors in the interactive
    /// form, all on standard output: the output is a transcript (`--echo`).
    public var echo = false
    /// Polled by long work (`replay`): true stops it (the interactive shell's Ctrl-C).
    public var interrupted: (@Sendable () -> Bool)?
    /// Where long work (`replay`) shows a line of progress after a second (nil erases it); set
    /// only when standard error is a terminal (SPEC §6). Nil: no progress is shown.
    public var progress: (@Sendable (String?) -> Void)?
    /// The scheduled work the whole input may make (a stranger's: `--safe`, `--verify`); nil: no
    /// bound but the runaway limit of each command.
    public var scheduledBudget: ScheduledBudget?
    /// The session runs commands on an app's cache for an inspector (Session+Inspecting.swift).
    var inspecting = false
    public init(safe: Bool = false, colour: Bool = false, mode: OutputMode = .human, bail: Bool = false) {
        self.safe = safe; self.colour = colour; self.mode = mode; self.bail = bail
    }
}
