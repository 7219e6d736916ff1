import CacheCore

/// What one top-level command produced, as values: its own reply, and before it every item it
/// printed on the way (observer events, finished reads, the commands a `source` or an `at` ran,
/// their diagnostics), each with the output mode it was made in. Nothing here is text yet:
/// the renderers make the terminal's copy (colour, straight into a batch's buffer), the history's
/// (plain, errors in their typed form), a recording's and `--echo`'s from the same values.
///
/// One outcome is kept by the session and reused (its storage kept) from command to command.
struct Outcome {
    /// Something a command printed before its reply.
    enum Item {
        /// The reply of a command a `source` ran (`name` is its `command` field).
        case reply(Reply, name: String, mode: OutputMode)
        /// A command `at` scheduled ran, at `time`, from `text`.
        case scheduled(Reply, name: String, text: String, time: String, mode: OutputMode)
        /// A change an observer (`watch`) reported.
        case event(CacheEvent, clockStart: Int64, mode: OutputMode)
        /// A validation answer nobody waited for arrived, at `at`.
        case validated(ValidationResult, at: Int64, mode: OutputMode)
        /// A read of `get --async` finished, at `at`.
        case finishedRead(ReadResult, at: Int64, clockStart: Int64, mode: OutputMode)
        /// A failed command (SPEC §7).
        case diagnostic(Report)
        /// A line made elsewhere (a trace's own error, an executable's message), already in the
        /// output's form; `isError` sends it to standard error.
        case line(String, isError: Bool)
        /// An item a client's cache made, while the session has several clients (SPEC §3
        /// Clients): each line carries the client's name.
        indirect case client(String, Item)
    }

    /// A failed command as its diagnostic line names it.
    struct Report {
        /// One printable line (``DiagnosticsFormatter/message(_:)``).
        var message: String
        /// The source's name and the line (nil for typed input).
        var file: String?
        var line: Int
        /// The command's column, for a source whose errors name one (`-c`).
        var column: Int?
        /// The command's name, the `command` field of the JSON form (nil for one that did not lex).
        var command: String?
        /// The form of a command with subcommands it named (`next` of `server next`), else nil.
        var subcommand: String?
        /// The history keeps the form a typed command prints (`error: ...`, JSON with `file` and
        /// `line` null): the command was typed, or came from a top-level script, not a sourced file.
        var retyped: Bool
        var mode: OutputMode
        /// The message a replay of the command typed alone prints, when it differs: a `-c` command
        /// that did not lex (`;` ends nothing on a line of its own). The history's copy uses it.
        var typedMessage: String?
    }

    /// The items before the reply, in order.
    var items: [Item] = []
    /// The command's own reply (`.nothing` when it printed none), its name and mode.
    var reply = Reply.nothing
    var name = ""
    var replyMode = OutputMode.human
    /// What the history and a recording note in place of the command and its output: `load FILE`
    /// is noted as `load {CONFIG}`, so a recording needs no other file.
    var rewrite: (command: String, output: String)?
    /// The output mode when the command began: the history's first entry tells a recording
    /// `--from-start` which mode the session began in.
    var startMode = OutputMode.human
    /// A top-level command is running: items belong to it (else they are shown at once).
    var open = false

    /// Whether the command has a reply (a failed one has none).
    var hasReply: Bool { !name.isEmpty }
    /// Whether the reply alone is what the command printed, nothing before it nor in its place.
    var isLoneReply: Bool { !name.isEmpty && items.isEmpty && rewrite == nil }

    /// Whether the command has added nothing yet: no item, no reply, no rewrite.
    var isUntouched: Bool { items.isEmpty && name.isEmpty && rewrite == nil }

    /// Starts a top-level command's outcome.
    mutating func begin(mode: OutputMode) {
        open = true
        startMode = mode
    }

    /// Makes the reply an item like the others, so that what is added next follows it.
    mutating func demoteReply() {
        guard hasReply else { return }
        items.append(.reply(reply, name: name, mode: replyMode))
        reply = .nothing
        name = ""
    }

    /// Makes the reply just given (the command's own, or the last item, a reply a `source` or an
    /// `at` ran) say `ok: false`: the command printed it, then failed (a strict-mode divergence).
    mutating func markLastReplyFailed() {
        if hasReply {
            reply.ok = false
            return
        }
        switch items.last {
        case .reply(var reply, let name, let mode)?:
            reply.ok = false
            items[items.count - 1] = .reply(reply, name: name, mode: mode)
        case .scheduled(var reply, let name, let text, let time, let mode)?:
            reply.ok = false
            items[items.count - 1] = .scheduled(reply, name: name, text: text, time: time, mode: mode)
        default:
            break
        }
    }

    /// Forgets everything but the items' storage, for the next command. The reply is let go now:
    /// kept until the next one, it would share the engine's buffer of changed keys (a put's reply
    /// holds them), and the next put that evicts would copy that buffer instead of reusing it.
    @inline(__always)
    mutating func reset() {
        open = false
        if !items.isEmpty { items.removeAll(keepingCapacity: true) }
        reply = .nothing
        name = ""
        if rewrite != nil { rewrite = nil }
    }

    /// What is wrong with the outcome; empty when nothing is.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if !open && (!items.isEmpty || rewrite != nil) { problems.append("an outcome holds items while no command runs") }
        if !open && !name.isEmpty { problems.append("an outcome holds a reply while no command runs") }
        return problems
    }
}

extension Outcome.Item {
    /// The item's text, each line ending in a line feed, with `colour` for a terminal; not yet
    /// escaped for one (``Render/safeForTerminal(_:colour:)``). The history's copy is the same
    /// made without colour, but for a diagnostic's typed form (`typed`); `width` is the columns a
    /// reply's table fits (a terminal's own, on one).
    /// `replayed`: a reply with two views prints what a replay of the history prints
    /// (``Reply/views(shown:replayed:)``), as the history's copy does.
    func text(colour: Bool, typed: Bool = false, replayed: Bool = false, width: Int = Render.width) -> String {
        switch self {
        case .reply(let reply, let name, let mode):
            return (replayed ? reply.replayed : reply).text(command: name, mode: mode, colour: colour, width: width)
        case .scheduled(let reply, let name, let text, let time, let mode):
            return ItemText.scheduled(replayed ? reply.replayed : reply, name: name, text: text, time: time, mode: mode,
                                      colour: colour, width: width)
        case .event(let event, let clockStart, let mode):
            return ItemText.eventLine(event, clockStart: clockStart, mode: mode, colour: colour) + "\n"
        case .validated(let result, let at, let mode):
            return ItemText.validatedLines(result, at: at, mode: mode).map { $0 + "\n" }.joined()
        case .finishedRead(let result, let at, let clockStart, let mode):
            return EntryCommands.readEventText(result, at: at, clockStart: clockStart, mode: mode, colour: colour)
        case .diagnostic(let report):
            return DiagnosticsFormatter.text(report, typed: typed && report.retyped)
        case .line(let text, _):
            return text + "\n"
        case .client(let name, let item):
            return Self.naming(name, item.text(colour: colour, typed: typed, replayed: replayed, width: width), json: item.isJSON)
        }
    }

    /// Whether the item holds a reply with two views (``Reply/views(shown:replayed:)``).
    var hasViews: Bool {
        switch self {
        case .reply(let reply, _, _), .scheduled(let reply, _, _, _, _): return reply.hasViews
        case .client(_, let item): return item.hasViews
        default: return false
        }
    }

    /// `text`'s lines as client `name` says them: a JSON line gains a `client` field, a human
    /// line starts with `[NAME] `.
    static func naming(_ name: String, _ text: String, json: Bool) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if json, let value = try? JSONValue(parsing: String(line)), case .object(var fields) = value {
                fields["client"] = .string(name)
                out += JSONValue.object(fields).compactText + "\n"
            } else {
                out += "[\(name)] " + line + "\n"
            }
        }
        return out
    }

    /// Whether the item is in JSON output.
    var isJSON: Bool {
        switch self {
        case .reply(_, _, let mode), .scheduled(_, _, _, _, let mode), .event(_, _, let mode),
             .validated(_, _, let mode), .finishedRead(_, _, _, let mode):
            return mode == .json
        case .diagnostic(let report): return report.mode == .json
        case .line: return false
        case .client(_, let item): return item.isJSON
        }
    }

    /// Whether a terminal writes the item to standard error: an error in human output.
    var isError: Bool {
        switch self {
        case .diagnostic(let report): return report.mode == .human
        case .line(_, let isError): return isError
        case .client(_, let item): return item.isError
        default: return false
        }
    }
}
