@_spi(Engine) @testable import CacheCore
import Testing
import TestSupport

/// A put of a cached key is one step (`EngineState.putAgainStep`) when the put has no tags, no id
/// index is built and the entry holds nothing out of line, and the engine's steps one by one
/// otherwise (`setValue`, `notePut`, `restamp`, `touch`). These run one script on two caches, one
/// with its id index built (so that every put again takes the steps one by one) and one without,
/// and check that they cannot be told apart: every key's details, the reports, the statistics, the
/// rows and recency moves a store would write after each step, the state, and the snapshot.
@Suite struct PutAgainTests {
    static let day: Int64 = 24 * 60 * minute

    /// Namespaces of each eviction policy, each with more keys in the script than its `max` (so
    /// that the recency a put again sets decides victims), one whose expiry does not fit in an
    /// entry's record (`long`, 60 days: kept out of line, so a put again there takes the steps one
    /// by one), and one of `max` 0. The server holds values for some keys, so reads fetch.
    static func harness() -> Harness {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute, max: 5),
                         "page": Policy(ttl: 30_000, max: 3, eviction: .fifo),
                         "sieve": Policy(max: 2, eviction: .sieve),
                         "lfu": Policy(max: 2, eviction: .lfu),
                         "long": Policy(ttl: 60 * day),
                         "zero": Policy(max: 0)])
        for key in ["feed:1", "feed:4", "page:2", "sieve:1", "lfu:2", "long:1"] {
            h.server(key, ["n": .int(0), "from": .string("server")])
        }
        h.engine.watch(.all)
        h.engine.startTrackingChanges(everything: true)
        return h
    }

    static let keys = (1...8).map { "feed:\($0)" } + (1...5).map { "page:\($0)" } + (1...4).map { "sieve:\($0)" }
        + (1...4).map { "lfu:\($0)" } + ["long:1", "long:2", "zero:1", "k:1"]

    /// One step: mostly puts (again or new, some with tags), with invalidations, expiries set by
    /// hand or now, reads (which fetch, or join a fetch in flight), time going by (expiries
    /// reported, answers arriving) and optimistic mutations (an entry with a log is put again
    /// through the steps one by one, on both caches).
    static func step(_ h: Harness, _ rng: inout SeededGenerator, _ n: Int) {
        let key = rng.pick(keys)
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<45:
            h.engine.put(key, ["n": .int(Int64(n)), "text": .string(String(repeating: "x", count: n % 40))])
        case 45..<50:
            h.engine.put(key, .int(Int64(n)), tags: rng.chance(50) ? ["t"] : ["t", "u"])
        case 50..<56:
            _ = h.engine.invalidate(.key(key))
        case 56..<62:
            _ = h.engine.expire(key, in: rng.chance(50) ? Int64.random(in: 1...20, using: &rng) * minute : nil)
        case 62..<70:
            h.advance(rng.chance(50) ? 50 : Int64.random(in: 1...12, using: &rng) * minute)
        case 70..<82:
            _ = try? h.engine.get(key, nowait: rng.chance(50))
        case 82..<88:
            _ = try? h.engine.mutate(key, patch: patch(#"{"n": {"$inc": 1}}"#))
        default:
            _ = h.engine.evict(key)
        }
    }

    /// What a user can tell of a key: its details, every field.
    static func describe(_ h: Harness, _ key: String) -> String {
        guard let d = h.engine.details(of: key) else { return "\(key): absent" }
        return "\(key): \(d.state) \(d.value.compactText) tags=\(d.tags) stored=\(d.storedAt) stale=\(String(describing: d.staleAt)) "
            + "expires=\(d.expiresAt) invalidated=\(d.invalidated) overridden=\(d.expiryOverridden) "
            + "rank=\(d.recencyRank) pending=\(d.pending.count) fetch=\(String(describing: d.fetchInFlight)) "
            + "version=\(String(describing: d.version))"
    }

    /// Whether a put of `key` with `tags` on `h` takes the one step: the key is cached, its entry
    /// holds nothing out of line, the put has no tags (and no id index is built).
    static func takesOneStep(_ h: Harness, _ key: String, tags: [String]) -> Bool {
        guard tags.isEmpty, h.engine.entries.idIndex == nil, let slot = h.engine.entrySlot(forKey: key) else { return false }
        return h.engine.slots[Int(slot)].hasNothingOutOfLine
    }

    /// Compares the two caches as a user and a store see them.
    static func expectSame(_ a: Harness, _ b: Harness, _ what: Comment) {
        for key in keys {
            #expect(describe(a, key) == describe(b, key), what)
        }
        #expect(a.engine.seq == b.engine.seq, what)
        let (x, y) = (a.engine.takeChanges(), b.engine.takeChanges())
        #expect(x.rows.entries == y.rows.entries, what)
        #expect(Array(x.rows.bytes[0 ..< x.rows.byteCount]) == Array(y.rows.bytes[0 ..< y.rows.byteCount]), what)
        #expect(x.removedKeys == y.removedKeys && x.recencies == y.recencies && x.state == y.state, what)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func aPutAgainInOneStepIsThePutAgainStepByStep(seed: UInt64) throws {
        let oneStep = Self.harness()
        let byStep = Self.harness()
        byStep.engine.entries.buildIDIndex()
        var rngs = (SeededGenerator(seed: seed), SeededGenerator(seed: seed))
        var oneSteps = 0, stepsByOne = 0
        for n in 0..<500 {
            // Which path a put again on the first cache is about to take (the script's own
            // generator copied, so that it draws what the step will draw).
            var peek = rngs.0
            let key = peek.pick(Self.keys)
            let roll = Int.random(in: 0..<100, using: &peek)
            if roll < 50 && oneStep.engine.entrySlot(forKey: key) != nil {
                let tags = roll < 45 ? [] : ["t"]
                if Self.takesOneStep(oneStep, key, tags: tags) { oneSteps += 1 } else { stepsByOne += 1 }
            }
            Self.step(oneStep, &rngs.0, n)
            Self.step(byStep, &rngs.1, n)
            #expect(oneStep.engine.entries.idIndex == nil, "nothing in the script reads the id index")
            Self.expectSame(oneStep, byStep, "step \(n)")
        }
        #expect(oneStep.events.summary == byStep.events.summary)
        #expect(oneStep.engine.stats() == byStep.engine.stats())
        #expect(oneStep.engine.snapshotText(pretty: true) == byStep.engine.snapshotText(pretty: true))
        // Both paths were taken on the first cache, each many times.
        #expect(oneSteps > 60 && stepsByOne > 20, "one step: \(oneSteps), step by step: \(stepsByOne)")
        #expect(oneStep.engine.stats().evictions > 20)
    }

    /// The cases where the one step declines, each on its own: a put with tags, an entry with
    /// tags, with a log, with an `expire in=` item, and one whose new times do not fit in its
    /// record (60 days of ttl after an expiry set now). The id-index cache takes the steps one by
    /// one every time; the two must agree after each put.
    @Test func whereTheOneStepDeclinesTheStepsByOneGiveTheSame() throws {
        let oneStep = Self.harness()
        let byStep = Self.harness()
        byStep.engine.entries.buildIDIndex()
        func both(_ body: (Harness) throws -> Void) rethrows {
            try body(oneStep)
            try body(byStep)
        }
        both { $0.engine.put("long:1", 1) }
        #expect(!Self.takesOneStep(oneStep, "long:1", tags: []), "an expiry 60 days on is apart")
        both { _ = $0.engine.expire("long:1") }
        // Expired now, the entry holds nothing apart; the put's expiry, 60 days on, does not fit.
        #expect(Self.takesOneStep(oneStep, "long:1", tags: []))
        both { $0.engine.put("long:1", 2) }
        #expect(!Self.takesOneStep(oneStep, "long:1", tags: []), "the put took its expiry apart again")
        #expect(oneStep.engine.details(of: "long:1")?.expiresAt == oneStep.engine.now + 60 * Self.day)
        Self.expectSame(oneStep, byStep, "60 days after an expiry set now")
        both { $0.engine.put("feed:1", 1, tags: ["t"]) }
        #expect(!Self.takesOneStep(oneStep, "feed:1", tags: []), "an entry with tags keeps them apart")
        both { $0.engine.put("feed:1", 2) }
        Self.expectSame(oneStep, byStep, "an entry with tags, put again without")
        both { $0.engine.put("feed:2", 1) }
        #expect(Self.takesOneStep(oneStep, "feed:2", tags: []))
        both { $0.engine.put("feed:2", 2, tags: ["u"]) }
        Self.expectSame(oneStep, byStep, "a put with tags")
        both { $0.engine.put("feed:3", ["n": 1]) }
        try both { _ = try $0.engine.mutate("feed:3", patch: patch(#"{"n": {"$inc": 1}}"#)) }
        #expect(!Self.takesOneStep(oneStep, "feed:3", tags: []), "a pending mutation's log is apart")
        both { $0.engine.put("feed:3", ["n": 5]) }
        Self.expectSame(oneStep, byStep, "an entry with a pending mutation")
        both { $0.advance(minute) }
        Self.expectSame(oneStep, byStep, "the mutation's answer")
        both { $0.engine.put("feed:5", 1) }
        both { _ = $0.engine.expire("feed:5", in: 2 * minute) }
        #expect(!Self.takesOneStep(oneStep, "feed:5", tags: []), "an expire in= item is apart")
        both { $0.engine.put("feed:5", 2) }
        Self.expectSame(oneStep, byStep, "an entry with an expire in= item")
        both { $0.advance(3 * minute) }
        Self.expectSame(oneStep, byStep, "the expire in= item's time")
        #expect(oneStep.events.summary == byStep.events.summary)
    }

    /// A put again in one step leaves what the user sees after each of the things it clears, each
    /// on a key of its own (whose entry holds nothing out of line before the put): an invalidated
    /// entry is fresh again; an expiry set now gives way to the namespace's; an expiry already
    /// reported is reported again when the new one comes; the times start from the put.
    @Test func aPutAgainClearsWhatThePutBeforeLeft() throws {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute)])
        h.engine.watch(.all)
        h.engine.put("feed:1", 1)
        _ = h.engine.invalidate(.key("feed:1"))
        h.advance(minute)
        #expect(Self.takesOneStep(h, "feed:1", tags: []))
        h.engine.put("feed:1", 2)
        let first = try #require(h.engine.details(of: "feed:1"))
        #expect(first.state == .fresh && !first.invalidated && first.value == 2)
        #expect(first.storedAt == h.engine.now && first.staleAt == h.engine.now + 5 * minute
                && first.expiresAt == h.engine.now + 45 * minute)

        h.engine.put("feed:2", 1)
        _ = h.engine.expire("feed:2")
        #expect(h.engine.peek("feed:2").state == .expired)
        #expect(Self.takesOneStep(h, "feed:2", tags: []))
        h.engine.put("feed:2", 2)
        let second = try #require(h.engine.details(of: "feed:2"))
        #expect(second.state == .fresh && !second.expiryOverridden && second.expiresAt == h.engine.now + 45 * minute)

        h.engine.put("feed:3", 1)
        h.advance(46 * minute)
        #expect(h.events.summary.filter { $0 == "expired feed:3" }.count == 1)
        #expect(Self.takesOneStep(h, "feed:3", tags: []))
        h.engine.put("feed:3", 2)
        #expect(h.engine.peek("feed:3").state == .fresh)
        h.advance(44 * minute)
        #expect(h.events.summary.filter { $0 == "expired feed:3" }.count == 1)
        h.advance(2 * minute)
        #expect(h.events.summary.filter { $0 == "expired feed:3" }.count == 2, "the new expiry is reported too")
    }
}
