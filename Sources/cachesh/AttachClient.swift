import CacheCore
import CacheShell
import Dispatch
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shell's end of one attachment: requests out; responses, streamed changes and the lines of
/// a recording in.
struct Client {
    let fd: Int32
    let json: Bool
    var nextID: Int64 = 1
    var buffer: [UInt8] = []
    var start = 0
    /// Where the search for the next line feed goes on (each byte is looked at once).
    var scanned = 0
    /// The scopes the app streams changes of to this shell.
    var watching = 0
    /// The recording the app streams to this shell (`record FILE`), until its `end` line.
    var recording: ShellRecording?
    /// A command or a recording failed.
    var failed = false
    /// Messages read while a Tab waited for its answer, handled (in their order, before any read
    /// after them) by `handleBuffered`.
    private var held: [[String: JSONValue]] = []
    private var heldTaken = 0

    init(fd: Int32, json: Bool) {
        self.fd = fd
        self.json = json
    }

    func send(_ fields: [String: JSONValue]) {
        send(line: JSONValue.object(fields).compactText)
    }

    /// Writes `line` and its line feed to the app. A socket the app closed is an error, never a
    /// SIGPIPE (which would end the shell with the terminal left in the editor's mode).
    func send(line: String) {
        if !trySend(line: line) { failAttach("the app closed the connection") }
    }

    /// `send(line:)`, false when the app closed the connection.
    func trySend(line: String) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                systemSend(fd, raw.baseAddress! + sent, raw.count - sent, noSignal)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Runs one command in the app; prints its output, and the changes that arrive meanwhile.
    /// - Returns: whether it succeeded.
    mutating func run(_ command: String) -> Bool {
        let id = nextID
        nextID += 1
        send(["id": .int(id), "op": .string("run"), "command": .string(command), "json": .bool(json)])
        guard let answer = response(to: id) else { endedByApp() }
        if case .string(let output)? = answer["output"] { Attach.show(output, to: .standardOutput) }
        if case .int(let count)? = answer["watching"] { watching = Int(count) }
        if case .string(let error)? = answer["error"] { showError(error) }
        return answer["ok"] == .bool(true)
    }

    func showError(_ error: String) {
        if error.hasSuffix("\n") {
            Attach.show(error, to: .standardError)
        } else if json {
            Attach.show(JSONValue.object(["ok": .bool(false), "error": .string(error)]).compactText + "\n", to: .standardError)
        } else {
            Attach.show("error: " + error + "\n", to: .standardError)
        }
    }

    /// Reads until the response to `id`, handling what is streamed before it; nil at the end.
    mutating func response(to id: Int64) -> [String: JSONValue]? {
        while let message = nextMessage() {
            if handleStreamed(message) { continue }
            if message["id"] == .int(id) || message["id"] == .null { return message }
        }
        return nil
    }

    /// Tab: asks the app what completes the word before the cursor (`text`: the command typed up
    /// to it), waiting at most `timeout` milliseconds for the answer (nil then, as when nothing
    /// applies, or an app of an earlier version does not know the request). What the app streams
    /// meanwhile is held for `handleBuffered`, not printed over the line being edited.
    ///
    /// Nil too for a text whose request the app would refuse (past 1 MiB, which ends the
    /// connection), past `maxHeldMessages` held (a flood; they are printed at once), and when the
    /// app ended the connection: what it sent before is held, and the end is found when the
    /// connection is next read (as while a line is edited).
    mutating func complete(_ text: String, timeout: Int = 2000) -> CompletionResult? {
        let id = nextID
        let request = JSONValue.object(["id": .int(id), "op": .string("complete"), "text": .string(text)]).compactText
        guard request.utf8.count <= Self.maxRequestBytes else { return nil }
        nextID += 1
        // A connection the app closed since the line was last read: its end is found at the next
        // read, as while a line is edited.
        guard trySend(line: request) else { return nil }
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(timeout))
        while true {
            while let message = takeReadMessage() {
                guard message["id"] == .int(id) else {
                    held.append(message)
                    if held.count - heldTaken >= Self.maxHeldMessages { return nil }
                    continue
                }
                guard message["ok"] == .bool(true), case .array(let listed)? = message["candidates"],
                      case .int(let total)? = message["total"], case .string(let replaced)? = message["replaced"],
                      case .string(let prefix)? = message["common_prefix"] else { return nil }
                let candidates = listed.compactMap { value -> String? in
                    if case .string(let candidate) = value { return candidate } else { return nil }
                }
                guard !candidates.isEmpty else { return nil }
                return CompletionResult(replaced: replaced, candidates: candidates, total: Int(total), commonPrefix: prefix)
            }
            let now = ContinuousClock.now
            guard now < deadline else { return nil }
            let left = now.duration(to: deadline).components
            var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&polled, 1, Int32(left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000 + 1))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, readAvailable() else { return nil }
        }
    }

    /// The longest request line the app reads (`CacheInspector.maxRequestBytes`, SPEC §7.1).
    static let maxRequestBytes = 1 << 20
    /// The most messages a Tab's wait holds before it gives up.
    static let maxHeldMessages = 4096

    /// Messages held by a Tab's wait, or read with its answer, are waiting to be handled.
    var holdsMessages: Bool { heldTaken < held.count || buffer[start...].contains(UInt8(ascii: "\n")) }

    /// Prints streamed changes until the app ends the connection or the shell is interrupted.
    /// - Returns: false when the app ended it.
    mutating func streamEvents() -> Bool {
        handleBuffered()
        while watching > 0 {
            guard AttachSignals.wait(for: [fd]) != nil else { return true }
            guard readAvailable() else { return false }
            handleBuffered()
        }
        return true
    }

    /// Handles every whole message already read (changes, recording lines). The changes are
    /// printed together, in one write per 64 KiB: a write each made the shell the slowest part of
    /// a busy app's stream (and the app drops a shell that falls 64 MiB behind).
    mutating func handleBuffered() {
        var batch = ""
        while let message = takeMessage() {
            if let text = eventText(message) {
                batch += text
                if batch.utf8.count >= 1 << 16 {
                    Attach.show(batch, to: .standardOutput)
                    batch = ""
                }
                continue
            }
            if !batch.isEmpty {
                Attach.show(batch, to: .standardOutput)
                batch = ""
            }
            _ = handleStreamed(message)
        }
        if !batch.isEmpty { Attach.show(batch, to: .standardOutput) }
    }

    /// What a streamed change prints (its observer line, or its JSON line); nil for another message.
    private func eventText(_ message: [String: JSONValue]) -> String? {
        guard let event = message["event"] else { return nil }
        if json { return event.compactText + "\n" }
        if case .string(let line)? = message["output"] { return line + "\n" }
        return ""
    }

    /// Says the app ended the attachment (and what became of a recording), then exits.
    func endedByApp() -> Never {
        if let recording {
            Attach.write("cachesh: attach: record: the app ended the attachment before the recording's end; \(recording.name) not written\n",
                         to: .standardError)
            AttachSignals.restoreTerminal()
            exit(1)
        }
        failAttach("the app ended the attachment")
    }

    /// Prints a streamed change, or notes a recording's line. - Returns: whether `message` was one.
    private mutating func handleStreamed(_ message: [String: JSONValue]) -> Bool {
        if case .string(let line)? = message["recording"] {
            note(recordingLine: line)
            return true
        }
        guard let text = eventText(message) else { return false }
        Attach.show(text, to: .standardOutput)
        return true
    }

    // MARK: Recording

    /// A line of the app's recording: kept; its `end` writes the transcript.
    private mutating func note(recordingLine line: String) {
        guard recording != nil else { return }   // a stray line after the end: nothing records
        recording!.text += line
        recording!.text += "\n"
        guard case .object(let fields)? = try? JSONValue(parsing: line), case .string(let kind)? = fields["record"] else { return }
        if kind == "call" { recording!.calls += 1 }
        if kind == "end" { finishRecording() }
    }

    /// The recording ended: its transcript written to its file (SPEC §9 Recording).
    private mutating func finishRecording() {
        guard let done = recording else { return }
        recording = nil
        AttachSignals.recording.store(false, ordering: .relaxed)
        let transcript: String
        switch RecordingTranscript.text(ofFile: "the app's recording", done.text) {
        case .success(let text): transcript = text
        case .failure(let error):
            failed = true
            showError("record: the app's recording cannot be written as a transcript: \(error.message)")
            return
        }
        do { try FileIO.writeAtomically(done.path, transcript) } catch {
            failed = true
            showError("record: could not write \(done.name): \(error.description)")
            return
        }
        let calls = done.calls
        let why = done.stopping ? "" : " (the app ended the recording)"
        if json {
            Attach.show(JSONValue.object(["ok": .bool(true), "command": .string("record"), "file": .string(done.name),
                                          "calls": .int(Int64(calls)), "stopped": .bool(true)]).compactText + "\n", to: .standardOutput)
        } else {
            Attach.show("recorded \(calls) call\(calls == 1 ? "" : "s") of the app to \(done.name)\(why)\n", to: .standardOutput)
        }
    }

    /// `record FILE` over the attachment: the app streams its recording here from now on.
    mutating func startRecording(name: String) -> Bool {
        if let recording {
            showError("record: already recording to \(recording.name) (record stop first)")
            return false
        }
        do { try FileIO.checkWritable(name) } catch {
            showError("record: cannot write \(name): \(error.description)")
            return false
        }
        // Set before asking: the recording's first lines may come before the answer.
        recording = ShellRecording(name: name, path: name)
        AttachSignals.recording.store(true, ordering: .relaxed)
        let id = nextID
        nextID += 1
        send(["id": .int(id), "op": .string("run"), "command": .string("record"), "json": .bool(json)])
        guard let answer = response(to: id) else { endedByApp() }
        guard answer["ok"] == .bool(true) else {
            recording = nil
            AttachSignals.recording.store(false, ordering: .relaxed)
            if case .string(let error)? = answer["error"] { showError(error) }
            return false
        }
        if json {
            Attach.show(JSONValue.object(["ok": .bool(true), "command": .string("record"), "file": .string(name),
                                          "from_start": .bool(false)]).compactText + "\n", to: .standardOutput)
        } else {
            Attach.show("recording the app to \(name) from here on\n", to: .standardOutput)
        }
        return true
    }

    /// `record stop`: the app ends its recording; its last lines, `end` last, come before the
    /// answer, and the transcript is written.
    mutating func stopRecording() -> Bool {
        guard recording != nil else {
            showError("record stop: not recording (record FILE starts)")
            return false
        }
        recording!.stopping = true
        let id = nextID
        nextID += 1
        send(["id": .int(id), "op": .string("run"), "command": .string("record stop"), "json": .bool(json)])
        guard let answer = response(to: id) else { endedByApp() }
        if answer["ok"] != .bool(true), case .string(let error)? = answer["error"] {
            showError(error)
            return false
        }
        return !failed
    }

    // MARK: Reading

    /// The next line from the app as a JSON object, reading as needed; nil at the end of the
    /// connection.
    private mutating func nextMessage() -> [String: JSONValue]? {
        while true {
            if let message = takeMessage() { return message }
            guard readAvailable() else { return nil }
        }
    }

    /// The next message: one held by a Tab's wait, else a whole line already read; nil when none.
    mutating func takeMessage() -> [String: JSONValue]? {
        guard heldTaken < held.count else { return takeReadMessage() }
        let message = held[heldTaken]
        heldTaken += 1
        if heldTaken == held.count {
            held = []
            heldTaken = 0
        }
        return message
    }

    /// A whole line already read, as a JSON object; nil when none is whole yet.
    private mutating func takeReadMessage() -> [String: JSONValue]? {
        guard let newline = buffer[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = buffer.count
            guard buffer.count - start <= Attach.maxLineBytes else {
                failAttach("the app sent a line longer than 65 MiB, the most the shell reads; detached")
            }
            return nil
        }
        let line = buffer[start..<newline]
        start = newline + 1
        scanned = start
        defer {
            if start > 1 << 20 {
                buffer.removeFirst(start)
                start = 0
                scanned = 0
            }
        }
        guard case .object(let fields)? = try? JSONValue(parsing: String(decoding: line, as: UTF8.self)) else {
            failAttach("the app sent a line that is not a JSON object; detached")
        }
        return fields
    }

    /// Reads what the socket has (waiting for something). - Returns: false at its end.
    mutating func readAvailable() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer += chunk[..<count]
            return true
        }
    }
}

/// A recording the app streams to the shell: its lines as they came, the file it becomes.
struct ShellRecording {
    let name: String
    let path: String
    var text = ""
    var calls = 0
    /// The shell asked for its end (`record stop`, or the shell's own end).
    var stopping = false
}

/// SIGINT and SIGTERM while the app records for this shell: the recording is stopped and written
/// before the shell ends (a second one ends it at once). Otherwise they end the shell as usual.
enum AttachSignals {
    /// Whether a recording is under way (read by the signal's handler).
    static let recording = Atomic<Bool>(false)
    /// The pipe a signal writes a byte to, read by `wait(for:)`.
    static let pipe: (read: Int32, write: Int32) = {
        var fds: [Int32] = [-1, -1]
        _ = fds.withUnsafeMutableBufferPointer { systemPipe($0.baseAddress!) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }()
    static let signalled = Atomic<Int>(0)

    /// Installs the handlers. - Returns: their sources, to be kept alive for the run.
    static func install() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        let wake = pipe.write
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let count = signalled.add(1, ordering: .relaxed).newValue
                guard recording.load(ordering: .relaxed), count == 1 else {
                    // A line being typed stays as it is, and whatever comes next (the calling
                    // shell's prompt) starts on a line of its own, not after its text. (Only a
                    // line feed: the editor's state belongs to the thread that reads lines.)
                    if restoreTerminal() && lineBeingEdited.load(ordering: .relaxed) != 0 { writeOut("\n") }
                    exit(128 + number)
                }
                var byte: UInt8 = 1
                _ = write(wake, &byte, 1)
            }
            source.resume()
            sources.append(source)
        }
        return sources
    }

    /// The terminal's settings before an interactive attachment's line editor took it, put back
    /// by a signal that ends the shell while a line is edited.
    static let terminal = Mutex<termios?>(nil)

    static func keepTerminal() {
        var settings = termios()
        guard tcgetattr(0, &settings) == 0 else { return }
        terminal.withLock { $0 = settings }
    }

    static func forgetTerminal() { terminal.withLock { $0 = nil } }

    /// Before the shell exits: a line being edited has the terminal in the editor's mode (the
    /// shell may end from inside the edit: a signal, or what the app sent refused), put back
    /// as it was.
    /// In the terminal's foreground only: a stopped or background shell that changed the
    /// terminal would be stopped by SIGTTOU instead of ending.
    /// - Returns: whether it did (the shell is in the foreground, and a line editor had it).
    @discardableResult
    static func restoreTerminal() -> Bool {
        guard var settings = terminal.withLock({ $0 }), inTerminalForeground() else { return false }
        return tcsetattr(0, TCSANOW, &settings) == 0
    }

    /// Ctrl-C on the empty line of an interactive attachment (the editor reads it as a key, not
    /// a signal): what SIGINT does.
    static func interruptFromKeyboard() {
        let count = signalled.add(1, ordering: .relaxed).newValue
        guard recording.load(ordering: .relaxed), count == 1 else { exit(128 + SIGINT) }
    }

    /// Whether a signal asked the shell to end.
    static var interrupted: Bool { signalled.load(ordering: .relaxed) > 0 }

    /// Waits until one of `fds` can be read. - Returns: the first ready, or nil when a signal came.
    static func wait(for fds: [Int32]) -> Int32? {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        polled.append(pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0))
        while true {
            if interrupted { return nil }
            let n = poll(&polled, nfds_t(polled.count), -1)
            if n < 0 && errno == EINTR { continue }
            if interrupted { return nil }
            if let ready = polled.dropLast().first(where: { $0.revents != 0 }) { return ready.fd }
        }
    }
}

#if canImport(Glibc)
private let systemPipe = Glibc.pipe
private let systemSend = Glibc.send
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let systemPipe = Darwin.pipe
private let systemSend = Darwin.send
private let noSignal: Int32 = 0  // Darwin: SO_NOSIGPIPE is set on the socket (`Attach.connect`).
#endif
