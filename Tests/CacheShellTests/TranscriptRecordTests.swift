import CacheCore
@testable import CacheShell
import Foundation
import Testing
import TestSupport

/// A fresh empty directory for one test.
private func temporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-record-\(UUID().uuidString)").path
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs `script` as the file `directory/s.cachesh` and returns what it printed.
@discardableResult
private func runScript(_ session: TestShell, _ script: String, in directory: String) async -> String {
    await session.scriptText(SourceFile(name: directory + "/s.cachesh", text: script))
}

private func contents(_ path: String) -> String? { try? FileIO.read(path) }

/// The first and last lines of every recording (`--verify` fails a recording without its last).
private let first = "cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n"
private let last = "cachesh> # end of recording\n"

/// `--verify` on the file: the report, empty when it passes.
private func verify(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async -> String {
    guard let text = contents(path) else {
        Issue.record("no file \(path)", sourceLocation: sourceLocation)
        return "missing"
    }
    return await TranscriptCheck.replay(name: path, text: text).report()
}

@Suite struct TranscriptRecordTests {
    @Test func recordWritesTheSessionFromItsStartUntilStop() async {
        let directory = temporaryDirectory()
        let session = await TestShell()
        let printed = await runScript(session, """
            put feed:1 {"id": 1,
              "likes": 2}
            oops
            record out.transcript --from-start
            echo cachesh> x
            record stop
            echo not recorded

            """, in: directory)
        #expect(printed == """
            keys: feed:1
            \(directory)/s.cachesh:3: error: unknown command "oops" (did you mean stop?)
            recording to out.transcript (2 commands so far)
            cachesh> x
            recorded 3 commands to out.transcript
            not recorded

            """.replacingOccurrences(of: " (did you mean stop?)", with: await errorHint("oops")))
        #expect(contents(directory + "/out.transcript") == first + """
            cachesh> put feed:1 {"id": 1,
            ...>   "likes": 2}
            keys: feed:1
            cachesh> oops
            error: unknown command "oops"\(await errorHint("oops"))
            cachesh> echo cachesh> x
            \\cachesh> x

            """ + last)
        #expect(await verify(directory + "/out.transcript") == "")
    }

    /// A typed session (the interactive shell keeps its whole history): `record FILE` starts from
    /// here, with the state on one line, and leaves out the typos and `help` before it;
    /// `--from-start` writes them all. Both replay under --safe.
    @Test func recordWritesFromHereOnStartingWithTheStateOnOneLine() async {
        let directory = temporaryDirectory()
        let session = await TestShell()
        await session.run { session, _ in session.baseDirectory = directory }
        for command in ["ns feed ttl=1m stale=30s", "put feed:a 1", "oops", "help all", "# a note before"] { _ = await session.typed(command) }
        #expect(await session.typed("record here.transcript") == "recording to here.transcript from here on\n")
        for command in ["# the bug: feed:a is stale after 40s", "advance 40s", "peek feed:a"] { _ = await session.typed(command) }
        #expect(await session.typed("record stop") == "recorded 3 commands to here.transcript\n")
        let text = contents(directory + "/here.transcript") ?? ""
        let lines = text.split(separator: "\n")
        #expect(lines[0] + "\n" == first && lines.last! + "\n" == last)
        #expect(lines[1].hasPrefix("cachesh> restore {\"clock_start\":") && lines[1].hasSuffix("}"))
        #expect(lines[1].contains("\"key\":\"feed:a\""))
        #expect(lines[2] == "restored (1 entry, now 2026-01-01T00:00:00.000Z)")
        #expect(lines[3] == "cachesh> # the bug: feed:a is stale after 40s")
        #expect(lines[4] == "cachesh> advance 40s")
        #expect(!text.contains("oops") && !text.contains("help") && !text.contains("a note before"))
        #expect(await TranscriptCheck.replay(name: "here.transcript", text: text, safe: true).report() == "")

        #expect(await session.typed("record all.transcript --from-start") == "recording to all.transcript (6 commands so far)\n")
        _ = await session.typed("record stop")
        let all = contents(directory + "/all.transcript") ?? ""
        #expect(all.hasPrefix(first + "cachesh> ns feed ttl=1m stale=30s\n") && all.hasSuffix(last))
        #expect(all.contains("cachesh> oops\nerror: unknown command") && all.contains("cachesh> help all\n")
                && all.contains("cachesh> # a note before\ncachesh> record") == false && all.contains("cachesh> # a note before\n"))
        #expect(await TranscriptCheck.replay(name: "all.transcript", text: all, safe: true).report() == "")
        #expect(await session.typed("record stop --from-start") == "error: record stop: --from-start goes with record FILE\n")
    }

    /// While a recording from here on runs, `timeline` and `explain` look back no further than its
    /// start, and the recording writes that; the history keeps what a replay of the whole session
    /// prints, which has the earlier changes, so a later `record --from-start` replays too.
    @Test func aRecordingFromTheStartHoldsTheTimelineAnEarlierRecordingSetAside() async {
        let directory = temporaryDirectory()
        let session = await TestShell()
        await session.run { session, _ in session.baseDirectory = directory }
        for command in ["put a:1 1", "invalidate a:1", "record here.transcript"] { _ = await session.typed(command) }
        #expect(await session.typed("timeline a:1") == "(no changes to a:1 this session)\n")
        #expect(await session.typed("explain a:1").contains("reason:        invalidated (by a key, namespace, tag, push or validation)\n"))
        _ = await session.typed("record stop")
        let here = contents(directory + "/here.transcript") ?? ""
        #expect(here.contains("cachesh> timeline a:1\n(no changes to a:1 this session)\n"), "\(here)")
        #expect(await TranscriptCheck.replay(name: "here.transcript", text: here, safe: true).report() == "")

        _ = await session.typed("record all.transcript --from-start")
        _ = await session.typed("record stop")
        let all = contents(directory + "/all.transcript") ?? ""
        #expect(all.contains("cachesh> timeline a:1\n* 2026-01-01T00:00:00.000Z stored a:1 fresh 1 (cache)\n"), "\(all)")
        #expect(all.contains("reason:        invalidated at 2026-01-01T00:00:00.000Z\n"), "\(all)")
        #expect(await TranscriptCheck.replay(name: "all.transcript", text: all, safe: true).report() == "")
    }

    @Test func aJsonSessionRecordsOutputJsonFirstAndErrorsAsTypedCommandsGiveThem() async {
        let directory = temporaryDirectory()
        let session = await TestShell(options: SessionOptions(mode: .json))
        await runScript(session, "oops\nrecord out.transcript --from-start\nput a [1,\n2]\nrecord stop\n", in: directory)
        #expect(contents(directory + "/out.transcript") == first + """
            cachesh> output json
            {"command":"output","mode":"json","ok":true}
            cachesh> oops
            {"column":null,"command":"oops","error":"unknown command \\"oops\\"\(await errorHint("oops"))","file":null,"line":null,"ok":false}
            cachesh> put a [1,
            ...> 2]
            {"command":"put","keys":["a"],"ok":true}

            """ + last)
        #expect(await verify(directory + "/out.transcript") == "")
    }

    @Test func aSessionThatBeganInJsonAndSwitchedToHumanStillReplays() async {
        let directory = temporaryDirectory()
        let session = await TestShell(options: SessionOptions(mode: .json))
        await runScript(session, "now\noutput human\nnow\nrecord out.transcript --from-start\nrecord stop\n", in: directory)
        let text = contents(directory + "/out.transcript") ?? ""
        #expect(text.hasPrefix(first + "cachesh> output json\n"))
        #expect(await verify(directory + "/out.transcript") == "")
        // Without a switch, a human session writes no `output` line.
        let human = await TestShell()
        await runScript(human, "now\nrecord h.transcript --from-start\nrecord stop\n", in: directory)
        #expect(contents(directory + "/h.transcript")?.hasPrefix(first + "cachesh> now\n") == true)
    }

    @Test func aSessionBegunWithConfigRecordsItsLoad() async throws {
        let directory = temporaryDirectory()
        try #"{"namespaces": {"feed": {"ttl": "1m"}}}"#.write(toFile: directory + "/conf.json", atomically: true, encoding: .utf8)
        let session = await TestShell()
        let loaded = await session.run { session, cache in
            session.baseDirectory = directory
            let relative = session.loadInitialConfiguration(path: "conf.json", on: cache)
            let absolute = session.loadInitialConfiguration(path: directory + "/conf.json", on: cache)
            _ = session.takeOutput()
            return [relative, absolute]
        }
        #expect(loaded == [false, true], "relative to the working directory, then absolute")
        await runScript(session, "put feed:a 1\nrecord out.transcript --from-start\nrecord stop\n", in: directory)
        let text = contents(directory + "/out.transcript") ?? ""
        // The configuration itself, not the file's name: the transcript alone replays.
        #expect(text == first + "cachesh> load {\n...>   \"namespaces\": {\n...>     \"feed\": {\n...>       \"ttl\": \"1m\"\n...>     }\n...>   }\n...> }\n"
                + "loaded configuration\ncachesh> put feed:a 1\nkeys: feed:a\n" + last)
        try? FileManager.default.removeItem(atPath: directory + "/conf.json")
        #expect(await verify(directory + "/out.transcript") == "")
    }

    @Test func aSessionBegunFromASnapshotRecordsItInline() async throws {
        let directory = temporaryDirectory()
        let session = await TestShell()
        let base = await TestShell().snapshotText() + "\n"
        await session.run { session, _ in session.baseSnapshot = base }
        await runScript(session, "echo hi\nrecord out.transcript --from-start\nrecord stop\n", in: directory)
        #expect(contents(directory + "/out.snapshot.json") == nil, "no file beside the transcript")
        let text = contents(directory + "/out.transcript") ?? ""
        // On one line: the snapshot as compact JSON.
        let compact = try JSONValue.canonicalCompactText(parsing: base)
        #expect(!compact.contains("\n"))
        let inline = TranscriptSyntax.render(command: "restore " + compact, output: "restored (0 entries, now 2026-01-01T00:00:00.000Z)\n")
        #expect(text.hasPrefix(first + inline))
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).suffix(4) == ["cachesh> echo hi", "hi", "cachesh> # end of recording", ""])
        #expect(await verify(directory + "/out.transcript") == "")
    }

    /// A typed session (as in the interactive shell) that loads a file, restores a snapshot file
    /// and goes on: its recording names neither file and replays alone under --safe.
    @Test func aTypedSessionWithLoadAndRestoreRecordsOneFileThatReplaysUnderSafe() async throws {
        let directory = temporaryDirectory()
        try #"{"namespaces": {"feed": {"ttl": "10m", "stale": "1m", "max": 2}}, "server": {"latency": "50ms", "data": {"feed:b": 2}}}"#
            .write(toFile: directory + "/conf.json", atomically: true, encoding: .utf8)
        let session = await TestShell()
        await session.run { session, _ in session.baseDirectory = directory }
        #expect(await session.typed("load conf.json") == "loaded conf.json\n")
        _ = await session.typed("put feed:a 1")
        _ = await session.typed("get feed:b")
        _ = await session.typed("advance 2m")
        #expect(await session.typed("snapshot state.json").hasPrefix("wrote state.json"))
        _ = await session.typed("clear")
        #expect(await session.typed("restore state.json").hasPrefix("restored state.json (2 entries"))
        _ = await session.typed("load conf.json")
        _ = await session.typed("get feed:a")
        #expect(await session.typed("record out.transcript --from-start").hasPrefix("recording to out.transcript"))
        _ = await session.typed("put feed:c 3")
        _ = await session.typed("record stop")
        let text = contents(directory + "/out.transcript") ?? ""
        #expect(text.hasPrefix(first + "cachesh> restore {\"clock_start\":"))
        #expect(text.split(separator: "\n")[2].hasPrefix("restored (2 entries"), "the state is one line")
        #expect(text.contains("cachesh> load {\n...>   \"namespaces\": {\n"))
        #expect(!text.contains("conf.json") && !text.contains("state.json"), "the transcript names no other file")
        for file in ["conf.json", "state.json"] { try FileManager.default.removeItem(atPath: directory + "/" + file) }
        #expect(await TranscriptCheck.replay(name: "out.transcript", text: text, safe: true).report() == "")
    }

    @Test func recordIsRefusedUnderSafe() async {
        let directory = temporaryDirectory()
        let session = await TestShell(options: SessionOptions(safe: true))
        let printed = await runScript(session, "record out.transcript\n", in: directory)
        #expect(printed == "\(directory)/s.cachesh:1: error: --safe: commands may not write files (out.transcript)\n")
        #expect(contents(directory + "/out.transcript") == nil)
    }

    @Test func recordMisuseIsAnError() async {
        let directory = temporaryDirectory()
        let session = await TestShell()
        try? "record inner.transcript\n".write(toFile: directory + "/inner.cachesh", atomically: true, encoding: .utf8)
        let printed = await runScript(session, """
            record stop
            record
            record a.transcript
            record b.transcript
            source inner.cachesh
            record stop
            record \(directory)/no/such/dir/x.transcript

            """, in: directory)
        let file = directory + "/s.cachesh"
        #expect(printed == """
            \(file):1: error: record stop: not recording (record FILE starts)
            \(file):2: error: record needs FILE (or stop)
            recording to a.transcript from here on
            \(file):4: error: already recording to a.transcript (record stop first)
            \(directory)/inner.cachesh:1: error: record runs only as a command of its own, not from a sourced file
            recorded 2 commands to a.transcript
            \(file):7: error: record: cannot write \(directory)/no/such/dir/x.transcript: No such file or directory

            """)
        // The failed `record` commands are left out with the others; an error of a sourced file
        // keeps the file's name, as a replay prints it.
        #expect(contents(directory + "/a.transcript")?.hasPrefix(first + "cachesh> restore {\"clock_start\":") == true)
        #expect(contents(directory + "/a.transcript")?.hasSuffix("""
            restored (0 entries, now 2026-01-01T00:00:00.000Z)
            cachesh> source inner.cachesh
            \(directory)/inner.cachesh:1: error: record runs only as a command of its own, not from a sourced file

            """ + last) == true)
        #expect(await verify(directory + "/a.transcript") == "")
    }

    @Test func aRecordingAlwaysReplaysByteForByte() async {
        let directory = temporaryDirectory()
        let session = await TestShell()
        await runScript(session, """
            ns feed ttl=1m stale=10s
            watch feed:*
            put feed:1 [1] tags=home
            advance 15s
            get feed:1
            at 1s echo later
            advance 2s
            at 1s nonsense
            advance 1s
            keys
            stats
            echo ...
            echo \\x
            echo ...> y
            get
            record out.transcript --from-start
            record stop

            """, in: directory)
        #expect(await verify(directory + "/out.transcript") == "")
    }
}

extension TranscriptRecordTests {
    /// A recording from here on starts with the state, then the commands that queue again the
    /// answers `server next` left (text and binary bodies, statuses, failures, validations) and
    /// strict mode, each once: its snapshot leaves them out. It replays byte for byte.
    @Test func aRecordingQueuesTheServersAnswersAgainOnce() async {
        let directory = temporaryDirectory()
        let session = await TestShell()
        let digest = String(repeating: "ab", count: 32)
        await runScript(session, """
            ns api http
            ns feed ttl=1m
            server next api:/page status=203 headers={"Cache-Control":"max-age=5"} text="<p>new</p>"
            server next api:/logo binary=4:sha256:\(digest)
            server next feed:1 latency=2s value={"n":9}
            server next feed:1 error="busy" --commit
            server next --validate --fail
            server strict on
            record out.transcript
            get api:/page
            get api:/logo
            get feed:1
            advance 3s
            validate
            record stop

            """, in: directory)
        let text = contents(directory + "/out.transcript") ?? ""
        let restore = text.split(separator: "\n").first { $0.hasPrefix("cachesh> restore ") } ?? ""
        #expect(!restore.contains("\"next\"") && !restore.contains("\"strict\""), "\(restore)")
        #expect(text.contains("cachesh> server next api:/page text=\"<p>new</p>\" status=203 headers={\"Cache-Control\":\"max-age=5\"}\n"), "\(text)")
        #expect(text.contains("cachesh> server next api:/logo binary=4:sha256:\(digest)\n"), "\(text)")
        #expect(text.components(separatedBy: "cachesh> server strict on").count == 2, "\(text)")
        #expect(await verify(directory + "/out.transcript") == "")
    }
}

/// The "did you mean" part of the unknown-command error for `name`, as the session words it.
private func errorHint(_ name: String) async -> String {
    let session = await TestShell()
    let line = await session.typed(name)
    let prefix = "error: unknown command \"\(name)\""
    return String(line.dropFirst(prefix.count).dropLast())
}

@Suite struct ColourFreeHistoryTests {
    /// A session on a colour terminal: states are coloured on the screen, never in a recording.
    @Test func aColourSessionRecordsPlainTextThatVerifies() async {
        let directory = temporaryDirectory()
        let session = await TestShell(options: SessionOptions(colour: true))
        await session.run { session, _ in session.baseDirectory = directory }
        var screen = ""
        for command in ["ns feed ttl=1m stale=1m", "put feed:a 1", "get feed:a", "keys", "advance 90s", "mget feed:a",
                        "at 1s peek feed:a", "watch feed:a", "advance 2m", "get feed:a", "echo \u{1B}[1mbold\u{1B}[0m"] {
            screen += await session.typed(command)
        }
        #expect(screen.contains("\u{1B}[32mfresh\u{1B}[0m"))
        #expect(screen.contains("\u{1B}[31mexpired\u{1B}[0m"))
        _ = await session.typed("record out.transcript --from-start")
        _ = await session.typed("record stop")
        let recorded = contents(directory + "/out.transcript") ?? ""
        #expect(recorded.contains("feed:a  fresh  0\n") && recorded.contains("state:         expired\n"))
        #expect(!recorded.contains("\u{1B}[32m") && !recorded.contains("\u{1B}[33m") && !recorded.contains("\u{1B}[31m"))
        // An escape the user's own text holds is printed escaped, on the screen and in the file.
        #expect(recorded.contains("\\u001b[1mbold\\u001b[0m"))
        #expect(screen.contains("\\u001b[1mbold\\u001b[0m"))
        #expect(await verify(directory + "/out.transcript") == "")
    }

    @Test(arguments: [
        ("a  \u{1B}[32mfresh\u{1B}[0m  0", "a  fresh  0"),
        ("\u{1B}[2mmissing\u{1B}[0m", "missing"),
        ("\u{1B}[32m\u{1B}[0m", "\u{1B}[32m\u{1B}[0m"),
        ("\u{1B}[35mfresh\u{1B}[0m", "\u{1B}[35mfresh\u{1B}[0m"),
        ("\u{1B}", "\u{1B}"),
        ("plain", "plain"),
    ] as [(String, String)])
    func colourIsRemovedFromStateWordsOnly(coloured: String, plain: String) {
        #expect(Render.withoutColour(coloured) == plain)
    }
}
