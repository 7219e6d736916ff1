@_spi(Engine) import CacheCore
import CacheReplay
import CacheServer
import Testing
import TestSupport

/// B6 with `ns NAME policy=`: which entry each eviction policy evicts, its tie-breaking, what
/// counts as an access, a policy change on a full namespace, and its state through a snapshot.
/// (`Tests/replay/compare_engine.py` compares the engine's hit counts with libcachesim's.)
@Suite struct EvictionPolicyTests {
    /// A harness with namespace `n` of `max` entries under `eviction`, a server answering at once.
    static func harness(_ eviction: Eviction, max: Int = 3) -> Harness {
        let h = Harness(["n": Policy(ttl: 1_000 * minute, max: max, eviction: eviction)], latency: 0)
        for i in 0..<20 { h.server("n:\(i)", .int(Int64(i))) }
        return h
    }

    /// Puts then reads, as a user types them; returns the keys each line evicted, in order.
    static func run(_ h: Harness, _ lines: [String]) -> [String] {
        var evicted: [String] = []
        for line in lines {
            let parts = line.split(separator: " ").map(String.init)
            switch parts[0] {
            case "put": evicted += h.engine.put(parts[1], 1).dropFirst()
            case "touch": #expect(h.engine.touch(parts[1]) == [parts[1]])
            case "access", "read":
                // An access to a cached key: by touch, or by a read.
                guard h.engine.peek(parts[1]).state != .absent else { continue }
                if parts[0] == "access" { _ = h.engine.touch(parts[1]) } else { _ = h.get(parts[1]) }
            case "get":
                let before = Set(h.engine.keys().map(\.key))
                _ = h.get(parts[1])
                evicted += before.subtracting(h.engine.keys().map(\.key)).sorted()
            default: Issue.record("bad line \(line)")
            }
        }
        return evicted
    }

    /// `touch` (redis's TOUCH) is an access: a 3-entry LRU holding a, b, c with a touched evicts
    /// b for d, not a; each policy moves a touched entry exactly as a read moves it.
    @Test(arguments: [(Eviction.lru, ["n:2"]), (.fifo, ["n:1"]), (.sieve, ["n:2"]), (.lfu, ["n:2"])])
    func touchIsAnAccess(eviction: Eviction, evicted: [String]) {
        #expect(Self.run(Self.harness(eviction), ["put n:1", "put n:2", "put n:3", "touch n:1", "put n:4"]) == evicted)
        for lines in [["put n:1", "put n:2", "put n:3", "A n:1", "A n:1", "A n:2", "put n:4", "put n:5", "A n:3", "put n:6"],
                      ["put n:1", "put n:2", "put n:3", "A n:2", "put n:4", "A n:1", "A n:4", "put n:5", "put n:6", "put n:7"]] {
            let touched = Self.harness(eviction), read = Self.harness(eviction)
            #expect(Self.run(touched, lines.map { $0.replacingOccurrences(of: "A ", with: "access ") })
                    == Self.run(read, lines.map { $0.replacingOccurrences(of: "A ", with: "read ") }), "\(eviction)")
            #expect(touched.engine.keys().map(\.key) == read.engine.keys().map(\.key))
        }
    }

    /// `touch` changes the eviction order and nothing else: no statistic, request, event, value
    /// or time; an absent or expired key is not touched and the state stays as it was.
    @Test func touchChangesOnlyTheEvictionOrder() {
        let h = Self.harness(.lru)
        _ = Self.run(h, ["put n:1", "put n:2"])
        h.engine.watch(.all)
        h.advance(10_000)
        let before = h.engine.peek("n:1")
        let (stats, log, events) = (h.engine.stats(), h.engine.requestLog.count, h.events.events.count)
        #expect(h.engine.touch("n:1") == ["n:1"])
        #expect(h.engine.peek("n:1") == before)
        #expect(h.engine.keys().map(\.key) == ["n:2", "n:1"])
        #expect(h.engine.stats() == stats)
        #expect(h.engine.requestLog.count == log && h.events.events.count == events)

        let state = h.engine.snapshotText(pretty: false)
        #expect(h.engine.touch("n:9").isEmpty)
        #expect(h.engine.touch("other:1").isEmpty)
        h.engine.expire("n:2")
        let expired = h.engine.snapshotText(pretty: false)
        #expect(expired != state)
        #expect(h.engine.touch("n:2").isEmpty)
        #expect(h.engine.snapshotText(pretty: false) == expired)
        #expect(h.engine.keys().map(\.key) == ["n:2", "n:1"])
    }

    @Test func lruEvictsTheLeastRecentlyUsed() {
        let h = Self.harness(.lru)
        #expect(Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:1", "put n:4"]) == ["n:2"])
    }

    @Test func fifoEvictsTheEntryStoredEarliestWhateverWasRead() {
        let h = Self.harness(.fifo)
        #expect(Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:1", "get n:1", "put n:4", "put n:5"]) == ["n:1", "n:2"])
        // A put of a cached key is an access, not a new store: n:3 keeps its place.
        #expect(Self.run(h, ["put n:3", "put n:6"]) == ["n:3"])
    }

    @Test func sieveSparesVisitedEntriesOnceAndKeepsItsHand() {
        let h = Self.harness(.sieve)
        // n:1 visited: the hand clears it and evicts n:2, then rests on n:3.
        #expect(Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:1", "put n:4"]) == ["n:2"])
        // From n:3 (unvisited): n:3 goes, though n:1 is older; the hand passes to n:1.
        #expect(Self.run(h, ["put n:5"]) == ["n:3"])
        // From n:4, visited: its bit is cleared and n:5 after it goes; the hand passes the new
        // n:6 (which the victim search never sees) to the oldest.
        #expect(Self.run(h, ["get n:4", "put n:6"]) == ["n:5"])
        // Every entry visited: a whole lap clears them all, and the oldest one goes.
        #expect(Self.run(h, ["get n:1", "get n:4", "get n:6", "put n:7"]) == ["n:1"])
    }

    @Test func lfuEvictsTheFewestUsesAndAmongThemTheEarliestToReachTheCount() {
        let h = Self.harness(.lfu)
        // n:1 3 uses, n:2 2 uses, n:3 1 use: n:3 goes.
        #expect(Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:1", "get n:1", "get n:2", "put n:4"]) == ["n:3"])
        // n:4 (1 use) goes next, though newer than every other.
        #expect(Self.run(h, ["put n:5"]) == ["n:4"])
        // n:5 reaches 2 uses after n:2 did: n:2 goes first.
        #expect(Self.run(h, ["get n:5", "put n:6"]) == ["n:2"])
    }

    @Test func lfuTieGoesToTheEntryThatReachedItsCountFirst() {
        let h = Self.harness(.lfu)
        // n:1, n:2, n:3 each 2 uses, reached in the order n:2, n:3, n:1: n:2 goes.
        #expect(Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:2", "get n:3", "get n:1", "put n:4"]) == ["n:2"])
        // The new entry n:4 (1 use) is never its own victim while others are held: it goes next.
        #expect(Self.run(h, ["put n:5"]) == ["n:4"])
    }

    @Test(arguments: Eviction.allCases)
    func aNewEntryIsNeverItsOwnVictimUnlessMaxIsZero(eviction: Eviction) {
        let h = Self.harness(eviction, max: 2)
        _ = Self.run(h, ["put n:1", "put n:2", "get n:1", "get n:2", "get n:1", "get n:2"])
        let evicted = Self.run(h, ["get n:3"])
        #expect(evicted.count == 1 && evicted != ["n:3"])
        #expect(h.engine.peek("n:3").state == .fresh)

        let none = Self.harness(eviction, max: 0)
        // Stored and evicted at once: one change of the key, listed once.
        #expect(none.engine.put("n:1", 1) == ["n:1"])
        #expect(none.engine.count == 0)
    }

    @Test func aPolicyChangeStartsFromRecencyOrder() throws {
        let h = Self.harness(.lru, max: 3)
        _ = Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:1", "get n:1"])
        // Recency order n:2, n:3, n:1; under LFU each starts with one use, in that order.
        _ = try h.engine.defineNamespace("n", PolicyChange(eviction: .lfu))
        #expect(Self.run(h, ["put n:4"]) == ["n:2"])
        _ = try h.engine.defineNamespace("n", PolicyChange(eviction: .fifo))
        // Recency order n:3, n:1, n:4 becomes the FIFO order: reading n:3 now does not save it.
        #expect(Self.run(h, ["get n:3", "put n:5"]) == ["n:3"])
        // A lowered max evicts by the policy in force.
        #expect(try h.engine.defineNamespace("n", PolicyChange(max: .some(1))) == ["n:1", "n:4"])
        #expect(h.engine.keys().map(\.key) == ["n:5"])
        #expect(h.engine.policy(of: "n").eviction == .fifo)
    }

    /// `keys` stays in recency order, whatever the policy.
    @Test(arguments: Eviction.allCases)
    func keysListsRecencyOrderUnderEveryPolicy(eviction: Eviction) {
        let h = Self.harness(eviction, max: 5)
        _ = Self.run(h, ["put n:1", "put n:2", "put n:3", "get n:1", "put n:2"])
        #expect(h.engine.keys().map(\.key) == ["n:3", "n:1", "n:2"])
    }

    // MARK: The replay simulator agrees

    /// The engine and `replay`'s simulator (SPEC §5.5) give the same counters for every policy,
    /// size, ttl and stale on the same get-only trace. Yields between configurations, not to hold
    /// a thread of the test pool for many seconds.
    @Test(arguments: [Eviction.fifo, .sieve, .lfu, .lru])
    func theReplaySimulatorMatchesTheEngine(eviction: Eviction) async throws {
        for seed in UInt64(21)...22 {
            let trace = ReplayEquivalenceTests.trace(seed: seed, count: 500, keys: 25)
            for m in [1, 3, 10] as [Int?] { for t in [nil, 30_000, 300_000] as [Int64?] { for s in [nil, 0, 10_000] as [Int64?] {
                let c = ReplayConfiguration(policy: EvictionPolicy(eviction), max: m, ttl: t, stale: s)
                let simulated = Replay.run(trace, configurations: [c], stackDistance: false).rows[0].counters
                let engine = try ReplayEquivalenceTests.engineCounters(trace, c, eviction: eviction)
                #expect(simulated == engine, "seed \(seed) \(c)")
                await Task.yield()
            } } }
        }
    }

    // MARK: Snapshots

    /// Random puts, reads and evictions on four namespaces, one per policy.
    static func busy(seed: UInt64, ops: Int) -> Harness {
        let h = Harness(Dictionary(uniqueKeysWithValues: Eviction.allCases.map {
            ($0.rawValue, Policy(ttl: 1_000 * minute, max: 4, eviction: $0))
        }), latency: 0)
        for e in Eviction.allCases { for i in 0..<10 { h.server("\(e.rawValue):\(i)", .int(Int64(i))) } }
        step(h, seed: seed, ops: ops)
        return h
    }

    static func step(_ h: Harness, seed: UInt64, ops: Int) {
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<ops {
            let key = "\(rng.pick(Eviction.allCases).rawValue):\(Int.random(in: 0..<10, using: &rng))"
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: _ = h.get(key)
            case 6..<9: h.engine.put(key, 1)
            default: _ = h.engine.evict(key)
            }
        }
    }

    @Test func aRestoredCacheEvictsAsTheOriginalWould() throws {
        for seed in UInt64(1)...20 {
            let original = Self.busy(seed: seed, ops: 80)
            let text = original.engine.makeSnapshot().compactText
            let copy = Harness()
            try copy.engine.restore(JSONValue(parsing: text))
            let restoredSame = copy.engine.makeSnapshot().compactText == text
            #expect(restoredSame, "seed \(seed): restore then snapshot differs")
            Self.step(original, seed: seed + 100, ops: 80)
            Self.step(copy, seed: seed + 100, ops: 80)
            #expect(copy.engine.keys().map(\.key) == original.engine.keys().map(\.key), "seed \(seed)")
            #expect(copy.engine.stats() == original.engine.stats(), "seed \(seed)")
            let continuedSame = copy.engine.makeSnapshot().compactText == original.engine.makeSnapshot().compactText
            #expect(continuedSame, "seed \(seed): the snapshots differ after the same operations")
        }
    }

    @Test func anLRUSnapshotHasNoPolicyFields() {
        let h = Self.harness(.lru)
        _ = Self.run(h, ["put n:1", "get n:1"])
        let text = h.engine.makeSnapshot().compactText
        for field in ["\"policy\"", "\"rank\"", "\"uses\"", "\"visited\"", "\"hand\""] { #expect(!text.contains(field)) }
        let sieve = Self.harness(.sieve, max: 1)
        _ = Self.run(sieve, ["put n:1", "get n:1", "put n:2"])
        let sieveText = sieve.engine.makeSnapshot().compactText
        #expect(sieveText.contains(#""policy":"sieve""#) && sieveText.contains(#""rank":"#))
    }

    @Test func badEvictionStateIsRefusedWithItsPath() throws {
        let h = Self.harness(.lfu)
        _ = Self.run(h, ["put n:1", "put n:2", "get n:1"])
        let good = h.engine.makeSnapshot().compactText
        let cases: [(String, String, String)] = [
            (#""policy":"lfu""#, #""policy":"mru""#, "namespaces.n.policy: expected one of lru, fifo, sieve, lfu"),
            (#""uses":1"#, #""uses":0"#, "uses: expected at least 1"),
            (#""policy":"lfu""#, #""policy":"lfu","hand":"n:1""#, "namespaces.n.hand: only a sieve namespace has a hand"),
            (#""policy":"lfu""#, #""policy":"fifo""#, "uses: only an entry of an lfu namespace has uses"),
            (#""policy":"lfu","#, "", "namespaces.n.next_rank: only a namespace outside lru has ranks"),
        ]
        for (from, to, message) in cases {
            let bad = good.replacingOccurrences(of: from, with: to)
            #expect(bad != good)
            let copy = Harness()
            copy.engine.put("x", 1)
            let before = copy.engine.makeSnapshot().compactText
            do {
                try copy.engine.restore(JSONValue(parsing: bad))
                Issue.record("accepted: \(to)")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
            #expect(copy.engine.makeSnapshot().compactText == before)
        }
    }
}
