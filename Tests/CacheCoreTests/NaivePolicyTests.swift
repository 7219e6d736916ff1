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

    @Test func namesParseAndPrintInOneOrder() throws {
        let set = try NaivePolicy.parse("serve-expired,last-answer-wins").get()
        #expect(NaivePolicy.text(set) == "last-answer-wins,serve-expired")
        #expect(try NaivePolicy.parse("none").get().isEmpty)
        guard case .failure(let e) = NaivePolicy.parse("last-answer-wins,fastest") else { Issue.record("accepted"); return }
        #expect(e.message.hasPrefix("unknown naive policy \"fastest\""))
    }
}
