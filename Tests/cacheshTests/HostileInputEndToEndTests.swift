import Foundation
import Testing

/// Inputs made to break cachesh, each once a defect: what the user sees now (SPEC §5.4, §6, §7).
@Suite struct HostileInputEndToEndTests {
    /// A snapshot of a few KB whose scheduled commands each claim to come from line 10,000,000
    /// restores at once in little memory (it used to pad each command with that many lines and
    /// died for want of memory), and the commands still report that line.
    @Test func scheduledCommandLinesCostNoMemory() async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["-c", "at 1ms stats nope; snapshot state.json"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let text = try String(contentsOf: sandbox.url.appendingPathComponent("state.json"), encoding: .utf8)
        guard var document = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              var pending = document["pending"] as? [String: Any],
              let scheduled = pending["scheduled"] as? [[String: Any]], var item = scheduled.first
        else { Issue.record("no scheduled command in \(text)"); return }
        item["line"] = 10_000_000
        pending["scheduled"] = (1...400).map { id -> [String: Any] in
            var copy = item
            copy["id"] = id
            return copy
        }
        document["pending"] = pending
        document["seq"] = 1000
        let inline = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        // Inline, as a stranger's transcript or script would hold it: --safe does not stop it.
        try sandbox.write("big.cachesh", "restore \(inline)\nadvance 1ms\n")
        let outcome = try await Cachesh.run(["--safe", "big.cachesh"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stdout.hasPrefix("restored (0 entries, now 2026-01-01T00:00:00.000Z)\n"), "\(outcome)")
        let errors = outcome.stderr.split(separator: "\n")
        #expect(errors.count == 400, "\(outcome.stderr.prefix(300))")
        #expect(errors.first == "-c:10000000: error: (at 2026-01-01T00:00:00.001Z) stats: unknown namespace \"nope\" (known: default)")
    }

    /// A poll (or an active key's refetch after `focus`) of a key whose namespace nothing had
    /// named yet, while another namespace had a `dedupe=` window, killed the process with no
    /// message and no output (found by fuzzing). The fetches now go out and the script ends well.
    @Test func aFetchThatNamesANewNamespaceWhileAnotherDedupes() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("poll.cachesh", "ns k dedupe=1s\nserver set f:e 7\npoll f:e every=1s\nadvance 1100ms\npeek f:e\n")
        let polled = try await Cachesh.run(["poll.cachesh"], in: sandbox.url)
        #expect(polled.status == 0, "\(polled)")
        #expect(polled.stderr.isEmpty, "\(polled)")
        #expect(polled.stdout.contains("polling f:e every 1s"), "\(polled)")
        #expect(polled.stdout.contains("value:         7"), "\(polled)")
        try sandbox.write("focus.cachesh", "ns k dedupe=1s\nserver set g:1 8\nactivate g:1\nfocus\nadvance 1s\npeek g:1\n")
        let focused = try await Cachesh.run(["--json", "focus.cachesh"], in: sandbox.url)
        #expect(focused.status == 0, "\(focused)")
        #expect(focused.stdout.contains(#""value":8"#), "\(focused)")
    }

    /// A few KB of entity events that each put the entity back into itself eight times used to
    /// grow one value exponentially (an 8 KB script reached 839 MB). Under `--safe`, the script
    /// now stops growing it at the limit: each further event is one error line at its line, and
    /// the value stays as the last accepted event left it.
    @Test func entityEventsCannotGrowAValueWithoutBound() async throws {
        let sandbox = try Sandbox()
        let copy = #"{"id": 7, "pad": "\#(String(repeating: "x", count: 100))"}"#
        let patch = "{" + "abcdefgh".map { "\"\($0)\": \(copy)" }.joined(separator: ", ") + "}"
        let script = #"put big:1 {"id": 7}"# + "\n" + String(repeating: "event entity 7 \(patch)\n", count: 12) + "stats\n"
        try sandbox.write("grow.cachesh", script)
        let outcome = try await Cachesh.run(["--safe", "grow.cachesh"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome.stderr)")
        let errors = outcome.stderr.split(separator: "\n")
        #expect(errors.count >= 6 && errors.allSatisfy { $0.contains(": error: the patch applies to more than ") }, "\(outcome.stderr)")
        #expect(errors.first?.hasPrefix("grow.cachesh:") == true)
        #expect(outcome.stdout.contains("stale_hits"), "the script ran to its end")
    }

    /// A snapshot whose sequence number is near the end of 64 bits was restored, and the next
    /// command trapped (restored into a store, every later write). Refused now, with its path,
    /// and the session goes on.
    @Test func aSequenceNumberNearTheEndOf64BitsIsRefused() async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["-c", "put a:1 1\nsnapshot s.json"], in: sandbox.url)
        #expect(made.status == 0)
        let text = try String(contentsOf: sandbox.url.appendingPathComponent("s.json"), encoding: .utf8)
        try sandbox.write("s.json", text.replacingOccurrences(of: "\n  \"seq\": 2,", with: "\n  \"seq\": 9223372036854775806,"))
        let outcome = try await Cachesh.run(["-c", "restore s.json\nput a:2 2\nget a:2"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == "-c:1:1: error: s.json: seq: 9223372036854775806 is past the largest sequence number, 9007199254740992 (2^53)\n")
        #expect(outcome.stdout.hasPrefix("keys: a:2\n"))
    }

    /// U+202E and U+2028 in a value, a key or an echo reach the terminal escaped, as control
    /// characters do: a stranger's data cannot reorder or break the lines a user reads.
    @Test func bidirectionalAndLineSeparatorCharactersAreEscaped() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bidi.cachesh", "put k:1 \"a\u{202E}b\u{2028}c\"\nget k:1\nput k:\u{2067}x 1\necho \"\u{2029}\u{200F}\"\n")
        for mode in [[], ["--json"]] {
            let outcome = try await Cachesh.run(mode + ["bidi.cachesh"], in: sandbox.url)
            #expect(outcome.status == 0, "\(outcome)")
            for raw in ["\u{202E}", "\u{2028}", "\u{2067}", "\u{2029}", "\u{200F}"] { #expect(!outcome.stdout.contains(raw)) }
            #expect(outcome.stdout.contains(#"a\u202eb\u2028c"#) && outcome.stdout.contains(#"k:\u2067x"#), "\(outcome.stdout)")
        }
    }

    /// A command scheduled by a scheduled command (`at 1ms at 1ms ...`) reports its error with
    /// the file and line that scheduled it (it used to print a bare `error: ...`, and JSON
    /// `"file": null`), and a file it names resolves beside that script, not the working directory.
    @Test func nestedScheduledCommandsKeepTheirPlace() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("sub/nested.cachesh", "echo start\nat 1ms at 1ms stats nope\nat 1ms at 1ms snapshot here.json\nat 1ms snapshot once.json\nadvance 5ms\n")
        let human = try await Cachesh.run(["sub/nested.cachesh"], in: sandbox.url)
        #expect(human.status == 1, "\(human)")
        #expect(human.stderr == "sub/nested.cachesh:2: error: (at 2026-01-01T00:00:00.002Z) stats: unknown namespace \"nope\" (known: default)\n")
        #expect(FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("sub/here.json").path))
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("here.json").path))
        #expect(FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("sub/once.json").path))
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("once.json").path))

        let json = try await Cachesh.run(["--json", "sub/nested.cachesh"], in: sandbox.url)
        #expect(json.stdout.contains(#"{"column":null,"command":"stats","error":"(at 2026-01-01T00:00:00.002Z) stats: unknown namespace \"nope\" (known: default)","file":"sub/nested.cachesh","line":2,"ok":false}"#),
                "\(json)")

        // Under --safe the nested refusal names its place too.
        let safe = try await Cachesh.run(["--safe", "-c", "at 1ms at 1ms snapshot x.json; advance 5ms"], in: sandbox.url)
        // The column of the command that ran: `snapshot x.json`, scheduled by the `at` that `at` scheduled.
        #expect(safe.stderr == "-c:1:15: error: (at 2026-01-01T00:00:00.002Z) --safe: commands may not write files (x.json)\n", "\(safe)")
    }

    /// A transcript with CRLF line endings reads as with LF: its output lines are expected output,
    /// never run (the whole file used to be one command, so an output line such as
    /// `snapshot evil.json` ran), and one that matches passes.
    @Test func crlfTranscriptsAreReadLineByLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("evil.transcript", "cachesh> put a:1 1\r\nsnapshot evil.json\r\n")
        let evil = try await Cachesh.run(["--verify", "evil.transcript"], in: sandbox.url)
        #expect(evil.status == 1, "\(evil)")
        #expect(evil.stdout == """
            @ evil.transcript:1
            --- evil.transcript
            +++ evil.transcript (actual)
            @@ -1,2 +1,2 @@
             cachesh> put a:1 1
            -snapshot evil.json
            +keys: a:1
            0 passed, 1 failed

            """, "\(evil)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("evil.json").path))

        try sandbox.write("good.transcript", "cachesh> put a:1 [1,\r\n...> 2]\r\nkeys: a:1\r\ncachesh> get a:1\r\n"
                          + "key:           a:1\r\nstate:         fresh\r\nvalue:         [1,2]\r\n...\r\n")
        let good = try await Cachesh.run(["--verify", "good.transcript"], in: sandbox.url)
        #expect(good == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(good)")

        // A CRLF script's command that spans lines is recorded with its continuation prompt.
        try sandbox.write("crlf.cachesh", "record rec.transcript\r\nput a:1 [1,\r\n2]\r\n")
        let recorded = try await Cachesh.run(["crlf.cachesh"], in: sandbox.url)
        #expect(recorded.status == 0, "\(recorded)")
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("rec.transcript"), encoding: .utf8)
        #expect(transcript.hasSuffix("cachesh> put a:1 [1,\n...> 2]\nkeys: a:1\ncachesh> # end of recording\n"), "\(transcript)")
        let replayed = try await Cachesh.run(["--verify", "rec.transcript"], in: sandbox.url)
        #expect(replayed.status == 0, "\(replayed)")
    }

    /// A damaged transcript's control characters are escaped in the diff, as in all output:
    /// none reaches the terminal raw (they used to be printed as they stood, NUL and ESC included).
    @Test func diffsEscapeTheTranscriptsControlCharacters() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("damaged.transcript", "cachesh> echo hi\n\u{1B}]0;pwned\u{07}\u{0}x\n")
        let outcome = try await Cachesh.run(["--verify", "damaged.transcript"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stdout.contains("\n-\\u001b]0;pwned\\u0007\\u0000x\n+hi\n"), "\(outcome)")
        #expect(!outcome.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(outcome)")
    }

    /// `--store` takes only a regular file (or a new one): a directory, a FIFO or a device is
    /// refused with one line, exit 2, before anything is locked or written (SQLite used to open
    /// them and fail with "disk I/O error" or "no such table"), and so are a `-wal` that is not a
    /// regular file and a lock file that is a symbolic link, which used to be followed: the file
    /// it led to was truncated to the process id.
    @Test func storeFilesMustBeRegular() async throws {
        let sandbox = try Sandbox()
        let dir = sandbox.url.path
        #expect(mkfifo(dir + "/fifo.db", 0o644) == 0)
        try FileManager.default.createDirectory(atPath: dir + "/folder.db", withIntermediateDirectories: false)
        let made = try await Cachesh.run(["--store", "s.db", "-c", "put a:1 1"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        #expect(mkfifo(dir + "/s.db-wal", 0o644) == 0)
        try sandbox.write("precious.txt", "keep me\n")
        try FileManager.default.createSymbolicLink(atPath: dir + "/t.db-lock", withDestinationPath: "precious.txt")

        let cases: [(store: String, message: String)] = [
            ("folder.db", "cachesh: cannot open store folder.db: is a directory"),
            ("fifo.db", "cachesh: cannot open store fifo.db: is a FIFO, not a regular file"),
            ("s.db", "cachesh: cannot open store s.db: \(try realPath(dir))/s.db-wal is a FIFO, not a regular file"),
            ("t.db", "cachesh: cannot open store t.db: cannot create its lock file \(try realPath(dir))/t.db-lock: is a symbolic link, not a regular file"),
        ]
        for c in cases {
            let outcome = try await Cachesh.run(["--store", c.store, "-c", "put b:1 1"], in: sandbox.url)
            #expect(outcome == Outcome(stdout: "", stderr: c.message + "\n", status: 2), "\(c.store): \(outcome)")
        }
        #expect(try String(contentsOfFile: dir + "/precious.txt", encoding: .utf8) == "keep me\n")
        var st = stat()
        #expect(lstat(dir + "/t.db-lock", &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        #expect(lstat(dir + "/fifo.db", &st) == 0 && st.st_mode & S_IFMT == S_IFIFO)
        #expect(!FileManager.default.fileExists(atPath: dir + "/t.db"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/fifo.db-lock"))

        // The same store opens once its -wal is a file again, with what it held.
        unlink(dir + "/s.db-wal")
        let reopened = try await Cachesh.run(["--store", "s.db", "-c", "keys"], in: sandbox.url)
        #expect(reopened.stdout == "key  state  age_ms\na:1  fresh  0\n", "\(reopened)")
    }

    private func realPath(_ path: String) throws -> String {
        guard let resolved = realpath(path, nil) else { throw HarnessError(description: "no \(path)") }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `replay`'s numbers at the end of their range: a curve up to `Int64.max` ends there (it used
    /// to trap converting a size past it), and a `step=` whose request times would pass the range
    /// of a trace's times is an error at the request's line, nothing written (the product wrapped
    /// round: times went backwards and the replay reported `over -2ms of virtual time`).
    @Test func replayNumbersAtTheirLimits() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", "a\nb\nc\n")
        let curve = try await Cachesh.run(["--json", "-c", "replay trace.txt max=1..9223372036854775807"], in: sandbox.url)
        #expect(curve.status == 0, "\(curve.stderr)")
        #expect(curve.stdout.contains(#""max":9223372036854775807"#), "\(curve.stdout.suffix(300))")
        // And its chart, whose axis is labelled up to that size (that trapped too).
        for (sizes, label) in [("1..9223372036854775807", ">5000000000000000000</text>"), ("1,9223372036854775807", ">9223372036854775807</text>")] {
            let plot = try await Cachesh.run(["-c", "replay trace.txt max=\(sizes) plot=curve.svg"], in: sandbox.url)
            #expect(plot.status == 0, "\(plot.stderr)")
            let svg = try String(contentsOf: sandbox.url.appendingPathComponent("curve.svg"), encoding: .utf8)
            #expect(svg.contains(label), "\(svg.suffix(500))")
        }

        let step = try await Cachesh.run(["-c", "replay trace.txt step=9223372036854775807ms csv=rows.csv"], in: sandbox.url)
        #expect(step == Outcome(stdout: "", stderr: "trace.txt:2: error: the time of request 2 (step=9223372036854775807ms each) is out of range\n",
                                status: 1), "\(step)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("rows.csv").path))

        // A long step within the range is replayed as it is.
        let long = try await Cachesh.run(["-c", "replay trace.txt step=1000000d"], in: sandbox.url)
        #expect(long.stdout.hasPrefix("replayed 3 requests of trace.txt over 2000000d of virtual time"), "\(long)")
    }

    /// `advance` past the clock's end is refused and runs nothing: it used to move the clock less
    /// than asked, to the end, and run the work clamped there (`echo never`) and the polls due at
    /// that same instant, again and again up to the runaway limit.
    @Test func advancePastTheClocksEndIsRefused() async throws {
        let outcome = try await Cachesh.script("""
            at 106751991167d echo never
            advance 9223372036854775807ms
            advance 106751991167d
            now
            advance 106751970713d7h12m55s806ms
            advance 1ms
            pending

            """)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == """
            script.cachesh:2: error: advance 9223372036854775807ms: the clock would reach its end (+292278994-08-17T07:12:55.807Z); it can move at most 106751970713d7h12m55s806ms from now
            script.cachesh:3: error: advance 106751991167d: the clock would reach its end (+292278994-08-17T07:12:55.807Z); it can move at most 106751970713d7h12m55s806ms from now
            script.cachesh:6: error: advance 1ms: the clock would reach its end (+292278994-08-17T07:12:55.807Z)

            """, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n"), "\(outcome.stdout.prefix(600))")
        #expect(!outcome.stdout.contains("\n  never\n"), "\(outcome.stdout.suffix(600))")
        #expect(outcome.stdout.hasSuffix("now:    +292278994-08-17T07:12:55.806Z\nnow_ms: 9223370269629175806 (106751970713d7h12m55s)\n"
                                          + "due    in     what  detail\n"
                                          + "never  never  at    echo never\n"), "\(outcome.stdout.suffix(600))")
    }

    /// A command that waits for an answer due at the clock's end (`server latency 106751991167d`,
    /// a per-key latency, `server next --no-answer` with no `timeout=`, a request in flight due
    /// there) is refused at its line, nothing sent, counted, touched or moved: it used to run the
    /// clock to its end, after which every `advance` was refused. A wait that finds out only while
    /// waiting (a retry sent with a latency a scheduled command set) stops before the end.
    @Test func waitingForAnAnswerAtTheClocksEndIsRefused() async throws {
        let end = "would never end:"
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", """
            ns lfu policy=lfu max=3 ttl=1s
            ns sv policy=sieve max=3 ttl=1s
            put lfu:a 1
            put sv:a 1
            put sv:b 2
            advance 2s
            server latency 1ms
            server latency 106751991167d lfu:a
            server latency 106751991167d sv:a
            server latency 106751991167d new:x
            server next --validate latency=106751991167d
            snapshot before.json
            get lfu:a
            get sv:a --force
            get new:x
            mget sv:b sv:a lfu:a
            validate
            server next sv:b --no-answer
            mget sv:b
            snapshot after.json
            server latency 1ms lfu:a
            server next lfu:a --no-answer
            ns lfu timeout=1s
            get lfu:a
            server latency 106751991167d
            get sv:x --nowait
            server latency 1ms
            get sv:x
            advance 1s
            ns r retry=1 backoff=1s
            server latency 1s
            server fail 1
            at 1500ms server latency 106751991167d
            get r:x
            now
            advance 1d
            server latency 106751991167d at:x
            at 1ms get at:x
            advance 1ms
            server latency 1ms at:x
            get at:x

            """)
        let outcome = try await Cachesh.run(["script.cachesh"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == """
            script.cachesh:13: error: waiting for the answer to fetch lfu:a \(end) it is answered 106751991167d from now; nothing was sent (ns lfu timeout=D gives up on it; get lfu:a --nowait reads without waiting, and cancel lfu:a then drops the request)
            script.cachesh:14: error: waiting for the answer to fetch sv:a \(end) it is answered 106751991167d from now; nothing was sent (ns sv timeout=D gives up on it; get sv:a --nowait reads without waiting, and cancel sv:a then drops the request)
            script.cachesh:15: error: waiting for the answer to fetch new:x \(end) it is answered 106751991167d from now; nothing was sent (ns new timeout=D gives up on it; get new:x --nowait reads without waiting, and cancel new:x then drops the request)
            script.cachesh:16: error: waiting for the answer to fetch sv:b sv:a lfu:a \(end) it is answered 106751991167d from now; nothing was sent (ns sv timeout=D gives up on it; get sv:b --nowait reads without waiting, and cancel sv:b then drops the request)
            script.cachesh:17: error: waiting for the answer to validate \(end) it is answered 106751991167d from now; nothing was sent
            script.cachesh:19: error: waiting for the answer to fetch sv:b \(end) its answer never comes (server next --no-answer) and no timeout= gives up on it; nothing was sent (ns sv timeout=D gives up on it; get sv:b --nowait reads without waiting, and cancel sv:b then drops the request)
            script.cachesh:28: error: waiting for the answer to fetch sv:x \(end) the request in flight is due there; nothing was done (ns sv timeout=D gives up on it; get sv:x --nowait reads without waiting, and cancel sv:x then drops the request)
            script.cachesh:34: error: waiting for the answer to fetch r:x \(end) stopped waiting at 2026-01-01T00:00:06.000Z, the request still in flight (ns r timeout=D gives up on it; get r:x --nowait reads without waiting, and cancel r:x then drops the request)
            script.cachesh:41: error: waiting for the answer to fetch at:x \(end) the request in flight is due there; nothing was done (ns at timeout=D gives up on it; get at:x --nowait reads without waiting, and cancel at:x then drops the request)

            """, "\(outcome.stderr)")
        // Nothing of the refused commands happened: not a request, a count, a touch, a namespace, a tick.
        // What changed between the two snapshots is the answer `server next sv:b --no-answer`
        // queued (a snapshot keeps it, SPEC §5.2), and nothing else.
        let before = try String(contentsOf: sandbox.url.appendingPathComponent("before.json"), encoding: .utf8)
        let after = try String(contentsOf: sandbox.url.appendingPathComponent("after.json"), encoding: .utf8)
        let queued = "\"next\": {\n      \"sv:b\": [\n        {\n          \"outcome\": \"no_answer\"\n        }\n      ]\n    },\n    "
        #expect(after == before.replacingOccurrences(of: "\"next_validations\": [", with: queued + "\"next_validations\": ["), "\(after)")
        // The scripted answer was not taken: the next read takes it, and times out.
        #expect(outcome.stdout.contains("error:         timed out after 1s\n"), "\(outcome.stdout)")
        // A read run by at does not wait: its request is sent, due at the end, and the clock moves on.
        #expect(outcome.stdout.hasSuffix("pending:       true\nnow:    2026-01-02T00:00:06.001Z\nnow_ms: 86406001 (1d6s)\nserver: latency of at:x 1ms\n"),
                "\(outcome.stdout.suffix(300))")
        // The wait that stopped left the clock where it stopped, and it moves on.
        #expect(outcome.stdout.contains("now:    2026-01-01T00:00:06.000Z\nnow_ms: 6000 (6s)\nnow:    2026-01-02T00:00:06.000Z\nnow_ms: 86406000 (1d6s)\n"),
                "\(outcome.stdout.suffix(300))")
    }

    /// An error that quotes a word of megabytes is one line a person can read: its middle is left
    /// out, saying how much (it used to quote the whole word, a 10 MB line; NUL bytes, escaped,
    /// six times that). The command after it runs.
    @Test func anErrorQuotingAHugeWordIsShortened() async throws {
        let word = String(repeating: "x", count: 4 << 20)
        let outcome = try await Cachesh.script(word + "\nget \u{1}" + String(repeating: "y", count: 100_000) + "\nnow\n")
        #expect(outcome.status == 1)
        #expect(outcome.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n", "\(outcome.stdout.prefix(300))")
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(outcome.stderr.prefix(300))")
        #expect(lines.allSatisfy { $0.utf8.count < 1100 }, "\(lines.map(\.utf8.count))")
        #expect(lines.first?.hasPrefix("script.cachesh:1: error: unknown command \"xxxx") == true)
        #expect(lines.first?.contains("xxx ... (4193383 bytes left out) ... xxx") == true, "\(lines.first ?? "")")
        #expect(lines.first?.hasSuffix("xxx\" (try help)") == true)
        #expect(lines.last?.hasPrefix(#"script.cachesh:2: error: bad key "\u0001yyy"#) == true, "\(lines.last ?? "")")
    }

    /// Binary input stops at its first NUL byte with one line, exit 2: `cachesh < /dev/zero`
    /// used to read without end (in bounded memory, but never finishing, since the over-long
    /// command it reported had no line feed to end at). The whole lines before the NUL run.
    @Test func binaryInputStopsAtItsFirstNUL() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.url.appendingPathComponent("out"), err = sandbox.url.appendingPathComponent("err")
        let child = try await Child.start(Cachesh.binaryPath, [], in: sandbox.url, stdin: .file(URL(fileURLWithPath: "/dev/zero")),
                                          stdout: .file(out), stderr: .file(err))
        #expect(try await child.exitStatus(within: Cachesh.timeLimit) == 2)
        #expect(try String(contentsOf: err, encoding: .utf8) == "<stdin>:1: error: a NUL byte: this is not text (binary input?); stopped reading\n")

        let piped = try await Cachesh.run([], stdin: "put a:1 1\nput b:1 [1,\n2,\u{0}3]\nkeys\n")
        #expect(piped == Outcome(stdout: "keys: a:1\n",
                                 stderr: "<stdin>:3: error: a NUL byte: this is not text (binary input?); stopped reading\n",
                                 status: 2), "\(piped)")

        try sandbox.write("nul.cachesh", "put a:1 1\necho a\u{0}b\nkeys\n")
        let script = try await Cachesh.run(["nul.cachesh"], in: sandbox.url)
        #expect(script == Outcome(stdout: "keys: a:1\n",
                                  stderr: "nul.cachesh:2: error: a NUL byte: this is not text (binary input?); stopped reading\n",
                                  status: 2), "\(script)")
    }

    /// Bytes that are not UTF-8 are refused, not repaired: each used to become U+FFFD, so two
    /// different keys (`a:\xFF`, `a:\xFE`) silently became one.
    @Test func inputThatIsNotUTF8IsRefused() async throws {
        let sandbox = try Sandbox()
        func write(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: sandbox.url.appendingPathComponent(name))
        }
        // A script: the whole lines before the bad byte run (not a command still open there).
        try write("latin1.cachesh", Array("put a:1 1\nput b:1 [1,\n\"caf".utf8) + [0xE9] + Array("\"]\nkeys\n".utf8))
        let script = try await Cachesh.run(["latin1.cachesh"], in: sandbox.url)
        #expect(script == Outcome(stdout: "keys: a:1\n",
                                  stderr: "latin1.cachesh:3: error: not UTF-8 text (byte 0xE9): cachesh reads UTF-8; stopped reading\n",
                                  status: 2), "\(script)")
        // Standard input the same.
        let child = try await Child.start(Cachesh.binaryPath, [], in: sandbox.url,
                                          stdin: .file(sandbox.url.appendingPathComponent("latin1.cachesh")))
        #expect(try await child.exitStatus(within: Cachesh.timeLimit) == 2)

        // A file a command reads is refused whole; the session goes on.
        try write("keys.cachesh", Array("put a:".utf8) + [0xFF] + Array(" 1\nput a:".utf8) + [0xFE] + Array(" 2\n".utf8))
        let sourced = try await Cachesh.run(["-c", "source keys.cachesh; keys"], in: sandbox.url)
        #expect(sourced == Outcome(stdout: "(no entries)\n",
                                   stderr: "-c:1:1: error: cannot read keys.cachesh: not UTF-8 text (byte 0xFF on line 1)\n", status: 1),
                "\(sourced)")
        try write("bad.transcript", Array("cachesh> echo ".utf8) + [0xC3] + Array("\n".utf8))
        let verified = try await Cachesh.run(["--verify", "bad.transcript"], in: sandbox.url)
        #expect(verified == Outcome(stdout: "", stderr: "cachesh: cannot read bad.transcript: not UTF-8 text (byte 0xC3 on line 1)\n",
                                    status: 2), "\(verified)")
    }

    /// A flag given twice is an error as an option given twice is, and so is a flag with its
    /// negation (the last one used to win silently); the namespace is as it was.
    @Test func repeatedAndContradictoryFlagsAreRefused() async throws {
        let outcome = try await Cachesh.script("""
            ns feed --purgeable
            get feed:1 --force --force
            event entity 1 {"x":1} --own --own
            ns feed --purgeable --no-purgeable
            ns feed ttl=1m --no-purgeable --purgeable
            ns

            """)
        #expect(outcome.status == 1)
        #expect(outcome.stderr == """
            script.cachesh:2: error: get: flag --force given twice
            script.cachesh:3: error: event: flag --own given twice
            script.cachesh:4: error: ns: --purgeable and --no-purgeable do not go together
            script.cachesh:5: error: ns: --no-purgeable and --purgeable do not go together

            """, "\(outcome)")
        #expect(outcome.stdout.hasPrefix("ns feed ttl=5m --purgeable\n"), "\(outcome)")
        #expect(outcome.stdout.hasSuffix("""
            namespace  ttl  stale  max  policy  stale-if-error  timeout  purgeable  entries
            feed       5m   -      -    lru     -               -        yes        0

            """), "\(outcome.stdout)")
    }

    /// A file name given on the command line is escaped in cachesh's own messages, as everything
    /// it prints is: a name holding an escape sequence (a stranger's bug report unpacked) used to
    /// reach the terminal raw in `cannot read`, `cannot open store` and `--verify`'s diff and
    /// `no commands` lines.
    @Test func fileNamesInMessagesAreEscaped() async throws {
        let sandbox = try Sandbox()
        let escape = "\u{1B}]0;pwned\u{07}"
        try sandbox.write("w\(escape).transcript", "cachesh> echo hi\n")
        try sandbox.write("e\(escape).transcript", "")
        let runs = [
            (["x\(escape).cachesh"], "", #"cachesh: cannot read x\u001b]0;pwned\u0007.cachesh: No such file or directory"# + "\n"),
            (["--store", "/nonexistent/s\(escape).db", "-c", "keys"], "",
             #"cachesh: cannot open store /nonexistent/s\u001b]0;pwned\u0007.db: cannot create its lock file /nonexistent/s\u001b]0;pwned\u0007.db-lock: No such file or directory"# + "\n"),
            (["--verify", "w\(escape).transcript"], #"""
                @ w\u001b]0;pwned\u0007.transcript:1
                --- w\u001b]0;pwned\u0007.transcript
                +++ w\u001b]0;pwned\u0007.transcript (actual)
                @@ -1 +1,2 @@
                 cachesh> echo hi
                +hi
                0 passed, 1 failed

                """#, ""),
            (["--verify", "e\(escape).transcript"], "e\\u001b]0;pwned\\u0007.transcript: no commands\n0 passed, 1 failed\n", ""),
        ]
        for (arguments, stdout, stderr) in runs {
            let outcome = try await Cachesh.run(arguments, in: sandbox.url)
            #expect(outcome.stdout == stdout && outcome.stderr == stderr, "\(arguments): \(outcome)")
        }
    }
}

extension HostileInputEndToEndTests {
    /// Every flag and option of the command line given twice is bad usage, as a shell command's
    /// flag given twice is an error: the last one used to win silently (`--json --json` ran).
    @Test func commandLineFlagsAndOptionsGivenTwiceAreRefused() async throws {
        let flags = ["--json", "--bail", "--safe", "--echo", "--no-pager", "--wait", "--verify", "--update"]
        for flag in flags {
            let outcome = try await Cachesh.run([flag, "-c", "now", flag])
            #expect(outcome == Outcome(stdout: "", stderr: "cachesh: flag \(flag) given twice\n", status: 2), "\(flag): \(outcome)")
        }
        let options: [(first: [String], second: [String], name: String)] = [
            (["-c", "now"], ["-c", "now"], "-c"),
            (["--config", "a.json"], ["--config=b.json"], "--config"),
            (["--store=a.db"], ["--store", "b.db"], "--store"),
            (["--transcribe", "a.jsonl"], ["--transcribe", "a.jsonl"], "--transcribe"),
            (["--junit", "a.xml"], ["--junit=b.xml"], "--junit"),
        ]
        for option in options {
            let outcome = try await Cachesh.run(option.first + ["--json"] + option.second)
            #expect(outcome == Outcome(stdout: "", stderr: "cachesh: option \(option.name) given twice\n", status: 2),
                    "\(option.name): \(outcome)")
        }
        // Once each is still fine.
        let once = try await Cachesh.run(["--json", "--bail", "-c", "now"])
        #expect(once == Outcome(stdout: #"{"command":"now","now":"2026-01-01T00:00:00.000Z","now_ms":0,"ok":true}"# + "\n", stderr: "", status: 0),
                "\(once)")
    }
}

extension HostileInputEndToEndTests {
    /// A push rule's target with a placeholder no push can fill is refused at the `load` line
    /// with its JSON path, and nothing of the configuration is applied; so is one whose name
    /// `push NAME=VALUE` cannot type, and the same target in `load {CONFIG}`, `--config` and a
    /// restored snapshot. `profile:{user` used to load, as a key with a brace in it.
    @Test func brokenPushPlaceholdersAreRefused() async throws {
        let problems: [(target: String, problem: String)] = [
            ("profile:{user", "the placeholder {user is not closed (write {name})"),
            ("profile:{}", "the placeholder {} has no name (write {name})"),
            ("profile:{a{b}}", "placeholders do not nest: { inside {a{"),
            ("profile:b}", "} with no { before it"),
            ("tag:{user}}", "} with no { before it"),
            ("profile:{User}", "push cannot fill {User}: a placeholder's name is a lowercase letter, then lowercase letters, "
                + "digits or -, as push NAME=VALUE takes it"),
        ]
        for (target, problem) in problems {
            let config = #"{"namespaces": {"profile": {"ttl": "1h"}}, "push": {"blocked": {"refresh": ["friends:*"], "# +
                #""invalidate": ["friends:*", "\#(target)"]}}}"#
            let outcome = try await Cachesh.script("ns friends ttl=1m\nload cfg.json\nconfig\n", files: ["cfg.json": config])
            #expect(outcome == Outcome(stdout: "ns friends ttl=1m\nns friends ttl=1m\nid-field: id\nserver latency: 100ms\n",
                                       stderr: "script.cachesh:2: error: cfg.json: $.push.blocked.invalidate[1]: \"\(target)\": \(problem)\n",
                                       status: 1), "\(target): \(outcome)")
            let inline = try await Cachesh.run(["-c", "load \(config); config"])
            #expect(inline.stderr == "-c:1:1: error: load: $.push.blocked.invalidate[1]: \"\(target)\": \(problem)\n", "\(inline)")
            #expect(inline.stdout == "id-field: id\nserver latency: 100ms\n", "\(inline)")
        }
        let sandbox = try Sandbox()
        try sandbox.write("cfg.json", #"{"push": {"blocked": {"evict": ["profile:{user"]}}}"#)
        let initial = try await Cachesh.run(["--config", "cfg.json", "-c", "now"], in: sandbox.url)
        #expect(initial == Outcome(stdout: "", stderr: "cachesh: cfg.json: $.push.blocked.evict[0]: \"profile:{user\": "
                                   + "the placeholder {user is not closed (write {name})\n", status: 2), "\(initial)")

        // A snapshot holding such a rule (written by hand, or by an app's cache) is refused too.
        try sandbox.write("good.json", #"{"push": {"blocked": {"evict": ["profile:{user}"]}}}"#)
        let made = try await Cachesh.run(["-c", "load good.json; snapshot s.json"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let text = try String(contentsOf: sandbox.url.appendingPathComponent("s.json"), encoding: .utf8)
        try sandbox.write("bad.json", text.replacingOccurrences(of: "profile:{user}", with: "profile:{user"))
        let restored = try await Cachesh.run(["-c", "restore bad.json; config"], in: sandbox.url)
        #expect(restored.stderr.hasPrefix("-c:1:1: error: "), "\(restored)")
        #expect(restored.stderr.hasSuffix("push.blocked.evict[0]: the placeholder {user is not closed (write {name})\n"), "\(restored)")
        #expect(restored.stdout == "id-field: id\nserver latency: 100ms\n", "\(restored)")
    }
}

extension HostileInputEndToEndTests {
    /// How to run cachesh on a store it may only read: as it is, or as root (who may write any
    /// file) through `setpriv` as the user nobody; nil when neither can be done here.
    static func readOnlyRunner() -> (executable: String?, prefix: [String])? {
        if geteuid() != 0 { return (nil, []) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return nil }
        return ("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Cachesh.binaryPath])
    }

    /// A store file without write permission opens read-only: what changes nothing the store
    /// keeps runs (`keys`, `peek`, `stats`, `snapshot`), what would change it (`get` too: a read
    /// counts and reorders) is refused at its line saying the store is read-only, the session goes
    /// on, and the file is left as it was, with no `-wal`, `-shm` or `-lock` beside it. Even
    /// `keys` used to fail with `cannot write store FILE: attempt to write a readonly database`.
    @Test(.enabled(if: readOnlyRunner() != nil, "setpriv is needed to drop root's right to write any file"))
    func aReadOnlyStoreRunsWhatChangesNothing() async throws {
        let runner = try #require(Self.readOnlyRunner())
        let sandbox = try Sandbox()
        // The user the read-only run is may make files here (the lock, SQLite's -wal and -shm).
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: sandbox.url.path)
        let made = try await Cachesh.run(["--store", "st.db", "-c", "put a 1; put b 2; get a"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let store = sandbox.url.appendingPathComponent("st.db")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store.path)
        let bytes = try Data(contentsOf: store)
        try sandbox.write("script.cachesh", "keys\npeek a\nput c 3\nget a\nstats reset\nstats\nsnapshot\n")
        try sandbox.write("c.json", "{}")

        let outcome = try await Cachesh.run(runner.prefix + ["--store", "st.db", "script.cachesh"], in: sandbox.url,
                                            executable: runner.executable)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == """
            script.cachesh:3: error: the store st.db is read-only: put would change it
            script.cachesh:4: error: the store st.db is read-only: get would change it (a read counts in the statistics and makes the entry the most recent; peek changes nothing)
            script.cachesh:5: error: the store st.db is read-only: stats reset would change it

            """, "\(outcome)")
        #expect(outcome.stdout.hasPrefix("""
            key  state  age_ms
            b    fresh  0
            a    fresh  0
            key:           a
            state:         fresh
            value:         1
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            counter           default  total
            hits              1        1

            """), "\(outcome.stdout)")
        #expect(outcome.stdout.contains(#""format": "cachesh-snapshot""#), "\(outcome.stdout)")

        let configured = try await Cachesh.run(runner.prefix + ["--store", "st.db", "--config", "c.json", "-c", "keys"],
                                               in: sandbox.url, executable: runner.executable)
        #expect(configured == Outcome(stdout: "", stderr: "cachesh: --config: the store st.db is read-only: loading a configuration would change it\n",
                                      status: 2), "\(configured)")

        #expect(try Data(contentsOf: store) == bytes)
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(left == ["c.json", "script.cachesh", "st.db"], "\(left)")
    }
}
