import CacheCore
import CacheShell
import Testing
import TestSupport

/// Five kinds of interleaving where the engine broke its own rules (SPEC §1.1), each as the
/// commands a user types and what they must print. Every test fails on the engine before the fix;
/// `ModelTests` covers the same classes on generated sequences.
@Suite struct InterleavingContractTests {
    /// The lines of `printed` that start with one of `prefixes`, in order.
    static func lines(_ printed: String, _ prefixes: String...) -> [String] {
        printed.split(separator: "\n").map(String.init).filter { line in prefixes.contains { line.hasPrefix($0) } }
    }

    /// A counter of `stats` (every namespace, then the total) or of `stats NS` (`name: N`).
    static func counter(_ printed: String, _ name: String) -> [String] {
        lines(printed, name + " ", name + ":").map {
            $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")
        }
    }

    // MARK: 1. An older fetch still in flight is joined once a newer one completes

    /// An absent key: the forced request fails first; the plain read joins the first request, which
    /// is still in flight, and its answer is stored.
    @Test func aReadJoinsTheOlderFetchStillInFlightAfterANewerOneFailed() async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            server set a 1
            server latency 1s a
            get a --nowait
            server latency 100ms a
            server fail 1 a
            get a --force
            get a
            stats
            """)
        #expect(Self.counter(printed, "requests") == ["2 2"], "no third request")
        #expect(Self.counter(printed, "joined") == ["1 1"])
        #expect(Self.lines(printed, "now_ms") == [], "the read waited without an advance of its own")
        let after = await shell.typed("peek a\nserver log")
        #expect(Self.lines(after, "value:", "age_ms:") == ["value:         1", "age_ms:        0"],
                "the first request's answer is stored, at 1s")
        #expect(Self.lines(after, "0 ") == ["0      fetch  stored  a", "0      fetch  failed  a"])
    }

    /// A cached, expired key: the same, and `pending` says the first request is still in flight.
    @Test func theOlderFetchOfAnExpiredEntryIsStillPendingAndItsAnswerStored() async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            ns s ttl=1m
            server set s:a 1
            put s:a 0
            advance 2m
            server latency 1s s:a
            get s:a --nowait
            server latency 100ms s:a
            server fail 1 s:a
            get s:a --force
            """)
        #expect(Self.lines(printed, "pending:") == ["pending:       true", "pending:       true"])
        let read = await shell.typed("get s:a\nstats s")
        #expect(Self.lines(read, "value:", "source:") == ["value:         1", "source:        server"])
        #expect(Self.counter(read, "requests") == ["2"])
        #expect(Self.counter(read, "joined") == ["1"])
    }

    // MARK: 2. A mutation's own answer is not the victim of the eviction it causes

    @Test(arguments: ["lru", "fifo", "sieve", "lfu"])
    func aMutationAnswerOnAKeyNotCachedIsStoredAndAnotherEntryEvicted(policy: String) async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            ns s max=1 policy=\(policy)
            server set s:b {"n":2}
            put s:a 1
            get s:a
            mutate s:b {"x":1}
            advance 1s
            keys
            peek s:b
            """)
        #expect(Self.lines(printed, "s:") == ["s:b  fresh  900"], "\(policy): \(printed)")
        #expect(Self.lines(printed, "value:").last == "value:         {\"n\":2,\"x\":1}")
    }

    // MARK: 3. Removing the entry at the head of a namespace's expiries keeps (time, sequence) order

    /// Each removal or new store of `p:a` leaves the scan scheduled for its expiry in place; the
    /// head is then `p:b`'s, due at the same instant but after the `at`. (`put p:a 5` stores
    /// `p:a` again after the `at` was scheduled: its own expiry at 1s is counted, after the `at`.)
    @Test(arguments: [("evict p:a", "0"), ("expire p:a in=1m", "0"), ("put p:a 5", "1")])
    func workScheduledBeforeAnExpiryRunsFirstAfterTheHeadEntryChanged(removal: String, expirations: String) async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            ns p ttl=1s
            put p:a 1
            at 1s put p:b 3
            put p:b 2
            \(removal)
            watch p:b
            advance 1500ms
            peek p:b
            stats p
            """)
        #expect(Self.lines(printed, "* ") == ["* 2026-01-01T00:00:01.000Z stored p:b fresh 3 (cache)"], "\(removal)")
        #expect(Self.lines(printed, "value:", "state:") == ["state:         fresh", "value:         3"])
        #expect(Self.counter(printed, "expirations") == [expirations], "p:b never expired: \(removal)")
    }

    // MARK: 4. A queued mutation does not re-create an entry evicted after it was made

    @Test(arguments: ["lru", "fifo", "sieve", "lfu"])
    func aQueuedMutationsAnswerDoesNotResurrectAnEvictedKey(policy: String) async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            ns s max=1 policy=\(policy)
            server set s:a {"n":1}
            server offline
            mutate s:a {"m":1}
            put s:a {"n":0}
            put s:b {"n":5}
            server online
            advance 1s
            keys
            server log
            server show s:a
            """)
        #expect(Self.lines(printed, "s:b  ", "s:a  ") == ["s:b  fresh  1000 (1s)"], "\(policy): \(printed)")
        #expect(Self.lines(printed, "0      mutate") == ["0      mutate  discarded  s:a"],
                "the server still got the mutation; its answer was not stored")
        #expect(printed.contains(#"{"m":1,"n":1}"#), "the server applied it")
    }

    /// A mutation made after the eviction stores its answer, as a mutation of a key not cached does.
    @Test func aMutationMadeAfterTheEvictionStillStoresItsAnswer() async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            ns s max=1
            server set s:a {"n":1}
            server offline
            put s:a {"n":0}
            put s:b {"n":5}
            mutate s:a {"m":1}
            server online
            advance 1s
            keys
            """)
        #expect(Self.lines(printed, "s:b  ", "s:a  ") == ["s:a  fresh  900"])
    }

    // MARK: 5. A failed mutation is no write

    @Test(arguments: ["--refetch", "--refetch --pessimistic", ""])
    func aFailedMutationDoesNotDiscardTheAnswerOfAFetchSentBeforeIt(flags: String) async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            server set s:a {"n":1}
            put s:a {"n":0}
            server latency 1s s:a
            get s:a --force --nowait
            server latency 100ms s:a
            server fail 1 s:a
            mutate s:a {"m":1} \(flags)
            advance 2s
            peek s:a
            """)
        #expect(Self.lines(printed, "value:").last == "value:         {\"n\":1}", "\(flags)")
        #expect(Self.lines(printed, "age_ms:").last == "age_ms:        1000 (1s)", "stored at 1s")
    }
}
