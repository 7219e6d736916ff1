@_spi(Engine) @testable import CacheCore
import Testing

/// `compact` against the formulation it replaced (`packed(records(ns).filter(isLive))`, which
/// `replace` still uses): the same records, marks, bases, and `isLive` asked once a record, in order.
@Suite struct ExpiryCompactionDifferentialTests {
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func check(_ q: inout ExpiryQueues, keeping keep: (ExpiryRecord) -> Bool, _ label: String) {
        let before = q.records(0)
        var asked: [ExpiryRecord] = []
        var reference = ExpiryQueues(namespaceCount: 1)
        reference.replace(0, with: before.filter(keep))
        q.compact(0) { r in asked.append(r); return keep(r) }
        #expect(asked == before, "\(label): isLive's calls")
        #expect(q.records(0) == reference.records(0), "\(label): records")
        #expect(q.count(0) == reference.count(0), "\(label): records and marks")
        #expect(q.queues[0].headBase == reference.queues[0].headBase, "\(label): headBase")
        #expect(q.queues[0].tailBase == reference.queues[0].tailBase, "\(label): tailBase")
        #expect(q.invariantViolations().allSatisfy { !$0.contains("starts with the mark") }, "\(label): leading mark")
    }

    @Test func compactionMatchesTheFilteredPacking() {
        let unit = ExpiryQueues.baseUnit
        var rng = SplitMix(state: 40)
        for trial in 0..<300 {
            var q = ExpiryQueues(namespaceCount: 1)
            var seq = UInt64.random(in: 0...(1 << 34), using: &rng)
            let n = [0, 1, 2, 7, 300, 4096, 4097, 9000][trial % 8]
            var live = Set<UInt64>()
            for i in 0..<n {
                switch UInt64.random(in: 0..<20, using: &rng) {
                case 0: seq &+= UInt64(UInt32.max)              // the last offset a base holds, or one past
                case 1: seq &+= 2 * unit + UInt64.random(in: 0...2, using: &rng)
                case 2: seq &+= 1 << 33
                default: seq &+= UInt64.random(in: 1...3, using: &rng)
                }
                q.enqueue(ExpiryRecord(slot: Int32(i % 5000), seq: seq), in: 0)
                if Bool.random(using: &rng) { live.insert(seq) }
                // Now and then take heads (marks after them go too): iteration from inside a chunk.
                if n > 0 && UInt64.random(in: 0..<50, using: &rng) == 0 {
                    for _ in 0..<Int.random(in: 1...3000, using: &rng) where q.head(0) != nil { q.removeHead(0) }
                }
            }
            switch trial % 4 {
            case 0: check(&q, keeping: { live.contains($0.seq) }, "trial \(trial), random")
            case 1: check(&q, keeping: { _ in false }, "trial \(trial), all dead")
            case 2: check(&q, keeping: { _ in true }, "trial \(trial), all live")
            default:
                // The head and every record before the first mark dropped: the kept head takes a later base.
                let first = q.records(0).first?.seq
                check(&q, keeping: { $0.seq != first && live.contains($0.seq) }, "trial \(trial), head dropped")
            }
            // Compacting the compacted FIFO, then appending to it, still matches.
            check(&q, keeping: { $0.slot % 3 != 0 }, "trial \(trial), again")
            q.enqueue(ExpiryRecord(slot: 1, seq: seq &+ (1 << 32)), in: 0)
            check(&q, keeping: { _ in true }, "trial \(trial), after an append")
        }
    }

    /// A FIFO rebuilt with numbers going down as well as up (`replace`), compacted.
    @Test func compactionOfARebuiltFIFO() {
        let unit = ExpiryQueues.baseUnit
        var q = ExpiryQueues(namespaceCount: 1)
        q.replace(0, with: [ExpiryRecord(slot: 3, seq: 9 * unit), ExpiryRecord(slot: 1, seq: 2),
                            ExpiryRecord(slot: 2, seq: 9 * unit + 1), ExpiryRecord(slot: 0, seq: 1 << 35),
                            ExpiryRecord(slot: 4, seq: UInt64.max), ExpiryRecord(slot: 5, seq: 0)])
        check(&q, keeping: { $0.slot != 3 }, "rebuilt")
        check(&q, keeping: { $0.slot >= 4 }, "rebuilt, again")
    }
}
