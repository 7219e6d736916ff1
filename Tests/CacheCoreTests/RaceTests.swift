@_spi(Engine) import CacheCore
import Testing

/// B12 and B13: responses in flight against local writes, logout and memory pressure; each case
/// a bug reported in a peer library's tracker.
@Suite struct ResponseRaceTests {
    @Test func responseStartedBeforeALocalPutNeverOverwritesIt() {
        let h = Harness()
        h.server("k", "server")
        _ = h.get("k", nowait: true)
        h.engine.put("k", "local")
        h.advance(100)
        #expect(h.value("k") == "local")
        #expect(h.engine.requestLog[0].fate == .discarded)
    }

    @Test func readerWaitingOnADiscardedResponseGetsWhatTheCacheHas() {
        let h = Harness()
        h.server("k", "server")
        _ = h.get("k", nowait: true)
        let id = h.engine.schedule(after: 50, token: 1)
        _ = id
        h.events.onScheduled = { _ in h.engine.put("k", "local") }
        let r = h.get("k")
        #expect(r.value == "local" && r.source == .cache)
    }

    @Test func responseStartedBeforeAnEventIsDiscarded() throws {
        let h = Harness()
        h.engine.put("k", ["likes": 1])
        h.server("k", ["likes": 1])
        _ = h.get("k", force: true, nowait: true)
        try h.engine.event("k", patch: patch(#"{"likes": {"$inc": 5}}"#))
        h.advance(100)
        #expect(h.value("k") == ["likes": 6])
    }

    @Test func olderResponseNeverReplacesANewerOne() {
        let h = Harness()
        h.server("k", "first")
        h.origin.latency = 500
        _ = h.get("k", force: true, nowait: true)
        h.server("k", "second")
        h.origin.latency = 100
        _ = h.get("k", force: true, nowait: true)
        h.advance(1000)
        #expect(h.value("k") == "second")
        #expect(h.engine.requestLog.map(\.fate) == [.discarded, .stored])
    }

    /// TanStack/query#28: the next user saw the previous user's data.
    @Test func clearDuringAFetchIsNotUndoneByItsResponse() {
        let h = Harness()
        h.server("profile:me", "alice")
        _ = h.get("profile:me", nowait: true)
        h.engine.clear()
        h.advance(100)
        #expect(h.engine.peek("profile:me").state == .absent)
        #expect(h.engine.requestLog[0].fate == .discarded)
    }

    @Test func readerWaitingWhenLogoutHappensGetsAbsent() {
        let h = Harness()
        h.server("profile:me", "alice")
        _ = h.engine.schedule(after: 10, token: 0)
        h.events.onScheduled = { _ in h.engine.clear() }
        let r = h.get("profile:me")
        #expect(r.state == .absent && r.value == nil)
        #expect(h.engine.count == 0)
    }

    @Test func evictDuringAFetchVoidsItsResponse() {
        let h = Harness()
        h.engine.put("k", 1)
        h.server("k", 2)
        _ = h.get("k", force: true, nowait: true)
        h.engine.evict("k")
        h.advance(100)
        #expect(h.engine.peek("k").state == .absent)
    }

    @Test func lruEvictionVoidsTheVictimsResponseInFlight() {
        let h = Harness(["p": Policy(ttl: minute, max: 1)])
        h.server("p:1", 1)
        h.engine.put("p:1", 0)
        _ = h.get("p:1", force: true, nowait: true)
        h.engine.put("p:2", 2)
        h.advance(100)
        #expect(h.engine.keys().map(\.key) == ["p:2"])
    }

    /// TanStack/query#2154: an invalidation during a fetch must not be lost.
    @Test func invalidationDuringAFetchStoresTheResponseAsStale() {
        let h = Harness()
        h.server("k", 1)
        _ = h.get("k", nowait: true)
        h.engine.invalidate(.key("k"))
        h.advance(100)
        #expect(h.engine.peek("k").state == .stale)
        #expect(h.engine.peek("k").value == 1)
    }

    @Test func clearOfOneNamespaceKeepsTheOthers() {
        let h = Harness()
        h.engine.put("feed:1", 1)
        h.engine.put("profile:1", 1)
        #expect(h.engine.clear(namespace: "feed") == ["feed:1"])
        #expect(h.engine.keys().map(\.key) == ["profile:1"])
    }

    @Test func memoryWarningPurgesOnlyPurgeableNamespacesWhenSomeAreMarked() {
        let h = Harness(["img": Policy(ttl: minute, purgeable: true), "feed": Policy(ttl: minute)])
        h.engine.put("img:1", 1)
        h.engine.put("feed:1", 1)
        #expect(h.engine.memoryWarning() == ["img:1"])
        #expect(h.engine.keys().map(\.key) == ["feed:1"])
        let plain = Harness()
        plain.engine.put("a", 1)
        plain.engine.put("b:1", 1)
        #expect(plain.engine.memoryWarning() == ["a", "b:1"])
    }

    @Test func twoThingsInTheSameMillisecondRunInSequenceOrder() {
        let h = Harness(latency: 100)
        h.server("k", 1)
        var order: [String] = []
        _ = h.engine.schedule(after: 100, token: 7)
        h.events.onScheduled = { _ in order.append("at:\(h.engine.peek("k").state)") }
        _ = h.get("k", nowait: true)
        h.advance(100)
        #expect(order == ["at:absent"], "the at item was scheduled first, so it runs before the completion due at the same ms")
    }

    @Test func runawaySchedulingStopsAfterTheLimitWithTheClockAtTheLastItem() {
        let h = Harness()
        var runs = 0
        h.events.onScheduled = { _ in
            runs += 1
            h.engine.schedule(after: 1, token: 0)
        }
        h.engine.schedule(after: 0, token: 0)
        h.engine.beginUnitOfWork()
        // A million scheduling calls: check the state once, after the runaway stopped, not after each.
        h.engine.checksInvariants = false
        #expect(throws: CacheError.self) { try h.engine.advance(by: 100 * 24 * 60 * minute) }
        #expect(runs == CacheEngine.runawayLimit)
        #expect(h.elapsed == Int64(CacheEngine.runawayLimit - 1))
        #expect(h.engine.invariantViolations() == [])
    }
}

/// Expiry as the clock passes it, `expire`, `ns` changes.
@Suite struct ExpiryTests {
    @Test func expiriesAreCountedAndReportedAsTheClockPassesThem() {
        let h = Harness(["a": Policy(ttl: 1000)])
        h.engine.watch(.all)
        h.engine.put("a:1", 1)
        h.advance(500)
        h.engine.put("a:2", 2)
        h.advance(499)
        #expect(h.engine.stats().expirations == 0)
        h.advance(1)
        #expect(h.engine.stats().expirations == 1)
        h.advance(1000)
        #expect(h.engine.stats().expirations == 2)
        #expect(h.events.summary.suffix(2) == ["expired a:1", "expired a:2"])
        #expect(h.events.events.last?.at == h.engine.clockStart + 1500)
    }

    @Test func refetchedEntryDoesNotExpireOnItsOldSchedule() {
        let h = Harness(["a": Policy(ttl: 1000)])
        h.engine.put("a:1", 1)
        h.advance(900)
        h.engine.put("a:1", 2)
        h.advance(200)
        #expect(h.engine.stats().expirations == 0)
        #expect(h.engine.peek("a:1").state == .fresh)
    }

    @Test func expireNowCountsOnceAndInDelaysExpiry() {
        let h = Harness()
        h.engine.put("k", 1)
        #expect(h.engine.expire("k") == ["k"])
        #expect(h.engine.expire("k") == [], "already expired: nothing moved")
        #expect(h.engine.stats().expirations == 1)
        h.engine.put("j", 1)
        h.engine.expire("j", in: 10_000)
        h.advance(9_999)
        #expect(h.engine.peek("j").state == .fresh)
        h.advance(1)
        #expect(h.engine.peek("j").state == .expired)
        #expect(h.engine.stats().expirations == 2)
        #expect(h.engine.expire("absent") == [])
    }

    @Test func nsChangeRecomputesTimesEvictsAndExpires() throws {
        let h = Harness(["p": Policy(ttl: 10 * minute)])
        for i in 1...3 { h.engine.put("p:\(i)", .int(Int64(i))); h.advance(minute) }
        h.engine.expire("p:3", in: 100 * minute)
        // Now 3m; p:1 stored at 0, p:2 at 1m, p:3 at 2m. A ttl of 1m50s and max 2:
        let changed = try h.engine.defineNamespace("p", PolicyChange(ttl: 110_000, max: .some(2)))
        #expect(changed == ["p:1", "p:2"], "p:1 evicted down to max, then p:2 (due at 2m50s) expired")
        #expect(h.engine.stats().evictions == 1 && h.engine.stats().expirations == 1)
        #expect(h.engine.peek("p:3").expiresInMs == 50_000, "times recomputed from stored_at; the expire override is dropped")
    }

    @Test func staleNoneUnsetsTheThreshold() throws {
        let h = Harness(["f": Policy(ttl: 10 * minute, stale: minute)])
        h.engine.put("f:1", 1)
        h.advance(2 * minute)
        #expect(h.engine.peek("f:1").state == .stale)
        try h.engine.defineNamespace("f", PolicyChange(stale: .some(nil)))
        #expect(h.engine.peek("f:1").state == .fresh)
    }

    @Test func badPoliciesAreRefusedAndChangeNothing() {
        let h = Harness(["f": Policy(ttl: minute)])
        #expect(throws: CacheError.self) { try h.engine.defineNamespace("f", PolicyChange(ttl: -1)) }
        #expect(throws: CacheError.self) { try h.engine.defineNamespace("tag", PolicyChange()) }
        #expect(h.engine.policy(of: "f").ttl == minute)
    }
}
