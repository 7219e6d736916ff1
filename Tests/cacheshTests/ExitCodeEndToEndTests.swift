import Foundation
import Testing

/// SPEC §6: the ways to run a script, and exit status 0 (every command accepted), 1 (a command
/// rejected), 2 (bad usage or an unreadable file named on the command line).
@Suite struct ExitCodeEndToEndTests {
    static let now = "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n"

    @Test func commandsFromDashCSplitAtSemicolonsAndNewlines() async throws {
        let run = try await Cachesh.run(["-c", "put a 1; get a\nnow"])
        #expect(run == Outcome(stdout: """
            keys: a
            key:           a
            state:         fresh
            value:         1
            source:        cache
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []

            """ + Self.now, stderr: "", status: 0))
    }

    @Test func aRejectedCommandExitsOneAndTheRestStillRuns() async throws {
        let run = try await Cachesh.run(["-c", "frob; now\nadvance 5x"])
        #expect(run.stdout == Self.now)
        #expect(run.stderr == """
            -c:1:1: error: unknown command "frob" (try help)
            -c:2:1: error: bad duration "5x": unknown unit "x" (use ms, s, m, h, d)

            """)
        #expect(run.status == 1)
    }

    @Test(arguments: [["--bail", "-c", "now; frob; now; advance 1s"], ["-c", "now; frob; now; advance 1s", "--bail"]])
    func bailStopsAtTheFirstFailingCommand(_ arguments: [String]) async throws {
        let run = try await Cachesh.run(arguments)
        #expect(run == Outcome(stdout: Self.now, stderr: "-c:1:6: error: unknown command \"frob\" (try help)\n", status: 1))
    }

    @Test func bailStopsAScriptFileToo() async throws {
        let run = try await Cachesh.script("now\nadvance 1x\nput a 1\n", options: ["--bail"])
        #expect(run == Outcome(stdout: Self.now,
                               stderr: "script.cachesh:2: error: bad duration \"1x\": unknown unit \"x\" (use ms, s, m, h, d)\n",
                               status: 1))
    }

    @Test func standardInputIsAScriptNamedStdin() async throws {
        let ok = try await Cachesh.run([], stdin: "now\n")
        #expect(ok == Outcome(stdout: Self.now, stderr: "", status: 0))
        let failed = try await Cachesh.run([], stdin: "now\n\nget\n")
        #expect(failed == Outcome(stdout: Self.now, stderr: "<stdin>:3: error: get needs KEY [--force] [--nowait] [--async]\n", status: 1))
        let bailed = try await Cachesh.run(["--bail"], stdin: "frob\nnow\n")
        #expect(bailed == Outcome(stdout: "", stderr: "<stdin>:1: error: unknown command \"frob\" (try help)\n", status: 1))
    }

    @Test func aScriptWithAShebangRunsDirectlyFromThePath() async throws {
        let sandbox = try Sandbox()
        let binDirectory = URL(fileURLWithPath: Cachesh.binaryPath).deletingLastPathComponent().path
        let good = try sandbox.write("good", "#!/usr/bin/env cachesh\n# a comment\nnow\n", permissions: 0o755)
        let bad = try sandbox.write("bad", "#!/usr/bin/env cachesh\nnow\nfrob\n", permissions: 0o755)
        let environment = ["PATH": binDirectory + ":/usr/bin:/bin"]
        let ok = try await Cachesh.run([], in: sandbox.url, executable: good, environment: environment)
        #expect(ok == Outcome(stdout: Self.now, stderr: "", status: 0))
        let failed = try await Cachesh.run([], in: sandbox.url, executable: bad, environment: environment)
        #expect(failed == Outcome(stdout: Self.now, stderr: "\(bad):3: error: unknown command \"frob\" (try help)\n", status: 1))
    }

    @Test func jsonModeReportsErrorsOnStdoutAndStillExitsOne() async throws {
        let run = try await Cachesh.run(["--json", "-c", "now; frob"])
        #expect(run == Outcome(stdout: """
            {"command":"now","now":"2026-01-01T00:00:00.000Z","now_ms":0,"ok":true}
            {"column":6,"command":"frob","error":"unknown command \\"frob\\" (try help)","file":"-c","line":1,"ok":false}

            """, stderr: "", status: 1))
    }

    /// A failed fetch and an offline read are results of the simulated server, not errors.
    @Test func serverFailuresAndOfflineReadsAreResultsNotErrors() async throws {
        let run = try await Cachesh.run(["--json", "-c", "server fail 1; get a; server set b 1; get b; server offline; get c; get b --force"])
        #expect(run.stderr == "")
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 7)
        #expect(lines[1].contains(#""error":"server error""#))
        #expect(lines[5].contains(#""error":"offline""#) && lines[5].contains(#""offline":true"#))
        #expect(lines[6].contains(#""offline":true"#) && lines[6].contains(#""value":1"#))
    }

    @Test func safeModeRefusesCommandsThatReadFiles() async throws {
        let run = try await Cachesh.script("load app.json\nsource other.cachesh\nconfig\n", options: ["--safe"], files: [
            "app.json": #"{"namespaces": {"feed": {"ttl": "1m"}}}"#,
            "other.cachesh": "put a 1\n",
        ])
        #expect(run == Outcome(stdout: "id-field: id\nserver latency: 100ms\n", stderr: """
            script.cachesh:1: error: --safe: commands may not read files (app.json)
            script.cachesh:2: error: --safe: commands may not read files (other.cachesh)

            """, status: 1))
        // The same script without --safe reads both.
        let unsafe = try await Cachesh.script("load app.json\nsource other.cachesh\nkeys\n", files: [
            "app.json": #"{"namespaces": {"feed": {"ttl": "1m"}}}"#,
            "other.cachesh": "put a 1\n",
        ])
        #expect(unsafe.status == 0)
    }

    @Test func aScriptThatCannotBeReadExitsTwo() async throws {
        let sandbox = try Sandbox()
        let missing = try await Cachesh.run(["missing.cachesh"], in: sandbox.url)
        #expect(missing == Outcome(stdout: "", stderr: "cachesh: cannot read missing.cachesh: No such file or directory\n", status: 2))
        let directory = try await Cachesh.run(["."], in: sandbox.url)
        #expect(directory == Outcome(stdout: "", stderr: "cachesh: cannot read .: is a directory\n", status: 2))
        let config = try await Cachesh.run(["--config", "missing.json", "-c", "now"], in: sandbox.url)
        #expect(config == Outcome(stdout: "", stderr: "cachesh: cannot read missing.json: No such file or directory\n", status: 2))
    }

    @Test(arguments: [
        (["--frob"], "Unknown option '--frob'"),
        (["--frob", "--help"], "Unknown option '--frob'"),
        (["--version", "-q"], "Unknown option '-q'"),
        (["-c"], "Missing value for '-c <commands>'"),
        (["-c", "now", "script.cachesh"], "give either -c COMMANDS or a FILE, not both"),
        (["one.cachesh", "two.cachesh"], "give one script FILE (or use --verify for transcripts)"),
        (["--update", "-c", "now"], "--update goes with --verify"),
    ])
    func usageErrorsExitTwoAndRunNothing(_ arguments: [String], _ message: String) async throws {
        let run = try await Cachesh.run(arguments)
        #expect(run.status == 2)
        #expect(run.stdout == "")
        #expect(run.stderr.hasPrefix("cachesh: "))
        #expect(!run.stderr.contains("Error: "), "one prefix, not two: \(run)")
        #expect(run.stderr.contains(message), "\(run)")
    }

    @Test func helpAndVersionExitZero() async throws {
        let help = try await Cachesh.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: cachesh"))
        #expect(help.stdout.contains("--safe"))
        #expect(help.stderr == "")
        let version = try await Cachesh.run(["--version"])
        #expect(version == Outcome(stdout: "cachesh 0.1.0\n", stderr: "", status: 0))
    }

    @Test func quitEndsTheScriptWithStatusZero() async throws {
        let run = try await Cachesh.run(["-c", "now; quit; frob"])
        #expect(run == Outcome(stdout: Self.now, stderr: "", status: 0))
    }
}
