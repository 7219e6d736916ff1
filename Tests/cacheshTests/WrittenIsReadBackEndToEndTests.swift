import Foundation
import Testing

/// What cachesh writes into a snapshot or a store it reads back (SPEC §5.2, §5.3): two states it
/// wrote and then refused, found by fuzzing, the second leaving a store that could not be opened
/// again (`damaged store`).
@Suite struct WrittenIsReadBackEndToEndTests {
    /// An HTTP request of an unsafe method still in flight is a mutate request with no queued
    /// mutation: it was written so and refused on reading (`pending.requests[0].mutation:
    /// missing`). Restored, it completes as it would have.
    @Test(arguments: ["POST", "PUT", "PATCH", "DELETE"])
    func anUnsafeHTTPRequestInFlightIsRestored(method: String) async throws {
        let sandbox = try Sandbox()
        let before = "ns api http\nrequest \(method) api:/feed --nowait\n"
        let after = "advance 1s\npending\nget api:/feed\n"
        try sandbox.write("straight.cachesh", before + after)
        try sandbox.write("snapshot.cachesh", before + "snapshot x.json\nrestore x.json\n" + after)
        let straight = try await Cachesh.run(["straight.cachesh"], in: sandbox.url)
        let restored = try await Cachesh.run(["snapshot.cachesh"], in: sandbox.url)
        #expect(straight.status == 0, "\(straight)")
        #expect(restored.status == 0, "\(restored)")
        #expect(restored.stderr.isEmpty, "\(restored)")
        // The same output from the `advance` on as without the snapshot and restore.
        func fromAdvance(_ text: String) -> String { text.range(of: "now:    ").map { String(text[$0.lowerBound...]) } ?? "" }
        #expect(!fromAdvance(straight.stdout).isEmpty, "\(straight)")
        #expect(fromAdvance(restored.stdout) == fromAdvance(straight.stdout), "\(straight.stdout)\n---\n\(restored.stdout)")
    }

    @Test func aStoreWithAnUnsafeHTTPRequestInFlightOpensAgain() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("first.cachesh", "ns api http\nrequest POST api:/feed --nowait\n")
        let first = try await Cachesh.run(["--store", "s.db", "first.cachesh"], in: sandbox.url)
        #expect(first.status == 0, "\(first)")
        let again = try await Cachesh.run(["--store", "s.db", "-c", "pending; advance 1s; pending"], in: sandbox.url)
        #expect(again.status == 0, "\(again)")
        #expect(again.stderr.isEmpty, "\(again)")
        #expect(again.stdout.contains("api:/feed"), "\(again)")
    }

    /// An open `dedupe=` window survives a snapshot restored and a store opened again: a read in
    /// it shares the fetch that opened it (`source: cache`, no request) as without them.
    @Test(arguments: [false, true])
    func anOpenDedupeWindowIsKept(store: Bool) async throws {
        let sandbox = try Sandbox()
        let first = "ns k dedupe=1s\nserver set k:1 1\nget k:1\nserver set k:1 2\n"
        let then = "get k:1 --force\nstats\n"
        let straight = try await Cachesh.run(["-c", first + then], in: sandbox.url)
        let kept: Outcome
        if store {
            #expect(try await Cachesh.run(["--store", "s.db", "-c", first], in: sandbox.url).status == 0)
            kept = try await Cachesh.run(["--store", "s.db", "-c", then], in: sandbox.url)
        } else {
            kept = try await Cachesh.run(["-c", first + "snapshot x.json\nrestore x.json\n" + then], in: sandbox.url)
        }
        #expect(kept.status == 0, "\(kept)")
        #expect(straight.stdout.contains("value:         1\nsource:        cache\n"), "\(straight)")
        #expect(kept.stdout.contains("value:         1\nsource:        cache\n"), "\(kept)")
        #expect(kept.stdout.contains("requests          1      1"), "\(kept)")
    }

    /// A `load` that replaces the server's data dropped a body kind's key from the data but not
    /// from `server.bodies`: every snapshot and store after it was refused on reading (`damaged
    /// store`). The key goes whole, as by `server delete`.
    @Test func aLoadThatReplacesTheServersDataLeavesAStoreThatOpens() async throws {
        let sandbox = try Sandbox()
        let first = try await Cachesh.run(["--store", "s.db", "-c",
                                           #"ns web http; server set web:/a text=hi; load {"namespaces":{"web":{"http":true}},"server":{"data":{}}}"#],
                                          in: sandbox.url)
        #expect(first.status == 0, "\(first)")
        let again = try await Cachesh.run(["--store", "s.db", "-c", "server show"], in: sandbox.url)
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    /// A `load` that makes an HTTP namespace a plain one while an HTTP request of it is in flight
    /// or an HTTP answer is queued for it is refused, the cache as before: the request was written
    /// into snapshots and stores without its exchange (then refused on reading), and the answer
    /// was written into a recording as a `server next` that no longer takes its fields.
    @Test(arguments: [
        ("request POST web:/a --nowait", "web has an HTTP request in flight (web:/a): it stays an HTTP namespace until the request completes (advance)"),
        ("server next web:/a \"x\" status=201", "web has an HTTP answer queued (server next web:/a): it stays an HTTP namespace until the answer is taken"),
    ])
    func aNamespaceStaysHTTPWhileHTTPWorkIsPending(pending: String, message: String) async throws {
        let sandbox = try Sandbox()
        let run = try await Cachesh.run(["--store", "s.db", "-c", "ns web http\n\(pending)\nload {\"namespaces\":{}}\nconfig"], in: sandbox.url)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "-c:3:1: error: load: \(message)\n", "\(run)")
        #expect(run.stdout.contains("ns web http"), "the configuration is as before: \(run)")
        let again = try await Cachesh.run(["--store", "s.db", "-c", "now"], in: sandbox.url)
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    /// An answer `server next` queued before its namespace became an HTTP one kept its key as
    /// written (`web:/./a`); a recording queued it again after `ns web http`, where the key is
    /// normalized (`web:/a`), so the replay served it where the session did not. A namespace
    /// becomes an HTTP one before any answer is queued for a key of it (`ns` and `load`).
    @Test(arguments: ["ns web http", #"load {"namespaces":{"web":{"http":true}}}"#])
    func aNamespaceBecomesHTTPBeforeAnAnswerIsQueuedForIt(command: String) async throws {
        let sandbox = try Sandbox()
        let run = try await Cachesh.run(["-c", "server next web:/./a \"x\"\n\(command)\nns"], in: sandbox.url)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.hasSuffix("error: \(command.hasPrefix("load") ? "load: " : "")web has an answer queued (server next web:/./a): "
                                     + "a namespace becomes an HTTP one before any answer is queued for a key of it\n"), "\(run)")
        #expect(!run.stdout.contains("ns web http"), "\(run)")
    }

    /// A backoff set without `retry=` was not written (`backoff_ms` went only with `retry`), so a
    /// store, a snapshot and a recording lost it, and a later `retry=1` showed the default 1s.
    @Test func aBackoffSetWithoutRetryIsKept() async throws {
        let sandbox = try Sandbox()
        #expect(try await Cachesh.run(["--store", "s.db", "-c", "ns todo backoff=2s"], in: sandbox.url).status == 0)
        let again = try await Cachesh.run(["--store", "s.db", "-c", "ns todo retry=1"], in: sandbox.url)
        #expect(again.stdout == "ns todo ttl=5m retry=1 backoff=2s\n", "\(again)")
        try sandbox.write("r.cachesh", "ns todo backoff=2s\nrecord r.transcript\nns todo retry=1\nrecord stop\n")
        #expect(try await Cachesh.run(["r.cachesh"], in: sandbox.url).status == 0)
        let verified = try await Cachesh.run(["--verify", "r.transcript"], in: sandbox.url)
        #expect(verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// `server fail N` took any count; one past 2^31 - 1 was written and refused on reading
    /// (`server.fail_next: expected a count from 0 to 2147483647`). It is refused at its line now,
    /// and the largest count reads back.
    @Test func serverFailTakesTheCountsASnapshotHolds() async throws {
        let sandbox = try Sandbox()
        let refused = try await Cachesh.run(["-c", "server fail 2147483648 k"], in: sandbox.url)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr == "-c:1:1: error: server fail: N must be at most 2147483647, not 2147483648\n", "\(refused)")
        try sandbox.write("fail.cachesh", "server fail 2147483647 k\nserver fail 2147483647\nsnapshot x.json\nrestore x.json\nserver show\n")
        let largest = try await Cachesh.run(["fail.cachesh"], in: sandbox.url)
        #expect(largest.status == 0, "\(largest)")
        #expect(largest.stderr.isEmpty, "\(largest)")
        let stored = try await Cachesh.run(["--store", "s.db", "-c", "server fail 2147483647 k"], in: sandbox.url)
        #expect(stored.status == 0, "\(stored)")
        let reopened = try await Cachesh.run(["--store", "s.db", "-c", "now"], in: sandbox.url)
        #expect(reopened.status == 0, "\(reopened)")
    }
}
