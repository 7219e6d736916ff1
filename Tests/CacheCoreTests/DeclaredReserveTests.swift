@_spi(Engine) @testable import CacheCore
import Testing

/// Namespaces with a `max` reserve room for that many entries in the engine's slots
/// (`CacheEngine.reserveDeclaredEntries`), so that a bounded cache fills its slots without
/// moving them; the room reserved is capped, whatever `max` says, and entries already stored
/// stay as they were.
@Suite struct DeclaredReserveTests {
    static let hour: Int64 = 3_600_000

    static func define(_ engine: CacheEngine, _ name: String, max: Int?) {
        _ = try! engine.defineNamespace(name, PolicyChange(ttl: hour, max: .some(max), eviction: .lru))
    }

    @Test func boundedNamespacesFillTheirSlotsWithoutMovingThem() {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        #expect(engine.entries.slots.capacity == 0)
        Self.define(engine, "a", max: 10)
        Self.define(engine, "b", max: 5)
        let room = engine.entries.slots.capacity
        #expect(room >= 15)
        for i in 0..<10 { engine.put("a:\(i)", .int(Int64(i))) }
        for i in 0..<5 { engine.put("b:\(i)", .int(Int64(i))) }
        #expect(engine.count == 15)
        #expect(engine.entries.slots.capacity == room)
        // Over `max`, the namespaces evict as ever: the slots still do not move.
        for i in 10..<40 { engine.put("a:\(i)", .int(Int64(i))) }
        #expect(engine.count == 15)
        #expect(engine.entries.slots.capacity == room)
    }

    @Test func theRoomReservedIsCappedWhateverMaxSays() {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        Self.define(engine, "huge", max: Int.max)
        Self.define(engine, "big", max: 1 << 40)
        let limit = CacheEngine.declaredEntriesReserveLimit
        // Room that never asks for huge pages, whose first write would take 2 MiB at once.
        #expect(limit * MemoryLayout<Entry>.stride < HugePages.threshold)
        #expect(engine.entries.slots.capacity >= limit)
        #expect(engine.entries.slots.capacity < 2 * limit)
        engine.put("huge:1", .int(1))
        engine.put("big:1", .int(2))
        #expect(engine.peek("huge:1").value == .int(1))
        #expect(engine.peek("big:1").value == .int(2))
    }

    @Test func aLoadedConfigurationReservesAsNsDoes() throws {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        _ = try engine.configure(CacheConfiguration(namespaces: ["a": Policy(ttl: Self.hour, max: 300),
                                                                  "b": Policy(ttl: Self.hour)]))
        #expect(engine.entries.slots.capacity >= 300)
    }

    @Test func namespacesWithNoMaxReserveNothing() {
        let engine = CacheEngine(origin: NoOrigin())
        _ = try! engine.defineNamespace("feed", PolicyChange(ttl: Self.hour))
        #expect(engine.entries.slots.capacity == 0)
    }

    @Test func entriesStoredBeforeTheReserveStayAsTheyWere() throws {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        for i in 0..<20 { engine.put("feed:\(i)", .string("v\(i)"), tags: i % 2 == 0 ? ["even"] : []) }
        _ = try engine.get("feed:3")
        Self.define(engine, "page", max: 1_000)
        #expect(engine.entries.slots.capacity >= 1_000)
        for i in 0..<20 { #expect(engine.peek("feed:\(i)").value == .string("v\(i)")) }
        #expect(engine.invalidate(.tag("even")).count == 10)
        // The recency order is kept: a full LRU namespace evicts its least recent entry.
        Self.define(engine, "feed", max: 20)
        #expect(engine.put("feed:20", .int(20)) == ["feed:20", "feed:0"])
    }
}
