import Foundation
import Testing

/// `client NAME` as a user runs it (SPEC §3 Clients): the built binary, its output and exit status.
@Suite struct ClientsEndToEndTests {
    @Test func twoTabsShareTheServerAndTheClockAndAnEventReachesBoth() async throws {
        let run = try await Cachesh.script("""
            server set a:1 {"n":1}
            watch a:1
            get a:1
            client tab2
            watch a:1
            get a:1 --async
            client main
            server set a:1 {"n":2}
            advance 100ms
            event patch a:1 {"n":{"$inc":1}}
            expect peek a:1 value.n=2
            client tab2
            expect peek a:1 value.n=2
            expect server show a:1 value.n=3
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr == "", "\(run)")
        // The second tab's fetch was sent at 100ms, before the server's change: the server
        // answers as of sending (SPEC §1.1), so it holds {"n":1}; the event then moves each
        // tab's copy by one, and the server's data by one.
        #expect(run.stdout.contains("""
            [tab2] * 2026-01-01T00:00:00.200Z fetched a:1 fresh {"n":1} (server)
            [tab2] read at 2026-01-01T00:00:00.200Z:
            """), "\(run)")
        #expect(run.stdout.contains("""
            [main] * 2026-01-01T00:00:00.200Z patched a:1 fresh {"n":2} (server)
            [tab2] * 2026-01-01T00:00:00.200Z patched a:1 fresh {"n":2} (server)
            keys: a:1
            expect: ok
            """), "\(run)")
        #expect(!run.stdout.contains("[main] * 2026-01-01T00:00:00.100Z"), "main's first read was alone: \(run)")
    }

    @Test func aStoreKeepsOneWriter() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let run = try await Cachesh.run(["--store", store, "-c", "put a:1 1; client tab2; client; keys"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "-c:1:12: error: client: a store keeps one writer (the first client, main); "
                + "several clients need a session without --store\n", "\(run)")
        #expect(run.stdout == "keys: a:1\n* main (1 entry)\nkey  state  age_ms\na:1  fresh  0\n", "\(run)")
    }

    @Test func jsonLinesCarryTheClientAndRepliesDoNot() async throws {
        let run = try await Cachesh.run(["--json", "-c", "watch *; client w; watch *; put a:1 1; client"])
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"{"at":"2026-01-01T00:00:00.000Z","at_ms":0,"client":"w","event":"stored","key":"a:1","source":"cache","state":"fresh","value":1}"#), "\(run)")
        #expect(lines.contains(#"{"command":"put","keys":["a:1"],"ok":true}"#), "\(run)")
        #expect(lines.last == #"{"clients":[{"current":false,"entries":0,"name":"main"},{"current":true,"entries":1,"name":"w"}],"command":"client","current":"w","ok":true}"#, "\(run)")
    }

    @Test func aRecordedSessionOfTwoClientsVerifies() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", """
            server set a:1 1
            client tab2
            at 50ms echo tick
            get a:1
            client main
            get a:1
            """)
        let echoed = try await Cachesh.run(["--echo", "s.cachesh"], in: sandbox.url)
        #expect(echoed.status == 0, "\(echoed)")
        #expect(echoed.stdout.contains("[tab2] at 2026-01-01T00:00:00.050Z: echo tick"), "\(echoed)")
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "--safe", "s.transcript"], in: sandbox.url)
        #expect(verified.status == 0, "\(verified)")
    }

    /// A `timeline` or `explain` that `at` scheduled runs in the client that scheduled it and
    /// reads that client's changes, whichever client is current when it runs (it read the
    /// current client's, under the scheduling client's name); its echo verifies.
    @Test func aScheduledTimelineReadsTheChangesOfTheClientThatScheduledIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", """
            put a 1
            at 2s timeline *
            at 2s explain a
            client tab2
            put b 2
            advance 3s
            timeline *
            """)
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let scheduled = lines.firstIndex(of: "[main] at 2026-01-01T00:00:02.000Z: timeline *")
        #expect(scheduled != nil, "\(run)")
        if let scheduled {
            #expect(lines[scheduled + 1] == "[main]   * 2026-01-01T00:00:00.000Z stored a fresh 1 (cache)", "\(run)")
            #expect(lines[scheduled + 2] == "[main] at 2026-01-01T00:00:02.000Z: explain a", "\(run)")
        }
        #expect(!run.stdout.contains("[main]   * 2026-01-01T00:00:00.000Z stored b"), "\(run)")
        #expect(lines.last == "* 2026-01-01T00:00:00.000Z stored b fresh 2 (cache)", "\(run)")
        let echoed = try await Cachesh.run(["--echo", "s.cachesh"], in: sandbox.url)
        #expect(echoed.status == 0, "\(echoed)")
        try sandbox.write("s.transcript", echoed.stdout)
        let verified = try await Cachesh.run(["--verify", "--safe", "s.transcript"], in: sandbox.url)
        #expect(verified.status == 0, "\(verified)")
    }

    @Test func badClientInputIsOneErrorLineAndTheSessionGoesOn() async throws {
        let run = try await Cachesh.script("""
            client Tab
            client tab2 extra
            event patch a:1 1 client=nobody
            push x client=main
            at 1s client tab2
            client
            """)
        #expect(run.status == 1)
        #expect(run.stderr == """
            script.cachesh:1: error: client: a client name is a lowercase letter, then lowercase letters, digits or - (like tab2 or widget)
            script.cachesh:2: error: client takes [NAME]; unexpected "extra"
            script.cachesh:3: error: client=: there is no client nobody (clients: main; client NAME makes one)
            script.cachesh:4: error: no push rule for "x" (no rules are configured)
            script.cachesh:5: error: client cannot be scheduled with at

            """, "\(run)")
        #expect(run.stdout == "* main (0 entries)\n", "\(run)")
    }
}
