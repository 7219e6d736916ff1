import Foundation

/// What one run of the `cachesh` executable printed and how it ended.
struct Outcome: Equatable, CustomStringConvertible {
    var stdout: String
    var stderr: String
    var status: Int32

    var description: String {
        "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
    }
}

/// Why the executable could not be run at all.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
}

/// Runs the built `cachesh` executable, as a user would from a shell.
///
/// The binary is `.build/debug/cachesh` under the package root (found from this file's path),
/// or `CACHESH_BIN` when set; it is built by `swift build`, which CI runs before `swift test`.
enum Cachesh {
    /// The package root: three directories above `Tests/cacheshTests/Support/`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binaryPath: String {
        ProcessInfo.processInfo.environment["CACHESH_BIN"]
            ?? packageRoot.appendingPathComponent(".build/debug/cachesh").path
    }

    /// A run longer than this is a hang: the process is killed and the test fails.
    static let timeLimit: TimeInterval = 60

    /// Runs `cachesh arguments...` in `directory` with `stdin` as its standard input.
    /// - Parameters:
    ///   - executable: the program to start (the binary itself by default; a script for `#!` tests).
    ///   - environment: variables set on top of this process's environment.
    /// - Throws: `HarnessError` when the binary is missing or the run exceeds ``timeLimit``.
    ///   - cleanEnvironment: start from only `PATH` and `NO_COLOR=1` instead of this process's
    ///     environment (no `CI`, no `TERM`), then add `environment`.
    static func run(_ arguments: [String], stdin: String = "", in directory: URL? = nil,
                    executable: String? = nil, environment: [String: String] = [:],
                    cleanEnvironment: Bool = false) throws -> Outcome {
        let path = executable ?? binaryPath
        guard FileManager.default.isExecutableFile(atPath: binaryPath) else {
            throw HarnessError(description: "no cachesh binary at \(binaryPath): run `swift build` before `swift test` "
                               + "(or set CACHESH_BIN)")
        }
        let sandbox = try Sandbox()
        let input = sandbox.url.appendingPathComponent("stdin")
        let output = sandbox.url.appendingPathComponent("stdout")
        let errors = sandbox.url.appendingPathComponent("stderr")
        try Data(stdin.utf8).write(to: input)
        try Data().write(to: output)
        try Data().write(to: errors)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? sandbox.url
        var variables = cleanEnvironment ? ["PATH": "/usr/bin:/bin", "NO_COLOR": "1"] : ProcessInfo.processInfo.environment
        if !cleanEnvironment { variables.removeValue(forKey: "NO_COLOR") }
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        let stdinHandle = try FileHandle(forReadingFrom: input)
        let stdoutHandle = try FileHandle(forWritingTo: output)
        let stderrHandle = try FileHandle(forWritingTo: errors)
        defer {
            try? stdinHandle.close()
            try? stdoutHandle.close()
            try? stderrHandle.close()
        }
        process.standardInput = stdinHandle
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle

        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + timeLimit) == .timedOut {
            process.terminate()
            process.waitUntilExit()
            throw HarnessError(description: "cachesh \(arguments) did not finish within \(Int(timeLimit)) s")
        }
        return Outcome(stdout: String(decoding: try Data(contentsOf: output), as: UTF8.self),
                       stderr: String(decoding: try Data(contentsOf: errors), as: UTF8.self),
                       status: process.terminationStatus)
    }

    /// Writes `text` to `script.cachesh` in a fresh directory (with `files` beside it) and runs
    /// `cachesh [options] script.cachesh` there, so errors name `script.cachesh`.
    static func script(_ text: String, options: [String] = [], files: [String: String] = [:]) throws -> Outcome {
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", text)
        for (name, content) in files { try sandbox.write(name, content) }
        return try run(options + ["script.cachesh"], in: sandbox.url)
    }
}

/// A temporary directory, removed when the value is released.
final class Sandbox {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes a file inside the directory; returns its full path.
    @discardableResult
    func write(_ name: String, _ text: String, permissions: Int = 0o644) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file.path)
        return file.path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
