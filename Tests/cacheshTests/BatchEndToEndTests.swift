import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `cachesh` driven by another program through pipes: one line written, its output awaited, then
/// the next (a coprocess, as `expect` or a test harness drives a shell). stdout and stderr share
/// one pipe, read on a thread of its own (see Child.swift).
private struct Coprocess {
    let child: Child

    init(_ arguments: [String] = []) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        child = try await Child.start(Cachesh.binaryPath, arguments, environment: environment,
                                      stdin: .pipe, stdout: .pipe, stderr: .stdout)
    }

    func write(_ text: String) async throws { try await child.write(text) }

    func closeInput() throws { try child.closeInput() }

    /// Waits until the output so far holds `text` (and returns it all), or fails after `seconds`:
    /// a generous deadline, since a busy machine may be slow, but never a fixed pause.
    func read(until text: String, seconds: Double = 60) async throws -> String {
        try await child.output(until: text, seconds: seconds)
    }

    /// Waits (up to a generous deadline) for the process to exit; its status.
    func wait(seconds: Double = 60) async throws -> Int32 {
        try await child.exitStatus(within: seconds)
    }
}

@Suite("Batch input: streams, echo, transcripts refused as scripts, linear matching")
struct BatchEndToEndTests {
    // MARK: Piped input streams

    @Test("piped stdin runs each command as soon as it has arrived and flushes before waiting")
    func pipedInputRunsCommandByCommand() async throws {
        let shell = try await Coprocess()
        try await shell.write("echo first\n")
        #expect(try await shell.read(until: "first\n") == "first\n")
        // A command spanning lines runs once its brackets close.
        try await shell.write("put a {\n")
        try await shell.write("  \"x\": 1\n")
        try await shell.write("}\n")
        #expect(try await shell.read(until: "keys: a\n") == "first\nkeys: a\n")
        try await shell.write("nonsense\n")
        #expect(try await shell.read(until: "(try help)\n").hasSuffix("<stdin>:5: error: unknown command \"nonsense\" (try help)\n"))
        try await shell.write("echo second\n")
        _ = try await shell.read(until: "second\n")
        try shell.closeInput()
        #expect(try await shell.wait() == 1)
    }

    @Test("quit ends a piped session without waiting for the end of input")
    func quitEndsAPipedSession() async throws {
        let shell = try await Coprocess()
        try await shell.write("echo bye\nquit\n")
        _ = try await shell.read(until: "bye\n")
        #expect(try await shell.wait() == 0)
    }

    @Test("errors in piped input name their line, however the input arrived")
    func pipedInputKeepsLineNumbers() async throws {
        var input = String(repeating: "echo x\n", count: 20_000)
        input += "put a {\n\"k\":\n1}\nat 1s stats nope\nnonsense\nadvance 2s\n"
        let run = try await Cachesh.run([], stdin: input)
        #expect(run.status == 1)
        #expect(run.stderr == """
            <stdin>:20005: error: unknown command "nonsense" (try help)
            <stdin>:20004: error: (at 2026-01-01T00:00:01.000Z) stats: unknown namespace "nope" (known: default)

            """)
    }

    @Test("a command longer than 16 MiB is refused with its line, skipped, and the stream goes on")
    func anOverlongCommandIsSkipped() async throws {
        var input = "echo before\nput a {\n"
        input += String(repeating: "\"0123456789abcdef\",\n", count: 1_000_000)
        input += "}\necho after\n"
        let run = try await Cachesh.run([], stdin: input, timeLimit: Cachesh.heavyTimeLimit)
        #expect(run == Outcome(stdout: "before\nafter\n",
                               stderr: "<stdin>:2: error: command longer than 16 MiB (a { or [ never closed?): skipped to its end\n",
                               status: 1))
        // A script streams the same way: the limit is per command, not per file.
        let sandbox = try Sandbox()
        try sandbox.write("long.cachesh", input)
        #expect(try await Cachesh.run(["long.cachesh"], in: sandbox.url, timeLimit: Cachesh.heavyTimeLimit) == Outcome(stdout: "before\nafter\n",
            stderr: "long.cachesh:2: error: command longer than 16 MiB (a { or [ never closed?): skipped to its end\n", status: 1))
    }

    @Test("a script longer than a read keeps its line numbers, its folder and --bail")
    func aLongScriptStreams() async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("sub"), withIntermediateDirectories: false)
        try sandbox.write("sub/inner.cachesh", "echo inner\n")
        var script = String(repeating: "echo x\n", count: 20_000)
        script += "put a {\n\"k\":\n1}\nat 1s stats nope\nnonsense\nsource inner.cachesh\nadvance 2s\n"
        try sandbox.write("sub/long.cachesh", script)
        let run = try await Cachesh.run(["sub/long.cachesh"], in: sandbox.url)
        #expect(run.status == 1)
        #expect(run.stdout.contains("x\nkeys: a\nscheduled at 2026-01-01T00:00:01.000Z: stats nope\ninner\nnow: "))
        #expect(run.stderr == """
            sub/long.cachesh:20005: error: unknown command "nonsense" (try help)
            sub/long.cachesh:20004: error: (at 2026-01-01T00:00:01.000Z) stats: unknown namespace "nope" (known: default)

            """)
        let bail = try await Cachesh.run(["--bail", "sub/long.cachesh"], in: sandbox.url)
        #expect(bail.status == 1)
        #expect(!bail.stdout.contains("inner"))
        #expect(bail.stderr == "sub/long.cachesh:20005: error: unknown command \"nonsense\" (try help)\n")
    }

    // MARK: --echo

    static let script = """
        # A script with every kind of output a transcript must hold.
        record rec.transcript
        ns feed ttl=1m

        put feed:a {
          "x": 1
        }
        get feed:a
        nonsense
        put b "unterminated
        echo cachesh> looks like a prompt
        echo ...
        at 1s load missing.json
        advance 2s
        get feed:a
        record stop
        put c [1,

        """

    @Test("--echo prints a transcript that verifies, with the very text record writes",
          arguments: [["--echo", "s.cachesh"], ["--echo", "--", "s.cachesh"]])
    func echoPrintsATranscript(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", Self.script)
        let run = try await Cachesh.run(arguments, in: sandbox.url)
        #expect(run.status == 1)
        #expect(run.stderr == "")
        // The script's comment is echoed as a command of its own, as a recording writes it.
        let comment = "cachesh> # A script with every kind of output a transcript must hold.\n"
        #expect(run.stdout.hasPrefix(comment + "cachesh> ns feed ttl=1m\nns feed ttl=1m\ncachesh> put feed:a {\n...>   \"x\": 1\n...> }\nkeys: feed:a\n"))
        #expect(run.stdout.contains("cachesh> nonsense\nerror: unknown command \"nonsense\" (try help)\n"))
        #expect(run.stdout.contains("cachesh> echo cachesh> looks like a prompt\n\\cachesh> looks like a prompt\ncachesh> echo ...\n\\...\n"))
        #expect(run.stdout.hasSuffix("cachesh> put c [1,\nerror: unterminated JSON value: \"[\" opened here is never closed\n"))
        // Up to `record stop`, the recording and the echo are the same text, after the state the
        // recording starts from (`restore {SNAPSHOT}` of it, inline, on one line).
        let recorded = try String(contentsOf: sandbox.url.appendingPathComponent("rec.transcript"), encoding: .utf8)
        let restored = "restored (0 entries, now 2026-01-01T00:00:00.000Z)\n"
        #expect(recorded.hasPrefix("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n" + "cachesh> restore {\"clock_start\":\"2026-01-01T00:00:00.000Z\",\"entries\":[],"))
        let commands = try #require(recorded.range(of: restored)).upperBound
        #expect(recorded[..<commands].split(separator: "\n").count == 3)
        // Then the commands as --echo printed them, and the recording's last line.
        let end = "cachesh> # end of recording\n"
        #expect(recorded.hasSuffix(end))
        #expect(run.stdout.dropFirst(comment.count).hasPrefix(recorded[commands...].dropLast(end.count)))
        try sandbox.write("s.transcript", run.stdout)
        #expect(try await Cachesh.run(["--verify", "s.transcript"], in: sandbox.url) == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
    }

    @Test("--echo works for -c, stdin, --json and --config, and each result verifies")
    func echoInEveryBatchMode() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.json", #"{"namespaces": {"feed": {"ttl": "1m"}}}"#)
        let runs = [
            try await Cachesh.run(["--echo", "-c", "put a 1; get \"x; nonsense"], in: sandbox.url),
            try await Cachesh.run(["--echo"], stdin: "put a {\n\"k\": 1}\nget a\n", in: sandbox.url),
            try await Cachesh.run(["--echo", "--json"], stdin: "put a 1\nnonsense\n", in: sandbox.url),
            try await Cachesh.run(["--echo", "--config", "app.json", "-c", "config"], in: sandbox.url),
        ]
        for (i, run) in runs.enumerated() {
            #expect(run.stderr == "")
            try sandbox.write("r\(i).transcript", run.stdout)
            #expect(try await Cachesh.run(["--verify", "r\(i).transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n", "\(run)")
        }
        #expect(runs[2].stdout.hasPrefix("cachesh> output json\n{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\ncachesh> put a 1\n"))
        // The configuration itself, so the transcript replays alone.
        #expect(runs[3].stdout.hasPrefix("cachesh> load {\n...>   \"namespaces\": {\n...>     \"feed\": {\n...>       \"ttl\": \"1m\"\n...>     }\n...>   }\n...> }\nloaded configuration\ncachesh> config\n"))
        try FileManager.default.removeItem(at: sandbox.url.appendingPathComponent("app.json"))
        #expect(try await Cachesh.run(["--safe", "--verify", "r3.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
        #expect(try await Cachesh.run(["--echo", "--verify", "r0.transcript"], in: sandbox.url).status == 2)
    }

    // MARK: Linear matching

    /// A 200 KB output line against patterns that a retry-at-every-byte search takes minutes
    /// on; the harness's time limit would stop a run that slow. Results only: the time is
    /// measured by Benchmarks/transcript-match.py.
    @Test("a 200 KB line verifies against adversarial [..] and ... patterns, right both ways")
    func longLinesVerify() async throws {
        let sandbox = try Sandbox()
        let line = String(repeating: "a", count: 199_999) + "b"
        let half = String(repeating: "a", count: 100_000)
        try sandbox.write("pass.transcript", """
            cachesh> echo \(line)
            [..]\(half)b[..]
            cachesh> echo \(line)
            \(String(repeating: "a[..]", count: 1_000))b
            cachesh> echo \(line)
            ...
            [..]b

            """)
        try sandbox.write("fail.transcript", "cachesh> echo \(line)\n[..]\(half)c[..]\n")
        #expect(try await Cachesh.run(["--verify", "pass.transcript"], in: sandbox.url)
            == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
        let failed = try await Cachesh.run(["--verify", "fail.transcript"], in: sandbox.url)
        #expect(failed.status == 1 && failed.stdout.hasPrefix("@ fail.transcript:1\n") && failed.stdout.hasSuffix("0 passed, 1 failed\n"))
    }

    @Test("keys refuses a pattern over 1024 bytes and matches long keys against adversarial globs")
    func keysGlobsAreBounded() async throws {
        let long = String(repeating: "a", count: 5_000)
        let run = try await Cachesh.run(["-c", "put \(long) 1; keys \(String(repeating: "*a", count: 500))b; keys \(String(repeating: "*a", count: 500)); keys \(String(repeating: "*", count: 1025))"])
        #expect(run.status == 1)
        // A key wider than the screen: the table is shown as a record.
        #expect(run.stdout == "keys: \(long)\n(no entries)\nkey:    \(long)\nstate:  fresh\nage_ms: 0\n")
        #expect(run.stderr == "-c:1:\(1 + (4 + long.count + 4) + (5 + 1_000 + 1 + 2) + (5 + 1_000 + 2)): error: keys: pattern longer than 1024 bytes (1025)\n")
    }

    // MARK: A transcript is not a script

    @Test("a transcript run as a script stops before running anything, pointing at --verify")
    func aTranscriptIsNotAScript() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bug.txt", "A bug report.\n\ncachesh> put a 1\nkeys: a\ncachesh> snapshot x.json\n")
        try sandbox.write("bug.transcript", "put a 1\n")
        try sandbox.write("notes.md", "# Notes\n")
        // The prompt line comes after the first read: still nothing runs.
        try sandbox.write("late.txt", String(repeating: "put a 1\n", count: 20_000) + "cachesh>\r\n")
        #expect(try await Cachesh.run(["late.txt"], in: sandbox.url) == Outcome(stdout: "", stderr: """
            late.txt:20001: error: this is a transcript, not a script (the line starts with "cachesh> "): check it with cachesh --verify late.txt

            """, status: 2))
        let run = try await Cachesh.run(["bug.txt"], in: sandbox.url)
        #expect(run == Outcome(stdout: "", stderr: """
            bug.txt:3: error: this is a transcript, not a script (the line starts with "cachesh> "): check it with cachesh --verify bug.txt

            """, status: 2))
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("x.json").path))
        #expect(try await Cachesh.run(["bug.transcript"], in: sandbox.url) == Outcome(stdout: "", stderr: """
            bug.transcript:1: error: this is a transcript, not a script (its name ends in .transcript): check it with cachesh --verify bug.transcript

            """, status: 2))
        #expect(try await Cachesh.run(["notes.md"], in: sandbox.url).status == 2)
        #expect(try await Cachesh.run([], stdin: "cachesh> put a 1\nkeys: a\n", in: sandbox.url) == Outcome(stdout: "", stderr: """
            <stdin>:1: error: this is a transcript, not a script (the line starts with "cachesh> "): save it to a file and check it with cachesh --verify FILE

            """, status: 2))
        // A prompt in a comment or an argument is not a transcript.
        try sandbox.write("ok.cachesh", "# cachesh> a comment\necho cachesh> x\n")
        #expect(try await Cachesh.run(["ok.cachesh"], in: sandbox.url) == Outcome(stdout: "cachesh> x\n", stderr: "", status: 0))
    }

    @Test("a script's replies print in order with events and errors, values byte for byte in either mode")
    func repliesKeepTheirOrderAndBytes() async throws {
        // Replies of a batch are written straight to standard output; events, error lines and a
        // switch of output mode around them must come out as before, values as JSON with sorted
        // keys and escaped controls, durations in words.
        let sandbox = try Sandbox()
        try sandbox.write("mixed.cachesh", """
            watch *
            put a {"b":2,"a":[1,"x\\u0007\\u00e9"],"c":-9223372036854775808,"d":1.5}
            get a
            nonsense
            advance 61500ms
            peek a
            output json
            get a
            unwatch *
            put b 1 tags=t,u
            get b
            get missing:x

            """)
        let run = try await Cachesh.run(["mixed.cachesh"], in: sandbox.url)
        #expect(run == Outcome(stdout: """
                watching *
                * 2026-01-01T00:00:00.000Z stored a fresh {"a":[1,"x\\u0007é"],"b":2,"c":-9223372036854775808,"d":1.5} (cache)
                keys: a
                key:           a
                state:         fresh
                value:         {"a":[1,"x\\u0007é"],"b":2,"c":-9223372036854775808,"d":1.5}
                source:        cache
                age_ms:        0
                expires_in_ms: 300000 (5m)
                tags:          []
                now:    2026-01-01T00:01:01.500Z
                now_ms: 61500 (1m1s)
                key:           a
                state:         fresh
                value:         {"a":[1,"x\\u0007é"],"b":2,"c":-9223372036854775808,"d":1.5}
                age_ms:        61500 (1m1s)
                expires_in_ms: 238500 (3m58s)
                tags:          []
                {"command":"output","mode":"json","ok":true}
                {"age_ms":61500,"command":"get","expires_in_ms":238500,"key":"a","ok":true,"source":"cache","state":"fresh","tags":[],"value":{"a":[1,"x\\u0007é"],"b":2,"c":-9223372036854775808,"d":1.5}}
                {"command":"unwatch","ok":true,"unwatched":"*","was_watching":true}
                {"command":"put","keys":["b"],"ok":true}
                {"age_ms":0,"command":"get","expires_in_ms":300000,"key":"b","ok":true,"source":"cache","state":"fresh","tags":["t","u"],"value":1}
                {"age_ms":null,"command":"get","error":"not found","expires_in_ms":null,"key":"missing:x","ok":true,"source":"server","state":"absent","tags":[],"value":null}

                """,
                               stderr: "mixed.cachesh:4: error: unknown command \"nonsense\" (try help)\n", status: 1))
    }

    @Test("a value spanning lines across a read keeps its command whole and the lines after it numbered")
    func aValueAcrossAReadStaysWhole() async throws {
        // 9,359 lines of 7 bytes, a blank line, a comment and another blank line: the `{` of the
        // put is the last byte of the first 64 KiB read, the rest of its value comes with the next.
        let script = String(repeating: "echo x\n", count: 9_359) + "\n# a comment {\n\nput a {\n\"k\": [1,\n2]}\nnonsense\nget a\n"
        let expected = String(repeating: "x\n", count: 9_359) + """
            keys: a
            key:           a
            state:         fresh
            value:         {"k":[1,2]}
            source:        cache
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []

            """
        let sandbox = try Sandbox()
        try sandbox.write("across.cachesh", script)
        #expect(try await Cachesh.run(["across.cachesh"], in: sandbox.url) == Outcome(
            stdout: expected, stderr: "across.cachesh:9366: error: unknown command \"nonsense\" (try help)\n", status: 1))
        #expect(try await Cachesh.run([], stdin: script) == Outcome(
            stdout: expected, stderr: "<stdin>:9366: error: unknown command \"nonsense\" (try help)\n", status: 1))
    }
}
