import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `replay FILE` through the built executable: the table, JSON rows, CSV and SVG files, a
/// session left as it was, bad traces and `--safe`.
@Suite("Replay")
struct ReplayEndToEndTests {
    /// a b a c a b d a: LRU of 2 hits twice, FIFO of 2 once, neither hits at 1.
    static let trace = "a\nb\na\nc\na\nb\nd\na\n"

    @Test("a sweep prints one row per combination: policy, max, ttl, stale and the counters")
    func sweepTable() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        let run = try await Cachesh.run(["-c", "replay trace.txt max=1,2 policy=lru,fifo ttl=none stale=none"], in: sandbox.url)
        #expect(run == Outcome(stdout: """
            replayed 8 requests of trace.txt over 7ms of virtual time, namespace default
            policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            lru       1  none   none         8     0           0       8          7            0     0.0000
            lru       2  none   none         6     2           0       6          4            0     0.2500
            fifo      1  none   none         8     0           0       8          7            0     0.0000
            fifo      2  none   none         7     1           0       7          5            0     0.1250

            """, stderr: "", status: 0))
    }

    @Test("--json prints one object whose rows carry the documented fields; defaults come from ns=NAME")
    func jsonRows() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", "0 a\n1 a\n2 a\n70 a\n")
        let run = try await Cachesh.run(["--json", "-c", "ns feed ttl=1m stale=1s max=5; replay trace.txt ns=feed format=timed"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any])
        #expect(object["command"] as? String == "replay")
        #expect(object["trace_requests"] as? Int == 4)
        #expect(object["duration_ms"] as? Int == 70_000)
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(Set(rows[0].keys) == ["policy", "max", "ttl_ms", "stale_ms", "requests", "hits", "stale_hits", "misses",
                                      "evictions", "expirations", "hit_ratio"])
        // 0s miss; 1s stale hit + refresh (restamped at 1s); 2s stale hit + refresh; 70s expired: miss.
        #expect(rows[0]["policy"] as? String == "lru")
        #expect(rows[0]["max"] as? Int == 5 && rows[0]["ttl_ms"] as? Int == 60_000 && rows[0]["stale_ms"] as? Int == 1_000)
        #expect(rows[0]["hits"] as? Int == 0 && rows[0]["stale_hits"] as? Int == 2 && rows[0]["misses"] as? Int == 2)
        #expect(rows[0]["requests"] as? Int == 4 && rows[0]["expirations"] as? Int == 1)
    }

    @Test("max=LOW..HIGH sweeps ten sizes per decade, HIGH last")
    func sizeRange() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        let run = try await Cachesh.run(["--json", "-c", "replay trace.txt max=10..40,40,none ttl=none"], in: sandbox.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.map { $0["max"] as? Int } == [10, 13, 16, 20, 25, 32, 40, nil])
    }

    @Test("the session's cache, clock, statistics and server log are unchanged by a replay")
    func sessionUnchanged() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        let before = "ns t max=2\nput t:x 1\nget t:x\nadvance 1s\n"
        let after = "stats\nnow\nkeys\nserver log\n"
        let plain = try await Cachesh.run(["-c", before + after], in: sandbox.url)
        let replayed = try await Cachesh.run(["-c", before + "replay trace.txt ns=t max=1,2,3 policy=lru,sieve\n" + after], in: sandbox.url)
        #expect(plain.status == 0 && replayed.status == 0)
        let table = replayed.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let withoutReplay = table.filter { !$0.hasPrefix("replayed ") && !$0.hasPrefix("policy ") && !$0.hasPrefix("lru ") && !$0.hasPrefix("sieve ") }
        #expect(withoutReplay.joined(separator: "\n") == plain.stdout)
    }

    @Test("csv= and plot= write the rows and an SVG chart of hit ratio against max")
    func csvAndPlot() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        let run = try await Cachesh.run(["-c", "replay trace.txt max=1,2 policy=lru,fifo ttl=none csv=rows.csv plot=curve.svg"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("wrote rows.csv\nwrote curve.svg\n"))
        let csv = try String(contentsOf: sandbox.url.appendingPathComponent("rows.csv"), encoding: .utf8)
        #expect(csv == """
            policy,max,ttl_ms,stale_ms,requests,hits,stale_hits,misses,evictions,expirations,hit_ratio
            lru,1,,,8,0,0,8,7,0,0.0000
            lru,2,,,6,2,0,6,4,0,0.2500
            fifo,1,,,8,0,0,8,7,0,0.0000
            fifo,2,,,7,1,0,7,5,0,0.1250

            """)
        let svg = try String(contentsOf: sandbox.url.appendingPathComponent("curve.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        // A line per policy in each panel: hit ratio, and requests to the server.
        #expect(svg.components(separatedBy: "<polyline").count == 5)
        #expect(svg.contains(">lru</text>") && svg.contains(">fifo</text>"))
    }

    @Test("plot= of 8 series with long labels: the legend inside the chart, a dash pattern and marker each, a requests panel")
    func plotOfASweep() async throws {
        let sandbox = try Sandbox()
        var trace = ""
        // A request a minute over 31 keys: at 20 entries and more, stale refreshes are the load.
        for i in 0..<400 { trace += "\(i * 60) k\((i * i) % 31)\n" }
        try sandbox.write("trace.txt", trace)
        let run = try await Cachesh.run(["--json", "-c", "replay trace.txt format=timed policy=fifo,sieve max=5,10,20,40 "
                                         + "ttl=1h30m15s,2h45m30s stale=45m30s,1h15m45s plot=sweep.svg"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        let svg = try String(contentsOf: sandbox.url.appendingPathComponent("sweep.svg"), encoding: .utf8)
        let chart = SVGText(svg)
        let (width, height) = try #require(chart.viewBox)
        // 8 series, each label 30 characters or more; every legend entry inside the viewBox, its
        // text's width estimated at 0.6 em a character (a sans-serif font's letters and digits).
        let legend = chart.texts(in: "legend")
        #expect(legend.count == 8)
        #expect(legend.allSatisfy { $0.text.count >= 30 }, "\(legend.map(\.text))")
        for text in legend {
            #expect(text.x >= 0 && text.x + Double(text.text.count) * 0.6 * 12 <= width && text.y <= height && text.y >= 0,
                    "\(text) outside 0 0 \(width) \(height)")
        }
        for text in chart.texts(in: nil) where text.size == 14 {
            #expect(text.x + Double(text.text.count) * 0.6 * 14 <= width, "the title fits: \(text)")
        }
        // Each series its own dash pattern and marker, in both panels and in the legend.
        for panel in ["hit-ratio", "requests", "legend"] {
            let strokes = chart.elements("polyline|line", in: panel).filter { $0.contains("stroke-width=\"2\"") }
            #expect(strokes.count == 8, "\(panel): \(strokes.count)")
            #expect(Set(strokes.map { SVGText.attribute("stroke-dasharray", of: $0) ?? "solid" }).count == 8, "\(panel)")
        }
        let markers = chart.elements("path", in: "legend").map { SVGText.attribute("d", of: $0)!.filter(\.isLetter) + SVGText.attribute("stroke", of: $0)! }
        #expect(Set(markers).count == 8, "\(markers)")
        // The requests panel, beside the hit ratio's, holds each row's requests to the server.
        let requests = chart.titles(in: "requests")
        let ratios = chart.titles(in: "hit-ratio")
        #expect(requests.count == rows.count && ratios.count == rows.count)
        for row in rows {
            let name = "\(row["policy"]!) ttl=\(Self.words(row["ttl_ms"]!)) stale=\(Self.words(row["stale_ms"]!)), max \(row["max"]!)"
            #expect(requests.contains("\(name): \(row["requests"]!) requests to the server"), "\(name) in \(requests)")
            #expect(ratios.contains("\(name): hit ratio \(String(format: "%.4f", row["hit_ratio"] as! Double))"), "\(name) in \(ratios)")
        }
        let hitRatio = try #require(chart.group("hit-ratio")), requestsPanel = try #require(chart.group("requests"))
        #expect(hitRatio.contains(">hit ratio</text>") && requestsPanel.contains(">requests to the server</text>"))
    }

    /// A duration of the sweep as the legend says it.
    static func words(_ ms: Any) -> String {
        switch ms as! Int {
        case 5_415_000: "1h30m15s"
        case 9_930_000: "2h45m30s"
        case 2_730_000: "45m30s"
        case 4_545_000: "1h15m45s"
        case let other: "\(other)ms"
        }
    }

    @Test("a malformed line stops the replay with the trace's file and line, and writes nothing")
    func malformedLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", "10 a\n11 b\n9 c\n")
        try sandbox.write("run.cachesh", "replay trace.txt format=timed max=1,2 csv=rows.csv plot=p.svg\nstats\n")
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(run.status == 1)
        #expect(run.stderr == "trace.txt:3: error: time goes backwards: 9s after 11s (sort the trace by time)\n")
        #expect(run.stdout.hasPrefix("counter           total"))  // the script goes on: stats runs
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(files == ["run.cachesh", "trace.txt"])
        let json = try await Cachesh.run(["--json", "-c", "replay trace.txt format=timed"], in: sandbox.url)
        #expect(json.stdout == "{\"column\":null,\"command\":\"replay\",\"error\":\"time goes backwards: 9s after 11s (sort the trace by time)\",\"file\":\"trace.txt\",\"line\":3,\"ok\":false}\n")
    }

    @Test("bad options are refused at the word that carries them")
    func badOptions() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        try sandbox.write("run.cachesh", """
            replay trace.txt max=10,0
            replay trace.txt policy=lru,arc
            replay trace.txt policy=optimal
            replay trace.txt format=parquet
            replay trace.txt ttl=5x
            replay missing.txt
            replay trace.txt key=path
            replay trace.txt max=50..50
            replay trace.txt max=none plot=p.svg

            """)
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(run.stderr == """
            run.cachesh:1: error: replay: max=0: use a whole number of entries, at least 1, a range LOW..HIGH, or none
            run.cachesh:2: error: replay: policy=arc: use lru, fifo, sieve, lfu or optimal
            run.cachesh:3: error: replay: policy=optimal needs each request's next access: use a format=oracle trace
            run.cachesh:4: error: replay: format=parquet: use keys, timed, csv, oracle or har
            run.cachesh:5: error: \(try await Self.durationError("5x")) (or none)
            run.cachesh:6: error: replay: missing.txt: cannot read: No such file or directory
            run.cachesh:7: error: replay: key= names a CSV column; this trace is format=keys
            run.cachesh:8: error: replay: max=50..50: a range is LOW..HIGH, whole numbers with 1 <= LOW < HIGH
            run.cachesh:9: error: replay: plot= draws hit ratio against max: give max= a size (this namespace has no max)

            """)
    }

    /// The session's state after a command: what `keys`, `now` and `stats` print.
    static let probe = "keys\nnow\nstats\n"

    @Test("a FIFO, a device or a directory without a trace given as the trace is refused at once, the session unchanged")
    func notARegularFile() async throws {
        let sandbox = try Sandbox()
        #expect(mkfifo(sandbox.url.appendingPathComponent("pipe.txt").path, 0o644) == 0)
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("dir.txt"), withIntermediateDirectories: false)
        // A FIFO with no writer used to block the open for ever; /dev/zero read as oracle
        // records (all zero, a valid record each) never ended.
        let before = try await Cachesh.run(["-c", "put a 1\n" + Self.probe], in: sandbox.url)
        let run = try await Cachesh.run(["-c", "put a 1\nreplay pipe.txt\nreplay /dev/zero format=oracle\nreplay dir.txt\n" + Self.probe],
                                        in: sandbox.url, timeLimit: 20)
        #expect(run.stderr == """
            -c:2:1: error: replay: pipe.txt: cannot read: is a FIFO, not a regular file
            -c:3:1: error: replay: /dev/zero: cannot read: is a character device, not a regular file
            -c:4:1: error: replay: dir.txt holds no trace (no regular file)

            """)
        #expect(run.stdout == before.stdout && run.status == 1)
    }

    @Test("a UTF-8 byte order mark is not part of the first key or column name")
    func byteOrderMark() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bom.txt", "\u{FEFF}a\nb\na\n")
        try sandbox.write("bom.csv", "\u{FEFF}key,time\r\na,1\r\nb,2\r\na,3\r\n")
        let run = try await Cachesh.run(["-c", "replay bom.txt max=2 ttl=none\nreplay bom.csv max=2 ttl=none"], in: sandbox.url)
        #expect(run == Outcome(stdout: """
            replayed 3 requests of bom.txt over 2ms of virtual time, namespace default
            policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            lru       2  none   none         2     1           0       2          0            0     0.3333
            replayed 3 requests of bom.csv over 2s of virtual time, namespace default
            policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            lru       2  none   none         2     1           0       2          0            0     0.3333

            """, stderr: "", status: 0))
    }

    @Test("header=no reads a headerless CSV (libCacheSim's twitter layout) with key= and time= column numbers")
    func headerlessCSV() async throws {
        let sandbox = try Sandbox()
        // timestamp, key, key size, value size, client id, operation, ttl; no header line.
        try sandbox.write("twitter.csv", """
            0,q:1,10,20,7,get,0
            1,"q,2",10,20,7,get,0
            1,q:1,10,20,7,get,0
            5,q:3,10,20,7,get,0
            9,"q,2",10,20,7,get,0

            """)
        let run = try await Cachesh.run(["--json", "-c", "replay twitter.csv header=no key=2 time=1 max=2 ttl=none"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(object["trace_requests"] as? Int == 5 && object["duration_ms"] as? Int == 9_000)
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == 1 && rows[0]["hits"] as? Int == 1 && rows[0]["misses"] as? Int == 4)
        // A header named by number: the same counts, the header line skipped.
        try sandbox.write("named.csv", "t,k\n0,a\n1,b\n2,a\n")
        let numbered = try await Cachesh.run(["-c", "replay named.csv key=2 time=1 max=2 ttl=none"], in: sandbox.url)
        #expect(numbered.stdout.contains("replayed 3 requests of named.csv over 2s"), "\(numbered)")
        let errors = try await Cachesh.run(["-c", """
            replay twitter.csv
            replay twitter.csv header=no
            replay twitter.csv header=no key=2 time=stamp
            replay twitter.csv header=no key=8
            replay twitter.csv key=0
            replay twitter.csv header=maybe
            replay named.csv format=keys header=no
            replay named.csv format=keys time-unit=ms
            replay named.csv format=timed step=1s
            replay named.csv format=oracle step=1s
            """ + "\n" + Self.probe], in: sandbox.url)
        let plain = try await Cachesh.run(["-c", Self.probe], in: sandbox.url)
        #expect(errors.stderr == """
            twitter.csv:1: error: no column "key" in the header (it has 0, q:1, 10, 20, 7, get, 0); name the key column with key=NAME or key=NUMBER, and give header=no if the first line is a row
            -c:2:1: error: replay: header=no: name the key column by its number (key=2)
            -c:3:1: error: replay: header=no: name the time column by its number (time=2)
            twitter.csv:1: error: key=8: no column 8; the first row has 7 columns
            -c:5:1: error: replay: key=0: columns are numbered from 1
            -c:6:1: error: replay: header=maybe: use yes or no
            -c:7:1: error: replay: header= is for a CSV trace; this trace is format=keys
            -c:8:1: error: replay: time-unit= is for a trace with times; a format=keys trace has none (the clock moves step= per request)
            -c:9:1: error: replay: step= is for a trace without times; a format=timed trace has them
            -c:10:1: error: replay: step= is for a trace without times; a format=oracle trace has them

            """)
        #expect(errors.stdout == plain.stdout)
    }

    @Test("csv= and plot= are both checked before the replay: one that cannot be written leaves the other unwritten")
    func outputsCheckedFirst() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("dir"), withIntermediateDirectories: false)
        let run = try await Cachesh.run(["-c", """
            replay trace.txt max=1,2 csv=rows.csv plot=dir
            replay trace.txt max=1,2 csv=missing/rows.csv plot=p.svg
            replay trace.txt max=1,2 csv=trace.txt
            replay trace.txt max=1,2 csv=same plot=same
            replay trace.txt max=1,2 csv=new.svg plot=./new.svg
            replay trace.txt max=1,2 csv=dir/../new.svg plot=new.svg
            """], in: sandbox.url)
        #expect(run == Outcome(stdout: "", stderr: """
            -c:1:1: error: cannot write dir: is a directory
            -c:2:1: error: cannot write missing/rows.csv: No such file or directory
            -c:3:1: error: replay: csv=trace.txt names the trace itself; write the rows elsewhere
            -c:4:1: error: replay: csv= and plot= name the same file
            -c:5:1: error: replay: csv= and plot= name the same file
            -c:6:1: error: replay: csv= and plot= name the same file

            """, status: 1))
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(files == ["dir", "trace.txt"])
        #expect(try String(contentsOf: sandbox.url.appendingPathComponent("trace.txt"), encoding: .utf8) == Self.trace)
    }

    @Test("UTF-16 text or a binary file read as text is refused at its first line, saying so")
    func notTextTrace() async throws {
        let sandbox = try Sandbox()
        try Data("\u{FEFF}key,time\na,1\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
            .write(to: sandbox.url.appendingPathComponent("utf16.csv"))
        // Two oracleGeneral records (time 1, id 7, size 1, next access -1), read as text.
        var record = Data([1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]) + Data(repeating: 0xFF, count: 8)
        record += record
        try record.write(to: sandbox.url.appendingPathComponent("t.bin"))
        try Data("a\nb\0c\n".utf8).write(to: sandbox.url.appendingPathComponent("nul.txt"))
        let run = try await Cachesh.run(["-c", """
            replay utf16.csv
            replay t.bin format=keys
            replay t.bin format=csv
            replay nul.txt
            """ + "\n" + Self.probe], in: sandbox.url)
        let plain = try await Cachesh.run(["-c", Self.probe], in: sandbox.url)
        #expect(run.stderr == """
            utf16.csv:1: error: the trace is UTF-16 text: convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)
            t.bin:1: error: a NUL byte: this is a binary file, not format=keys text (an oracleGeneral trace takes format=oracle)
            t.bin:1: error: a NUL byte: this is a binary file, not format=csv text (an oracleGeneral trace takes format=oracle)
            nul.txt:2: error: a NUL byte: this is a binary file, not format=keys text (an oracleGeneral trace takes format=oracle)

            """)
        #expect(run.stdout == plain.stdout && run.status == 1)
    }

    /// `gzip -c FILE` in `sandbox`, written to `FILE.gz` (gzip is part of every Debian system).
    static func gzip(_ file: String, in sandbox: Sandbox, to target: String? = nil) throws {
        try compress(file, with: "/bin/gzip", in: sandbox, to: target ?? file + ".gz")
    }

    /// `zstd -c FILE` in `sandbox`, written to `FILE.zst` (Debian's zstd, scripts/install-deps.sh).
    static func zstd(_ file: String, in sandbox: Sandbox, options: [String] = [], to target: String? = nil) throws {
        try compress(file, with: "/usr/bin/zstd", options: options, in: sandbox, to: target ?? file + ".zst")
    }

    static func compress(_ file: String, with tool: String, options: [String] = [], in sandbox: Sandbox, to target: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-q", "-c"] + options + [file]
        process.currentDirectoryURL = sandbox.url
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        try data.write(to: sandbox.url.appendingPathComponent(target))
    }

    @Test("a gzip- or zstd-compressed trace is read as a stream: the rows of the plain file, its format by the name before .gz or .zst",
          arguments: ["gz", "zst"])
    func compressedTrace(suffix: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", Self.skewedTrace(10_000, timed: true))
        try sandbox.write("t.csv", "time,key\n" + Self.skewedTrace(10_000, timed: true).replacingOccurrences(of: " ", with: ","))
        try Self.oracleTrace(10_000).write(to: sandbox.url.appendingPathComponent("t.oracleGeneral"))
        for file in ["t.txt", "t.csv", "t.oracleGeneral"] {
            if suffix == "gz" { try Self.gzip(file, in: sandbox) } else { try Self.zstd(file, in: sandbox) }
        }
        let sweeps = ["t.txt format=timed policy=lru,fifo,sieve max=10,100,none ttl=none,1h stale=none,1m",
                      "t.csv policy=lfu,lru max=10,100 ttl=none stale=none",
                      "t.oracleGeneral policy=optimal,lru max=10,100 ttl=none stale=none"]
        for sweep in sweeps {
            let file = String(sweep.prefix { $0 != " " })
            let plain = try await Cachesh.run(["--json", "-c", "replay \(sweep) csv=rows.csv"], in: sandbox.url)
            let plainCSV = try Data(contentsOf: sandbox.url.appendingPathComponent("rows.csv"))
            #expect(plain.status == 0 && plain.stdout.contains("\"trace_requests\":10000"), "\(plain)")
            for jobs in [1, 2] {
                let compressed = sweep.replacingOccurrences(of: file, with: file + "." + suffix)
                let run = try await Cachesh.run(["--json", "-c", "replay \(compressed) jobs=\(jobs) csv=rows.csv"], in: sandbox.url)
                #expect(run.stdout == plain.stdout.replacingOccurrences(of: "\"\(file)\"", with: "\"\(file).\(suffix)\""), "\(compressed)")
                #expect(try Data(contentsOf: sandbox.url.appendingPathComponent("rows.csv")) == plainCSV)
            }
        }
    }

    @Test("gzip members one after another read as one trace; a cut or damaged gzip file is one error line, nothing written")
    func gzipMembersAndDamage() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", Self.skewedTrace(20_000, timed: false))
        try sandbox.write("twice.txt", Self.skewedTrace(20_000, timed: false) + Self.skewedTrace(20_000, timed: false))
        try Self.gzip("t.txt", in: sandbox)
        let member = try Data(contentsOf: sandbox.url.appendingPathComponent("t.txt.gz"))
        try (member + member).write(to: sandbox.url.appendingPathComponent("members.txt.gz"))
        let twice = try await Cachesh.run(["-c", "replay twice.txt max=10,1000 policy=lru,sieve"], in: sandbox.url)
        let members = try await Cachesh.run(["-c", "replay members.txt.gz max=10,1000 policy=lru,sieve"], in: sandbox.url)
        #expect(twice.status == 0 && twice.stdout.hasPrefix("replayed 40000 requests"), "\(twice)")
        #expect(members.stdout == twice.stdout.replacingOccurrences(of: "of twice.txt ", with: "of members.txt.gz "))
        // Zero bytes after a member (a block's padding, which gunzip skips) are no data, between
        // two members too; a byte that is neither zero nor a member's start is damage.
        try (member + Data(count: 100) + member + Data(count: 4096)).write(to: sandbox.url.appendingPathComponent("padded.txt.gz"))
        let padded = try await Cachesh.run(["-c", "replay padded.txt.gz max=10,1000 policy=lru,sieve"], in: sandbox.url)
        #expect(padded.stdout == twice.stdout.replacingOccurrences(of: "of twice.txt ", with: "of padded.txt.gz "), "\(padded)")
        try (member + Data(count: 10) + Data("junk".utf8)).write(to: sandbox.url.appendingPathComponent("junk.txt.gz"))
        let junk = try await Cachesh.run(["-c", "replay junk.txt.gz"], in: sandbox.url)
        #expect(junk.status == 1 && junk.stderr.hasPrefix("-c:1:1: error: replay: junk.txt.gz: cannot read: the gzip data "), "\(junk)")
        // Cut in the middle, a byte of the compressed data changed, its checksum changed, and
        // gzip's magic number alone.
        try member.prefix(member.count / 2).write(to: sandbox.url.appendingPathComponent("cut.txt.gz"))
        var flipped = member
        flipped[member.count / 2] ^= 0x55
        try flipped.write(to: sandbox.url.appendingPathComponent("flipped.txt.gz"))
        var checksum = member
        checksum[member.count - 6] ^= 0x01
        try checksum.write(to: sandbox.url.appendingPathComponent("checksum.txt.gz"))
        try Data([0x1F, 0x8B]).write(to: sandbox.url.appendingPathComponent("magic.gz"))
        try Data("\u{FEFF}key,time\na,1\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
            .write(to: sandbox.url.appendingPathComponent("utf16.csv"))
        try Self.gzip("utf16.csv", in: sandbox)
        try sandbox.write("run.cachesh", """
            replay cut.txt.gz csv=rows.csv jobs=2
            replay flipped.txt.gz csv=rows.csv
            replay checksum.txt.gz csv=rows.csv
            replay magic.gz csv=rows.csv
            replay utf16.csv.gz csv=rows.csv
            now

            """)
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 6, "\(run)")
        #expect(lines[0] == "run.cachesh:1: error: replay: cut.txt.gz: cannot read: the gzip data ends early (the file is cut short)")
        #expect(lines[1].hasPrefix("run.cachesh:2: error: replay: flipped.txt.gz: cannot read: the gzip data is damaged ("), "\(lines[1])")
        #expect(lines[2] == "run.cachesh:3: error: replay: checksum.txt.gz: cannot read: the gzip data is damaged (incorrect data check)")
        #expect(lines[3] == "run.cachesh:4: error: replay: magic.gz: cannot read: the gzip data ends early (the file is cut short)")
        #expect(lines[4] == "utf16.csv.gz:1: error: the trace is UTF-16 text: convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)")
        #expect(run.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n" && run.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("rows.csv").path))
    }

    @Test("zstd frames one after another read as one trace; a cut or damaged zstd file, or a frame asking for a window past 128 MiB, is one error line, nothing written")
    func zstdFramesAndDamage() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.txt", Self.skewedTrace(20_000, timed: false))
        try sandbox.write("twice.txt", Self.skewedTrace(20_000, timed: false) + Self.skewedTrace(20_000, timed: false))
        try Self.zstd("t.txt", in: sandbox)
        let frame = try Data(contentsOf: sandbox.url.appendingPathComponent("t.txt.zst"))
        try (frame + frame).write(to: sandbox.url.appendingPathComponent("frames.txt.zst"))
        let twice = try await Cachesh.run(["-c", "replay twice.txt max=10,1000 policy=lru,sieve"], in: sandbox.url)
        let frames = try await Cachesh.run(["-c", "replay frames.txt.zst max=10,1000 policy=lru,sieve jobs=2"], in: sandbox.url)
        #expect(twice.status == 0 && twice.stdout.hasPrefix("replayed 40000 requests"), "\(twice)")
        #expect(frames.stdout == twice.stdout.replacingOccurrences(of: "of twice.txt ", with: "of frames.txt.zst "))
        // Cut in the middle, its checksum changed (zstd writes one by default; a frame without
        // one whose bytes changed may decompress to other lines without an error), the magic
        // number alone, and a frame header asking for a 2 GiB window (window
        // descriptor 0xA8: exponent 21 + 10 = 31), which is refused, not allocated.
        try frame.prefix(frame.count / 2).write(to: sandbox.url.appendingPathComponent("cut.txt.zst"))
        var checksum = frame
        checksum[frame.count - 2] ^= 0x01
        try checksum.write(to: sandbox.url.appendingPathComponent("checksum.txt.zst"))
        try Data([0x28, 0xB5, 0x2F, 0xFD]).write(to: sandbox.url.appendingPathComponent("magic.zst"))
        try Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xA8, 0x01, 0x00, 0x00]).write(to: sandbox.url.appendingPathComponent("window.zst"))
        try sandbox.write("run.cachesh", """
            replay cut.txt.zst csv=rows.csv jobs=2
            replay checksum.txt.zst csv=rows.csv
            replay magic.zst csv=rows.csv
            replay window.zst csv=rows.csv
            now

            """)
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5, "\(run)")
        #expect(lines[0] == "run.cachesh:1: error: replay: cut.txt.zst: cannot read: the zstd data ends early (the file is cut short)")
        #expect(lines[1] == "run.cachesh:2: error: replay: checksum.txt.zst: cannot read: the zstd data is damaged (Restored data doesn't match checksum)")
        #expect(lines[2] == "run.cachesh:3: error: replay: magic.zst: cannot read: the zstd data ends early (the file is cut short)")
        #expect(lines[3] == "run.cachesh:4: error: replay: window.zst: cannot read: the zstd data is damaged (Frame requires too much memory for decoding)")
        #expect(run.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n" && run.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("rows.csv").path))
    }

    @Test("times are limited by their value, not their digits: Unix times in microseconds (16 digits) replay")
    func microsecondUnixTimes() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("us.timed", "1732500000000000 a\n1732500000500000 a\n1732500002000000.5 b\n")
        try sandbox.write("us.csv", "time,key\n1732500000000000,a\n1732500000500000,a\n")
        // The last time the clock takes (Int64.max / 4 µs), and one past it.
        try sandbox.write("edge.timed", "0 a\n2305843009213693951 a\n")
        try sandbox.write("past.timed", "0 a\n2305843009213693952 a\n")
        try sandbox.write("huge.timed", "0 a\n99999999999999999999 a\n")
        let run = try await Cachesh.run(["-c", """
            replay us.timed format=timed time-unit=us ttl=none
            replay us.csv time-unit=us ttl=none
            replay edge.timed format=timed time-unit=us ttl=none
            replay past.timed format=timed time-unit=us ttl=none
            replay huge.timed format=timed time-unit=us ttl=none
            """], in: sandbox.url)
        let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("replayed") }
        #expect(lines == ["replayed 3 requests of us.timed over 2s of virtual time, namespace default",
                          "replayed 2 requests of us.csv over 500ms of virtual time, namespace default",
                          "replayed 2 requests of edge.timed over 26687997d19h13s693ms of virtual time, namespace default"])
        #expect(run.stderr == """
            past.timed:2: error: time "2305843009213693952" is out of range
            huge.timed:2: error: time "99999999999999999999" is out of range

            """)
    }

    @Test("an empty trace, or a CSV with only its header, replays no request: one row per combination, every counter 0")
    func emptyTrace() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("empty.txt", "")
        try sandbox.write("header.csv", "time,key\r\n")
        let run = try await Cachesh.run(["-c", "replay empty.txt max=1 ttl=none\nreplay header.csv max=1 ttl=none"], in: sandbox.url)
        #expect(run == Outcome(stdout: """
            replayed 0 requests of empty.txt over 0ms of virtual time, namespace default
            policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            lru       1  none   none         0     0           0       0          0            0     0.0000
            replayed 0 requests of header.csv over 0ms of virtual time, namespace default
            policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            lru       1  none   none         0     0           0       0          0            0     0.0000

            """, stderr: "", status: 0))
    }

    static func durationError(_ text: String) async throws -> String {
        let run = try await Cachesh.run(["-c", "advance \(text)"])
        return String(run.stderr.dropFirst("-c:1:1: error: ".count).dropLast())
    }

    @Test("--safe refuses replay: it reads a file")
    func safeRefuses() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        let run = try await Cachesh.run(["--safe", "-c", "replay trace.txt"], in: sandbox.url)
        #expect(run == Outcome(stdout: "", stderr: "-c:1:1: error: --safe: commands may not read files (trace.txt)\n", status: 1))
    }

    @Test("the example sweep script runs over the shipped traces")
    func exampleSweep() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let run = try await Cachesh.run([root.appendingPathComponent("Examples/traces/sweep.cachesh").path])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
        #expect(run.stdout.components(separatedBy: "\nreplayed ").count == 4)  // three replays after the ns line
        #expect(run.stdout.contains("replayed 2117 requests of feed-day.csv"))
    }

    /// A seeded trace of `count` requests over a skewed set of keys, one a 37 ms step apart or at
    /// the same instant: many batches (4096 requests each), so rounds of jobs follow one another.
    static func skewedTrace(_ count: Int, timed: Bool) -> String {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var out = ""
        var time = 0
        for _ in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let a = Int(state >> 33) % 3_000, b = Int(state >> 13 & 0xFFFFF) % 3_000
            if state & 3 != 0 { time += 37 }
            out += timed ? "\(time) k\(min(a, b))\n" : "k\(min(a, b))\n"
        }
        return out
    }

    /// The same `count` requests as oracleGeneral records, with each request's next access.
    static func oracleTrace(_ count: Int) -> Data {
        var state: UInt64 = 7
        var ids: [UInt64] = []
        for _ in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            ids.append(UInt64(min(Int(state >> 33) % 2_000, Int(state >> 13 & 0xFFFFF) % 2_000)))
        }
        var nextAccess = [Int64](repeating: -1, count: count)
        var seen: [UInt64: Int] = [:]
        for i in stride(from: count - 1, through: 0, by: -1) {
            if let later = seen[ids[i]] { nextAccess[i] = Int64(later) }
            seen[ids[i]] = i
        }
        var data = Data()
        for i in 0..<count {
            withUnsafeBytes(of: UInt32(i / 3).littleEndian) { data.append(contentsOf: $0) }
            withUnsafeBytes(of: ids[i].littleEndian) { data.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(1).littleEndian) { data.append(contentsOf: $0) }
            withUnsafeBytes(of: nextAccess[i].littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    @Test("jobs=N prints and writes the same bytes as jobs=1: the table, --json, csv= and plot=, rows in combination order")
    func jobsGiveTheSameOutput() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("keys.txt", Self.skewedTrace(10_000, timed: false))
        try sandbox.write("timed.txt", Self.skewedTrace(10_000, timed: true))
        try Self.oracleTrace(10_000).write(to: sandbox.url.appendingPathComponent("t.oracleGeneral"))
        let sweeps = [
            // A curve: LRU's sizes share one stack-distance pass, the other policies a pass each.
            "keys.txt policy=lru,fifo,sieve,lfu max=1..300,none ttl=none stale=none",
            // ttl and stale on the trace's times; a policy given twice gives its rows twice.
            "timed.txt format=timed policy=lru,sieve,lru max=5,50,none ttl=none,30s stale=none,5s",
            "t.oracleGeneral policy=optimal,lru,lfu,fifo max=10,100,1000 ttl=none stale=none",
            // One combination: nothing to share out.
            "keys.txt policy=lfu max=100 ttl=none stale=none",
        ]
        for sweep in sweeps {
            var first: [String]?
            for jobs in [1, 2, 3, 64] {
                let human = try await Cachesh.run(["-c", "replay \(sweep) jobs=\(jobs) csv=rows.csv plot=rows.svg"], in: sandbox.url)
                let json = try await Cachesh.run(["--json", "-c", "replay \(sweep) jobs=\(jobs)"], in: sandbox.url)
                #expect(human.status == 0 && human.stderr.isEmpty && json.status == 0 && json.stderr.isEmpty, "\(human)\n\(json)")
                let outputs = [human.stdout, json.stdout,
                               try String(contentsOf: sandbox.url.appendingPathComponent("rows.csv"), encoding: .utf8),
                               try String(contentsOf: sandbox.url.appendingPathComponent("rows.svg"), encoding: .utf8)]
                if let first {
                    for (name, (expected, actual)) in zip(["table", "--json", "csv=", "plot="], zip(first, outputs)) {
                        #expect(actual == expected, "replay \(sweep) jobs=\(jobs): its \(name) differs from jobs=1")
                    }
                } else {
                    first = outputs
                }
            }
            #expect(first?[0].contains("replayed ") == true)
        }
    }

    @Test("with jobs=2 a malformed line far into the trace stops the replay as with one job: its line, nothing written")
    func jobsStopAtAMalformedLineAsOneJobDoes() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.skewedTrace(20_000, timed: true) + "5 late\n" + Self.skewedTrace(5_000, timed: true))
        let script = "replay trace.txt format=timed policy=lru,fifo,sieve max=10,100 ttl=none stale=none csv=rows.csv plot=p.svg JOBS\nnow\n"
        var first: Outcome?
        for jobs in ["", " jobs=2", " jobs=3"] {
            try sandbox.write("run.cachesh", script.replacingOccurrences(of: " JOBS", with: jobs))
            let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
            if let first {
                #expect(run == first, "jobs=\(jobs)")
            } else {
                #expect(run.status == 1 && run.stderr.hasPrefix("trace.txt:20001: error: time goes backwards: 5s after "), "\(run)")
                #expect(run.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n")
                first = run
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
            #expect(files == ["run.cachesh", "trace.txt"])
        }
    }

    @Test("a bad jobs= is one error line at its word, before the trace is read or a file written")
    func badJobs() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        let values = ["0", "65", "-1", "1.5", "two", "", "99999999999999999999", "2,3", "1..4", "none"]
        try sandbox.write("run.cachesh", values.map { "replay trace.txt jobs=\($0) csv=rows.csv\n" }.joined() + "now\n")
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(run.status == 1)
        #expect(run.stderr == values.enumerated().map { i, value in
            "run.cachesh:\(i + 1): error: replay: jobs=\(value): use a whole number of jobs from 1 to 64\n"
        }.joined())
        #expect(run.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n")
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(files == ["run.cachesh", "trace.txt"])
        let json = try await Cachesh.run(["--json", "-c", "replay trace.txt jobs=0"], in: sandbox.url)
        #expect(json.stdout.contains("\"error\":\"replay: jobs=0: use a whole number of jobs from 1 to 64\""), "\(json)")
    }

    @Test("a transcript whose replay asks for jobs=2 verifies byte for byte")
    func jobsUnderVerify() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("trace.txt", Self.trace)
        try sandbox.write("sweep.transcript", """
            cachesh> replay trace.txt max=1,2 policy=lru,fifo ttl=none stale=none jobs=2
            replayed 8 requests of trace.txt over 7ms of virtual time, namespace default
            policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            lru       1  none   none         8     0           0       8          7            0     0.0000
            lru       2  none   none         6     2           0       6          4            0     0.2500
            fifo      1  none   none         8     0           0       8          7            0     0.0000
            fifo      2  none   none         7     1           0       7          5            0     0.1250

            """)
        let run = try await Cachesh.run(["--verify", "sweep.transcript"], in: sandbox.url)
        #expect(run == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(run)")
    }

    @Test("a directory replays each of its regular files in name order: a line per trace, a row per (trace, combination)")
    func directoryOfTraces() async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("traces/sub"), withIntermediateDirectories: true)
        try sandbox.write("traces/b.txt", Self.trace)
        try sandbox.write("traces/a.txt", "x\ny\nx\n")
        try sandbox.write("traces/.hidden", "not a trace\u{1}\n")
        try sandbox.write("traces/sub/c.txt", "skipped\n")
        let run = try await Cachesh.run(["-c", "replay traces max=1,2 policy=lru,fifo ttl=none stale=none csv=rows.csv"], in: sandbox.url)
        #expect(run == Outcome(stdout: """
            replayed 3 requests of traces/a.txt over 2ms of virtual time, namespace default
            replayed 8 requests of traces/b.txt over 7ms of virtual time, namespace default
            trace         policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            traces/a.txt  lru       1  none   none         3     0           0       3          2            0     0.0000
            traces/a.txt  lru       2  none   none         2     1           0       2          0            0     0.3333
            traces/a.txt  fifo      1  none   none         3     0           0       3          2            0     0.0000
            traces/a.txt  fifo      2  none   none         2     1           0       2          0            0     0.3333
            traces/b.txt  lru       1  none   none         8     0           0       8          7            0     0.0000
            traces/b.txt  lru       2  none   none         6     2           0       6          4            0     0.2500
            traces/b.txt  fifo      1  none   none         8     0           0       8          7            0     0.0000
            traces/b.txt  fifo      2  none   none         7     1           0       7          5            0     0.1250
            wrote rows.csv

            """, stderr: "", status: 0))
        let csv = try String(contentsOf: sandbox.url.appendingPathComponent("rows.csv"), encoding: .utf8)
        #expect(csv.hasPrefix("file,policy,max,ttl_ms,stale_ms,requests,hits,stale_hits,misses,evictions,expirations,hit_ratio\n"
                              + "traces/a.txt,lru,1,,,3,0,0,3,2,0,0.0000\n"), "\(csv)")
        #expect(csv.split(separator: "\n").count == 9)
        let json = try await Cachesh.run(["--json", "-c", "replay traces/ max=2 jobs=2"], in: sandbox.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let traces = try #require(object["traces"] as? [[String: Any]])
        #expect(traces.map { $0["file"] as? String } == ["traces/a.txt", "traces/b.txt"])
        #expect(traces.map { $0["trace_requests"] as? Int } == [3, 8])
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.map { $0["file"] as? String } == ["traces/a.txt", "traces/b.txt"])
        #expect(rows.map { $0["hits"] as? Int } == [1, 2])
    }

    @Test("a pattern replays the files it matches; no match, a match that is not a file, or plot= with several traces is one error line")
    func patternOfTraces() async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("t/dir.txt"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try sandbox.write("t/one.txt", Self.trace)
        try sandbox.write("t/two.txt", Self.trace)
        try sandbox.write("t/skip.csv", "key\na\n")
        let run = try await Cachesh.run(["-c", "replay t/*o.txt max=2 ttl=none"], in: sandbox.url)
        #expect(run.status == 0 && run.stdout.hasPrefix("""
            replayed 8 requests of t/two.txt over 7ms of virtual time, namespace default
            trace      policy  max   ttl  stale  requests  hits  stale_hits  misses  evictions  expirations  hit_ratio
            t/two.txt  lru       2  none   none         6     2           0       6          4            0     0.2500

            """), "\(run)")
        let both = try await Cachesh.run(["-c", "replay t/[ot]*.txt max=2 ttl=none"], in: sandbox.url)
        #expect(both.stdout.contains("of t/one.txt ") && both.stdout.contains("of t/two.txt "), "\(both)")
        try sandbox.write("run.cachesh", """
            replay t/*.gz
            replay t/*.txt
            replay empty
            replay t/*o.txt policy=optimal
            replay t max=2 plot=p.svg
            now

            """)
        let bad = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(bad.stderr == """
            run.cachesh:1: error: replay: t/*.gz matches no file
            run.cachesh:2: error: replay: t/*.txt matches t/dir.txt, which is not a regular file
            run.cachesh:3: error: replay: empty holds no trace (no regular file)
            run.cachesh:4: error: replay: policy=optimal needs each request's next access: use a format=oracle trace (t/two.txt is format=keys)
            run.cachesh:5: error: replay: plot= draws one trace; give it one FILE, not a directory or pattern

            """)
        #expect(bad.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n" && bad.status == 1)
    }

    @Test("help replay shows the synopsis and every option")
    func help() async throws {
        let run = try await Cachesh.run(["-c", "help replay"])
        #expect(run.status == 0)
        for option in ["ns=NAME", "format=F", "time-unit=U", "policy=P,...", "max=N,...", "jobs=N", "plot=FILE", "oracle"] {
            #expect(run.stdout.contains(option), "\(option)")
        }
    }
}

/// Just enough of an SVG file to read back what a chart drew: its viewBox, and the elements, texts
/// and titles of a group (`<g id="...">`, as `ReplayPlot` writes them, not nested).
struct SVGText {
    let svg: String
    init(_ svg: String) { self.svg = svg }

    var viewBox: (Double, Double)? {
        guard let box = Self.attribute("viewBox", of: svg) else { return nil }
        let numbers = box.split(separator: " ").compactMap { Double($0) }
        return numbers.count == 4 ? (numbers[2], numbers[3]) : nil
    }

    /// The text of group `id`, from its start tag to its end.
    func group(_ id: String) -> String? {
        guard let start = svg.range(of: "<g id=\"\(id)\">"), let end = svg.range(of: "</g>", range: start.upperBound..<svg.endIndex) else { return nil }
        return String(svg[start.lowerBound..<end.upperBound])
    }

    /// The start tags of the elements named by `names` (`a|b`) in group `id`.
    func elements(_ names: String, in id: String) -> [String] {
        let text = group(id) ?? ""
        let pattern = try! Regex("<(\(names))\\b[^>]*>")
        return text.matches(of: pattern).map { String(text[$0.range]) }
    }

    /// The `<text>` elements of group `id` (of the whole chart with nil): position, size, content.
    func texts(in id: String?) -> [(x: Double, y: Double, size: Double, text: String)] {
        let text = id.map { group($0) ?? "" } ?? svg
        return text.matches(of: /<text ([^>]*)>([^<]*)<\/text>/).map { match in
            let tag = " " + String(match.output.1)
            return (Double(Self.attribute("x", of: tag) ?? "") ?? -1, Double(Self.attribute("y", of: tag) ?? "") ?? -1,
                    Double(Self.attribute("font-size", of: tag) ?? "12") ?? 12, String(match.output.2))
        }
    }

    /// The `<title>`s of group `id`.
    func titles(in id: String) -> [String] {
        (group(id) ?? "").matches(of: /<title>([^<]*)<\/title>/).map { String($0.output.1) }
    }

    static func attribute(_ name: String, of tag: String) -> String? {
        guard let match = tag.firstMatch(of: try! Regex(" \(name)=\"([^\"]*)\"")) else { return nil }
        return match.output[1].substring.map(String.init)
    }
}
