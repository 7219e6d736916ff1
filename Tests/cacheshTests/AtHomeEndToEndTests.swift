import Foundation
import Testing

/// Habits a new user brings from redis-cli, sqlite3 and psql (SPEC §3, §6): quitting words, `?`,
/// comments, brackets outside JSON values, and suggestions only when close.
@Suite struct AtHomeEndToEndTests {
    @Test(arguments: ["exit", "\\q", ".quit", ".exit", "q", "quit"])
    func quittingWordsOfOtherShellsQuit(_ word: String) async throws {
        let run = try await Cachesh.run(["-c", "echo before; \(word); echo after"])
        #expect(run == Outcome(stdout: "before\n", stderr: "", status: 0))
    }

    @Test func questionMarkIsHelp() async throws {
        let help = try await Cachesh.run(["-c", "help"]), question = try await Cachesh.run(["-c", "?"])
        #expect(question == help)
        #expect(try await Cachesh.run(["-c", "? exit"]) == Cachesh.run(["-c", "help quit"]))
    }

    @Test func aCommentEndsAtTheNextSemicolonInDashC() async throws {
        let run = try await Cachesh.run(["-c", "put a:1 1 # note; keys"])
        #expect(run == Outcome(stdout: "keys: a:1\nkey  state  age_ms\na:1  fresh  0\n", stderr: "", status: 0))
    }

    /// A `;` inside an option's JSON value is the value's (a header such as `a;b`), not the end
    /// of the command: the whole command runs, then the next.
    @Test func aSemicolonInsideAnOptionsJSONValueIsTextInDashC() async throws {
        let run = try await Cachesh.run(["--json", "-c", #"ns img http origin=https://cdn.example.com; server set img:/a 1 headers={"Cache-Control":"max-age=60;x"}; server show img:/a; expect server show img:/a value=1"#])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr == "")
        #expect(run.stdout.contains(#""Cache-Control":"max-age=60;x""#), "\(run.stdout)")
    }

    @Test func aHashInsideOrStartingALongerWordIsText() async throws {
        let run = try await Cachesh.run(["-c", "put a#b 1; echo #3 and # not this"])
        #expect(run == Outcome(stdout: "keys: a#b\n#3 and\n", stderr: "", status: 0))
    }

    @Test func anUnbalancedBracketOutsideJSONIsAnErrorOnItsLineOnly() async throws {
        let run = try await Cachesh.script("echo step [1 of 3\nput b:1 2\nkeys [ab]*\n")
        #expect(run.stdout == "keys: b:1\nkey  state  age_ms\nb:1  fresh  0\n")
        #expect(run.stderr == "script.cachesh:1: error: unbalanced \"[\": it is not closed on its line "
                + "(only a JSON value may span lines; quote text that holds a bracket)\n")
        #expect(run.status == 1)
    }

    /// In `-c` the same bracket ends at the next `;`, an error of its command alone, whose column
    /// is the command's (past a comment that the `;` ended); the commands after it run.
    @Test func anUnbalancedBracketInDashCEndsAtTheNextSemicolon() async throws {
        let run = try await Cachesh.run(["-c", "# note; echo step [1 of 3; put b:1 2; keys [ab]*"])
        #expect(run.stdout == "keys: b:1\nkey  state  age_ms\nb:1  fresh  0\n")
        #expect(run.stderr == "-c:1:9: error: unbalanced \"[\": it is not closed before the ; that ends its command "
                + "(only a JSON value may hold a ; in -c; quote text that holds a bracket)\n")
        #expect(run.status == 1)
    }

    @Test func standardInputSplitsCommandsAsAScriptDoes() async throws {
        let run = try await Cachesh.run([], stdin: "echo step [1 of 3\nput b:1 2\nput c:1 {\n\"x\": 1}\n# c\nkeys\n")
        #expect(run.stdout == "keys: b:1\nkeys: c:1\nkey  state  age_ms\nb:1  fresh  0\nc:1  fresh  0\n")
        #expect(run.stderr.hasPrefix("<stdin>:1: error: unbalanced \"[\""))
    }

    @Test(arguments: [("gte a", " (did you mean get?)"), ("stast", " (did you mean stats?)"),
                      ("exi", " (try help)"), ("evcit a", " (did you mean evict?)"), ("!", " (try help)")])
    func suggestionsOnlyWhenClose(_ typed: String, _ ending: String) async throws {
        let run = try await Cachesh.run(["-c", typed])
        let name = typed.split(separator: " ")[0]
        #expect(run.stderr == "-c:1:1: error: unknown command \"\(name)\"\(ending)\n")
    }

    @Test(arguments: [
        ("clear nope", #"clear: unknown namespace "nope" (known: default, feed)"#),
        ("stats fed", #"stats: unknown namespace "fed" (did you mean feed?)"#),
        ("invalidate nope:*", #"invalidate: unknown namespace "nope" (known: default, feed)"#),
        ("keys nope:*", #"keys: unknown namespace "nope" (known: default, feed)"#),
        ("keys x*:1", #"keys: "x*" matches no namespace (known: default, feed)"#),
        ("keys feed", #"keys: "feed" is a namespace; a pattern is over keys (did you mean feed:*?)"#),
        ("get feed:a extra", #"get takes KEY [--force] [--nowait] [--async]; unexpected "extra""#),
        ("mutate entity 1", "mutate entity needs a PATCH after the ID (mutate entity ID PATCH)"),
        ("mutate feed:a", "mutate needs a PATCH after the key (mutate KEY PATCH)"),
    ])
    func typosAreErrorsThatSayWhatWasExpected(_ typed: String, _ message: String) async throws {
        let run = try await Cachesh.run(["-c", "put feed:a 1; " + typed + "; keys"])
        #expect(run.stderr == "-c:1:15: error: \(message)\n")
        #expect(run.stdout == "keys: feed:a\nkey     state  age_ms\nfeed:a  fresh  0\n", "state unchanged")
        #expect(run.status == 1)
    }

    @Test func clearTakesNSStarAsInvalidateDoes() async throws {
        let run = try await Cachesh.run(["-c", "put feed:a 1; put b 2; clear feed:*; keys"])
        #expect(run == Outcome(stdout: "keys: feed:a\nkeys: b\nkeys: feed:a\nkey  state  age_ms\nb    fresh  0\n", stderr: "", status: 0))
    }

    @Test func aPushArgumentItsRuleDoesNotUseIsAnError() async throws {
        let config = #"{"push": {"friend-blocked": {"invalidate": ["feed:{user}"]}}}"#
        let withConfig = try await Cachesh.script("load c.json\npush friend-blocked user=42 extra=1\npush friend-blocked user=42\n",
                                            files: ["c.json": config])
        #expect(withConfig.stderr == #"script.cachesh:2: error: push "friend-blocked" takes user=VALUE; unexpected extra="# + "\n")
        #expect(withConfig.status == 1)
    }

    @Test func aTildeInAFileNameIsTheHomeDirectory() async throws {
        let home = try Sandbox()
        let run = try await Cachesh.run(["-c", "put a 1; snapshot ~/s.json; evict a; restore ~/s.json; keys"],
                                  environment: ["HOME": home.url.path])
        #expect(run.status == 0, "\(run)")
        #expect(FileManager.default.fileExists(atPath: home.url.appendingPathComponent("s.json").path))
        #expect(run.stdout.hasSuffix("key  state  age_ms\na    fresh  0\n"))
    }

    @Test func verifyWritesAJUnitReportForCI() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("good.transcript", "cachesh> echo hi\nhi\n")
        try sandbox.write("bad.transcript", "cachesh> echo <&>\nno\n")
        let run = try await Cachesh.run(["--verify", "--junit", "report.xml", "good.transcript", "bad.transcript"], in: sandbox.url)
        #expect(run.status == 1)
        let report = try String(contentsOf: sandbox.url.appendingPathComponent("report.xml"), encoding: .utf8)
        #expect(report == """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="cachesh --verify" tests="2" failures="1">
              <testsuite name="transcripts" tests="2" failures="1" errors="0" skipped="0">
                <testcase classname="transcripts" name="good.transcript"/>
                <testcase classname="transcripts" name="bad.transcript">
                  <failure message="output differs">@ bad.transcript:1
            --- bad.transcript
            +++ bad.transcript (actual)
            @@ -1,2 +1,2 @@
             cachesh&gt; echo &lt;&amp;&gt;
            -no
            +&lt;&amp;&gt;
            </failure>
                </testcase>
              </testsuite>
            </testsuites>

            """)
        let alone = try await Cachesh.run(["--junit", "r.xml", "-c", "now"], in: sandbox.url)
        #expect(alone.status == 2 && alone.stderr == "cachesh: --junit goes with --verify or --explore\n")
    }
}
