import CacheCore
import CacheShell
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One attached shell: a thread reads its requests (one JSON object a line) and runs them on the
/// cache, a thread writes what is queued for it. The queue is bounded: past
/// `CacheInspector.maxQueuedBytes` the client is dropped, its queue freed.
final class Connection: Sendable {
    let id: Int
    private let fd: Int32
    private let inspector: CacheInspector
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// The most scopes one client watches (SPEC §7.1).
    static let maxScopes = 64

    /// What waits to be written: a line, or a change rendered on the writer's thread (not inside
    /// the app's call that made it).
    private enum Outgoing {
        case line([UInt8])
        case event(CacheEvent, clockStart: Int64)
    }

    private struct State {
        var queue: [Outgoing] = []
        var queued = 0
        /// No more is queued; the writer sends what is queued, then the connection ends.
        var closing = false
        /// Dropped: what is queued is forgotten.
        var dropped = false
        /// The reader and the writer that have ended (the second closes the descriptor).
        var halvesDone = 0
        var greeted = false
        var readOnly = false
        var scopes: [WatchScope] = []
        /// How many changes the inspector's timeline had when this shell attached.
        var timelineMark = 0
        /// The recording this shell started (`record`), streamed to it.
        var recording: RecordingStream?
    }

    init(id: Int, fd: Int32, inspector: CacheInspector) {
        self.id = id
        self.fd = fd
        self.inspector = inspector
    }

    /// Whether the shell has said hello and the connection goes on.
    var isAttached: Bool { state.withLock { $0.greeted && !$0.closing } }
    /// Its `hello` was taken: it counts as one of the app's shells until it ends.
    var wasGreeted: Bool { state.withLock { $0.greeted } }

    /// The recording this shell started, if any.
    var recordingStream: RecordingStream? { state.withLock { $0.recording } }

    func start() {
        DispatchQueue(label: "cachesh-inspector.read.\(id)").async { [self] in
            readLoop()
            state.withLock { $0.closing = true }
            wake.signal()
            halfDone()
        }
        DispatchQueue(label: "cachesh-inspector.write.\(id)").async { [self] in
            writeLoop()
            halfDone()
        }
        let wait = inspector.helloWait.components
        let milliseconds = Int(wait.seconds) * 1000 + Int(wait.attoseconds / 1_000_000_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [weak self] in
            self?.helloDeadlinePassed(milliseconds)
        }
    }

    /// No `hello` came within the inspector's deadline: one line, and the connection is closed.
    private func helloDeadlinePassed(_ milliseconds: Int) {
        let time = milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
        let line = Protocol.line(["id": .null, "ok": .bool(false), "protocol": .int(Int64(CacheInspector.protocolVersion)),
                                  "error": .string("attach: no hello within \(time) of connecting; the connection is closed")])
        let expired = state.withLock { state -> Bool in
            guard !state.greeted && !state.closing else { return false }
            state.queue.append(.line(line))
            state.queued += line.count
            state.closing = true
            return true
        }
        if expired { wake.signal() }
    }

    private func halfDone() {
        let last = state.withLock { state -> Bool in
            state.halvesDone += 1
            return state.halvesDone == 2
        }
        guard last else { return }
        close(fd)
        inspector.ended(self)
    }

    // MARK: Sending

    /// Queues a line; a client whose queue would pass the bound is dropped instead.
    func send(_ line: [UInt8]) {
        enqueue(.line(line), bytes: line.count)
    }

    /// Queues `item`, counted as `bytes`; a client whose queue would pass the bound is dropped
    /// instead, its queue freed.
    private func enqueue(_ item: Outgoing, bytes: Int) {
        let overflow = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            if state.queued + bytes > inspector.queueLimit {
                state.closing = true
                state.dropped = true
                state.queue.removeAll()
                state.queued = 0
                return true
            }
            state.queue.append(item)
            state.queued += bytes
            return false
        }
        if overflow { shutdown(fd, Int32(SHUT_RDWR)) }
        wake.signal()
    }

    /// Sends `line`, then ends the connection.
    private func sendAndEnd(_ line: [UInt8]) {
        send(line)
        state.withLock { $0.closing = true }
        wake.signal()
    }

    /// Ends the connection now (the inspector stops).
    func drop() {
        state.withLock { state in
            state.closing = true
            state.dropped = true
            state.queue.removeAll()
            state.queued = 0
        }
        shutdown(fd, Int32(SHUT_RDWR))
        wake.signal()
    }

    private func writeLoop() {
        while true {
            wake.wait()
            let (items, closing) = state.withLock { state -> ([Outgoing], Bool) in
                defer {
                    state.queue.removeAll(keepingCapacity: false)
                    state.queued = 0
                }
                return (state.queue, state.closing)
            }
            // Many lines at once in one write: a change a line would otherwise cost a system call each.
            var bytes: [UInt8] = []
            for item in items {
                switch item {
                case .line(let line): bytes += line
                case .event(let event, let clockStart): bytes += Self.eventLine(event, clockStart: clockStart)
                }
                if bytes.count >= 1 << 16 {
                    guard Listener.writeAll(fd, bytes) else { return drop() }
                    bytes.removeAll(keepingCapacity: true)
                }
            }
            if !bytes.isEmpty, !Listener.writeAll(fd, bytes) { return drop() }
            if closing {
                shutdown(fd, Int32(SHUT_RDWR))
                return
            }
        }
    }

    /// Inside the app's call: queues `event` when one of this client's scopes holds it. It is
    /// rendered on the writer's thread; counted against the bound as the line it becomes: twice
    /// its value and key (JSON and text), and the 256 bytes an observer line's times, cause, state
    /// and field names take at most.
    func deliver(_ event: CacheEvent, clockStart: Int64) {
        let wanted = state.withLock { state in
            !state.closing && !state.scopes.isEmpty && state.scopes.contains { InspectedCommand.matches($0, event) }
        }
        guard wanted else { return }
        enqueue(.event(event, clockStart: clockStart), bytes: 2 * ((event.stored?.utf8Count ?? 0) + event.key.utf8.count) + 256)
    }

    /// A change's line of the protocol: its observer line as JSON and as text (SPEC §9). Made by
    /// joining the two: the JSON line is already compact, and `event` sorts before `output`, so
    /// the bytes are those of the object's compact text, without parsing the JSON line back.
    private static func eventLine(_ event: CacheEvent, clockStart: Int64) -> [UInt8] {
        var json = InspectedCommand.eventLine(event, clockStart: clockStart, json: true)
        while json.last == "\n" { json.removeLast() }
        let human = InspectedCommand.eventLine(event, clockStart: clockStart, json: false)
        var line: [UInt8] = []
        line.reserveCapacity(json.utf8.count + human.utf8.count + 32)
        line += #"{"event":"#.utf8
        line += json.utf8
        line += #","output":"#.utf8
        line += JSONValue.string(human).compactText.utf8
        line += "}\n".utf8
        return line
    }

    // MARK: Reading

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var line: [UInt8] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            var start = 0
            for i in 0..<count where buffer[i] == UInt8(ascii: "\n") {
                line += buffer[start..<i]
                start = i + 1
                guard line.count <= CacheInspector.maxRequestBytes else { return tooLong() }
                guard handle(line) else { return }
                line.removeAll(keepingCapacity: true)
            }
            line += buffer[start..<count]
            if line.count > CacheInspector.maxRequestBytes { return tooLong() }
            if state.withLock({ $0.closing }) { return }
        }
    }

    private func tooLong() {
        sendAndEnd(Protocol.line(["id": .null, "ok": .bool(false),
                                  "error": .string("attach: a request line longer than 1 MiB (the most the app reads); the connection is closed")]))
    }

    private func respond(_ id: JSONValue, ok: Bool, _ fields: [String: JSONValue] = [:]) {
        var fields = fields
        fields["id"] = id
        fields["ok"] = .bool(ok)
        send(Protocol.line(fields))
    }

    /// Answers a request that is not one: an error, and the connection goes on; before `hello`,
    /// it ends after the error (so what is sent before `hello` is one line, which the socket
    /// always takes: a client that floods bad lines and never reads cannot keep its connection
    /// past the hello deadline by filling the socket's buffers). - Returns: false when it ends.
    private func refuse(_ id: JSONValue, _ error: String) -> Bool {
        guard state.withLock({ $0.greeted }) else {
            sendAndEnd(Protocol.line(["id": id, "ok": .bool(false), "error": .string(error)]))
            return false
        }
        respond(id, ok: false, ["error": .string(error)])
        return true
    }

    /// Answers one request. - Returns: false when the connection ends.
    private func handle(_ bytes: [UInt8]) -> Bool {
        if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) { return true }
        let request: JSONValue
        do {
            request = try JSONValue(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            return refuse(.null, "attach: a request that is not JSON (\(error.message))")
        }
        guard case .object(let fields) = request else {
            return refuse(.null, "attach: a request is a JSON object with an id and an op")
        }
        let id: JSONValue
        switch fields["id"] {
        case .int(let n)?: id = .int(n)
        case .string(let s)? where s.utf8.count <= 64: id = .string(s)
        default:
            return refuse(.null, "attach: a request needs an id (a number, or a string of at most 64 bytes)")
        }
        guard case .string(let op)? = fields["op"] else {
            return refuse(id, "attach: a request needs an op (hello, run, complete)")
        }
        if !state.withLock({ $0.greeted }) {
            guard op == "hello" else {
                sendAndEnd(Protocol.line(["id": id, "ok": .bool(false), "error": .string("attach: the first request must be a hello")]))
                return false
            }
            return hello(id, fields)
        }
        switch op {
        case "run":
            guard case .string(let command)? = fields["command"] else {
                respond(id, ok: false, ["error": .string("attach: run needs a command (a string)")])
                return true
            }
            run(id, command, json: fields["json"] == .bool(true))
        case "complete":
            guard case .string(let text)? = fields["text"] else {
                respond(id, ok: false, ["error": .string("attach: complete needs a text (the command typed so far, a string)")])
                return true
            }
            complete(id, text)
        case "hello":
            respond(id, ok: false, ["error": .string("attach: hello was already given")])
        default:
            respond(id, ok: false, ["error": .string("attach: unknown op \"\(VisibleText.of(String(op.prefix(64))))\" (hello, run, complete)")])
        }
        return true
    }

    private func hello(_ id: JSONValue, _ fields: [String: JSONValue]) -> Bool {
        let version = CacheInspector.protocolVersion
        if let token = inspector.token {
            guard case .string(let given)? = fields["token"], Self.sameToken(given, token) else {
                sendAndEnd(Protocol.line(["id": id, "ok": .bool(false), "protocol": .int(Int64(version)),
                                          "error": .string("attach: refused: no token or a wrong one (a TCP attachment needs the token the app printed, in CACHESH_TOKEN or --token-file FILE)")]))
                return false
            }
        }
        guard case .int(let theirs)? = fields["protocol"], theirs == Int64(version) else {
            let theirs = fields["protocol"].map { $0.compactText } ?? "none"
            sendAndEnd(Protocol.line(["id": id, "ok": .bool(false), "protocol": .int(Int64(version)),
                                      "error": .string("attach: the app speaks protocol version \(version), the shell version \(VisibleText.of(String(theirs.prefix(32))))")]))
            return false
        }
        guard inspector.admitShell() else {
            sendAndEnd(Protocol.line(["id": id, "ok": .bool(false), "protocol": .int(Int64(version)),
                                      "error": .string("attach: the app has \(CacheInspector.maxClients) shells attached, the most it takes")]))
            return false
        }
        let mark = inspector.timelineMark()
        let greeted = state.withLock { state -> Bool in
            // The hello deadline passed meanwhile: the connection ends, and its place is given back.
            guard !state.closing else { return false }
            state.greeted = true
            state.readOnly = fields["read_only"] == .bool(true)
            state.timelineMark = mark
            return true
        }
        guard greeted else {
            inspector.releaseShell()
            return false
        }
        inspector.updateTap()
        respond(id, ok: true, ["protocol": .int(Int64(version))])
        return true
    }

    /// Compares the whole of both, whatever differs first (no early exit a timing could tell).
    static func sameToken(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var differ = x.count ^ y.count
        for i in 0..<min(x.count, y.count) { differ |= Int(x[i] ^ y[i]) }
        return differ == 0
    }

    private func run(_ id: JSONValue, _ command: String, json: Bool) {
        let line = command.trimmingBlanks()
        let readOnly = state.withLock { $0.readOnly }
        if let refusal = InspectedCommand.refusal(line, readOnly: readOnly) {
            respond(id, ok: false, ["error": .string(refusal)])
            return
        }
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if words[0] == "watch" || words[0] == "unwatch" {
            watch(id, words, json: json)
            return
        }
        if words[0] == "record" {
            record(id, words, json: json)
            return
        }
        let mark = state.withLock { $0.timelineMark }
        let result = inspector.cache.withIsolation { cache in
            InspectedCommand.run(line, on: cache, json: json, timeline: inspector.timeline(since: mark))
        }
        var fields: [String: JSONValue] = ["output": .string(result.output)]
        if !result.errors.isEmpty { fields["error"] = .string(result.errors) }
        respond(id, ok: result.ok, fields)
    }

    /// Tab in the attached shell: what completes the word before its cursor, from the app's cache
    /// (`candidates`: at most 200, sorted; `total`: how many match in all; `replaced`: the typed
    /// text they replace; `common_prefix`: what they all start with). No candidate: an empty list.
    private func complete(_ id: JSONValue, _ text: String) {
        let readOnly = state.withLock { $0.readOnly }
        // The keys copied inside the cache's isolation, sorted outside it: the app's calls wait
        // for the copy only.
        let source = inspector.cache.withIsolation { cache in InspectedCommand.completionSource(for: text, on: cache) }
        let result = source.flatMap { InspectedCommand.completion(of: text, readOnly: readOnly, from: $0) }
        respond(id, ok: true, [
            "candidates": .array((result?.candidates ?? []).map(JSONValue.string)),
            "total": .int(Int64(result?.total ?? 0)),
            "replaced": .string(result?.replaced ?? ""),
            "common_prefix": .string(result?.commonPrefix ?? ""),
        ])
    }

    /// `record` and `record stop`: the app's recording from here on, its lines streamed to this
    /// shell as they are made (the shell writes the transcript when the `end` line arrives). The
    /// cache holds one recording at a time: one the app made itself, or another shell's, is left
    /// alone. A shell that leaves, or is dropped, stops its recording.
    private func record(_ id: JSONValue, _ words: [String], json: Bool) {
        let cache = inspector.cache
        if words.count == 2 && words[1] == "stop" {
            guard let stream = recordingStream else {
                respond(id, ok: false, ["error": .string("record stop: not recording (record FILE starts)")])
                return
            }
            // The stream's lines are queued, `end` last, before this answer.
            let stopped = cache.withIsolation { cache -> String? in
                guard cache.isRecording(to: stream) else { return "record stop: the app ended the recording already" }
                do throws(CacheError) { try cache.stopRecording() } catch { return "record stop: \(error.message)" }
                return nil
            }
            state.withLock { $0.recording = nil }
            if let stopped { return respond(id, ok: false, ["error": .string(stopped)]) }
            respond(id, ok: true, ["output": .string(""), "recording": .bool(false)])
            return
        }
        guard words.count == 1 else {
            respond(id, ok: false, ["error": .string("record: over an attachment send record or record stop (the shell writes the transcript, the app no file)")])
            return
        }
        if let stream = recordingStream, cache.withIsolation({ $0.isRecording(to: stream) }) {
            respond(id, ok: false, ["error": .string("record: already recording (record stop first)")])
            return
        }
        let stream = RecordingStream { [weak self] line in
            self?.send(Protocol.line(["recording": .string(line)]))
        }
        let started = cache.withIsolation { cache -> Bool in
            guard !cache.isRecording else { return false }
            cache.startRecording(to: stream)
            return true
        }
        guard started else {
            respond(id, ok: false, ["error": .string("record: the app's cache is recording already (its own Cache.startRecording, or another shell's record); one recording at a time")])
            return
        }
        state.withLock { $0.recording = stream }
        respond(id, ok: true, ["output": .string(""), "recording": .bool(true)])
    }

    /// `watch [SCOPE]` and `unwatch [SCOPE]`: this client's scopes, whose changes stream to it.
    private func watch(_ id: JSONValue, _ words: [String], json: Bool) {
        let name = words[0]
        guard words.count <= 2 else {
            respond(id, ok: false, ["error": .string("\(name): one scope at a time (*, NS:* or a key)")])
            return
        }
        var scope: WatchScope?
        if words.count == 2 {
            switch InspectedCommand.scope(words[1]) {
            case .success(let got): scope = got
            case .failure(let error):
                respond(id, ok: false, ["error": .string(error.message.replacingWatch(with: name))])
                return
            }
        }
        let outcome = state.withLock { state -> (scopes: [WatchScope], error: String?) in
            if name == "watch", let scope {
                if !state.scopes.contains(scope) {
                    guard state.scopes.count < Self.maxScopes else {
                        return (state.scopes, "watch: \(Self.maxScopes) scopes watched, the most one attachment watches")
                    }
                    state.scopes.append(scope)
                }
            } else if name == "unwatch" {
                if let scope { state.scopes.removeAll { $0 == scope } } else { state.scopes.removeAll() }
            }
            return (state.scopes, nil)
        }
        if let error = outcome.error {
            respond(id, ok: false, ["error": .string(error)])
            return
        }
        inspector.updateTap()
        let texts = outcome.scopes.map(InspectedCommand.text(of:))
        let output: String
        if json {
            output = JSONValue.object(["ok": .bool(true), "command": .string(name),
                                       "watching": .array(texts.map(JSONValue.string))]).compactText + "\n"
        } else {
            output = "watching: " + (texts.isEmpty ? "(nothing)" : texts.joined(separator: " ")) + "\n"
        }
        respond(id, ok: true, ["output": .string(output), "watching": .int(Int64(texts.count))])
    }
}

extension String {
    func trimmingBlanks() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }

    func replacingWatch(with name: String) -> String {
        hasPrefix("watch:") ? name + ":" + dropFirst(6) : self
    }
}
