@_spi(Engine) import CacheCore
import Testing

/// A fresh hit's count: its namespace's counter is added to in runs (`Statistics.countHit`), so
/// every way of reading the counters must see each hit in its namespace and in total.
@Suite struct HitCountTests {
    /// Hits of namespaces taken in turn, in runs of different lengths, read back per namespace,
    /// by name, in total, in a snapshot and after a reset.
    @Test func hitsOfNamespacesInTurnCountInEach() throws {
        let h = Harness(["a": Policy(ttl: minute), "b": Policy(ttl: minute)])
        // Off, as in the shell: the check after each operation reads the counters, which adds
        // the hits held to their namespace, so with it on no run of hits would ever be held.
        h.engine.checksInvariants = false
        defer { #expect(h.engine.invariantViolations().isEmpty) }
        h.engine.put("a:1", 1)
        h.engine.put("b:1", 2)
        h.engine.put("other", 3)
        let reads = ["a:1", "a:1", "b:1", "a:1", "other", "other", "other", "b:1", "b:1", "a:1"]
        var expected: [String: Int] = [:]
        for (i, key) in reads.enumerated() {
            _ = h.get(key)
            let ns = key.contains(":") ? String(key.prefix { $0 != ":" }) : "default"
            expected[ns, default: 0] += 1
            // Read between hits, as well as after them all.
            if i % 3 == 0 {
                #expect(h.engine.stats(namespace: ns).hits == expected[ns])
            }
        }
        #expect(h.engine.stats(namespace: "a").hits == 4)
        #expect(h.engine.stats(namespace: "b").hits == 3)
        #expect(h.engine.stats(namespace: "default").hits == 3)
        #expect(h.engine.stats().hits == reads.count)
        let byName = Dictionary(uniqueKeysWithValues: h.engine.statsByNamespace().map { ($0.name, $0.stats.hits) })
        #expect(byName == ["a": 4, "b": 3, "default": 3])

        // A snapshot taken while hits are held holds every one; restored, the counts go on.
        _ = h.get("a:1")
        _ = h.get("a:1")
        let snapshot = h.engine.makeSnapshot()
        let copy = Harness()
        copy.engine.checksInvariants = false
        try copy.engine.restore(snapshot) { _ in 7 }
        #expect(copy.engine.stats(namespace: "a").hits == 6)
        #expect(copy.engine.stats(namespace: "b").hits == 3)
        #expect(copy.engine.stats() == h.engine.stats())
        _ = copy.get("b:1")
        #expect(copy.engine.stats(namespace: "b").hits == 4 && copy.engine.stats().hits == reads.count + 3)

        // A reset drops the hits held, not yet added to their namespace, too.
        _ = h.get("a:1")
        _ = h.get("a:1")
        h.engine.resetStats()
        #expect(h.engine.stats() == Stats())
        #expect(h.engine.stats(namespace: "a") == Stats())
        _ = h.get("a:1")
        #expect(h.engine.stats(namespace: "a").hits == 1 && h.engine.stats().hits == 1)
        #expect(h.engine.stats(namespace: "b").hits == 0)
    }
}
