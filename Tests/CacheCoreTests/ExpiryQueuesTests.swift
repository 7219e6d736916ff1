@_spi(Engine) @testable import CacheCore
import Testing

/// The expiry FIFOs' 8-byte records: each record's sequence number comes back exactly, across
/// the marks that set a new base when numbers move on by more than 32 bits hold.
@Suite struct ExpiryQueuesTests {
    @Test func aRecordTakesEightBytes() {
        #expect(MemoryLayout<ExpiryQueues.Packed>.stride == 8)
    }

    /// Numbers from 0 to far past 2^32, some far apart, in order: each comes back as it went in,
    /// through the head, a compaction and a list of the records.
    @Test func sequenceNumbersComeBackExactlyAcrossBases() {
        let unit = ExpiryQueues.baseUnit
        let seqs: [UInt64] = [0, 1, 5, 3 * unit - 1, 3 * unit, 5 * unit + 7, 5 * unit + 8, 40 * unit, 40 * unit + UInt64(UInt32.max),
                              1 << 40, (1 << 40) + 1, UInt64.max / 2, UInt64.max - 1, UInt64.max]
        var q = ExpiryQueues(namespaceCount: 2)
        for (i, seq) in seqs.enumerated() { q.enqueue(ExpiryRecord(slot: Int32(i), seq: seq), in: 1) }
        let expected = seqs.enumerated().map { ExpiryRecord(slot: Int32($0.offset), seq: $0.element) }
        #expect(q.records(1) == expected)
        #expect(q.records(0).isEmpty)
        // Some marks were needed, and none leads.
        #expect(q.count(1) > seqs.count)
        #expect(q.invariantViolations().contains { $0.contains("starts with the mark") } == false)

        // Every other record kept by a compaction, the others still exact.
        q.compact(1) { $0.slot % 2 == 0 }
        #expect(q.records(1) == expected.filter { $0.slot % 2 == 0 })

        // Taken from the head one by one, each as it went in.
        var taken: [ExpiryRecord] = []
        while let head = q.head(1) {
            taken.append(head)
            q.removeHead(1)
        }
        #expect(taken == expected.filter { $0.slot % 2 == 0 })
        #expect(q.count(1) == 0)
    }

    /// Records across several chunks, taken from the head and appended in turn: each comes back
    /// in order, the FIFO emptied and filled again.
    @Test func recordsComeBackInOrderAcrossChunks() {
        var q = ExpiryQueues(namespaceCount: 1)
        let n = 3 * ExpiryQueues.Chunks.chunkSize + 5
        var next: UInt64 = 0, expected: UInt64 = 0
        for round in 0..<3 {
            let before = q.count(0)
            for _ in 0..<n { q.enqueue(ExpiryRecord(slot: Int32(next % 1000), seq: next), in: 0); next += 1 }
            #expect(q.count(0) == before + n)
            // Take all but a few (all, in the last round), then go on appending.
            let keep = round == 2 ? 0 : 7
            while q.count(0) > keep {
                #expect(q.head(0) == ExpiryRecord(slot: Int32(expected % 1000), seq: expected))
                q.removeHead(0)
                expected += 1
            }
            #expect(q.records(0) == (expected..<next).map { ExpiryRecord(slot: Int32($0 % 1000), seq: $0) })
        }
        #expect(q.head(0) == nil)
        q.enqueue(ExpiryRecord(slot: 1, seq: next), in: 0)
        #expect(q.records(0) == [ExpiryRecord(slot: 1, seq: next)])
    }

    /// A FIFO rebuilt in (time, seq) order may hold numbers that go down as well as up: each
    /// still comes back as it went in, and a head dropped only when its number is the one given.
    @Test func aRebuiltFIFOKeepsNumbersInAnyOrder() {
        let unit = ExpiryQueues.baseUnit
        let records = [ExpiryRecord(slot: 3, seq: 9 * unit), ExpiryRecord(slot: 1, seq: 2),
                       ExpiryRecord(slot: 2, seq: 9 * unit + 1), ExpiryRecord(slot: 0, seq: 1 << 35)]
        var q = ExpiryQueues(namespaceCount: 1)
        q.replace(0, with: records)
        #expect(q.records(0) == records)
        q.dropHead(0, ifOf: 3, seq: 9 * unit + UInt64(1) << 32)
        #expect(q.head(0) == records[0])
        q.dropHead(0, ifOf: 3, seq: 9 * unit)
        #expect(q.head(0) == records[1])
        q.removeHead(0)
        #expect(q.head(0) == records[2])
        q.enqueue(ExpiryRecord(slot: 7, seq: 3), in: 0)
        #expect(q.records(0) == Array(records[2...]) + [ExpiryRecord(slot: 7, seq: 3)])
    }

    /// The engine's FIFOs across a jump of the sequence numbers past 32 bits (a snapshot restored
    /// with its `seq` at 2^40): the records made before and after it need a mark between them,
    /// and the expiries come out as they do without the jump, a record made dead by a new store
    /// included. (Each harness checks every invariant after each operation.)
    @Test func expiriesComeOutTheSameAcrossAJumpOfSequenceNumbers() throws {
        func run(seq: Int64?) throws -> [String] {
            let h = Harness(["n": Policy(ttl: minute)])
            h.engine.watch(.namespace("n"))
            h.engine.put("n:1", 1)
            h.advance(10)
            h.engine.put("n:2", 2)
            guard case .object(var top) = h.engine.makeSnapshot() else { Issue.record("not a snapshot"); return [] }
            if let seq { top["seq"] = .int(seq) }
            let copy = Harness()
            try copy.engine.restore(.object(top)) { _ in 0 }
            copy.advance(10)
            copy.engine.put("n:1", 10)
            copy.advance(10)
            copy.engine.put("n:3", 3)
            copy.advance(2 * minute)
            return copy.events.summary.filter { $0.hasPrefix("expired") }
        }
        let plain = try run(seq: nil)
        #expect(plain == ["expired n:2", "expired n:1", "expired n:3"])
        #expect(try run(seq: 1 << 40) == plain)
    }
}
