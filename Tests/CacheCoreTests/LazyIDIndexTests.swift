@_spi(Engine) @testable import CacheCore
import Testing
import TestSupport

/// The entity id index is built by its first read (an entity event or mutation) and kept in step
/// from then on: an entity event finds exactly the entries whose values embed the id, whether the
/// index was built at the start, on first use, or after a restore.
@Suite struct LazyIDIndexTests {
    /// The keys of the live entries whose value embeds entity `id`, sorted: what an entity event
    /// targets, found by reading every value (no index).
    static func reference(_ h: Harness, _ id: String) -> [String] {
        var keys: [String] = []
        for entry in h.engine.slots where entry.live {
            var ids = Set<String>()
            entry.value.collectEntityIDs(idField: h.engine.idField, into: &ids)
            if ids.contains(id) { keys.append(entry.key) }
        }
        return keys.sorted()
    }

    /// Every live entry's key and value text, sorted by key.
    static func contents(_ h: Harness) -> [String] {
        h.engine.slots.filter(\.live).map { "\($0.key)=\($0.value.compactText)" }.sorted()
    }

    static func harness() -> Harness {
        Harness(["feed": Policy(max: 8), "page": Policy(max: 6, eviction: .fifo)])
    }

    /// A value embedding up to three ids of a small pool (as integers, as their text, or as a
    /// text that only reads like one), nested in objects and arrays, or no id at all.
    static func value(_ rng: inout SeededGenerator, step: Int) -> JSONValue {
        func id() -> JSONValue {
            let n = Int.random(in: 0..<12, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0, 1: return .int(Int64(n))
            case 2: return .string(String(n))
            default: return .string("0\(n)")
            }
        }
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return ["n": .int(Int64(step))]
        case 1: return ["id": id(), "n": .int(Int64(step))]
        case 2: return .array([["id": id()], ["id": id(), "x": ["id": id()]]])
        case 3: return ["posts": .array([["id": id(), "likes": 0]]), "author": ["id": id()]]
        default: return .array([["id": id()], "plain", .int(Int64(step))])
        }
    }

    /// One step of a script that never reads the id index: a put (new key or replace), an
    /// eviction, or a namespace cleared.
    static func write(_ h: Harness, _ rng: inout SeededGenerator, step: Int) {
        let key = "\(rng.pick(["feed", "page", "default"])):\(Int.random(in: 0..<14, using: &rng))"
        switch Int.random(in: 0..<20, using: &rng) {
        case 0..<15: h.engine.put(key, value(&rng, step: step))
        case 15..<19: h.engine.evict(key)
        default: h.engine.clear(namespace: rng.pick(["feed", "page"]))
        }
    }

    /// The same script on two caches, one whose index is built at the start (and again at once
    /// after each restore), one whose index waits for its first read: hundreds of puts,
    /// replaces, evictions (LRU and FIFO) and a restore before any entity event, then writes
    /// interleaved with entity events and mutations. Each event hits exactly the entries whose
    /// values embed the id, on both, and the two end with the same values. The harness checks
    /// every invariant after each operation, on both (built and not).
    @Test(arguments: [UInt64(1), 2, 3])
    func anEntityEventHitsWhatTheValuesEmbedWhenTheIndexIsBuiltOrNot(seed: UInt64) throws {
        let eager = Self.harness()
        let lazy = Self.harness()
        eager.engine.entries.buildIDIndex()
        var rngs = (SeededGenerator(seed: seed), SeededGenerator(seed: seed))
        for step in 0..<300 {
            Self.write(eager, &rngs.0, step: step)
            Self.write(lazy, &rngs.1, step: step)
        }
        #expect(eager.engine.entries.idIndex != nil)
        #expect(lazy.engine.entries.idIndex == nil, "no write reads the index")
        #expect(lazy.engine.invariantViolations() == [])
        #expect(lazy.engine.entries.idIndex == nil, "the invariant check builds none")

        for h in [eager, lazy] { try h.engine.restore(h.engine.makeSnapshot()) }
        #expect(eager.engine.entries.idIndex == nil && lazy.engine.entries.idIndex == nil, "a restore starts a new table")
        eager.engine.entries.buildIDIndex()

        var events = 0
        for step in 300..<800 {
            let r = Int.random(in: 0..<10, using: &rngs.0)
            _ = Int.random(in: 0..<10, using: &rngs.1)
            guard r < 3 else {
                Self.write(eager, &rngs.0, step: step)
                Self.write(lazy, &rngs.1, step: step)
                continue
            }
            let n = Int.random(in: 0..<12, using: &rngs.0)
            _ = Int.random(in: 0..<12, using: &rngs.1)
            let id = r == 2 ? "0\(n)" : String(n)
            let expected = Self.reference(lazy, id)
            #expect(Self.reference(eager, id) == expected, "step \(step)")
            let p = patch(#"{"seen":\#(step)}"#)
            if r == 1 && !expected.isEmpty {
                #expect(try eager.engine.mutate(entity: id, patch: p) == expected, "step \(step)")
                #expect(try lazy.engine.mutate(entity: id, patch: p) == expected, "step \(step)")
            } else {
                #expect(try eager.engine.event(entity: id, patch: p) == expected, "step \(step)")
                #expect(try lazy.engine.event(entity: id, patch: p) == expected, "step \(step)")
            }
            events += expected.isEmpty ? 0 : 1
            #expect(lazy.engine.entries.idIndex != nil, "the first read built it")
        }
        #expect(events > 50)
        #expect(Self.contents(eager) == Self.contents(lazy))
        #expect(eager.engine.invariantViolations() == [] && lazy.engine.invariantViolations() == [])
    }

    /// Once the first entity event has built the index, every later put, replace and eviction
    /// keeps it in step: an index built but then left alone would miss `b` and `c` and still
    /// list `a`. (The invariant checks, which would stop the process first, are off: the events'
    /// own answers are what is checked here.)
    @Test func theIndexIsKeptInStepAfterItsFirstRead() throws {
        let h = Harness()
        h.engine.checksInvariants = false
        h.engine.put("a", ["id": 1])
        #expect(try h.engine.event(entity: "1", patch: patch(#"{"n":1}"#)) == ["a"])
        #expect(h.engine.entries.idIndex != nil)
        h.engine.put("b", [["id": 1], ["id": 2]])
        h.engine.put("c", ["x": ["id": "1"]])
        #expect(try h.engine.event(entity: "1", patch: patch(#"{"n":2}"#)) == ["a", "b", "c"])
        h.engine.evict("a")
        h.engine.put("c", ["id": 2])
        #expect(try h.engine.event(entity: "1", patch: patch(#"{"n":3}"#)) == ["b"])
        #expect(try h.engine.mutate(entity: "2", patch: patch(#"{"m":1}"#)) == ["b", "c"])
        #expect(h.engine.peek("b").value == [["id": 1, "n": 3], ["id": 2, "m": 1]])
        h.engine.put("b", "no ids")
        #expect(try h.engine.event(entity: "1", patch: patch(#"{"n":4}"#)) == [])
        #expect(throws: CacheError.self) { try h.engine.mutate(entity: "1", patch: patch(#"{"n":5}"#)) }
    }

    /// What reads the index builds it (an event, a mutation, the check an event of several
    /// clients makes first); what only writes, or starts a new table, leaves it unbuilt;
    /// changing the id field drops it, and the next read builds it on the new field.
    @Test func onlyAReadBuildsTheIndex() throws {
        let h = Harness()
        h.engine.put("a", ["id": 1, "uid": 7])
        h.engine.put("a", ["id": 1, "uid": 8])
        h.engine.put("b", ["id": 1])
        h.engine.evict("b")
        #expect(h.engine.entries.idIndex == nil)
        try h.engine.checkEvent(entity: "1", patch: patch(#"{"n":1}"#))
        #expect(h.engine.entries.idIndex?.count == 1)

        try h.engine.restore(h.engine.makeSnapshot())
        #expect(h.engine.entries.idIndex == nil)
        #expect(try h.engine.mutate(entity: "1", patch: patch(#"{"n":1}"#)) == ["a"])
        #expect(h.engine.entries.idIndex != nil)

        _ = try h.engine.configure(CacheConfiguration(idField: "uid"))
        #expect(h.engine.entries.idIndex == nil, "an index on the old field is dropped")
        #expect(try h.engine.event(entity: "1", patch: patch(#"{"n":2}"#)) == [])
        #expect(try h.engine.event(entity: "8", patch: patch(#"{"n":2}"#)) == ["a"])
        #expect(h.engine.invariantViolations() == [])
    }
}
