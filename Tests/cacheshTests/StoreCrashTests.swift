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
    /// number of complete lines read. It must die of the signal (a run that had ended would pass
    /// having survived no kill): its standard input stays open, so it cannot end before the kill.
    /// (Standard input is read 64 KiB at a time, several commit groups: all but the last of each
    /// piece are committed on the writer thread while the next runs.) With `scriptPairs`, the
    /// pairs are a script file of that many instead, whose pieces end no commit group; the kill
    /// then comes from the thread that reads its output, as soon as it has read `lines` lines (a
    /// task waiting for that count, held back on a machine busy with other tests, let a run end
    /// first), and the lines returned are all it printed, read to its output's end: its output,
    /// far longer than `lines` and than a pipe holds, is read past `lines` before it can end.
    static func runAndKill(store: String, afterLines lines: Int, scriptPairs: Int? = nil) async throws -> Int {
        let script = (0..<(scriptPairs ?? pairs)).map { "put k:\($0) \($0)\nadvance 1ms\n" }.joined()
        var arguments = ["--store", store, "--json"]
        if scriptPairs != nil {
            let file = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("pairs.cachesh").path
            try Data(script.utf8).write(to: URL(fileURLWithPath: file))
            arguments.append(file)
        }
        return try await ChildSlots.shared.holding { [arguments] in
            // (Standard input: killed here once the lines are read, after the whole script is
            // written, which a kill from the reading thread could cut short.)
            let fromInput = scriptPairs == nil
            let child = try await Child.start(Cachesh.binaryPath, arguments, stdin: .pipe, stdout: .pipe, stderr: .pipe,
                                              killAfterLines: fromInput ? nil : lines)
            if fromInput { try await child.write(script) }
            guard let output = child.output,
                  let read = await output.wait(seconds: Cachesh.timeLimit, until: { $0.ended || (fromInput && $0.newlines >= lines) }) else {
                child.signal(SIGKILL)
                throw HarnessError(description: "cachesh printed fewer than \(lines) lines within \(Int(Cachesh.timeLimit)) s\n\(child.describe())")
            }
            if fromInput { child.signal(SIGKILL) }
            let status = try await child.exitStatus(within: Cachesh.timeLimit)
            guard status == SIGKILL, read.newlines >= lines else {
                throw HarnessError(description: "cachesh ended with status \(status) after \(read.newlines) lines, before the kill\n\(child.describe())")
            }
            return read.newlines
        }
    }

    @Test(arguments: [1, 2, 3])
    func restartAfterSIGKILLHasEveryAcknowledgedCommand(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        try await Self.expectRestartHasEveryAcknowledgedCommand(afterLines: Int.random(in: 1...(2 * Self.pairs - 1), using: &random))
    }

    /// The same for a script file, killed in the middle of the run: its full groups are
    /// committed on the writer thread while the next group runs, their output printed only once
    /// that commit has ended.
    @Test(arguments: [4, 5])
    func restartAfterSIGKILLOfAScriptHasEveryAcknowledgedCommand(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        try await Self.expectRestartHasEveryAcknowledgedCommand(afterLines: Int.random(in: 1...20_000, using: &random),
                                                                scriptPairs: 200_000)
    }

    /// Runs `runAndKill` and expects a restart on the store to hold the state after some command
    /// at or past the last one acknowledged.
    static func expectRestartHasEveryAcknowledgedCommand(afterLines: Int, scriptPairs: Int? = nil) async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("crash.db").path
        let acknowledged = try await Self.runAndKill(store: store, afterLines: afterLines, scriptPairs: scriptPairs)
        let puts = (acknowledged + 1) / 2
        let advances = acknowledged / 2

        let after = try await Cachesh.run(["--store", store, "--json", "-c", "now; keys"])
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

    @Test func refusesAFileThatIsNotAStoreAndLeavesItUnchanged() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("notes.txt", String(repeating: "plain text, not a database\n", count: 50))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let outcome = try await Cachesh.run(["--store", path, "-c", "put a 1"])
        #expect(outcome.status == 2)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "cachesh: cannot open store \(path): file is not a database\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func storeContinuesAcrossRuns() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try await Cachesh.run(["--store", store, "-c", "ns feed ttl=1m; put feed:a 1; advance 30s; put b 2; get feed:a"])
        #expect(first.status == 0, "\(first)")
        let second = try await Cachesh.run(["--store", store, "-c", "keys; now; stats"])
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
