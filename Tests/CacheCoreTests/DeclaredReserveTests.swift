@_spi(Engine) @testable import CacheCore
import Testing

/// Namespaces with a `max` reserve room for that many entries and one more in the engine's slots
/// (`CacheEngine.reserveDeclaredEntries`), so that a bounded cache fills its slots without
/// moving them; the room reserved is capped, whatever `max` says, grows twofold at least when it
/// must move entries, and entries already stored stay as they were.
@Suite struct DeclaredReserveTests {
    static let hour: Int64 = 3_600_000

    static func engine() -> CacheEngine {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        return engine
    }

    static func define(_ engine: CacheEngine, _ name: String, max: Int?, eviction: Eviction = .lru) {
        _ = try! engine.defineNamespace(name, PolicyChange(ttl: hour, max: .some(max), eviction: eviction))
    }

    /// Fills namespaces of 10 and 5 entries, then puts 30 more keys that each evict, and checks
    /// that the slots never moved.
    static func fillsWithoutMoving(_ engine: CacheEngine, eviction: Eviction) {
        #expect(engine.entries.slots.capacity == 0)
        define(engine, "a", max: 10, eviction: eviction)
        define(engine, "b", max: 5, eviction: eviction)
        let room = engine.entries.slots.capacity
        #expect(room >= 16)
        for i in 0..<10 { engine.put("a:\(i)", .int(Int64(i))) }
        for i in 0..<5 { engine.put("b:\(i)", .int(Int64(i))) }
        #expect(engine.count == 15)
        #expect(engine.entries.slots.capacity == room)
        for i in 10..<40 { engine.put("a:\(i)", .int(Int64(i))) }
        #expect(engine.count == 15)
        #expect(engine.stats().evictions == 30)
        #expect(engine.entries.slots.capacity == room)
    }

    @Test func boundedNamespacesFillTheirSlotsWithoutMovingThem() {
        Self.fillsWithoutMoving(Self.engine(), eviction: .lru)
    }

    /// A put that stores its entry before it evicts (every put when all changes are reported, as
    /// in the shell; FIFO, SIEVE and LFU namespaces) needs the one slot more.
    @Test(arguments: [Eviction.lru, .fifo, .sieve, .lfu])
    func aPutThatStoresBeforeItEvictsHasItsSlotToo(eviction: Eviction) {
        let engine = Self.engine()
        engine.reportsAllChanges = true
        Self.fillsWithoutMoving(engine, eviction: eviction)
    }

    @Test func theRoomReservedIsCappedWhateverMaxSays() {
        let engine = Self.engine()
        Self.define(engine, "huge", max: Int.max)
        Self.define(engine, "big", max: 1 << 40)
        let limit = CacheEngine.declaredEntriesReserveLimit
        // Room that never asks for huge pages, whose first write would take 2 MiB at once.
        #expect((limit + 1) * MemoryLayout<Entry>.stride < HugePages.threshold)
        #expect(engine.entries.slots.capacity > limit)
        #expect(engine.entries.slots.capacity < 2 * limit)
        #expect(engine.namespaces.maxTotal == 2 * limit)
        engine.put("huge:1", .int(1))
        engine.put("big:1", .int(2))
        #expect(engine.peek("huge:1").value == .int(1))
        #expect(engine.peek("big:1").value == .int(2))
    }

    @Test func theTotalFollowsEveryChangeOfPolicy() throws {
        let engine = Self.engine()
        Self.define(engine, "a", max: 10)
        Self.define(engine, "b", max: 5)
        #expect(engine.namespaces.maxTotal == 15)
        Self.define(engine, "a", max: 3)
        #expect(engine.namespaces.maxTotal == 8)
        Self.define(engine, "b", max: nil)
        #expect(engine.namespaces.maxTotal == 3)
        engine.put("c:1", .int(1))  // a namespace made by a key: no max
        #expect(engine.namespaces.maxTotal == 3)
        _ = try engine.configure(CacheConfiguration(namespaces: ["b": Policy(ttl: Self.hour, max: 300),
                                                                  "c": Policy(ttl: Self.hour, max: 7)]))
        // `a`, not named, returns to the default policy (no max).
        #expect(engine.namespaces.maxTotal == 307)
        #expect(engine.entries.slots.capacity >= 308)
    }

    @Test func roomRaisedALittleAtATimeMovesTheEntriesRarely() {
        // 300 namespaces of one entry each, defined and filled in turn: the room must grow while
        // entries are held, each time by half again at least, not by one.
        let engine = Self.engine()
        var capacities: Set<Int> = []
        for i in 0..<300 {
            Self.define(engine, "n\(i)", max: 1)
            engine.put("n\(i):a", .int(Int64(i)))
            capacities.insert(engine.entries.slots.capacity)
        }
        #expect(engine.count == 300)
        #expect(capacities.count <= 10, "\(capacities.sorted())")
    }

    @Test func aRestoredSnapshotReservesAsNsDoes() throws {
        let engine = Self.engine()
        Self.define(engine, "a", max: 100)
        for i in 0..<10 { engine.put("a:\(i)", .int(Int64(i))) }
        let snapshot = engine.makeSnapshot()
        let restored = Self.engine()
        try restored.restore(snapshot)
        #expect(restored.makeSnapshot() == snapshot)
        #expect(restored.count == 10)
        #expect(restored.entries.slots.capacity >= 101)
        #expect(restored.peek("a:9").value == .int(9))
    }

    @Test func namespacesWithNoMaxReserveNothing() {
        let engine = Self.engine()
        _ = try! engine.defineNamespace("feed", PolicyChange(ttl: Self.hour))
        #expect(engine.entries.slots.capacity == 0)
    }

    @Test func entriesStoredBeforeTheReserveStayAsTheyWere() throws {
        let engine = Self.engine()
        for i in 0..<20 { engine.put("feed:\(i)", .string("v\(i)"), tags: i % 2 == 0 ? ["even"] : []) }
        // feed:0 read last: the least recent is now feed:1.
        _ = try engine.get("feed:0")
        Self.define(engine, "page", max: 1_000)
        #expect(engine.entries.slots.capacity >= 1_001)
        for i in 0..<20 { #expect(engine.peek("feed:\(i)").value == .string("v\(i)")) }
        // The recency order is kept: a full LRU namespace evicts its least recent entry.
        Self.define(engine, "feed", max: 20)
        #expect(engine.put("feed:20", .int(20)) == ["feed:20", "feed:1"])
    }
}
