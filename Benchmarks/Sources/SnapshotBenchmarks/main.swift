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

// Python on the same document text, in the same run: `json.load` of the file (goal: restore at
// least 2x its rate) and compact `json.dumps(sort_keys=True)` of what it loaded, which Python
// does in its C encoder (it has none for indented output), against our compact snapshot
// (`makeSnapshot().compactText`; goal: at least its rate). Skipped when python3 is missing.
let (compactSeconds, compactText) = measure { engine.makeSnapshot().compactText }
let compactRate = megabytesPerSecond(compactText.utf8.count, compactSeconds)
let file = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-snapshot-bench-\(getpid()).json")
try text.write(to: file, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(at: file) }
let pythonScript = """
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1], 'rb') as f: doc = json.load(f)
load = time.perf_counter() - t
t = time.perf_counter()
out = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(',', ':'))
dump = time.perf_counter() - t
print(load, dump, len(out.encode()))
"""
let python = Process()
python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
python.arguments = ["python3", "-c", pythonScript, file.path]
let pipe = Pipe()
python.standardOutput = pipe
if (try? python.run()) != nil {
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    python.waitUntilExit()
    let fields = String(decoding: output, as: UTF8.self).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    if python.terminationStatus == 0, fields.count == 3 {
        let loadRate = megabytesPerSecond(bytes, fields[0])
        let dumpRate = megabytesPerSecond(Int(fields[2]), fields[1])
        print("python3 json.load: \(format(fields[0])) s, \(format(loadRate)) MB/s; restore / json.load: \(String(format: "%.2f", restoreRate / loadRate))x (goal >= 2x)")
        print("compact snapshot: \(format(compactSeconds)) s, \(format(compactRate)) MB/s")
        print("python3 json.dumps (C encoder, compact, sorted keys): \(format(fields[1])) s, \(format(dumpRate)) MB/s; compact snapshot / json.dumps: \(String(format: "%.2f", compactRate / dumpRate))x (goal >= 1x)")
    } else {
        print("python3: failed (status \(python.terminationStatus))")
    }
} else {
    print("python3: not found, skipped")
}
