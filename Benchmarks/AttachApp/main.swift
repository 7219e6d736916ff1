// The app of the attach benchmarks (Benchmarks/attach-bench.py, `make bench-attach`): a live Cache
// of 1,000 entries, with or without CacheInspector. A target of the root package, so a release
// build of cachesh has built all it links; a synchronous main, as callgrind needs (valgrind dies
// where an async main parks the main thread, in libdispatch's sigsuspend).
//
//     attach-bench-app calls MODE ROUNDS     100,000 puts per round, all in one hop onto the cache
//                                            (MODE none: no inspector; idle: started, nobody
//                                            attached; watched: waits for a line on standard
//                                            input once a shell is attached, then runs). Prints
//                                            `ns_per_call N` (wall time) and whether the shell was
//                                            still attached at the end.
//     attach-bench-app serve                 the inspector for `keys` and `watch`: reads commands
//                                            on standard input: `burst N GAP_MS` puts bench:I
//                                            with {"t": wall-clock µs} every GAP_MS, printing
//                                            `t I µs` for each on standard output as well.
//
// Each says `ready PATH` (its socket, in /tmp/cachesh-$UID/; `-` with no inspector) first.
import CacheCore
import CacheInspector
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif


func say(_ line: String) {
    var line = line + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

/// Wall-clock µs since the epoch (the script compares it with its own clock).
func wallMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}

func monotonicNanos() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

let cache = Cache(fetch: { keys in
    var values: [String: JSONValue] = [:]
    for key in keys { values[key] = .int(0) }
    return values
})
let keys = (0..<1_000).map { "k:\($0)" }
do {
    try cache.withIsolation { cache in
        _ = try cache.defineNamespace("k", PolicyChange(ttl: 3_600_000))
        _ = try cache.defineNamespace("bench", PolicyChange(ttl: 3_600_000))
        for key in keys { cache.put(key, .int(0)) }
    }
} catch {
    say("error \(error)")
    exit(1)
}

let arguments = CommandLine.arguments
do {
    switch arguments.count > 1 ? arguments[1] : "" {
    case "calls":
        let mode = arguments.count > 2 ? arguments[2] : "none"
        let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1
        var inspector: CacheInspector?
        if mode != "none" {
            inspector = try CacheInspector.start(cache: cache, announce: { _ in })
            say("ready \(inspector!.address)")
        } else {
            say("ready -")
        }
        if mode == "watched" { _ = readLine() }
        let started = monotonicNanos()
        for _ in 0..<rounds {
            cache.withIsolation { cache in
                for i in 0..<100_000 { cache.put(keys[i % keys.count], .int(Int64(i))) }
            }
        }
        let elapsed = monotonicNanos() - started
        say("ns_per_call \(Double(elapsed) / Double(rounds * 100_000))")
        say("attached \(cache.withIsolation { $0.hasChangeTap })")
        inspector?.stop()
    case "serve":
        let inspector = try CacheInspector.start(cache: cache, announce: { _ in })
        say("ready \(inspector.address)")
        while let line = readLine() {
            let words = line.split(separator: " ")
            guard words.first == "burst", words.count == 3, let count = Int(words[1]), let gap = Int(words[2]) else { continue }
            for i in 0..<count {
                let t = wallMicros()
                cache.withIsolation { cache in _ = cache.put("bench:\(i % 100)", .object(["t": .int(t)])) }
                say("t \(i) \(t)")
                usleep(useconds_t(gap * 1_000))
            }
            say("burst done")
        }
        inspector.stop()
    default:
        say("usage: attach-bench-app calls none|idle|watched ROUNDS | serve")
        exit(2)
    }
} catch {
    say("error \(error)")
    exit(1)
}
