import CacheCore
import CacheReplay
import Testing
import TestSupport

/// Every policy's simulation against a naive one written from the policies' definitions (linear
/// scans over an array of entries), with ttl and stale as well as without: the two must count the
/// same on random traces.
@Suite struct ReplayReferenceTests {
    struct Entry {
        var id: UInt64
        var staleAt: Int64
        var expiresAt: Int64
        var inserted: Int
        var used: Int
        var count: Int
        /// When it reached `count`.
        var countedAt: Int
        var visited = false
        var next: Int64
    }

    /// The policies by their definitions: O(n) per request.
    static func reference(_ trace: [TraceRequest], _ c: ReplayConfiguration) -> ReplayCounters {
        var entries: [Entry] = []  // for SIEVE: oldest first
        var hand: Int? = nil       // SIEVE: index of the next entry to look at
        var counters = ReplayCounters()
        var now: Int64 = 0
        var clock = 0
        func stamp(_ e: inout Entry) {
            e.staleAt = c.stale.map { now + $0 } ?? .max
            e.expiresAt = c.ttl.map { now + $0 } ?? .max
        }
        for r in trace {
            now = max(now, r.time)
            clock += 1
            if let i = entries.firstIndex(where: { $0.id == r.id }) {
                entries[i].used = clock
                entries[i].count += 1
                entries[i].countedAt = clock
                entries[i].visited = true
                entries[i].next = r.nextAccess
                if now >= entries[i].expiresAt {
                    counters.misses += 1; counters.requests += 1; counters.expirations += 1
                    stamp(&entries[i])
                } else if now >= entries[i].staleAt {
                    counters.staleHits += 1; counters.requests += 1
                    stamp(&entries[i])
                } else {
                    counters.hits += 1
                }
                continue
            }
            counters.misses += 1
            counters.requests += 1
            if let limit = c.max, entries.count >= limit {
                let victim: Int
                switch c.policy {
                case .lru: victim = entries.indices.min { entries[$0].used < entries[$1].used }!
                case .fifo: victim = entries.indices.min { entries[$0].inserted < entries[$1].inserted }!
                case .lfu:
                    victim = entries.indices.min {
                        (entries[$0].count, entries[$0].countedAt) < (entries[$1].count, entries[$1].countedAt)
                    }!
                case .optimal: victim = entries.indices.max { entries[$0].next < entries[$1].next }!
                case .sieve:
                    var p = hand ?? 0
                    while entries[p].visited {
                        entries[p].visited = false
                        p = p + 1 < entries.count ? p + 1 : 0
                    }
                    victim = p
                    // The hand stays at the victim's newer neighbour, which moves into its index.
                    hand = p + 1 < entries.count ? p : nil
                }
                if entries[victim].expiresAt <= now { counters.expirations += 1 }
                entries.remove(at: victim)
                counters.evictions += 1
            }
            var e = Entry(id: r.id, staleAt: 0, expiresAt: 0, inserted: clock, used: clock, count: 1, countedAt: clock,
                          next: r.nextAccess)
            stamp(&e)
            entries.append(e)
        }
        counters.expirations += entries.filter { $0.expiresAt <= now }.count
        return counters
    }

    static func trace(seed: UInt64, count: Int, keys: Int, withNext: Bool) -> [TraceRequest] {
        var rng = SeededGenerator(seed: seed)
        var time: Int64 = 0
        var out: [TraceRequest] = []
        for _ in 0..<count {
            time += rng.pick([0, 0, 1, 40, 100, 900, 2_000, 7_000] as [Int64])
            let a = Int.random(in: 0..<keys, using: &rng), b = Int.random(in: 0..<keys, using: &rng)
            out.append(TraceRequest(time: time, id: UInt64(min(a, b))))
        }
        if withNext {
            var following: [UInt64: Int64] = [:]
            for i in out.indices.reversed() {
                out[i].nextAccess = following[out[i].id] ?? .max
                following[out[i].id] = Int64(i)
            }
        }
        return out
    }

    @Test(arguments: [EvictionPolicy.lru, .fifo, .sieve, .lfu])
    func policyMatchesItsDefinition(policy: EvictionPolicy) {
        for seed in UInt64(1)...6 {
            let trace = Self.trace(seed: seed, count: 3_000, keys: 60, withNext: false)
            var configurations: [ReplayConfiguration] = []
            for m in [1, 2, 7, 25, 59] as [Int?] + [nil] {
                for (t, s) in [(nil, nil), (5_000, nil), (20_000, 3_000), (3_000, 0)] as [(Int64?, Int64?)] {
                    configurations.append(ReplayConfiguration(policy: policy, max: m, ttl: t, stale: s))
                }
            }
            for row in Replay.run(trace, configurations: configurations, stackDistance: false).rows {
                #expect(row.counters == Self.reference(trace, row.configuration), "seed \(seed) \(row.configuration)")
            }
        }
    }

    @Test func optimalHitsMatchItsDefinitionAndBeatEveryOtherPolicy() {
        for seed in UInt64(20)...24 {
            let trace = Self.trace(seed: seed, count: 3_000, keys: 60, withNext: true)
            for size in [1, 3, 10, 30] {
                let all = [EvictionPolicy.optimal, .lru, .fifo, .sieve, .lfu].map {
                    ReplayConfiguration(policy: $0, max: size, ttl: nil, stale: nil)
                }
                let rows = Replay.run(trace, configurations: all).rows
                let optimal = rows[0].counters
                #expect(optimal.hits == Self.reference(trace, all[0]).hits, "seed \(seed) max \(size)")
                for row in rows.dropFirst() { #expect(optimal.hits >= row.counters.hits) }
            }
        }
    }
}
