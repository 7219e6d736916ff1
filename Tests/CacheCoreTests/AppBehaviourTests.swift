@_spi(Engine) import CacheCore
import Testing

/// The app behaviours race reports need (SPEC §1.1 App behaviours): cancelling a fetch in
/// flight, active keys refetched on invalidation, focus and reconnect, and polling — on the
/// virtual clock, every invariant checked after each operation.
@Suite struct CancelTests {
    @Test func aCancelledFetchIsDiscardedAndLoggedCancelled() throws {
        let h = Harness()
        h.server("k", "server")
        _ = h.get("k", nowait: true)
        #expect(try h.engine.cancel("k") == ["k"])
        #expect(h.engine.pendingWork().isEmpty)
        h.advance(500)
        #expect(h.engine.peek("k").state == .absent)
        #expect(h.engine.requestLog.map(\.fate) == [.cancelled])
    }

    @Test func aReaderWaitingOnACancelledFetchGetsWhatTheCacheHas() throws {
        let h = Harness()
        h.engine.put("k", "old")
        h.server("k", "new")
        h.events.onScheduled = { _ in _ = try? h.engine.cancel("k") }
        h.engine.schedule(after: 40, token: 1)
        let r = h.get("k", force: true)
        #expect(r.value == "old" && r.source == .cache && r.error == nil)
        #expect(h.elapsed == 40)
    }

    @Test func aReaderOfAKeyNotCachedGetsAnError() {
        let h = Harness()
        h.server("k", "new")
        h.events.onScheduled = { _ in _ = try? h.engine.cancel("k") }
        h.engine.schedule(after: 40, token: 1)
        let r = h.get("k")
        #expect(r.state == .absent && r.error == "cancelled")
    }

    @Test func cancellingWithNothingInFlightIsAnErrorNamingTheKey() {
        let h = Harness()
        h.engine.put("feed:home", 1)
        #expect(throws: CacheError("no fetch of feed:home in flight: nothing to cancel")) { try h.engine.cancel("feed:home") }
        #expect(h.engine.requestLog.isEmpty)
    }

    @Test func observersSeeCancelled() throws {
        let h = Harness()
        h.engine.watch(.all)
        _ = h.get("k", nowait: true)
        try h.engine.cancel("k")
        #expect(h.events.summary == ["cancelled k"])
    }

    @Test func aRefetchAfterACancelIsANewRequest() throws {
        let h = Harness()
        h.server("k", "v")
        _ = h.get("k", nowait: true)
        try h.engine.cancel("k")
        #expect(h.get("k").value == "v")
        #expect(h.engine.requestLog.map(\.fate) == [.cancelled, .stored])
    }
}

@Suite struct ActiveKeyTests {
    @Test func aPlainWatchOnlyObserves() {
        let h = Harness()
        h.engine.put("k", 1)
        h.engine.watch(.key("k"))
        h.engine.invalidate(.key("k"))
        #expect(h.engine.requestLog.isEmpty)
    }

    @Test func anActiveKeyRefetchesWhenInvalidated() {
        let h = Harness()
        h.engine.put("k", 1)
        h.server("k", 2)
        h.engine.setActive("k", true)
        h.engine.invalidate(.key("k"))
        h.advance(100)
        #expect(h.engine.peek("k").state == .fresh && h.value("k") == 2)
        #expect(h.engine.requestLog.count == 1)
    }

    @Test func anActiveKeyRefetchesWhenItExpires() {
        let h = Harness(["feed": Policy(ttl: minute)])
        h.engine.put("feed:1", 1)
        h.server("feed:1", 2)
        h.engine.setActive("feed:1", true)
        h.advance(minute + 100)
        #expect(h.engine.peek("feed:1").state == .fresh && h.value("feed:1") == 2)
    }

    /// TanStack/query#2154: an invalidation while the key's fetch is in flight must still end in
    /// a fresh, current value for a key on screen.
    @Test func anActiveKeyInvalidatedDuringItsFetchRefetchesAfterIt() {
        let h = Harness()
        h.engine.put("k", 1)
        h.server("k", 2)
        h.engine.setActive("k", true)
        _ = h.get("k", force: true, nowait: true)
        h.advance(50)
        h.server("k", 3)
        h.engine.invalidate(.key("k"))
        h.advance(50)
        #expect(h.value("k") == 2 && h.engine.peek("k").state == .stale)
        h.advance(100)
        #expect(h.value("k") == 3 && h.engine.peek("k").state == .fresh)
        #expect(h.engine.requestLog.count == 2)
    }

    @Test func focusRefetchesTheActiveKeysThatAreNotFresh() {
        let h = Harness()
        h.engine.put("a", 1); h.engine.put("b", 1); h.engine.put("c", 1)
        h.origin.isOnline = false
        for key in ["a", "b", "d"] { h.engine.setActive(key, true) }
        h.engine.invalidate(.key("a"))
        #expect(h.engine.requestLog.isEmpty)
        h.origin.isOnline = true
        #expect(h.engine.focus() == ["a", "d"])
        #expect(h.engine.requestLog.map(\.keys) == [["a"], ["d"]])
    }

    @Test func reconnectRefetchesTheStaleActiveKeys() {
        let h = Harness()
        h.engine.put("a", 1)
        h.engine.setActive("a", true)
        h.origin.isOnline = false
        h.engine.invalidate(.key("a"))
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        #expect(h.engine.requestLog.map(\.keys) == [["a"]])
    }

    @Test func anInactiveKeyIsNotRefetched() {
        let h = Harness()
        h.engine.put("a", 1)
        h.engine.setActive("a", true)
        h.engine.setActive("a", false)
        h.engine.invalidate(.key("a"))
        #expect(h.engine.focus() == [])
        #expect(h.engine.requestLog.isEmpty)
    }
}

@Suite struct PollTests {
    @Test func aPollRefetchesEveryPeriodInOrder() throws {
        let h = Harness()
        h.server("k", 1)
        try h.engine.poll("k", every: 1000)
        h.advance(999)
        #expect(h.engine.requestLog.isEmpty)
        h.advance(1)
        #expect(h.engine.requestLog.map(\.atMs) == [1000])
        h.server("k", 2)
        h.advance(2100)
        #expect(h.engine.requestLog.map(\.atMs) == [1000, 2000, 3000])
        #expect(h.value("k") == 2)
    }

    @Test func aPollShowsInPendingAndStopsWithUnpoll() throws {
        let h = Harness()
        try h.engine.poll("k", every: 1000)
        #expect(h.engine.pendingWork().map(\.kind) == [.poll(key: "k", everyMs: 1000)])
        #expect(h.engine.pendingWork().map(\.dueAt) == [h.engine.clockStart + 1000])
        #expect(h.engine.unpoll("k"))
        #expect(!h.engine.unpoll("k"))
        h.advance(5000)
        #expect(h.engine.requestLog.isEmpty && h.engine.pendingWork().isEmpty)
    }

    @Test func aPollTurnSendsNothingWhileAFetchIsInFlightOrOffline() throws {
        let h = Harness(latency: 1500)
        try h.engine.poll("k", every: 1000)
        h.advance(2000)
        #expect(h.engine.requestLog.count == 1)
        h.origin.isOnline = false
        h.advance(5000)
        #expect(h.engine.requestLog.count == 1)
    }

    @Test func aPollOfAKeyInANamespaceNotYetSeenFetchesIt() throws {
        let h = Harness()
        h.server("feed:home", 1)
        try h.engine.poll("feed:home", every: 1000)
        h.advance(1100)
        #expect(h.value("feed:home") == 1)
    }

    @Test func aPeriodUnderOneMillisecondIsRefused() {
        let h = Harness()
        #expect(throws: CacheError("every must be at least 1ms")) { try h.engine.poll("k", every: 0) }
        #expect(h.engine.pendingWork().isEmpty)
    }

    @Test func pollsAndActiveKeysSurviveASnapshot() throws {
        let h = Harness()
        h.server("k", 1)
        try h.engine.poll("k", every: 1000)
        h.engine.setActive("a", true)
        h.advance(300)
        let snapshot = h.engine.makeSnapshot()
        let other = Harness()
        try other.engine.restore(snapshot)
        #expect(other.engine.makeSnapshot() == snapshot)
        #expect(other.engine.activeKeys == ["a"])
        other.server("k", 1)
        other.advance(700)
        #expect(other.engine.requestLog.map(\.atMs) == [1000])
    }

    @Test func aSnapshotWithoutThemReadsAsBefore() throws {
        let h = Harness()
        h.engine.put("k", 1)
        guard case .object(let top) = h.engine.makeSnapshot(), case .object(let pending)? = top["pending"] else {
            Issue.record("not an object"); return
        }
        #expect(top["active"] == nil && pending["polls"] == nil)
    }
}

@Suite struct RetryTests {
    static let retrying = ["feed": Policy(retry: 2, backoff: 1000)]

    @Test func aFailedFetchIsSentAgainWithExponentialBackoffAndEveryAttemptLogged() {
        let h = Harness(Self.retrying)
        h.server("feed:1", "v")
        h.origin.fail(next: 2, key: "feed:1")
        let r = h.get("feed:1")
        #expect(r.value == "v" && r.error == nil)
        #expect(h.engine.requestLog.map(\.atMs) == [0, 1100, 3200])
        #expect(h.engine.requestLog.map(\.fate) == [.failed, .failed, .stored])
        #expect(h.engine.stats(namespace: "feed").requests == 3)
        #expect(h.engine.stats(namespace: "feed").fetchFailures == 0)
    }

    @Test func theReaderFailsOnlyAfterTheLastAttempt() {
        let h = Harness(Self.retrying)
        h.server("feed:1", "v")
        h.origin.fail(next: 3, key: "feed:1")
        let r = h.get("feed:1")
        #expect(r.error != nil && r.state == .absent)
        #expect(h.elapsed == 3300)
        #expect(h.engine.requestLog.map(\.fate) == [.failed, .failed, .failed])
        #expect(h.engine.stats(namespace: "feed").fetchFailures == 1)
    }

    @Test func withoutRetriesAFailureIsFinal() {
        let h = Harness()
        h.origin.fail(next: 1, key: "k")
        h.server("k", 1)
        #expect(h.get("k").error != nil)
        #expect(h.engine.requestLog.count == 1)
    }

    @Test func aRequestWaitingForItsRetryShowsInPendingAndCanBeCancelled() throws {
        let h = Harness(Self.retrying)
        h.server("feed:1", "v")
        h.origin.fail(next: 1, key: "feed:1")
        _ = h.get("feed:1", nowait: true)
        h.advance(100)
        #expect(h.engine.pendingWork().map(\.dueAt) == [h.engine.clockStart + 1100])
        try h.engine.cancel("feed:1")
        h.advance(5000)
        #expect(h.engine.requestLog.count == 1 && h.engine.peek("feed:1").state == .absent)
    }

    @Test func aRetryWaitingSurvivesASnapshot() throws {
        let h = Harness(Self.retrying)
        h.server("feed:1", "v")
        h.origin.fail(next: 1, key: "feed:1")
        _ = h.get("feed:1", nowait: true)
        h.advance(500)
        let snapshot = h.engine.makeSnapshot()
        let other = Harness()
        try other.engine.restore(snapshot)
        #expect(other.engine.makeSnapshot() == snapshot)
        other.advance(1000)
        #expect(other.value("feed:1") == "v")
        #expect(other.engine.requestLog.map(\.fate) == [.failed, .stored])
    }

    @Test func aNegativeOrHugeRetryCountIsRefused() {
        let h = Harness()
        #expect(throws: CacheError("retry must be from 0 to 30")) {
            try h.engine.defineNamespace("feed", PolicyChange(retry: 31))
        }
    }
}

@Suite struct MutationBehaviourTests {
    @Test func aMutationOfAKeyStillLoadingIsAppliedToItsAnswer() throws {
        let h = Harness()
        h.server("k", ["likes": 1])
        h.engine.watch(.all)
        _ = h.get("k", nowait: true)
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#))
        #expect(h.engine.peek("k").state == .absent)
        h.advance(100)
        #expect(h.value("k") == ["likes": 2])
        #expect(h.events.summary == ["fetched k", "confirmed k"])
        #expect(h.events.events[0].value == ["likes": 2])
        #expect(h.engine.requestLog.map(\.fate) == [.stored, .stored])
    }

    @Test func aMutationOfAnAbsentKeyStoresTheServersAnswer() throws {
        let h = Harness()
        h.server("k", ["likes": 1])
        #expect(try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#)) == ["k"])
        h.advance(100)
        #expect(h.value("k") == ["likes": 2])
    }

    @Test func aFailedMutationOfAnAbsentKeyIsRolledBackAndTheAnswerArrivesUnpatched() throws {
        let h = Harness(latency: 100)
        h.server("k", ["likes": 1])
        _ = h.get("k", nowait: true)
        h.origin.fail(next: 1)
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(100)
        #expect(h.value("k") == ["likes": 1])
        #expect(h.engine.stats().rollbacks == 1)
    }

    @Test func aPessimisticMutationChangesNothingUntilConfirmed() throws {
        let h = Harness()
        h.engine.put("k", ["likes": 1])
        h.server("k", ["likes": 1])
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#), options: MutationOptions(pessimistic: true))
        #expect(h.value("k") == ["likes": 1])
        h.advance(100)
        #expect(h.value("k") == ["likes": 2])
    }

    @Test func aFailedPessimisticMutationChangesNothingAndIsNoRollback() throws {
        let h = Harness()
        h.engine.put("k", ["likes": 1])
        h.engine.watch(.all)
        h.origin.fail(next: 1)
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#), options: MutationOptions(pessimistic: true))
        h.advance(100)
        #expect(h.value("k") == ["likes": 1])
        #expect(h.engine.stats().rollbacks == 0 && h.events.events.isEmpty)
    }

    @Test func aMutationWithoutABodyKeepsTheChangeAndRefetches() throws {
        let h = Harness()
        h.engine.put("k", ["likes": 1])
        h.server("k", ["likes": 1])
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#), options: MutationOptions(refetch: true))
        h.server("k", ["likes": 7])
        h.advance(100)
        #expect(h.value("k") == ["likes": 2])
        #expect(h.engine.requestLog.map(\.kind) == [.mutate, .fetch])
        h.advance(100)
        #expect(h.value("k") == ["likes": 7])
    }

    @Test func waitingPatchesSurviveASnapshot() throws {
        let h = Harness()
        h.server("k", ["likes": 1])
        _ = h.get("k", nowait: true)
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#))
        let snapshot = h.engine.makeSnapshot()
        let other = Harness()
        try other.engine.restore(snapshot)
        #expect(other.engine.makeSnapshot() == snapshot)
        other.advance(100)
        #expect(other.value("k") == ["likes": 2])
    }
}

@Suite struct DeferredMutationLogoutTests {
    /// A logout drops the queued mutation of a key not cached, and with it the patch waiting for
    /// the key: the next user's fetch of it is not patched.
    @Test func clearDropsThePatchesWaitingForAKey() throws {
        let h = Harness()
        h.server("k", ["likes": 1])
        h.origin.isOnline = false
        try h.engine.mutate("k", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.engine.clear()
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        #expect(h.get("k").value == ["likes": 1])
        #expect(h.engine.requestLog.map(\.kind) == [.fetch])
        let other = Harness()
        try other.engine.restore(h.engine.makeSnapshot())
    }
}

@Suite struct AppBehaviourSnapshotRefusalTests {
    /// A damaged poll, active key or retry in a snapshot is refused with its path; nothing changes.
    @Test func damagedFieldsAreRefusedWithTheirPath() throws {
        let h = Harness()
        try h.engine.poll("k", every: 1000)
        guard case .object(var top) = h.engine.makeSnapshot(), case .object(var pending)? = top["pending"],
              case .array(var polls)? = pending["polls"], case .object(var poll) = polls[0] else {
            Issue.record("no polls in the snapshot"); return
        }
        poll["every_ms"] = 0
        polls[0] = .object(poll)
        pending["polls"] = .array(polls)
        top["pending"] = .object(pending)
        let other = Harness()
        let before = other.engine.makeSnapshot()
        #expect(throws: SnapshotError(path: "pending.polls[0].every_ms", "must be at least 1")) {
            try other.engine.restore(.object(top))
        }
        top["pending"] = .object(pending.merging(["polls": .array([])]) { $1 })
        top["active"] = .array([.string("bad key")])
        #expect(throws: SnapshotError.self) { try other.engine.restore(.object(top)) }
        #expect(other.engine.makeSnapshot() == before)
    }
}
