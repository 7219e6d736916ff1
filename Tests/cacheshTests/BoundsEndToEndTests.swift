import Foundation
import Testing

/// A stranger's input cannot make cachesh work or print without bound, nor escape `--safe`
/// through a restored schedule (SPEC §7.1): each bound as a user meets it.
@Suite struct BoundsEndToEndTests {
    /// Ten advances of a poll every 10ms: about 120,000 scheduled items, each advance within the
    /// runaway limit of one command.
    static let polling = "server latency 0ms\npoll feed:a every=10ms\n" + String(repeating: "advance 1m\n", count: 10)

    /// The budget of a stranger's input: 100,000 items and 16 per byte.
    static func budget(_ text: String) -> Int { 100_000 + 16 * text.utf8.count }

    @Test func aStrangersScriptHasABudgetOfScheduledWork() async throws {
        let unbounded = try await Cachesh.script(Self.polling)
        #expect(unbounded.status == 0 && unbounded.stderr.isEmpty, "\(unbounded.stderr)")

        let safe = try await Cachesh.script(Self.polling, options: ["--safe"])
        #expect(safe.status == 1)
        let message = "stopped after running \(Self.budget(Self.polling)) scheduled items in all (the budget of --safe and"
            + " --verify: 100000 and 16 per byte of input; raise it with --max-scheduled N)"
        let errors = safe.stderr.split(separator: "\n").map(String.init)
        #expect(errors.first == "script.cachesh:11: error: " + message, "\(safe.stderr)")
        // What ran before stays: the clock moved with each advance that ran whole.
        #expect(safe.stdout.contains("now_ms: 480000 (8m)"), "\(safe.stdout)")

        let raised = try await Cachesh.script(Self.polling, options: ["--safe", "--max-scheduled", "1000000"])
        #expect(raised.status == 0 && raised.stderr.isEmpty, "\(raised.stderr)")
        let lowered = try await Cachesh.script(Self.polling, options: ["--safe", "--max-scheduled=10"])
        #expect(lowered.stderr.hasPrefix("script.cachesh:3: error: stopped after running 10 scheduled items in all (the budget set by --max-scheduled)\n"),
                "\(lowered.stderr)")

        // -c and standard input count their bytes the same way.
        let commands = Self.polling.replacingOccurrences(of: "\n", with: ";")
        let dashC = try await Cachesh.run(["--safe", "-c", commands])
        // The command that passes the budget, the ninth `advance 1m`, starts at column 131.
        #expect(dashC.stderr.hasPrefix("-c:1:131: error: stopped after running \(Self.budget(commands)) scheduled items in all"), "\(dashC.stderr)")
        let stdin = try await Cachesh.run(["--safe"], stdin: Self.polling)
        #expect(stdin.stderr.hasPrefix("<stdin>:11: error: stopped after running \(Self.budget(Self.polling)) scheduled items in all"),
                "\(stdin.stderr)")
    }

    /// A client made after input was read gets what that input allows too, as every client has
    /// (SPEC §7.1: for each client): it got the base alone, 100,000 items.
    @Test func aClientMadeLaterHasTheBudgetOfTheInputReadBeforeIt() async throws {
        let padding = "echo " + String(repeating: "x", count: 10_000) + "\n"
        let script = padding + "client t2\npoll a:1 every=1ms\nadvance 1d\n"
        let safe = try await Cachesh.script(script, options: ["--safe"])
        #expect(safe.stderr.hasPrefix("script.cachesh:4: error: stopped after running \(Self.budget(script)) scheduled items in all"),
                "\(safe.stderr)")
    }

    @Test func aTranscriptHasTheSameBudgetUnderVerify() async throws {
        let echoed = try await Cachesh.script(Self.polling, options: ["--echo"])
        #expect(echoed.status == 0)
        let sandbox = try Sandbox()
        try sandbox.write("poll.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "poll.transcript"], in: sandbox.url)
        #expect(verified.status == 1)
        #expect(verified.stdout.contains("+error: stopped after running \(Self.budget(echoed.stdout)) scheduled items in all"),
                "\(verified.stdout.prefix(2000))")
        let raised = try await Cachesh.run(["--verify", "--max-scheduled", "200000", "poll.transcript"], in: sandbox.url)
        #expect(raised.stdout == "1 passed, 0 failed\n", "\(raised)")
    }

    /// A run between two `...` that nearly matches at every line of a large output: `--verify`
    /// spends at most 16,000,000 steps and 64 per byte of the transcript and its output, then
    /// fails the file at that command, and `--update` leaves it as it was.
    @Test func matchingAnOutputHasABudgetUnderVerify() async throws {
        let values = Array(repeating: "\"a\"", count: 20_000).joined(separator: ",")
        let head = "cachesh> put k [\(values),\"b\"]\nkeys: k\ncachesh> snapshot\n...\n"
        let hostile = head + String(repeating: "[..]\"a\",\n", count: 10_000) + "[..]\"b\"\n...\n"
        let sandbox = try Sandbox()
        try sandbox.write("hostile.transcript", hostile)
        let verified = try await Cachesh.run(["--safe", "--verify", "hostile.transcript"], in: sandbox.url)
        #expect(verified.status == 1)
        #expect(verified.stdout == "0 passed, 1 failed\n", "\(verified)")
        #expect(verified.stderr == "hostile.transcript:3: error: matching this output against its expected lines takes more than"
                + " --verify spends (16000000 steps and 64 per byte of the transcript and of its output): a run between two ..."
                + " that nearly matches at almost every line? Fewer [..] lines in it would do\n", "\(verified.stderr)")
        // Without CI in the environment, where --update refuses to run.
        let updated = try await Cachesh.run(["-u", "CI", Cachesh.binaryPath, "--verify", "--update", "hostile.transcript"],
                                            in: sandbox.url, executable: "/usr/bin/env")
        #expect(updated.status == 1, "\(updated)")
        #expect(updated.stderr.contains("matching this output against its expected lines takes more than"), "\(updated)")
        #expect(try String(contentsOf: sandbox.url.appendingPathComponent("hostile.transcript"), encoding: .utf8) == hostile)
        // The same output matched by a short run, and by distinct `[..]` lines, passes.
        try sandbox.write("fine.transcript", head + "[..]\"a\",\n[..]\"b\"\n...\n")
        #expect(try await Cachesh.run(["--safe", "--verify", "fine.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
    }

    /// A file that `record` wrote starts with a line that says how a whole recording ends, and
    /// ends with that line: cut at any command, it fails `--verify`; without its first line (a
    /// transcript written or cut by hand) it verifies as before.
    @Test func aRecordingCutShortFailsVerify() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", "record r.transcript\nns feed ttl=1m\nput feed:a 1\nadvance 2m\nget feed:a\nrecord stop\n")
        #expect(try await Cachesh.run(["s.cachesh"], in: sandbox.url).status == 0)
        let whole = try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8)
        #expect(try await Cachesh.run(["--safe", "--verify", "r.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
        let lines = whole.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let cuts = lines.indices.filter { $0 > 1 && lines[$0].hasPrefix("cachesh> ") }
        #expect(cuts.count == 5, "\(whole)")
        for cut in cuts {
            let cutShort = lines[..<cut].joined(separator: "\n") + "\n"
            try sandbox.write("cut.transcript", cutShort)
            let verified = try await Cachesh.run(["--safe", "--verify", "cut.transcript"], in: sandbox.url)
            #expect(verified.status == 1 && verified.stdout == "0 passed, 1 failed\n", "cut at line \(cut): \(verified)")
            #expect(verified.stderr == "cut.transcript:\(cut): error: a recording cut short: it starts with \"# recorded by cachesh"
                    + " (a whole recording ends with # end of recording)\" but its last command is not \"# end of recording\" (the file"
                    + " lost its end; to verify part of a recording on purpose, delete its first line)\n", "\(verified)")
            try sandbox.write("by-hand.transcript", lines[1..<cut].joined(separator: "\n") + "\n")
            #expect(try await Cachesh.run(["--safe", "--verify", "by-hand.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
        }
    }

    @Test func theBudgetOptionGoesWithSafeOrVerify() async throws {
        let alone = try await Cachesh.run(["--max-scheduled", "5", "-c", "now"])
        #expect(alone == Outcome(stdout: "", stderr: "cachesh: --max-scheduled goes with --safe or --verify\n", status: 2))
        let bad = try await Cachesh.run(["--safe", "--max-scheduled", "many", "-c", "now"])
        #expect(bad.status == 2 && bad.stderr.contains("--max-scheduled"), "\(bad)")
    }

    @Test func atNestsAtMostSixteenDeep() async throws {
        let sixteen = try await Cachesh.run(["-c", String(repeating: "at 0ms ", count: 16) + "echo deep\nadvance 1ms"])
        #expect(sixteen.status == 0 && sixteen.stdout.contains("  deep\n"), "\(sixteen)")
        let seventeen = try await Cachesh.script(String(repeating: "at 0ms ", count: 17) + "echo deep\n")
        #expect(seventeen == Outcome(stdout: "", stderr: "script.cachesh:1: error: at nested more than 16 deep (at D at D ... COMMAND)\n",
                                     status: 1))
        // Output used to grow with the square of the line: 70 KB printed 700 MB.
        let long = try await Cachesh.script(String(repeating: "at 0ms ", count: 10_000) + "echo deep\nadvance 1ms\n")
        #expect(long.status == 1 && long.stdout.utf8.count < 1_000, "\(long.stdout.prefix(300))")
    }

    @Test func sourceNestsAtMostSixteenDeep() async throws {
        // A file that sources itself: the script and 16 levels of source run, the 17th is refused.
        let outcome = try await Cachesh.script("echo level\nsource script.cachesh\n")
        #expect(outcome.status == 1)
        #expect(outcome.stdout == String(repeating: "level\n", count: 17), "\(outcome)")
        #expect(outcome.stderr.hasPrefix("script.cachesh:2: error: source nested deeper than 16 files (a source loop?)\n"), "\(outcome)")
    }

    @Test func replayCountsItsCombinationsBeforeMakingThem() async throws {
        let files = ["t.txt": "a\nb\n"]
        let over = try await Cachesh.script("replay t.txt max=1..1000000000 ttl=1s,2s,3s\n", files: files)
        #expect(over.stderr == "script.cachesh:1: error: replay: 264 combinations; at most 256 in one replay\n", "\(over)")
        // A long line of distinct ranges (1.9 GB before) is refused at once.
        let ranges = (1...20_000).map { "\($0)..1000000000000000000" }.joined(separator: ",")
        let many = try await Cachesh.script("replay t.txt max=\(ranges)\n", files: files)
        #expect(many.stderr == "script.cachesh:1: error: replay: more than 256 combinations; at most 256 in one replay\n", "\(many)")
        // Repeated sizes are one size, however many.
        let repeated = try await Cachesh.script("replay t.txt max=" + Array(repeating: "5", count: 50_000).joined(separator: ",") + "\n",
                                                files: files)
        #expect(repeated.status == 0 && repeated.stdout.split(separator: "\n").count == 3, "\(repeated)")
    }

    @Test func theTimelineKeepsAtMost64MiBOfValues() async throws {
        let big = String(repeating: "x", count: 1 << 20)
        let script = "put k {\"n\":0,\"s\":\"\(big)\"}\n" + String(repeating: "event patch k {\"n\":{\"$inc\":1}}\n", count: 80)
            + "timeline other\n"
        let outcome = try await Cachesh.script(script)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // 81 changes of just over 1 MiB each: the last 63 are kept.
        #expect(outcome.stdout.hasSuffix("(no changes to other this session)\n(18 earlier changes are not kept: the timeline keeps the last"
                                         + " 10000, and at most 64 MiB of values)\n"), "\(outcome.stdout.suffix(300))")
    }

    /// A snapshot whose schedule would read or write a file when the clock moves is refused, in
    /// every mode, naming the file: nested in `at`, or after other commands on its lines.
    @Test func aRestoredScheduleMayNotNameAFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", "a\n")
        for (scheduled, path) in [("snapshot out.json", "out.json"), ("at 1s at 1s replay t.txt csv=rows.csv", "t.txt"),
                                  ("diff other.json", "other.json"), ("echo x\nsource evil.cachesh", "evil.cachesh"),
                                  ("record trace.transcript", "trace.transcript")] {
            let made = try await Cachesh.run(["-c", "at 1s echo placeholder; snapshot state.json"], in: sandbox.url)
            #expect(made.status == 0, "\(made)")
            var text = try String(contentsOf: sandbox.url.appendingPathComponent("state.json"), encoding: .utf8)
            let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [scheduled], options: .fragmentsAllowed), as: UTF8.self)
            text = text.replacingOccurrences(of: "\"echo placeholder\"", with: String(quoted.dropFirst().dropLast()))
            try sandbox.write("state.json", text)
            let expected = "error: state.json: pending.scheduled[0].command: schedules a command that reads or writes a file (\(path)):"
                + " a restored snapshot may not"
            for options in [[], ["--safe"]] {
                let restored = try await Cachesh.run(options + ["-c", "restore \(options.isEmpty ? "state.json" : text); advance 5s"],
                                                     in: sandbox.url)
                #expect(restored.status == 1)
                if options.isEmpty {
                    #expect(restored.stderr.hasPrefix("-c:1:1: " + expected), "\(restored.stderr)")
                } else {
                    #expect(restored.stderr.hasPrefix("-c:1:1: error: restore: pending.scheduled[0].command: schedules a command that reads"
                                                      + " or writes a file (\(path))"), "\(restored.stderr)")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("out.json").path))
            #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("rows.csv").path))
        }
        // What reads no file still restores: a snapshot printed, an inline document.
        let made = try await Cachesh.run(["-c", "at 1s snapshot; at 2s echo x; snapshot ok.json"],
                                         in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let restored = try await Cachesh.run(["-c", "restore ok.json"], in: sandbox.url)
        #expect(restored.status == 0, "\(restored)")
        let inline = try await Cachesh.run(["-c", "restore {\"version\":1}; at 1s restore {\"version\":1}"], in: sandbox.url)
        #expect(inline.stderr.contains("restore cannot be scheduled with at"), "\(inline)")
    }

    /// `--transcribe` refuses a recording whose first state schedules a file command (its
    /// transcript would run it on the first advance, also under `--verify`).
    @Test func transcribeRefusesAScheduleThatNamesAFile() async throws {
        let sandbox = try Sandbox()
        var lines = try await TranscribeEndToEndTests.lines()
        let made = try await Cachesh.run(["-c", "at 1s snapshot out.json; snapshot"], in: sandbox.url)
        guard let begin = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any], begin["record"] as? String == "begin",
              var snapshot = begin["snapshot"] as? [String: Any],
              let shell = try JSONSerialization.jsonObject(with: Data(made.stdout.drop { $0 != "{" }.utf8)) as? [String: Any],
              let scheduled = (shell["pending"] as? [String: Any])?["scheduled"]
        else { Issue.record("unexpected recording: \(lines[1].prefix(300))"); return }
        var pending = snapshot["pending"] as? [String: Any] ?? [:]
        pending["scheduled"] = scheduled
        snapshot["pending"] = pending
        var record = begin
        record["snapshot"] = snapshot
        lines[1] = String(decoding: try JSONSerialization.data(withJSONObject: record), as: UTF8.self)
        try sandbox.write("evil.recording", lines.joined(separator: "\n") + "\n")
        let outcome = try await Cachesh.run(["--transcribe", "evil.recording"], in: sandbox.url)
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("schedules a command that reads or writes a file (out.json)"), "\(outcome)")
    }

    /// Every refusal by `--safe` fails a transcript under `--safe --verify`, as `source` does.
    @Test func everySafeRefusalFailsATranscript() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", "a\n")
        try sandbox.write("s.json", "{}")
        for command in ["replay t.txt", "replay t.txt csv=out.csv", "source x.cachesh", "load c.json", "restore s.json",
                        "snapshot s2.json", "diff s.json", "record r.transcript"] {
            // The expected output claims the refusal, so only the refusal itself can fail it.
            try sandbox.write("t.transcript", "cachesh> \(command)\n[..]\n")
            let outcome = try await Cachesh.run(["--safe", "--verify", "t.transcript"], in: sandbox.url)
            #expect(outcome.status == 1 && outcome.stdout.hasSuffix("0 passed, 1 failed\n"), "\(command): \(outcome)")
            #expect(outcome.stderr.hasPrefix("t.transcript:1: error: --safe: commands may not"), "\(command): \(outcome)")
        }
    }
}
