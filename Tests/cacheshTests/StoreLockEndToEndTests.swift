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
/// Each child has a deadline of its own (Cachesh.timeLimit); the suite's limit only catches a hang
/// of the tests themselves, long because on a busy two-core machine they share it with every other.
@Suite(.timeLimit(.minutes(20)))
struct StoreLockEndToEndTests {
    /// Polls `condition` until it holds, or fails after `seconds`: a deadline that only matters
    /// when something is wrong. Between tries the test is suspended, not spinning: the child it
    /// waits for needs the processor more.
    static func waitUntil(_ what: String, seconds: Double = 60, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            if ContinuousClock.now > deadline { throw HarnessError(description: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// `cachesh --store STORE` reading a script from a pipe: it opens (and locks) the store at
    /// once, then runs what it is given when the pipe closes.
    struct Holder {
        let child: Child
        var pid: Int32 { child.pid }

        init(store: String) async throws {
            child = try await Child.start(Cachesh.binaryPath, ["--store", store], stdin: .pipe, stdout: .pipe, stderr: .stdout)
            let pid = child.pid
            try await StoreLockEndToEndTests.waitUntil("process \(pid) to hold the store's lock") {
                (try? String(contentsOfFile: store + "-lock", encoding: .utf8)) == "\(pid)\n"
            }
        }

        /// Gives it `commands`, closes its input and returns what it printed, once it has exited.
        func finish(_ commands: String) async throws -> Outcome {
            try await child.write(commands)
            try child.closeInput()
            let status = try await child.exitStatus(within: Cachesh.timeLimit)
            return Outcome(stdout: child.output?.value.text ?? "", stderr: "", status: status)
        }
    }

    /// A `cachesh` started in the background, its stderr readable as it comes.
    struct Background {
        let child: Child

        init(_ arguments: [String]) async throws {
            child = try await Child.start(Cachesh.binaryPath, arguments)
        }

        /// Waits until stderr holds `text` (true), or ends without it (false).
        func stderrShows(_ text: String) async throws -> Bool {
            do {
                _ = try await child.errors(until: text)
                return true
            } catch where child.errors?.value.ended == true {
                return false
            }
        }

        func finish() async throws -> Outcome {
            let status = try await child.exitStatus(within: Cachesh.timeLimit)
            return Outcome(stdout: child.output?.value.text ?? "", stderr: child.errors?.value.text ?? "", status: status)
        }
    }

    static func keys(_ store: String) async throws -> String {
        let run = try await Cachesh.run(["--store", store, "-c", "keys"])
        #expect(run.status == 0, "\(run)")
        return run.stdout
    }

    @Test func aSecondProcessIsRefusedWithOneLineAndExitTwo() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try await Holder(store: store)
        let second = try await Cachesh.run(["--store", store, "-c", "put b 2"])
        #expect(second == Outcome(stdout: "", stderr: """
            cachesh: \(store) is in use by another cachesh (process \(first.pid)); one process at a time may open a store (--wait waits for it)

            """, status: 2))
        #expect(try await first.finish("put a 1\n") == Outcome(stdout: "keys: a\n", stderr: "", status: 0))
        #expect(try await Self.keys(store) == "key  state  age_ms\na    fresh  0\n")
        #expect(!FileManager.default.fileExists(atPath: store + "-lock"), "the lock file goes when the store is closed")
    }

    @Test func withWaitTheSecondProcessContinuesFromWhatTheFirstLeft() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let first = try await Holder(store: store)
        let second = try await Background(["--store", store, "--wait", "-c", "put b 2; keys"])
        #expect(try await second.stderrShows("cachesh: waiting for \(store): in use by another cachesh (process \(first.pid))\n"))
        #expect(try await first.finish("put a 1\n").status == 0)
        #expect(try await second.finish() == Outcome(stdout: "keys: b\nkey  state  age_ms\na    fresh  0\nb    fresh  0\n", stderr: """
            cachesh: waiting for \(store): in use by another cachesh (process \(first.pid))

            """, status: 0))
    }

    /// Writers started together, each waiting its turn: every one's change is in the store, and
    /// each continued from the one before it (each clock it printed is one more second), where
    /// before each loaded the same state and the last to commit wrote over the others.
    @Test func writersStartedTogetherLoseNothing() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        #expect(try await Cachesh.run(["--store", store, "-c", "now"]).status == 0)
        let count = 6
        var writers: [Background] = []
        for i in 0..<count {
            writers.append(try await Background(["--store", store, "--wait", "--json", "-c", "put k:\(i) \(i); advance 1s"]))
        }
        var clocks: [Int] = []
        for writer in writers {
            let outcome = try await writer.finish()
            #expect(outcome.status == 0, "\(outcome)")
            let last = try #require(outcome.stdout.split(separator: "\n").last)
            let advance = try JSONSerialization.jsonObject(with: Data(last.utf8)) as! [String: Any]
            clocks.append(advance["now_ms"] as! Int)
        }
        #expect(clocks.sorted() == (1...count).map { $0 * 1000 })
        let run = try await Cachesh.run(["--store", store, "--json", "-c", "keys; now"])
        let lines = run.stdout.split(separator: "\n")
        try #require(lines.count == 2, "\(run)")
        let keys = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        let present = (keys["entries"] as! [[String: Any]]).map { $0["key"] as! String }.sorted()
        #expect(present == (0..<count).map { "k:\($0)" })
        let now = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as! [String: Any]
        #expect(now["now_ms"] as? Int == count * 1000)
    }

    /// The kernel drops the lock of a killed process: its store opens at once afterwards.
    @Test func aKilledHolderLeavesTheStoreUnlocked() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        #expect(try await Cachesh.run(["--store", store, "-c", "put a 1"]).status == 0)
        let first = try await Holder(store: store)
        first.child.signal(SIGKILL)
        _ = try await first.child.exitStatus(within: Cachesh.timeLimit)
        let next = try await Cachesh.run(["--store", store, "-c", "put b 2; keys"])
        #expect(next == Outcome(stdout: "keys: b\nkey  state  age_ms\na    fresh  0\nb    fresh  0\n", stderr: "", status: 0))
    }

    @Test func waitWithoutAStoreIsAUsageError() async throws {
        let run = try await Cachesh.run(["--wait", "-c", "now"])
        #expect(run == Outcome(stdout: "", stderr: "cachesh: --wait goes with --store\n", status: 2))
    }
}
