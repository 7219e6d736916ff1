import Foundation

// Release-build benchmarks of the cache core. `swift run -c release CoreBenchmarks [NAME...]`
// with NAME among get, put, policies, expiry, entity, json, recorder, memory (all when none is given);
// `--entries N` sets the cache size of get, put, policies and memory; `--rounds N` the rounds of get and put;
// `--long-keys` keys of get, put and policies longer than 15 bytes.

let all = ["get", "put", "policies", "expiry", "entity", "json", "recorder", "memory"]
var arguments = Array(CommandLine.arguments.dropFirst())
/// `--entries N` changes the cache size of get and put (default 1,000,000), e.g. to compare with an in-cache size.
var entries = 1_000_000
if let i = arguments.firstIndex(of: "--entries"), i + 1 < arguments.count, let n = Int(arguments[i + 1]) {
    entries = n
    arguments.removeSubrange(i...i + 1)
}
/// `--rounds N` sets how many rounds of get and put alternate with their baseline's (default 7):
/// 1 makes a run short enough to count instructions and cache misses under valgrind.
if let i = arguments.firstIndex(of: "--rounds"), i + 1 < arguments.count, let n = Int(arguments[i + 1]), n > 0 {
    Timing.alternatingRounds = n
    arguments.removeSubrange(i...i + 1)
}
/// `--long-keys` makes the keys of get, put and policies longer than 15 bytes (`n:user-profile-N`),
/// their bytes out of line, instead of `n:N`.
if let i = arguments.firstIndex(of: "--long-keys") {
    EngineBenchmarks.keyInfix = "user-profile-"
    arguments.remove(at: i)
}
let chosen = arguments.isEmpty ? all : arguments
for name in chosen where !all.contains(name) {
    print("unknown benchmark \(name); choose among \(all.joined(separator: ", "))")
    exit(2)
}

#if DEBUG
print("warning: a debug build; run with -c release for meaningful figures")
#endif

if chosen.contains("get") || chosen.contains("put") {
    EngineBenchmarks.getAndPut(n: entries, get: chosen.contains("get"), put: chosen.contains("put"))
}
if chosen.contains("policies") { EngineBenchmarks.policies(n: entries) }
if chosen.contains("expiry") { EngineBenchmarks.expiry(totals: [10_000, 100_000, 1_000_000]) }
if chosen.contains("entity") { EngineBenchmarks.entityAndTag(totals: [100_000, 1_000_000]) }
if chosen.contains("json") { JSONBenchmarks.run() }
if chosen.contains("recorder") { RecorderBenchmarks.run() }
if chosen.contains("memory") { MemoryBenchmarks.run(n: entries) }
