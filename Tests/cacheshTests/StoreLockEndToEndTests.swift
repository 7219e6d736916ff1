import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One process at a time on a store (SPEC §5.3), with real processes of the built binary: a
/// second one is refused (exit 2) or, with `--wait`, waits and then continues from what the first
/// one left, so no printed change is lost. (Ctrl-C ending a wait is tested in a terminal, in
/// Tests/interactive: a process started from here inherits a signal mask that blocks SIGINT.)
@Suite(.timeLimit(.minutes(5)))
struct StoreLockEndToEndTests {
    /// Polls `condition` until it holds (yielding the processor between tries), or fails after
    /// `seconds`: a deadline that only matters when something is wrong.
    static func waitUntil(_ what: String, seconds: Double = 60, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { throw HarnessError(description: "timed out waiting for \(what)") }
            sched_yield()
        }
    }

    /// `cachesh --store STORE` reading a script from a pipe: it opens (and locks) the store at
    /// once, then runs what it is given when the pipe closes.
    final class Holder {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        var pid: Int32 { process.processIdentifier }

        init(store: String) throws {
            process.executableURL = URL(fileURLWithPath: Cachesh.binaryPath)
            process.arguments = ["--store", store]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let pid = process.processIdentifier
            try StoreLockEndToEndTests.waitUntil("process \(pid) to hold the store's lock") {
                (try? String(contentsOfFile: store + "-lock", encoding: .utf8)) == "\(pid)\n"
            }
        }

        /// Gives it `commands`, closes its input and returns what it printed, once it has exited.
        func finish(_ commands: String) throws -> Outcome {
            input.fileHandleForWriting.write(Data(commands.utf8))
            try input.fileHandleForWriting.close()
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(stdout: String(decoding: printed, as: UTF8.self), stderr: "", status: process.terminationStatus)
        }
    }

    /// A `cachesh` started in the background, its stderr readable as it comes.
    final class Background {
        let process = Process()
        private let output = Pipe()
        private let errors = Pipe()
        private var stderrSoFar = Data()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Cachesh.binaryPath)
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Reads stderr until it holds `text` (true), or ends without it (false).
        func stderrShows(_ text: String) -> Bool {
            while !String(decoding: stderrSoFar, as: UTF8.self).contains(text) {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { return false }
                stderrSoFar += chunk
            }
            return true
        }

        func finish() -> Outcome {
            let out = output.fileHandleForReading.readDataToEndOfFile()
            stderrSoFar += errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: stderrSoFar, as: UTF8.self),
                           status: process.terminationStatus)
        }
    }

    static func keys(_ store: String) throws -> String {
        let run = try Cachesh.run(["--store", store, "-c", "keys"])
        #expect(run.status == 0, "\(run)")
        return run.stdout
    }

    @Test func aSecondProcessIsRefusedWithOneLineAndExitTwo() throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try Holder(store: store)
        let second = try Cachesh.run(["--store", store, "-c", "put b 2"])
        #expect(second == Outcome(stdout: "", stderr: """
            cachesh: \(store) is in use by another cachesh (process \(first.pid)); one process at a time may open a store (--wait waits for it)

            """, status: 2))
        #expect(try first.finish("put a 1\n") == Outcome(stdout: "keys: a\n", stderr: "", status: 0))
        #expect(try Self.keys(store) == "key  state  age_ms\na    fresh  0\n")
        #expect(!FileManager.default.fileExists(atPath: store + "-lock"), "the lock file goes when the store is closed")
    }

    @Test func withWaitTheSecondProcessContinuesFromWhatTheFirstLeft() throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try Holder(store: store)
        let second = try Background(["--store", store, "--wait", "-c", "put b 2; keys"])
        #expect(second.stderrShows("cachesh: waiting for \(store): in use by another cachesh (process \(first.pid))\n"))
        #expect(try first.finish("put a 1\n").status == 0)
        #expect(second.finish() == Outcome(stdout: "keys: b\nkey  state  age_ms\na    fresh  0\nb    fresh  0\n", stderr: """
            cachesh: waiting for \(store): in use by another cachesh (process \(first.pid))

            """, status: 0))
    }

    /// Writers started together, each waiting its turn: every one's change is in the store, and
    /// each continued from the one before it (each clock it printed is one more second), where
    /// before each loaded the same state and the last to commit wrote over the others.
    @Test func writersStartedTogetherLoseNothing() throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        #expect(try Cachesh.run(["--store", store, "-c", "now"]).status == 0)
        let count = 6
        let writers = try (0..<count).map { i in
            try Background(["--store", store, "--wait", "--json", "-c", "put k:\(i) \(i); advance 1s"])
        }
        var clocks: [Int] = []
        for writer in writers {
            let outcome = writer.finish()
            #expect(outcome.status == 0, "\(outcome)")
            let last = try #require(outcome.stdout.split(separator: "\n").last)
            let advance = try JSONSerialization.jsonObject(with: Data(last.utf8)) as! [String: Any]
            clocks.append(advance["now_ms"] as! Int)
        }
        #expect(clocks.sorted() == (1...count).map { $0 * 1000 })
        let run = try Cachesh.run(["--store", store, "--json", "-c", "keys; now"])
        let lines = run.stdout.split(separator: "\n")
        try #require(lines.count == 2, "\(run)")
        let keys = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        let present = (keys["entries"] as! [[String: Any]]).map { $0["key"] as! String }.sorted()
        #expect(present == (0..<count).map { "k:\($0)" })
        let now = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as! [String: Any]
        #expect(now["now_ms"] as? Int == count * 1000)
    }

    /// The kernel drops the lock of a killed process: its store opens at once afterwards.
    @Test func aKilledHolderLeavesTheStoreUnlocked() throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        #expect(try Cachesh.run(["--store", store, "-c", "put a 1"]).status == 0)
        let first = try Holder(store: store)
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()
        let next = try Cachesh.run(["--store", store, "-c", "put b 2; keys"])
        #expect(next == Outcome(stdout: "keys: b\nkey  state  age_ms\na    fresh  0\nb    fresh  0\n", stderr: "", status: 0))
    }

    @Test func waitWithoutAStoreIsAUsageError() throws {
        let run = try Cachesh.run(["--wait", "-c", "now"])
        #expect(run == Outcome(stdout: "", stderr: "cachesh: --wait goes with --store\n", status: 2))
    }
}
