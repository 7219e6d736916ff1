@_spi(Engine) import CacheCore
import CacheServer
import Foundation
import Testing

/// SPEC §1.1 Unknown outcome: a mutation that timed out or whose answer was lost is neither
/// confirmed nor rolled back: its entry turns stale and is refetched, and observers never see it
/// settle fresh on a value the server did not answer. `unknown-outcome-rolls-back` (§1.2) keeps
/// the rollback.
@Suite struct UnknownOutcomeTests {
    /// `like:1` = {"n": 1} cached and on the server, watched; the namespace gives up after 1s.
    static func harness(_ naive: Set<NaivePolicy> = []) -> Harness {
        let h = Harness(["like": Policy(ttl: 600_000, timeout: 1_000, naive: naive)])
        h.server("like:1", ["n": 1])
        _ = h.get("like:1")
        h.engine.watch(.all)
        return h
    }

    static let inc = patch(#"{"n": {"$inc": 1}}"#)

    @Test func aTimedOutMutationTheServerAppliedIsRefetchedNotRolledBack() throws {
        let h = Self.harness()
        h.origin.latencies["like:1"] = 2_000
        try h.engine.mutate("like:1", patch: Self.inc)
        #expect(h.origin.data["like:1"] == ["n": 2])  // the server applied it when it was sent
        h.origin.latencies["like:1"] = nil
        h.advance(1_000)  // the client gives up
        #expect(h.value("like:1") == ["n": 2])  // not rolled back to a value the server no longer has
        #expect(h.engine.peek("like:1").state == .stale)
        let stats = h.engine.stats()
        #expect(stats.rollbacks == 0 && stats.invalidations == 1 && stats.refreshes == 1)
        #expect(h.engine.requestLog.map(\.kind) == [.fetch, .mutate, .fetch])
        #expect(h.engine.requestLog[1].fate == .failed)
        // While the refetch is in flight a read serves the value shown, stale, and sends nothing more.
        let read = h.get("like:1")
        #expect(read.state == .stale && read.value == ["n": 2])
        #expect(h.engine.stats().staleHits == 1 && h.engine.requestLog.count == 3)
        h.advance(2_000)
        #expect(h.engine.peek("like:1").state == .fresh)
        #expect(h.events.summary == ["mutated like:1", "invalidated like:1", "refreshed like:1"])
    }

    @Test func aTimedOutMutationTheServerDidNotApplyEndsOnTheServersValue() throws {
        let h = Self.harness()
        // Scripted answers leave the data alone: the server never applied it.
        h.origin.queue(ScriptedAnswer(latency: nil, outcome: .noAnswer), for: "like:1")
        try h.engine.mutate("like:1", patch: Self.inc)
        h.advance(1_000)
        #expect(h.value("like:1") == ["n": 2])
        h.advance(100)
        #expect(h.value("like:1") == ["n": 1])
        #expect(h.engine.peek("like:1").state == .fresh)
        #expect(h.events.events.last?.cause == .refreshed)
        #expect(h.engine.stats().rollbacks == 0)
    }

    @Test func unknownOutcomeRollsBackKeepsTheOldRule() throws {
        let h = Self.harness([.unknownOutcomeRollsBack])
        h.origin.latencies["like:1"] = 2_000
        try h.engine.mutate("like:1", patch: Self.inc)
        h.advance(1_000)
        #expect(h.value("like:1") == ["n": 1])
        #expect(h.engine.peek("like:1").state == .fresh)
        #expect(h.origin.data["like:1"] == ["n": 2])
        #expect(h.engine.stats().rollbacks == 1 && h.engine.stats().refreshes == 0)
        #expect(h.engine.requestLog.count == 2)
        #expect(h.events.summary == ["mutated like:1", "rolled-back like:1"])
    }

    @Test func aLostAnswerIsAppliedAndItsKeyRefetched() throws {
        let h = Self.harness()
        h.origin.queue(ScriptedAnswer(latency: nil, outcome: .lostAnswer("answer lost")), for: "like:1")
        try h.engine.mutate("like:1", patch: Self.inc)
        #expect(h.origin.data["like:1"] == ["n": 2])
        h.advance(100)
        #expect(h.engine.peek("like:1").state == .stale)
        h.advance(100)
        #expect(h.value("like:1") == ["n": 2] && h.engine.peek("like:1").state == .fresh)
        #expect(h.engine.stats().rollbacks == 0)
    }

    @Test func aFailureAfterCommitIsRolledBackAsTheServerSaidItFailed() throws {
        let h = Self.harness()
        h.origin.queue(ScriptedAnswer(latency: nil, outcome: .failure("server error"), commit: true), for: "like:1")
        try h.engine.mutate("like:1", patch: Self.inc)
        h.advance(100)
        #expect(h.origin.data["like:1"] == ["n": 2])
        #expect(h.value("like:1") == ["n": 1] && h.engine.stats().rollbacks == 1)
    }

    @Test func anAnswerToAFetchSentBeforeTheMutationDoesNotUndoIt() throws {
        let h = Self.harness()
        h.origin.latencies["like:1"] = 500
        _ = h.get("like:1", force: true, nowait: true)  // answers {"n": 1} at 500ms
        h.origin.queue(ScriptedAnswer(latency: 50, outcome: .lostAnswer("answer lost")), for: "like:1")
        h.advance(10)
        try h.engine.mutate("like:1", patch: Self.inc)  // applied; its answer lost at 60ms
        h.origin.latencies["like:1"] = 800
        h.advance(50)  // the refetch is sent, answering at 860ms
        h.advance(440)  // the older fetch's answer {"n": 1}: it may predate the mutation
        #expect(h.value("like:1") == ["n": 2] && h.engine.peek("like:1").state == .stale)
        h.advance(360)
        #expect(h.value("like:1") == ["n": 2] && h.engine.peek("like:1").state == .fresh)
    }

    /// Two mutations of one key, the second's answer lost: whichever comes first, the first's
    /// confirmation or the loss, every value shown from then on has both changes (the server
    /// applied both). The confirmation once showed the old value with the second change alone,
    /// a value the server never held, until the refetch.
    @Test(arguments: [(10, 20), (10, 5), (30, 20), (30, 5)] as [(Int64, Int64)])
    func aConfirmationAfterALaterMutationsLostAnswerKeepsItsOwnChange(first: Int64, lost: Int64) throws {
        let h = Self.harness()
        h.origin.latencies["like:1"] = first
        try h.engine.mutate("like:1", patch: patch(#"{"a": 1}"#))
        h.origin.latencies["like:1"] = 100
        h.origin.queue(ScriptedAnswer(latency: lost, outcome: .lostAnswer("answer lost")), for: "like:1")
        try h.engine.mutate("like:1", patch: patch(#"{"b": 1}"#))
        let both: JSONValue = ["n": 1, "a": 1, "b": 1]
        #expect(h.origin.data["like:1"] == both)
        let sent = h.events.events.count
        h.advance(1_000)
        let shown = h.events.events[sent...].map { "\($0.cause.rawValue) \($0.value.map(\.compactText) ?? "-")" }
        #expect(shown.count >= 3, "\(shown)")
        #expect(h.events.events[sent...].allSatisfy { $0.value == both }, "\(shown)")
        #expect(h.value("like:1") == both && h.engine.peek("like:1").state == .fresh)
        #expect(h.engine.stats().rollbacks == 0)
    }

    @Test func mutationsQueuedOfflineAreSentAfterTheRefetch() throws {
        let h = Self.harness()
        h.origin.isOnline = false
        try h.engine.mutate("like:1", patch: Self.inc)
        try h.engine.mutate("like:1", patch: Self.inc)
        #expect(h.value("like:1") == ["n": 3])
        h.origin.isOnline = true
        h.origin.latencies["like:1"] = 2_000
        h.engine.originDidComeOnline()  // the first is sent; the server applies it
        h.origin.latencies["like:1"] = nil
        h.advance(1_000)  // it times out: the refetch, then the second (not the first again)
        #expect(h.engine.requestLog.map(\.kind) == [.fetch, .mutate, .fetch, .mutate])
        #expect(h.value("like:1") == ["n": 3])
        h.advance(100)
        #expect(h.value("like:1") == ["n": 3] && h.origin.data["like:1"] == ["n": 3])
        #expect(h.engine.peek("like:1").state == .fresh && h.engine.stats().rollbacks == 0)
    }

    @Test func offlineTheEntryStaysStaleForTheNextRead() throws {
        let h = Self.harness()
        h.origin.latencies["like:1"] = 2_000
        try h.engine.mutate("like:1", patch: Self.inc)
        h.origin.isOnline = false
        h.advance(1_000)
        #expect(h.engine.requestLog.count == 2)
        #expect(h.engine.peek("like:1").state == .stale && h.value("like:1") == ["n": 2])
        h.origin.isOnline = true
        h.origin.latencies["like:1"] = nil
        _ = h.get("like:1")
        #expect(h.engine.requestLog.count == 3 && h.engine.stats().refreshes == 1)
    }

    @Test func aFailedRefetchLeavesTheEntryStale() throws {
        let h = Self.harness()
        h.origin.latencies["like:1"] = 2_000
        try h.engine.mutate("like:1", patch: Self.inc)
        h.origin.latencies["like:1"] = nil
        h.origin.fail(next: 1)
        h.advance(1_100)
        #expect(h.engine.stats().refreshFailures == 1)
        #expect(h.engine.peek("like:1").state == .stale)
    }

    @Test func aMutationOfAKeyNotCachedCountsNoRollback() throws {
        let h = Self.harness()
        h.server("like:2", ["n": 5])
        h.origin.latencies["like:2"] = 2_000
        try h.engine.mutate("like:2", patch: Self.inc)
        h.origin.latencies["like:2"] = nil
        h.advance(1_000)
        #expect(h.engine.stats().rollbacks == 0)
        #expect(h.engine.peek("like:2").state == .absent)
        #expect(h.get("like:2").value == ["n": 6])
    }

    @Test func aSnapshotKeepsTheUnknownOutcomeOfAnAnswerInFlight() throws {
        let h = Self.harness()
        h.origin.latencies["like:1"] = 2_000
        try h.engine.mutate("like:1", patch: Self.inc)
        let snapshot = h.engine.makeSnapshot()
        #expect(snapshot.compactText.contains(#""unknown_outcome":true"#))
        let other = Harness(["like": Policy(ttl: 600_000, timeout: 1_000)])
        try other.engine.restore(snapshot)
        other.advance(1_000)
        #expect(other.engine.stats().rollbacks == 0)
        #expect(other.engine.peek("like:1").state == .stale)
        // A field that is not true or false is refused, and nothing is restored.
        let bad = try JSONValue(parsing: snapshot.compactText.replacingOccurrences(of: #""unknown_outcome":true"#,
                                                                                     with: #""unknown_outcome":"yes""#))
        let untouched = Harness(["like": Policy(ttl: 600_000, timeout: 1_000)])
        #expect(throws: SnapshotError.self) { try untouched.engine.restore(bad) }
        #expect(untouched.engine.keys().isEmpty)
        // A failure of known outcome writes no such field.
        let plain = Self.harness()
        plain.origin.fail(next: 1)
        try plain.engine.mutate("like:1", patch: Self.inc)
        #expect(!plain.engine.makeSnapshot().compactText.contains("unknown_outcome"))
    }
}

/// SPEC §1.1 Retries: a mutation sent with an idempotency key (`--idempotent`) is retried as a
/// fetch is, and the server applies it once; `retry-without-idempotency-key` (§1.2) retries every
/// mutation without one, so the server applies each attempt (the double increment).
@Suite struct IdempotentRetryTests {
    /// `counter:1` = {"n": 10}, cached; one retry a second after a failure.
    static func harness(_ naive: Set<NaivePolicy> = []) -> Harness {
        let h = Harness(["counter": Policy(ttl: 600_000, retry: 1, backoff: 1_000, naive: naive)])
        h.server("counter:1", ["n": 10])
        _ = h.get("counter:1")
        return h
    }

    static let inc = patch(#"{"n": {"$inc": 1}}"#)
    static let lost = ScriptedAnswer(latency: nil, outcome: .lostAnswer("answer lost"))

    /// The server remembers the newest 65,536 idempotency keys (SPEC §7.1), not every key of the
    /// run: a retry of the oldest, forgotten, is applied again; one of a key kept is not.
    @Test func theServerRemembersTheNewestKeysOnly() {
        let server = SimulatedServer()
        server.set("c:1", ["n": 0], at: 0)
        let limit: UInt64 = 65_536
        func send(_ id: UInt64) {
            _ = server.mutate(MutationRequest(keys: ["c:1"], patch: Self.inc, entityID: nil,
                                              idempotencyKey: IdempotencyKey(client: 0, mutation: id)), requestID: id, at: 0)
        }
        for id in 1...limit + 1 { send(id) }
        #expect(server.data["c:1"] == ["n": .int(Int64(limit + 1))])
        send(limit + 1)  // kept: applied once
        send(2)  // the oldest kept
        #expect(server.data["c:1"] == ["n": .int(Int64(limit + 1))])
        send(1)  // forgotten when the 65,537th was applied
        #expect(server.data["c:1"] == ["n": .int(Int64(limit + 2))])
    }

    @Test func aRetryWithTheKeyIsAppliedOnce() throws {
        let h = Self.harness()
        h.origin.queue(Self.lost, for: "counter:1")
        try h.engine.mutate("counter:1", patch: Self.inc, options: MutationOptions(idempotent: true))
        h.advance(2_000)
        #expect(h.origin.data["counter:1"] == ["n": 11])
        #expect(h.value("counter:1") == ["n": 11] && h.engine.peek("counter:1").state == .fresh)
        #expect(h.engine.requestLog.map { "\($0.kind) \($0.fate)" } == ["fetch stored", "mutate failed", "mutate stored"])
        #expect(h.engine.stats().requests == 3 && h.engine.stats().rollbacks == 0)
    }

    @Test func retryWithoutIdempotencyKeyAppliesItTwice() throws {
        let h = Self.harness([.retryWithoutIdempotencyKey])
        h.origin.queue(Self.lost, for: "counter:1")
        try h.engine.mutate("counter:1", patch: Self.inc)
        h.advance(2_000)
        #expect(h.origin.data["counter:1"] == ["n": 12])
        #expect(h.value("counter:1") == ["n": 12])
    }

    @Test func aMutationWithoutTheFlagIsNotRetried() throws {
        let h = Self.harness()
        h.origin.queue(Self.lost, for: "counter:1")
        try h.engine.mutate("counter:1", patch: Self.inc)
        h.advance(2_000)
        #expect(h.engine.requestLog.map(\.kind) == [.fetch, .mutate, .fetch])
        #expect(h.origin.data["counter:1"] == ["n": 11] && h.value("counter:1") == ["n": 11])
    }

    @Test func anUnknownAttemptLeavesTheLastFailureUnknown() throws {
        let h = Self.harness()
        h.origin.queue(Self.lost, for: "counter:1")
        h.origin.queue(ScriptedAnswer(latency: nil, outcome: .failure("server error")), for: "counter:1")
        try h.engine.mutate("counter:1", patch: Self.inc, options: MutationOptions(idempotent: true))
        h.advance(2_000)
        // The first attempt was applied: the retry's error does not roll it back, the key is refetched.
        #expect(h.engine.stats().rollbacks == 0)
        #expect(h.engine.requestLog.map(\.kind) == [.fetch, .mutate, .mutate, .fetch])
        h.advance(100)
        #expect(h.value("counter:1") == ["n": 11] && h.engine.peek("counter:1").state == .fresh)
    }

    @Test func aKnownFailureEveryTimeIsRolledBack() throws {
        let h = Self.harness()
        h.origin.fail(next: 2)
        try h.engine.mutate("counter:1", patch: Self.inc, options: MutationOptions(idempotent: true))
        h.advance(2_000)
        #expect(h.engine.stats().rollbacks == 1 && h.value("counter:1") == ["n": 10])
        #expect(h.origin.data["counter:1"] == ["n": 10])
    }

    @Test func aSnapshotKeepsTheFlagAndTheRetry() throws {
        let h = Self.harness()
        h.origin.queue(Self.lost, for: "counter:1")
        try h.engine.mutate("counter:1", patch: Self.inc, options: MutationOptions(idempotent: true))
        h.advance(100)  // the first attempt's answer is lost: a retry is due in 1s
        let text = h.engine.makeSnapshot().compactText
        #expect(text.contains(#""idempotent":true"#) && text.contains(#""unknown_outcome":true"#))
        let plain = Self.harness()
        try plain.engine.mutate("counter:1", patch: Self.inc)
        #expect(!plain.engine.makeSnapshot().compactText.contains("idempotent"))
    }
}

extension UnknownOutcomeTests {
    /// join-refetch: the fetch in flight is the refetch of a mutation of unknown outcome, so its
    /// answer lands instead of being discarded, older than the mutation: the switch's bug.
    @Test func withJoinRefetchTheFetchInFlightIsTheRefetch() throws {
        let h = Self.harness([.joinRefetch])
        h.origin.latencies["like:1"] = 500
        _ = h.get("like:1", force: true, nowait: true)  // answers {"n": 1} at 500ms
        h.origin.latencies["like:1"] = nil
        h.origin.queue(ScriptedAnswer(latency: 50, outcome: .lostAnswer("answer lost")), for: "like:1")
        h.advance(10)
        try h.engine.mutate("like:1", patch: Self.inc)
        h.advance(50)
        #expect(h.engine.requestLog.count == 3)  // no refetch of its own
        h.advance(440)
        #expect(h.value("like:1") == ["n": 1] && h.origin.data["like:1"] == ["n": 2])
    }
}
