import Foundation
import Testing

/// What one run of the built `cachesh` printed and how it exited.
private struct CacheshRun: Equatable {
    var stdout: String
    var stderr: String
    var status: Int32
}

/// The built executable: `CACHESH_BIN`, else beside the test bundle, else the package's debug build.
/// Runs `cachesh arguments` in `directory` with a clean environment (no `CI`, `NO_COLOR` set) plus `extra`.
private func cachesh(_ arguments: [String], in directory: String, environment extra: [String: String] = [:]) async throws -> CacheshRun {
    let run = try await Cachesh.run(arguments, in: URL(fileURLWithPath: directory), environment: extra, cleanEnvironment: true)
    return CacheshRun(stdout: run.stdout, stderr: run.stderr, status: run.status)
}

private func directory(with files: [String: String]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-e2e-\(UUID().uuidString)").path
    for (name, text) in files {
        let file = path + "/" + name
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
    }
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

private let feedTranscript = """
    The feed goes stale after five minutes.

    cachesh> ns feed ttl=45m stale=5m
    ns feed ttl=45m stale=5m
    cachesh> put feed:home [{"id": 1, "likes": 3}]
    keys: feed:home
    cachesh> advance 6m
    now:    2026-01-01T00:06:00.000Z
    now_ms: 360000 (6m)
    cachesh> peek feed:home
    key:           feed:home
    state:         stale
    value:         [{"id":1,"likes":3}]
    age_ms:        360000 (6m)
    expires_in_ms: 2340000 (39m)
    tags:          []
    cachesh> nonsense
    error: unknown command "nonsense" (try help)

    """

@Suite(.serialized) struct TranscriptEndToEndTests {
    @Test func aPassingTranscriptPrintsOnlyTheSummary() async throws {
        let dir = try directory(with: ["feed.transcript": feedTranscript])
        #expect(try await cachesh(["--verify", "feed.transcript"], in: dir) == CacheshRun(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
    }

    /// A file that holds no command checks nothing: it fails with a line naming it, whatever it
    /// is, and the summary counts it among the files.
    @Test func aFileWithNoCommandFailsByName() async throws {
        let dir = try directory(with: [
            "feed.transcript": feedTranscript,
            "empty.transcript": "",
            "script.cachesh": "put a 1\nget a\n",
            "notes.md": "# Notes\n\n```sh\ncachesh> get a\n```\n",
        ])
        let noise = (0..<4096).map { (n: Int) in UInt8(truncatingIfNeeded: (n &* 2654435761) >> 13) }
        #expect(FileManager.default.createFile(atPath: dir + "/noise.bin", contents: Data(noise)))
        let run = try await cachesh(["--verify", "empty.transcript", "feed.transcript", "script.cachesh", "notes.md"], in: dir)
        #expect(run == CacheshRun(stdout: """
            empty.transcript: no commands
            script.cachesh: no commands
            notes.md: no commands
            1 passed, 3 failed

            """, stderr: "", status: 1))
        for file in ["empty.transcript", "script.cachesh", "notes.md"] {
            #expect(try await cachesh(["--verify", file], in: dir)
                == CacheshRun(stdout: "\(file): no commands\n0 passed, 1 failed\n", stderr: "", status: 1))
        }
        // Random bytes are not UTF-8 text: refused as a file that cannot be read (exit 2), the
        // other transcripts not run, so this cannot pass either.
        #expect(try await cachesh(["--verify", "feed.transcript", "noise.bin"], in: dir)
            == CacheshRun(stdout: "", stderr: "cachesh: cannot read noise.bin: not UTF-8 text (byte 0xBB on line 1)\n", status: 2))
        // --update has nothing to write back, so it fails too and leaves the file alone.
        let update = try await cachesh(["--verify", "--update", "script.cachesh"], in: dir)
        #expect(update == CacheshRun(stdout: "script.cachesh: no commands\n0 passed, 1 failed, 0 updated\n", stderr: "", status: 1))
        #expect(read(dir + "/script.cachesh") == "put a 1\nget a\n")
    }

    @Test func aFailingTranscriptPrintsTheDiffUpdateWouldApply() async throws {
        let wrong = feedTranscript.replacingOccurrences(of: "state:         stale", with: "state:         fresh")
            .replacingOccurrences(of: "now_ms: 360000 (6m)\n", with: "")
        let dir = try directory(with: ["feed.transcript": feedTranscript, "wrong.transcript": wrong])
        let run = try await cachesh(["--verify", "feed.transcript", "wrong.transcript"], in: dir)
        #expect(run == CacheshRun(stdout: """
            @ wrong.transcript:7
            --- wrong.transcript
            +++ wrong.transcript (actual)
            @@ -6,6 +6,7 @@
             keys: feed:home
             cachesh> advance 6m
             now:    2026-01-01T00:06:00.000Z
            +now_ms: 360000 (6m)
             cachesh> peek feed:home
             key:           feed:home
             state:         fresh
            @ wrong.transcript:9
            --- wrong.transcript
            +++ wrong.transcript (actual)
            @@ -9,6 +10,6 @@
             cachesh> peek feed:home
             key:           feed:home
            -state:         fresh
            +state:         stale
             value:         [{"id":1,"likes":3}]
             age_ms:        360000 (6m)
             expires_in_ms: 2340000 (39m)
            1 passed, 1 failed

            """, stderr: "", status: 1))
    }

    @Test func updateRewritesFailingOutputOnceAndThenChangesNothing() async throws {
        let wrong = feedTranscript.replacingOccurrences(of: "state:         stale", with: "state:         fresh")
        let dir = try directory(with: ["wrong.transcript": wrong])
        let first = try await cachesh(["--verify", "--update", "wrong.transcript"], in: dir)
        #expect(first == CacheshRun(stdout: """
            @ wrong.transcript:10
            --- wrong.transcript
            +++ wrong.transcript (actual)
            @@ -9,7 +9,7 @@
             now_ms: 360000 (6m)
             cachesh> peek feed:home
             key:           feed:home
            -state:         fresh
            +state:         stale
             value:         [{"id":1,"likes":3}]
             age_ms:        360000 (6m)
             expires_in_ms: 2340000 (39m)
            updated wrong.transcript:10
            0 passed, 1 failed, 1 updated

            """, stderr: "", status: 0))
        #expect(read(dir + "/wrong.transcript") == feedTranscript)
        let second = try await cachesh(["--verify", "--update", "wrong.transcript"], in: dir)
        #expect(second == CacheshRun(stdout: "1 passed, 0 failed, 0 updated\n", stderr: "", status: 0))
        #expect(read(dir + "/wrong.transcript") == feedTranscript)
    }

    @Test func updateIsRefusedWhenCIIsSet() async throws {
        let wrong = feedTranscript.replacingOccurrences(of: "stale", with: "fresh")
        let dir = try directory(with: ["wrong.transcript": wrong])
        let run = try await cachesh(["--verify", "--update", "wrong.transcript"], in: dir, environment: ["CI": "1"])
        #expect(run == CacheshRun(stdout: "", stderr: """
            cachesh: --update refuses to run when CI is set: a CI job must check transcripts, not rewrite them (unset CI to update)

            """, status: 2))
        #expect(read(dir + "/wrong.transcript") == wrong)
    }

    @Test func aMissingFileExitsTwoAndRunsNothing() async throws {
        let dir = try directory(with: ["feed.transcript": feedTranscript])
        let run = try await cachesh(["--verify", "feed.transcript", "missing.transcript"], in: dir)
        #expect(run == CacheshRun(stdout: "", stderr: "cachesh: cannot read missing.transcript: No such file or directory\n", status: 2))
        #expect(try await cachesh(["--verify"], in: dir).status == 2)
    }

    @Test func wildcardsMatchAndUpdateKeepsThem() async throws {
        let text = """
            cachesh> put feed:1 [1]
            keys: feed:1
            cachesh> advance 1500ms
            now:    [..]
            now_ms: 1500 (1s500ms)
            cachesh> get feed:1
            ...
            age_ms:        [..]
            ...
            cachesh> get feed:2
            ...
            error:         not found

            """
        let dir = try directory(with: ["w.transcript": text])
        #expect(try await cachesh(["--verify", "w.transcript"], in: dir).stdout == "1 passed, 0 failed\n")

        let wrong = text.replacingOccurrences(of: "now_ms: 1500", with: "now_ms: 1")
            .replacingOccurrences(of: "error:         not found", with: "error:         gone")
        try wrong.write(toFile: dir + "/w.transcript", atomically: true, encoding: .utf8)
        let run = try await cachesh(["--verify", "--update", "w.transcript"], in: dir)
        #expect(run.status == 0)
        #expect(run.stdout.hasSuffix("updated w.transcript:3\nupdated w.transcript:10\n0 passed, 1 failed, 1 updated\n"))
        #expect(read(dir + "/w.transcript") == text)
    }

    /// A copy of a terminal session (prompts, a continuation, an error, the last empty prompt with
    /// its trailing blank dropped) is a transcript. Written by hand in the interactive shell's
    /// layout: `cachesh> ` then the typed line, `...> ` for each further line of an open value.
    @Test func aPastedTerminalSessionIsATranscript() async throws {
        let pasted = """
            $ cachesh
            cachesh> put profile:42 {
            ...>   "id": 42,
            ...>   "name": "Ada"
            ...> }
            keys: profile:42
            cachesh> event entity 42 {"name": "Ada L."}
            keys: profile:42
            cachesh> peek profile:42
            key:           profile:42
            state:         fresh
            value:         {"id":42,"name":"Ada L."}
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            cachesh> get
            error: get needs KEY [--force] [--nowait] [--async]
            cachesh>

            """
        let dir = try directory(with: ["pasted.transcript": pasted])
        let run = try await cachesh(["--verify", "pasted.transcript"], in: dir)
        #expect(run == CacheshRun(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
    }

    /// A recording from here on starts with a `restore`, which holds no queued answer, no strict
    /// mode and no history: it writes the `server` commands that queue them again, and while it
    /// runs `timeline` and `explain` look back no further than its start, so its replay prints
    /// what the session printed; `record stop` gives the timeline its earlier changes back.
    @Test(arguments: [false, true])
    func aRecordingStartsWithTheServersQueuedAnswersAndNoEarlierHistory(json: Bool) async throws {
        let script = """
            put a:1 1
            invalidate a:1
            server set a:3 {"n": 1}
            server strict on
            server next a:2 {"t": "a b"} latency=5ms version=3
            server next a:3 --lost-answer error="gone away"
            server next a:3 --fail --commit
            server next a:4 --not-found
            server next a:4 --no-answer
            server next --validate --fail
            record out.transcript
            timeline a:1
            explain a:1
            get a:2
            mutate a:3 {"n": 2}
            advance 1s
            get a:4
            record stop
            timeline a:1

            """
        let dir = try directory(with: ["s.cachesh": script])
        let run = try await cachesh((json ? ["--json"] : []) + ["s.cachesh"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let recorded = try #require(read(dir + "/out.transcript"))
        #expect(recorded.contains("cachesh> server strict on\n"))
        #expect(recorded.contains("cachesh> server next a:2 latency=5ms value={\"t\":\"a b\"} version=3\n"), "\(recorded)")
        #expect(recorded.contains("cachesh> server next a:3 --lost-answer error=\"gone away\"\n"), "\(recorded)")
        #expect(recorded.contains("cachesh> server next a:3 --fail --commit\n"), "\(recorded)")
        #expect(recorded.contains("cachesh> server next a:4 --not-found\n"), "\(recorded)")
        #expect(recorded.contains("cachesh> server next a:4 --no-answer\n"), "\(recorded)")
        #expect(recorded.contains("cachesh> server next --validate --fail\n"))
        if !json {
            #expect(recorded.contains("cachesh> timeline a:1\n(no changes to a:1 this session)\n"), "\(recorded)")
            #expect(recorded.contains("reason:        invalidated (by a key, namespace, tag, push or validation)\n"), "\(recorded)")
            #expect(run.stdout.hasSuffix("* 2026-01-01T00:00:00.000Z stored a:1 fresh 1 (cache)\n* 2026-01-01T00:00:00.000Z invalidated a:1 stale 1 (cache)\n"),
                    "record stop joins the timeline again: \(run.stdout)")
        }
        let verified = try await cachesh(["--verify", "out.transcript"], in: dir)
        #expect(verified == CacheshRun(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(recorded)")
    }

    /// `restore FILE` while recording is written as `restore {SNAPSHOT}`, as `load FILE` is
    /// written as `load {CONFIG}`: the transcript names no other file, so it verifies under
    /// `--safe` after the file is gone; `--echo` writes the same.
    @Test func aRecordedRestoreOfAFileHoldsTheSnapshot() async throws {
        let dir = try directory(with: ["s.cachesh": "put a:1 1\nsnapshot snap.json\nrecord out.transcript\nput a:2 2\nrestore snap.json\npeek a:2\nrecord stop\n"])
        let run = try await cachesh(["s.cachesh"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("restored snap.json (1 entry, now 2026-01-01T00:00:00.000Z)\n"), "the session itself names the file")
        let recorded = try #require(read(dir + "/out.transcript"))
        #expect(!recorded.contains("snap.json"), "\(recorded)")
        #expect(recorded.components(separatedBy: "cachesh> restore {\"clock_start\"").count == 3, "\(recorded)")
        try FileManager.default.removeItem(atPath: dir + "/snap.json")
        let verified = try await cachesh(["--safe", "--verify", "out.transcript"], in: dir)
        #expect(verified == CacheshRun(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(recorded)")
    }

    /// A command written in another form (`restore {SNAPSHOT}` for `restore FILE`, `load {CONFIG}`
    /// for `load FILE`) keeps what it printed before its reply: the reads a restore ended (a read
    /// started with `--async` waits for a request the restore dropped), the events of the keys a
    /// configuration evicted. Both were left out, and the transcript did not verify.
    @Test(arguments: [false, true])
    func aRewrittenCommandKeepsWhatItPrintedBeforeItsReply(record: Bool) async throws {
        let script = "put feed:b 1\nsnapshot s0.json\n" + (record ? "record out.transcript\n" : "")
            + "get feed:a --async\nrestore s0.json\nadvance 1s\nwatch *\nput a:1 1\nload c.json\nkeys\n"
            + (record ? "record stop\n" : "")
        let dir = try directory(with: ["s.cachesh": script, "c.json": #"{"namespaces":{"a":{"max":0}}}"#])
        let run = try await cachesh((record ? [] : ["--echo"]) + ["s.cachesh"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let transcript = try #require(record ? read(dir + "/out.transcript") : run.stdout)
        #expect(transcript.contains("\nread at 2026-01-01T00:00:00.000Z:\n  key:           feed:a\n  state:         absent\n"),
                "\(transcript)")
        #expect(transcript.contains("* 2026-01-01T00:00:01.000Z evicted a:1 absent (cache)\nloaded configuration; keys: a:1\n"),
                "\(transcript)")
        if !record { try run.stdout.write(toFile: dir + "/out.transcript", atomically: true, encoding: .utf8) }
        for file in ["s0.json", "c.json"] { try FileManager.default.removeItem(atPath: dir + "/" + file) }
        // (`--echo` writes the `snapshot` command, which `--safe` refuses; the recording begins after it.)
        let verified = try await cachesh((record ? ["--safe"] : []) + ["--verify", "out.transcript"], in: dir)
        #expect(verified == CacheshRun(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(transcript)")
    }

    /// What no command after a `restore` can make again refuses a recording from here on, with
    /// one line, and writes no file: several clients, a persisted cache.
    @Test func aRecordingCannotStartFromStateASnapshotDoesNotHold() async throws {
        let dir = try directory(with: [
            "clients.cachesh": "put a:1 1\nclient tab2\nrecord out.transcript\n",
            "persisted.cachesh": "put a:1 1\npersist\nrecord out.transcript\n",
            "cleared.cachesh": "put a:1 1\npersist\npersist --clear\nrecord out.transcript\nget a:1\nrecord stop\n",
        ])
        let clients = try await cachesh(["clients.cachesh"], in: dir)
        #expect(clients.status == 1)
        #expect(clients.stderr == "clients.cachesh:3: error: record: the session has 2 clients, and a recording starts from one snapshot, "
                + "which holds the current client's cache alone: record before client NAME makes a second client (SPEC §3 Clients)\n")
        let persisted = try await cachesh(["persisted.cachesh"], in: dir)
        #expect(persisted.status == 1)
        #expect(persisted.stderr == "persisted.cachesh:3: error: record: the session has a persisted cache (persist), which a snapshot "
                + "does not keep: record before the first persist, or persist --clear first\n")
        #expect(read(dir + "/out.transcript") == nil, "nothing is written")
        let reading = try await cachesh(["-c", "server set a:1 1\nget a:1 --async\nrecord out.transcript"], in: dir)
        #expect(reading.stderr == "-c:3:1: error: record: a read started with --async is waiting for its answer (a:1), and a snapshot "
                + "does not hold it: record before the read starts, or after its answer (advance)\n")
        #expect(read(dir + "/out.transcript") == nil, "nothing is written")
        let cleared = try await cachesh(["cleared.cachesh"], in: dir)
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(try await cachesh(["--verify", "out.transcript"], in: dir).status == 0)
    }

    @Test(arguments: [false, true])
    func aRecordedBatchSessionVerifiesByteForByte(json: Bool) async throws {
        let script = """
            # A script that records itself.
            put feed:1 {"id": 1,
              "likes": [1, 2]}
            oops
            record out.transcript
            echo cachesh> x
            echo 'cachesh> x'
            echo ...
            echo ...> y
            echo \\back
            advance 1s
            get feed:1
            record stop
            now

            """
        let dir = try directory(with: ["s.cachesh": script])
        let run = try await cachesh((json ? ["--json"] : []) + ["s.cachesh"], in: dir)
        #expect(run.status == 1, "the script has an error")
        let recorded = try #require(read(dir + "/out.transcript"))
        // A batch keeps no history: the recording starts from the state at `record`, inline, on one line.
        #expect(recorded.hasPrefix("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n" + (json ? "cachesh> output json\n{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\n" : "")
                                   + "cachesh> restore {\"clock_start\""))
        #expect(!recorded.contains("...>   "), "the state is not pretty-printed")
        #expect(!recorded.contains("oops"), "the commands before record are in the snapshot, not the transcript")
        if !json {
            let restored = "restored (1 entry, now 2026-01-01T00:00:00.000Z)\n"
            #expect(recorded.components(separatedBy: restored).last == """
                cachesh> echo cachesh> x
                \\cachesh> x
                cachesh> echo 'cachesh> x'
                'cachesh> x'
                cachesh> echo ...
                \\...
                cachesh> echo ...> y
                \\...> y
                cachesh> echo \\back
                \\\\back
                cachesh> advance 1s
                now:    2026-01-01T00:00:01.000Z
                now_ms: 1000 (1s)
                cachesh> get feed:1
                key:           feed:1
                state:         fresh
                value:         {"id":1,"likes":[1,2]}
                source:        cache
                age_ms:        1000 (1s)
                expires_in_ms: 299000 (4m59s)
                tags:          []
                cachesh> # end of recording

                """)
        } else {
            #expect(recorded.contains("cachesh> echo ...\n{\"command\":\"echo\",\"ok\":true,\"text\":\"...\"}\n") || recorded.contains("cachesh> echo ...\n"))
        }
        let verify = try await cachesh(["--safe", "--verify", "out.transcript"], in: dir)
        #expect(verify == CacheshRun(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
    }

    @Test func aBatchSessionBegunWithConfigRecordsItsStateInline() async throws {
        let dir = try directory(with: [
            "conf.json": #"{"namespaces": {"feed": {"ttl": "1m", "max": 2}}, "server": {"latency": "40ms"}}"#,
            "s.cachesh": "put feed:1 1\nrecord out.transcript\nadvance 2m\nget feed:1\n",
        ])
        #expect(try await cachesh(["--config", "conf.json", "s.cachesh"], in: dir).status == 0)
        let recorded = try #require(read(dir + "/out.transcript"))
        #expect(recorded.hasPrefix("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n" + "cachesh> restore {\""))
        #expect(recorded.contains("\"max\":2,"), "the configuration is in the snapshot")
        #expect(!recorded.contains("conf.json"), "the transcript names no other file")
        try FileManager.default.removeItem(atPath: dir + "/conf.json")
        #expect(try await cachesh(["--safe", "--verify", "out.transcript"], in: dir).stdout == "1 passed, 0 failed\n")
    }

    @Test func anInlineLoadRunsUnderSafeAndNamesTheJSONPath() async throws {
        let dir = try directory(with: [
            "s.cachesh": "load {\"namespaces\": {\"feed\": {\"ttl\": \"1m\",\n  \"max\": 2}}}\nconfig\nload {\"namespaces\": {\"feed\": {\"ttl\": 5}}}\nconfig\n",
        ])
        let run = try await cachesh(["--safe", "s.cachesh"], in: dir)
        #expect(run.status == 1)
        #expect(run.stdout.hasPrefix("loaded configuration\nns feed ttl=1m max=2\n"))
        #expect(run.stdout.components(separatedBy: "ns feed ttl=1m max=2\n").count == 3, "the refused load changed nothing")
        #expect(run.stderr == "s.cachesh:4: error: load: $.namespaces.feed.ttl: expected a duration string like \"5m\"\n")
    }

    @Test(arguments: [false, true])
    func aSessionAfterRestoreRecordsItsSnapshotInline(json: Bool) async throws {
        let dir = try directory(with: [
            "s.cachesh": "put a 1\nadvance 2s\nsnapshot s.json\nclear\nrestore s.json\nget a\nrecord sub/out.transcript\nput b 2\n",
            "sub/.keep": "",
        ])
        #expect(try await cachesh((json ? ["--json"] : []) + ["s.cachesh"], in: dir).status == 0)
        #expect(read(dir + "/sub/out.snapshot.json") == nil, "no file beside the transcript")
        let recorded = try #require(read(dir + "/sub/out.transcript"))
        #expect(recorded.hasPrefix("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n" + (json ? "cachesh> output json\n{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\n" : "")
            + "cachesh> restore {\"clock_start\":\"2026-01-01T00:00:00.000Z\","))
        #expect(recorded.contains(json ? "{\"command\":\"restore\",\"entries\":1,\"now\":\"2026-01-01T00:00:02.000Z\",\"ok\":true}\n"
                                       : "restored (1 entry, now 2026-01-01T00:00:02.000Z)\n"))
        #expect(recorded.hasSuffix((json ? "cachesh> put b 2\n{\"command\":\"put\",\"keys\":[\"b\"],\"ok\":true}\n" : "cachesh> put b 2\nkeys: b\n") + "cachesh> # end of recording\n"))
        #expect(try await cachesh(["--safe", "--verify", "sub/out.transcript"], in: dir).stdout == "1 passed, 0 failed\n")
    }

    @Test func markdownRunsItsCacheshBlocksInOneSession() async throws {
        let readme = """
            # cachesh

            ```sh
            cachesh --verify README.md
            ```

            Store a value:

            ```cachesh
            cachesh> put a 1
            keys: a
            ```

            It is still there in the next block:

            ```cachesh
            cachesh> keys
            key  state  age_ms
            a    stale  0
            ```

            """
        let dir = try directory(with: ["README.md": readme, "docs/plain.md": "# No blocks\n\n```swift\nlet x = 1\n```\n"])
        let run = try await cachesh(["--verify", "README.md", "docs/plain.md"], in: dir)
        #expect(run == CacheshRun(stdout: """
            @ README.md:17
            --- README.md
            +++ README.md (actual)
            @@ -16,5 +16,5 @@
             ```cachesh
             cachesh> keys
             key  state  age_ms
            -a    stale  0
            +a    fresh  0
             ```
            docs/plain.md: no commands
            0 passed, 2 failed

            """, stderr: "", status: 1))
        #expect(try await cachesh(["--verify", "--update", "README.md"], in: dir).status == 0)
        #expect(read(dir + "/README.md") == readme.replacingOccurrences(of: "a    stale  0", with: "a    fresh  0"))
        #expect(try await cachesh(["--verify", "README.md"], in: dir).stdout == "1 passed, 0 failed\n")
        // A Markdown file without a cachesh block holds nothing to check: it fails, by name.
        #expect(try await cachesh(["--verify", "README.md", "docs/plain.md"], in: dir)
            == CacheshRun(stdout: "docs/plain.md: no commands\n1 passed, 1 failed\n", stderr: "", status: 1))
    }

    /// 500 transcripts of 20 commands run in one process; one of them differs.
    @Test func manyTranscriptsRunInOneProcess() async throws {
        var files: [String: String] = [:]
        for n in 0..<500 {
            var text = "Transcript \(n).\n"
            for j in 0..<5 {
                text += "cachesh> put k\(j) \(n)\nkeys: k\(j)\n"
                text += "cachesh> advance 1s\nnow:    2026-01-01T00:00:0\(j + 1).000Z\nnow_ms: \(j + 1)000 (\(j + 1)s)\n"
                text += "cachesh> get k\(j)\nkey:           k\(j)\nstate:         fresh\nvalue:         \(n == 250 && j == 4 ? -1 : n)\n...\n"
                text += "cachesh> echo \(n) \(j)\n\(n) \(j)\n"
            }
            files["t/\(n).transcript"] = text
        }
        let dir = try directory(with: files)
        let names = (0..<500).map { "t/\($0).transcript" }
        let run = try await cachesh(["--verify"] + names, in: dir)
        #expect(run.status == 1)
        #expect(run.stdout.hasSuffix("""
            @@ -55,7 +55,7 @@
             cachesh> get k4
             key:           k4
             state:         fresh
            -value:         -1
            +value:         250
             ...
             cachesh> echo 250 4
             250 4
            499 passed, 1 failed

            """))
        #expect(run.stdout.hasPrefix("@ t/250.transcript:55\n"))
    }
}

/// The "did you mean" hint the built shell gives for an unknown command `name`.
private func hint(for name: String, in directory: String) async -> String {
    let line = (try? await cachesh(["-c", name], in: directory).stderr) ?? ""
    let prefix = "-c:1:1: error: unknown command \"\(name)\""
    return String(line.dropFirst(prefix.count).dropLast())
}
