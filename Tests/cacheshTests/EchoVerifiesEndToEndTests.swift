import Foundation
import Testing

/// A transcript cachesh writes of a user's own session (`--echo`, `record FILE`) replays as the
/// session ran (SPEC §6): scripts found by fuzzing wrote ones that `--verify` failed, and a state
/// a snapshot does not keep now refuses `record FILE` instead.
@Suite struct EchoVerifiesEndToEndTests {
    /// Echoes `script` (run from a file) and verifies what it wrote; returns the transcript.
    private func echoVerifies(_ script: String, status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", script)
        let echoed = try await Cachesh.run(["--echo", "s.cachesh"], in: sandbox.url)
        #expect(echoed.status == status, "\(echoed)", sourceLocation: sourceLocation)
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "s.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(echoed.stdout)\n---\n\(verified)", sourceLocation: sourceLocation)
        #expect(verified.status == 0, sourceLocation: sourceLocation)
        return echoed.stdout
    }

    /// A `;` that ends a line ends the command and is dropped: `advance 40s;;` runs with the word
    /// `40s;`. Its echo wrote `advance 40s;`, which a replay ran as `advance 40s`. A command whose
    /// text ends in `;` is written with one more.
    @Test(arguments: ["advance 40s;;\n", "advance 40s; # a note\n", "put a:1 ;;\nget a:1\n", "server set k x;;\nget k\n"])
    func aCommandEndingInASemicolonIsEchoedSoItReadsTheSame(script: String) async throws {
        let failing = script.hasPrefix("advance")
        let transcript = try await echoVerifies(script, status: failing ? 1 : 0)
        if failing { #expect(transcript.hasPrefix("cachesh> advance 40s;;\nerror: bad duration \"40s;\""), "\(transcript)") }
    }

    /// A command of `-c` that does not lex is written on a line of its own, where `;` ends nothing:
    /// the echo writes the error that line gives, which the replay prints; the run itself still
    /// says what `-c` saw.
    @Test(arguments: [false, true])
    func aCommandOfDashCThatDoesNotLexIsEchoedWithTheErrorItsLineGives(json: Bool) async throws {
        let sandbox = try Sandbox()
        let plain = try await Cachesh.run(["-c", "keys [4; get a"], in: sandbox.url)
        #expect(plain.stderr.hasPrefix("-c:1:1: error: unbalanced \"[\": it is not closed before the ; that ends its command"), "\(plain)")
        let echoed = try await Cachesh.run((json ? ["--json"] : []) + ["--echo", "-c", "keys [4; get a"], in: sandbox.url)
        #expect(echoed.stdout.contains("cachesh> keys [4\n" + (json ? "{" : "error: unbalanced \"[\": it is not closed on its line")),
                "\(echoed.stdout)")
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "s.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(echoed.stdout)\n---\n\(verified)")
    }

    /// A recording writes each answer `server next` queued back as a command after its `restore`:
    /// one for a key that ends in `;` (`server next a:1; # note` queues for `a:1;`) gets one more.
    @Test func aQueuedAnswerForAKeyEndingInASemicolonIsRecordedSoItReadsTheSame() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", "server next a:1; # note\nrecord r.transcript\nrecord stop\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.stdout.hasPrefix("server: queued an answer for a:1;\n"), "\(run)")
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8)
        #expect(transcript.contains("cachesh> server next a:1;;\nserver: queued an answer for a:1;\n"), "\(transcript)")
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// While a recording runs, `timeline` and `explain` look back no further than its start, which
    /// its replay starts from. The echo leaves `record` out, so its replay has the earlier changes:
    /// it writes what that replay prints, and the recording and the run's own output what the
    /// session showed (fuzz F2: the echo wrote the recording's view and did not verify).
    @Test(arguments: [false, true])
    func theEchoOfARecordedTimelineHasTheChangesTheRecordingSetAside(json: Bool) async throws {
        let script = "put a:1 1\ninvalidate a:1\nrecord r.transcript\ntimeline a:1\nexplain a:1\nat 1s timeline *\n"
            + "advance 1s\nrecord stop\ntimeline a:1\n"
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", script)
        let plain = try await Cachesh.run((json ? ["--json"] : []) + ["s.cachesh"], in: sandbox.url)
        #expect(plain.status == 0, "\(plain)")
        let echoed = try await Cachesh.run((json ? ["--json"] : []) + ["--echo", "s.cachesh"], in: sandbox.url)
        #expect(echoed.status == 0, "\(echoed)")
        if !json {
            #expect(plain.stdout.contains("(no changes to a:1 this session)\n"), "the session shows the recording's view: \(plain)")
            #expect(echoed.stdout.contains("cachesh> timeline a:1\n* 2026-01-01T00:00:00.000Z stored a:1 fresh 1 (cache)\n"),
                    "\(echoed.stdout)")
            #expect(echoed.stdout.contains("reason:        invalidated at 2026-01-01T00:00:00.000Z\n"), "\(echoed.stdout)")
        }
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "s.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(echoed.stdout)\n---\n\(verified)")
        let recorded = try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8)
        if !json { #expect(recorded.contains("cachesh> timeline a:1\n(no changes to a:1 this session)\n"), "\(recorded)") }
        let replayed = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(replayed.stdout == "1 passed, 0 failed\n", "\(recorded)\n---\n\(replayed)")
    }

    /// The echo of a session on a store that held one starts with that state, as a recording
    /// from here on does (`restore {SNAPSHOT}`, then the answers still queued), so it replays
    /// from it; a new store adds nothing. A state no transcript can start from is refused.
    @Test(arguments: [false, true])
    func theEchoOfASessionOnAStoreStartsWithTheStateTheStoreHeld(json: Bool) async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["--store", "s.db", "-c", "ns feed ttl=1m; put feed:a 1; server next feed:b 2; advance 10s"],
                                         in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        try sandbox.write("s.cachesh", "get feed:a\nget feed:b\nadvance 1m\npeek feed:a\n")
        let echoed = try await Cachesh.run((json ? ["--json"] : []) + ["--store", "s.db", "--echo", "s.cachesh"], in: sandbox.url)
        #expect(echoed.status == 0, "\(echoed)")
        #expect(echoed.stdout.hasPrefix((json ? "cachesh> output json\n{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\n" : "")
                                        + "cachesh> restore {"), "\(echoed.stdout)")
        #expect(echoed.stdout.contains("cachesh> server next feed:b value=2\n"), "\(echoed.stdout)")
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--safe", "--verify", "s.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(echoed.stdout)\n---\n\(verified)")

        let fresh = try await Cachesh.run(["--store", "new.db", "--echo", "-c", "put a 1"], in: sandbox.url)
        #expect(fresh.stdout == "cachesh> put a 1\nkeys: a\n", "\(fresh)")

        _ = try await Cachesh.run(["--store", "f.db", "-c", "at 1m snapshot out.json"], in: sandbox.url)
        let refused = try await Cachesh.run(["--store", "f.db", "--echo", "-c", "get b"], in: sandbox.url)
        #expect(refused.status == 2 && refused.stdout.isEmpty, "\(refused)")
        #expect(refused.stderr.hasPrefix("cachesh: --echo: the state f.db holds cannot start a transcript: a command at scheduled reads or writes a file (out.json)"),
                "\(refused)")
    }

    /// `get a:1;` is still echoed as `get a:1` (the `;` it ended with is not part of it).
    @Test func aLineEndingSemicolonIsNotEchoed() async throws {
        let transcript = try await echoVerifies("put a:1 1;\nget a:1;\n")
        #expect(transcript.hasPrefix("cachesh> put a:1 1\nkeys: a:1\ncachesh> get a:1\n"), "\(transcript)")
    }

    /// A printed snapshot names the file and line of each command `at` scheduled; a replay of the
    /// echo types that command, so there it names no file, on line 1. The echo writes the
    /// snapshot as the replay prints it; the terminal still shows the script's file and line.
    @Test(arguments: [false, true])
    func aPrintedSnapshotOfAScheduledCommandIsEchoedAsReplayed(json: Bool) async throws {
        let script = "# line 1\nat 1s put a:1 1\nat 2s at 1s get a:1\nadvance 2s\nsnapshot\n"
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", script)
        let plain = try await Cachesh.run((json ? ["--json"] : []) + ["s.cachesh"], in: sandbox.url)
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdout.contains(json ? #""file":"s.cachesh""# : #""file": "s.cachesh""#), "\(plain.stdout)")
        let echoed = try await Cachesh.run((json ? ["--json"] : []) + ["--echo", "s.cachesh"], in: sandbox.url)
        #expect(!echoed.stdout.contains("s.cachesh"), "\(echoed.stdout)")
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "s.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(echoed.stdout)\n---\n\(verified)")
    }

    /// The same for a snapshot printed by a sourced file or by `at`, and for a value with a
    /// character the history escapes (a bidi override, NEL), which the printed snapshot and
    /// `diff FILE`'s inline form wrote raw.
    @Test(arguments: [
        "put a 1\nat 5s get a\nsource s2.cachesh\n",
        "put a 1\nat 5s get a\nat 1s snapshot\nadvance 1s\n",
        "put a \"x\\u202ey\\u0085z\"\nat 5s get a\nsnapshot\n",
        "put a \"x\"\nsnapshot v.json\nput a \"x\\u202ey\"\ndiff v.json\n",
    ])
    func aSnapshotPrintedAnywhereIsEchoedAsReplayed(script: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s2.cachesh", "snapshot\n")
        try sandbox.write("s.cachesh", script)
        let echoed = try await Cachesh.run(["--echo", "s.cachesh"], in: sandbox.url)
        #expect(echoed.status == 0, "\(echoed)")
        #expect(!echoed.stdout.contains("\u{202E}") && !echoed.stdout.contains("\u{85}"), "\(echoed.stdout)")
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "s.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(echoed.stdout)\n---\n\(verified)")
    }

    /// A recording from here on starts with the state as a replay of it has it: a command `at`
    /// scheduled before it is restored naming no file, so a snapshot printed after it, and an
    /// error the command reports when it runs, read the same in the replay.
    @Test func aRecordingStartedWithACommandScheduledVerifies() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", "\n\nat 1s put a:1 1\nat 2s expect peek a:1 value=2\nrecord r.transcript\nsnapshot\nadvance 3s\nrecord stop\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.stderr == "s.cachesh:4: error: (at 2026-01-01T00:00:02.000Z) expect: value: expected 2, found 1\n", "\(run)")
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// An error of a command a sourced file scheduled, or a restored snapshot holds, names that
    /// file in a replay as in the session; the echo and a recording wrote it as typed (no file).
    /// Only a command the transcript itself types is written so.
    @Test(arguments: [
        "source inner.cachesh\nadvance 2s\n",
        "at 1s expect peek a:1 value=2\nsnapshot x.json\nrestore x.json\nadvance 2s\n",
        "source inner.cachesh\nrecord r.transcript\nadvance 2s\nrecord stop\n",
        "at 1s expect peek a:1 value=2\nrecord r.transcript\nadvance 2s\nrecord stop\n",
    ])
    func anErrorOfAScheduledCommandNamesItsFileAsTheReplayDoes(script: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("inner.cachesh", "at 1s expect peek a:1 value=2\n")
        try sandbox.write("s.cachesh", script)
        let records = script.contains("record")
        let echoed = try await Cachesh.run(records ? ["s.cachesh"] : ["--echo", "s.cachesh"], in: sandbox.url)
        let named = script.hasPrefix("source") ? "inner.cachesh:1: " : "s.cachesh:1: "
        #expect(echoed.status == 1, "\(echoed)")
        let transcript = records ? try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8) : echoed.stdout
        let written = (script.contains("restore") || script.hasPrefix("source") ? named : "")
            + "error: (at 2026-01-01T00:00:01.000Z) expect: value: expected 2, found null\n"
        #expect(transcript.contains("cachesh> advance 2s\n" + written), "\(transcript)")
        if !records { try sandbox.write("r.transcript", transcript) }
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(transcript)\n---\n\(verified)")
    }

    /// A value at the nesting limit (512 levels) is written into a transcript inside a snapshot,
    /// `restore {SNAPSHOT}`: the echo of `restore FILE`, and the first line of a recording. The
    /// snapshot's own levels around it are read as a snapshot file's are.
    @Test(arguments: [false, true])
    func aValueAtTheNestingLimitReplaysInsideASnapshot(record: Bool) async throws {
        let value = String(repeating: "[", count: 512) + "1" + String(repeating: "]", count: 512)
        let sandbox = try Sandbox()
        if record {
            try sandbox.write("s.cachesh", "put a:1 \(value)\nrecord r.transcript\nget a:1\nrecord stop\n")
            let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
            #expect(run.status == 0, "\(run)")
            let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
            #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
        } else {
            let transcript = try await echoVerifies("put a:1 \(value)\nsnapshot deep.json\nrestore deep.json\nget a:1\n")
            // The snapshot on one line, in compact JSON, as for any other.
            #expect(transcript.contains("cachesh> restore {\"clock_start\":"), "\(transcript.prefix(300))")
            #expect(!transcript.contains("...> "), "\(transcript.prefix(300))")
        }
        // A document deeper than a snapshot's levels around such a value is still refused.
        let tooDeep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let refused = try await Cachesh.run(["-c", "restore {\"entries\":\(tooDeep)}"], in: sandbox.url)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("JSON nested deeper than 528 levels"), "\(refused)")
        // A snapshot given to a command `at` schedules is read as one typed alone.
        let document = "{\"entries\":[{\"key\":\"a\",\"value\":\(value)}]}"
        let scheduled = try await Cachesh.run(["-c", "at 1s at 1s diff \(document)"], in: sandbox.url)
        #expect(!scheduled.stderr.contains("nested deeper"), "\(scheduled)")
        #expect(scheduled.stdout.hasPrefix("scheduled at 2026-01-01T00:00:01.000Z: at 1s diff {"), "\(scheduled)")
        // So is one that `at` nested as deep as it may be schedules: read at each level, it runs
        // at the last (and is no snapshot, which only `diff` itself says).
        let deepest = String(repeating: "at 1s ", count: 16) + "diff \(document) \(document)"
        let nested = try await Cachesh.run(["-c", deepest + "; advance 1m"], in: sandbox.url)
        #expect(!nested.stderr.contains("nested deeper"), "\(nested.stderr.prefix(300))")
        #expect(nested.stderr.hasPrefix("-c:1:97: error: (at 2026-01-01T00:00:16.000Z) diff: format: not a cachesh snapshot"),
                "\(nested.stderr.prefix(300))")
    }

    /// A recording started while a `dedupe=` window is open replays the deduplicated read as the
    /// session ran it: its first `restore` holds the window (`pending.fetch_starts`). Before, it
    /// did not, and the replay sent the read as a request.
    @Test func aRecordingStartedInsideADedupeWindowReplaysIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", "ns clock ttl=10m dedupe=200ms\nserver set clock:now 1\nget clock:now\nadvance 50ms\n"
                          + "server set clock:now 2\nrecord r.transcript\nget clock:now --force\nrecord stop\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8)
        #expect(transcript.contains(#""fetch_starts":[{"at":"2026-01-01T00:00:00.000Z","key":"clock:now"}]"#), "\(transcript)")
        #expect(transcript.contains("value:         1\nsource:        cache\n"), "\(transcript)")
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// A command `at` scheduled that reads or writes a file is refused in a restored snapshot, so
    /// a recording could not start from it: `record FILE` refuses it with one line.
    @Test func aRecordingCannotStartWhileACommandThatNamesAFileIsScheduled() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", "at 5s snapshot out.json\nrecord r.transcript\nadvance 5s\nrecord r.transcript\nrecord stop\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.stderr == "s.cachesh:2: error: record: a command at scheduled reads or writes a file (out.json), which a restored "
                + "snapshot may not schedule: record before it is scheduled, or after it runs (advance)\n", "\(run)")
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// A next page cancelled, or answered by an HTTP exchange, lets its held pages go: a
    /// recording can start once nothing is pending.
    @Test func aCancelledNextPageHoldsNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", """
            ns feed naive=next-page-drops-writes
            server set feed:t@1 [1]
            server set feed:t@2 [2]
            get feed:t@1
            pages feed:t --next --nowait
            cancel feed:t@2
            record r.transcript
            get feed:t@1
            record stop

            """)
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// With `next-page-drops-writes`, a next page in flight holds the earlier pages to write back
    /// when it is stored; a snapshot keeps them (`pending.held_pages`), so a recording started
    /// then replays the write-back: the `put` made meanwhile is lost in the replay as it was in
    /// the session.
    @Test func aRecordingStartedWhileANextPageHoldsTheEarlierPagesReplaysTheirWriteBack() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", """
            ns feed naive=next-page-drops-writes
            server latency 100ms
            server set feed:home@1 [1]
            server set feed:home@2 [2]
            get feed:home@1
            pages feed:home --next --nowait
            record r.transcript
            put feed:home@1 [9]
            advance 200ms
            peek feed:home@1
            record stop

            """)
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
        #expect(run.stdout.hasSuffix("value:         [1]\nage_ms:        100\n"
                                     + "expires_in_ms: 299900 (4m59s)\ntags:          []\nrecorded 4 commands to r.transcript\n"), "\(run)")
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8)
        #expect(transcript.contains(#""held_pages":[{"pages":[{"key":"feed:home@1","value":[1]}],"request":6}]"#), "\(transcript)")
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }
}
