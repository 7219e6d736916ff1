import CacheCore

/// The simulated server as an HTTP origin (docs/SPEC.md, HTTP namespaces): each key's data is a
/// representation served with the header fields `server set ... headers=` gave it and a `Date`
/// of the virtual time it answers at; it answers a conditional request itself (RFC 9110 §13.2.2:
/// `304` when `If-None-Match` matches its `ETag`, or, without `If-None-Match`, when it has not
/// been modified since `If-Modified-Since`). A scripted answer (`server next KEY status=N
/// headers={...} VALUE`) is sent as scripted, conditional or not.
extension SimulatedServer: HTTPOrigin {
    public func http(_ request: HTTPRequest, requestID: UInt64, at now: Int64) -> OriginReply<HTTPAnswer> {
        let key = request.key
        let script = scripted[key]?.first
        if let reply = scriptedReply(.fetch, keys: [key]) {
            guard case .after(let ms, let result) = reply else { return .deferred }
            return .after(latencyMs: ms, result.map { answers in
                scriptedHTTPAnswer(answers[0], script ?? ScriptedAnswer(latency: nil, outcome: .data), key: key, method: request.method, at: now)
            })
        }
        let ms = latency(for: [key])
        if takeFailure(for: [key]) { return .after(latencyMs: ms, .failure(OriginFailure("server error"))) }
        if request.method == "HEAD" {
            var answer = httpAnswerFromData(key, request: request.fields, at: now)
            answer.body = nil
            return .after(latencyMs: ms, .success(answer))
        }
        guard request.method != "GET" else { return .after(latencyMs: ms, .success(httpAnswerFromData(key, request: request.fields, at: now))) }
        return .after(latencyMs: ms, .success(applyUnsafe(request, at: now)))
    }

    /// An unsafe request applied to the data: PUT and PATCH set the key's value to the body
    /// (201 when it had none, else 200 with it), DELETE deletes it (204, or 404 without data),
    /// POST changes nothing and answers 200 with the body (script others with `server next`).
    func applyUnsafe(_ request: HTTPRequest, at now: Int64) -> HTTPAnswer {
        let date = HTTPFields([.init("Date", HTTPDate.format(now))])
        let key = request.key
        switch request.method {
        case "PUT", "PATCH":
            let existed = data[key] != nil
            let value = request.body ?? .null
            set(key, value, at: now)
            return HTTPAnswer(status: existed ? 200 : 201, fields: date, body: .json(value))
        case "DELETE":
            return delete(key, at: now) ? HTTPAnswer(status: 204, fields: date) : HTTPAnswer(status: 404, fields: date)
        default:
            return HTTPAnswer(status: 200, fields: date, body: request.body.map(HTTPBody.json))
        }
    }

    /// The answer a scripted one gives: its status (else 200, or 404 when not found), its fields
    /// (else the key's own when it answers from the data), a `Date` added when it has none.
    private func scriptedHTTPAnswer(_ answer: KeyAnswer, _ script: ScriptedAnswer, key: String, method: String, at now: Int64) -> HTTPAnswer {
        let status = script.status ?? (answer.value == nil ? 404 : 200)
        var fields = script.headers ?? (script.outcome == .data ? headers[key] ?? HTTPFields() : HTTPFields())
        if !fields.contains("Date") { fields.append("Date", HTTPDate.format(now)) }
        let value: HTTPBody? = script.body ?? (script.outcome == .data ? bodies[KeyName.canonical(key)] : nil) ?? answer.value.map(HTTPBody.json)
        let body = status == 304 || status == 204 || method == "HEAD" ? nil : value
        return HTTPAnswer(status: status, fields: fields, body: body)
    }

    /// The answer from the data: `404` without it, `304` to a conditional request it matches,
    /// else `200` with the value.
    func httpAnswerFromData(_ key: String, request: HTTPFields, at now: Int64) -> HTTPAnswer {
        var fields = headers[key] ?? HTTPFields()
        if !fields.contains("Date") { fields.append("Date", HTTPDate.format(now)) }
        guard let value = data[key] else { return HTTPAnswer(status: 404, fields: HTTPFields([.init("Date", HTTPDate.format(now))])) }
        if Self.notModified(request: request, representation: fields) { return HTTPAnswer(status: 304, fields: fields) }
        return HTTPAnswer(status: 200, fields: fields, body: bodies[KeyName.canonical(key)] ?? .json(value))
    }

    /// Whether a GET's preconditions say the representation is not modified (RFC 9110 §13.2.2):
    /// `If-None-Match` decides when present (weak comparison, `*` matching any); else
    /// `If-Modified-Since`, against `Last-Modified`.
    static func notModified(request: HTTPFields, representation: HTTPFields) -> Bool {
        if request.contains("If-None-Match") {
            let tags = request.list("If-None-Match")
            guard let etag = representation["ETag"]?.trimmingCharacters(in: " \t") else { return false }
            return tags.contains("*") || tags.contains { weak($0) == weak(etag) }
        }
        guard let since = request["If-Modified-Since"].flatMap(HTTPDate.parse),
              let modified = representation["Last-Modified"].flatMap(HTTPDate.parse) else { return false }
        return modified <= since
    }

    private static func weak(_ tag: String) -> String { tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
}

extension String {
    fileprivate func trimmingCharacters(in blanks: String) -> String {
        guard let start = firstIndex(where: { !blanks.contains($0) }), let end = lastIndex(where: { !blanks.contains($0) }) else { return "" }
        return String(self[start...end])
    }
}
