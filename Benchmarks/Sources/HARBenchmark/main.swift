// Reads every entry of a HAR log with the streaming reader, as `replay FILE.har` will, and prints
// the entries, warnings and body bytes it read and the time it took. Used by har-bench.py:
// `swift run -c release HARBenchmark FILE.har`.
import CacheCore
import CacheReplay
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

guard CommandLine.arguments.count == 2 else {
    print("usage: HARBenchmark FILE.har")
    exit(2)
}
let clock = ContinuousClock()
let start = clock.now
var entries = 0
var warnings = 0
var bodyBytes = 0
do {
    var log = HARLog(reader: try HARReader(path: CommandLine.arguments[1]))
    while let item = try log.next() {
        switch item {
        case .entry(let entry):
            entries += 1
            bodyBytes += entry.body.size ?? 0
        case .warning:
            warnings += 1
        }
    }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("entries=\(entries) warnings=\(warnings) body_bytes=\(bodyBytes) seconds=\(seconds) peak_buffer=\(log.reader.peakBufferBytes)")
} catch {
    print("\(CommandLine.arguments[1]): error: \(error)")
    exit(1)
}
