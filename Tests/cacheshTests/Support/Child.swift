import Foundation
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Child processes of the end-to-end tests, awaited without holding a thread.
//
// Swift Testing runs every test on Swift concurrency's cooperative pool, which has one thread per
// core (two on a small CI machine) and never adds one when a thread blocks. A test that waited
// for its child synchronously (`waitUntilExit`, a semaphore, a pipe read, a spin) held one of
// those threads for as long as the child ran; two such tests stopped every other test of the
// process, and on a busy machine, where each child is slow, the time limits of tests that had
// nothing to do with them ran out. Here nothing blocks a pool thread: a child's exit and its
// output arrive on threads of their own (Foundation's termination thread, one reader thread per
// pipe) and wake the awaiting test; every wait has a deadline after which the child is killed
// and the error says what it had printed.

/// A value changed on threads of their own (what a child printed, its exit status) and awaited,
/// up to a deadline, without holding a thread.
final class Watched<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var version = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state: Mutex<State>

    init(_ value: Value) { state = Mutex(State(value: value)) }

    var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes everyone waiting on it.
    func update(_ change: (inout Value) -> Void) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state.value)
            state.version += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// The value once `condition` holds for it, or nil when `seconds` have passed first.
    func wait(seconds: Double, until condition: (Value) -> Bool) async -> Value? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while true {
            let (value, version) = state.withLock { ($0.value, $0.version) }
            if condition(value) { return value }
            if ContinuousClock.now >= deadline { return nil }
            await changed(after: version, before: deadline)
        }
    }

    /// Returns once the value has changed since `version`, or at `deadline`.
    private func changed(after version: Int, before deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            wake(id)
        }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            // A timer that fired before this registration found nothing to wake: by then the
            // deadline has passed, which is checked here under the same lock.
            let now = state.withLock { state -> Bool in
                if state.version != version || ContinuousClock.now >= deadline { return true }
                state.waiters[id] = waiter
                return false
            }
            if now { waiter.resume() }
        }
        timer.cancel()
    }

    /// Wakes one waiter, if it is still waiting (whoever removes it resumes it: exactly once).
    private func wake(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}

/// What a reader thread has read from a pipe so far.
struct Captured: Sendable {
    /// The most bytes kept; the rest is read (so the child never blocks on a full pipe) and counted.
    static let limit = 64 << 20

    var bytes: [UInt8] = []
    var total = 0
    var newlines = 0
    var ended = false

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The last `count` bytes as text, for an error message.
    func tail(_ count: Int = 2000) -> String {
        (total > bytes.count ? "[\(total - bytes.count) bytes not kept]\n" : "")
            + (bytes.count > count ? "[...]" : "") + String(decoding: bytes.suffix(count), as: UTF8.self)
    }
}

/// Starts things on threads of their own.
enum OwnThread {
    /// Runs `body` on a new thread (not one of the cooperative pool's) and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (done: CheckedContinuation<T, Never>) in
            Thread { done.resume(returning: body()) }.start()
        }
    }

    /// Reads `descriptor` to its end on a new thread into `into`, then closes it. With `kill`,
    /// sends SIGKILL to process `kill.pid` once `kill.lines` newlines are read, from this thread:
    /// the kill does not wait for a task of the cooperative pool to see the count, which a
    /// machine busy with other tests can hold back until the child has ended on its own.
    static func read(_ descriptor: Int32, into captured: Watched<Captured>, kill: (pid: Int32, lines: Int)? = nil) {
        Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            var killed = false
            while true {
                let count = (try? buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: descriptor).read(into: $0) }) ?? 0
                guard count > 0 else { break }
                let chunk = buffer[..<count]
                captured.update { captured in
                    captured.total += count
                    captured.newlines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                    let room = Captured.limit - captured.bytes.count
                    if room > 0 { captured.bytes += chunk.prefix(room) }
                }
                if let kill, !killed, captured.value.newlines >= kill.lines {
                    // (Its own child, not reaped before its stdout ends: the id is still its.)
                    Glibc.kill(kill.pid, SIGKILL)
                    killed = true
                }
            }
            close(descriptor)
            captured.update { $0.ended = true }
        }.start()
    }
}

/// A pipe whose ends close on exec, so that no child started later inherits them (made on the
/// queue that starts children, so none starts between `pipe` and `fcntl`).
struct ClosingPipe {
    let read: FileHandle
    let write: FileHandle

    init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw HarnessError(description: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        read = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        write = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
    }
}

/// A child process of the tests: started, fed, read and awaited without holding a thread.
final class Child: Sendable {
    /// Where one of its standard streams goes.
    enum Stream: Sendable {
        /// A pipe this side reads (or, for stdin, writes).
        case pipe
        /// A file, opened here (stdin reads it, stdout and stderr write it).
        case file(URL)
        /// /dev/null.
        case nullDevice
        /// stderr only: into the same pipe or file as stdout.
        case stdout
    }

    let pid: Int32
    let name: String
    private let process: Process
    /// Its exit status once it has exited.
    private let status: Watched<Int32?>
    /// What it printed, when stdout or stderr is `.pipe` (stderr `.stdout` shares `output`).
    let output: Watched<Captured>?
    let errors: Watched<Captured>?
    private let files: [URL]
    private let input: FileHandle?

    /// Starts `executable arguments...`. The start itself is serialized with every other start of
    /// a `Child` on one queue: Foundation hands the child only the descriptors it was given, but
    /// learns the others from a listing made before the start, so one opened meanwhile by another
    /// start (its socket that reports the exit) would leak into this child and hold it.
    ///
    /// With `killAfterLines` (stdout a pipe), the child gets SIGKILL as soon as that many lines
    /// of its stdout are read (`OwnThread.read`).
    static func start(_ executable: String, _ arguments: [String], name: String? = nil, in directory: URL? = nil,
                      environment: [String: String]? = nil,
                      stdin: Stream = .nullDevice, stdout: Stream = .pipe, stderr: Stream = .pipe,
                      killAfterLines: Int? = nil) async throws -> Child {
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Child, any Error>) in
            starts.async {
                do { started.resume(returning: try Child(executable, arguments, name: name, in: directory, environment: environment,
                                                          stdin: stdin, stdout: stdout, stderr: stderr, killAfterLines: killAfterLines)) }
                catch { started.resume(throwing: error) }
            }
        }
    }

    private static let starts = DispatchQueue(label: "cachesh-tests.child-starts")

    private init(_ executable: String, _ arguments: [String], name: String?, in directory: URL?, environment: [String: String]?,
                 stdin: Stream, stdout: Stream, stderr: Stream, killAfterLines: Int? = nil) throws {
        self.name = name ?? ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " ")
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }

        var files: [URL] = []
        var theirs: [FileHandle] = []   // the child's ends, closed here once it has them
        func open(_ url: URL, writing: Bool) throws -> FileHandle {
            let descriptor = Glibc.open(url.path, (writing ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY) | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw HarnessError(description: "cannot open \(url.path): \(String(cString: strerror(errno)))")
            }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            theirs.append(handle)
            return handle
        }

        switch stdin {
        case .pipe:
            let pipe = try ClosingPipe()
            process.standardInput = pipe.read
            theirs.append(pipe.read)
            input = pipe.write
        case .file(let url):
            process.standardInput = try open(url, writing: false)
            input = nil
        case .nullDevice, .stdout:
            process.standardInput = FileHandle.nullDevice
            input = nil
        }

        var outputPipe: ClosingPipe?
        var outputFile: FileHandle?
        switch stdout {
        case .pipe:
            let pipe = try ClosingPipe()
            outputPipe = pipe
            process.standardOutput = pipe.write
            theirs.append(pipe.write)
        case .file(let url):
            outputFile = try open(url, writing: true)
            process.standardOutput = outputFile
            files.append(url)
        case .nullDevice, .stdout:
            process.standardOutput = FileHandle.nullDevice
        }

        var errorPipe: ClosingPipe?
        switch stderr {
        case .pipe:
            let pipe = try ClosingPipe()
            errorPipe = pipe
            process.standardError = pipe.write
            theirs.append(pipe.write)
        case .file(let url):
            process.standardError = try open(url, writing: true)
            files.append(url)
        case .nullDevice:
            process.standardError = FileHandle.nullDevice
        case .stdout:
            process.standardError = outputPipe?.write ?? outputFile ?? FileHandle.nullDevice
        }
        self.files = files

        let status = Watched<Int32?>(nil)
        self.status = status
        process.terminationHandler = { process in status.update { $0 = process.terminationStatus } }
        try process.run()
        pid = process.processIdentifier
        for handle in theirs { try? handle.close() }

        output = outputPipe.map { _ in Watched(Captured()) }
        errors = errorPipe.map { _ in Watched(Captured()) }
        // The reader threads own the read ends from here: copies, since the handles close theirs.
        if let outputPipe, let output {
            OwnThread.read(fcntl(outputPipe.read.fileDescriptor, F_DUPFD_CLOEXEC, 0), into: output,
                           kill: killAfterLines.map { (pid, $0) })
        }
        if let errorPipe, let errors { OwnThread.read(fcntl(errorPipe.read.fileDescriptor, F_DUPFD_CLOEXEC, 0), into: errors) }
    }

    var isRunning: Bool { status.value == nil }

    /// Writes `text` to its stdin (a pipe), on a thread of its own: a child that does not read
    /// cannot hold a pool thread.
    func write(_ text: String) async throws {
        guard let input else { throw HarnessError(description: "\(name): stdin is not a pipe") }
        let written = await OwnThread.run { () -> String? in
            do { try input.write(contentsOf: Data(text.utf8)); return nil } catch { return "\(error)" }
        }
        if let written { throw HarnessError(description: "\(name): cannot write to stdin: \(written)") }
    }

    /// Closes its stdin (a pipe): it reads the end of its input.
    func closeInput() throws { try input?.close() }

    func signal(_ signal: Int32) { if isRunning { kill(pid, signal) } }

    /// Waits until what it printed on stdout holds `text`; all of it so far. Throws when it ends
    /// without it, or after `seconds` (killing it).
    func output(until text: String, seconds: Double = 60) async throws -> String {
        try await read(output, "stdout", until: text, seconds: seconds)
    }

    /// The same for stderr.
    func errors(until text: String, seconds: Double = 60) async throws -> String {
        try await read(errors, "stderr", until: text, seconds: seconds)
    }

    private func read(_ stream: Watched<Captured>?, _ label: String, until text: String, seconds: Double) async throws -> String {
        guard let stream else { throw HarnessError(description: "\(name): \(label) is not a pipe") }
        let bytes = Array(text.utf8)
        guard let seen = await stream.wait(seconds: seconds, until: { $0.ended || $0.bytes.contains(bytes) }) else {
            throw await stop(because: "printed no \(text.debugDescription) on \(label) within \(Int(seconds)) s")
        }
        guard seen.bytes.contains(bytes) else {
            throw HarnessError(description: "\(name): \(label) ended without \(text.debugDescription)\n\(describe())")
        }
        return seen.text
    }

    /// Its exit status, once it has exited and what it printed has all been read. After
    /// `seconds` it is killed and the error says what it had printed.
    func exitStatus(within seconds: Double) async throws -> Int32 {
        guard let code = (await status.wait(seconds: seconds, until: { $0 != nil })) ?? nil else {
            throw await stop(because: "did not finish within \(Int(seconds)) s")
        }
        // Its pipes end when it exits (it holds their only write ends): bounded all the same.
        for stream in [output, errors].compactMap({ $0 }) {
            if await stream.wait(seconds: 60, until: \.ended) == nil {
                throw HarnessError(description: "\(name) exited, but its output did not end within 60 s\n\(describe())")
            }
        }
        return code
    }

    /// Kills it (SIGKILL), waits a little for its exit, and returns an error that says `why`
    /// and what it had printed.
    private func stop(because why: String) async -> HarnessError {
        signal(SIGKILL)
        _ = await status.wait(seconds: 10, until: { $0 != nil })
        return HarnessError(description: "\(name) \(why): killed\n\(describe())")
    }

    /// What it printed so far, for an error message.
    func describe() -> String {
        var parts: [String] = []
        if let output { parts.append("--- stdout\n\(output.value.tail())") }
        if let errors { parts.append("--- stderr\n\(errors.value.tail())") }
        for file in files {
            let bytes = (try? Data(contentsOf: file)) ?? Data()
            parts.append("--- \(file.lastPathComponent)\n\(String(decoding: bytes.suffix(2000), as: UTF8.self))")
        }
        return parts.joined(separator: "\n")
    }

    deinit {
        // A test that failed half-way leaves no child behind.
        if status.value == nil { kill(pid, SIGKILL) }
    }
}

/// At most a few children that run to completion at once: a test's deadline then measures its
/// child, not a queue of a hundred others sharing two cores.
actor ChildSlots {
    static let shared = ChildSlots(count: max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    private func acquire() async {
        if free > 0 { free -= 1; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` holding one slot.
    func holding<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        do {
            let result = try await body()
            release()
            return result
        } catch {
            release()
            throw error
        }
    }
}
