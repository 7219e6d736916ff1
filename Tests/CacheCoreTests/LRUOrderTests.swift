@_spi(Engine) import CacheCore
import CacheServer
import Testing
import TestSupport

/// Which entry an LRU namespace evicts, against a model that keeps the global recency order and
/// derives each LRU namespace's order from it (an LRU namespace's victim is its least recent entry
/// in the global order). The engine keeps no queue of its own for an LRU namespace while it holds
/// every entry, and builds one when a second namespace gets entries: these runs cross that point
/// after many accesses (many compactions of the global queue), interleave several LRU namespaces
/// with a FIFO one and policy changes, clear the cache and restore it from a snapshot. The
/// harness's engine checks its invariants after every operation.
@Suite struct LRUOrderTests {
    static let policies: [String: Policy] = [
        "a": Policy(ttl: 1_000 * minute, max: 12, eviction: .lru),
        "b": Policy(ttl: 1_000 * minute, max: 5, eviction: .lru),
        "c": Policy(ttl: 1_000 * minute, max: 3, eviction: .lru),
        "f": Policy(ttl: 1_000 * minute, max: 4, eviction: .fifo),
    ]

    /// The expected state: every cached key in recency order (least recent first), each
    /// namespace's policy, and a FIFO namespace's keys in the order they were stored.
    struct Model {
        var recency: [String] = []
        var eviction: [String: Eviction] = ["a": .lru, "b": .lru, "c": .lru, "f": .fifo]
        var fifo: [String: [String]] = [:]

        static func namespace(_ key: String) -> String { String(key.split(separator: ":")[0]) }

        /// A put: an access of a cached key, else a new entry and, over `max`, the policy's victim.
        mutating func put(_ key: String) -> [String] {
            let ns = Self.namespace(key)
            if let i = recency.firstIndex(of: key) {
                recency.remove(at: i)
                recency.append(key)
                return []
            }
            recency.append(key)
            fifo[ns, default: []].append(key)
            guard recency.filter({ Self.namespace($0) == ns }).count > policies[ns]!.max! else { return [] }
            let victim = eviction[ns] == .fifo ? fifo[ns]!.first { $0 != key }!
                                               : recency.first { Self.namespace($0) == ns && $0 != key }!
            remove(victim)
            return [victim]
        }

        mutating func get(_ key: String) {
            recency.removeAll { $0 == key }
            recency.append(key)
        }

        mutating func remove(_ key: String) {
            recency.removeAll { $0 == key }
            fifo[Self.namespace(key)]?.removeAll { $0 == key }
        }

        /// A policy change: the namespace's entries start the new policy in recency order.
        mutating func change(_ ns: String, to e: Eviction) {
            eviction[ns] = e
            fifo[ns] = recency.filter { Self.namespace($0) == ns }
        }
    }

    /// Runs one operation on the engine and the model, expecting the same evictions and order.
    static func apply(_ op: String, _ h: Harness, _ model: inout Model, _ context: String) {
        let parts = op.split(separator: " ").map(String.init)
        switch parts[0] {
        case "put":
            let got = Array(h.engine.put(parts[1], 1).dropFirst())
            let want = model.put(parts[1])
            #expect(got == want, "\(context): \(op)")
        case "get":
            #expect(h.get(parts[1]).state == .fresh, "\(context): \(op)")
            model.get(parts[1])
        case "evict":
            _ = h.engine.evict(parts[1])
            model.remove(parts[1])
        case "policy":
            let e = Eviction(rawValue: parts[2])!
            #expect((try? h.engine.defineNamespace(parts[1], PolicyChange(eviction: e))) == [], "\(context): \(op)")
            model.change(parts[1], to: e)
        default:
            Issue.record("bad op \(op)")
        }
        #expect(h.engine.keys().map(\.key) == model.recency, "\(context): after \(op)")
    }

    /// A random operation on namespace `ns`: mostly reads of cached keys, puts of new keys, some
    /// removals.
    static func randomOp(_ ns: String, _ model: Model, _ rng: inout SeededGenerator) -> String {
        let cached = model.recency.filter { Model.namespace($0) == ns }
        let r = Int.random(in: 0..<20, using: &rng)
        if !cached.isEmpty && r < 13 { return "get \(cached.randomElement(using: &rng)!)" }
        if !cached.isEmpty && r == 13 { return "evict \(cached.randomElement(using: &rng)!)" }
        return "put \(ns):\(Int.random(in: 0..<40, using: &rng))"
    }

    /// One namespace alone for thousands of operations (the global queue compacted many times),
    /// then a second namespace, then all of them interleaved.
    @Test(arguments: UInt64(1)...6)
    func aSecondNamespaceAfterManyAccessesKeepsTheFirstOnesOrder(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let h = Harness(Self.policies, latency: 0)
        var model = Model()
        let alone = ["a", "b", "c"][Int(seed % 3)]
        for i in 0..<3_000 { Self.apply(Self.randomOp(alone, model, &rng), h, &model, "seed \(seed) alone \(i)") }
        for i in 0..<3_000 {
            let ns = ["a", "b", "c", "f"].randomElement(using: &rng)!
            Self.apply(Self.randomOp(ns, model, &rng), h, &model, "seed \(seed) mixed \(i)")
        }
    }

    /// Namespaces that empty and fill again, policy changes between LRU and FIFO, clears and
    /// restores from a snapshot, in random order.
    @Test(arguments: UInt64(11)...16)
    func clearsRestoresAndPolicyChangesKeepEveryOrder(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var h = Harness(Self.policies, latency: 0)
        var model = Model()
        for i in 0..<6_000 {
            let context = "seed \(seed) op \(i)"
            // Long runs on one namespace, with every other namespace emptied now and then.
            let ns = (i / 500) % 2 == 0 ? "a" : ["a", "b", "c", "f"].randomElement(using: &rng)!
            switch Int.random(in: 0..<400, using: &rng) {
            case 0:
                _ = h.engine.clear(namespace: nil)
                model = Model(eviction: model.eviction)
                #expect(h.engine.keys().isEmpty, "\(context)")
            case 1:
                let gone = ["b", "c", "f"].randomElement(using: &rng)!
                _ = h.engine.clear(namespace: gone)
                for key in model.recency where Model.namespace(key) == gone { model.remove(key) }
                #expect(h.engine.keys().map(\.key) == model.recency, "\(context): clear \(gone)")
            case 2:
                let copy = Harness()
                try copy.engine.restore(JSONValue(parsing: h.engine.makeSnapshot().compactText))
                h = copy
                #expect(h.engine.keys().map(\.key) == model.recency, "\(context): restore")
            case 3:
                let changed = ["b", "c"].randomElement(using: &rng)!
                Self.apply("policy \(changed) \(model.eviction[changed] == .lru ? "fifo" : "lru")", h, &model, context)
            default:
                Self.apply(Self.randomOp(ns, model, &rng), h, &model, context)
            }
        }
    }

    /// A namespace's least recent entry goes, when the namespace's order is the global one and
    /// after a second namespace has entries.
    @Test func theVictimIsTheLeastRecentOfItsNamespaceBeforeAndAfterASecondOne() {
        let h = Harness(Self.policies, latency: 0)
        var model = Model()
        for i in 0..<12 { Self.apply("put a:\(i)", h, &model, "fill") }
        // Read a:0..a:11 over and over, a:5 last of all but a:4 least recent.
        for round in 0..<50 { for i in [4, 0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 5] { Self.apply("get a:\(i)", h, &model, "round \(round)") } }
        #expect(Array(h.engine.put("a:20", 1).dropFirst()) == ["a:4"])
        model.recency.removeAll { $0 == "a:4" }
        model.recency.append("a:20")
        Self.apply("put b:1", h, &model, "second")
        Self.apply("get a:0", h, &model, "after")
        // a:1 is now the least recent of namespace a (b:1 is less recent than a:0 only).
        #expect(Array(h.engine.put("a:21", 1).dropFirst()) == ["a:1"])
        model.recency.removeAll { $0 == "a:1" }
        model.recency.append("a:21")
        Self.apply("put b:2", h, &model, "b")
        #expect(h.engine.keys().map(\.key) == model.recency)
    }
}
