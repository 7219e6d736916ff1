import CacheCore
import CacheShell
import Testing
import TestSupport

/// `client NAME` (SPEC §3 Clients, §2 Clients): several caches on one server and one clock.
@Suite struct ClientTests {
    static func run(_ script: String) async -> String {
        await TestShell().scriptText(SourceFile(name: "t.cachesh", text: script))
    }

    @Test func aSessionOfOneClientNeverNamesIt() async {
        let out = await Self.run("""
            watch *
            put a:1 1
            at 10ms echo later
            advance 20ms
            """)
        #expect(!out.contains("main"), "\(out)")
        #expect(!out.contains("["), "\(out)")
        let listed = await Self.run("client")
        #expect(listed == "* main (0 entries)\n")
    }

    @Test func eachClientHasItsOwnCacheAndStatsOnTheOneServer() async {
        let out = await Self.run("""
            server set a:1 {"n":1}
            get a:1
            client tab2
            peek a:1
            server set a:1 {"n":2}
            get a:1
            expect stats misses=1 hits=0
            client main
            expect peek a:1 value.n=1
            expect stats misses=1
            client
            """)
        #expect(out.contains("client tab2: new, on the same server and clock (2 clients)\nkey:           a:1\nstate:         absent"), "\(out)")
        #expect(out.components(separatedBy: "expect: ok").count == 4, "\(out)")
        #expect(out.hasSuffix("* main (1 entry)\n  tab2 (1 entry)\n"), "\(out)")
    }

    @Test func scheduledWorkRunsByTimeThenClientOrderWhoeverMovesTheClock() async {
        let out = await Self.run("""
            client tab2
            at 30ms echo tab2 at 30
            at 20ms echo tab2 at 20
            client main
            at 20ms echo main at 20
            at 10ms echo main at 10
            client tab2
            advance 1s
            """)
        let lines = out.split(separator: "\n").filter { $0.contains("]   ") }
        #expect(lines == ["[main]   main at 10", "[main]   main at 20", "[tab2]   tab2 at 20", "[tab2]   tab2 at 30"], "\(out)")
    }

    @Test func aBlockingReadInOneClientRunsTheOthersEarlierWorkFirstAndAllClocksAgree() async {
        let out = await Self.run("""
            server set a:1 1
            client tab2
            at 40ms echo tab2 at 40
            at 150ms echo tab2 at 150
            client main
            get a:1
            client tab2
            expect now now_ms=100
            advance 100ms
            """)
        #expect(out.contains("[tab2] at 2026-01-01T00:00:00.040Z: echo tab2 at 40\n[tab2]   tab2 at 40\nkey:           a:1"), "\(out)")
        #expect(out.contains("expect: ok\n[tab2] at 2026-01-01T00:00:00.150Z"), "\(out)")
    }

    @Test func eventsAndPushesReachEveryClientUnlessOneIsNamed() async {
        let out = await Self.run("""
            load {"push": {"bump": {"invalidate": ["a:*"]}}}
            server set a:1 {"n":1}
            put a:1 {"n":1}
            client tab2
            put a:1 {"n":1}
            event patch a:1 {"n":{"$inc":1}}
            expect peek a:1 value.n=2
            event patch a:1 {"n":{"$inc":1}} client=main
            expect peek a:1 value.n=2
            push bump client=tab2
            expect peek a:1 state=stale
            client main
            expect peek a:1 value.n=3 state=fresh
            push bump
            expect peek a:1 state=stale
            expect server show a:1 value.n=3
            """)
        #expect(out.components(separatedBy: "expect: ok").count == 7, "\(out)")
        #expect(!out.contains("error"), "\(out)")
    }

    @Test func anEventOneClientCannotTakeChangesNothingAnywhere() async {
        let out = await Self.run("""
            server set a:1 {"n":1}
            put a:1 {"n":1}
            client tab2
            put a:1 {"n":"text"}
            event patch a:1 {"n":{"$inc":1}}
            expect peek a:1 value.n="text"
            client main
            expect peek a:1 value.n=1
            expect server show a:1 value.n=1
            push nope
            """)
        #expect(out.contains("t.cachesh:5: error: cannot $inc at n: it is a string, not a number (in client tab2)\nexpect: ok"), "\(out)")
        #expect(out.components(separatedBy: "expect: ok").count == 4, "\(out)")
        #expect(out.hasSuffix("t.cachesh:10: error: no push rule for \"nope\" (no rules are configured) (in client main)\n"), "\(out)")
    }

    @Test func linesNameTheirClientInJSONToo() async {
        let shell = await TestShell()
        let out = await shell.typed("output json\nwatch *\nclient tab2\nwatch *\nput a:1 1\nevent patch a:1 2")
        #expect(out.contains(#"{"at":"2026-01-01T00:00:00.000Z","at_ms":0,"client":"tab2","event":"stored","key":"a:1","source":"cache","state":"fresh","value":1}"#), "\(out)")
        #expect(out.contains(#""client":"main","event":"patched""#) == false, "main holds no a:1: \(out)")
        #expect(out.contains(#""client":"tab2","event":"patched""#), "\(out)")
    }

    /// An idempotency key is the client's as well as the mutation's: two clients' first
    /// idempotent mutations are two writes, not one write and its retry.
    @Test func twoClientsIdempotentMutationsAreBothApplied() async {
        let out = await Self.run("""
            server set c:1 {"n":0}
            get c:1
            client tab2
            get c:1
            client main
            mutate c:1 {"n":1} --idempotent
            advance 1s
            client tab2
            mutate c:1 {"n":2} --idempotent
            advance 1s
            expect server show c:1 value.n=2
            """)
        #expect(out.contains("expect: ok"), "\(out)")
        #expect(!out.contains("expect: failed"), "\(out)")
    }

    @Test func aSessionHasAtMostSixteenClients() async {
        var script = ""
        for i in 2...16 { script += "client c\(i)\n" }
        script += "client c17\nclient\n"
        let out = await Self.run(script)
        #expect(out.contains("t.cachesh:16: error: client: a session has at most 16 clients (main c2 "), "\(out)")
        #expect(!out.contains("c17 ("), "no client c17 was made: \(out)")
        #expect(out.contains("* c16 (0 entries)"), "the current client is still c16: \(out)")
    }

    @Test func aBadClientNameIsRefusedAndChangesNothing() async {
        for name in ["Tab", "2tab", "tab_2", "t\u{202e}b", String(repeating: "a", count: 33), "-x", "\"\""] {
            let out = await Self.run("client \(name)\nclient")
            #expect(out.contains("t.cachesh:1: error: client: a client name "), "\(name): \(out)")
            #expect(out.hasSuffix("* main (0 entries)\n"), "\(name): \(out)")
        }
        let long = await Self.run("client " + String(repeating: "a", count: 32) + "\nclient")
        #expect(long.contains("2 clients"), "\(long)")
    }

    @Test func restoreIsRefusedWithSeveralClientsAndASnapshotIsTheCurrentClients() async {
        let shell = await TestShell()
        let text = await shell.typed("put a:1 1\nclient tab2\nput b:1 2\nsnapshot")
        #expect(text.contains("\"b:1\"") && !text.contains("\"a:1\""), "\(text)")
        #expect(!text.contains("\"client\""), "no new field: \(text)")
        let out = await shell.typed("restore {\"format\": \"cachesh-snapshot\"}\nkeys")
        #expect(out.contains("error: restore: a snapshot holds one client's cache and its clock, which the 2 clients share"), "\(out)")
        #expect(out.hasSuffix("b:1  fresh  0\n") || out.contains("b:1"), "\(out)")
    }

    @Test func theTimelineIsTheCurrentClients() async {
        let out = await Self.run("""
            put a:1 1
            client tab2
            put a:1 2
            timeline a:1
            client main
            timeline a:1
            """)
        let blocks = out.components(separatedBy: "client main\n")
        #expect(blocks.count == 2 && blocks[0].contains("stored a:1 fresh 2") && !blocks[0].contains("stored a:1 fresh 1"), "\(out)")
        #expect(blocks[1].contains("stored a:1 fresh 1") && !blocks[1].contains("fresh 2"), "\(out)")
    }

    @Test func clientCannotBeScheduled() async {
        let out = await Self.run("at 1s client tab2\nclient")
        #expect(out == "t.cachesh:1: error: client cannot be scheduled with at\n* main (0 entries)\n", "\(out)")
    }
}

/// `persist`, `hydrate` and the naive switch `persist-whole-cache` (SPEC §3 Clients, §1.2).
@Suite struct PersistedCacheTests {
    static func run(_ script: String) async -> String {
        await TestShell().scriptText(SourceFile(name: "t.cachesh", text: script))
    }

    static let twoTabs = """
        put a:1 1 tags=x
        persist
        client tab2
        put a:2 2
        persist
        client tab3
        hydrate
        keys
        """

    @Test func persistMergesEntryByEntryByDefault() async {
        let out = await Self.run(Self.twoTabs + "\nexpect peek a:1 value=1 tags=[\"x\"]")
        #expect(out.contains("persisted: a:1\nclient tab2"), "\(out)")
        #expect(out.contains("persisted: a:2\nclient tab3"), "nothing dropped: \(out)")
        #expect(out.contains("keys: a:1 a:2\n"), "\(out)")
        #expect(out.hasSuffix("expect: ok\n"), "\(out)")
    }

    @Test func theNaiveSwitchLetsTheLastWritersDumpReplaceTheNamespace() async {
        let out = await Self.run("ns a naive=persist-whole-cache\nput b:1 1\n" + Self.twoTabs + "\nexpect peek a:1 state=absent")
        #expect(out.contains("persisted: a:2\ndropped: a:1\nclient tab3"), "\(out)")
        // Only the switched namespace is written whole: b:1, which tab2 never held, stays.
        #expect(out.contains("keys: a:2 b:1\n"), "\(out)")
        #expect(out.hasSuffix("expect: ok\n"), "\(out)")
    }

    @Test func hydrateLeavesWhatTheClientHoldsAndClearForgetsTheCopy() async {
        let out = await Self.run("""
            put a:1 1
            persist
            put a:1 5
            hydrate
            expect peek a:1 value=5
            persist --clear
            clear
            hydrate
            """)
        #expect(out.contains("keys: (none)\nexpect: ok\ndropped: a:1\n"), "\(out)")
        #expect(out.hasSuffix("keys: (none)\n"), "the cleared copy hydrates nothing: \(out)")
    }

    @Test func aSnapshotKeepsNoPersistedCacheAndNoSwitchWhenOff() async {
        let shell = await TestShell()
        _ = await shell.typed("put a:1 1\npersist")
        let text = await shell.snapshotText()
        let plain = await TestShell()
        _ = await plain.typed("put a:1 1")
        #expect(text == (await plain.snapshotText()))
    }
}
