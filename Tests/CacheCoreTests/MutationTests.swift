@_spi(Engine) import CacheCore
import Testing

/// B8 and B11: realtime patches and optimistic mutations, with the races each peer library hit.
@Suite struct MutationTests {
    /// A post cached in a feed and a profile, and on the server.
    func feedWithPost(likes: Int64 = 3) -> Harness {
        let h = Harness()
        let post: JSONValue = ["id": 42, "likes": .int(likes)]
        h.engine.put("feed:home", ["posts": [post, ["id": 7, "likes": 0]]])
        h.engine.put("profile:1", ["pinned": post])
        h.engine.put("post:42", post)
        h.server("post:42", post)
        h.server("feed:home", ["posts": [post, ["id": 7, "likes": 0]]])
        h.server("profile:1", ["pinned": post])
        return h
    }

    func likes(_ h: Harness, _ key: String = "post:42") -> JSONValue? {
        guard case .object(let o)? = h.value(key) else { return nil }
        return o["likes"]
    }

    @Test func optimisticMutationAppliesAtOnceAndConfirms() throws {
        let h = feedWithPost()
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        #expect(likes(h) == 4)
        h.advance(100)
        #expect(likes(h) == 4)
        #expect(h.origin.data["post:42"] == ["id": 42, "likes": 4])
        #expect(h.engine.requestLog.last?.kind == .mutate && h.engine.requestLog.last?.fate == .stored)
    }

    @Test func rejectedMutationRollsBack() throws {
        let h = feedWithPost()
        h.origin.fail(next: 1)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(100)
        #expect(likes(h) == 3)
        #expect(h.engine.stats().rollbacks == 1)
    }

    @Test func mutationWithABadPatchChangesNothing() {
        let h = feedWithPost()
        #expect(throws: CacheError.self) { try h.engine.mutate("post:42", patch: patch(#"{"id": {"$inc": 1}, "likes": {"$push": 1}}"#)) }
        #expect(likes(h) == 3)
        #expect(h.engine.requestLog.isEmpty)
    }

    /// Race 1 (TanStack/query#5968, redux-toolkit#1512).
    @Test func refreshStartedBeforeAMutationBecomesTheBaseWithTheMutationOnTop() throws {
        let h = feedWithPost()
        h.server("post:42", ["id": 42, "likes": 10])
        _ = h.get("post:42", force: true, nowait: true)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.origin.latency = 300
        h.advance(100)  // the refresh lands while the mutation is pending
        #expect(likes(h) == 11)
        h.advance(300)
        #expect(likes(h) == 11)
    }

    /// Race 2 (vercel/swr#1965).
    @Test func twoFailedMutationsLeaveTheBasePlusRealtimePatches() throws {
        let h = feedWithPost()
        h.origin.fail(next: 2)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        try h.engine.event("post:42", patch: patch(#"{"likes": {"$inc": 10}}"#))
        #expect(likes(h) == 15)
        h.advance(100)
        #expect(likes(h) == 13)
        #expect(h.engine.stats().rollbacks == 2)
    }

    /// Race 3 (apollo-kotlin PR #607).
    @Test func rollingBackTheSecondMutationKeepsTheFirstApplied() throws {
        let h = feedWithPost()
        h.origin.latency = 500
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.origin.latency = 100
        h.origin.fail(next: 1)
        try h.engine.mutate("post:42", patch: patch(#"{"title": "x"}"#))
        h.advance(100)
        #expect(likes(h) == 4)
        guard case .object(let o)? = h.value("post:42") else { Issue.record("not an object"); return }
        #expect(o["title"] == nil)
        h.advance(400)
        #expect(likes(h) == 4)
    }

    /// Race 4 (swr#566).
    @Test func offlineMutationsReplayInOrderOneAtATime() throws {
        let h = feedWithPost()
        h.origin.isOnline = false
        for _ in 0..<3 { try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#)) }
        #expect(likes(h) == 6)
        #expect(h.engine.pendingWork().filter { if case .queuedMutation = $0.kind { true } else { false } }.count == 3)
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        #expect(h.engine.requestLog.count == 1, "one at a time")
        h.advance(100)
        #expect(h.engine.requestLog.count == 2)
        h.advance(200)
        #expect(h.engine.requestLog.map(\.atMs) == [0, 100, 200])
        #expect(h.origin.data["post:42"] == ["id": 42, "likes": 6])
        #expect(likes(h) == 6)
    }

    @Test func logoutDropsQueuedMutations() throws {
        let h = feedWithPost()
        h.origin.isOnline = false
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.engine.clear()
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        h.advance(1000)
        #expect(h.engine.requestLog.isEmpty, "a logged-out user's likes are never replayed")
        #expect(h.origin.data["post:42"] == ["id": 42, "likes": 3])
    }

    /// Race 5: the seed app's like with realtime counts.
    @Test func eventDuringAFailedMutationSurvivesTheRollback() throws {
        let h = feedWithPost()
        h.origin.fail(next: 1)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        try h.engine.event("post:42", patch: patch(#"{"likes": {"$inc": 2}}"#))
        h.advance(100)
        #expect(likes(h) == 5)
    }

    /// Race 6 (apollo-client#5790).
    @Test func observerOfAKeySeesTheRollback() throws {
        let h = feedWithPost()
        h.engine.watch(.key("post:42"))
        h.origin.fail(next: 1)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(100)
        #expect(h.events.summary == ["mutated post:42", "rolled-back post:42"])
        #expect(h.events.events.last?.value == ["id": 42, "likes": 3])
        #expect(h.events.events.last?.at == h.engine.clockStart + 100)
    }

    /// Race 8: the confirmation must not count a realtime +10 twice.
    @Test func confirmationDoesNotReapplyAnEventTheAnswerAlreadyHas() throws {
        let h = feedWithPost(likes: 100)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        // The +10 reaches the server after the mutation (which the server applied when sent).
        h.origin.set("post:42", ["id": 42, "likes": 111], at: h.engine.now)
        try h.engine.event("post:42", patch: patch(#"{"likes": {"$inc": 10}}"#))
        #expect(likes(h) == 111)
        h.advance(100)
        // The answer (101) predates the event: the event is re-applied once: 111, not 121.
        #expect(likes(h) == 111)
    }

    @Test func confirmationIncludesEventsThatReachedTheServerFirst() throws {
        let h = feedWithPost(likes: 100)
        h.origin.latency = 100
        // An event arrives before the mutation is sent: the server's answer includes it.
        try h.engine.event("post:42", patch: patch(#"{"likes": {"$inc": 10}}"#))
        h.origin.set("post:42", ["id": 42, "likes": 110], at: h.engine.now)
        try h.engine.mutate("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(100)
        #expect(likes(h) == 111)
    }

    @Test func entityMutationChangesEveryEntryEmbeddingTheID() throws {
        let h = feedWithPost()
        let keys = try h.engine.mutate(entity: "42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        #expect(keys == ["feed:home", "post:42", "profile:1"])
        #expect(h.value("profile:1") == ["pinned": ["id": 42, "likes": 4]])
        h.advance(100)
        #expect(h.value("feed:home") == ["posts": [["id": 42, "likes": 4], ["id": 7, "likes": 0]]])
    }

    @Test func entityEventPatchesEveryCachedEntryWithThatID() throws {
        let h = feedWithPost()
        h.engine.put("other", ["id": "42", "n": 1])
        h.engine.put("float", ["id": 42.0, "likes": 0])
        let keys = try h.engine.event(entity: "42", patch: patch(#"{"likes": {"$inc": 1}}"#))
        #expect(keys == ["feed:home", "other", "post:42", "profile:1"], "42 matches 42 and \"42\", not 42.0")
        #expect(likes(h, "profile:1") == nil)
        #expect(h.value("profile:1") == ["pinned": ["id": 42, "likes": 4]])
        #expect(h.value("float") == ["id": 42.0, "likes": 0])
    }

    @Test func entityEventThatCannotApplyChangesNothing() {
        let h = feedWithPost()
        h.engine.put("weird", ["id": 42, "likes": "many"])
        #expect(throws: CacheError.self) { try h.engine.event(entity: "42", patch: patch(#"{"likes": {"$inc": 1}}"#)) }
        #expect(likes(h) == 3)
        #expect(h.value("profile:1") == ["pinned": ["id": 42, "likes": 3]])
    }

    @Test func ownEventIsSkippedAndObserversSeeSkipped() throws {
        let h = feedWithPost()
        h.engine.watch(.all)
        let keys = try h.engine.event("post:42", patch: patch(#"{"likes": {"$inc": 1}}"#), own: true)
        #expect(keys == [])
        #expect(likes(h) == 3)
        #expect(h.events.summary == ["skipped post:42"])
    }

    /// Race 7: an entity patch touches exactly the entries that embed the id, through the index.
    @Test func entityPatchTouchesExactlyTheEntriesThatEmbedTheID() throws {
        let h = Harness(["n": Policy(ttl: 60 * minute)])
        // A whole check after each of 100k puts would be quadratic: check once, after the event.
        h.engine.checksInvariants = false
        for i in 0..<100_000 { h.engine.put("n:\(i)", ["id": .int(Int64(i + 1_000_000))]) }
        for i in [5, 500, 50_000] { h.engine.put("n:\(i)", ["items": [["id": 7, "v": 0]]]) }
        h.engine.watch(.all)
        h.engine.checksInvariants = true
        let keys = try h.engine.event(entity: "7", patch: patch(#"{"v": 1}"#))
        #expect(keys == ["n:5", "n:500", "n:50000"])
        #expect(h.events.events.count == 3)
    }
}
