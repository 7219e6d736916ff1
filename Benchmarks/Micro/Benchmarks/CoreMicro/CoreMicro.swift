import Benchmark
@_spi(Engine) import CacheCore
import CacheServer
import CacheShell
import Foundation

/// The core's hot paths, measured by what does not move with the machine's load: allocations,
/// and instructions as valgrind counts them (`valgrindInstructions`; and the CPU's own counter,
/// `instructions`, where the kernel exposes it). Wall time is printed, not checked.
///
/// Each benchmark does one scaled iteration's work (1,000 operations, or one round for the
/// benchmarks scaled `.one`) per iteration, on state built before the measurement. Names use no
/// spaces or brackets: the thresholds' file names are read back by name. See ../../README.md.
let benchmarks: @Sendable () -> Void = {
    for benchmark in microBenchmarks() { benchmark.register() }
}

/// The child under valgrind (`CORE_MICRO_COUNT` set), called as the executable loads, before
/// main (CoreMicroCount.c): does the count's work and exits.
@_cdecl("core_micro_count")
func coreMicroCount(_ spec: UnsafePointer<CChar>) {
    ValgrindCount.runCounted(String(cString: spec), in: microBenchmarks())
}

/// Every benchmark, by name (the count under valgrind looks its benchmark up here).
func microBenchmarks() -> [MicroBenchmark] { [
    MicroBenchmark("engine-get-hit-100k-entries",
                   // Mostly 0 per 1,000 gets; a recency-queue compaction (one new array) lands on
                   // a sampled iteration or not, so the count is checked within an absolute margin.
                   // So are the instructions: two runs of one build counted 585,000 and 601,000
                   // (the cause not found; other benchmarks repeat within 0.1%).
                   mallocs: .init(absolute: [.p90: 30]), valgrind: .init(absolute: [.p90: 25_000])) {
        let engine = filled(max: nil)
        var i = 0
        return .sync { n in
            for _ in 0..<n {
                blackHole(try! engine.get(keys[i]))
                i = (i &+ 7919) % keys.count
            }
        }
    },
    MicroBenchmark("engine-put-evicting-lru-100k-entries") {
        // Keys not cached, each put evicting the least recent entry.
        let engine = filled(max: keys.count)
        var i = 0
        return .sync { n in
            for _ in 0..<n {
                blackHole(engine.put(others[i], .int(1)))
                i += 1
                if i == others.count { i = 0 }
            }
        }
    },
    MicroBenchmark("json-parse-small-object") {
        .sync { n in for _ in 0..<n { blackHole(try! JSONValue(parsing: small)) } }
    },
    MicroBenchmark("json-compact-text-small-object") {
        let value = try! JSONValue(parsing: small)
        return .sync { n in for _ in 0..<n { blackHole(value.compactText) } }
    },
    MicroBenchmark("stored-value-round-trip-small-object") {
        // What a put stores and a read that needs the tree (a patch, a snapshot) gets back.
        let value = try! JSONValue(parsing: small)
        return .sync { n in for _ in 0..<n { blackHole(StoredValue(value).json) } }
    },
    MicroBenchmark("snapshot-and-restore-1000-entries", scalingFactor: .one) {
        // Through the document tree (an app's `makeSnapshot` and `restore(JSONValue)`).
        let engine = feed1000()
        return .sync { n in
            for _ in 0..<n {
                let document = engine.makeSnapshot()
                let copy = CacheEngine(origin: SimulatedServer())
                try! copy.restore(document)
                blackHole(copy)
            }
        }
    },
    MicroBenchmark("snapshot-text-and-restore-1000-entries", scalingFactor: .one) {
        // Through compact text, as `snapshot FILE` and `restore FILE` go: the bytes written,
        // read back into a `String`, parsed and applied to a new engine.
        let engine = feed1000()
        return .sync { n in
            for _ in 0..<n {
                let text = String(decoding: engine.snapshotBytes(pretty: false), as: UTF8.self)
                let snapshot = try! Snapshot(parsing: text)
                let copy = CacheEngine(origin: SimulatedServer())
                try! copy.restore(snapshot, scheduleCommand: { _ in -1 })
                blackHole(copy)
            }
        }
    },
    MicroBenchmark("shell-batch-1000-commands", scalingFactor: .one, isAsync: true) {
        // One round: a new session on a new cache runs a batch of 1,000 commands as `cachesh`
        // runs a script (commands lexed, parsed and dispatched, replies written to its output
        // buffer): `ns`, then puts of small objects and gets of the keys just put, half and half.
        let script = batchScript
        let first = await BatchRound.run(script)
        precondition(first > 0, "the batch of shell-batch-1000-commands failed")
        return .async { n in
            for _ in 0..<n { blackHole(await BatchRound.run(script)) }
        }
    },
] }

// MARK: Shared inputs

let keys = (0..<100_000).map { "n:\($0)" }
let others = (0..<100_000).map { "n:\(100_000 + $0)" }
let small = #"{"active":true,"id":42,"likes":3,"name":"Ada Lovelace","score":4.5,"tags":["math","code"]}"#

/// A cache of `keys`, each holding its index, in a namespace of at most `max` entries.
func filled(max: Int?) -> CacheEngine {
    let engine = CacheEngine(origin: SimulatedServer())
    _ = try! engine.defineNamespace("n", PolicyChange(ttl: 3_600_000, max: .some(max)))
    for (i, key) in keys.enumerated() { engine.put(key, .int(Int64(i))) }
    return engine
}

/// A cache of 1,000 small objects, for the snapshot benchmarks.
func feed1000() -> CacheEngine {
    let engine = CacheEngine(origin: SimulatedServer())
    for i in 0..<1000 { engine.put("feed:\(i)", .object(["id": .int(Int64(i)), "likes": .int(Int64(i % 50))])) }
    return engine
}

/// The 1,000 commands of `shell-batch-1000-commands` (after its `ns`), as `gen-script.py` writes
/// them for compare-redis.sh: a put of a small object, then a get of a key put before.
let batchScript: [UInt8] = {
    var lines = ["ns feed ttl=45m max=400"]
    var state: UInt64 = 42
    func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(bound))
    }
    var recent: [Int] = []
    for _ in 0..<500 {
        let i = next(500)
        recent.append(i)
        lines.append(#"put feed:\#(i) {"id":\#(i),"likes":\#(next(1000)),"title":"item \#(i)"}"#)
        lines.append("get feed:\(recent[next(recent.count)])")
    }
    return Array((lines.joined(separator: "\n") + "\n").utf8)
}()

enum BatchRound {
    /// Runs `script` in `session` as a batch does (no history, replies straight into the output
    /// buffer, emptied when full) and returns the bytes written.
    static func run(_ script: [UInt8], _ session: Session, on cache: isolated Cache) -> Int {
        let output = OutputBuffer()
        var written = 0
        output.flush = { [unowned output] in
            written += output.count
            output.removeAll()
        }
        session.keepsWholeHistory = false
        session.sink = { text, _ in written += text.utf8.count }
        session.directOutput = output
        _ = script.withUnsafeBufferPointer { session.run(SourceFile(name: "bench.cachesh", bytes: $0), on: cache) }
        return written + output.count + (session.anyFailed ? -1_000_000_000 : 0)
    }

    /// One round: `script` on a new session on a new cache; negative if a command failed.
    static func run(_ script: [UInt8]) async -> Int {
        await Session.with { session, cache in run(script, session, on: cache) }
    }
}

/// Runs `body` to its end from synchronous code that is not on the cooperative pool (a child
/// under valgrind counts on the main thread, before main), waiting for it.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let result = ResultBox<T>()
    Task.detached {
        result.value = await body()
        done.signal()
    }
    done.wait()
    return result.value!
}

/// `@unchecked Sendable`: `value` is written once, by the task in `blocking`, before it signals
/// the semaphore, and read only after `wait()` returns (the semaphore orders the two).
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

// MARK: Registration

struct MicroBenchmark {
    /// The work of `n` operations on state built by `prepare` (state kept between calls).
    enum Work {
        case sync((Int) -> Void)
        case async(@Sendable (Int) async -> Void)
    }

    let name: String
    let scalingFactor: BenchmarkScalingFactor
    /// How far the p90 of `mallocCountTotal` may move from its checked-in value.
    let mallocs: BenchmarkThresholds
    /// How far the instructions counted under valgrind may move from their checked-in value.
    let valgrind: BenchmarkThresholds
    /// Whether `prepare` returns `.async` work (known before it runs, to register the benchmark).
    let isAsync: Bool
    /// Builds the benchmark's state (outside any measurement) and returns its work.
    let prepare: @Sendable () async -> Work

    init(_ name: String, scalingFactor: BenchmarkScalingFactor = .kilo, isAsync: Bool = false,
         mallocs: BenchmarkThresholds = .init(relative: [.p90: 2.0]), valgrind: BenchmarkThresholds = .init(relative: [.p90: 1.5]),
         prepare: @escaping @Sendable () async -> Work) {
        self.name = name
        self.scalingFactor = scalingFactor
        self.isAsync = isAsync
        self.mallocs = mallocs
        self.valgrind = valgrind
        self.prepare = prepare
    }

    var configuration: Benchmark.Configuration {
        .init(
            metrics: [.mallocCountTotal, .instructions, ValgrindCount.metric, .wallClock],
            warmupIterations: 1,
            scalingFactor: scalingFactor,
            maxDuration: .seconds(2),
            maxIterations: 20,
            // Checked against Thresholds/ by `swift package benchmark thresholds check`: a move
            // past these either way fails it (benchmarkThresholdRegression when worse,
            // benchmarkThresholdImprovement when better). Thresholds/ holds no `instructions`
            // (the CPU's counter differs between machines and this VM has none), so that margin
            // applies only to a file given one by hand. Wall time is never checked.
            thresholds: [
                .mallocCountTotal: mallocs,
                ValgrindCount.metric: valgrind,
                .instructions: .init(relative: [.p90: 3.0]),
            ]
        )
    }

    /// Registers the benchmark: setup builds the state and counts the instructions of one scaled
    /// iteration under valgrind; each iteration does the work, then records that count.
    func register() {
        let metric = ValgrindCount.metric
        let setup = { () async throws -> Prepared in
            let instructions = try ValgrindCount.instructions(of: self)
            return Prepared(work: await prepare(), instructions: instructions)
        }
        if isAsync {
            Benchmark(name, configuration: configuration) { (benchmark: Benchmark, prepared: Prepared) async in
                guard case .async(let work) = prepared.work else { fatalError("\(name): not async work") }
                await work(benchmark.scaledIterations.count)
                benchmark.stopMeasurement()
                benchmark.measurement(metric, prepared.instructions)
            } setup: { try await setup() }
        } else {
            Benchmark(name, configuration: configuration) { (benchmark: Benchmark, prepared: Prepared) in
                guard case .sync(let work) = prepared.work else { fatalError("\(name): not sync work") }
                work(benchmark.scaledIterations.count)
                benchmark.stopMeasurement()
                benchmark.measurement(metric, prepared.instructions)
            } setup: { try await setup() }
        }
    }
}

/// A benchmark's state (a class: the harness hands it to each iteration as `Any`, and taking a
/// class back out of `Any` copies nothing) and its instruction count under valgrind.
final class Prepared {
    let work: MicroBenchmark.Work
    let instructions: Int
    init(work: MicroBenchmark.Work, instructions: Int) {
        self.work = work
        self.instructions = instructions
    }
}

// MARK: Instructions under valgrind

/// Instruction counts that do not depend on the machine: the benchmark's own executable, run
/// under `valgrind --tool=callgrind` with one scaled iteration and with three (each after one of
/// warm-up), and the difference of the two totals halved. Start-up, setup and exit cancel out;
/// `SWIFT_DETERMINISTIC_HASHING` keeps the hash tables' layout, and so their probes, the same
/// from run to run. A virtual machine without the CPU's counter (`perf stat -e instructions`
/// says `<not supported>`) still gets a checked instruction count this way.
enum ValgrindCount {
    static let metric = BenchmarkMetric.custom("valgrindInstructions")
    static let environmentKey = "CORE_MICRO_COUNT"

    /// Instructions of one scaled iteration of `benchmark`.
    static func instructions(of benchmark: MicroBenchmark) throws -> Int {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("core-micro-\(getpid())-\(benchmark.name)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A copy without the debug sections: valgrind 3.19 gives up on the DWARF 5 of a release
        // build with -g ("unhandled dwarf2 abbrev form"); the code is the same.
        // It finds the libraries beside the original (the malloc interposer) through the path.
        let original = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let executable = directory.appendingPathComponent("CoreMicro").path
        var environment = ProcessInfo.processInfo.environment
        try run(["objcopy", "--strip-debug", original, executable], environment: environment, what: "objcopy (binutils)")
        let libraries = URL(fileURLWithPath: original).deletingLastPathComponent().path
        environment["LD_LIBRARY_PATH"] = [libraries, environment["LD_LIBRARY_PATH"]].compactMap { $0 }.joined(separator: ":")
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        let one = try total(benchmark.name, rounds: 1, executable: executable, directory: directory, environment: environment)
        let three = try total(benchmark.name, rounds: 3, executable: executable, directory: directory, environment: environment)
        return (three - one) / 2
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The instructions callgrind counts in a whole run of `executable` (this one's copy) doing
    /// `rounds` scaled iterations of `name`.
    static func total(_ name: String, rounds: Int, executable: String, directory: URL,
                      environment: [String: String]) throws -> Int {
        let out = directory.appendingPathComponent("callgrind.out.\(rounds)")
        var environment = environment
        environment[environmentKey] = "\(name):\(rounds)"
        try run(["valgrind", "--tool=callgrind", "-q", "--callgrind-out-file=\(out.path)", executable],
                environment: environment, what: "valgrind (scripts/install-deps.sh installs it)")
        let text = try String(contentsOf: out, encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix("summary:") || line.hasPrefix("totals:") {
            if let count = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) { return count }
        }
        throw Failure(description: "no total in callgrind's output for \(name)")
    }

    /// Runs `arguments` (found on PATH) to its end; throws with what it printed unless it exits 0.
    static func run(_ arguments: [String], environment: [String: String], what: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(arguments.prefix(2).joined(separator: " ")) exited \(process.terminationStatus)"
                + " (needs \(what)): \(said.suffix(2000))")
        }
    }

    /// In the child valgrind runs (before main): one scaled iteration of warm-up, then `rounds`,
    /// then exit.
    static func runCounted(_ spec: String, in all: [MicroBenchmark]) -> Never {
        let parts = spec.split(separator: ":")
        guard parts.count == 2, let rounds = Int(parts[1]), let benchmark = all.first(where: { $0.name == parts[0] }) else {
            FileHandle.standardError.write(Data("\(environmentKey)=\(spec): no such benchmark\n".utf8))
            exit(3)
        }
        let per = benchmark.scalingFactor.rawValue
        let prepare = benchmark.prepare
        blocking {
            switch await prepare() {
            case .sync(let work):
                work(per)
                work(per * rounds)
            case .async(let work):
                await work(per)
                await work(per * rounds)
            }
        }
        exit(0)
    }
}
