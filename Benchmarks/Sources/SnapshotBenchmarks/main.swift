// Snapshot and restore of a large cache (SPEC §5.2), against Python's json on the same files in
// the same run (and, with --foundation, Foundation's JSONSerialization).
//
//     swift run -c release --package-path Benchmarks SnapshotBenchmarks [ENTRIES] [--runs N] [--foundation] [--python-pretty]
//     (--profile-restore N: only N restores of the pretty text, for a profiler)
//
// Both forms are measured, each against Python on the very same bytes:
// - pretty (the form of `snapshot FILE`, two-space indents) and compact (one line);
// - snapshot = `snapshotText(pretty:)`, the engine's state to text; Python's side is
//   `json.dumps(sort_keys=True)` of what `json.load` read from that file: compact is its C
//   encoder, pretty (`indent=2`, only with --python-pretty, slow) its Python encoder;
// - restore = `Snapshot(parsing:)` (parse + check) + `restore` (rebuild the engine) of a file's
//   text, against a bare `json.load` of the same file; "parse only" is `JSONValue(parsing:)`.
// Each figure is the best of --runs runs (default 3) in CPU time of the process (Python's too:
// `time.process_time`), so the load of other work on shared cores counts little; rates are
// MB/s of the text in question.
@_spi(Engine) import CacheCore
import CacheServer
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func flag(_ name: String) -> Bool {
    guard let i = arguments.firstIndex(of: name) else { return false }
    arguments.remove(at: i)
    return true
}
@MainActor func option(_ name: String) -> Int? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count, let n = Int(arguments[i + 1]) else { return nil }
    arguments.removeSubrange(i...i + 1)
    return n
}
let withFoundation = flag("--foundation")
let pythonPretty = flag("--python-pretty")
let runs = max(1, option("--runs") ?? 3)
/// Only restores of the pretty text, that many times (for a profiler), then exits.
let profileRestores = option("--profile-restore")
let entryCount = arguments.first.flatMap { Int($0) } ?? 1_000_000

/// CPU seconds this process has used: on shared cores, other work running meanwhile counts far
/// less than in wall time (Python's side is timed the same way, with `time.process_time`).
func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// The best time of `runs` runs of `body`, with the last result.
func best<T>(_ body: () throws -> T) rethrows -> (seconds: Double, result: T) {
    var fastest = Double.infinity
    var result: T?
    for _ in 0..<runs {
        let start = cpuSeconds()
        let r = try body()
        fastest = min(fastest, cpuSeconds() - start)
        result = r
    }
    return (fastest, result!)
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

func rate(_ bytes: Int, _ seconds: Double) -> Double { Double(bytes) / 1e6 / seconds }
func f1(_ x: Double) -> String { String(format: "%.1f", x) }
func f2(_ x: Double) -> String { String(format: "%.2f", x) }
func line(_ label: String, _ seconds: Double, _ bytes: Int) -> String {
    "\(label.padding(toLength: 50, withPad: " ", startingAt: 0)) \(String(format: "%6.2f", seconds)) s  \(String(format: "%7.1f", rate(bytes, seconds))) MB/s"
}

// A cache of `entryCount` entries over three namespaces, with tags, a few stale and expired ones.
let origin = SimulatedServer()
let engine = CacheEngine(origin: origin)
_ = try engine.configure(CacheConfiguration(namespaces: [
    "feed": Policy(ttl: 45 * 60_000, stale: 5 * 60_000),
    "profile": Policy(ttl: 10 * 60_000, purgeable: true),
    "page": Policy(ttl: 60 * 60_000, max: entryCount),
]))
let names = ["feed", "profile", "page"]
let fillStart = DispatchTime.now().uptimeNanoseconds
for i in 0..<entryCount {
    let value: JSONValue = .object([
        "id": .int(Int64(i)), "title": .string("item number \(i)"), "likes": .int(Int64(i % 97)),
        "author": .object(["id": .int(Int64(i % 1000)), "name": .string("user \(i % 1000)")]),
    ])
    engine.put("\(names[i % 3]):\(i)", value, tags: i % 10 == 0 ? ["recent"] : [])
    if i % 100_000 == 99_999 { try? engine.advance(by: 60_000) }
}
print("cache: \(engine.count) entries (filled in \(f1(Double(DispatchTime.now().uptimeNanoseconds - fillStart) / 1e9)) s), best of \(runs) runs")

if let count = profileRestores {
    let text = engine.snapshotText(pretty: true)
    for _ in 0..<count {
        let restored = CacheEngine(origin: SimulatedServer())
        try restored.restore(Snapshot(parsing: text), scheduleCommand: { _ in 0 })
        precondition(restored.count == engine.count, "restore lost entries")
    }
    exit(0)
}

struct Form {
    let name: String
    let pretty: Bool
    var text = ""
    var snapshotSeconds = 0.0
    var restoreSeconds = 0.0
    var parseSeconds = 0.0
    var decodeSeconds = 0.0
    var file: URL?
    var bytes: Int { text.utf8.count }
}

var forms = [Form(name: "pretty", pretty: true), Form(name: "compact", pretty: false)]
for k in forms.indices {
    let (snapshotSeconds, text) = best { engine.snapshotText(pretty: forms[k].pretty) }
    precondition(text == (forms[k].pretty ? engine.makeSnapshot().prettyText() : engine.makeSnapshot().compactText),
                 "snapshotText differs from the document printed")
    forms[k].text = text
    forms[k].snapshotSeconds = snapshotSeconds
    forms[k].parseSeconds = try best { try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) }.seconds
    forms[k].decodeSeconds = try best { try Snapshot(parsing: text) }.seconds
    // The engine is returned, so freeing the one before is not timed.
    forms[k].restoreSeconds = try best { () throws -> CacheEngine in
        let restored = CacheEngine(origin: SimulatedServer())
        try restored.restore(Snapshot(parsing: text), scheduleCommand: { _ in 0 })
        precondition(restored.count == engine.count, "restore lost entries")
        return restored
    }.seconds
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-snapshot-bench-\(getpid())-\(forms[k].name).json")
    try text.write(to: file, atomically: true, encoding: .utf8)
    forms[k].file = file
}
defer { for form in forms { if let file = form.file { try? FileManager.default.removeItem(at: file) } } }

// Python on the same files, in the same run: json.load of each, json.dumps of what it loaded
// (compact: its C encoder; pretty, indent=2: its Python encoder, only with --python-pretty).
let pythonScript = """
import json, sys, time
runs = int(sys.argv[1]); pretty_dumps = sys.argv[2] == '1'
for path, pretty in ((sys.argv[3], True), (sys.argv[4], False)):
    load = dump = float('inf')
    for _ in range(runs):
        t = time.process_time()
        with open(path, 'rb') as f: doc = json.load(f)
        load = min(load, time.process_time() - t)
        if pretty and not pretty_dumps: continue
        t = time.process_time()
        if pretty: out = json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=2)
        else: out = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(',', ':'))
        dump = min(dump, time.process_time() - t)
        size = len(out.encode())
    print(load, dump if dump != float('inf') else -1)
    del doc
"""
var python: [(load: Double, dump: Double)] = []
let process = Process()
process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
process.arguments = ["python3", "-c", pythonScript, String(runs), pythonPretty ? "1" : "0", forms[0].file!.path, forms[1].file!.path]
let pipe = Pipe()
process.standardOutput = pipe
if (try? process.run()) != nil {
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    for row in String(decoding: output, as: UTF8.self).split(separator: "\n") {
        let fields = row.split(separator: " ").compactMap { Double($0) }
        if fields.count == 2 { python.append((fields[0], fields[1])) }
    }
    if process.terminationStatus != 0 || python.count != 2 {
        print("python3: failed (status \(process.terminationStatus))")
        python = []
    }
} else {
    print("python3: not found, skipped")
}

for (k, form) in forms.enumerated() {
    print("")
    print("\(form.name): \(f1(Double(form.bytes) / 1e6)) MB, \(form.bytes / max(1, entryCount)) bytes per entry")
    print(line("  snapshot (snapshotText, \(form.name))", form.snapshotSeconds, form.bytes))
    print(line("  restore (parse + check + rebuild)", form.restoreSeconds, form.bytes))
    print(line("    of which parse + check (Snapshot(parsing:))", form.decodeSeconds, form.bytes))
    print(line("  parse only (JSONValue tree, for reference)", form.parseSeconds, form.bytes))
    guard python.count == 2 else { continue }
    let p = python[k]
    print(line("  python3 json.load, same file", p.load, form.bytes))
    print("  restore / json.load: \(f2(p.load / form.restoreSeconds))x (goal >= 2x)")
    if p.dump > 0 {
        let encoder = form.pretty ? "Python encoder, indent=2" : "C encoder"
        print(line("  python3 json.dumps (\(encoder), sorted keys)", p.dump, form.bytes))
        print("  snapshot / json.dumps: \(f2(p.dump / form.snapshotSeconds))x\(form.pretty ? "" : " (goal >= 1x)")")
    }
}

if withFoundation {
    // Foundation: encode and decode the same document (pretty); slow, so only when asked.
    let document = engine.makeSnapshot()
    let object = foundationObject(document)
    let (encodeSeconds, data) = try best { try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) }
    let (decodeSeconds, _) = try best { try JSONSerialization.jsonObject(with: data) }
    print("")
    print(line("JSONSerialization encode (pretty, sorted)", encodeSeconds, data.count) + "; snapshot ratio \(f2(encodeSeconds / forms[0].snapshotSeconds * Double(forms[0].bytes) / Double(data.count)))")
    print(line("JSONSerialization decode (its pretty text)", decodeSeconds, data.count) + "; restore ratio \(f2(rate(forms[0].bytes, forms[0].restoreSeconds) / rate(data.count, decodeSeconds)))")
}
