@_spi(Engine) import CacheCore
import Testing
import TestSupport

/// Five places where the cache itself lost an update, each found by replaying a public race
/// report: a push or event during a fetch, a scheduled bulk read, an eviction during a bulk store.
/// Each test is named after the rule (SPEC §1.1) and fails on the behaviour before the fix.
@Suite struct LostUpdateTests {
    static let refreshRule = ["changed": PushRule(refresh: ["feed:{id}"])]

    /// Fix 1: the answer in flight predates the push; a new request is sent and its answer wins.
    @Test func pushRefreshDuringAFetchSendsANewRequestAndTheOlderAnswerIsNotStoredFresh() throws {
        let h = Harness(["feed": Policy(ttl: 600_000, stale: 300_000)], push: Self.refreshRule)
        h.engine.put("feed:1", "v0")
        h.server("feed:1", "v1")
        _ = h.get("feed:1", force: true, nowait: true)          // answers v1 at 100 ms
        h.advance(50)
        h.server("feed:1", "v2")
        h.origin.latency = 200
        #expect(try h.engine.push("changed", arguments: ["id": "1"]) == ["feed:1"])
        h.advance(60)                                            // the older answer arrives
        #expect(h.value("feed:1") == "v1")
        #expect(h.engine.peek("feed:1").state == .stale, "the answer from before the push is stored stale")
        h.advance(200)
        #expect(h.value("feed:1") == "v2")
        #expect(h.engine.peek("feed:1").state == .fresh)
        #expect(h.engine.requestLog.map(\.fate) == [.stored, .stored])
    }

    /// Fix 1, first fetch: a key not cached yet with a fetch in flight is refreshed too.
    @Test func pushRefreshDuringAFirstFetchStoresItsAnswerStaleAndRefetches() throws {
        let h = Harness(["feed": Policy(ttl: 600_000)], push: Self.refreshRule)
        h.server("feed:1", "v1")
        _ = h.get("feed:1", nowait: true)
        h.server("feed:1", "v2")
        #expect(try h.engine.push("changed", arguments: ["id": "1"]) == ["feed:1"])
        h.advance(100)
        #expect(h.value("feed:1") == "v2")
        #expect(h.engine.requestLog.count == 2)
    }

    /// Fix 2: offline, a push's refresh cannot be sent: the entry is invalidated instead.
    @Test func pushRefreshWhileOfflineMarksTheEntryStale() throws {
        let h = Harness(["feed": Policy(ttl: 600_000)], push: Self.refreshRule)
        h.engine.put("feed:1", "v0")
        h.origin.isOnline = false
        #expect(try h.engine.push("changed", arguments: ["id": "1"]) == ["feed:1"])
        #expect(h.engine.peek("feed:1").state == .stale)
        #expect(h.engine.requestLog.isEmpty)
        #expect(h.engine.stats().invalidations == 1)
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        h.server("feed:1", "v1")
        #expect(h.get("feed:1").value == "v0", "a stale read serves and refreshes")
        h.advance(100)
        #expect(h.value("feed:1") == "v1")
    }

    /// Fix 3: an event about a key whose first fetch is in flight marks that answer stale.
    @Test func eventDuringAFirstFetchStoresTheAnswerStale() throws {
        let h = Harness(["feed": Policy(ttl: 600_000)])
        h.server("feed:1", ["likes": 1])
        _ = h.get("feed:1", nowait: true)
        h.server("feed:1", ["likes": 2])
        #expect(try h.engine.event("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#)) == [])
        h.advance(100)
        #expect(h.value("feed:1") == ["likes": 1])
        #expect(h.engine.peek("feed:1").state == .stale, "the next read refreshes")
        _ = h.get("feed:1")
        h.advance(100)
        #expect(h.value("feed:1") == ["likes": 2])
    }

    /// Fix 3, entities: an answer in flight that embeds the entity is stored stale; one that does not is fresh.
    @Test func entityEventDuringAFetchStoresEveryAnswerEmbeddingItStale() throws {
        let h = Harness(["feed": Policy(ttl: 600_000)])
        h.server("feed:1", [["id": 7, "likes": 1]])
        h.server("feed:2", [["id": 8, "likes": 1]])
        _ = try h.engine.mget(["feed:1", "feed:2"], nowait: true)
        h.server("feed:1", [["id": 7, "likes": 2]])
        _ = try h.engine.event(entity: "7", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(100)
        #expect(h.engine.peek("feed:1").state == .stale)
        #expect(h.engine.peek("feed:2").state == .fresh)
    }

    /// Fix 3: an event that is the client's own echo (`--own`) changes nothing, in flight included.
    @Test func ownEventDuringAFirstFetchLeavesTheAnswerFresh() throws {
        let h = Harness(["feed": Policy(ttl: 600_000)])
        h.server("feed:1", ["likes": 1])
        _ = h.get("feed:1", nowait: true)
        _ = try h.engine.event("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#), own: true)
        h.advance(100)
        #expect(h.engine.peek("feed:1").state == .fresh)
    }

    /// Fix 4: `mget` run by a scheduled command (`at`) sends its request and returns at once,
    /// even when its caller does not ask for `nowait`.
    @Test func scheduledBulkReadNeverBlocks() throws {
        let h = Harness()
        h.server("a", 1)
        h.server("b", 2)
        var results: [ReadResult] = []
        h.events.onScheduled = { _ in results = try! h.engine.mget(["a", "b"]) }
        h.engine.schedule(after: 10, token: 1)
        h.advance(10)
        #expect(h.elapsed == 10)
        #expect(results.map(\.state) == [.absent, .absent])
        #expect(results.allSatisfy { $0.pending })
        h.advance(100)
        #expect(h.value("a") == 1 && h.value("b") == 2)
    }

    @Test func bulkReadWithNowaitReturnsAtOnce() throws {
        let h = Harness()
        h.server("a", 1)
        let results = try h.engine.mget(["a"], nowait: true)
        #expect(h.elapsed == 0)
        #expect(results[0].state == .absent && results[0].pending)
    }

    /// Fix 4 in live mode: an app's `mget` never runs the clock.
    @Test func liveBulkReadNeverBlocks() async throws {
        let clock = SteppedClock(ms: 1_000_000)
        let cache = Cache(fetch: { keys in Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.int(1)) }) },
                          clock: clock)
        let results = try await cache.mget(["a", "b"])
        #expect(results.map(\.state) == [.absent, .absent])
        #expect(results.allSatisfy { $0.pending })
        #expect(await cache.now == 1_000_000)
    }

    /// Fix 5: an entry evicted while a bulk answer is stored loses its part of the answer.
    @Test func keyEvictedDuringABulkStoreIsNotStoredAndEvictsNothingTheReadFetched() throws {
        let h = Harness(["p": Policy(ttl: 600_000, stale: 0, max: 2)])
        h.engine.put("p:old", "old")      // stale at once: the bulk read refreshes it
        h.engine.put("p:keep", "keep")
        for k in ["p:n1", "p:n2", "p:old"] { h.server(k, .string(k)) }
        _ = try h.engine.mget(["p:n1", "p:n2", "p:old"])
        // p:n1 enters and evicts p:keep, p:n2 evicts p:old; p:old's part is then discarded, so
        // it neither comes back nor evicts p:n1.
        #expect(h.engine.keys().map(\.key) == ["p:n1", "p:n2"])
        #expect(h.engine.stats().evictions == 2)
        #expect(h.engine.requestLog.map(\.fate) == [.stored])
    }

    /// Fix 5, an answer larger than `max`: keys stored in order, each the most recent, so the last `max` stay.
    @Test func bulkAnswerLargerThanMaxKeepsItsLastKeys() throws {
        let h = Harness(["p": Policy(ttl: 600_000, max: 2)])
        for k in ["p:1", "p:2", "p:3"] { h.server(k, .string(k)) }
        let r = try h.engine.mget(["p:1", "p:2", "p:3"])
        #expect(h.engine.keys().map(\.key) == ["p:2", "p:3"])
        #expect(r.map(\.state) == [.absent, .fresh, .fresh])
        #expect(h.engine.stats().evictions == 1)
    }
}
