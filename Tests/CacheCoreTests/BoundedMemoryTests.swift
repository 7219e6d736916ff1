@_spi(Engine) @testable import CacheCore
import Testing

/// What a long run keeps does not grow with its length when the cache is bounded: the expiry FIFOs
/// drop the records of entries gone or rewritten, and the server log keeps its last lines.
@Suite struct BoundedMemoryTests {
    @Test func anExpiryFIFOStaysWithinTwiceItsNamespacesEntries() {
        let h = Harness(["feed": Policy(ttl: 10 * minute, max: 10)])
        h.engine.checksInvariants = false
        var longest = 0
        for i in 0..<20_000 {
            // New keys evict, rewrites of old ones restamp, evictions remove: each leaves a dead record.
            h.engine.put("feed:\(i % 50)", .int(Int64(i)))
            if i % 7 == 0 { _ = h.engine.evict("feed:\((i * 3) % 50)") }
            longest = max(longest, h.engine.expiry.queues[Int(h.engine.namespaceSlot(forKey: "feed:1"))].records.count)
        }
        // Checked after each append, when the put's new entry (the 11th) is not yet evicted.
        #expect(longest <= 2 * 11 + 64 + 1, "the FIFO held \(longest) records for at most 10 entries")
        #expect(h.engine.invariantViolations() == [])
        // The live records still report their expiries.
        let count = h.engine.count
        h.advance(10 * minute)
        #expect(h.engine.stats().expirations == count)
    }

    @Test func theServerLogKeepsItsLastLinesAndCountsTheRest() throws {
        let h = Harness(["feed": Policy(ttl: minute)], latency: 0)
        h.engine.checksInvariants = false
        let total = ServerLog.limit + ServerLog.limit / 4 + 10
        for i in 0..<total {
            _ = h.get("feed:\(i)")
            h.advance(1)
        }
        let log = h.engine.requestLog
        #expect(log.count <= ServerLog.limit + ServerLog.limit / 4)
        #expect(h.engine.requestLogDropped + log.count == total, "every request is listed or counted as dropped")
        #expect(log.last?.keys == ["feed:\(total - 1)"])
        #expect(h.engine.invariantViolations() == [])
        // A snapshot keeps the count, and its restored copy goes on from it.
        let copy = Harness()
        try copy.engine.restore(h.engine.makeSnapshot())
        #expect(copy.engine.requestLogDropped == h.engine.requestLogDropped)
        #expect(copy.engine.makeSnapshot() == h.engine.makeSnapshot())
        h.engine.clearRequestLog()
        #expect(h.engine.requestLogDropped == 0)
    }
}
