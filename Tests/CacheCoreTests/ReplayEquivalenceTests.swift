@_spi(Engine) import CacheCore
import CacheReplay
import CacheServer
import Testing
import TestSupport

/// The replay simulator against the engine itself: the same get-only traces through `CacheEngine`
/// (a simulated server holding every key, latency 0) and through `Replay`, every counter compared.
@Suite struct ReplayEquivalenceTests {
    /// A trace over `keys` keys, skewed toward the first ones, with gaps that cross stale and
    /// expiry thresholds and runs of requests at the same instant.
    static func trace(seed: UInt64, count: Int, keys: Int) -> [TraceRequest] {
        var rng = SeededGenerator(seed: seed)
        var time: Int64 = 0
        var out: [TraceRequest] = []
        let gaps: [Int64] = [0, 0, 0, 1, 7, 250, 499, 500, 1_000, 9_999, 10_000, 31_000, 61_000, 299_999, 300_000, 700_000]
        for _ in 0..<count {
            time += rng.pick(gaps)
            let a = Int.random(in: 0..<keys, using: &rng), b = Int.random(in: 0..<keys, using: &rng)
            out.append(TraceRequest(time: time, id: UInt64(min(a, b))))
        }
        return out
    }

    /// The namespace counters the engine reaches for the same requests, under `eviction`.
    static func engineCounters(_ trace: [TraceRequest], _ c: ReplayConfiguration, eviction: Eviction = .lru) throws -> ReplayCounters {
        let server = SimulatedServer()
        server.latency = 0
        let engine = CacheEngine(origin: server)
        engine.checksInvariants = trace.count <= 1_000
        let policy = Policy(ttl: c.ttl ?? .max, stale: c.stale, max: c.max, eviction: eviction)
        _ = try engine.configure(CacheConfiguration(namespaces: ["t": policy]))
        for id in Set(trace.map(\.id)) { server.set("t:k\(id)", .int(Int64(id)), at: engine.now) }
        var elapsed: Int64 = 0
        for r in trace {
            engine.beginUnitOfWork()
            try engine.advance(by: r.time - elapsed)
            elapsed = r.time
            _ = try engine.get("t:k\(r.id)")
        }
        engine.beginUnitOfWork()
        try engine.advance(by: 0)
        let s = engine.stats(namespace: "t")
        return ReplayCounters(requests: s.requests, hits: s.hits, staleHits: s.staleHits, misses: s.misses,
                              evictions: s.evictions, expirations: s.expirations)
    }

    static let sizes: [Int?] = [nil, 1, 3, 10]
    static let ttls: [Int64?] = [nil, 0, 1_000, 30_000, 300_000]
    static let stales: [Int64?] = [nil, 0, 500, 10_000, 120_000]

    /// Yields between configurations, not to hold a thread of the test pool for half a minute.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func lruMatchesTheEngineForEveryCombination(seed: UInt64) async throws {
        let trace = Self.trace(seed: seed, count: 600, keys: 25)
        var configurations: [ReplayConfiguration] = []
        for m in Self.sizes { for t in Self.ttls { for s in Self.stales {
            configurations.append(ReplayConfiguration(policy: .lru, max: m, ttl: t, stale: s))
        } } }
        let result = Replay.run(trace, configurations: configurations)
        #expect(result.requests == trace.count)
        for row in result.rows {
            let expected = try Self.engineCounters(trace, row.configuration)
            #expect(row.counters == expected, "seed \(seed) \(row.configuration)")
            await Task.yield()
        }
    }

    @Test func aRefreshIsAnsweredAtOnceSoTheNextReadAtTheSameInstantIsFresh() throws {
        // k1 stale at 2s: the first read there is a stale hit whose refresh restamps it; the
        // reads after it at the same instant are hits. With stale=0 every read is stale.
        let trace = [TraceRequest(time: 0, id: 1), TraceRequest(time: 2_000, id: 1), TraceRequest(time: 2_000, id: 1),
                     TraceRequest(time: 2_000, id: 1), TraceRequest(time: 2_000, id: 2), TraceRequest(time: 2_000, id: 1)]
        let c = ReplayConfiguration(policy: .lru, max: nil, ttl: 10_000, stale: 1_000)
        let counters = Replay.run(trace, configurations: [c]).rows[0].counters
        #expect(counters == ReplayCounters(requests: 3, hits: 3, staleHits: 1, misses: 2, evictions: 0, expirations: 0))
        #expect(counters == (try Self.engineCounters(trace, c)))
        let always = ReplayConfiguration(policy: .lru, max: nil, ttl: 10_000, stale: 0)
        let stale = Replay.run(trace, configurations: [always]).rows[0].counters
        #expect(stale == ReplayCounters(requests: 6, hits: 0, staleHits: 4, misses: 2, evictions: 0, expirations: 0))
        #expect(stale == (try Self.engineCounters(trace, always)))
    }

    @Test func oneStackDistancePassGivesTheSameLRUCountsAsASimulationPerSize() {
        for seed in UInt64(10)..<14 {
            var rng = SeededGenerator(seed: seed)
            let trace = (0..<20_000).map { i in
                let a = Int.random(in: 0..<3_000, using: &rng), b = Int.random(in: 0..<3_000, using: &rng)
                return TraceRequest(time: Int64(i), id: UInt64(min(a, b)))
            }
            let configurations = [1, 2, 5, 50, 333, 1_000, 2_999, 5_000].map { ReplayConfiguration(policy: .lru, max: $0, ttl: nil, stale: nil) }
                + [ReplayConfiguration(policy: .lru, max: nil, ttl: nil, stale: nil)]
            let shared = Replay.run(trace, configurations: configurations, stackDistance: true)
            let separate = Replay.run(trace, configurations: configurations, stackDistance: false)
            #expect(shared == separate, "seed \(seed)")
        }
    }

    /// Sizes far past the trace (`max=4294967296,...`) took memory for the largest before the
    /// first request (64 GiB: the process died); the pass now starts with room for 32,768 keys and
    /// grows with the trace. 60,000 keys (past that room), against a simulation per size.
    @Test func aStackDistancePassWithSizesPastTheTraceGrowsWithTheTrace() {
        var rng = SeededGenerator(seed: 21)
        let trace = (0..<150_000).map { i in
            let a = Int.random(in: 0..<60_000, using: &rng), b = Int.random(in: 0..<60_000, using: &rng)
            return TraceRequest(time: Int64(i), id: UInt64(min(a, b)))
        }
        let configurations = [1, 40_000, 59_999, 1 << 32].map { ReplayConfiguration(policy: .lru, max: $0, ttl: nil, stale: nil) }
        let shared = Replay.run(trace, configurations: configurations, stackDistance: true)
        let separate = Replay.run(trace, configurations: configurations, stackDistance: false)
        #expect(shared == separate)
        // LRU's hits grow with its size.
        #expect(shared.rows[2].counters.hits <= shared.rows[3].counters.hits)
    }

    /// 120,000 keys: the id table grows from its first buckets past 2^16, where it goes from
    /// growing at half full to three quarters, and evicts through the grown table; every key must
    /// still be found. Each key read twice in a row hits once, whatever the policy and `max`; a
    /// loop over all keys twice hits every second read without a limit and never with one less.
    @Test func everyKeyIsFoundInATableGrownPastItsLoadLimits() {
        let n = 120_000
        let pairs = (0..<2 * n).map { TraceRequest(time: 0, id: UInt64($0 / 2)) }
        let loop = (0..<2 * n).map { TraceRequest(time: 0, id: UInt64($0 % n)) }
        for policy in [EvictionPolicy.lru, .fifo, .sieve, .lfu] {
            for max in [nil, 1_000, 100_000] as [Int?] {
                let counters = Replay.run(pairs, configurations: [ReplayConfiguration(policy: policy, max: max, ttl: nil, stale: nil)],
                                          stackDistance: false).rows[0].counters
                #expect(counters == ReplayCounters(requests: n, hits: n, misses: n, evictions: n - (max ?? n)), "\(policy) max=\(max.map(String.init) ?? "none")")
            }
            let all = Replay.run(loop, configurations: [ReplayConfiguration(policy: policy, max: nil, ttl: nil, stale: nil)]).rows[0].counters
            #expect(all == ReplayCounters(requests: n, hits: n, misses: n), "\(policy) without a limit")
            let short = Replay.run(loop, configurations: [ReplayConfiguration(policy: policy, max: n - 1, ttl: nil, stale: nil)]).rows[0].counters
            #expect(short == ReplayCounters(requests: 2 * n, hits: 0, misses: 2 * n, evictions: n + 1), "\(policy) max=\(n - 1)")
        }
    }

    @Test func withoutALimitEveryPolicyKeepsEverything() {
        let trace = Self.trace(seed: 9, count: 2_000, keys: 200)
        let rows = Replay.run(trace, configurations: [EvictionPolicy.lru, .fifo, .sieve, .lfu].map {
            ReplayConfiguration(policy: $0, max: nil, ttl: 60_000, stale: 5_000)
        }).rows
        #expect(Set(rows.map(\.counters)).count == 1)
        #expect(rows[0].counters.evictions == 0)
    }

    /// Several jobs share out each batch's passes; every pass still sees every batch in order, so
    /// the result, rows in the order asked, is one job's, for any number of jobs and any mix of
    /// passes (a shared stack-distance pass, a policy twice, ttl and stale, fewer passes than jobs).
    @Test(arguments: [UInt64(21), 22, 23])
    func jobsGiveTheResultOfOneJob(seed: UInt64) {
        let trace = Self.trace(seed: seed, count: 3 * Replay.batchSize + 17, keys: 400)
        var configurations: [ReplayConfiguration] = []
        for p in [EvictionPolicy.lru, .fifo, .sieve, .lfu, .lru] { for m in [1, 7, 60, nil] as [Int?] { for t in [nil, 30_000] as [Int64?] {
            configurations.append(ReplayConfiguration(policy: p, max: m, ttl: t, stale: t == nil ? nil : 5_000))
        } } }
        let one = Replay.run(trace, configurations: configurations)
        #expect(one.rows.map(\.configuration) == configurations)
        for jobs in [2, 3, 8, Replay.maxJobs] {
            #expect(Replay.run(trace, configurations: configurations, jobs: jobs) == one, "seed \(seed), jobs=\(jobs)")
            #expect(Replay.run(trace, configurations: Array(configurations.prefix(2)), jobs: jobs)
                    == Replay.run(trace, configurations: Array(configurations.prefix(2))), "seed \(seed), jobs=\(jobs)")
        }
    }
}
