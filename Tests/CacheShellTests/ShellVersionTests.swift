import CacheCore
import CacheServer
import CacheShell
import Testing
import TestSupport

/// `version=` on `event patch`, `server set` and `server next` (SPEC §1.1 Versions, §7.1): what a
/// user sees, the errors at their word, and recordings that carry versions.
@Suite struct ShellVersionTests {
    static func run(_ script: String) async -> String {
        await TestShell().scriptText(SourceFile(name: "t.cachesh", text: script))
    }

    /// A late event older than the entry's version is skipped; the server's data stays too.
    @Test func aLateEventIsSkippedAndTheServerKeepsItsData() async {
        let out = await Self.run("""
            server set doc:1 {"n":1} version=1
            get doc:1
            watch doc:1
            event patch doc:1 {"n":3} version=3
            event patch doc:1 {"n":2} version=2
            expect peek doc:1 value.n=3
            expect server show doc:1 value.n=3
            server patch doc:1 {"n":4}
            get doc:1 --force
            event patch doc:1 {"n":0} version=4
            expect peek doc:1 value.n=4
            """)
        #expect(!out.contains("error"), "\(out)")
        #expect(out.contains(" skipped doc:1 fresh {\"n\":3} (server)"), "\(out)")
        #expect(out.components(separatedBy: "expect: ok").count == 4, "\(out)")
    }

    /// `explain` shows the version an entry holds and `server show KEY` a numbered key's, each
    /// only when there is one.
    @Test func explainAndServerShowTellTheVersion() async {
        let out = await Self.run("""
            server set doc:1 {"n":1} version=7
            server set doc:2 {"n":1}
            get doc:1
            get doc:2
            expect server show doc:1 version=7
            server patch doc:1 {"n":2}
            expect server show doc:1 version=8
            explain doc:1
            explain doc:2
            server show doc:2
            """)
        #expect(out.components(separatedBy: "expect: ok").count == 3, "\(out)")
        #expect(out.contains("version:       7\n"), "\(out)")
        #expect(out.components(separatedBy: "version:").count == 2, "only doc:1's explain has one: \(out)")
    }

    /// Every malformed `version=` is one error line at its word, and nothing changes.
    @Test(arguments: [
        ("event patch doc:1 {\"n\":2} version=abc", "event: version= must be a whole number from 0 to 9007199254740992 (2^53), not \"abc\""),
        ("event patch doc:1 {\"n\":2} version=-1", "not \"-1\""),
        ("event patch doc:1 {\"n\":2} version=9007199254740993", "not \"9007199254740993\""),
        ("event patch doc:1 {\"n\":2} version=", "not \"\""),
        ("event patch doc:1 {\"n\":2} version=+3", "not \"+3\""),
        ("event entity 1 {\"n\":2} version=3", "event entity has no version=: a version is one key's"),
        ("server set doc:1 {\"n\":2} version=1.5", "set: version= must be a whole number"),
        ("server next doc:1 --not-found version=3", "server next: version= goes with an answer that has a value"),
        ("server next --validate version=3", "server next: version= goes with an answer that has a value"),
    ])
    func aVersionPastTheLargestIsRefusedAndChangesNothing(command: String, message: String) async {
        let out = await Self.run("""
            server set doc:1 {"id":1,"n":1} version=1
            get doc:1
            \(command)
            expect peek doc:1 value.n=1
            expect server show doc:1 value.n=1
            get doc:1 --force
            expect server log requests.1.fate=stored
            """)
        #expect(out.contains("t.cachesh:3: error: "), "\(out)")
        #expect(out.contains(message), "\(out)")
        #expect(out.components(separatedBy: "expect: ok").count == 4, "\(out)")
    }

    /// A recording of a cache whose server versions its answers, and of a versioned event, writes
    /// them (`version=`) in the transcript, which replays byte for byte.
    @Test func aVersionedSessionReplaysItsOwnTranscript() async throws {
        let server = SimulatedServer()
        server.set("doc:1", ["n": 1], at: TimeText.virtualEpochMs, version: 5)
        let cache = Cache(origin: server)
        await cache.watch(.all)
        await cache.startRecording()
        _ = try await cache.get("doc:1")
        _ = try await cache.event("doc:1", patch: Patch(["n": 0]), version: 4)
        _ = try await cache.event("doc:1", patch: Patch(["n": 6]), version: 6)
        #expect(await cache.peek("doc:1").value == ["n": 6])
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        #expect(text.contains("event patch doc:1 {\"n\":0} version=4"), "\(text)")
        #expect(text.contains("value={\"n\":1} version=5"), "\(text)")
        let check = await TranscriptCheck.replay(name: "versioned.transcript", text: text, safe: true)
        #expect(check.passed, "\(check.report())\(check.refusal ?? "")\n\(text)")
    }
}
