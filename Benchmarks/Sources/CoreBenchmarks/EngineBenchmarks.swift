@_spi(Engine) import CacheCore
import CacheServer

/// Benchmarks of `CacheEngine`'s synchronous paths (the code inside the `Cache` actor).
enum EngineBenchmarks {
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// The keys' text after `n:` and before the number (`--long-keys`): empty, or one that makes
    /// every key longer than 15 bytes, so that a Swift string keeps its bytes out of line (as
    /// most app keys, `feed:user:12345678`, are) instead of in the string itself.
    // nonisolated(unsafe): written once by main.swift's argument parsing, before any benchmark
    // runs, and only read after, all on the main thread (as `Timing.alternatingRounds`).
    nonisolated(unsafe) static var keyInfix = ""

    static func keys(_ n: Int, offset: Int = 0) -> [String] {
        (offset..<offset + n).map { "n:\(keyInfix)\($0)" }
    }

    /// Random key positions, the same for the engine and its baseline.
    static func accessOrder(_ n: Int, seed: UInt64 = 1) -> [Int] {
        var rng = SplitMix64(seed: seed)
        return (0..<n).map { _ in Int(rng.next() % UInt64(n)) }
    }

    /// One round of the baseline, a bare `Dictionary<String, Int>` lookup of the same keys in the
    /// same order: a lookup of each key of `order` in a dictionary of `keys`.
    static func dictionaryLookupRound(keys: [String], order: [Int]) -> () -> Int {
        var dict = [String: Int](minimumCapacity: keys.count)
        for (i, key) in keys.enumerated() { dict[key] = i }
        return {
            var sum = 0
            for i in order { sum &+= dict[keys[i]]! }
            return sum
        }
    }

    static func filledEngine(keys: [String], max: Int?, eviction: Eviction = .lru) -> CacheEngine {
        let engine = CacheEngine(origin: SimulatedServer())
        _ = try! engine.defineNamespace("n", PolicyChange(ttl: hour, max: .some(max), eviction: eviction))
        for (i, key) in keys.enumerated() { engine.put(key, .int(Int64(i))) }
        return engine
    }

    /// get of a fresh key (hit + LRU touch) at `n` entries vs a dictionary lookup; then put of a new
    /// key into a full namespace (one LRU eviction each) vs the same baseline. The baseline's rounds
    /// alternate with the engine's (best of 5 each), so that both see the same load.
    static func getAndPut(n: Int, get runGet: Bool = true, put runPut: Bool = true) {
        Report.section("get hit + touch, put with eviction: \(n) entries, random key order, baseline rounds alternating")
        let keys = keys(n)
        let order = accessOrder(n)
        let baseline = dictionaryLookupRound(keys: keys, order: order)
        let engine = filledEngine(keys: keys, max: n)
        if runGet { getHit(engine, keys: keys, order: order, baseline: baseline) }
        if runPut { putEvicting(engine, keys: keys, baseline: baseline) }
    }

    /// Each eviction policy's get hit (its access) and put with eviction, against LRU's measured in
    /// the same run.
    static func policies(n: Int) {
        Report.section("eviction policies: get hit and put with eviction, \(n) entries, against LRU")
        let keys = keys(n)
        let order = accessOrder(n)
        var lru: (get: Double, put: Double)?
        for eviction in Eviction.allCases {
            let engine = filledEngine(keys: keys, max: n, eviction: eviction)
            let get = getHitTime(engine, keys: keys, order: order)
            let put = putEvictingTime(engine, keys: keys)
            let base = lru ?? (get, put)
            if lru == nil { lru = base }
            Report.line("\(eviction.rawValue) get (fresh hit, access)", Report.ns(get), "\(Report.ratio(get / base.get)) LRU's")
            Report.line("\(eviction.rawValue) put (new key, evicts one)", Report.ns(put), "\(Report.ratio(put / base.put)) LRU's")
        }
    }

    static func getHitTime(_ engine: CacheEngine, keys: [String], order: [Int]) -> Double {
        Timing.nsPerOp(ops: order.count) {
            var sum = 0
            for i in order {
                if case .int(let v)? = try! engine.get(keys[i]).value { sum &+= Int(v) }
            }
            return sum
        }
    }

    static func putEvictingTime(_ engine: CacheEngine, keys: [String]) -> Double {
        let n = keys.count
        let other = Self.keys(n, offset: n)
        var round = 0
        let put = Timing.nsPerOp(ops: n) {
            round += 1
            let incoming = round % 2 == 1 ? other : keys
            var sum = 0
            for key in incoming { sum &+= engine.put(key, .int(1)).count }
            return sum
        }
        precondition(engine.count == n && engine.stats().evictions >= n, "every put evicted one entry")
        return put
    }

    static func getHit(_ engine: CacheEngine, keys: [String], order: [Int], baseline: () -> Int) {
        let (base, get) = Timing.interleaved(ops: order.count, baseline: baseline) {
            var sum = 0
            for i in order {
                if case .int(let v)? = try! engine.get(keys[i]).value { sum &+= Int(v) }
            }
            return sum
        }
        Report.line("Dictionary<String, Int> lookup (baseline)", Report.ns(base), "CPU time, rounds alternating with get's")
        Report.line("CacheEngine.get (fresh hit, touch)", Report.ns(get), "\(Report.ratio(get / base)) baseline (goal <= 2.5x)")
    }

    static func putEvicting(_ engine: CacheEngine, keys: [String], baseline: () -> Int) {
        let n = keys.count

        // Two key sets take turns: each round puts the set that is not cached, evicting the other.
        let other = Self.keys(n, offset: n)
        var round = 0
        let (base, put) = Timing.interleaved(ops: n, baseline: baseline) {
            round += 1
            let incoming = round % 2 == 1 ? other : keys
            var sum = 0
            for key in incoming { sum &+= engine.put(key, .int(1)).count }
            return sum
        }
        precondition(engine.count == n && engine.stats().evictions >= n, "every put evicted one entry")
        Report.line("Dictionary<String, Int> lookup (baseline)", Report.ns(base), "CPU time, rounds alternating with put's")
        Report.line("CacheEngine.put (new key, evicts the LRU)", Report.ns(put), "\(Report.ratio(put / base)) baseline (goal <= 4x)")

        var dict = [String: Int](minimumCapacity: n)
        for (i, key) in keys.enumerated() { dict[key] = i }
        var dictRound = 0
        let dictPut = Timing.cpuNsPerOp(ops: n) {
            dictRound += 1
            let (incoming, outgoing) = dictRound % 2 == 1 ? (other, keys) : (keys, other)
            for i in 0..<n {
                dict[incoming[i]] = i
                dict.removeValue(forKey: outgoing[i])
            }
            return dict.count
        }
        Report.line("Dictionary insert + removeValue (context)", Report.ns(dictPut), "put is \(Report.ratio(put / dictPut)) this")
    }

    /// One `advance` that expires `min(100k, total)` entries of a cache of `total` entries.
    static func expiry(totals: [Int]) {
        Report.section("expiry inside one advance: cost per expired entry")
        for total in totals {
            let expiring = min(100_000, total)
            var best = Double.infinity
            for _ in 0..<(total >= 1_000_000 ? 2 : 3) {
                let engine = CacheEngine(origin: SimulatedServer())
                _ = try! engine.defineNamespace("long", PolicyChange(ttl: day))
                _ = try! engine.defineNamespace("short", PolicyChange(ttl: 60_000))
                for i in 0..<(total - expiring) { engine.put("long:\(i)", .int(Int64(i))) }
                for i in 0..<expiring {
                    engine.put("short:\(i)", .int(Int64(i)))
                    if i % 1_000 == 999 { try! engine.advance(by: 1) }
                }
                let elapsed = Timing.clock.measure { try! engine.advance(by: 120_000) }
                precondition(engine.stats().expirations == expiring, "every short entry expired")
                best = min(best, Timing.nanoseconds(elapsed) / Double(expiring))
            }
            Report.line("\(expiring) of \(total) entries expire", Report.ns(best), "per expired entry")
        }
    }

    static let ks = [1, 10, 100, 1_000]

    /// A cache of `total` entries `{"id": j, ...}` in which entity `900000000 + k` is embedded in
    /// `k` entries (k in `ks`) and tag `t<k>` is on those same entries.
    static func entityCache(total: Int) -> CacheEngine {
        let engine = CacheEngine(origin: SimulatedServer())
        _ = try! engine.defineNamespace("feed", PolicyChange(ttl: day))
        var owner: [(k: Int, until: Int)] = []
        var end = 0
        for k in ks { end += k; owner.append((k, end)) }
        for j in 0..<total {
            if let group = owner.first(where: { j < $0.until }) {
                let author: JSONValue = .object(["id": .int(900_000_000 + Int64(group.k)), "likes": .int(0)])
                engine.put("feed:\(j)", .object(["id": .int(Int64(j)), "author": author]), tags: ["t\(group.k)"])
            } else {
                engine.put("feed:\(j)", .object(["id": .int(Int64(j)), "likes": .int(0)]))
            }
        }
        return engine
    }

    /// `event(entity:patch:)` and `invalidate(.tag)` over k entries, in caches of each size.
    static func entityAndTag(totals: [Int]) {
        let patch = try! Patch(.object(["likes": .object(["$inc": .int(1)])]))
        var eventNs: [Int: [Int: Double]] = [:]
        var tagNs: [Int: [Int: Double]] = [:]
        for total in totals {
            let engine = entityCache(total: total)
            for k in ks {
                let reps = Swift.max(50, 50_000 / k)
                eventNs[total, default: [:]][k] = Timing.nsPerOp(ops: reps) {
                    var sum = 0
                    for _ in 0..<reps { sum &+= try! engine.event(entity: "\(900_000_000 + k)", patch: patch).count }
                    precondition(sum == reps * k)
                    return sum
                }
                tagNs[total, default: [:]][k] = Timing.nsPerOp(ops: reps) {
                    var sum = 0
                    for _ in 0..<reps { sum &+= engine.invalidate(.tag("t\(k)")).count }
                    return sum &+ 1
                }
            }
        }
        for (title, series) in [("event entity ID PATCH", eventNs), ("invalidate tag:T", tagNs)] {
            Report.section("\(title) on an id/tag in k entries: time per call")
            for k in ks {
                var cells: [String] = []
                for total in totals {
                    let ns = series[total]![k]!
                    cells.append("\(total / 1000)k: \(Report.ns(ns)) (\(Report.ns(ns / Double(k)))/entry)")
                }
                let ratio = series[totals.last!]![k]! / series[totals.first!]![k]!
                Report.line("k = \(k)", "", cells.joined(separator: "   ") + "   \(totals.last! / 1000)k/\(totals.first! / 1000)k: \(Report.ratio(ratio))")
            }
        }
    }
}
