import CacheCore

/// One scripted answer (`server next`): what the server answers to the next request of a key (or
/// the next validation), and after how long.
public struct ScriptedAnswer: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// The server's data, as an unscripted request gets it.
        case data
        case value(JSONValue)
        case notFound
        case failure(String)
        /// Never answered: the request stays in flight until a namespace's `timeout=` fails it.
        case noAnswer
        /// The server applies a mutation, but its answer is lost on the way: the request fails
        /// after the latency with this message, and the client cannot tell whether it was applied
        /// (an unknown outcome, SPEC §1.1).
        case lostAnswer(String)
        /// A validation response.
        case verdicts([String: NamespaceVerdict])
    }
    /// After this long (ms); nil: the server's latency.
    public var latency: Int64?
    public var outcome: Outcome
    /// The server version the answer carries (`version=N`, SPEC §1.1 Versions); nil: the data's
    /// own version when it answers from the data, else none.
    public var version: UInt64?
    /// The server applies a mutation to its data as an unscripted one would, whatever it answers
    /// (`--commit`: a failure after applying it; `--lost-answer` always applies it).
    public var commit: Bool
    /// The status of the answer to an HTTP request (`status=N`); nil: 200, or 404 for not found.
    public var status: Int?
    /// The header fields of the answer to an HTTP request (`headers={...}`); nil: those the
    /// server keeps for the key when it answers from its data, else none.
    public var headers: HTTPFields?
    /// The body of the answer to an HTTP request when it is text or binary (`text=`, `binary=`);
    /// nil: the outcome's value as JSON.
    public var body: HTTPBody?

    public init(latency: Int64?, outcome: Outcome, version: UInt64? = nil, commit: Bool = false,
                status: Int? = nil, headers: HTTPFields? = nil, body: HTTPBody? = nil) {
        self.body = body
        self.latency = latency
        self.outcome = outcome
        self.version = version
        self.commit = commit
        self.status = status
        self.headers = headers
    }

    /// The answer as a snapshot's `server.next` keeps it: only what is set, `outcome` always.
    var json: JSONValue {
        var f: [String: JSONValue] = [:]
        if let latency { f["latency_ms"] = .int(latency) }
        switch outcome {
        case .data: f["outcome"] = "data"
        case .value(let value): f["outcome"] = "value"; f["value"] = value
        case .notFound: f["outcome"] = "not_found"
        case .failure(let message): f["outcome"] = "error"; f["message"] = .string(message)
        case .noAnswer: f["outcome"] = "no_answer"
        case .lostAnswer(let message): f["outcome"] = "lost_answer"; f["message"] = .string(message)
        case .verdicts(let verdicts): f["outcome"] = "verdicts"; f["verdicts"] = RecordingFormat.encodeVerdicts(verdicts)
        }
        if let version { f["version"] = .int(Int64(version)) }
        if commit { f["commit"] = true }
        if let status { f["status"] = .int(Int64(status)) }
        if let headers { f["headers"] = headers.json }
        switch body {
        case .text(let text)?: f["body_text"] = .string(text)
        case .binary(let size, let digest)?: f["body_binary"] = HTTPBody.binary(size: size, sha256: digest).entryValue
        case .json?, nil: break
        }
        return .object(f)
    }

    /// Reads an answer `json` wrote, checked as `server next` checks what it queues: a validation's
    /// (`validation`) is a verdict list or a failure, with no version, HTTP fields or body.
    /// - Throws: `SnapshotError` naming the first bad field by its path.
    init(_ r: OriginSettingsReader, validation: Bool) throws(SnapshotError) {
        try r.only(Set(["latency_ms", "outcome", "value", "message", "verdicts", "version", "commit", "status", "headers"])
                    .union(OriginSettingsReader.bodyFields))
        latency = try r.optionalDuration("latency_ms")
        let kind = try r.string("outcome")
        let allowed = validation ? ["data", "verdicts", "error", "no_answer"]
            : ["data", "value", "not_found", "error", "no_answer", "lost_answer"]
        guard allowed.contains(kind) else {
            throw r.fail("outcome", "expected \(allowed.joined(separator: ", ")), not \(JSONValue.string(kind).compactText)")
        }
        // Each outcome's one field, and no other's.
        let own = ["value": "value", "error": "message", "lost_answer": "message", "verdicts": "verdicts"][kind]
        for name in ["value", "message", "verdicts"] where name != own && r.has(name) {
            throw r.fail(name, "an answer of outcome \(kind) has no \(name)")
        }
        switch kind {
        case "value": outcome = .value(try r.dataValue("value"))
        case "not_found": outcome = .notFound
        case "error": outcome = .failure(try r.string("message"))
        case "no_answer": outcome = .noAnswer
        case "lost_answer": outcome = .lostAnswer(try r.string("message"))
        case "verdicts": outcome = .verdicts(try r.verdicts("verdicts"))
        default: outcome = .data
        }
        version = try r.optionalVersion("version")
        commit = r.has("commit") ? try r.bool("commit") : false
        status = try r.optionalStatus()
        headers = try r.optionalFields("headers")
        body = try r.body()
        // What `server next` gives together, and nothing else.
        if validation, let name = ["version", "commit", "status", "headers", "body_text", "body_binary"].first(where: r.has) {
            throw r.fail(name, "an answer to a validation has no \(name)")
        }
        if commit && kind != "error" && kind != "no_answer" {
            throw r.fail("commit", "commit goes with outcome error or no_answer, not \(kind)")
        }
        if r.has("body") { throw r.fail("body", "a JSON answer is its value (outcome value)") }
        if let body {
            let name = r.has("body_text") ? "body_text" : "body_binary"
            guard case .value(let value) = outcome, value == body.entryValue else {
                throw r.fail(name, "an answer with a text or binary body has outcome value, the body's value")
            }
        }
        if version != nil && (body != nil || (kind != "value" && kind != "data")) {
            throw r.fail("version", "a version goes with an answer that has a value (outcome value or data)")
        }
    }

    /// Whether a mutation that takes this answer changes the server's data.
    var applies: Bool {
        if case .lostAnswer = outcome { return true }
        return commit
    }
}

/// Scripted answers and strict mode: a recorded session replays with the answers the app got.
///
/// A request takes, for each of its keys, the first answer queued for that key. It fails whole if
/// one of them is a failure (with the first failure's message), is never answered if one of them
/// is `--no-answer`, and otherwise answers each key as scripted, after the longest latency among
/// its keys. Keys with nothing queued are answered from the data, unless strict mode is on: then a
/// request with a key that has nothing queued gets no answer at all and is reported as a
/// divergence (`takeDivergence`). Failures set by `server fail` and the offline switch are not
/// consulted for scripted requests; scripted answers leave the data alone, except that a mutation
/// taking a `--commit` or `--lost-answer` answer is applied to it (`commit`).
extension SimulatedServer {
    /// Queues the answer to the next request involving `key`. - Returns: how many are queued for it.
    @discardableResult
    public func queue(_ answer: ScriptedAnswer, for key: String) -> Int {
        let key = KeyName.canonical(key)
        scripted[key, default: []].append(answer)
        return scripted[key]!.count
    }

    /// Queues the answer to the next validation request. - Returns: how many are queued.
    @discardableResult
    public func queueValidation(_ answer: ScriptedAnswer) -> Int {
        scriptedValidations.append(answer)
        return scriptedValidations.count
    }

    /// The request strict mode found nothing queued for (`fetch feed:home`), once.
    public func takeDivergence() -> String? {
        defer { divergence = nil }
        return divergence
    }

    /// The reply to a fetch or mutation from the script; nil when the request is not scripted.
    /// `commit` applies the mutation to the data when an answer taken says so (`applies`).
    func scriptedReply(_ kind: RequestKind, keys: [String], commit: () -> Void = {}) -> OriginReply<[KeyAnswer]>? {
        let queued = keys.map { scripted[$0]?.isEmpty == false }
        guard strict || queued.contains(true) else { return nil }
        if strict && queued.contains(false) {
            diverged("\(kind.rawValue) \(keys.joined(separator: " "))")
            return .deferred
        }
        var answers: [ScriptedAnswer] = []
        for (i, key) in keys.enumerated() {
            if queued[i] {
                answers.append(scripted[key]!.removeFirst())
                if scripted[key]!.isEmpty { scripted.removeValue(forKey: key) }
            } else {
                answers.append(ScriptedAnswer(latency: nil, outcome: .data))
            }
        }
        var ms: Int64 = 0
        for (i, answer) in answers.enumerated() { ms = max(ms, answer.latency ?? latency(for: [keys[i]])) }
        if answers.contains(where: \.applies) { commit() }
        if answers.contains(where: { $0.outcome == .noAnswer }) {
            return .after(latencyMs: .max, .failure(OriginFailure("no answer")))
        }
        for answer in answers {
            if case .failure(let message) = answer.outcome { return .after(latencyMs: ms, .failure(OriginFailure(message))) }
        }
        for answer in answers {
            if case .lostAnswer(let message) = answer.outcome {
                return .after(latencyMs: ms, .failure(OriginFailure(message, outcomeUnknown: true)))
            }
        }
        return .after(latencyMs: ms, .success(zip(keys, answers).map { key, answer in
            switch answer.outcome {
            case .value(let value): return .answer(value, version: answer.version)
            case .notFound: return .notFound
            default:
                guard let version = answer.version, let value = data[key] else { return answerFromData(key) }
                return .versioned(value, version: version)
            }
        }))
    }

    /// The reply to a validation from the script; nil when it is not scripted.
    func scriptedValidation(_ request: [String: Int64], items: Bool) -> OriginReply<[String: NamespaceVerdict]>? {
        guard strict || !scriptedValidations.isEmpty else { return nil }
        guard !scriptedValidations.isEmpty else {
            diverged("validate " + request.keys.sorted().map { $0 + ":*" }.joined(separator: " "))
            return .deferred
        }
        let answer = scriptedValidations.removeFirst()
        let ms = answer.latency ?? latency
        switch answer.outcome {
        case .noAnswer: return .after(latencyMs: .max, .failure(OriginFailure("no answer")))
        case .failure(let message): return .after(latencyMs: ms, .failure(OriginFailure(message)))
        case .verdicts(let verdicts): return .after(latencyMs: ms, .success(verdicts))
        case .data, .value, .notFound, .lostAnswer: return .after(latencyMs: ms, .success(verdicts(for: request, items: items)))
        }
    }

    /// How long after it is sent a fetch of `keys` sent now would be answered, as `fetch` would
    /// decide it (`Int64.max`: `--no-answer`), changing nothing; nil for a strict divergence, which
    /// no answer ends.
    public func latencyIfSent(fetch keys: [String]) -> Int64? {
        let queued = keys.map { scripted[$0]?.first }
        guard strict || queued.contains(where: { $0 != nil }) else { return latency(for: keys) }
        if strict && queued.contains(where: { $0 == nil }) { return nil }
        var ms: Int64 = 0
        for (i, answer) in queued.enumerated() {
            if answer?.outcome == .noAnswer { return .max }
            ms = max(ms, answer?.latency ?? latency(for: [keys[i]]))
        }
        return ms
    }

    /// The same for a validation sent now.
    public func latencyIfSentValidation() -> Int64? {
        guard strict || !scriptedValidations.isEmpty else { return latency }
        guard let answer = scriptedValidations.first else { return nil }
        return answer.outcome == .noAnswer ? .max : answer.latency ?? latency
    }

    private func diverged(_ request: String) {
        if divergence == nil { divergence = request }
    }
}
