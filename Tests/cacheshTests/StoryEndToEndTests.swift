import CacheShell
import Foundation
import Testing

/// A script keeps its story in its transcript (`--echo`, `record`), a recording reads as the few
/// commands it is about, and a transcript pasted with an indentation, or copied from the man page
/// or `help`, verifies: the built binary, run as a user would.
@Suite struct StoryEndToEndTests {
    /// A bug report's script: an issue link and narration around the commands.
    static let bugScript = """
        #!/usr/bin/env cachesh
        # https://example.com/issues/39: the feed serves stale after its ttl
        ns feed ttl=1m stale=30s

        # The app stores the feed, then the user waits.
        put feed:home [1]   # a trailing comment is not a line of its own
          # An indented comment is one.
        advance 70s
        get feed:home --nowait
        # end

        """

    @Test func echoKeepsTheScriptsCommentsAsPromptLinesAndTheTranscriptVerifies() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bug.cachesh", Self.bugScript)
        let run = try await Cachesh.run(["--echo", "bug.cachesh"], in: sandbox.url)
        #expect(run.status == 0 && run.stderr == "", "\(run)")
        #expect(run.stdout.hasPrefix("""
            cachesh> # https://example.com/issues/39: the feed serves stale after its ttl
            cachesh> ns feed ttl=1m stale=30s
            ns feed ttl=1m stale=30s
            cachesh> # The app stores the feed, then the user waits.
            cachesh> put feed:home [1]
            keys: feed:home
            cachesh> # An indented comment is one.
            cachesh> advance 70s

            """), "\(run)")
        #expect(run.stdout.hasSuffix("cachesh> # end\n"))
        #expect(!run.stdout.contains("#!") && !run.stdout.contains("trailing comment"))
        try sandbox.write("bug.transcript", run.stdout)
        let verify = try await Cachesh.run(["--safe", "--verify", "bug.transcript"], in: sandbox.url)
        #expect(verify == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
    }

    @Test func recordWritesTheSameTextAsEchoCommentsIncluded() async throws {
        let sandbox = try Sandbox()
        // The same script, recording itself from its first line.
        try sandbox.write("bug.cachesh", "record bug.transcript\n" + Self.bugScript.replacingOccurrences(of: "#!/usr/bin/env cachesh\n", with: ""))
        let echoed = try await Cachesh.run(["--echo", "bug.cachesh"], in: sandbox.url)
        #expect(echoed.status == 0, "\(echoed)")
        let recorded = try String(contentsOf: sandbox.url.appendingPathComponent("bug.transcript"), encoding: .utf8)
        // The recording starts with the (empty) state on one line, then is what --echo printed.
        // Its first line says how a whole recording ends, and its last line is that end.
        let lines = recorded.split(separator: "\n", maxSplits: 3, omittingEmptySubsequences: false)
        #expect(lines[0] + "\n" == "cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n")
        #expect(lines[1].hasPrefix("cachesh> restore {\"clock_start\":") && lines[1].hasSuffix("}"))
        #expect(lines[2] == "restored (0 entries, now 2026-01-01T00:00:00.000Z)")
        #expect(String(lines[3]) == echoed.stdout + "cachesh> # end of recording\n")
        #expect(try await Cachesh.run(["--safe", "--verify", "bug.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
    }

    /// `make demo` runs the tour with `--echo`: its output shows each command and the tour's
    /// narration, and is a transcript that verifies.
    @Test func theDemoShowsTheToursCommandsAndNarration() async throws {
        let makefile = try String(contentsOf: Cachesh.packageRoot.appendingPathComponent("Makefile"), encoding: .utf8)
        #expect(makefile.contains("\t$(BIN_RELEASE) --echo Examples/tour.cachesh\n"), "make demo runs the tour with --echo")
        let run = try await Cachesh.run(["--echo", "Examples/tour.cachesh"], in: Cachesh.packageRoot)
        #expect(run.status == 0 && run.stderr == "")
        let tour = try String(contentsOf: Cachesh.packageRoot.appendingPathComponent("Examples/tour.cachesh"), encoding: .utf8)
        let comments = tour.split(separator: "\n").filter { $0.hasPrefix("# ") }
        #expect(comments.count > 20)
        for comment in comments { #expect(run.stdout.contains("cachesh> \(comment)\n"), "\(comment)") }
        #expect(run.stdout.contains("cachesh> get feed:home\n"))
        let sandbox = try Sandbox()
        try sandbox.write("tour.transcript", run.stdout)
        #expect(try await Cachesh.run(["--safe", "--verify", "tour.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
    }

    // MARK: Recordings

    @Test(arguments: [false, true])
    func aBatchRecordingStartsWithTheStateOnOneLine(json: Bool) async throws {
        let sandbox = try Sandbox()
        var script = "ns feed ttl=1m max=2\n"
        for i in 0..<40 { script += "put feed:\(i) {\"id\": \(i), \"text\": \"post \(i)\"}\n" }
        script += "server latency 1s\nget feed:new --nowait\nrecord two.transcript\nadvance 1s\nkeys\nrecord stop\n"
        try sandbox.write("s.cachesh", script)
        let run = try await Cachesh.run((json ? ["--json"] : []) + ["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let recorded = try String(contentsOf: sandbox.url.appendingPathComponent("two.transcript"), encoding: .utf8)
        let lines = recorded.split(separator: "\n")
        // A 2-command recording: the state (a request in flight included) in one line, then the two.
        let start = json ? 3 : 1
        #expect(lines.count < 16, "\(recorded)")
        #expect(lines[start].hasPrefix("cachesh> restore {") && lines[start].hasSuffix("}"))
        #expect(lines[start].contains("\"requests\":[{"), "the request in flight is in the state")
        #expect(lines[start + 2] == "cachesh> advance 1s")
        #expect(!recorded.contains("...>"), "no command spans lines")
        #expect(try await Cachesh.run(["--safe", "--verify", "two.transcript"], in: sandbox.url).stdout == "1 passed, 0 failed\n")
    }

    @Test func fromStartIsRefusedInABatchWhichKeepsNoHistory() async throws {
        let sandbox = try Sandbox()
        let run = try await Cachesh.run(["-c", "put a 1; record x.transcript --from-start; get a"], in: sandbox.url)
        #expect(run.status == 1)
        #expect(run.stderr == "-c:1:10: error: record --from-start: a script, -c or standard input keeps no history "
                + "(only the interactive shell does); record FILE records from here on\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("x.transcript").path))
    }

    @Test func recordsHelpAndSynopsisNameBothForms() async throws {
        let run = try await Cachesh.run(["-c", "help record"])
        #expect(run.stdout.hasPrefix("record FILE|stop [--from-start]\nwrite this session from here on as a transcript, until record stop\n"))
        #expect(run.stdout.contains("--from-start  write the whole session from its start"))
    }

    // MARK: Pasted transcripts

    @Test func aTranscriptIndentedAsAWholeVerifiesAndUpdateKeepsItsIndentation() async throws {
        let sandbox = try Sandbox()
        let mail = """
            Hi, this is what I saw:

                cachesh> ns feed ttl=1m stale=30s
                ns feed ttl=1m stale=30s
                cachesh> put feed:home [1]
                keys: feed:home
                cachesh> advance 40s
                now:    2026-01-01T00:00:40.000Z
                [..]

            And then, quoted with a tab:

            \tcachesh> peek feed:home
            \tkey:           feed:home
            \tstate:         stale
            \t...

            Thanks!

            """
        try sandbox.write("mail.transcript", mail)
        let run = try await Cachesh.run(["--verify", "mail.transcript"], in: sandbox.url)
        #expect(run == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
        // A wrong line fails, and --update rewrites it in place with the block's indentation.
        try sandbox.write("mail.transcript", mail.replacingOccurrences(of: "    keys: feed:home", with: "    keys: feed:other"))
        let failed = try await Cachesh.run(["--verify", "mail.transcript"], in: sandbox.url)
        #expect(failed.status == 1 && failed.stdout.contains("-    keys: feed:other\n+    keys: feed:home\n"), "\(failed)")
        _ = try await Cachesh.run(["--verify", "--update", "mail.transcript"], in: sandbox.url, cleanEnvironment: true)
        #expect(try String(contentsOf: sandbox.url.appendingPathComponent("mail.transcript"), encoding: .utf8) == mail)
    }

    @Test func aFileWithAPromptAtTheMarginIsReadAsItStands() async throws {
        let sandbox = try Sandbox()
        // The indented prompt is expected output of `echo hi`, not a command that is run.
        try sandbox.write("t.transcript", "cachesh> echo hi\nhi\n  cachesh> nonsense\n")
        let run = try await Cachesh.run(["--verify", "t.transcript"], in: sandbox.url)
        #expect(run.stdout.contains(" hi\n-  cachesh> nonsense\n") && !run.stdout.contains("unknown command"), "\(run)")
        try sandbox.write("prose.transcript", "  only prose\n    indented\n")
        #expect(try await Cachesh.run(["--verify", "prose.transcript"], in: sandbox.url).stdout.contains("prose.transcript: no commands"))
    }

    // MARK: The man page's and help's examples

    /// The `.EX` blocks of the man page, each line as it reads.
    static func manPageExampleBlocks() throws -> [[String]] {
        let page = try ManPageTests.read("man/cachesh.1")
        var blocks: [[String]] = []
        var current: [String]?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == ".EX" { current = [] } else if line == ".EE" {
                if let block = current { blocks.append(block) }
                current = nil
            } else if current != nil {
                current!.append(ManPageTests.plain(line))
            }
        }
        return blocks
    }

    /// A directory holding what the examples name: the man page's own configuration as
    /// `app.json` and `config.json`, a script, a trace, the repository's examples.
    static func exampleDirectory() throws -> Sandbox {
        let sandbox = try Sandbox()
        let blocks = try manPageExampleBlocks()
        let configuration = try #require(blocks.first { $0.first == "{" }).joined(separator: "\n")
        for name in ["app.json", "config.json"] { try sandbox.write(name, configuration) }
        try sandbox.write("repro.cachesh", "get feed:home\n")
        try sandbox.write("bug-report.cachesh", "get feed:home\n")
        try sandbox.write("setup.cachesh", "echo set up\n")
        try sandbox.write("trace.txt", "feed:a\nfeed:b\nfeed:a\n")
        // replay-merge's example: the two parts of a sweep of trace.txt, as `--json` wrote them.
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("parts"), withIntermediateDirectories: true)
        try sandbox.write("parts/1.json", #"{"command":"replay","namespace":"default","ok":true,"rows":[],"shard":{"combinations":[{"max":10,"policy":"lru","stale_ms":null,"ttl_ms":null}],"count":2,"end_unit":0,"first_unit":0,"index":1,"several":false,"source":"trace.txt","traces":["trace.txt"],"units":1},"traces":[]}"# + "\n")
        try sandbox.write("parts/2.json", #"{"command":"replay","namespace":"default","ok":true,"rows":[{"combination":0,"evictions":0,"expirations":0,"hit_ratio":0.3333333333333333,"hits":1,"max":10,"misses":2,"policy":"lru","requests":2,"stale_hits":0,"stale_ms":null,"trace":0,"ttl_ms":null}],"shard":{"combinations":[{"max":10,"policy":"lru","stale_ms":null,"ttl_ms":null}],"count":2,"end_unit":1,"first_unit":0,"index":2,"several":false,"source":"trace.txt","traces":["trace.txt"],"units":1},"traces":[{"duration_ms":2,"file":"trace.txt","trace":0,"trace_requests":3}]}"# + "\n")
        // A copy, not a link: the transcripts write their snapshots beside themselves.
        try sandbox.copyExamples()
        try FileManager.default.copyItem(at: Cachesh.packageRoot.appendingPathComponent("README.md"),
                                         to: sandbox.url.appendingPathComponent("README.md"))
        return sandbox
    }

    @Test func everyTranscriptAndCommandLineOfTheManPageRuns() async throws {
        let blocks = try Self.manPageExampleBlocks()
        var transcripts = 0, commandLines = 0
        for block in blocks where block.first != "{" {
            let prompts = block.filter { $0.hasPrefix("cachesh> ") }
            let shell = block.filter { $0.hasPrefix("$ ") }
            let output = block.filter { !$0.hasPrefix("cachesh> ") && !$0.hasPrefix("$ ") }
            let sandbox = try Self.exampleDirectory()
            if !prompts.isEmpty && !output.isEmpty {
                // A transcript: it verifies as the page shows it, and pasted with its indentation.
                transcripts += 1
                let text = block.joined(separator: "\n") + "\n"
                try sandbox.write("example.transcript", text)
                try sandbox.write("indented.transcript", "From the man page:\n\n" + block.map { "       " + $0 }.joined(separator: "\n") + "\n")
                let run = try await Cachesh.run(["--safe", "--verify", "example.transcript", "indented.transcript"], in: sandbox.url)
                #expect(run.stdout == "2 passed, 0 failed\n", "\(text)\(run)")
            } else if shell.count == 1 && shell[0] == "$ cachesh" {
                // A typed session: its commands run without an error.
                commandLines += 1
                let run = try await Cachesh.run([], stdin: prompts.map { String($0.dropFirst(9)) }.joined(separator: "\n") + "\n",
                                                in: sandbox.url)
                #expect(run.status == 0 && run.stderr == "", "\(block)\n\(run)")
            } else {
                #expect(prompts.isEmpty && output.isEmpty && !shell.isEmpty, "an example the test does not know: \(block)")
                for line in shell {
                    commandLines += 1
                    let binary = URL(fileURLWithPath: Cachesh.binaryPath).deletingLastPathComponent().path
                    let run = try await Cachesh.run(["-c", String(line.dropFirst(2))], in: sandbox.url, executable: "/bin/sh",
                                                    environment: ["PATH": binary + ":/usr/bin:/bin", "NO_COLOR": "1"])
                    #expect(run.status == 0 && !run.stderr.contains("error"), "\(line)\n\(run)")
                }
            }
        }
        #expect(transcripts >= 1 && commandLines >= 6, "the page's examples were found")
    }

    /// Every command example of the man page (`Example: ...`) and of `help`: each runs without an
    /// error in a session that has what it names (the page's configuration, an entry, a request
    /// in flight, the files).
    @Test func everyCommandExampleOfTheManPageAndHelpRunsWithoutAnError() async throws {
        let page = try ManPageTests.read("man/cachesh.1")
        let fromPage = page.split(separator: "\n").filter { $0.hasPrefix("Example: \\fB") }
            .map { ManPageTests.plain($0.dropFirst("Example: ".count)) }
        let fromHelp = CommandCatalog.all.map(\.example).filter { !$0.isEmpty }
        #expect(Set(fromPage) == Set(fromHelp))
        let prelude = """
            load config.json
            put feed:home [{"id":1,"likes":3}] tags=home
            snapshot snapshot.json
            snapshot before.json
            server latency 1s
            get feed:home --force --nowait

            """
        for example in Set(fromPage).union(fromHelp).sorted() {
            let sandbox = try Self.exampleDirectory()
            // request needs an HTTP namespace, which the prelude's snapshots would refuse: after them.
            try sandbox.write("example.cachesh", prelude + (example.hasPrefix("request ") ? "ns api http\n" : "") + example + "\n")
            let run = try await Cachesh.run(["example.cachesh"], in: sandbox.url)
            #expect(run.status == 0 && run.stderr == "", "\(example)\n\(run)")
        }
    }
}
