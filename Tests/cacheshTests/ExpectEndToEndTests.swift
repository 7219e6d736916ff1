import Foundation
import Testing

/// `expect`: a script asserts what it shows, and a failed assertion fails the run (exit 1) at
/// its file and line.
@Suite struct ExpectEndToEndTests {
    static let setup = """
        ns feed ttl=45m stale=5m
        server set feed:home {"posts": [{"id": 1, "likes": 3}], "a.b": {"c": "1"}}
        get feed:home

        """

    @Test func assertionsThatHoldPrintOkAndExitZero() async throws {
        let run = try await Cachesh.script(Self.setup + """
            expect peek feed:home state=fresh value.posts.0.likes=3 value."a.b".c="1" tags=[]
            expect stats feed hits=0 misses=1 requests=1
            expect get feed:home source=cache state=fresh
            expect now now_ms=100
            expect server show feed:home value= {"posts": [{"id": 1, "likes": 3}], "a.b": {"c": "1"}}
            expect keys entries.0.key=feed:home
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("expect: ok\nexpect: ok\nexpect: ok\nexpect: ok\nexpect: ok\nexpect: ok\n"), "\(run)")
    }

    @Test func aFailedAssertionNamesThePathTheValuesAndTheLine() async throws {
        let run = try await Cachesh.script(Self.setup + """
            expect peek feed:home value.posts.0.likes="3"
            expect peek feed:home value.posts.1.likes=3
            expect peek feed:home state=stale
            """)
        #expect(run.status == 1)
        #expect(run.stderr == """
            script.cachesh:4: error: expect: value.posts.0.likes: expected "3", found 3
            script.cachesh:5: error: expect: value.posts.1.likes: expected 3, found nothing
            script.cachesh:6: error: expect: state: expected "stale", found "fresh"

            """, "\(run)")
    }

    /// A space inside an inline JSON VALUE splits it into words: the error says what to write
    /// (the value as a word of its own after `PATH=`), for objects, arrays and strings, in a
    /// script and with -c; what it says to write holds.
    @Test func aValueSplitByASpaceSaysWhatToWrite() async throws {
        let run = try await Cachesh.script("""
            put a {"t": "a b", "n": ["x y", 1]}
            expect peek a value={"t":"a b","n":["x y",1]}
            expect peek a value.n=["x y",1]
            expect peek a value.t="a b" state=fresh
            expect peek a value={"t":"a b
            """)
        #expect(run.status == 1)
        #expect(run.stderr == """
            script.cachesh:2: error: expect: a space splits the value of value= into words; write value= {"t":"a b","n":["x y",1]} (PATH= then the value as a word of its own)
            script.cachesh:3: error: expect: a space splits the value of value.n= into words; write value.n= ["x y",1] (PATH= then the value as a word of its own)
            script.cachesh:4: error: expect: a space splits the value of value.t= into words; write value.t= "a b" (PATH= then the value as a word of its own)
            script.cachesh:5: error: expect: a space splits the value of value= into words; write PATH= then the value as a word of its own (value= {"a": "b c"})

            """, "\(run)")
        let fixed = try await Cachesh.script("""
            put a {"t": "a b", "n": ["x y", 1]}
            expect peek a value= {"t":"a b","n":["x y",1]}
            expect peek a value.n= ["x y",1]
            expect peek a value.t= "a b" state=fresh
            """)
        #expect(fixed.status == 0 && fixed.stdout.hasSuffix("expect: ok\nexpect: ok\nexpect: ok\n"), "\(fixed)")
        let c = try await Cachesh.run(["-c", #"put a "a b"; expect peek a value="a b""#])
        #expect(c.stderr == #"-c:1:14: error: expect: a space splits the value of value= into words; write value= "a b" (PATH= then the value as a word of its own)"# + "\n", "\(c)")
    }

    @Test func checkingTouchesNothing() async throws {
        let run = try await Cachesh.script(Self.setup + """
            expect peek feed:home state=fresh
            expect keys
            expect stats hits=0
            expect stats feed hits=0 stale_hits=0
            """.replacingOccurrences(of: "expect keys\n", with: "expect keys entries.0.age_ms=0\n"))
        #expect(run.status == 0, "\(run)")
    }

    @Test func onlyReadsAndGetAreChecked() async throws {
        let run = try await Cachesh.script("expect put a:1 1 x=1\nexpect server set a:1 1 x=1\nexpect peek a:1\nexpect\n")
        #expect(run.status == 1)
        #expect(run.stderr == """
            script.cachesh:1: error: expect runs peek, keys, stats, pending, server show, server log, now, config or get, not "put"
            script.cachesh:2: error: expect runs server show or server log
            script.cachesh:3: error: expect needs at least one PATH=VALUE after the command
            script.cachesh:4: error: expect needs a command and PATH=VALUE assertions (expect peek KEY state=fresh)

            """, "\(run)")
    }

    @Test func aMalformedPathIsAnErrorAtItsLine() async throws {
        // A quote inside a bare segment used to be a literal character of the field name, so the
        // assertion looked for a field nobody meant and failed on a misleading "found nothing".
        let run = try await Cachesh.script(Self.setup + #"""
            expect peek feed:home value.x"=1
            expect peek feed:home value."a.b=1
            expect peek feed:home value..c=1
            expect peek feed:home value."a.b"c=1
            expect peek feed:home value."a.b".c="1"
            """#)
        #expect(run.status == 1)
        #expect(run.stderr == #"""
            script.cachesh:4: error: expect: bad path value.x": a " may only open a quoted segment
            script.cachesh:5: error: expect: bad path value."a.b: a quoted segment needs its closing "
            script.cachesh:6: error: expect: bad path value..c: an empty segment
            script.cachesh:7: error: expect: bad path value."a.b"c: segments are separated by .

            """#, "\(run)")
        #expect(run.stdout.hasSuffix("expect: ok\n"), "\(run)")
    }

    @Test func jsonOutputCountsTheChecks() async throws {
        let run = try await Cachesh.script("put a:1 2\nexpect peek a:1 value=2 state=fresh\n", options: ["--json"])
        #expect(run.stdout.split(separator: "\n").last == #"{"checked":2,"command":"expect","ok":true}"#, "\(run)")
    }
}
