import CacheCore
import CacheServer

/// A recording (`Cache.startRecording`) written as a transcript: the session as `.cachesh`
/// commands, each followed by what the shell prints for it, which is what the app saw. `cachesh
/// --verify` replays it on the virtual clock and matches it byte for byte (SPEC §6).
///
/// The transcript starts with `restore {SNAPSHOT}` on one line (compact JSON), the cache as the recording found it (clock,
/// sequence numbers and requests in flight included, the answers those got written into it), and
/// `server strict on`. Then, in recorded order: each call as its command (`get KEY --async` for
/// a read the app awaited), and each run of clock steps between calls as one `advance D` (even
/// `advance 0ms`: the answers and expiries due then run there, before the next call). Before a
/// command that sends requests come their answers, `server next KEY latency=D ...`, with the
/// latency the recording measured from sending to completion; a read refused as waiting until the
/// clock's end, which sent nothing, between `server strict off` and `server strict on` after
/// `server latency D KEY` (SPEC §5.6). Output is rendered by the shell's
/// own code from the recorded results and events.
public enum RecordingTranscript {
    /// The transcript of `recording`, in `mode` (JSON starts with `output json`).
    /// - Throws: a `Diagnostic` whose offset is the index of the record at fault: a call the
    ///   shell cannot express (a key it cannot type, `configure` during the recording, ...).
    /// - Complexity: O(size of the recording).
    public static func text(of recording: CacheRecording, mode: OutputMode = .human) throws(Diagnostic) -> String {
        var writer = try TranscriptWriter(recording, mode: mode)
        return try writer.write()
    }
}

/// Writes a recording as a transcript (`RecordingTranscript`). Each call is written by the command
/// that makes it (its ``CallForm``), with the checks and the state kept here.
struct TranscriptWriter {
    let records: [CacheRecord]
    let mode: OutputMode
    let snapshot: JSONValue
    var now: Int64
    var clockStart: Int64
    /// The keys active, as the app and the replay have them: `deactivate` prints which were, and
    /// the shell's `unwatch` makes keys inactive where the app's does not (see `observing`).
    var active: Set<String> = []
    var out = ""
    /// An attempt of a request: the request's id, how many snapshots had been restored during
    /// the recording when it was sent (a restored state numbers its requests again), and which
    /// of its attempts (`retry=`) it is: 0 for one in flight when the recording or a restored
    /// snapshot began, then 1, 2, ... in the order of its `sent` records. Its completions come in
    /// the same order (a failed attempt that was retried completes as a record of its own), but
    /// not always after its `sent` record: a request sent and completed while the clock moved
    /// is noted as sent when the step ends.
    struct Request: Hashable { var epoch: Int; var id: UInt64; var attempt = 0 }
    /// Each attempt's completion: its answer and time (a failed attempt that was retried
    /// completes as its own `completed` record).
    var completed: [Request: (answer: RequestAnswer?, at: Int64)] = [:]
    /// Each HTTP request's answer (status, fields, body), when it got one.
    var httpAnswers: [Request: HTTPAnswer] = [:]
    /// While writing: how many `sent` records of each request have been written (keyed by its
    /// `Request` with attempt 0).
    var attemptsWritten: [Request: Int] = [:]
    /// How many snapshots have been restored before the record being written.
    var epoch = 0
    /// The index of the record being written, for errors.
    var index = 0

    init(_ recording: CacheRecording, mode: OutputMode) throws(Diagnostic) {
        guard case .begin(let document, _)? = recording.records.first else {
            throw Diagnostic("the recording does not start with a begin record", at: 0)
        }
        records = recording.records
        self.mode = mode
        let parsed: Snapshot
        do {
            parsed = try Snapshot(document)
            // Its schedule would run on the transcript's first advance: the same check as `restore`.
            try Session.checkScheduledCommands(parsed)
        } catch { throw Diagnostic("the recording's snapshot: \(error)", at: 0) }
        now = parsed.now
        clockStart = parsed.clockStart
        // The requests in flight where the recording began, then where each restore began.
        var inFlight = Self.requestsInFlight(document)
        var completions: [Request: Int] = [:]
        for record in records {
            switch record {
            case .completed(let id, let answer, let at, let http):
                let request = Request(epoch: epoch, id: id)
                let count = completions[request, default: 0] + 1
                completions[request] = count
                let attempt = Request(epoch: epoch, id: id, attempt: inFlight.contains(id) ? count - 1 : count)
                completed[attempt] = (answer, at)
                if let http { httpAnswers[attempt] = http }
            case .call(.restore(let restored), _, _, _):
                epoch += 1
                inFlight = Self.requestsInFlight(restored)
            default: break
            }
        }
        snapshot = Self.answeringRequests(in: document, completed, epoch: 0)
        epoch = 0
        active = Self.activeKeys(document)
    }

    /// The ids of the requests with an attempt in flight in a snapshot document: those pending,
    /// but those that failed and wait for their retry (its attempt is sent later, a `sent` record).
    private static func requestsInFlight(_ document: JSONValue) -> Set<UInt64> {
        guard case .object(let top) = document, case .object(let pending)? = top["pending"],
              case .array(let requests)? = pending["requests"] else { return [] }
        let ids = Set(requests.compactMap { request -> UInt64? in
            guard case .object(let fields) = request, case .int(let id)? = fields["id"] else { return nil }
            return UInt64(bitPattern: id)
        })
        return ids.subtracting(waitingForRetry(pending))
    }

    /// The ids of the requests of a snapshot's `pending` that failed and wait for their retry.
    private static func waitingForRetry(_ pending: [String: JSONValue]) -> Set<UInt64> {
        guard case .array(let retries)? = pending["retries"] else { return [] }
        return Set(retries.compactMap { retry -> UInt64? in
            guard case .object(let fields) = retry, case .int(let id)? = fields["request"],
                  let due = fields["due"], due != .null else { return nil }
            return UInt64(bitPattern: id)
        })
    }

    /// The active keys of a snapshot document.
    private static func activeKeys(_ document: JSONValue) -> Set<String> {
        guard case .object(let top) = document, case .array(let items)? = top["active"] else { return [] }
        return Set(items.compactMap { if case .string(let s) = $0 { return s } else { return nil } })
    }

    /// The snapshot with the recorded answers of the requests it holds in flight, so the replay
    /// completes them as the app saw (a request never answered keeps what it had: its timeout).
    private static func answeringRequests(in document: JSONValue, _ completed: [Request: (answer: RequestAnswer?, at: Int64)],
                                  epoch: Int) -> JSONValue {
        guard case .object(var top) = document, case .object(var pending)? = top["pending"],
              case .array(let requests)? = pending["requests"] else { return document }
        // A request waiting for its retry has no attempt in flight to answer.
        let retrying = waitingForRetry(pending)
        pending["requests"] = .array(requests.map { request in
            guard case .object(var fields) = request, case .int(let id)? = fields["id"], !retrying.contains(UInt64(bitPattern: id)),
                  let done = completed[Request(epoch: epoch, id: UInt64(bitPattern: id))], let answer = done.answer else { return request }
            fields["completes_at"] = .string(TimeText.iso8601(ms: done.at))
            switch answer {
            case .keys(.failure(let f)), .validation(.failure(let f)): fields["answer"] = .object(["error": .string(f.message)])
            case .keys(.success(let answers)):
                fields["answer"] = .object(["values": .array(answers.map(\.document))])
            case .validation(.success(let verdicts)):
                fields["answer"] = .object(["verdicts": RecordingFormat.encodeVerdicts(verdicts)])
            }
            return .object(fields)
        })
        top["pending"] = .object(pending)
        return .object(top)
    }

    mutating func write() throws(Diagnostic) -> String {
        if mode == .json {
            emit("output json", JSONValue.object(["command": "output", "mode": "json", "ok": true]).compactText + "\n")
        }
        let entries: Int
        if case .object(let top) = snapshot, case .array(let list)? = top["entries"] { entries = list.count } else { entries = 0 }
        emit("restore " + snapshot.compactText, replying: SnapshotCommands.restoredInline(entries: entries, now: now))
        emit("server strict on", replying: ServerScriptCommands.strictReply(true))

        var content: [CacheRecord] = []
        var step: (to: Int64, content: [CacheRecord])?
        for (i, record) in records.enumerated().dropFirst() {
            index = i
            switch record {
            case .begin:
                throw fail("a second begin record")
            case .step(let to):
                if step == nil { step = (to, content) } else { step!.to = to; step!.content += content }
                content = []
            case .call(let call, let returned, let at, let ended):
                if let pending = step { try writeStep(pending.to, pending.content); step = nil }
                if at > now { try writeStep(at, []) }
                try writeCall(call, returned, content)
                now = ended
                content = []
            case .end:
                if let pending = step { try writeStep(pending.to, pending.content + content); step = nil }
                else if !content.isEmpty { try writeStep(now, content) }
                content = []
            default:
                content.append(record)
            }
        }
        if let pending = step { try writeStep(pending.to, pending.content + content) }
        return out
    }

    // MARK: Units

    /// One `advance` to `to`, with what happened while the clock moved.
    private mutating func writeStep(_ to: Int64, _ content: [CacheRecord]) throws(Diagnostic) {
        try writeAnswers(content)
        let duration = max(0, to - now)
        now += duration
        let fields: [String: JSONValue] = ["now": .string(TimeText.iso8601(ms: now)), "now_ms": .int(now - clockStart)]
        emit("advance " + TimeText.formatDuration(duration), replying: Reply(fields, order: ["now", "now_ms"]),
             after: events(content))
    }

    private mutating func writeCall(_ call: CacheCall, _ returned: RecordedReturn, _ content: [CacheRecord]) throws(Diagnostic) {
        var (command, shown) = try self.command(call, returned)
        // The app's unwatch() leaves its active keys active: one command says so, where an
        // `activate` line for each active key after every such call grew with their product.
        if case .unwatch(nil) = call, !active.isEmpty { command += " --keep-active" }
        let after = observing(call)
        try writeAnswers(content)
        let name = String(command.prefix { $0 != " " })
        let text: String
        if case .error(let message) = returned {
            // `load {CONFIG}` names itself before the error of the configuration it applies.
            let line = DiagnosticsFormatter.oneLine(call.isConfigure ? "load: " + message : message)
            text = mode == .json
                ? DiagnosticsFormatter.json(line, command: name, subcommand: CommandCatalog.subcommand(of: name, in: Array(command.utf8)[...]),
                                            file: nil, line: nil, column: nil) + "\n"
                : "error: \(line)\n"
        } else {
            text = shown.map { reply($0, to: command) } ?? ""
        }
        // A read or validation refused because its answer would come at the clock's end sent
        // nothing, so no `server next` scripts it, and strict mode would send it and diverge:
        // the replay is refused as the app was by the server's latency, strict mode off for it.
        // (A latency set here is never used again: under strict mode every answer carries its own.)
        let refused: (keys: [String]?, wait: String)?
        if case .error(let message) = returned, call.isRead { refused = Self.endOfTimeWait(message) } else { refused = nil }
        if let refused {
            emit("server strict off", replying: ServerScriptCommands.strictReply(false))
            let ms = TimeText.parseDuration(Substring(refused.wait)) ?? 0
            if let keys = refused.keys {
                for key in keys {
                    emit("server latency \(refused.wait) \(key)",
                         replying: .ok(["key": .string(key), "latency_ms": .int(ms)], human: ["server: latency of \(key) \(refused.wait)"]))
                }
            } else {
                emit("server latency \(refused.wait)", replying: .ok(["latency_ms": .int(ms)], human: ["server: latency \(refused.wait)"]))
            }
        }
        emit(command, events(content) + text)
        if refused != nil { emit("server strict on", replying: ServerScriptCommands.strictReply(true)) }
        for (command, shown) in after { emit(command, replying: shown) }
        if case .restore(let document) = call {
            // The snapshot's own clock and active keys; the shell's restore also resets its scripted server.
            if let parsed = try? Snapshot(document) { now = parsed.now; clockStart = parsed.clockStart }
            active = Self.activeKeys(document)
            epoch += 1
            emit("server strict on", replying: ServerScriptCommands.strictReply(true))
        }
    }

    /// Keeps `active` as the app has it after a call that changes it, and gives the commands
    /// written after the call's own to make the replay's the same: the shell's `unwatch KEY` also
    /// makes KEY inactive (`unwatch NS:*` and `unwatch *` none), where the app's unwatch leaves it
    /// active, so `activate KEY` follows. (The app's `unwatch()` is written `unwatch
    /// --keep-active` while a key is active: `writeCall`.)
    private mutating func observing(_ call: CacheCall) -> [(String, Reply)] {
        switch call {
        case .unwatch(.key(let key)?):
            let key = KeyName.canonical(key)
            return active.contains(key) ? [("activate \(key)", LifecycleCommands.activated(key))] : []
        case .setActive(let key, let isActive):
            let key = KeyName.canonical(key)
            if isActive { active.insert(key) } else { active.remove(key) }
        case .clearActive:
            active = []
        default:
            break
        }
        return []
    }

    /// The lines printed while a unit ran: observer events, finished reads, validation answers.
    private func events(_ content: [CacheRecord]) -> String {
        var text = ""
        for record in content {
            switch record {
            case .observed(let event):
                text += ItemText.eventLine(event, clockStart: clockStart, mode: mode, colour: false) + "\n"
            case .read(_, let result, let at):
                text += EntryCommands.readEventText(result, at: at, clockStart: clockStart, mode: mode, colour: false)
            case .validated(let result, let at):
                for line in ItemText.validatedLines(result, at: at, mode: mode) { text += line + "\n" }
            default:
                break
            }
        }
        return text
    }

    /// `server next` for every request a unit sends, before it.
    private mutating func writeAnswers(_ content: [CacheRecord]) throws(Diagnostic) {
        for record in content {
            guard case .sent(let id, let kind, let keys, let at) = record else { continue }
            var options: [String] = []
            let written = attemptsWritten[Request(epoch: epoch, id: id), default: 0] + 1
            attemptsWritten[Request(epoch: epoch, id: id)] = written
            let attempt = Request(epoch: epoch, id: id, attempt: written)
            let done = completed[attempt]
            if let done, done.answer != nil { options.append("latency=" + TimeText.formatDuration(max(0, done.at - at))) }
            switch done?.answer {
            case nil:
                options.append("--no-answer")
            case .validation(let result)?:
                switch result {
                case .failure(let f): options.append(Self.failure(f.message))
                case .success(let verdicts): options.append("value=" + Self.optionJSON(RecordingFormat.encodeVerdicts(verdicts)))
                }
                emit("server next --validate " + options.joined(separator: " "), replying: ServerScriptCommands.queued(nil))
                continue
            case .keys(.failure(let f))?:
                // A mutation's timeout is of unknown outcome: replayed as an answer lost, with its message.
                if f.outcomeUnknown && kind == .mutate {
                    options += ["--lost-answer", "error=" + Self.optionJSON(.string(f.message))]
                } else {
                    options.append(Self.failure(f.message))
                }
            case .keys(.success)? where httpAnswers[attempt] != nil:
                // An HTTP answer: its status, fields and body, as `server next` scripts one.
                let http = httpAnswers[attempt]!
                guard keys.count == 1 else { throw fail("HTTP request \(id) has \(keys.count) keys") }
                options.append("status=\(http.status)")
                options.append("headers=" + Self.optionJSON(compact: HTTPCommands.headersObject(http.fields)))
                switch http.body {
                case .json(let value)?: options.append("value=" + Self.optionJSON(value))
                case .text(let text)?: options.append("text=" + Self.optionJSON(.string(text)))
                case .binary(let size, let digest)?: options.append("binary=\(size):sha256:\(digest)")
                case nil: break
                }
                try emitNext(keys[0], options)
                continue
            case .keys(.success(let answers))?:
                guard answers.count == keys.count else { throw fail("request \(id) has \(answers.count) answers for \(keys.count) keys") }
                for (key, answer) in zip(keys, answers) {
                    let own: String
                    switch answer {
                    case .value(let value): own = "value=" + Self.optionJSON(value)
                    case .versioned(let value, _): own = "value=" + Self.optionJSON(value) + (answer.version.map { " version=\($0)" } ?? "")
                    case .notFound: own = "--not-found"
                    }
                    try emitNext(key, options + [own])
                }
                continue
            }
            guard kind != .validate else {
                emit("server next --validate " + options.joined(separator: " "), replying: ServerScriptCommands.queued(nil))
                continue
            }
            for key in keys { try emitNext(key, options) }
        }
    }

    private mutating func emitNext(_ key: String, _ options: [String]) throws(Diagnostic) {
        try checkKey(key)
        emit("server next \(key) " + options.joined(separator: " "), replying: ServerScriptCommands.queued(key))
    }

    private static func failure(_ message: String) -> String {
        message == "server error" ? "--fail" : "error=" + optionJSON(.string(message))
    }

    /// A JSON value as the value of a `name=` option: compact, with each blank inside a string
    /// that the lexer would otherwise take for the start of another word (a blank before `{`,
    /// `[`, `"` or `#`) written `\u0020`.
    static func optionJSON(_ value: JSONValue) -> String { optionJSON(compact: value.compactText) }

    /// `optionJSON` of compact JSON text (an object whose members keep an order of their own).
    static func optionJSON(compact: String) -> String {
        let text = Array(compact.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        for (i, byte) in text.enumerated() {
            if byte == UInt8(ascii: " "), i + 1 < text.count,
               [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "#")].contains(text[i + 1]) {
                out += Array("\\u0020".utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The request a read or validation refused as waiting until the clock's end would have sent
    /// (SPEC §2), as its error gives it: the keys of its fetch (nil: a validation) and how long
    /// after sending it was to be answered; nil for any other error.
    /// Both wordings are read: `would never end: it is answered D from now; nothing was sent (ways
    /// out)` and, in recordings made before it, `would run the clock to its end (TIME): it is
    /// answered D from now; nothing was sent`.
    static func endOfTimeWait(_ message: String) -> (keys: [String]?, wait: String)? {
        let prefix = "waiting for the answer to ", suffix = " from now; nothing was sent"
        var message = Substring(message)
        if message.hasSuffix(")"), let sent = message.firstRange(of: suffix + " (") { message = message[..<sent.lowerBound] + suffix }
        let would = message.firstRange(of: " would never end") ?? message.firstRange(of: " would run the clock to its end (")
        guard message.hasPrefix(prefix), message.hasSuffix(suffix), let would,
              let answered = message[would.upperBound...].firstRange(of: ": it is answered "),
              answered.upperBound <= message.index(message.endIndex, offsetBy: -suffix.count) else { return nil }
        let request = message[message.index(message.startIndex, offsetBy: prefix.count)..<would.lowerBound]
        let wait = String(message[answered.upperBound..<message.index(message.endIndex, offsetBy: -suffix.count)])
        guard TimeText.parseDuration(Substring(wait)) != nil else { return nil }
        let words = request.split(separator: " ").map(String.init)
        if words == ["validate"] { return (nil, wait) }
        guard words.first == "fetch", words.count > 1 else { return nil }
        return (Array(words.dropFirst()), wait)
    }

    // MARK: Calls as commands

    /// The command of a call and the reply the shell prints for it (nil for an error), as the
    /// command that makes the call writes it.
    private func command(_ call: CacheCall, _ returned: RecordedReturn) throws(Diagnostic) -> (command: String, reply: Reply?) {
        if case .unsupported(let name) = call {
            throw fail("the recording holds a call to \(name)(...), which a transcript cannot replay"
                       + (name == "schedule" ? ": its token names work of the app's own, which the shell has no command for"
                          + " (schedule it before startRecording() or after stopRecording())" : ""))
        }
        guard let (_, form) = CommandCatalog.callForm(call.kind) else {
            throw fail("no command of the shell makes the call \(call.kind.rawValue)")
        }
        return try form.write(call, returned, self)
    }

    /// The error of a ``CallForm`` given a call of a kind it does not write.
    func notItsKind(_ call: CacheCall) -> Diagnostic {
        fail("the call \(call.kind.rawValue) was given to the command of another kind")
    }

    /// The keys a call returned, as the command prints them (nil when it threw).
    func keys(_ returned: RecordedReturn) -> Reply? {
        if case .keys(let k) = returned { return .keys(k) }
        return nil
    }

    func keysOf(_ returned: RecordedReturn) -> [String] {
        if case .keys(let k) = returned { return k }
        return []
    }

    /// A snapshot restored by the recording, with the recorded answers of the requests it holds in flight.
    func restoring(_ document: JSONValue) -> JSONValue {
        Self.answeringRequests(in: document, completed, epoch: epoch + 1)
    }

    /// A configuration as the document `load {CONFIG}` reads (SPEC §5.1), checked to read back
    /// as the same configuration.
    func configurationDocument(_ configuration: CacheConfiguration) throws(Diagnostic) -> JSONValue {
        func duration(_ ms: Int64) -> JSONValue { .string(TimeText.formatDuration(ms)) }
        var namespaces: [String: JSONValue] = [:]
        let defaults = Policy()
        for (name, p) in configuration.namespaces {
            var f: [String: JSONValue] = ["ttl": duration(p.ttl)]
            if let stale = p.stale { f["stale"] = duration(stale) }
            if let max = p.max { f["max"] = .int(Int64(max)) }
            if p.eviction != defaults.eviction { f["policy"] = .string(p.eviction.rawValue) }
            if let s = p.staleIfError { f["stale-if-error"] = duration(s) }
            if let t = p.timeout { f["timeout"] = duration(t) }
            if p.purgeable { f["purgeable"] = true }
            if p.retry != defaults.retry { f["retry"] = .int(Int64(p.retry)) }
            if p.backoff != defaults.backoff { f["backoff"] = duration(p.backoff) }
            if !p.naive.isEmpty { f["naive"] = .array(p.naive.sorted().map { .string($0.rawValue) }) }
            if let d = p.dedupe { f["dedupe"] = duration(d) }
            if let http = p.http {
                var h: [String: JSONValue] = ["shared": .bool(http.policy.shared), "heuristic": .int(http.policy.heuristicPercent)]
                if let origin = http.origin { h["origin"] = .string(origin) }
                f["http"] = .object(h)
            }
            namespaces[name] = .object(f)
        }
        var push: [String: JSONValue] = [:]
        for (type, rule) in configuration.push {
            var f: [String: JSONValue] = [:]
            if !rule.invalidate.isEmpty { f["invalidate"] = .array(rule.invalidate.map(JSONValue.string)) }
            if !rule.refresh.isEmpty { f["refresh"] = .array(rule.refresh.map(JSONValue.string)) }
            if !rule.evict.isEmpty { f["evict"] = .array(rule.evict.map(JSONValue.string)) }
            push[type] = .object(f)
        }
        var top: [String: JSONValue] = [:]
        if !namespaces.isEmpty { top["namespaces"] = .object(namespaces) }
        if !push.isEmpty { top["push"] = .object(push) }
        if configuration.idField != CacheConfiguration().idField { top["id-field"] = .string(configuration.idField) }
        let document = JSONValue.object(top)
        let parsed: ParsedConfiguration
        do { parsed = try ParsedConfiguration(text: document.compactText) } catch {
            throw fail("configure(...) with a configuration load {CONFIG} cannot give: \(error.message)")
        }
        guard parsed.cache == configuration else {
            throw fail("configure(...) with a configuration load {CONFIG} cannot give exactly (a negative time, or a name it refuses)")
        }
        return document
    }

    // MARK: What the shell can type

    func checkKey(_ key: String) throws(Diagnostic) {
        if let problem = KeyName.problem(withKey: key) {
            throw fail("the key \(JSONValue.string(key).compactText) cannot be typed in the shell: \(problem)")
        }
    }

    func checkNamespace(_ name: String) throws(Diagnostic) {
        if let problem = KeyName.problem(withNamespace: name) {
            throw fail("the namespace \(JSONValue.string(name).compactText) cannot be typed in the shell: \(problem)")
        }
    }

    func checkScope(_ scope: WatchScope) throws(Diagnostic) {
        switch scope {
        case .all: break
        case .key(let key): try checkKey(key)
        case .namespace(let ns): try checkNamespace(ns)
        }
    }

    /// A bare word: not empty, no blank or control character, not starting like a JSON value or a comment.
    func checkWord(_ text: String, _ what: String) throws(Diagnostic) {
        let bad = text.isEmpty || text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
            || ["\"", "{", "[", "#"].contains(text.first!)
        if bad { throw fail("the \(what) \(JSONValue.string(text).compactText) cannot be typed as a word of the shell") }
    }

    func fail(_ message: String) -> Diagnostic { Diagnostic(message, at: index) }

    // MARK: Output

    /// What `command` prints when it answers `reply`: its name (and, for a form of `server`, its
    /// subcommand) as the shell's JSON says them.
    private func reply(_ reply: Reply, to command: String) -> String {
        let name = String(command.prefix { $0 != " " })
        var reply = reply
        reply.subcommand = CommandCatalog.subcommand(of: name, in: Array(command.utf8)[...])
        return reply.text(command: name, mode: mode, colour: false)
    }

    /// Appends `command` with the output of its `reply`, after `before` (what it printed first).
    private mutating func emit(_ command: String, replying reply: Reply, after before: String = "") {
        emit(command, before + self.reply(reply, to: command))
    }

    /// Appends one command and its output, made safe for a terminal as the session makes every line it prints.
    private mutating func emit(_ command: String, _ output: String) {
        out += TranscriptSyntax.render(command: command, output: Render.safeForTerminal(output, colour: false))
    }
}

extension RecordingTranscript {
    /// The transcript of a recording file (`Cache.startRecording(to:)`), named `name` in errors.
    /// - Returns: the transcript, or a `Diagnostic` whose message is the whole error line
    ///   `NAME:LINE: error: ...` naming the line at fault: a damaged or truncated file, another
    ///   format or a newer version, or a call the shell cannot express. Control characters in it
    ///   are escaped, so it is safe to print.
    public static func text(ofFile name: String, _ text: String, mode: OutputMode = .human) -> Result<String, Diagnostic> {
        let source = SourceFile(name: name, text: text)
        var offsets: [Int] = []
        let recording: CacheRecording
        do { recording = try RecordingFormat.parse(text, recordOffsets: &offsets) } catch {
            return .failure(Diagnostic(DiagnosticsFormatter.oneLine(source.render(error))))
        }
        do { return .success(try Self.text(of: recording, mode: mode)) } catch {
            let offset = error.offset < offsets.count ? offsets[error.offset] : 0
            return .failure(Diagnostic(DiagnosticsFormatter.oneLine(source.render(Diagnostic(error.message, at: offset)))))
        }
    }
}

private extension CacheCall {
    var isConfigure: Bool { if case .configure = self { true } else { false } }
    /// A call that may wait for an answer: `get`, `mget`, `pages`, `validate`.
    var isRead: Bool {
        switch self {
        case .get, .mget, .pages, .validate: true
        default: false
        }
    }
}
