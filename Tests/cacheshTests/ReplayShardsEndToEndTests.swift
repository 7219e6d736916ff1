import Foundation
import Testing

/// `replay ... shard=I/N` and `replay-merge` through the built executable: parts run as separate
/// processes by GNU parallel, joined into what one run prints and writes; every way a set of parts
/// can be wrong is one error line.
@Suite("Replay shards")
struct ReplayShardsEndToEndTests {
    /// Three CSV traces, one plain, one gzip- and one zstd-compressed, of different lengths.
    static func corpus(in sandbox: Sandbox) throws {
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("corpus"), withIntermediateDirectories: true)
        func csv(_ count: Int) -> String {
            "time,key\n" + ReplayEndToEndTests.skewedTrace(count, timed: true).replacingOccurrences(of: " ", with: ",")
        }
        try sandbox.write("corpus/a.csv", csv(3_000))
        try sandbox.write("b.csv", csv(5_000))
        try sandbox.write("c.csv", csv(4_000))
        try ReplayEndToEndTests.gzip("b.csv", in: sandbox, to: "corpus/b.csv.gz")
        try ReplayEndToEndTests.zstd("c.csv", in: sandbox, to: "corpus/c.csv.zst")
    }

    static let sweep = "policy=lru,fifo,sieve max=10,100,1000 ttl=none,1h"

    /// Runs `shards` parts of `command` at once with GNU parallel, each as its own process
    /// writing `parts/I.json`, as a job array would.
    static func runParts(_ command: String, shards: Int, in sandbox: Sandbox) async throws {
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("parts"), withIntermediateDirectories: true)
        let job = "\(Cachesh.binaryPath) --json -c '\(command) shard={}/\(shards)' > parts/{}.json"
        let run = try await Cachesh.run(["-j", "4", "--halt", "now,fail=1", job, ":::"] + (1...shards).map(String.init),
                                        in: sandbox.url, executable: "/usr/bin/parallel")
        #expect(run.status == 0, "\(run)")
    }

    @Test("N parts run as N processes by GNU parallel merge into one run's table, JSON and CSV, byte for byte",
          arguments: [1, 2, 7, 54, 60])
    func partsMergeIntoOneRun(shards: Int) async throws {
        let sandbox = try Sandbox()
        try Self.corpus(in: sandbox)
        let sweep = Self.sweep
        let one = try await Cachesh.run(["-c", "replay corpus \(sweep) csv=one.csv"], in: sandbox.url)
        let oneJSON = try await Cachesh.run(["--json", "-c", "replay corpus \(sweep)"], in: sandbox.url)
        #expect(one.status == 0 && one.stdout.hasPrefix("replayed 3000 requests of corpus/a.csv"), "\(one)")
        try await Self.runParts("replay corpus \(sweep)", shards: shards, in: sandbox)
        let merged = try await Cachesh.run(["-c", "replay-merge parts csv=one.csv"], in: sandbox.url)
        let mergedCSV = try String(contentsOf: sandbox.url.appendingPathComponent("one.csv"), encoding: .utf8)
        let mergedJSON = try await Cachesh.run(["--json", "-c", "replay-merge parts/*.json"], in: sandbox.url)
        #expect(merged == one)
        #expect(mergedJSON.stdout == oneJSON.stdout.replacingOccurrences(of: "{\"command\":\"replay\"", with: "{\"command\":\"replay-merge\""))
        let oneCSV = try await Cachesh.run(["-c", "replay corpus \(sweep) csv=one.csv"], in: sandbox.url)
        #expect(oneCSV == one)
        #expect(try String(contentsOf: sandbox.url.appendingPathComponent("one.csv"), encoding: .utf8) == mergedCSV)
    }

    @Test("a sweep of one trace merges into its table, csv= and plot=; a part reads only the traces its units name")
    func oneTraceWithPlot() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", ReplayEndToEndTests.skewedTrace(2_000, timed: false))
        let command = "replay t.txt policy=lru,sieve max=10..1000"
        let one = try await Cachesh.run(["-c", "\(command) csv=one.csv plot=one.svg"], in: sandbox.url)
        #expect(one.status == 0, "\(one)")
        let oneCSV = try Data(contentsOf: sandbox.url.appendingPathComponent("one.csv"))
        let oneSVG = try Data(contentsOf: sandbox.url.appendingPathComponent("one.svg"))
        try await Self.runParts(command, shards: 5, in: sandbox)
        let merged = try await Cachesh.run(["-c", "replay-merge parts/*.json csv=m.csv plot=m.svg"], in: sandbox.url)
        #expect(merged.stdout == one.stdout.replacingOccurrences(of: "one.csv", with: "m.csv").replacingOccurrences(of: "one.svg", with: "m.svg"))
        #expect(try Data(contentsOf: sandbox.url.appendingPathComponent("m.csv")) == oneCSV)
        #expect(try Data(contentsOf: sandbox.url.appendingPathComponent("m.svg")) == oneSVG)

        // A part prints what it did: its units, the traces it read, its rows.
        try Self.corpus(in: sandbox)
        let part = try await Cachesh.run(["-c", "replay corpus \(Self.sweep) shard=3/3"], in: sandbox.url)
        let lines = part.stdout.split(separator: "\n")
        #expect(lines.first == "shard 3/3: units 37 to 54 of 54 (a unit: one combination on one trace)")
        #expect(lines.dropFirst().first == "replayed 4000 requests of corpus/c.csv.zst over 1d6h50m of virtual time, namespace default", "\(part)")
        // The line of the part, the line of the one trace it read, the header and 18 rows.
        #expect(lines.count == 21)
        // Of one unit, part 2 of 2 has it (units ⌊1/2⌋ to ⌊2/2⌋), part 1 none.
        let idle = try await Cachesh.run(["-c", "replay t.txt max=10 shard=1/2"], in: sandbox.url)
        #expect(idle.stdout == "shard 1/2: no work (the sweep has 1 unit, fewer than its parts)\n")
    }

    @Test("a bad shard=, a part missing or given twice, parts of another sweep and a damaged part are one error line, nothing written")
    func badParts() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", ReplayEndToEndTests.skewedTrace(1_000, timed: false))
        try sandbox.write("u.txt", ReplayEndToEndTests.skewedTrace(1_500, timed: false))
        let command = "replay t.txt policy=lru,fifo max=10,100"
        try await Self.runParts(command, shards: 3, in: sandbox)
        let other = try await Cachesh.run(["--json", "-c", "replay t.txt policy=lru,sieve max=10,100 shard=2/3"], in: sandbox.url)
        try sandbox.write("other.json", other.stdout)
        let changed = try await Cachesh.run(["--json", "-c", "replay u.txt policy=lru,fifo max=10,100 shard=2/3"], in: sandbox.url)
        try sandbox.write("changed.json", changed.stdout.replacingOccurrences(of: "u.txt", with: "t.txt"))
        let part1 = try String(contentsOf: sandbox.url.appendingPathComponent("parts/1.json"), encoding: .utf8)
        try sandbox.write("twice.json", part1 + part1)
        try sandbox.write("moved.json", part1.replacingOccurrences(of: "\"combination\":0", with: "\"combination\":3"))
        try sandbox.write("human.txt", "shard 1/3: units 1 to 1 of 4\n")
        try sandbox.write("run.cachesh", """
            replay t.txt shard=0/3
            replay t.txt shard=4/3
            replay t.txt shard=1/10001
            replay t.txt shard=1-3
            replay t.txt max=10 shard=1/3 plot=p.svg
            replay-merge parts/1.json parts/3.json csv=rows.csv
            replay-merge parts/1.json parts/2.json parts/3.json parts/2.json csv=rows.csv
            replay-merge parts/1.json other.json parts/3.json csv=rows.csv
            replay-merge parts/1.json changed.json parts/3.json csv=rows.csv
            replay-merge twice.json csv=rows.csv
            replay-merge moved.json parts/2.json parts/3.json csv=rows.csv
            replay-merge human.txt csv=rows.csv
            replay-merge parts/*.json csv=parts/1.json
            now

            """)
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(run.stderr == """
            run.cachesh:1: error: replay: shard=0/3: the part is 1 to 3, not 0
            run.cachesh:2: error: replay: shard=4/3: the part is 1 to 3, not 4
            run.cachesh:3: error: replay: shard=1/10001: a sweep is split into 1 to 10000 parts, not 10001
            run.cachesh:4: error: replay: shard=1-3: write it I/N, the I-th of N parts (shard=1/4), whole numbers
            run.cachesh:5: error: replay: plot= draws the whole sweep: give it to replay-merge, not to a shard
            run.cachesh:6: error: replay-merge: shard 2/3 is missing: 2 of 3 parts given
            run.cachesh:7: error: replay-merge: shard 2/3 is given twice (parts/2.json and parts/2.json)
            run.cachesh:8: error: replay-merge: other.json is a part of another sweep than parts/1.json (its shard.combinations differs)
            run.cachesh:9: error: replay-merge: changed.json: t.txt has 1500 requests over 1499 ms, another part's 1000 over 999 ms (was the trace changed between the parts?)
            run.cachesh:10: error: replay-merge: twice.json: holds two shards' outputs; give each part its own file
            run.cachesh:11: error: replay-merge: moved.json: rows[0]: unit 3 is not one of this part's (0 to 1)
            run.cachesh:12: error: replay-merge: human.txt: no shard's output in it (write one with: cachesh --json -c 'replay ... shard=I/N' > FILE)
            run.cachesh:13: error: replay-merge: csv=parts/1.json names one of its shards; write the rows elsewhere

            """)
        #expect(run.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n" && run.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("rows.csv").path))
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("p.svg").path))
        let safe = try await Cachesh.run(["--safe", "-c", "replay-merge parts/*.json"], in: sandbox.url)
        #expect(safe.status != 0 && safe.stderr.contains("--safe"), "\(safe)")
    }
}
