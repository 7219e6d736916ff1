import CacheCore

/// The shell's commands over an attachment to a running app (SPEC §9): CacheInspector runs each
/// command line the attached shell sends here, in the app's process, on the app's cache, with
/// the shell's own parsing and output, so an attached `keys` prints what a session's `keys`
/// prints. Only the commands that make sense on a live cache run: those that read, and those that
/// change entries as the app's own calls do; a command of the virtual clock or the simulated
/// server is refused with one line that says why.
public enum InspectedCommand {
    /// Commands that only read.
    public static let readCommands: [String] = ["keys", "peek", "explain", "stats", "pending", "config", "snapshot", "now", "timeline"]
    /// Commands that change the app's cache (refused under `--read-only`).
    public static let writeCommands: [String] = ["invalidate", "evict", "clear", "event", "push", "memory-warning", "expire"]
    /// Commands the inspector itself answers (observers streamed to the attached shell).
    public static let watchCommands: [String] = ["watch", "unwatch"]
    /// Commands the inspector answers by streaming the app's recording to the shell (`record`,
    /// `record stop`; the shell writes the transcript).
    public static let recordCommands: [String] = ["record"]

    /// The command's name: its first word.
    public static func name(of line: String) -> String {
        String(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }

    /// Why `line` may not run over an attachment (the one line an attached shell prints), or nil.
    public static func refusal(_ line: String, readOnly: Bool) -> String? {
        if line.contains(where: { $0 == "\n" || $0 == "\r" }) {
            return "attach: one command per request (this one holds a line break)"
        }
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let name = words.first else { return "attach: an empty command" }
        switch name {
        case "advance", "at":
            return "\(name): the app's clock is real time; an attachment cannot move it (\(name) works on the virtual clock of a session of your own)"
        case "server":
            return "server: the app fetches from its own origin; an attachment has no simulated server to shape"
        case "snapshot" where words.count > 1:
            return "snapshot: over an attachment the snapshot is printed here (redirect it to a file); the app writes no file"
        case "stats" where words.count > 1 && words[1] == "reset":
            return readOnly ? "stats: refused: attached with --read-only" : nil
        default:
            break
        }
        if writeCommands.contains(name) {
            return readOnly ? "\(name): refused: attached with --read-only" : nil
        }
        if readCommands.contains(name) || watchCommands.contains(name) || recordCommands.contains(name) { return nil }
        return "\(VisibleText.of(name)): not available over an attachment; the commands are "
            + (readCommands + watchCommands + recordCommands + writeCommands).joined(separator: ", ")
    }

    /// Runs one command line (one that `refusal` lets through, not `watch` nor `record`) on an
    /// app's cache, isolated, in a session of its own that leaves the cache's origin and delegate
    /// alone; `timeline` and `explain` look back over `timeline` (the changes since the shell
    /// attached).
    /// - Returns: whether it succeeded, what it printed and the errors it printed.
    public static func run(_ line: String, on cache: isolated Cache, json: Bool,
                           timeline: AttachedTimeline = AttachedTimeline()) -> (ok: Bool, output: String, errors: String) {
        // `--safe`: no command of an attachment reads or writes a file in the app's process.
        let session = Session(inspecting: cache, options: SessionOptions(safe: true, mode: json ? .json : .human))
        session.keepsWholeHistory = false
        session.timeline = timeline.timeline
        let ok = session.run(SourceFile(name: nil, text: line), on: cache)
        var output = "", errors = ""
        for piece in session.takeOutput() {
            if piece.isError { errors += piece.text } else { output += piece.text }
        }
        return (ok, output, errors)
    }

    /// The line an observer prints for `event` (human or JSON), as `watch` prints it in a session.
    public static func eventLine(_ event: CacheEvent, clockStart: Int64, json: Bool) -> String {
        ItemText.eventLine(event, clockStart: clockStart, mode: json ? .json : .human, colour: false)
    }

    /// The scope a `watch` or `unwatch` word names: `*`, `NS:*` or a key (`NS:ID`).
    public static func scope(_ word: String) -> Result<WatchScope, InspectedCommandError> {
        if word == "*" { return .success(.all) }
        if word.hasSuffix(":*") {
            let namespace = String(word.dropLast(2))
            guard !namespace.isEmpty, !namespace.contains("*") else { return .failure(.init("watch: \(VisibleText.of(word)) is no scope (write *, NS:* or a key NS:ID)")) }
            return .success(.namespace(namespace))
        }
        guard word.contains(":"), !word.contains("*") else {
            return .failure(.init("watch: \(VisibleText.of(word)) is no scope (write *, NS:* or a key NS:ID)"))
        }
        return .success(.key(KeyName.canonical(word)))
    }

    /// A scope as a command writes it.
    public static func text(of scope: WatchScope) -> String {
        switch scope {
        case .all: "*"
        case .namespace(let name): name + ":*"
        case .key(let key): key
        }
    }

    /// What Tab completes from, copied from the app's cache inside its isolation (O(n) in its
    /// keys, only when the word is not the command's name); the completion itself, which sorts
    /// them, runs outside it (``completion(of:readOnly:from:)``), so the app's calls do not wait
    /// for it. Nil when Tab offers nothing for `text` (a comment, after `help`).
    public static func completionSource(for text: String, on cache: isolated Cache) -> CompletionSnapshot.Source? {
        guard let line = TypedLine(text) else { return nil }
        if line.words.first == "help" || line.words.first == "?" { return nil }
        return CompletionSnapshot.Source(
            keys: line.words.isEmpty ? [] : cache.keySummaries(),
            namespaces: cache.namespacePolicies().map(\.name),
            tags: cache.tagsInUse(),
            pushTypes: cache.pushRules.map { ($0.key, $0.value.parameters) })
    }

    /// What Tab offers an attached shell for the word before its cursor (`text`, the command typed
    /// so far): the shell's own completion (``Completer``) over what was copied from the app's
    /// cache (`source`: its keys, namespaces, tags and push types). A command's name is offered
    /// only when it runs over an attachment (so, with `readOnly`, no command that writes), or
    /// when the attached shell answers it itself (`help`, `quit`); no file name is offered (the
    /// app's files are not the shell's). Nil when nothing applies.
    /// - Complexity: O(n log n) in the keys copied, plus the candidates returned.
    public static func completion(of text: String, readOnly: Bool, from source: CompletionSnapshot.Source) -> CompletionResult? {
        let snapshot = CompletionSnapshot(keys: source.keys, namespaces: source.namespaces, tags: source.tags,
                                          pushTypes: source.pushTypes)
        guard let result = Completer.complete(text, in: snapshot) else { return nil }
        guard TypedLine(text)?.words.isEmpty == true else { return result }
        let runs = result.candidates.filter { ["help", "quit"].contains($0) || refusal($0, readOnly: readOnly) == nil }
        guard let first = runs.first else { return nil }
        let prefix = runs.dropFirst().reduce(first) { Bytes.commonPrefix($0, $1) }
        return CompletionResult(replaced: result.replaced, candidates: runs, total: runs.count, commonPrefix: prefix)
    }

    /// Whether `event` is in `scope`.
    public static func matches(_ scope: WatchScope, _ event: CacheEvent) -> Bool {
        switch scope {
        case .all: true
        case .key(let key): key == event.key
        case .namespace(let name): KeyName.namespace(of: event.key) == name
        }
    }
}

/// A refusal of `watch` or `unwatch`: the one line the attached shell prints.
public struct InspectedCommandError: Error, Sendable {
    public let message: String
    init(_ message: String) { self.message = message }
}
