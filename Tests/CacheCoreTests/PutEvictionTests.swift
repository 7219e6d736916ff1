@_spi(Engine) @testable import CacheCore
import Testing

/// A put of a new key into a full LRU namespace finds its victim before it stores the entry
/// (`EngineState.lruVictimBeforeStoring`); these check that it evicts the entry the policy names,
/// with the namespace shared or alone, at `max` 1 and 0, and that a unit of work that ran nothing
/// leaves the scheduler and the request table as they are.
@Suite struct PutEvictionTests {
    static let hour: Int64 = 3_600_000

    static func engine(_ namespaces: [String: Int]) -> CacheEngine {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        for (name, max) in namespaces.sorted(by: { $0.key < $1.key }) {
            _ = try! engine.defineNamespace(name, PolicyChange(ttl: hour, max: .some(max), eviction: .lru))
        }
        return engine
    }

    @Test func aNamespaceSharingTheSlotsEvictsItsOwnLeastRecent() throws {
        let engine = Self.engine(["a": 2, "b": 5])
        engine.put("a:1", .int(1))
        engine.put("b:1", .int(1))
        engine.put("a:2", .int(2))
        _ = try engine.get("a:1")
        #expect(engine.put("a:3", .int(3)) == ["a:3", "a:2"])
        #expect(engine.peek("a:1").state == .fresh)
        #expect(engine.peek("a:2").state == .absent)
        #expect(engine.peek("b:1").state == .fresh)
        #expect(engine.put("a:4", .int(4)) == ["a:4", "a:1"])
        #expect(engine.stats().evictions == 2)
    }

    @Test func aNamespaceHoldingEveryEntryEvictsTheLeastRecent() throws {
        let engine = Self.engine(["a": 3])
        for i in 1...3 { engine.put("a:\(i)", .int(Int64(i))) }
        _ = try engine.get("a:1")
        #expect(engine.put("a:4", .int(4)) == ["a:4", "a:2"])
        #expect(engine.put("a:5", .int(5)) == ["a:5", "a:3"])
        #expect(engine.put("a:6", .int(6)) == ["a:6", "a:1"])
        #expect(engine.count == 3)
    }

    @Test func aMaxOfOneReplacesTheEntryAndAMaxOfZeroKeepsNone() {
        let engine = Self.engine(["one": 1, "none": 0])
        #expect(engine.put("one:a", .int(1)) == ["one:a"])
        #expect(engine.put("one:b", .int(2)) == ["one:b", "one:a"])
        #expect(engine.peek("one:b").value == .int(2))
        #expect(engine.put("none:a", .int(1)) == ["none:a"])
        #expect(engine.peek("none:a").state == .absent)
        #expect(engine.count == 1)
    }

    @Test func aPutOfACachedKeyInAFullNamespaceEvictsNothing() {
        let engine = Self.engine(["a": 2])
        engine.put("a:1", .int(1))
        engine.put("a:2", .int(2))
        #expect(engine.put("a:1", .int(3)) == ["a:1"])
        #expect(engine.stats().evictions == 0)
        #expect(engine.put("a:3", .int(4)) == ["a:3", "a:2"])
    }

    // The new entry takes its victim's slot (`EngineState.replaceVictim`): the slots stay as many
    // as the entries, where an insert followed by a removal took one more.
    @Test func aPutThatEvictsReusesTheVictimsSlot() throws {
        let engine = Self.engine(["a": 3])
        for i in 1...3 { engine.put("a:\(i)", .int(Int64(i))) }
        for i in 4...20 { #expect(engine.put("a:\(i)", .int(Int64(i))) == ["a:\(i)", "a:\(i - 3)"]) }
        #expect(engine.slots.count == 3)
        #expect(engine.count == 3)
        #expect(try engine.get("a:18").value == .int(18))
    }

    // The victim's tags and entity id and the new entry's, in the same slot: the indexes lead to
    // the new entry only. A tag of both keeps the slot; the victim's own tag and id lead nowhere.
    @Test func aReplacedVictimsTagsAndIDsLeadToTheNewEntryOnly() throws {
        let engine = Self.engine(["a": 2])
        let increment = try Patch(.object(["n": .object(["$inc": .int(1)])]))
        engine.put("a:1", .object(["id": .int(7), "n": .int(1)]), tags: ["t", "old"])
        engine.put("a:2", .object(["id": .int(8), "n": .int(2)]), tags: ["u"])
        // Builds the id index, so that the replacement keeps it in step.
        _ = try engine.event(entity: "9", patch: increment)
        #expect(engine.put("a:3", .object(["id": .int(11), "n": .int(3)]), tags: ["t", "new"]) == ["a:3", "a:1"])
        #expect(try engine.event(entity: "7", patch: increment).isEmpty)
        #expect(try engine.event(entity: "11", patch: increment) == ["a:3"])
        #expect(engine.peek("a:3").value == .object(["id": .int(11), "n": .int(4)]))
        #expect(engine.invalidate(.tag("old")).isEmpty)
        #expect(engine.invalidate(.tag("t")) == ["a:3"])
        #expect(engine.invalidate(.tag("u")) == ["a:2"])
    }

    // A full LRU namespace whose expiry scan ran dry (its entries expired and reported): the
    // put stores first and then evicts, which schedules the scan again; the next put replaces
    // its victim in place. The invariant check runs after each.
    @Test func aPutAfterTheScanRanDryEvictsAndTheNextReplaces() throws {
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        _ = try engine.defineNamespace("a", PolicyChange(ttl: 1_000, max: .some(2), eviction: .lru))
        engine.put("a:1", .int(1))
        engine.put("a:2", .int(2))
        try engine.advance(by: 5_000)
        #expect(engine.peek("a:1").state == .expired)
        let ns = engine.namespaceSlot(forKey: "a:1")
        #expect(!engine.state.expiry.scanScheduled(ns))
        #expect(engine.put("a:3", .int(3)) == ["a:3", "a:1"])
        #expect(engine.state.expiry.scanScheduled(ns))
        // Stored before the eviction, a:3 took a slot of its own; a:4 takes a:2's.
        let slots = engine.slots.count
        #expect(engine.put("a:4", .int(4)) == ["a:4", "a:2"])
        #expect(engine.slots.count == slots)
        #expect(engine.peek("a:3").state == .fresh && engine.peek("a:4").state == .fresh)
        try engine.advance(by: 5_000)
        #expect(engine.peek("a:3").state == .expired && engine.peek("a:4").state == .expired)
        #expect(engine.stats().evictions == 2)
    }

    // With a store tracking changes: the victim's row goes by its id, the new entry's row is
    // written with a new one.
    @Test func aReplacedVictimsRowIsRemovedAndTheNewRowWritten() {
        let engine = Self.engine(["a": 2])
        engine.put("a:1", .int(1))
        engine.put("a:2", .int(2))
        engine.startTrackingChanges(everything: true)
        let first = engine.takeChanges()
        let victimRow = first.entries.first { $0.key == "a:1" }!.rowID
        #expect(engine.put("a:3", .int(3)) == ["a:3", "a:1"])
        let changes = engine.takeChanges()
        #expect(changes.removedKeys == ["a:1"])
        #expect(changes.removedRowIDs == [victimRow])
        #expect(changes.entries.map(\.key) == ["a:3"])
        #expect(changes.entries.map(\.rowID) == [3])
    }

    // An evicting put asks the processor for the lines of the next victims (`EngineState.
    // prefetchNextVictims`), named by the queue's items after its head (`queuedSlot`). With
    // nothing read in between, every item is current, so `queuedSlot` names exactly the entries
    // the next puts evict, the first and third after this one, whether the namespace holds every
    // entry (the global queue) or shares the slots (its own). (A hint itself cannot be seen.)
    @Test func theQueuedSlotsAfterAnEvictionAreTheNextVictims() {
        for shared in [false, true] {
            let engine = Self.engine(shared ? ["a": 5, "b": 3] : ["a": 5])
            for i in 1...5 {
                engine.put("a:\(i)", .int(Int64(i)))
                if shared && i <= 3 { engine.put("b:\(i)", .int(Int64(i))) }
            }
            let ns = engine.namespaceSlot(forKey: "a:1")
            func queued(_ ahead: Int) -> String? {
                let slot = engine.state.entries.ordered.queuedSlot(Int(ns), ahead: ahead)
                return slot < 0 ? nil : engine.slots[Int(slot)].key
            }
            for i in 6...12 {
                #expect(engine.put("a:\(i)", .int(Int64(i))) == ["a:\(i)", "a:\(i - 5)"])
                // The head is the victim's item; the next puts evict a:(i-4), then a:(i-3), ...
                #expect(queued(1) == "a:\(i - 4)", "shared \(shared), put a:\(i)")
                #expect(queued(3) == "a:\(i - 2)", "shared \(shared), put a:\(i)")
            }
        }
    }

    // The hints read no slot past the end and change nothing: a next item on a freed slot (a
    // dead entry, its key empty), a next key that is not ASCII (whose bucket is not asked for),
    // and queues too short for an item three on leave the puts evicting what the policy names,
    // the invariants checked after each.
    @Test func aHintOnAFreedSlotAKeyNotASCIIOrPastTheQueueChangesNothing() throws {
        let engine = Self.engine(["a": 5, "b": 5])
        let ns = engine.namespaceSlot(forKey: "a:1")
        func queued(_ ahead: Int) -> Int32 { engine.state.entries.ordered.queuedSlot(Int(ns), ahead: ahead) }
        for i in 1...5 {
            engine.put("a:\(i)", .int(Int64(i)))
            engine.put("b:\(i)", .int(Int64(i)))
        }
        // a:2's item stays in a's queue, its slot freed and not taken again (the b's slots,
        // freed after it, are taken first).
        _ = engine.evict("a:2")
        for i in 1...5 { _ = engine.evict("b:\(i)") }
        engine.put("a:é6", .int(6))
        #expect(engine.put("a:7", .int(7)) == ["a:7", "a:1"])
        #expect(queued(1) >= 0 && !engine.slots[Int(queued(1))].live)
        #expect(queued(3) >= 0 && engine.slots[Int(queued(3))].key == "a:4")
        #expect(engine.put("a:8", .int(8)) == ["a:8", "a:3"])
        #expect(engine.put("a:9", .int(9)) == ["a:9", "a:4"])
        #expect(engine.put("a:10", .int(10)) == ["a:10", "a:5"])
        #expect(engine.slots[Int(queued(1))].key == "a:é6")
        #expect(engine.put("a:11", .int(11)) == ["a:11", "a:é6"])
        #expect(engine.put("a:12", .int(12)) == ["a:12", "a:7"])
        #expect(engine.count == 5)

        // A namespace of two: the item three on is past the queue's end.
        let small = Self.engine(["s": 2])
        let s = small.namespaceSlot(forKey: "s:1")
        small.put("s:1", .int(1))
        small.put("s:2", .int(2))
        #expect(small.put("s:3", .int(3)) == ["s:3", "s:1"])
        #expect(small.state.entries.ordered.queuedSlot(Int(s), ahead: 3) == -1)
        _ = try small.get("s:2")
        #expect(small.put("s:4", .int(4)) == ["s:4", "s:3"])
        #expect(small.put("s:5", .int(5)) == ["s:5", "s:2"])
        #expect(small.count == 2)
    }

    @Test func theStoredNullIsTheTextNull() {
        #expect(StoredValue.null.text == "null")
        #expect(StoredValue.null == StoredValue(canonical: "null"))
        #expect(StoredValue.null.json == .null)
        #expect(StoredValue(JSONValue.null) == StoredValue.null)
    }

    @Test func aUnitOfWorkAfterOneThatRanAnItemStartsAfresh() {
        let h = Harness()
        h.server("k", 1)
        h.engine.beginUnitOfWork()
        // A blocking read: its fetch's completion runs in this unit, its outcome kept for the read.
        #expect(h.get("k").value == .int(1))
        #expect(h.engine.scheduler.itemsRun == 1)
        #expect(!h.engine.requestTable.keyOutcomes.isEmpty)
        h.engine.beginUnitOfWork()
        #expect(h.engine.scheduler.itemsRun == 0)
        #expect(h.engine.requestTable.keyOutcomes.isEmpty)
        // A unit that runs nothing leaves them so.
        _ = h.get("k")
        h.engine.beginUnitOfWork()
        #expect(h.engine.scheduler.itemsRun == 0)
    }
}
