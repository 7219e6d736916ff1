import CacheCore

/// `snapshot [FILE]`, `restore FILE`: the whole session as a JSON document (SPEC §5.2).
enum SnapshotCommands {
    static let snapshot = CommandSpec(
        name: "snapshot", summary: "the whole session as JSON, shown or written to FILE",
        arguments: [.file(meaning: "write it here, pretty-printed, instead: a regular file (or the one a symbolic link leads to), replaced whole, its mode kept").optional],
        example: "snapshot", run: snapshot)

    static func snapshot(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: snapshot)
        try args.expect(0...1)
        guard let word = args.positional.first else {
            // While the history is noted (`--echo`, a recording, the interactive shell), each
            // command `at` scheduled is named as a replay of the history has it: one the
            // transcript types names no file and is on line 1 (SPEC §6).
            let document = session.makeSnapshot(asReplayed: session.notesHistory, on: cache)
            return Reply(["snapshot": document], human: [Session.documentText(document, newline: false)])
        }
        let path = session.resolvePath(word.text, relativeTo: source)
        try session.touchFile("write", path, at: word.offset)
        if let problem = session.storeFileProblem(path) { throw ShellError("cannot write \(path): \(problem)", at: word.offset) }
        do { try FileIO.writeAtomically(path, session.snapshotFileText(on: cache)) } catch {
            throw ShellError("cannot write \(path): \(error)", at: word.offset)
        }
        let count = cache.count
        return .ok(["file": .string(word.text), "entries": .int(Int64(count))],
                   human: ["wrote \(word.text) (\(count) \(count == 1 ? "entry" : "entries"))"])
    }

    static let restore = CommandSpec(
        name: "restore", summary: "replace the whole session with a snapshot",
        arguments: [.oneOf(.file(meaning: "a snapshot written by snapshot FILE (a regular file of at most 1 GiB)"),
                           .placeholder("{SNAPSHOT}", meaning: "the snapshot document itself, which may span lines (reads no file)"))],
        example: "restore snapshot.json", run: restore,
        writes: CallForm(.restore) { call, _, w throws(Diagnostic) in
            guard case .restore(let document) = call else { throw w.notItsKind(call) }
            let restored: Snapshot
            do { restored = try Snapshot(document) } catch { throw w.fail("the snapshot restored: \(error)") }
            if !restored.scheduledCommands.isEmpty {
                throw w.fail("restore of a state holding work scheduled by schedule(after:token:) (the app's own tokens),"
                             + " which a transcript cannot replay")
            }
            var entries = 0
            if case .object(let top) = document, case .array(let list)? = top["entries"] { entries = list.count }
            return ("restore " + w.restoring(document).compactText, restoredInline(entries: entries, now: restored.now))
        })

    static func restore(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: restore)
        try args.expect(1...1)
        let word = args.positional[0]
        if session.clients.several {
            // A snapshot is one cache, and its clock; the clients share theirs (SPEC §3 Clients).
            throw ShellError("restore: a snapshot holds one client's cache and its clock, which the "
                             + "\(session.clients.all.count) clients share; restore in a session of one client", at: word.offset)
        }
        if word.kind == .json { return try restoreInline(session, cache, word) }
        let path = session.resolvePath(word.text, relativeTo: source)
        let text = try session.readFile(path, at: word.offset, limit: FileIO.snapshotReadLimit)
        do { try session.restore(snapshotText: text, on: cache) } catch {
            throw ShellError("\(word.text): \(error)", at: word.offset)
        }
        if session.frames.runsTopLevel && session.notesHistory {
            // The history (and so a recording, `--echo`) holds the snapshot itself, on one line,
            // not the file's name: a recording names no other file (SPEC §6).
            let inline = (try? JSONValue.canonicalCompactText(parsing: text, maxDepth: JSONValue.documentDepth)) ?? text
            var line = inline
            while line.hasSuffix("\n") { line.removeLast() }
            session.outcome.rewrite = ("restore " + line,
                                       restoredInline(entries: cache.count, now: cache.now)
                                           .text(command: "restore", mode: session.options.mode, colour: false))
        }
        return restored(word.text, entries: cache.count, now: cache.now)
    }

    /// The reply of `restore FILE`: what a replay prints for it (a recording writes it too).
    static func restored(_ file: String, entries count: Int, now: Int64) -> Reply {
        .ok(["file": .string(file), "entries": .int(Int64(count)), "now": .string(TimeText.iso8601(ms: now))],
            human: ["restored \(file) (\(count) \(count == 1 ? "entry" : "entries"), now \(TimeText.iso8601(ms: now)))"])
    }
}

extension Session {
    /// The whole session as a snapshot document: the engine's state, the server's, and the text
    /// and origin of each command scheduled by `at`.
    /// - Complexity: O(n) in the size of the state.
    /// - Parameter asReplayed: each scheduled command's file and line as a replay of the history
    ///   gives them (``ScheduledCommands/fields(_:asReplayed:)``): what a recording begins from.
    public func makeSnapshot(asReplayed: Bool = false, on cache: isolated Cache) -> JSONValue {
        cache.makeSnapshot(scheduledCommand: { [schedule] in schedule.fields($0, asReplayed: asReplayed) })
    }

    /// What `snapshot FILE` writes: the pretty document ending in a newline, written straight from
    /// the state (the same bytes as `documentText(makeSnapshot(on:), newline: true)`).
    /// - Complexity: O(n) in the size of the state.
    func snapshotFileText(on cache: isolated Cache) -> String {
        cache.snapshotText(pretty: true, scheduledCommand: { [schedule] in schedule.fields($0) }) + "\n"
    }

    /// Replaces the whole session state with a snapshot document's: entries, clock, statistics,
    /// server, pending work (the session's own scheduled commands are dropped, the snapshot's
    /// rescheduled). The session then begins from it: `baseSnapshot` is its text, `history` empty.
    /// - Throws: `SnapshotError` for a damaged, foreign or bad document; then nothing changed.
    public func restore(snapshotText text: String, on cache: isolated Cache) throws(SnapshotError) {
        let snapshot = try Snapshot(parsing: text)
        try restore(snapshot, on: cache)
    }

    /// Applies a decoded snapshot, after checking the fields the shell wrote for scheduled commands.
    /// A session that keeps its whole history keeps the decoded snapshot as the state it began
    /// from, its document made only if `record` asks for it; a batch keeps none (its `record`
    /// starts from the state at that point). Neither builds a document of the state here: for a
    /// large snapshot that tree cost more memory than the cache it restored.
    public func restore(_ snapshot: Snapshot, on cache: isolated Cache) throws(SnapshotError) {
        try restore(snapshot, base: keepsWholeHistory ? .decoded : .none, on: cache)
    }

    /// What a restored session keeps as the state it began from, for `record` (`baseSnapshot`).
    enum RestoredBase {
        /// The decoded snapshot, its document made only if a recording asks for it (a `restore`, or
        /// a store opened, by a session that keeps its whole history: the interactive shell).
        case decoded
        /// Nothing (a batch: its `record` starts from the state at that point).
        case none
    }

    /// A snapshot's text decoded and checked as `restore` checks it (its scheduled commands
    /// too), without restoring it: for `diff`, which must not show what `restore` refuses.
    func checkedSnapshot(_ text: String) throws(SnapshotError) -> Snapshot {
        let snapshot = try Snapshot(parsing: text)
        for command in snapshot.scheduledCommands { _ = try Self.scheduledEntry(command) }
        try snapshot.checkOrigin(server)
        return snapshot
    }

    /// `restore(_:on:)`, keeping `base` as the state the session began from. A scheduled command
    /// that reads or writes a file is refused unless `allowingFileCommands` (the session's own
    /// store, reopened).
    func restore(_ snapshot: Snapshot, base: RestoredBase, allowingFileCommands: Bool = false,
                 on cache: isolated Cache) throws(SnapshotError) {
        var entries: [UInt64: ScheduledEntry] = [:]
        for command in snapshot.scheduledCommands {
            entries[command.id] = try Self.scheduledEntry(command, allowingFileCommands: allowingFileCommands)
        }
        try cache.checkOrigin(of: snapshot)
        schedule.removeAll()
        try cache.restore(snapshot) { command in
            // (Every command of the snapshot was checked above: each has its entry.)
            schedule.add(entries[command.id]!)
        }
        switch base {
        case .decoded: self.base = BaseState(decoded: snapshot)
        case .none: self.base = BaseState()
        }
        history.entries.removeAll()
    }

    /// A scheduled command as the snapshot holds it: its text, and the file and line it came from
    /// (so its errors still point there).
    static func scheduledEntry(_ command: Snapshot.ScheduledCommand, allowingFileCommands: Bool = false) throws(SnapshotError) -> ScheduledEntry {
        let f = command.fields
        for name in f.keys.sorted() where !["command", "file", "line"].contains(name) {
            throw SnapshotError(path: "\(command.path).\(name)", "unknown field")
        }
        guard case .string(let text)? = f["command"], !text.isEmpty else {
            throw SnapshotError(path: "\(command.path).command", "expected the command's text")
        }
        let file: String?
        switch f["file"] {
        case .string(let name)?: file = name
        case .null?: file = nil
        default: throw SnapshotError(path: "\(command.path).file", "expected a file name or null")
        }
        guard case .int(let line)? = f["line"], line >= 1, line <= 10_000_000 else {
            throw SnapshotError(path: "\(command.path).line", "expected a line number")
        }
        // A restored schedule runs on the next advance, in whatever mode the session is in (also
        // after `--transcribe` then `--verify`): one that would read or write a file is refused
        // here, so a stranger's snapshot cannot write or read a file by the clock's hand.
        if !allowingFileCommands, let path = fileNamed(byScheduled: text) {
            throw SnapshotError(path: "\(command.path).command",
                                "schedules a command that reads or writes a file (\(path)): a restored snapshot may not")
        }
        // The text starts on its original line so an error it reports names the same place; the
        // line is a number, not lines of padding (a snapshot of a few KB naming line 10,000,000
        // for each of many commands must not take gigabytes).
        return ScheduledEntry(text: text, source: SourceFile(name: file, text: text, firstLine: Int(line)), offset: 0)
    }

    /// Checks the commands a decoded snapshot schedules (`pending.scheduled`) as `restore` does,
    /// for a reader that does not restore it (`--transcribe`).
    /// - Throws: `SnapshotError` with the field's path for the first bad one.
    static func checkScheduledCommands(_ snapshot: Snapshot) throws(SnapshotError) {
        for command in snapshot.scheduledCommands { _ = try scheduledEntry(command) }
    }

    /// The first file a scheduled command's text names, when running it would read or write
    /// one (`snapshot FILE`, `replay FILE csv=...`, `source FILE`, an `at` that schedules such a
    /// command, ...); nil when it names none. A command takes a file when its declaration has a
    /// FILE argument: any word after its name is taken as naming one, except an inline JSON
    /// document (`restore {...}`, `load {...}`) and a literal word of its own (`record stop`).
    /// - Complexity: O(n) in the text's length.
    static func fileNamed(byScheduled text: String) -> String? {
        var lexer = Lexer(SourceFile(name: nil, text: text), semicolonSeparates: false)
        while let next = lexer.next() {
            // A command that cannot be lexed fails when it runs, and the lexer goes on after it.
            guard case .success(let command) = next else { continue }
            var words = command.words[...]
            // `at D COMMAND` runs COMMAND later: look through it, however deeply nested.
            while words.count >= 3, (Session.aliases[words.first!.text] ?? words.first!.text) == "at" {
                words = words.dropFirst(2)
            }
            guard let first = words.first, let spec = CommandCatalog.info(Session.aliases[first.text] ?? first.text) else { continue }
            let alternatives = spec.arguments.flatMap(\.alternatives)
            guard alternatives.contains(where: { $0.kind == .file }) else { continue }
            let literals = Set(alternatives.filter { $0.kind == .word }.map(\.text))
            for word in words.dropFirst() where word.kind != .json && !literals.contains(word.text) {
                return word.text
            }
        }
        return nil
    }

    /// A snapshot document as printed: pretty, sorted keys; ending in a newline for a file.
    static func documentText(_ document: JSONValue, newline: Bool) -> String {
        var text = document.prettyText()
        while text.hasSuffix("\n") { text.removeLast() }
        return newline ? text + "\n" : text
    }
}

// MARK: - diff

extension SnapshotCommands {
    static let diff = CommandSpec(
        name: "diff", summary: "what differs between two snapshots, or a snapshot and now, entry by entry",
        arguments: [.oneOf(.file(meaning: "a snapshot written by snapshot FILE (the old side), read and checked as restore reads it (what restore refuses, diff refuses with the same error)"),
                           .placeholder("{SNAPSHOT}", meaning: "the old side's snapshot document itself, which may span lines (reads no file; shown as {SNAPSHOT})")),
                    .oneOf(.file("FILE2", meaning: "the new side, another snapshot; without it, the session now"),
                           .placeholder("{SNAPSHOT2}", meaning: "the new side's snapshot document itself")).optional],
        example: "diff before.json", run: diff)

    /// The fields of an entry that `diff` compares, in the order it shows them.
    static let diffFields = ["state", "value", "tags", "stored_at", "stale_at", "expires_at"]

    /// Runs `diff FILE [FILE2]`: entries only on one side, and the fields that changed on the others.
    /// Reads files, so `--safe` refuses it.
    static func diff(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: diff)
        try args.expect(1...2)
        let old = try snapshotDocument(session, args.positional[0], source)
        let new: (document: JSONValue, inline: String?)
        if args.positional.count == 2 {
            new = try snapshotDocument(session, args.positional[1], source)
        } else {
            new = (session.makeSnapshot(on: cache), nil)
        }
        let names = args.positional.map { $0.kind == .json ? nil : $0.text } + (args.positional.count == 2 ? [] : ["now"])
        let difference = SnapshotDiff(old: old.document, new: new.document)
        if session.frames.runsTopLevel && session.notesHistory && args.positional.contains(where: { $0.kind != .json }) {
            // The history (and so a recording, `--echo`) holds each snapshot read from a file
            // itself, on one line, as `restore FILE` is kept: a recording names no other file
            // (SPEC §6), and replays under `--safe`.
            var line = "diff " + (old.inline ?? "")
            if args.positional.count == 2 { line += " " + (new.inline ?? "") }
            let inline = difference.reply(names: (nil, args.positional.count == 2 ? nil : "now"))
            session.outcome.rewrite = (line, inline.text(command: "diff", mode: session.options.mode, colour: false))
        }
        return difference.reply(names: (names[0], names[1]))
    }

    /// What differs between two snapshot documents, entry by entry, found once and printed with
    /// the names of its sides (a recording prints it again with the files' names left out).
    private struct SnapshotDiff {
        let before: [String: [String: JSONValue]], after: [String: [String: JSONValue]]
        var removed: [String] = [], added: [String] = [], changed: [(key: String, fields: [(String, JSONValue, JSONValue)])] = []
        let clocks: (old: JSONValue, new: JSONValue)

        init(old: JSONValue, new: JSONValue) {
            before = SnapshotCommands.entries(old)
            after = SnapshotCommands.entries(new)
            let clock = { (document: JSONValue) -> JSONValue in
                if case .object(let o) = document { return o["now"] ?? .null }
                return .null
            }
            clocks = (clock(old), clock(new))
            for key in Set(before.keys).union(after.keys).sorted() {
                switch (before[key], after[key]) {
                case (let a?, let b?):
                    let fields = diffFields.compactMap { name -> (String, JSONValue, JSONValue)? in
                        let x = a[name] ?? .null, y = b[name] ?? .null
                        return x == y ? nil : (name, x, y)
                    }
                    if !fields.isEmpty { changed.append((key, fields)) }
                case (_?, nil): removed.append(key)
                case (nil, _?): added.append(key)
                case (nil, nil): break
                }
            }
        }

        /// What `diff` prints; a side named nil is a snapshot given in the command (`{SNAPSHOT}`:
        /// JSON `null`).
        func reply(names: (old: String?, new: String?)) -> Reply {
            var human = ["--- \(names.old ?? "{SNAPSHOT}") (now \(Render.text(clocks.old, field: "now")))",
                         "+++ \(names.new ?? "{SNAPSHOT}") (now \(Render.text(clocks.new, field: "now")))"]
            for key in removed { human.append("- \(key)  " + summary(before[key]!)) }
            for key in added { human.append("+ \(key)  " + summary(after[key]!)) }
            for (key, fields) in changed {
                human.append("~ \(key)")
                for (name, x, y) in fields { human.append("    \(name): \(x.compactText) -> \(y.compactText)") }
            }
            let same = Set(before.keys).intersection(after.keys).count - changed.count
            human.append("\(removed.count) removed, \(added.count) added, \(changed.count) changed, \(same) the same")
            return Reply([
                "old": names.old.map(JSONValue.string) ?? .null, "new": names.new.map(JSONValue.string) ?? .null,
                "removed": .array(removed.map(JSONValue.string)), "added": .array(added.map(JSONValue.string)),
                "changed": .array(changed.map { change in
                    .object(["key": .string(change.key), "fields": .object(Dictionary(uniqueKeysWithValues: change.fields.map {
                        ($0.0, JSONValue.array([$0.1, $0.2]))
                    }))])
                }),
                "same": .int(Int64(same)),
            ], human: human)
        }
    }

    /// A snapshot's document, from a file or given in the command (`{SNAPSHOT}`), read as
    /// `restore` reads it (the same reader and checks, with the same errors): `diff` shows only a
    /// snapshot that `restore` would take.
    /// - Returns: the document, and when the history notes commands its text on one line (what
    ///   a recording writes in place of a file's name).
    private static func snapshotDocument(_ session: Session, _ word: Word, _ source: SourceFile) throws(ShellError) -> (document: JSONValue, inline: String?) {
        let text: String
        let document: JSONValue
        if word.kind == .json {
            text = word.text
            do { document = try session.checkedSnapshot(text).document() } catch {
                throw ShellError("diff: \(error)", at: word.offset)
            }
        } else {
            let path = session.resolvePath(word.text, relativeTo: source)
            text = try session.readFile(path, at: word.offset, limit: FileIO.snapshotReadLimit)
            do { document = try session.checkedSnapshot(text).document() } catch {
                throw ShellError("\(word.text): \(error)", at: word.offset)
            }
        }
        guard session.frames.runsTopLevel && session.notesHistory else { return (document, nil) }
        var line = (try? JSONValue.canonicalCompactText(parsing: text, maxDepth: JSONValue.documentDepth)) ?? text
        while line.hasSuffix("\n") { line.removeLast() }
        return (document, line)
    }

    /// A snapshot's entries by key.
    private static func entries(_ document: JSONValue) -> [String: [String: JSONValue]] {
        guard case .object(let fields) = document, case .array(let list)? = fields["entries"] else { return [:] }
        var byKey: [String: [String: JSONValue]] = [:]
        for case .object(let entry) in list {
            if case .string(let key)? = entry["key"] { byKey[key] = entry }
        }
        return byKey
    }

    /// An entry on one side only, in one line.
    private static func summary(_ entry: [String: JSONValue]) -> String {
        Render.text(entry["state"] ?? .null, field: "state") + "  " + (entry["value"] ?? .null).compactText
    }
}
