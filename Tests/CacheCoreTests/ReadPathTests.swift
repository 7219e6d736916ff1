@_spi(Engine) import CacheCore
import Testing

/// B1–B7: policies, states at their exact boundaries, the read path, de-duplication, failures,
/// offline, LRU and bulk reads.
@Suite struct ReadPathTests {
    @Test func statesChangeExactlyAtTheirBoundaries() {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute)])
        h.engine.put("feed:home", 1)
        h.advance(5 * minute - 1)
        #expect(h.engine.peek("feed:home").state == .fresh)
        h.advance(1)
        #expect(h.engine.peek("feed:home").state == .stale)
        #expect(h.engine.peek("feed:home").ageMs == 5 * minute)
        h.advance(40 * minute - 1)
        #expect(h.engine.peek("feed:home").state == .stale)
        #expect(h.engine.peek("feed:home").expiresInMs == 1)
        h.advance(1)
        let expired = h.engine.peek("feed:home")
        #expect(expired.state == .expired)
        #expect(expired.expiresInMs == 0)
        #expect(expired.value == 1, "expired entries stay cached until evicted or refetched")
        #expect(h.engine.peek("feed:other").state == .absent)
    }

    @Test func neverDefinedNamespaceUsesFiveMinuteTTLAndNoStale() {
        let h = Harness()
        h.engine.put("thing:1", "x")
        h.advance(5 * minute - 1)
        #expect(h.engine.peek("thing:1").state == .fresh)
        h.advance(1)
        #expect(h.engine.peek("thing:1").state == .expired)
    }

    @Test func staleZeroIsStaleAtOnce() {
        let h = Harness(["s": Policy(ttl: minute, stale: 0)])
        h.engine.put("s:1", 1)
        #expect(h.engine.peek("s:1").state == .stale)
    }

    @Test func defaultNamespaceKeysAreOneEntry() {
        let h = Harness()
        h.engine.put("default:home", 1)
        #expect(h.engine.peek("home").value == 1)
        #expect(h.engine.keys().map(\.key) == ["home"])
    }

    @Test func freshReadIsAHitAndSendsNothing() {
        let h = Harness()
        h.engine.put("k", 1)
        let r = h.get("k")
        #expect(r.state == .fresh && r.source == .cache && r.value == 1)
        #expect(h.engine.stats().hits == 1)
        #expect(h.engine.requestLog.isEmpty)
    }

    @Test func staleReadServesCachedValueAndRefreshesOnce() {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute)])
        h.engine.put("feed:home", "old")
        h.server("feed:home", "new")
        h.advance(6 * minute)
        let first = h.get("feed:home")
        #expect(first.value == "old" && first.state == .stale && first.pending)
        let second = h.get("feed:home")
        #expect(second.value == "old")
        #expect(h.engine.stats().staleHits == 2)
        #expect(h.engine.stats().refreshes == 1, "a refresh in flight is not started again")
        #expect(h.engine.stats().requests == 1)
        h.advance(100)
        let after = h.get("feed:home")
        #expect(after.value == "new" && after.state == .fresh)
    }

    @Test func expiredReadWaitsForTheServerAndMovesTheClock() {
        let h = Harness(latency: 250)
        h.server("k", "v")
        let r = h.get("k")
        #expect(r.value == "v" && r.source == .server && r.state == .fresh)
        #expect(h.elapsed == 250)
        #expect(h.engine.stats().misses == 1)
    }

    @Test func forceAlwaysFetchesEvenWhenFresh() {
        let h = Harness()
        h.engine.put("k", 1)
        h.server("k", 2)
        let r = h.get("k", force: true)
        #expect(r.value == 2 && r.source == .server)
        #expect(h.engine.stats().misses == 1 && h.engine.stats().requests == 1)
    }

    @Test func nowaitReturnsAtOnceWithPending() {
        let h = Harness()
        h.server("k", 1)
        let r = h.get("k", nowait: true)
        #expect(r.state == .absent && r.pending && r.value == nil)
        #expect(h.elapsed == 0)
        h.advance(100)
        #expect(h.engine.peek("k").value == 1)
    }

    @Test func concurrentReadsShareOneRequest() {
        let h = Harness()
        h.server("k", 1)
        _ = h.get("k", nowait: true)
        _ = h.get("k", nowait: true)
        let r = h.get("k")
        #expect(r.value == 1)
        let s = h.engine.stats()
        #expect(s.requests == 1 && s.joined == 2 && s.misses == 3)
    }

    @Test func forceNeverJoins() {
        let h = Harness()
        h.server("k", 1)
        _ = h.get("k", nowait: true)
        _ = h.get("k", force: true)
        #expect(h.engine.stats().requests == 2 && h.engine.stats().joined == 0)
    }

    @Test func failedRefreshKeepsTheCachedValue() {
        let h = Harness(["p": Policy(ttl: 10 * minute, stale: minute)])
        h.engine.put("p:1", "cached")
        h.server("p:1", "new")
        h.advance(2 * minute)
        h.origin.fail(next: 1)
        _ = h.get("p:1")
        h.advance(100)
        #expect(h.value("p:1") == "cached")
        #expect(h.engine.stats().refreshFailures == 1)
        #expect(h.engine.requestLog.last?.fate == .failed)
    }

    @Test func failedFetchServesCachedValueWithinStaleIfError() {
        let h = Harness(["page": Policy(ttl: 5 * minute, staleIfError: 60 * minute)])
        h.engine.put("page:1", "cached")
        h.advance(30 * minute)
        h.origin.fail(next: 1)
        let r = h.get("page:1")
        #expect(r.value == "cached" && r.error == "server error" && r.state == .expired)
        #expect(h.engine.stats().fetchFailures == 1)
    }

    @Test func failedFetchBeyondStaleIfErrorGivesNullButKeepsTheEntry() {
        let h = Harness(["page": Policy(ttl: 5 * minute)])
        h.engine.put("page:1", "cached")
        h.advance(5 * minute + 1)
        h.origin.fail(next: 1)
        let r = h.get("page:1")
        #expect(r.value == nil && r.error == "server error" && r.state == .expired)
        #expect(h.value("page:1") == "cached")
    }

    @Test func expiredExactlyAtTheFailureIsStillServed() {
        let h = Harness(["page": Policy(ttl: 5 * minute)], latency: 0)
        h.engine.put("page:1", "cached")
        h.advance(5 * minute)
        h.origin.fail(next: 1)
        #expect(h.get("page:1").value == "cached", "expired 0 ms ago is not more than stale-if-error (0) ago")
    }

    @Test func missingKeyFailsWithNotFoundAndStoresNothing() {
        let h = Harness()
        let r = h.get("nope")
        #expect(r.error == "not found" && r.state == .absent && r.value == nil)
        #expect(h.engine.count == 0)
    }

    @Test func timeoutGivesUpAfterTheNamespaceTimeout() {
        let h = Harness(["slow": Policy(ttl: minute, timeout: 50)], latency: 200)
        h.server("slow:1", 1)
        let r = h.get("slow:1")
        #expect(r.error == "timed out after 50ms")
        #expect(h.elapsed == 50)
    }

    @Test func offlineServesEveryCachedStateFlaggedAndSendsNothing() {
        let h = Harness(["a": Policy(ttl: minute)])
        h.engine.put("a:1", 1)
        h.advance(2 * minute)
        h.origin.isOnline = false
        let cached = h.get("a:1", force: true)
        #expect(cached.offline && cached.value == 1 && cached.state == .expired)
        let missing = h.get("a:2")
        #expect(missing.offline && missing.error == "offline" && missing.state == .absent)
        #expect(h.engine.requestLog.isEmpty)
        #expect(h.engine.stats().misses == 2)
    }

    @Test func lruEvictsTheLeastRecentlyUsedOfTheNamespace() {
        let h = Harness(["page": Policy(ttl: minute, max: 2)])
        h.engine.put("page:1", 1)
        h.engine.put("page:2", 2)
        h.engine.put("other", 0)
        _ = h.get("page:1")
        _ = h.engine.peek("page:2")
        let changed = h.engine.put("page:3", 3)
        #expect(changed == ["page:3", "page:2"])
        #expect(h.engine.keys().map(\.key) == ["other", "page:1", "page:3"])
        #expect(h.engine.stats(namespace: "page").evictions == 1)
    }

    @Test func keysListsOneGlobalRecencyOrderAndFiltersByGlob() {
        let h = Harness()
        h.engine.put("feed:1", 1)
        h.engine.put("profile:1", 1)
        h.engine.put("feed:2", 2)
        _ = h.get("feed:1")
        #expect(h.engine.keys().map(\.key) == ["profile:1", "feed:2", "feed:1"])
        #expect(h.engine.keys(matching: Glob("feed:*")).map(\.key) == ["feed:2", "feed:1"])
        #expect(h.engine.keys(matching: Glob("*:[1]")).map(\.key) == ["profile:1", "feed:1"])
    }

    @Test func bulkReadSendsOneRequestForEveryKeyThatNeedsOne() {
        let h = Harness(["ex": Policy(ttl: 30_000, stale: 10_000), "set": Policy(ttl: minute)])
        for i in 1...3 { h.server("ex:\(i)", .int(Int64(i))) }
        h.server("set:1", "s")
        h.engine.put("ex:1", 10)
        h.advance(15_000)  // ex:1 is stale now
        let results = try! h.engine.mget(["ex:1", "ex:2", "ex:3", "set:1"])
        #expect(results.map(\.value) == [10, 2, 3, "s"])
        #expect(h.engine.requestLog.count == 1)
        #expect(h.engine.requestLog[0].keys == ["ex:1", "ex:2", "ex:3", "set:1"])
        let s = h.engine.stats()
        #expect(s.requests == 1 && s.staleHits == 1 && s.misses == 3 && s.refreshes == 1)
        #expect(h.engine.stats(namespace: "ex").requests == 1 && h.engine.stats(namespace: "set").requests == 1)
        #expect(h.elapsed == 15_100)
    }

    @Test func bulkReadTakesItsSlowestKeysLatency() {
        let h = Harness()
        h.server("a", 1)
        h.server("b", 2)
        h.origin.latencies["b"] = 700
        _ = try! h.engine.mget(["a", "b"])
        #expect(h.elapsed == 700)
    }

    @Test func bulkReadWithOnlyFreshKeysDoesNotWait() {
        let h = Harness()
        h.engine.put("a", 1)
        _ = try! h.engine.mget(["a", "a"])
        #expect(h.elapsed == 0 && h.engine.stats().hits == 2 && h.engine.requestLog.isEmpty)
    }

    @Test func hitRatioCountsStaleHitsAsServed() {
        let h = Harness(["s": Policy(ttl: minute, stale: 0)])
        #expect(h.engine.stats().hitRatio == 0)
        h.engine.put("s:1", 1)
        h.engine.put("k", 1)
        _ = h.get("s:1")
        _ = h.get("k")
        _ = h.get("missing")
        #expect(h.engine.stats().hitRatio == 2.0 / 3.0)
        h.engine.resetStats()
        #expect(h.engine.stats() == Stats())
    }
}
