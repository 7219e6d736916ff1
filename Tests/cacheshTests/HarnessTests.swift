import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The end-to-end harness itself (Support/Child.swift): children are awaited without holding a
/// thread of the test pool, and a child past its deadline is killed with what it printed reported.
@Suite struct HarnessTests {
    static func shell() async throws -> Child {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        return try await Child.start(Cachesh.binaryPath, [], environment: environment, stdin: .pipe, stdout: .pipe, stderr: .stdout)
    }

    /// More children than the pool has threads wait for a line that only a task queued after
    /// them types: had each wait held a thread, that task could not run before their deadline.
    @Test func awaitingChildrenLeavesThePoolFree() async throws {
        var children: [Child] = []
        for _ in 0..<(ProcessInfo.processInfo.activeProcessorCount + 2) { children.append(try await Self.shell()) }
        let shells = children
        try await withThrowingTaskGroup(of: Void.self) { group in
            for child in shells {
                group.addTask { _ = try await child.output(until: "released\n", seconds: 60) }
            }
            group.addTask {
                for child in shells { try await child.write("echo released\n") }
            }
            try await group.waitForAll()
        }
        for child in children {
            try child.closeInput()
            #expect(try await child.exitStatus(within: Cachesh.timeLimit) == 0)
        }
    }

    @Test func aChildPastItsDeadlineIsKilledAndWhatItPrintedIsReported() async throws {
        let child = try await Self.shell()
        try await child.write("echo still here\n")
        _ = try await child.output(until: "still here\n")
        // It waits for more input, which never comes.
        let error = await #expect(throws: HarnessError.self) { try await child.exitStatus(within: 1) }
        let report = error?.description ?? ""
        #expect(report.contains("did not finish within 1 s: killed"), "\(report)")
        #expect(report.contains("--- stdout\nstill here\n"), "\(report)")
        #expect(!child.isRunning)
    }
}
