// Snapshot and restore of a large cache (SPEC §5.2), against a bare Foundation JSONSerialization
// encode and decode of the same document in the same run.
//
//     swift run -c release --package-path Benchmarks SnapshotBenchmarks [ENTRIES]
//
// Snapshot = `makeSnapshot()` + pretty printing; restore = parsing + checking + rebuilding the
// engine. Both are reported in MB/s of the pretty document; the ratio is ours / Foundation's
// (goal: at least 0.5).
import CacheCore
import CacheServer
import Foundation

let entryCount = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000

/// Seconds taken by `body`, with its result.
func measure<T>(_ body: () throws -> T) rethrows -> (seconds: Double, result: T) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, result)
}

/// The same document as Foundation objects, for JSONSerialization.
func foundationObject(_ value: JSONValue) -> Any {
    switch value {
    case .null: return NSNull()
    case .bool(let b): return NSNumber(value: b)
    case .int(let n): return NSNumber(value: n)
    case .double(let d): return NSNumber(value: d)
    case .string(let s): return s
    case .array(let a): return a.map(foundationObject)
    case .object(let o): return o.mapValues(foundationObject)
    }
}

func megabytesPerSecond(_ bytes: Int, _ seconds: Double) -> Double { Double(bytes) / 1e6 / seconds }

func format(_ x: Double) -> String { String(format: "%.1f", x) }

// A cache of `entryCount` entries over three namespaces, with tags, a few stale and expired ones.
let origin = SimulatedServer()
let engine = CacheEngine(origin: origin)
_ = try engine.configure(CacheConfiguration(namespaces: [
    "feed": Policy(ttl: 45 * 60_000, stale: 5 * 60_000),
    "profile": Policy(ttl: 10 * 60_000, purgeable: true),
    "page": Policy(ttl: 60 * 60_000, max: entryCount),
]))
let names = ["feed", "profile", "page"]
let (fillSeconds, _) = measure {
    for i in 0..<entryCount {
        let value: JSONValue = .object([
            "id": .int(Int64(i)), "title": .string("item number \(i)"), "likes": .int(Int64(i % 97)),
            "author": .object(["id": .int(Int64(i % 1000)), "name": .string("user \(i % 1000)")]),
        ])
        engine.put("\(names[i % 3]):\(i)", value, tags: i % 10 == 0 ? ["recent"] : [])
        if i % 100_000 == 99_999 { try? engine.advance(by: 60_000) }
    }
}
print("cache: \(engine.count) entries (filled in \(format(fillSeconds)) s)")

// Ours: snapshot (document + pretty text), then restore (parse + check + rebuild).
let (snapshotSeconds, text) = measure { engine.makeSnapshot().prettyText() }
let bytes = text.utf8.count
let restored = CacheEngine(origin: SimulatedServer())
let (restoreSeconds, _) = try measure { try restored.restore(Snapshot(parsing: text), scheduleCommand: { _ in 0 }) }
precondition(restored.count == engine.count, "restore lost entries")

// Foundation: encode and decode the same document.
let document = engine.makeSnapshot()
let object = foundationObject(document)
let (encodeSeconds, data) = try measure {
    try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
}
let (decodeSeconds, _) = try measure { try JSONSerialization.jsonObject(with: data) }

let snapshotRate = megabytesPerSecond(bytes, snapshotSeconds)
let restoreRate = megabytesPerSecond(bytes, restoreSeconds)
let encodeRate = megabytesPerSecond(data.count, encodeSeconds)
let decodeRate = megabytesPerSecond(data.count, decodeSeconds)
print("document: \(format(Double(bytes) / 1e6)) MB (Foundation's: \(format(Double(data.count) / 1e6)) MB)")
print("snapshot: \(format(snapshotSeconds)) s, \(format(snapshotRate)) MB/s; JSONSerialization encode: \(format(encodeSeconds)) s, \(format(encodeRate)) MB/s; ratio \(String(format: "%.2f", snapshotRate / encodeRate))")
print("restore:  \(format(restoreSeconds)) s, \(format(restoreRate)) MB/s; JSONSerialization decode: \(format(decodeSeconds)) s, \(format(decodeRate)) MB/s; ratio \(String(format: "%.2f", restoreRate / decodeRate))")
