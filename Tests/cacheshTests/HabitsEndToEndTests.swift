import Foundation
import Testing

/// A user's slips and habits, run through the built binary as a user would: a namespace typed
/// where a key belongs, a wait that would never end, habits from redis-cli, sqlite3 and psql,
/// `help` on a subcommand or an idea, a `stale=` that can never serve stale, and where a
/// not-found answer came from.
@Suite struct HabitsEndToEndTests {
    /// The error of a bare word that names a namespace and no cached key, for a command that
    /// takes `NS:*` (`scopes`) or only a key.
    private static func slip(_ line: Int, _ command: String, scopes: Bool) -> String {
        let fix = scopes ? "did you mean feed:*?" : "did you mean a key feed:ID? keys feed:* lists them"
        return "script.cachesh:\(line): error: \(command): \"feed\" is a namespace, and no key of that name is cached "
            + "(\(fix); default:feed names the key)"
    }

    /// `invalidate feed`, where feed is a namespace and no key `default:feed` exists, did nothing
    /// and exited 0. Every command that takes a KEY refuses that slip with one line naming the fix,
    /// and the cache is as before (its snapshot byte for byte).
    @Test func aNamespaceTypedWhereAKeyBelongsIsRefusedByEveryKeyCommand() async throws {
        let commands: [(String, Bool)] = [
            ("invalidate feed", true), ("expire feed", false), ("expire feed in=1s", false), ("evict feed", false),
            ("peek feed", false), ("get feed", false), ("get feed --force", false), ("get feed --async", false),
            ("mget feed:home feed", false), ("watch feed", true), ("watch feed --active", true), ("unwatch feed", true),
            ("timeline feed", true), ("explain feed", false), ("cancel feed", false), ("activate feed", false),
            ("deactivate feed", false), ("poll feed every=1s", false), ("unpoll feed", false),
            ("mutate feed {\"a\":1}", false), ("event patch feed {\"a\":1}", false), ("server next feed", false),
            ("server latency 1s feed", false), ("server fail 1 feed", false),
        ]
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", "ns feed ttl=1m\nput feed:home 1\nsnapshot before.json\n"
                          + commands.map(\.0).joined(separator: "\n") + "\nsnapshot after.json\n")
        let outcome = try await Cachesh.run(["script.cachesh"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome)")
        let names = commands.map { command in
            let words = command.0.split(separator: " ")
            // A subcommand of `server` is named with it, as its usage errors name it.
            return words[0] == "server" ? words.prefix(2).joined(separator: " ") : String(words[0])
        }
        let expected = commands.indices.map { Self.slip($0 + 4, names[$0], scopes: commands[$0].1) }
        #expect(outcome.stderr == expected.joined(separator: "\n") + "\n", "\(outcome.stderr)")
        #expect(outcome.stdout == "ns feed ttl=1m\nkeys: feed:home\nwrote before.json (1 entry)\nwrote after.json (1 entry)\n")
        let before = try String(contentsOf: sandbox.url.appendingPathComponent("before.json"), encoding: .utf8)
        let after = try String(contentsOf: sandbox.url.appendingPathComponent("after.json"), encoding: .utf8)
        #expect(before == after)
    }

    /// The slip is refused only when it is one: `default:feed` names that key, a key `feed` that
    /// is cached is read, `put feed` creates it, and a word that names no namespace is a key as before.
    @Test func aKeyNamedLikeANamespaceStaysReachable() async throws {
        let outcome = try await Cachesh.script("""
            ns feed ttl=1m
            peek default:feed
            put feed 7
            peek feed
            invalidate feed
            peek other
            """)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stderr == "")
        #expect(outcome.stdout.contains("key:           feed\nstate:         fresh\nvalue:         7\n"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("keys: feed\n"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("key:           other\nstate:         absent\n"), "\(outcome.stdout)")
    }

    /// The same slip typed with `-c` and piped: the same one line, at its place.
    @Test func theSlipIsRefusedFromEveryInput() async throws {
        let c = try await Cachesh.run(["-c", "ns feed ttl=1m; invalidate feed; keys"])
        #expect(c.status == 1, "\(c)")
        #expect(c.stderr == "-c:1:17: error: invalidate: \"feed\" is a namespace, and no key of that name is cached "
                + "(did you mean feed:*?; default:feed names the key)\n")
        let piped = try await Cachesh.run([], stdin: "ns feed ttl=1m\nget feed\n")
        #expect(piped.status == 1, "\(piped)")
        #expect(piped.stderr.hasPrefix("<stdin>:2: error: get: \"feed\" is a namespace"), "\(piped)")
        #expect(piped.stdout == "ns feed ttl=1m\n")
    }

    /// A request that never answers: the refusal says `never end` and names the ways out
    /// (`ns NS timeout=D`, `--nowait`, `cancel KEY`), with no date 292 million years on; `pending`
    /// prints `never` for its due time and wait, and the way out; `at` past the end says never.
    @Test func aWaitThatNeverEndsSaysNeverAndTheWayOut() async throws {
        let outcome = try await Cachesh.script("""
            server next feed:a --no-answer
            get feed:a
            get feed:a --nowait
            pending
            at 106751991167d echo later
            cancel feed:a
            pending
            """)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == "script.cachesh:2: error: waiting for the answer to fetch feed:a would never end: its answer "
                + "never comes (server next --no-answer) and no timeout= gives up on it; nothing was sent (ns feed timeout=D "
                + "gives up on it; get feed:a --nowait reads without waiting, and cancel feed:a then drops the request)\n")
        #expect(!outcome.stdout.contains("292278994") && !outcome.stdout.contains("106751970713d"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("""
            due    in     what   detail
            never  never  fetch  feed:a
            note: a request due never is never answered: cancel feed:a drops it,
                  and ns feed timeout=D makes the next one give up
            scheduled never (at the clock's end, which it never reaches): echo later

            """), "\(outcome.stdout)")
        #expect(outcome.stdout.hasSuffix("due    in     what  detail\nnever  never  at    echo later\n"), "\(outcome.stdout)")
    }

    /// `GET a:1`, as redis-cli takes it: the error names the lower-case command.
    @Test func anUpperCaseCommandSuggestsItsLowerCaseName() async throws {
        let outcome = try await Cachesh.run([], stdin: "GET a:1\nPut a:1 2\nFOO\n")
        #expect(outcome.stderr == """
            <stdin>:1: error: unknown command "GET" (commands are lower case: did you mean get?)
            <stdin>:2: error: unknown command "Put" (commands are lower case: did you mean put?)
            <stdin>:3: error: unknown command "FOO" (try help)

            """, "\(outcome)")
        #expect(outcome.stdout == "")
    }

    /// A `;` that ends a piped or scripted line ends the command, as in sqlite3 and psql, also
    /// after a quoted string or JSON and with blanks after it; a `;` inside a line is text
    /// (`url:x;y`), and `-c` still separates at every `;`.
    @Test func aSemicolonEndingTheLineEndsTheCommand() async throws {
        let input = "put a:1 2;\nget a:1;\nput b:1 {\"x\":1};\nput c:1 \"s\" ;  \n;\nput url:x;y 3\nkeys;\n"
        for outcome in [try await Cachesh.run([], stdin: input), try await Cachesh.script(input)] {
            #expect(outcome.status == 0, "\(outcome)")
            #expect(outcome.stderr == "")
            #expect(outcome.stdout.contains("key:           a:1\nstate:         fresh\nvalue:         2\n"), "\(outcome.stdout)")
            #expect(outcome.stdout.hasSuffix("""
                key      state  age_ms
                a:1      fresh  0
                b:1      fresh  0
                c:1      fresh  0
                url:x;y  fresh  0

                """), "\(outcome.stdout)")
        }
        let c = try await Cachesh.run(["-c", "put a:1 x;y 1; keys"])
        #expect(c.stderr == "-c:1:11: error: unknown command \"y\" (try help)\n", "\(c)")
    }

    /// `help server next` explains that form; `help states` and `help transcripts` explain the
    /// ideas; a wrong subcommand or a command without any is one error line naming the fix.
    @Test func helpTakesASubcommandAndConceptTopics() async throws {
        let outcome = try await Cachesh.run([], stdin: "help server next\nhelp states\nhelp transcripts\n"
                                            + "help server nxt\nhelp get next\n")
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stdout.hasPrefix("server next [KEY] [VALUE] [latency=D]"), "\(outcome.stdout)")
        // The option's line, its meaning in the column the longest option sets.
        #expect(outcome.stdout.split(separator: "\n").contains { line in
            line.hasPrefix("  --no-answer ") && line.hasSuffix(" never answer (a timeout= fails the request)")
        }, "\(outcome.stdout)")
        #expect(outcome.stdout.contains("An entry is in one of four states (SPEC 1.1):\n  fresh "), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("A transcript is a session as a terminal shows it"), "\(outcome.stdout)")
        #expect(outcome.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(outcome.stdout)")
        #expect(outcome.stderr == """
            <stdin>:4: error: help: unknown server command "nxt" (did you mean next?)
            <stdin>:5: error: help: get has no subcommands (help get explains it)

            """, "\(outcome.stderr)")
    }

    /// `ns x ttl=1m stale=2m` can never serve stale: the reply says so in a `note:` line (and a
    /// `note` field); a stale= shorter than ttl= has none.
    @Test func aStaleNotShorterThanTheTTLGetsANote() async throws {
        let outcome = try await Cachesh.script("ns x ttl=1m stale=2m\nns y ttl=1m stale=1m\nns z ttl=2m stale=1m\n")
        #expect(outcome.stdout == """
            ns x ttl=1m stale=2m
            note: stale=2m is not shorter than ttl=1m: entries expire before they turn stale, so none is ever served stale
            ns y ttl=1m stale=1m
            note: stale=1m is not shorter than ttl=1m: entries expire before they turn stale, so none is ever served stale
            ns z ttl=2m stale=1m

            """, "\(outcome)")
        let json = try await Cachesh.script("ns x ttl=1m stale=2m\n", options: ["--json"])
        #expect(json.stdout.contains(#""note":"stale=2m is not shorter than ttl=1m: "#), "\(json)")
    }

    /// A not-found `get` asked the server: its source is `server`, in text and JSON.
    @Test func aNotFoundReadSaysItsAnswerCameFromTheServer() async throws {
        let outcome = try await Cachesh.script("get nf:1\n")
        #expect(outcome.stdout.contains("source:        server\n"), "\(outcome)")
        #expect(outcome.stdout.contains("error:         not found\n"), "\(outcome)")
        let json = try await Cachesh.script("get nf:1\nmget nf:2\n", options: ["--json"])
        #expect(json.stdout.components(separatedBy: #""source":"server""#).count == 3, "\(json)")
    }
}
