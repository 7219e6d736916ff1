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

    /// A run longer than this is a hang: the process is killed and the test fails, with what it
    /// had printed. Generous: a debug build on a busy machine can be many times slower than alone.
    static let timeLimit: Double = 120

    /// The time limit of a run that reads or writes tens of MiB (a 64 MiB script, a 16 MiB
    /// command): seconds alone, but minutes on a machine whose cores are all taken.
    static let heavyTimeLimit: Double = 600

    /// Runs `cachesh arguments...` in `directory` with `stdin` as its standard input, and waits
    /// for it without holding a thread (see Child.swift), in one of ``ChildSlots``.
    /// - Parameters:
    ///   - executable: the program to start (the binary itself by default; a script for `#!` tests).
    ///   - environment: variables set on top of this process's environment.
    ///   - cleanEnvironment: start from only `PATH` and `NO_COLOR=1` instead of this process's
    ///     environment (no `CI`, no `TERM`), then add `environment`.
    ///   - timeLimit: seconds after which the run is a hang (``timeLimit`` by default).
    /// - Throws: `HarnessError` when the binary is missing or the run exceeds its time limit.
    static func run(_ arguments: [String], stdin: String = "", in directory: URL? = nil,
                    executable: String? = nil, environment: [String: String] = [:],
                    cleanEnvironment: Bool = false, timeLimit: Double = timeLimit) async throws -> Outcome {
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

        var variables = cleanEnvironment ? ["PATH": "/usr/bin:/bin", "NO_COLOR": "1"] : ProcessInfo.processInfo.environment
        if !cleanEnvironment { variables.removeValue(forKey: "NO_COLOR") }
        for (name, value) in environment { variables[name] = value }
        let workingDirectory = directory ?? sandbox.url
        let status = try await ChildSlots.shared.holding { [variables] in
            let child = try await Child.start(path, arguments, name: "cachesh \(arguments)", in: workingDirectory,
                                              environment: variables, stdin: .file(input), stdout: .file(output), stderr: .file(errors))
            return try await child.exitStatus(within: timeLimit)
        }
        return Outcome(stdout: String(decoding: try Data(contentsOf: output), as: UTF8.self),
                       stderr: String(decoding: try Data(contentsOf: errors), as: UTF8.self),
                       status: status)
    }

    /// Writes `text` to `script.cachesh` in a fresh directory (with `files` beside it) and runs
    /// `cachesh [options] script.cachesh` there, so errors name `script.cachesh`.
    static func script(_ text: String, options: [String] = [], files: [String: String] = [:]) async throws -> Outcome {
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", text)
        for (name, content) in files { try sandbox.write(name, content) }
        return try await run(options + ["script.cachesh"], in: sandbox.url)
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

    /// A copy of the package's Examples/ in the directory, for scripts and transcripts that write
    /// beside themselves (snapshots): a test never writes into the source tree, where another
    /// test copying Examples/ at that moment would find a file vanish under it. Build folders
    /// (`.build`, a live example's client) are left out. Returns the copy's URL.
    @discardableResult
    func copyExamples() throws -> URL {
        let source = Cachesh.packageRoot.appendingPathComponent("Examples")
        let copy = url.appendingPathComponent("Examples")
        try Self.copy(source, to: copy)
        return copy
    }

    private static func copy(_ source: URL, to target: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: target, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: source.path) where name != ".build" {
            let from = source.appendingPathComponent(name), to = target.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if manager.fileExists(atPath: from.path, isDirectory: &isDirectory), isDirectory.boolValue {
                try copy(from, to: to)
            } else {
                try manager.copyItem(at: from, to: to)
            }
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
