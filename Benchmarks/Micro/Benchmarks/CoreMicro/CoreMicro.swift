import Benchmark
import CacheCore
import CacheServer

/// The core's hot paths, measured by what does not move with the machine's load: allocations
/// (and, where the kernel exposes a counter, instructions). Wall time is printed, not checked.
///
/// Each benchmark does `scaledIterations` operations on a cache filled before the measurement.
/// Names use no spaces or brackets: the thresholds' file names are read back by name.
let benchmarks: @Sendable () -> Void = {
    let checked: [BenchmarkMetric] = [.mallocCountTotal, .instructions, .wallClock]
    Benchmark.defaultConfiguration = .init(
        metrics: checked,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 20,
        thresholds: [
            // Counts are exact for a given build; a few percent of slack absorbs the toolchain.
            // (The static check compares the p90 with the checked-in value.)
            .mallocCountTotal: .init(relative: [.p50: 2.0, .p90: 2.0], absolute: [.p50: 20, .p90: 20]),
            .instructions: .init(relative: [.p50: 3.0, .p90: 3.0]),
        ]
    )

    let n = 100_000
    let keys = (0..<n).map { "n:\($0)" }
    let others = (0..<n).map { "n:\(n + $0)" }

    func filled(max: Int?) -> CacheEngine {
        let engine = CacheEngine(origin: SimulatedServer())
        _ = try! engine.defineNamespace("n", PolicyChange(ttl: 3_600_000, max: .some(max)))
        for (i, key) in keys.enumerated() { engine.put(key, .int(Int64(i))) }
        return engine
    }

    Benchmark("engine-get-hit-100k-entries") { benchmark, engine in
        var i = 0
        for _ in benchmark.scaledIterations {
            blackHole(try! engine.get(keys[i]))
            i = (i &+ 7919) % n
        }
    } setup: {
        filled(max: nil)
    }

    Benchmark("engine-put-evicting-lru-100k-entries") { benchmark, engine in
        // Keys not cached, each put evicting the least recent entry.
        var i = 0
        for _ in benchmark.scaledIterations {
            blackHole(engine.put(others[i], .int(1)))
            i += 1
            if i == n { i = 0 }
        }
    } setup: {
        filled(max: n)
    }

    let small = #"{"active":true,"id":42,"likes":3,"name":"Ada Lovelace","score":4.5,"tags":["math","code"]}"#
    Benchmark("json-parse-small-object") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! JSONValue(parsing: small)) }
    }

    let value = try! JSONValue(parsing: small)
    Benchmark("json-compact-text-small-object") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(value.compactText) }
    }

    Benchmark("snapshot-and-restore-1000-entries", configuration: .init(scalingFactor: .one)) { (benchmark: Benchmark, engine: CacheEngine) in
        for _ in benchmark.scaledIterations {
            let document = engine.makeSnapshot()
            let copy = CacheEngine(origin: SimulatedServer())
            try! copy.restore(document)
            blackHole(copy)
        }
    } setup: { () -> CacheEngine in
        let engine = CacheEngine(origin: SimulatedServer())
        for i in 0..<1000 { engine.put("feed:\(i)", .object(["id": .int(Int64(i)), "likes": .int(Int64(i % 50))])) }
        return engine
    }
}
