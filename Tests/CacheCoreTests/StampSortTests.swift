@testable import CacheCore
import Testing

/// The sort that puts a store's rows, read in the table's order, into recency order by their
/// stamps (`Snapshot.sortByStamps`).
@Suite struct StampSortTests {
    /// Slots in the order of their stamps, as a plain sort gives them.
    static func expected(_ stamps: [UInt64]) -> [Int] { stamps.indices.sorted { stamps[$0] < stamps[$1] } }

    /// Stamps spanning one pass of the radix sort, two, three, and just under 2^32, in a
    /// shuffled order and nearly in order (one row moved to the end, as a read does): each
    /// becomes `(stamp - least) << 32 | slot`, in recency order.
    @Test(arguments: [UInt64(1_000), UInt64(1) << 11, UInt64(1) << 22 + 5, UInt64(1) << 32 - 1] as [UInt64])
    func sortsStampsOfEverySpan(span: UInt64) {
        var generator = SystemRandomNumberGenerator()
        let base = UInt64.random(in: 0...(1 << 40), using: &generator)
        var stamps = Set<UInt64>([base, base + span])
        while stamps.count < Int(min(span, 3_000)) { stamps.insert(base + UInt64.random(in: 0...span, using: &generator)) }
        let shuffled = Array(stamps).shuffled(using: &generator)
        var nearlySorted = Array(stamps).sorted()
        nearlySorted.append(nearlySorted.remove(at: 100))
        for input in [shuffled, nearlySorted] {
            var sorted = input
            #expect(Snapshot.sortByStamps(&sorted) == base)
            #expect(sorted.map { Int($0 & 0xFFFF_FFFF) } == Self.expected(input))
            #expect(sorted.map { base + $0 >> 32 } == input.sorted())
        }
    }

    /// Two rows of one stamp, or stamps spanning 2^32 or more, are left to rows read in recency
    /// order (nil); a single row is in order.
    @Test func refusesSharedStampsAndWideSpans() {
        var shared: [UInt64] = [5, 9, 7, 9, 1]
        #expect(Snapshot.sortByStamps(&shared) == nil)
        var wide: [UInt64] = [1 << 32, 0, 3]
        #expect(Snapshot.sortByStamps(&wide) == nil)
        var justUnder: [UInt64] = [1 << 32 - 1, 0, 3]
        #expect(Snapshot.sortByStamps(&justUnder) == 0)
        #expect(justUnder.map { $0 & 0xFFFF_FFFF } == [1, 2, 0])
        var one: [UInt64] = [42]
        #expect(Snapshot.sortByStamps(&one) == 42)
        #expect(one == [0])
    }
}
