import Foundation
import Testing

/// `cancel`, `activate`, `deactivate`, `watch --active`, `focus`, `poll` and `unpoll` through the
/// built binary: what a script of a bug report prints and asserts.
@Suite struct AppBehaviourEndToEndTests {
    /// `unwatch --keep-active` stops watching as an app's unwatch does, leaving the active keys
    /// active; without it `unwatch KEY` makes KEY inactive and `unwatch` alone every key.
    @Test func unwatchKeepActiveLeavesTheActiveKeys() async throws {
        let out = try await Cachesh.run(["-c", "watch a:1 --active; activate b:1; unwatch a:1 --keep-active; activate; "
                                         + "unwatch --keep-active; activate; watch; unwatch a:1; activate; unwatch; activate"])
        #expect(out == Outcome(stdout: """
            watching a:1 (active)
            b:1 is active
            stopped watching a:1
            active: a:1 b:1
            watching nothing
            active: a:1 b:1
            watching: (nothing)
            active: a:1 b:1
            was not watching a:1
            active: b:1
            watching nothing
            active: (nothing)

            """, stderr: "", status: 0))
    }

    @Test func cancelDiscardsTheAnswerAndTheWaitingReadGetsAnError() async throws {
        let run = try await Cachesh.script("""
            server set feed:home [1]
            get feed:home --async
            at 40ms cancel feed:home
            advance 40ms
            advance 1s
            expect server log requests.0.fate=cancelled
            expect peek feed:home state=absent
            cancel feed:home
            """)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("  error:         cancelled\n"), "\(run)")
        #expect(run.stdout.contains("expect: ok\nexpect: ok\n"), "\(run)")
        #expect(run.stderr == "script.cachesh:8: error: no fetch of feed:home in flight: nothing to cancel\n", "\(run)")
    }

    @Test func anActiveKeyRefetchesWhenInvalidatedAndOnFocus() async throws {
        let run = try await Cachesh.script("""
            server set a 1
            get a
            watch a --active
            server set a 2
            invalidate a
            advance 100ms
            expect peek a state=fresh value=2
            server offline
            invalidate a
            server online
            advance 100ms
            expect server log requests.2.at_ms=200 requests.2.fate=stored
            focus
            expire a
            advance 100ms
            unwatch a
            invalidate a
            focus
            output json
            watch
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("watching a (active)\n"), "\(run)")
        #expect(run.stdout.contains("keys: (none)\n"), "\(run)")
        #expect(run.stdout.contains("* 2026-01-01T00:00:00.400Z fetched a fresh 2 (server)\n"), "\(run)")
        #expect(run.stdout.hasSuffix("stopped watching a\nkeys: a\nkeys: (none)\n"
                                     + "{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\n{\"command\":\"watch\",\"ok\":true,\"watching\":[]}\n"), "\(run)")
    }

    /// A transcript of `activate` and `deactivate` (a key active with no observer: refetched when
    /// invalidated and on focus, silently) replays byte for byte; one changed line fails it.
    @Test func aTranscriptOfActivateReplaysByteForByte() async throws {
        let sandbox = try Sandbox()
        let transcript = """
            A feed kept fresh without an observer.

            cachesh> server set feed:home 1
            server: set feed:home
            cachesh> get feed:home
            key:           feed:home
            state:         fresh
            value:         1
            source:        server
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            cachesh> activate feed:home
            feed:home is active
            cachesh> server set feed:home 2
            server: set feed:home
            cachesh> invalidate feed:home
            keys: feed:home
            cachesh> advance 100ms
            now:    2026-01-01T00:00:00.200Z
            now_ms: 200
            cachesh> peek feed:home
            key:           feed:home
            state:         fresh
            value:         2
            age_ms:        0
            expires_in_ms: 300000 (5m)
            tags:          []
            cachesh> deactivate feed:home
            feed:home is no longer active
            cachesh> activate badge:n
            badge:n is active
            cachesh> server set badge:n 7
            server: set badge:n
            cachesh> focus
            keys: badge:n
            cachesh> advance 100ms
            now:    2026-01-01T00:00:00.300Z
            now_ms: 300
            cachesh> output json
            {"command":"output","mode":"json","ok":true}
            cachesh> activate
            {"active":["badge:n"],"command":"activate","ok":true}
            cachesh> deactivate
            {"command":"deactivate","keys":["badge:n"],"ok":true}
            cachesh> deactivate badge:n
            {"command":"deactivate","key":"badge:n","ok":true,"was_active":false}

            """
        try sandbox.write("active.transcript", transcript)
        let verified = try await Cachesh.run(["--verify", "active.transcript"], in: sandbox.url)
        #expect(verified == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(verified)")
        try sandbox.write("changed.transcript", transcript.replacingOccurrences(of: "keys: badge:n\n", with: "keys: (none)\n"))
        let changed = try await Cachesh.run(["--verify", "changed.transcript"], in: sandbox.url)
        #expect(changed.status == 1 && changed.stdout.contains("-keys: (none)\n+keys: badge:n\n"), "\(changed)")
    }

    /// A key made active with `activate` (not watched) is kept by `snapshot`/`restore`.
    @Test func aKeyMadeActiveSurvivesASnapshot() async throws {
        let run = try await Cachesh.script("""
            activate feed:home
            snapshot snap.json
            deactivate
            activate
            restore snap.json
            activate
            watch
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("nothing is active\nactive: (nothing)\nrestored snap.json (0 entries, now 2026-01-01T00:00:00.000Z)\n"
                                     + "active: feed:home\nwatching: (nothing)\nactive: feed:home\n"), "\(run)")
    }

    @Test func activeNeedsAKey() async throws {
        let run = try await Cachesh.script("watch feed:* --active\nwatch\n")
        #expect(run.status == 1)
        #expect(run.stderr == "script.cachesh:1: error: --active takes one KEY, not a pattern\n", "\(run)")
        #expect(run.stdout == "watching: (nothing)\n", "\(run)")
    }

    @Test func pollRefetchesOnScheduleShowsInPendingAndSurvivesASnapshot() async throws {
        let run = try await Cachesh.script("""
            server set feed:home 1
            poll feed:home every=30s
            pending
            advance 61s
            expect server log requests.0.at_ms=30000 requests.1.at_ms=60000
            snapshot snap.json
            unpoll feed:home
            advance 1m
            expect pending pending=[]
            restore snap.json
            advance 29s
            expect server log requests.2.at_ms=90000
            poll
            unpoll
            unpoll feed:home
            poll feed:home
            """)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("polling feed:home every 30s\n"), "\(run)")
        #expect(run.stdout.contains("poll  feed:home every 30s\n"), "\(run)")
        #expect(run.stdout.components(separatedBy: "expect: ok").count == 4, "\(run)")
        #expect(run.stdout.contains("polling nothing\nwas not polling feed:home\n"), "\(run)")
        #expect(run.stderr == "script.cachesh:16: error: poll needs every=D (poll KEY every=D)\n", "\(run)")
    }
}

@Suite struct RetryEndToEndTests {
    @Test func everyAttemptIsInTheServerLogAndTheReadFailsOnlyAfterTheLast() async throws {
        let run = try await Cachesh.script("""
            ns feed retry=2 backoff=1s
            server set feed:home 1
            server fail 3 feed:home
            get feed:home
            expect server log requests.0.at_ms=0 requests.1.at_ms=1100 requests.2.at_ms=3200 requests.2.fate=failed
            expect now now_ms=3300
            config
            ns feed retry=31
            """)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.hasPrefix("ns feed ttl=5m retry=2 backoff=1s\n"), "\(run)")
        #expect(run.stdout.contains("error:         server error\n"), "\(run)")
        #expect(run.stdout.contains("expect: ok\nexpect: ok\n"), "\(run)")
        #expect(run.stderr == "script.cachesh:8: error: retry must be a whole number from 0 to 30, not \"31\"\n", "\(run)")
    }

    /// The table is then wider than 80 columns, so it is written a record a namespace (SPEC §4).
    @Test func theNamespaceTableShowsRetriesWhenSomeNamespaceRetries() async throws {
        let run = try await Cachesh.script("ns feed ttl=1m retry=3 backoff=250ms\nns page ttl=2m\nns\nns feed retry=0\nns\n")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("""
            timeout:        -
            retry:          3
            backoff:        250ms
            purgeable:      no
            entries:        0

            namespace:      page
            ttl:            2m
            stale:          -
            max:            -
            policy:         lru
            stale-if-error: -
            timeout:        -
            retry:          -
            backoff:        -
            purgeable:      no
            entries:        0
            ns feed ttl=1m
            namespace  ttl  stale  max  policy  stale-if-error  timeout  purgeable  entries
            feed       1m   -      -    lru     -               -        no         0
            page       2m   -      -    lru     -               -        no         0

            """), "\(run)")
    }

    @Test func aConfigurationSetsRetries() async throws {
        let run = try await Cachesh.script("load c.json\nconfig\n",
                                     files: ["c.json": #"{"namespaces": {"feed": {"retry": 1, "backoff": "250ms"}}}"#])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("ns feed ttl=5m retry=1 backoff=250ms\n"), "\(run)")
    }
}

@Suite struct MutationBehaviourEndToEndTests {
    @Test func mutateWhileLoadingPessimisticAndWithoutABody() async throws {
        let run = try await Cachesh.script("""
            server set post:1 {"likes": 1}
            get post:1 --async
            mutate post:1 {"likes": {"$inc": 1}}
            advance 100ms
            expect peek post:1 value.likes=2
            mutate post:1 {"likes": {"$inc": 10}} --pessimistic
            expect peek post:1 value.likes=2
            advance 100ms
            expect peek post:1 value.likes=12
            server fail 1
            mutate post:1 {"likes": {"$inc": 100}} --pessimistic
            advance 100ms
            expect stats rollbacks=0
            expect peek post:1 value.likes=12
            mutate post:1 {"likes": {"$inc": 5}} --refetch
            advance 100ms
            expect server log requests.5.kind=fetch
            mutate post:1 {"a": 1} --nosuch
            """)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.components(separatedBy: "expect: ok").count == 7, "\(run)")
        #expect(run.stderr == "script.cachesh:18: error: mutate has no flag --nosuch (it takes --pessimistic, --refetch, --idempotent)\n", "\(run)")
    }
}

@Suite struct AppBehaviourStoreEndToEndTests {
    /// A store keeps polls, active keys and retry settings across runs: the poll comes due in the next one.
    @Test func aStoreKeepsPollsActiveKeysAndRetries() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        for command in ["server set feed:home 1", "poll feed:home every=30s", "watch a --active", "ns feed retry=2"] {
            #expect(try await Cachesh.run(["--store", store, "-c", command], in: sandbox.url).status == 0)
        }
        let resumed = try await Cachesh.run(["--store", store, "-c", "advance 31s\nwatch\nconfig\nexpect server log requests.0.at_ms=30000"],
                                      in: sandbox.url)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stdout.contains("watching: a\nactive: a\n"), "\(resumed)")
        #expect(resumed.stdout.contains("ns feed ttl=5m retry=2 backoff=1s\n"), "\(resumed)")
        #expect(resumed.stdout.hasSuffix("expect: ok\n"), "\(resumed)")
    }

    /// A key made active with `activate` alone (no watch) is kept by the store: the next run
    /// still has it active, and refetches it when it is invalidated.
    @Test func aStoreKeepsAKeyMadeActiveWithoutAWatch() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try await Cachesh.run(["--store", store, "-c", "server set feed:home 1\nget feed:home\nactivate feed:home"], in: sandbox.url)
        #expect(first.status == 0 && first.stdout.hasSuffix("feed:home is active\n"), "\(first)")
        let resumed = try await Cachesh.run(["--store", store, "-c", "activate\nwatch\ninvalidate feed:home\nadvance 1s\nexpect server log requests.1.fate=stored"],
                                            in: sandbox.url)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stdout.hasPrefix("active: feed:home\nwatching: (nothing)\nactive: feed:home\n"), "\(resumed)")
        #expect(resumed.stdout.hasSuffix("expect: ok\n"), "\(resumed)")
    }

    /// A next page in flight under `next-page-drops-writes` when a run ends holds the earlier
    /// pages; the store keeps them, so its answer in the next run writes them back over a `put`
    /// made meanwhile, as in one run.
    @Test func aStoreKeepsTheEarlierPagesANextPageHolds() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try await Cachesh.run(["--store", store, "-c", """
            ns feed naive=next-page-drops-writes; server latency 100ms; server set feed:home@1 [1]; server set feed:home@2 [2]
            get feed:home@1; pages feed:home --next --nowait
            """], in: sandbox.url)
        #expect(first.status == 0 && first.stdout.hasSuffix("pending:       true\n"), "\(first)")
        let resumed = try await Cachesh.run(["--store", store, "-c", "put feed:home@1 [9]\nadvance 200ms\nexpect peek feed:home@1 value=[1]"],
                                            in: sandbox.url)
        #expect(resumed.status == 0 && resumed.stdout.hasSuffix("expect: ok\n"), "\(resumed)")
    }
}
