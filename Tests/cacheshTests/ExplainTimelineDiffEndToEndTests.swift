import Foundation
import Testing

/// `explain`, `timeline` and `diff` (SPEC §3): why an entry is in its state, what happened to it
/// whether or not it was watched, and how two states differ.
@Suite struct ExplainTimelineDiffEndToEndTests {
    @Test func explainSaysWhyAnEntryIsStaleAndWhenItWillExpire() async throws {
        let run = try await Cachesh.run(["-c", "ns feed ttl=10m stale=1m; put feed:a 1 tags=x; advance 30s; invalidate tag:x; explain feed:a"])
        #expect(run.status == 0)
        #expect(run.stdout.hasSuffix("""
            key:           feed:a
            state:         stale
            reason:        invalidated at 2026-01-01T00:00:30.000Z; it would turn stale by age at 2026-01-01T00:01:00.000Z
            stored_at:     2026-01-01T00:00:00.000Z
            age_ms:        30000 (30s)
            stale_at:      2026-01-01T00:01:00.000Z
            expires_at:    2026-01-01T00:10:00.000Z
            expires_in_ms: 570000 (9m30s)
            pending:       (none)
            fetching:      (no request in flight)
            tags:          ["x"]
            ids:           []
            recency_rank:  1 of 1 (1 is the most recently used; the last is evicted first)

            """))
    }

    @Test(arguments: [
        ("advance 11m", "expired at 2026-01-01T00:10:00.000Z: older than its namespace's ttl"),
        ("advance 2m", "stale since 2026-01-01T00:01:00.000Z: older than its namespace's stale threshold"),
        ("expire feed:a in=5s; advance 6s", "expired at 2026-01-01T00:00:05.000Z, a time set by expire"),
        ("now", "fresh: stored 0ms ago; stale at 2026-01-01T00:01:00.000Z"),
    ])
    func explainNamesTheReason(_ steps: String, _ reason: String) async throws {
        let run = try await Cachesh.run(["--json", "-c", "ns feed ttl=10m stale=1m; put feed:a 1; \(steps); explain feed:a"])
        let last = try #require(run.stdout.split(separator: "\n").last)
        #expect(last.contains("\"reason\":\"\(reason)\""), "\(last)")
    }

    @Test func explainShowsPendingMutationsIdsAndRecency() async throws {
        let run = try await Cachesh.run(["-c", "put feed:b {\"id\":7}; put feed:c 1; mutate feed:b {\"n\":1}; explain feed:b"])
        #expect(run.stdout.contains("pending:       mutation sent {\"n\":1}\n"))
        #expect(run.stdout.contains("ids:           [\"7\"]\n"))
        #expect(run.stdout.contains("recency_rank:  1 of 2 "))
        let absent = try await Cachesh.run(["-c", "put a 1; evict a; explain a"])
        #expect(absent.stdout.hasSuffix("reason: a is not cached: evicted at 2026-01-01T00:00:00.000Z\n"))
    }

    @Test func timelineShowsWhatAWatchWouldHavePrinted() async throws {
        let steps = "ns feed ttl=10m; put feed:a 1; put feed:b 2; invalidate feed:a; advance 11m"
        let watched = try await Cachesh.run(["-c", "watch feed:a; " + steps])
        let run = try await Cachesh.run(["-c", steps + "; timeline feed:a"])
        let observerLines = watched.stdout.split(separator: "\n").filter { $0.hasPrefix("* ") }
        #expect(observerLines.count == 3)
        #expect(run.stdout.hasSuffix(observerLines.joined(separator: "\n") + "\n"))
        let namespace = try await Cachesh.run(["-c", steps + "; timeline feed:*"])
        #expect(namespace.stdout.split(separator: "\n").filter { $0.hasPrefix("* ") }.count == 5)
        let none = try await Cachesh.run(["-c", "put a 1; timeline b"])
        #expect(none.stdout.hasSuffix("(no changes to b this session)\n"))
        let unknown = try await Cachesh.run(["-c", "timeline nope:*"])
        #expect(unknown.stderr.hasPrefix("-c:1:1: error: timeline: unknown namespace \"nope\""))
    }

    @Test func timelineIsBoundedAndSaysWhatItDropped() async throws {
        let script = "ns k max=1\n" + (0..<10_005).map { "put k:\($0 % 7) \($0)" }.joined(separator: "\n") + "\ntimeline *\n"
        let run = try await Cachesh.run([], stdin: script)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.last == "(\(10_005 * 2 - 1 - 10_000) earlier changes are not kept: the timeline keeps the last 10000, and at most 64 MiB of values)")
        #expect(lines.filter { $0.hasPrefix("* ") }.count == 10_000)
    }

    @Test func diffComparesSnapshotsEntryByEntry() async throws {
        let sandbox = try Sandbox()
        let first = try await Cachesh.run(["-c", "put a 1; put b 2 tags=t; put c 3; snapshot one.json; put a 10; evict c; put d 4; snapshot two.json; diff one.json two.json; diff two.json"],
                                    in: sandbox.url)
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.hasSuffix("""
            --- one.json (now 2026-01-01T00:00:00.000Z)
            +++ two.json (now 2026-01-01T00:00:00.000Z)
            - c  fresh  3
            + d  fresh  4
            ~ a
                value: 1 -> 10
            1 removed, 1 added, 1 changed, 1 the same
            --- two.json (now 2026-01-01T00:00:00.000Z)
            +++ now (now 2026-01-01T00:00:00.000Z)
            0 removed, 0 added, 0 changed, 3 the same

            """))
    }

    /// `diff {SNAPSHOT}` takes the document itself and reads no file (so it runs under `--safe`),
    /// showing the same differences as the file holding it, the side named `{SNAPSHOT}` (JSON null).
    @Test func diffTakesASnapshotGivenInTheCommand() async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["-c", "put a 1; put c 3; snapshot one.json"], in: sandbox.url)
        #expect(made.status == 0)
        // (Without its last newline, which would end the command.)
        let one = try String(contentsOf: sandbox.url.appendingPathComponent("one.json"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let script = "put a 10; put d 4\ndiff one.json\ndiff \(one)\ndiff \(one) \(one)"
        let run = try await Cachesh.run(["--safe", "-c", "put a 1; put c 3\ndiff \(one)\ndiff \(one) \(one)"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("""
            --- {SNAPSHOT} (now 2026-01-01T00:00:00.000Z)
            +++ now (now 2026-01-01T00:00:00.000Z)
            0 removed, 0 added, 0 changed, 2 the same
            --- {SNAPSHOT} (now 2026-01-01T00:00:00.000Z)
            +++ {SNAPSHOT} (now 2026-01-01T00:00:00.000Z)
            0 removed, 0 added, 0 changed, 2 the same

            """))
        // The same differences from the file and from the document.
        let both = try await Cachesh.run(["-c", script], in: sandbox.url)
        let parts = both.stdout.components(separatedBy: "--- ")
        #expect(parts.count == 4, "\(both)")
        #expect(parts[1].replacingOccurrences(of: "one.json", with: "{SNAPSHOT}") == parts[2])
        let json = try await Cachesh.run(["--json", "-c", "diff \(one) \(one)"], in: sandbox.url)
        #expect(json.stdout.contains(#""new":null"#) && json.stdout.contains(#""old":null"#), "\(json)")
        let bad = try await Cachesh.run(["-c", #"diff {"format": "cachesh-snapshot"}"#], in: sandbox.url)
        #expect(bad.status == 1 && bad.stderr.hasPrefix("-c:1:1: error: diff: version: "), "\(bad)")
    }

    /// A recording (and `--echo`) writes `diff FILE [FILE2]` with each file's snapshot in place
    /// of its name, as it writes `restore FILE`: the transcript names no other file and verifies
    /// under `--safe`, the files gone.
    @Test func aRecordedDiffHoldsItsSnapshotsAndVerifiesUnderSafe() async throws {
        let sandbox = try Sandbox()
        let run = try await Cachesh.run(["-c", """
            put a 1; put c 3; snapshot one.json; put a 10; snapshot two.json; snapshot now
            record r.transcript
            put d 4
            diff one.json
            diff one.json two.json
            diff now
            record stop
            """], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let recorded = try String(contentsOf: sandbox.url.appendingPathComponent("r.transcript"), encoding: .utf8)
        // (A file named `now` too: only a missing second side is the session now.)
        #expect(!recorded.contains("one.json") && !recorded.contains("two.json") && !recorded.contains("diff now"), "\(recorded)")
        #expect(recorded.contains("""
            --- {SNAPSHOT} (now 2026-01-01T00:00:00.000Z)
            +++ now (now 2026-01-01T00:00:00.000Z)
            + d  fresh  4
            ~ a
                value: 1 -> 10
            0 removed, 1 added, 1 changed, 1 the same
            """), "\(recorded)")
        for name in ["one.json", "two.json", "now"] { try FileManager.default.removeItem(at: sandbox.url.appendingPathComponent(name)) }
        #expect(try await Cachesh.run(["--safe", "--verify", "r.transcript"], in: sandbox.url) == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
        // `--echo` prints the same entries, so its transcript verifies alone too.
        let made = try await Cachesh.run(["-c", "put a 1; snapshot one.json"], in: sandbox.url)
        #expect(made.status == 0)
        let echoed = try await Cachesh.run(["--echo", "-c", "put a 2\ndiff one.json"], in: sandbox.url)
        try sandbox.write("e.transcript", echoed.stdout)
        try FileManager.default.removeItem(at: sandbox.url.appendingPathComponent("one.json"))
        #expect(try await Cachesh.run(["--safe", "--verify", "e.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n", "\(echoed)")
    }

    @Test func diffReadsFilesSoSafeRefusesItAndAFileThatIsNoSnapshotIsAnError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("x.json", "{\"a\": 1}")
        let safe = try await Cachesh.run(["--safe", "-c", "diff x.json"], in: sandbox.url)
        #expect(safe.stderr.hasPrefix("-c:1:1: error: --safe: commands may not read files"))
        #expect(safe.status == 1)
        let bad = try await Cachesh.run(["-c", "diff x.json"], in: sandbox.url)
        #expect(bad.stderr == "-c:1:1: error: x.json: format: not a cachesh snapshot (expected \"cachesh-snapshot\")\n")
    }

    /// `diff` reads a snapshot as `restore` does: what `restore` refuses, `diff` refuses with the
    /// same error, instead of showing a state no session could be in.
    @Test func diffRefusesWhatRestoreRefuses() async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["-c", "put a:1 1\nsnapshot good.json"], in: sandbox.url)
        #expect(made.status == 0)
        let good = try String(contentsOf: sandbox.url.appendingPathComponent("good.json"), encoding: .utf8)
        for (name, bad) in [
            ("seq.json", good.replacingOccurrences(of: #""seq": 2,"#, with: #""seq": 9223372036854775807,"#)),
            ("twice.json", good.replacingOccurrences(of: #""seq": 2,"#, with: #""seq": 2, "seq": 3,"#)),
            ("state.json", good.replacingOccurrences(of: #""state": "fresh""#, with: #""state": "expired""#)),
        ] {
            #expect(bad != good, "\(name)")
            try sandbox.write(name, bad)
            let restore = try await Cachesh.run(["-c", "restore \(name)"], in: sandbox.url)
            let diff = try await Cachesh.run(["-c", "diff \(name)"], in: sandbox.url)
            #expect(restore.status == 1 && restore.stderr.hasPrefix("-c:1:1: error: \(name): "), "\(restore)")
            #expect(diff.status == 1 && diff.stdout.isEmpty, "\(diff)")
            #expect(diff.stderr == restore.stderr)
        }
    }
}
