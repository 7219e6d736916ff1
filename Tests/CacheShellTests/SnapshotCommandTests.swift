import CacheCore
import CacheShell
import Foundation
import Testing
import TestSupport

/// `snapshot` and `restore` in the shell (SPEC §3, §4, §5.2).
@Suite struct SnapshotCommandTests {
    /// A fresh directory for the files of one test.
    static func directory() -> String { Fixtures.directory("snapshot") }

    static let scriptA = Fixtures.everyPartOfTheState + """

        at 45s stats feed
        event patch feed:home {"live":1}
        stats
        """

    static let scriptB = Fixtures.pendingWorkCompletes + """

        advance 5m
        get profile:1
        put feed:b 2
        put feed:c 3
        advance 1h
        keys
        stats
        server log
        server show
        """

    static func run(_ session: TestShell, _ script: String, name: String = "script.cachesh") async -> String {
        await session.scriptText(SourceFile(name: name, text: script))
    }

    @Test(arguments: [OutputMode.human, .json])
    func restoredSessionContinuesExactlyAsTheOriginal(_ mode: OutputMode) async {
        let dir = Self.directory()
        let original = await TestShell(options: SessionOptions(mode: mode))
        _ = await Self.run(original, Self.scriptA)
        _ = await original.typed("snapshot \(dir)/a.json")
        let restored = await TestShell(options: SessionOptions(mode: mode))
        let restoreOutput = await restored.typed("restore \(dir)/a.json")
        #expect(!restoreOutput.contains("error"))
        let expected = await Self.run(original, Self.scriptB)
        let actual = await Self.run(restored, Self.scriptB)
        #expect(actual == expected)
        #expect(expected.contains("at 2026-01-01T00:06:30.300Z: get page:2") || expected.contains(#""event":"at""#))
        #expect(await restored.snapshotText() == original.snapshotText())
    }

    @Test func restoreThenSnapshotReproducesTheFileByteForByte() async throws {
        let dir = Self.directory()
        let session = await TestShell()
        _ = await Self.run(session, Self.scriptA)
        _ = await session.typed("snapshot \(dir)/a.json")
        let fresh = await TestShell()
        _ = await fresh.typed("restore \(dir)/a.json")
        _ = await fresh.typed("snapshot \(dir)/b.json")
        let a = try String(contentsOfFile: "\(dir)/a.json", encoding: .utf8)
        let b = try String(contentsOfFile: "\(dir)/b.json", encoding: .utf8)
        #expect(a == b)
        #expect(a.hasSuffix("}\n"))
        #expect(await fresh.run { session, _ in session.baseSnapshot } == a)
    }

    /// A batch keeps no copy of the state it restored (its `record` starts from the state at that
    /// point); a session that keeps its history renders the restored state for `record
    /// --from-start`, and the recording it writes then starts from that state, not from the one
    /// `record` is typed in.
    @Test func onlyASessionThatKeepsItsHistoryKeepsTheRestoredStateForRecord() async throws {
        let dir = Self.directory()
        let original = await TestShell()
        _ = await Self.run(original, Self.scriptA)
        _ = await original.typed("snapshot \(dir)/a.json")
        let a = try String(contentsOfFile: "\(dir)/a.json", encoding: .utf8)

        let batch = await Session.with { session, cache in
            session.keepsWholeHistory = false
            _ = session.run(SourceFile(name: "t.cachesh", text: "restore \(dir)/a.json\nput late 1\nrecord \(dir)/batch.transcript\nrecord stop\n"), on: cache)
            return (session.baseSnapshot, session.anyFailed)
        }
        #expect(batch.0 == nil)
        #expect(!batch.1)
        let batchRecording = try String(contentsOfFile: "\(dir)/batch.transcript", encoding: .utf8)
        // The state at `record`: it holds the key put after the restore, and no `put` follows.
        #expect(batchRecording.contains(#""key":"late""#))
        #expect(!batchRecording.contains("> put late 1"))

        let kept = await TestShell()
        _ = await kept.typed("restore \(dir)/a.json")
        _ = await kept.typed("put late 1")
        _ = await kept.typed("record \(dir)/kept.transcript --from-start")
        _ = await kept.typed("record stop")
        #expect(await kept.run { session, _ in session.baseSnapshot } == a)
        let keptRecording = try String(contentsOfFile: "\(dir)/kept.transcript", encoding: .utf8)
        #expect(keptRecording.hasPrefix("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\ncachesh> restore {\"clock_start\":"))
        #expect(!keptRecording.contains(#""key":"late""#))
        #expect(keptRecording.contains("> put late 1"))
    }

    @Test func snapshotWithoutPendingWorkRoundTrips() async throws {
        let dir = Self.directory()
        let session = await TestShell()
        _ = await session.typed("put a 1\nput feed:b [1,2] tags=x\nadvance 10m\nput c {\"id\":3}\nstats reset")
        _ = await session.typed("snapshot \(dir)/a.json")
        let fresh = await TestShell()
        _ = await fresh.typed("restore \(dir)/a.json")
        _ = await fresh.typed("snapshot \(dir)/b.json")
        #expect(try String(contentsOfFile: "\(dir)/a.json", encoding: .utf8) == String(contentsOfFile: "\(dir)/b.json", encoding: .utf8))
        #expect(await fresh.typed("keys") == session.typed("keys"))
    }

    @Test func snapshotPrintsTheDocumentOrWritesTheFile() async throws {
        let dir = Self.directory()
        let session = await TestShell(options: SessionOptions(mode: .json))
        _ = await session.typed("put a 1")
        let printed = await session.typed("snapshot")
        let line = try JSONValue(parsing: printed)
        guard case .object(let fields) = line, case .object(let document)? = fields["snapshot"] else {
            Issue.record("expected {command, ok, snapshot}: \(printed)"); return
        }
        #expect(fields.count == 3)
        #expect(fields["command"] == "snapshot" && fields["ok"] == true)
        #expect(document["format"] == "cachesh-snapshot")
        #expect(await session.typed("snapshot \(dir)/s.json") == #"{"command":"snapshot","entries":1,"file":"\#(dir)/s.json","ok":true}"# + "\n")
        await session.run { session, _ in session.options.mode = .human }
        #expect(await session.typed("snapshot \(dir)/s.json") == "wrote \(dir)/s.json (1 entry)\n")
        #expect(await session.typed("snapshot").hasPrefix("{"))
    }

    @Test func restoreReplacesTheSessionAndDropsItsPendingWork() async {
        let dir = Self.directory()
        let first = await TestShell()
        _ = await first.typed("put a 1\nat 1m echo from the snapshot")
        _ = await first.typed("snapshot \(dir)/a.json")
        let second = await TestShell()
        _ = await second.typed("put b 2\nadvance 1h\nat 30s echo from before\nserver set x 1")
        #expect(await second.typed("restore \(dir)/a.json") == "restored \(dir)/a.json (1 entry, now 2026-01-01T00:00:00.000Z)\n")
        #expect(await second.typed("keys") == first.typed("keys"))
        #expect(await second.typed("advance 2m") == """
            at 2026-01-01T00:01:00.000Z: echo from the snapshot
              from the snapshot
            now:    2026-01-01T00:02:00.000Z
            now_ms: 120000 (2m)

            """)
        #expect(await second.typed("server show x").contains("value:       null"))
    }

    @Test func scheduledCommandErrorsStillNameTheirFileAndLineAfterRestore() async {
        let dir = Self.directory()
        let original = await TestShell()
        _ = await Self.run(original, "put a 1\n\nat 1m stats nope\n", name: "setup.cachesh")
        _ = await original.typed("snapshot \(dir)/a.json")
        let restored = await TestShell()
        _ = await restored.typed("restore \(dir)/a.json")
        let expected = await original.typed("advance 1m")
        #expect(expected.contains("setup.cachesh:3: error: (at 2026-01-01T00:01:00.000Z)"))
        #expect(await restored.typed("advance 1m") == expected)
    }

    static let refusals: [(edit: @Sendable (String) -> String, message: String)] = [
        ({ $0.replacingOccurrences(of: "\"cachesh-snapshot\"", with: "\"other\"") }, "format: not a cachesh snapshot"),
        ({ $0.replacingOccurrences(of: "\"version\":1", with: "\"version\":2") }, "version: snapshot version 2 is not supported"),
        ({ String($0.prefix($0.count - 40)) }, "damaged snapshot (not valid JSON"),
        ({ $0.replacingOccurrences(of: "\"stored_at\":\"2026-01-01T00:00:00.000Z\"", with: "\"stored_at\":5.5") }, "entries[0].stored_at: expected a time"),
        ({ $0.replacingOccurrences(of: "\"command\":\"echo later\"", with: "\"command\":7") }, "pending.scheduled[0].command: expected the command's text"),
    ]

    @Test(arguments: 0..<refusals.count)
    func badSnapshotIsRefusedWithOneLineAndChangesNothing(_ i: Int) async throws {
        let dir = Self.directory()
        let source = await TestShell()
        _ = await source.typed("put a 1\nput b 2\nat 1m echo later")
        let document = await source.run { session, cache in session.makeSnapshot(on: cache).compactText }
        try Self.refusals[i].edit(document).write(toFile: "\(dir)/bad.json", atomically: true, encoding: .utf8)
        let target = await TestShell()
        _ = await target.typed("put kept 1\nadvance 1s")
        let before = await target.snapshotText()
        let keys = await target.typed("keys")
        let output = await target.typed("restore \(dir)/bad.json")
        #expect(output.hasPrefix("error: \(dir)/bad.json: \(Self.refusals[i].message)"), "\(output)")
        #expect(output.split(separator: "\n").count == 1)
        #expect(await target.typed("keys") == keys)
        #expect(await target.snapshotText() == before)
    }

    @Test func missingFileIsAnErrorAndSafeModeRefusesFiles() async {
        let dir = Self.directory()
        let session = await TestShell()
        #expect(await session.typed("restore \(dir)/none.json").hasPrefix("error: cannot read \(dir)/none.json"))
        await session.run { session, _ in session.options.safe = true }
        #expect(await session.typed("snapshot \(dir)/s.json") == "error: --safe: commands may not write files (\(dir)/s.json)\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/s.json"))
        #expect(await session.typed("restore \(dir)/s.json").hasPrefix("error: --safe: commands may not read files"))
    }
}
