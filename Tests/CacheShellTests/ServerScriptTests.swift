import CacheShell
import Testing
import TestSupport

/// `server next`, `server strict`, `get --async` and `restore {SNAPSHOT}`: what a recorded
/// session replays with.
@Suite struct ServerScriptTests {
    /// Runs each line typed into one fresh session; returns what each printed.
    static func run(_ lines: [String], options: SessionOptions = SessionOptions()) async -> [String] {
        let shell = await TestShell(options: options)
        var out: [String] = []
        for line in lines { out.append(await shell.typed(line)) }
        return out
    }

    @Test func answersAreTakenInOrderAndOutOfOrderAnswersAreOneLineEach() async {
        let out = await Self.run([
            "server next a:1 latency=300ms value=1",
            "server next a:1 latency=50ms {\"two\": \"b c\"}",
            "get a:1 --async",
            "get a:1 --force --async",
            "advance 1s",
        ])
        #expect(out[0] == "server: queued an answer for a:1\n")
        #expect(out[2] == "key:     a:1\nwaiting: true\n")
        // The second request answers first; the first answer, older, is then discarded (B12).
        #expect(out[4].hasPrefix("read at 2026-01-01T00:00:00.050Z:\n  key:           a:1\n  state:         fresh\n  value:         {\"two\":\"b c\"}\n  source:        server\n"))
        #expect(out[4].contains("read at 2026-01-01T00:00:00.300Z:\n  key:           a:1\n  state:         fresh\n  value:         {\"two\":\"b c\"}\n  source:        cache\n"))
    }

    @Test func aBulkRequestTakesEachKeysAnswerAndFailsWholeWithTheFirstFailure() async {
        let out = await Self.run([
            "server next a:1 latency=10ms value=1",
            "server next a:2 latency=40ms error=\"the {disk} is full\"",
            "mget a:1 a:2",
            "server next a:1 latency=5ms --not-found",
            "get a:1 --force",
        ])
        #expect(out[1] == "server: queued an answer for a:2\n")
        #expect(out[2].contains("error: the {disk} is full"))
        #expect(!out[2].contains("\"1\""))
        #expect(out[4].contains("error:         not found"))
    }

    @Test func strictModeMakesANewRequestADivergenceThatStopsTheReplay() async {
        let out = await Self.run(["server strict on", "server next a:1 value=1", "get a:1", "get b:1", "server strict off", "get c:1 --nowait"])
        #expect(out[0] == "server: strict on\n")
        #expect(out[2].contains("value:         1\n"))
        #expect(out[3].hasSuffix("error: server strict: nothing queued for the fetch b:1 sent by get b:1: the replay diverged\n"))
        #expect(out[5].contains("pending:       true"))
        let transcript = """
            cachesh> server strict on
            server: strict on
            cachesh> get feed:home --async
            key:     feed:home
            waiting: true
            cachesh> advance 1s
            now:    2026-01-01T00:00:01.000Z
            now_ms: 1000 (1s)

            """
        let check = await TranscriptCheck.replay(name: "diverged.transcript", text: transcript)
        #expect(!check.passed)
        #expect(check.refusal == "diverged.transcript:3: error: server strict: nothing queued for the fetch feed:home sent by get feed:home --async: the replay diverged")
    }

    @Test(arguments: [
        ("server next a:1 value=1 --not-found", "server next: give one of value=, error= (or --fail), --not-found, --no-answer and --lost-answer, not value= and --not-found"),
        ("server next a:1 --lost-answer --no-answer", "give one of value=, error= (or --fail), --not-found, --no-answer and --lost-answer, not --no-answer and --lost-answer"),
        ("server next a:1 --commit value=1", "server next: --commit goes with a failure (--fail, error=TEXT or --no-answer), not value="),
        ("server next a:1 --commit --lost-answer", "--commit goes with a failure (--fail, error=TEXT or --no-answer), not --lost-answer (a lost answer is applied already)"),
        ("server next a:1 --commit --not-found", "--commit goes with a failure (--fail, error=TEXT or --no-answer), not --not-found"),
        ("server next --validate --lost-answer", "server next --validate has no --lost-answer: a validation changes no data"),
        ("server next --validate --commit", "server next --validate has no --commit: a validation changes no data"),
        ("server next a:1 --lost-answer version=2", "server next: version= goes with an answer that has a value"),
        ("server next a:1 value={\"a\":1,}", "bad JSON"),
        ("server next a:1 1 value=2", "server next: give the value once (value= or a word after the key)"),
        ("server next --validate --not-found", "server next --validate has no --not-found"),
        ("server next a:1 latency=soon", "soon"),
        ("server next a:1 error=\"unclosed", "error=: the JSON value does not end on this line"),
        ("server strict maybe", "server strict takes on or off, not \"maybe\""),
        ("get a:1 --async --nowait", "get: --async and --nowait do not go together"),
    ])
    func badScriptLinesAreOneErrorLine(_ line: String, _ message: String) async {
        let out = await Self.run([line])[0]
        #expect(out.hasPrefix("error: ") && out.contains(message) && out.split(separator: "\n").count == 1, "\(out)")
    }

    @Test func asyncReadsPrintAReadEventInJSON() async {
        let out = await Self.run(["output json", "server next a:1 latency=20ms value=[1]", "get a:1 --async", "advance 30ms"])
        #expect(out[2] == "{\"command\":\"get\",\"key\":\"a:1\",\"ok\":true,\"waiting\":true}\n")
        #expect(out[3].hasPrefix("{\"age_ms\":0,\"at\":\"2026-01-01T00:00:00.020Z\",\"at_ms\":20,\"event\":\"read\",\"expires_in_ms\":300000,"
                                 + "\"key\":\"a:1\",\"source\":\"server\",\"state\":\"fresh\",\"tags\":[],\"value\":[1]}\n"))
    }

    @Test func restoreTakesTheSnapshotInlineUnderSafe() async {
        let shell = await TestShell()
        _ = await shell.typed("put a:1 {\"x\": 1}")
        let snapshot = await shell.snapshotText()
        let out = await Self.run(["restore " + snapshot, "peek a:1"], options: SessionOptions(safe: true))
        #expect(out[0] == "restored (1 entry, now 2026-01-01T00:00:00.000Z)\n")
        #expect(out[1].contains("value:         {\"x\":1}"))
        #expect(await Self.run(["restore {\"format\": \"cachesh-snapshot\", \"version\": 9}"])[0]
                == "error: restore: version: snapshot version 9 is not supported (this cachesh reads version 1)\n")
    }
}
