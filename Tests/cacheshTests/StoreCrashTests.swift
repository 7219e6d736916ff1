import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `--store` end to end (SPEC §5.3): a process killed with SIGKILL loses nothing it printed, and
/// a file that is not a store of this version is refused unchanged.
@Suite struct StoreCrashTests {
    static let pairs = 5000

    /// Starts `cachesh --store F --json` on `put k:i i` / `advance 1ms` pairs, reads `lines`
    /// lines of its output (each an acknowledged command), kills it with SIGKILL and returns the
    /// number of complete lines read.
    static func runAndKill(store: String, afterLines lines: Int) throws -> Int {
        var script = ""
        for i in 0..<pairs { script += "put k:\(i) \(i)\nadvance 1ms\n" }
        let sandbox = try Sandbox()
        let input = try sandbox.write("input.cachesh", script)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Cachesh.binaryPath)
        process.arguments = ["--store", store, "--json"]
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var seen = 0
        let reader = pipe.fileHandleForReading
        while seen < lines {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            seen += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return seen
    }

    @Test(arguments: [1, 2, 3])
    func restartAfterSIGKILLHasEveryAcknowledgedCommand(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("crash.db").path
        let acknowledged = try Self.runAndKill(store: store, afterLines: Int.random(in: 1...(2 * Self.pairs - 1), using: &random))
        let puts = (acknowledged + 1) / 2
        let advances = acknowledged / 2

        let after = try Cachesh.run(["--store", store, "--json", "-c", "now; keys"])
        #expect(after.status == 0, "\(after)")
        let lines = after.stdout.split(separator: "\n")
        try #require(lines.count == 2, "\(after)")
        let now = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        let keys = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as! [String: Any]
        let present = (keys["entries"] as! [[String: Any]]).map { $0["key"] as! String }
        let clock = now["now_ms"] as! Int
        // The store holds the state after some command at or past the last acknowledged one:
        // the first M puts in order, and the clock of the M-th put or of the advance after it.
        let m = present.count
        #expect(m >= puts, "acknowledged \(acknowledged) lines, found \(m) entries")
        #expect(present == (0..<m).map { "k:\($0)" })
        #expect(clock >= advances)
        #expect(clock == m - 1 || clock == m, "\(m) entries at \(clock) ms")
    }

    @Test func refusesAFileThatIsNotAStoreAndLeavesItUnchanged() throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("notes.txt", String(repeating: "plain text, not a database\n", count: 50))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let outcome = try Cachesh.run(["--store", path, "-c", "put a 1"])
        #expect(outcome.status == 2)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "cachesh: cannot open store \(path): file is not a database\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func storeContinuesAcrossRuns() throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try Cachesh.run(["--store", store, "-c", "ns feed ttl=1m; put feed:a 1; advance 30s; put b 2; get feed:a"])
        #expect(first.status == 0, "\(first)")
        let second = try Cachesh.run(["--store", store, "-c", "keys; now; stats"])
        #expect(second.stdout == """
            key     state  age_ms
            b       fresh  0
            feed:a  fresh  30000 (30s)
            now:    2026-01-01T00:00:30.000Z
            now_ms: 30000 (30s)
            counter           default  feed   total
            hits              0        1      1
            stale_hits        0        0      0
            misses            0        0      0
            requests          0        0      0
            joined            0        0      0
            refreshes         0        0      0
            refresh_failures  0        0      0
            fetch_failures    0        0      0
            evictions         0        0      0
            expirations       0        0      0
            invalidations     0        0      0
            rollbacks         0        0      0
            hit_ratio         0.000    1.000  1.000

            """)
    }
}
