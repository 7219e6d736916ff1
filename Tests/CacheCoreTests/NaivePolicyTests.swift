@_spi(Engine) import CacheCore
import Testing

/// The naive policies (SPEC §1.2): each, switched on for a namespace, shows the race a public bug
/// report describes; the same steps with it off (the default) do not.
@Suite struct NaivePolicyTests {
    static func harness(_ naive: Set<NaivePolicy>, push: [String: PushRule] = [:]) -> Harness {
        Harness(["feed": Policy(ttl: 600_000, stale: 300_000, naive: naive)], push: push)
    }

    /// vercel/swr#173: an older, slower answer overwrites a newer one.
    @Test(arguments: [true, false])
    func lastAnswerWinsStoresAnOlderAnswerOverANewerOne(naive: Bool) {
        let h = Self.harness(naive ? [.lastAnswerWins] : [])
        h.server("feed:1", "old")
        h.origin.latency = 500
        _ = h.get("feed:1", force: true, nowait: true)
        h.server("feed:1", "new")
        h.origin.latency = 100
        _ = h.get("feed:1", force: true, nowait: true)
        h.advance(1000)
        #expect(h.value("feed:1") == (naive ? "old" : "new"))
    }

    /// ben-manes/caffeine#193: an invalidation before a refresh completes is lost.
    @Test(arguments: [true, false])
    func lastAnswerWinsForgetsAnInvalidationDuringTheFetch(naive: Bool) {
        let h = Self.harness(naive ? [.lastAnswerWins] : [])
        h.engine.put("feed:1", "v0")
        h.server("feed:1", "v1")
        _ = h.get("feed:1", force: true, nowait: true)
        _ = h.engine.invalidate(.key("feed:1"))
        h.advance(100)
        #expect(h.engine.peek("feed:1").state == (naive ? .fresh : .stale))
    }

    /// vercel/swr#1965: the second rollback restores the first mutation's optimistic value.
    @Test(arguments: [true, false])
    func rollbackToSnapshotRestoresWhatWasShownBeforeTheMutation(naive: Bool) throws {
        let h = Self.harness(naive ? [.rollbackToSnapshot] : [])
        h.engine.put("feed:1", ["likes": 0])
        h.server("feed:1", ["likes": 0])
        h.origin.fail(next: 2)
        try h.engine.mutate("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(10)
        try h.engine.mutate("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(200)
        #expect(h.value("feed:1") == ["likes": naive ? 1 : 0])
        #expect(h.engine.stats().rollbacks == 2)
    }

    /// reduxjs/redux-toolkit#1512: a fetched answer overwrites a pending optimistic patch.
    @Test(arguments: [true, false])
    func answerDropsMutationsShowsTheAnswerWithoutThePendingMutation(naive: Bool) throws {
        let h = Self.harness(naive ? [.answerDropsMutations] : [])
        h.engine.put("feed:1", ["likes": 0])
        h.server("feed:1", ["likes": 0])
        _ = h.get("feed:1", force: true, nowait: true)        // answers likes 0 at 100 ms
        h.origin.latency = 300
        try h.engine.mutate("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(100)
        #expect(h.value("feed:1") == ["likes": naive ? 0 : 1])
        h.advance(300)
        #expect(h.value("feed:1") == ["likes": 1], "the confirmation agrees either way")
    }

    /// TanStack/query#471: a refetch joins the request sent before a write, and so misses it.
    @Test(arguments: [true, false])
    func joinRefetchJoinsTheRequestInFlight(naive: Bool) {
        let h = Self.harness(naive ? [.joinRefetch] : [])
        h.server("feed:1", "before")
        _ = h.get("feed:1", nowait: true)
        h.advance(50)
        h.server("feed:1", "after")
        let r = h.get("feed:1", force: true)
        #expect(r.value == (naive ? "before" : "after"))
        #expect(h.engine.requestLog.count == (naive ? 1 : 2))
    }

    /// TanStack/query#2154: a push's refresh during a fetch is skipped with join-refetch on.
    @Test(arguments: [true, false])
    func joinRefetchSkipsAPushRefreshDuringAFetch(naive: Bool) throws {
        let h = Self.harness(naive ? [.joinRefetch] : [], push: ["changed": PushRule(refresh: ["feed:1"])])
        h.engine.put("feed:1", "v0")
        h.server("feed:1", "v1")
        _ = h.get("feed:1", force: true, nowait: true)
        h.server("feed:1", "v2")
        try h.engine.push("changed", arguments: [:])
        h.advance(200)
        #expect(h.value("feed:1") == (naive ? "v1" : "v2"))
    }

    /// An expired value served while it is refreshed (stale-while-revalidate past the ttl).
    @Test(arguments: [true, false])
    func serveExpiredServesTheExpiredValueAndRefreshes(naive: Bool) {
        let h = Self.harness(naive ? [.serveExpired] : [])
        h.engine.put("feed:1", "old")
        h.server("feed:1", "new")
        h.advance(600_000)
        let r = h.get("feed:1")
        #expect(r.value == (naive ? "old" : "new"))
        #expect(r.state == (naive ? .expired : .fresh))
        #expect(h.elapsed == (naive ? 600_000 : 600_100))
        h.advance(100)
        #expect(h.value("feed:1") == "new")
    }

    /// TanStack/query#471, through `mutate --refetch`: the refetch after the mutation joins the
    /// fetch sent before it, whose answer (from before the write) is then stored.
    @Test(arguments: [true, false])
    func joinRefetchReachesTheRefetchOfAMutation(naive: Bool) throws {
        let h = Self.harness(naive ? [.joinRefetch] : [])
        h.server("feed:1", ["n": 0])
        _ = h.get("feed:1")                                   // cached at 100 ms
        h.origin.latency = 300
        _ = h.get("feed:1", force: true, nowait: true)        // sent at 100, answers n 0 at 400
        h.advance(10)
        h.origin.latency = 100
        try h.engine.mutate("feed:1", patch: patch(#"{"n": 1}"#), options: MutationOptions(refetch: true))
        h.advance(340)                                        // the mutation ends at 210; 450 now
        #expect(h.value("feed:1") == ["n": naive ? 0 : 1])
        #expect(h.engine.requestLog.count == (naive ? 3 : 4), "the refetch is a request of its own only by default")
    }

    /// reduxjs/redux-toolkit#1512 on a key still loading: the first answer drops the waiting patch.
    @Test(arguments: [true, false])
    func answerDropsMutationsActsOnALoadingKeyAsOnACachedOne(naive: Bool) throws {
        let h = Self.harness(naive ? [.answerDropsMutations] : [])
        h.server("feed:1", ["likes": 0])
        _ = h.get("feed:1", nowait: true)                     // the first fetch answers likes 0 at 100
        h.advance(10)
        h.origin.latency = 300
        try h.engine.mutate("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(90)
        #expect(h.value("feed:1") == ["likes": naive ? 0 : 1])
        h.advance(300)
        #expect(h.value("feed:1") == ["likes": 1], "the confirmation agrees either way")
    }

    /// vercel/swr#425: a quick on/off toggle flashes back on when the first answer arrives.
    @Test(arguments: [true, false])
    func confirmDropsNewerShowsAnAnswerWithoutTheNewerMutation(naive: Bool) throws {
        let h = Self.harness(naive ? [.confirmDropsNewer] : [])
        h.engine.put("feed:1", ["on": false])
        h.server("feed:1", ["on": false])
        h.origin.latency = 300
        try h.engine.mutate("feed:1", patch: patch(#"{"on": true}"#))     // answers on at 300
        h.advance(10)
        try h.engine.mutate("feed:1", patch: patch(#"{"on": false}"#))    // answers off at 310
        h.advance(295)
        #expect(h.value("feed:1") == ["on": naive ? true : false])
        h.advance(10)
        #expect(h.value("feed:1") == ["on": false], "the second answer agrees either way")
    }

    /// apollographql/apollo-client#6551: a confirmation writes another pending mutation's
    /// optimistic data as confirmed, so that mutation's failure no longer removes it.
    @Test(arguments: [true, false])
    func confirmCommitsAllKeepsTheChangeOfAMutationThatFailsLater(naive: Bool) throws {
        let h = Self.harness(naive ? [.confirmCommitsAll] : [])
        h.engine.put("feed:1", ["likes": 0])
        h.server("feed:1", ["likes": 0])
        try h.engine.mutate("feed:1", patch: patch(#"{"likes": {"$inc": 1}}"#))   // confirmed at 100
        h.advance(10)
        h.origin.fail(next: 1)
        h.origin.latency = 300
        try h.engine.mutate("feed:1", patch: patch(#"{"title": "draft"}"#))        // fails at 310
        h.advance(95)
        #expect(h.value("feed:1") == ["likes": 1, "title": "draft"], "while pending, both show either way")
        h.advance(300)
        #expect(h.value("feed:1") == (naive ? ["likes": 1, "title": "draft"] : ["likes": 1]))
        #expect(h.engine.stats().rollbacks == 1)
    }

    /// apollographql/apollo-client#5790: a rollback changes the cache but observers never hear of it.
    @Test(arguments: [true, false])
    func silentRollbackTellsNoObserver(naive: Bool) throws {
        let h = Self.harness(naive ? [.silentRollback] : [])
        h.engine.put("feed:1", ["likes": 0])
        h.engine.put("feed:2", ["likes": 0])
        h.engine.watch(.namespace("feed"))
        h.origin.fail(next: 2)
        try h.engine.mutate("feed:1", patch: patch(#"{"likes": 1}"#))
        try h.engine.mutate("feed:3", patch: patch(#"{"likes": 1}"#))     // not cached: its patch waits
        h.advance(200)
        #expect(h.value("feed:1") == ["likes": 0], "the cache is rolled back either way")
        #expect(h.engine.stats().rollbacks == 2)
        #expect(h.events.summary == ["mutated feed:1"] + (naive ? [] : ["rolled-back feed:1", "rolled-back feed:3"]))
    }

    /// TanStack/query#512: focus refetches an active key that is still fresh.
    @Test(arguments: [true, false])
    func focusRefetchesFreshRefetchesFreshActiveKeys(naive: Bool) {
        let h = Self.harness(naive ? [.focusRefetchesFresh] : [])
        h.server("feed:1", "v1")
        _ = h.get("feed:1")
        h.engine.setActive("feed:1", true)
        h.server("feed:1", "v2")
        #expect(h.engine.focus() == (naive ? ["feed:1"] : []))
        h.advance(100)
        #expect(h.value("feed:1") == (naive ? "v2" : "v1"))
        #expect(h.engine.stats().refreshes == (naive ? 1 : 0))
    }

    /// reduxjs/redux-toolkit#4422: an invalidated key that is polled is refetched only by the next poll.
    @Test(arguments: [true, false])
    func invalidateWaitsPollLeavesAPolledKeyToItsNextTurn(naive: Bool) throws {
        let h = Self.harness(naive ? [.invalidateWaitsPoll] : [])
        h.server("feed:1", "v1")
        _ = h.get("feed:1")
        h.engine.setActive("feed:1", true)
        try h.engine.poll("feed:1", every: 5_000)
        h.server("feed:1", "v2")
        _ = h.engine.invalidate(.key("feed:1"))
        h.advance(100)
        #expect(h.value("feed:1") == (naive ? "v1" : "v2"))
        h.advance(5_000)
        #expect(h.value("feed:1") == "v2", "the poll brings it either way")
    }

    /// TanStack/query#4456: an invalidation of a key nobody watches is lost; a watched one is not.
    @Test(arguments: [true, false])
    func invalidateDropsUnwatchedLeavesAnUnwatchedKeyFresh(naive: Bool) throws {
        let h = Self.harness(naive ? [.invalidateDropsUnwatched] : [])
        for key in ["feed:1", "feed:2", "feed:3"] { h.server(key, "v1"); _ = h.get(key) }
        h.engine.watch(.key("feed:2"))
        h.engine.setActive("feed:3", true)
        for key in ["feed:1", "feed:2", "feed:3"] { h.server(key, "v2") }
        #expect(h.engine.invalidate(.namespace("feed")) == (naive ? ["feed:2", "feed:3"] : ["feed:1", "feed:2", "feed:3"]))
        #expect(h.engine.peek("feed:1").state == (naive ? .fresh : .stale))
        #expect(h.engine.peek("feed:2").state == .stale)
        h.advance(100)
        #expect(h.value("feed:3") == "v2", "an active key is refetched either way")
        #expect(h.get("feed:1").value == "v1")
        h.advance(100)
        #expect(h.value("feed:1") == (naive ? "v1" : "v2"))
    }

    /// vercel/swr#271: within the dedupe= window a revalidation that should be a request of its own
    /// (a `get --force`, a stale read's refresh, the refetch of `mutate --refetch`) shares the last
    /// fetch: once it completed, the read gets what the cache has; while in flight, it joins it.
    @Test(arguments: [true, false])
    func dedupeWindowSharesARevalidationThatShouldBeItsOwnRequest(naive: Bool) throws {
        let h = Harness(["feed": Policy(ttl: 600_000, stale: 1_000, dedupe: naive ? 2_000 : nil)])
        h.server("feed:1", "v1")
        _ = h.get("feed:1")                                   // sent at 0, stored at 100
        h.server("feed:1", "v2")
        #expect(h.get("feed:1", force: true).value == (naive ? "v1" : "v2"))
        #expect(h.engine.requestLog.count == (naive ? 1 : 2))
        h.advance(1_000)                                      // stale, still within 2 s of the first fetch
        _ = h.get("feed:1")
        #expect(h.engine.requestLog.count == (naive ? 1 : 3), "a stale read refreshes only outside the window")
        h.advance(100)
        try h.engine.mutate("feed:1", patch: patch(#""v3""#), options: MutationOptions(refetch: true))
        h.advance(200)
        #expect(h.engine.requestLog.count == (naive ? 2 : 5), "the mutation, and its refetch only by default")
        h.advance(1_000)                                      // past the window
        _ = h.get("feed:1", force: true, nowait: true)
        let joined = h.engine.stats().joined
        _ = h.get("feed:1", force: true)
        #expect(h.engine.requestLog.count == (naive ? 3 : 7))
        #expect(h.engine.stats().joined == joined + (naive ? 1 : 0), "within the new window --force joins the fetch in flight")
    }

    @Test func namesParseAndPrintInOneOrder() throws {
        let set = try NaivePolicy.parse("serve-expired,last-answer-wins").get()
        #expect(NaivePolicy.text(set) == "last-answer-wins,serve-expired")
        #expect(try NaivePolicy.parse("none").get().isEmpty)
        guard case .failure(let e) = NaivePolicy.parse("last-answer-wins,fastest") else { Issue.record("accepted"); return }
        #expect(e.message.hasPrefix("unknown naive policy \"fastest\""))
    }
}
