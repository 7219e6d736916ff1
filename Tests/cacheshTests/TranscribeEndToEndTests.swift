import CacheCore
import CacheServer
import Foundation
import Testing

/// `cachesh --transcribe RECORDING`: an app's recording file becomes a transcript that
/// `--verify` replays; a damaged, truncated or newer recording is refused at its line.
@Suite struct TranscribeEndToEndTests {
    /// Records a short session on the virtual clock to `path` (as an app records to a file).
    static func record(to path: String) async throws {
        let server = SimulatedServer()
        server.set("feed:home", ["posts": [["id": 1, "likes": 3, "title": "a {b} #c "]]], at: TimeText.virtualEpochMs)
        let cache = Cache(origin: server)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000, stale: 1_000))
        await cache.watch(.all)
        try await cache.startRecording(to: path)
        _ = try await cache.startRead("feed:home")
        _ = try await cache.startRead("profile:1")
        try await cache.advance(by: 2_000)
        _ = try await cache.read("feed:home")
        _ = try await cache.event(entity: "1", patch: Patch(["likes": ["$inc": 1]]))
        try await cache.advance(by: 100)
        _ = await cache.clear()
        try await cache.stopRecording()
    }

    @Test(arguments: [false, true])
    func aRecordingFileTranscribesAndVerifiesUnderSafe(json: Bool) async throws {
        let sandbox = try Sandbox()
        let recording = sandbox.url.appendingPathComponent("session.recording").path
        try await Self.record(to: recording)
        let transcribed = try await Cachesh.run(["--transcribe", "session.recording"] + (json ? ["--json"] : []), in: sandbox.url)
        #expect(transcribed.status == 0 && transcribed.stderr.isEmpty, "\(transcribed)")
        #expect(transcribed.stdout.hasPrefix(json ? "cachesh> output json\n" : "cachesh> restore {\"clock_start\":"))
        #expect(transcribed.stdout.contains("cachesh> get feed:home --async\n"))
        try sandbox.write("session.transcript", transcribed.stdout)
        let verified = try await Cachesh.run(["--verify", "--safe", "session.transcript"], in: sandbox.url)
        #expect(verified.status == 0, "\(verified)\n\(transcribed.stdout)")
    }

    /// A policy change during a recording is typed back as `ns NAME policy=P`, and the
    /// transcript verifies: the evictions it causes are the same on replay.
    @Test func aPolicyChangeTranscribesAsNsPolicy() async throws {
        let sandbox = try Sandbox()
        let recording = sandbox.url.appendingPathComponent("policy.recording").path
        let server = SimulatedServer()
        for i in 1...4 { server.set("page:\(i)", .int(Int64(i)), at: TimeText.virtualEpochMs) }
        let cache = Cache(origin: server)
        try await cache.startRecording(to: recording)
        try await cache.defineNamespace("page", PolicyChange(max: .some(2), eviction: .sieve))
        for key in ["page:1", "page:2", "page:1", "page:3", "page:4", "page:1"] { _ = try await cache.read(key) }
        try await cache.stopRecording()
        let transcribed = try await Cachesh.run(["--transcribe", "policy.recording"], in: sandbox.url)
        #expect(transcribed.status == 0, "\(transcribed)")
        #expect(transcribed.stdout.contains("cachesh> ns page max=2 policy=sieve\nns page ttl=5m max=2 policy=sieve\n"))
        try sandbox.write("policy.transcript", transcribed.stdout)
        let verified = try await Cachesh.run(["--verify", "policy.transcript"], in: sandbox.url)
        #expect(verified.status == 0, "\(verified)\n\(transcribed.stdout)")
    }

    /// The recordings `--transcribe` used to refuse for their active keys — a key made active and
    /// not watched, an unwatch of an active key, `unwatch()` with keys active — become transcripts
    /// with `activate`, which `--verify` replays, in both output modes.
    @Test(arguments: ["not-watched", "unwatch-key", "unwatch-all"], [false, true])
    func activeKeysTranscribeAndVerify(_ name: String, json: Bool) async throws {
        let sandbox = try Sandbox()
        let server = SimulatedServer()
        server.set("feed:home", 1, at: TimeText.virtualEpochMs)
        server.set("badge:n", 2, at: TimeText.virtualEpochMs)
        let cache = Cache(origin: server)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 1_000))
        _ = try await cache.read("feed:home")
        try await cache.startRecording(to: sandbox.url.appendingPathComponent("app.recording").path)
        let expected: String
        switch name {
        case "not-watched":
            await cache.setActive("feed:home", true)
            expected = "cachesh> activate feed:home\nfeed:home is active\n"
        case "unwatch-key":
            await cache.watch(.key("feed:home"))
            await cache.setActive("feed:home", true)
            _ = await cache.unwatch(.key("feed:home"))
            expected = "cachesh> unwatch feed:home\nstopped watching feed:home\ncachesh> activate feed:home\nfeed:home is active\n"
        default:
            await cache.watch(.key("feed:home"))
            await cache.setActive("feed:home", true)
            await cache.setActive("badge:n", true)
            _ = await cache.unwatch(nil)
            expected = "cachesh> unwatch --keep-active\nwatching nothing\ncachesh> server next feed:home "
        }
        // The feed expires and is refetched because it is still active; focus fetches the rest.
        try await cache.advance(by: 1_500)
        _ = await cache.focus()
        _ = await cache.peek("feed:home")
        try await cache.stopRecording()
        let transcribed = try await Cachesh.run(["--transcribe", "app.recording"] + (json ? ["--json"] : []), in: sandbox.url)
        #expect(transcribed.status == 0 && transcribed.stderr.isEmpty, "\(transcribed)")
        if !json { #expect(transcribed.stdout.contains(expected), "\(transcribed.stdout)") }
        #expect(transcribed.stdout.contains("cachesh> server next feed:home latency=100ms value=1\n"), "\(transcribed.stdout)")
        try sandbox.write("app.transcript", transcribed.stdout)
        let verified = try await Cachesh.run(["--verify", "app.transcript"], in: sandbox.url)
        #expect(verified == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(verified)\n\(transcribed.stdout)")
    }

    /// The header and the first records of a real recording, and its end.
    static func lines() async throws -> [String] {
        let sandbox = try Sandbox()
        let path = sandbox.url.appendingPathComponent("r").path
        try await record(to: path)
        return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    @Test func badRecordingsAreRefusedAtTheirLine() async throws {
        let good = try await Self.lines()
        #expect(good.count > 6)
        var damaged = good
        damaged[3] = String(damaged[3].dropLast(5)) + "??"
        var unknown = good
        unknown[4] = #"{"record":"teleport","at":1}"#
        let cases: [(name: String, text: String, message: String)] = [
            ("newer", ([#"{"format":"cachesh-recording","version":3}"#] + good.dropFirst()).joined(separator: "\n"),
             "newer.rec:1: error: recording format version 3 is newer than this cachesh reads (version 2): use a newer cachesh"),
            ("older", ([#"{"format":"cachesh-recording","version":0}"#] + good.dropFirst()).joined(separator: "\n"),
             "older.rec:1: error: recording format version 0 is not supported (this cachesh reads versions 1 to 2)"),
            ("other", #"{"format":"cachesh-snapshot","version":1}"# + "\n",
             #"other.rec:1: error: not a cachesh recording (its first line must be {"format":"cachesh-recording","version":2})"#),
            ("damaged", damaged.joined(separator: "\n") + "\n", "damaged.rec:4: error: damaged record: "),
            ("unknown", unknown.joined(separator: "\n") + "\n", #"unknown.rec:5: error: damaged record: record.record: unknown kind "teleport""#),
            ("cut", good.dropLast().joined(separator: "\n") + "\n" + String(good.last!.prefix(9)),
             "cut.rec:\(good.count): error: damaged record: "),
            ("ended", good.dropLast().joined(separator: "\n") + "\n",
             "ended.rec:\(good.count - 1): error: the recording is truncated: it has no end record"),
            ("empty", "", "empty.rec:1: error: not a cachesh recording: the file is empty"),
        ]
        for c in cases {
            let sandbox = try Sandbox()
            try sandbox.write(c.name + ".rec", c.text)
            let outcome = try await Cachesh.run(["--transcribe", c.name + ".rec"], in: sandbox.url)
            #expect(outcome.status == 2 && outcome.stdout.isEmpty, "\(c.name): \(outcome)")
            #expect(outcome.stderr.hasPrefix(c.message) && outcome.stderr.split(separator: "\n").count == 1,
                    "\(c.name): \(outcome.stderr)")
        }
    }

    /// A recording whose clock goes backwards is refused at the line where it does, exit 2, as
    /// other damaged recordings are: a `step` back in time used to be written `advance 0ms`, and a
    /// call, a request or an event before the clock went through as if in order.
    @Test func aRecordingWhoseClockGoesBackwardsIsRefusedAtItsLine() async throws {
        let good = try await Self.lines()
        #expect(good.count == 21 && good[11] == #"{"record":"step","to":1767225602000}"#
                && good[17] == #"{"record":"step","to":1767225602100}"#, "\(good)")
        func changed(_ line: Int, _ from: String, _ to: String) -> String {
            var lines = good
            #expect(lines[line - 1].contains(from), "line \(line): \(lines[line - 1])")
            lines[line - 1] = lines[line - 1].replacingOccurrences(of: from, with: to)
            return lines.joined(separator: "\n") + "\n"
        }
        let back = "damaged record: the clock goes backwards:"
        let cases: [(text: String, message: String)] = [
            (changed(18, "1767225602100", "1767225601000"),
             "18: error: \(back) to 2026-01-01T00:00:01.000Z is before 2026-01-01T00:00:02.000Z, where the recording's clock already was"),
            (changed(12, "1767225602000", "1767225599000"),
             "12: error: \(back) to 2025-12-31T23:59:59.000Z is before 2026-01-01T00:00:00.000Z, where the recording's clock already was"),
            (changed(12, "1767225602000", "1767225600050"),
             "12: error: \(back) to 2026-01-01T00:00:00.050Z is before 2026-01-01T00:00:00.100Z, the time of line 7, which happened during it"),
            (changed(4, #""ended":1767225600000"#, #""ended":1767225599999"#),
             "4: error: \(back) ended 2025-12-31T23:59:59.999Z is before at 2026-01-01T00:00:00.000Z"),
            (changed(14, #"{"at":1767225602000"#, #"{"at":1767225601000"#),
             "14: error: \(back) at 2026-01-01T00:00:01.000Z is before 2026-01-01T00:00:02.000Z, where the recording's clock already was"),
            (changed(13, "1767225602000", "1767225601000"),
             "13: error: \(back) at 2026-01-01T00:00:01.000Z is before 2026-01-01T00:00:02.000Z, where the recording's clock already was"),
            (changed(3, "1767225600000", "1767225599000"),
             "3: error: \(back) at 2025-12-31T23:59:59.000Z is before 2026-01-01T00:00:00.000Z, where the recording's clock already was"),
            (changed(19, "1767225602100", "1767225602200"),
             "20: error: \(back) ended 2026-01-01T00:00:02.100Z is before 2026-01-01T00:00:02.200Z, the time of line 19, which happened during it"),
            (changed(21, "1767225602100", "1767225602000"),
             "21: error: \(back) at 2026-01-01T00:00:02.000Z is before 2026-01-01T00:00:02.100Z, where the recording's clock already was"),
        ]
        let sandbox = try Sandbox()
        for c in cases {
            try sandbox.write("back.rec", c.text)
            let outcome = try await Cachesh.run(["--transcribe", "back.rec"], in: sandbox.url)
            #expect(outcome == Outcome(stdout: "", stderr: "back.rec:" + c.message + "\n", status: 2), "\(outcome)")
        }
        // The recording as it was transcribes.
        try sandbox.write("good.rec", good.joined(separator: "\n") + "\n")
        let outcome = try await Cachesh.run(["--transcribe", "good.rec"], in: sandbox.url)
        #expect(outcome.status == 0, "\(outcome)")
    }

    /// A read or validation the app had refused because its answer would come at the clock's end
    /// (SPEC §2) sent nothing, so nothing scripted it: the transcript's replay, strict, sent it and
    /// diverged. It is replayed refused as the app was, by the server's latency, strict mode off
    /// for it; the reads after it are scripted as ever.
    @Test func aReadRefusedAsWaitingUntilTheClocksEndTranscribesAndVerifies() async throws {
        let sandbox = try Sandbox()
        let path = sandbox.url.appendingPathComponent("end.rec").path
        let server = SimulatedServer()
        server.set("a", .int(1), at: TimeText.virtualEpochMs)
        server.set("b", .int(2), at: TimeText.virtualEpochMs)
        let end: Int64 = 106_751_991_167 * 86_400_000
        server.latencies["b"] = end
        _ = server.queueValidation(ScriptedAnswer(latency: end, outcome: .data))
        let cache = Cache(origin: server)
        try await cache.startRecording(to: path)
        _ = try await cache.read("a")
        var refusals = 0
        do { _ = try await cache.read("b") } catch { refusals += 1 }
        do { _ = try await cache.mget(["a", "b", "c"]) } catch { refusals += 1 }
        do { _ = try await cache.validate(items: false) } catch { refusals += 1 }
        try await cache.advance(by: 10)
        _ = try await cache.read("c")
        try await cache.stopRecording()
        #expect(refusals == 3)
        let transcribed = try await Cachesh.run(["--transcribe", "end.rec"], in: sandbox.url)
        #expect(transcribed.status == 0, "\(transcribed)")
        #expect(transcribed.stdout.contains("""
            cachesh> server strict off
            server: strict off
            cachesh> server latency 106751991167d b
            server: latency of b 106751991167d
            cachesh> get b
            error: waiting for the answer to fetch b would never end: it is answered 106751991167d from now; nothing was sent (ns default timeout=D gives up on it; get b --nowait reads without waiting, and cancel b then drops the request)
            cachesh> server strict on
            """), "\(transcribed.stdout)")
        try sandbox.write("end.transcript", transcribed.stdout)
        let verified = try await Cachesh.run(["--verify", "end.transcript"], in: sandbox.url)
        #expect(verified == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(verified)\n\(transcribed.stdout)")
    }

    @Test func aCallTheShellCannotTypeIsRefusedAtItsRecord() async throws {
        let sandbox = try Sandbox()
        let path = sandbox.url.appendingPathComponent("odd.rec").path
        let cache = Cache(origin: SimulatedServer())
        try await cache.startRecording(to: path)
        _ = await cache.put("feed:ok", 1)
        _ = await cache.put("feed:two words", 1)
        try await cache.stopRecording()
        let outcome = try await Cachesh.run(["--transcribe", "odd.rec"], in: sandbox.url)
        #expect(outcome.status == 2)
        #expect(outcome.stderr == #"odd.rec:4: error: the key "feed:two words" cannot be typed in the shell: a key may not contain white space"# + "\n",
                "\(outcome)")
    }
}
