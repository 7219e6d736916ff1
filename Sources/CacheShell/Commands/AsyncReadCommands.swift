import CacheCore

/// `get KEY --async`: the app's awaited read without blocking the command, so reads an app awaited
/// at the same time can overlap; a read that waits prints its result as a `read` event line when
/// its request completes (SPEC §2, §4).
extension EntryCommands {
    static func asyncGet(_ key: String, _ args: Arguments, on cache: isolated Cache) throws(ShellError) -> Reply {
        if args.flag("nowait") { throw ShellError("get: --async and --nowait do not go together", at: args.command.offset) }
        let started: (result: ReadResult, waiting: Bool)
        do { started = try cache.startRead(key, force: args.flag("force")) } catch {
            throw ShellError(error.message, at: args.command.offset)
        }
        return started.waiting ? waiting(started.result.key) : .read(started.result, isGet: true)
    }

    /// What `get --async` prints when the read waits for its request: the key and `waiting: true`.
    static func waiting(_ key: String) -> Reply {
        Reply(["key": .string(key), "waiting": .bool(true)], order: ["key", "waiting"])
    }

    /// The `read` event line of a read that finished at `at`: in JSON, the fields of `get` with
    /// `event`, `at` and `at_ms`; in human output `read at TIME:` and the lines `get` prints,
    /// indented. Each line ends in a line feed.
    static func readEventText(_ result: ReadResult, at: Int64, clockStart: Int64, mode: OutputMode, colour: Bool) -> String {
        let time = TimeText.iso8601(ms: at)
        if mode == .json {
            var fields = fields(result, isGet: true)
            fields["event"] = .string("read")
            fields["at"] = .string(time)
            fields["at_ms"] = .int(at - clockStart)
            return JSONValue.object(fields).compactText + "\n"
        }
        var text = "read at \(time):\n"
        for line in Reply.read(result, isGet: true).text(command: "get", mode: .human, colour: colour).split(separator: "\n") {
            text += "  " + line + "\n"
        }
        return text
    }
}

extension SnapshotCommands {
    /// `restore {SNAPSHOT}`: the snapshot document given in the command itself, so one transcript
    /// holds a whole recorded session (and replays under `--safe`, as it reads no file).
    static func restoreInline(_ session: Session, _ cache: isolated Cache, _ word: Word) throws(ShellError) -> Reply {
        do { try session.restore(snapshotText: word.text, on: cache) } catch {
            throw ShellError("restore: \(error)", at: word.offset)
        }
        return restoredInline(entries: cache.count, now: cache.now)
    }

    /// What `restore {SNAPSHOT}` prints.
    static func restoredInline(entries count: Int, now: Int64) -> Reply {
        .ok(["entries": .int(Int64(count)), "now": .string(TimeText.iso8601(ms: now))],
            human: ["restored (\(count) \(count == 1 ? "entry" : "entries"), now \(TimeText.iso8601(ms: now)))"])
    }
}
