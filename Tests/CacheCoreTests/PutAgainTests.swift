@_spi(Engine) @testable import CacheCore
import Testing
import TestSupport

/// A put of a cached key is one step (`EngineState.putAgainStep`) when the put has no tags, no id
/// index is built and the entry holds nothing out of line, and the engine's steps one by one
/// otherwise (`setValue`, `notePut`, `restamp`, `touch`). These run one script on two caches, one
/// with its id index built (so that every put again takes the steps one by one) and one without,
/// and check that they cannot be told apart: every key's details, the reports, the statistics, the
/// rows a store would write after each step, and the snapshot at the end.
@Suite struct PutAgainTests {
    static let day: Int64 = 24 * 60 * minute

    /// Namespaces whose times fit in an entry's record (`feed`, `page`) and one whose expiry does
    /// not (`long`, 60 days: the entry's expiry is kept out of line, so a put again there always
    /// takes the steps one by one).
    static func harness() -> Harness {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute, max: 6),
                         "page": Policy(ttl: 30_000, max: 4, eviction: .fifo),
                         "long": Policy(ttl: 60 * day)])
        h.engine.watch(.all)
        h.engine.startTrackingChanges(everything: true)
        return h
    }

    static let keys = ["feed:1", "feed:2", "feed:3", "page:1", "page:2", "long:1", "long:2", "k:1"]

    /// One step: mostly puts (again or new, some with tags), with invalidations, expiries set by
    /// hand or now, reads, time going by (expiries reported) and optimistic mutations (an entry
    /// with a log is put again through the steps one by one, on both caches).
    static func step(_ h: Harness, _ rng: inout SeededGenerator, _ n: Int) {
        let key = rng.pick(keys)
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<45:
            h.engine.put(key, ["n": .int(Int64(n)), "text": .string(String(repeating: "x", count: n % 40))])
        case 45..<52:
            h.engine.put(key, .int(Int64(n)), tags: rng.chance(50) ? ["t"] : ["t", "u"])
        case 52..<60:
            _ = h.engine.invalidate(.key(key))
        case 60..<66:
            _ = h.engine.expire(key, in: rng.chance(70) ? Int64.random(in: 1...20, using: &rng) * minute : nil)
        case 66..<76:
            h.advance(Int64.random(in: 1...12, using: &rng) * minute)
        case 76..<86:
            _ = try? h.engine.get(key, nowait: true)
        case 86..<92:
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
            + "rank=\(d.recencyRank) pending=\(d.pending.count) version=\(String(describing: d.version))"
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func aPutAgainInOneStepIsThePutAgainStepByStep(seed: UInt64) throws {
        let oneStep = Self.harness()
        let byStep = Self.harness()
        byStep.engine.entries.buildIDIndex()
        var rngs = (SeededGenerator(seed: seed), SeededGenerator(seed: seed))
        for n in 0..<400 {
            Self.step(oneStep, &rngs.0, n)
            Self.step(byStep, &rngs.1, n)
            #expect(oneStep.engine.entries.idIndex == nil, "nothing in the script reads the id index")
            for key in Self.keys {
                #expect(Self.describe(oneStep, key) == Self.describe(byStep, key), "step \(n)")
            }
            #expect(oneStep.engine.seq == byStep.engine.seq, "step \(n)")
            let (a, b) = (oneStep.engine.takeChanges(), byStep.engine.takeChanges())
            #expect(a.rows.entries == b.rows.entries, "step \(n): the rows a store writes")
            #expect(Array(a.rows.bytes[0 ..< a.rows.byteCount]) == Array(b.rows.bytes[0 ..< b.rows.byteCount]), "step \(n)")
            #expect(a.removedKeys == b.removedKeys && a.recencies.map(\.key) == b.recencies.map(\.key), "step \(n)")
        }
        #expect(oneStep.events.summary == byStep.events.summary)
        #expect(oneStep.engine.stats() == byStep.engine.stats())
        #expect(oneStep.engine.snapshotText(pretty: true) == byStep.engine.snapshotText(pretty: true))
        // The script did take both paths on the first cache: puts again of plain entries, and of
        // entries with tags, a log, an override or a 60-day expiry.
        #expect(oneStep.events.summary.filter { $0.hasPrefix("stored") }.count > 100)
    }

    /// A put again in one step leaves what the user sees after each of the things it clears: an
    /// invalidated entry is fresh again, an expiry set by hand gives way to the namespace's, an
    /// expiry already reported is reported again when the new one comes, and the times start
    /// from the put.
    @Test func aPutAgainClearsWhatThePutBeforeLeft() throws {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute)])
        h.engine.watch(.all)
        h.engine.put("feed:1", 1)
        _ = h.engine.invalidate(.key("feed:1"))
        h.advance(minute)
        h.engine.put("feed:1", 2)
        let first = try #require(h.engine.details(of: "feed:1"))
        #expect(first.state == .fresh && !first.invalidated && first.value == 2)
        #expect(first.storedAt == h.engine.now && first.staleAt == h.engine.now + 5 * minute
                && first.expiresAt == h.engine.now + 45 * minute)

        _ = h.engine.expire("feed:1", in: 2 * minute)
        h.engine.put("feed:1", 3)
        let second = try #require(h.engine.details(of: "feed:1"))
        #expect(!second.expiryOverridden && second.expiresAt == h.engine.now + 45 * minute)
        h.advance(3 * minute)
        #expect(h.engine.peek("feed:1").state == .fresh, "the override's item no longer expires it")

        h.advance(45 * minute)
        #expect(h.events.summary.filter { $0 == "expired feed:1" }.count == 1)
        h.engine.put("feed:1", 4)
        #expect(h.engine.peek("feed:1").state == .fresh)
        h.advance(46 * minute)
        #expect(h.events.summary.filter { $0 == "expired feed:1" }.count == 2, "the new expiry is reported too")
    }
}
