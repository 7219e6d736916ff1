// HTTP namespaces in snapshots, stores, the persisted copy and recordings (docs/SPEC.md §5.2,
// §8). Every field here is written only where an HTTP namespace, response or request is: a
// snapshot of a session without one is byte for byte as before.
//
//   namespaces.NAME.http    {"shared": B, "heuristic_percent": P, "origin": URL (when given)}
//   entries[i].http         the key's stored responses, oldest first (`responseJSON`)
//   pending.requests[i].http the HTTP request in flight: method, headers, body, and the answer
//                           the server decided when it was sent
//   server.headers          the simulated server's header fields by key
//
// A message's body goes through one pair of functions (`HTTPBodyCoding.encode`, `.decode`), in
// snapshots, stores, the persisted copy and recordings alike: the only place that knows how a
// body is spelled (`"body": JSON` today).

/// How a body is written in the object of its message, and read back (the one pair).
enum HTTPBodyCoding {
    /// The field names a body may be written under (for the `only` checks of its message).
    static let fieldNames: Set<String> = ["body", "body_text", "body_binary"]

    /// Writes `body` into its message's fields: `body` for a JSON body, `body_text` for text,
    /// `body_binary` (`{"size": N, "sha256": "HEX"}`) for a binary one, nothing for none. A file
    /// without text or binary bodies is written as before they existed.
    static func encode(_ body: HTTPBody?, into f: inout [String: JSONValue]) {
        switch body {
        case .json(let value)?: f["body"] = value
        case .text(let text)?: f["body_text"] = .string(text)
        case .binary(let size, let digest)?: f["body_binary"] = .object(["size": .int(Int64(size)), "sha256": .string(digest)])
        case nil: break
        }
    }

    /// Reads the body `encode` wrote into `fields`; nil for none. At most one of its fields.
    /// - Parameter value: the format's checked getter of a field holding a JSON value (a
    ///   snapshot's checks its depth and size).
    static func decode(_ fields: [String: JSONValue], value: (String) throws(Diagnostic) -> JSONValue) throws(Diagnostic) -> HTTPBody? {
        let present = ["body", "body_text", "body_binary"].filter { fields[$0] != nil }
        if present.count > 1 {
            throw Diagnostic("a message has one body: \(present.joined(separator: " and ")) are both given")
        }
        if fields["body"] != nil { return .json(try value("body")) }
        if fields["body_text"] != nil {
            guard case .string(let text) = try value("body_text") else { throw Diagnostic("body_text: expected a string") }
            return .text(text)
        }
        guard fields["body_binary"] != nil else { return nil }
        guard case .object(let o) = try value("body_binary"), o.count == 2, case .int(let size)? = o["size"],
              size >= 0, size <= Int64(Int32.max), case .string(let digest)? = o["sha256"] else {
            throw Diagnostic("body_binary: expected {\"size\": N, \"sha256\": \"HEX\"} (N a whole number of bytes from 0)")
        }
        if let problem = HTTPBody.digestProblem(digest) { throw Diagnostic("body_binary.sha256: \(problem)") }
        return .binary(size: Int(size), sha256: digest)
    }
}

extension HTTPFields {
    /// The most field lines one stored message may have in a snapshot, store or recording
    /// (docs/SPEC.md §7.1): what `headers=` gives (100) and a proxy's upstream many times over.
    public static let maxStoredLines = 1000
    /// The most bytes of names and values one stored message may have there (docs/SPEC.md §7.1).
    public static let maxStoredBytes = 262_144

    /// The fields as a JSON array of `[name, value]` pairs, in order.
    public var json: JSONValue {
        .array(lines.map { .array([.string($0.name), .string($0.value)]) })
    }

    /// Why `name` is no field name (RFC 9110 §5.1: a token); nil when it is one.
    public static func nameProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
            return "\(JSONValue.string(name).compactText) is no field name (letters, digits and !#$%&'*+-.^_`|~)"
        }
        return nil
    }

    /// Why `value` is no field value (a control character other than tab); nil when it is one.
    public static func valueProblem(_ value: String) -> String? {
        value.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
            ? "holds a control character (a field value may not)" : nil
    }

    /// RFC 9110 §5.6.2's tchar.
    public static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

extension CacheEngine {
    // MARK: Writing

    /// A namespace's `http` field.
    static func httpNamespaceJSON(_ http: HTTPNamespace) -> JSONValue {
        var f: [String: JSONValue] = ["shared": .bool(http.policy.shared), "heuristic_percent": .int(http.policy.heuristicPercent)]
        if let origin = http.origin { f["origin"] = .string(origin) }
        return .object(f)
    }

    /// A body's fields in the object of its message (`HTTPBodyCoding.encode`).
    static func encodeBody(_ body: HTTPBody?, into f: inout [String: JSONValue]) { HTTPBodyCoding.encode(body, into: &f) }

    /// One stored response: status, header fields in order, the request and response times, the
    /// request's values of the fields its `Vary` names (when it names some), the body.
    static func responseJSON(_ v: HTTPVariant) -> JSONValue {
        let r = v.response
        var f: [String: JSONValue] = [
            "status": .int(Int64(r.status)),
            "headers": r.fields.json,
            "request_time": time(r.requestTime),
            "response_time": time(r.responseTime),
        ]
        if !r.varyValues.isEmpty { f["vary"] = .object(r.varyValues.mapValues(JSONValue.string)) }
        encodeBody(v.body, into: &f)
        return .object(f)
    }

    /// The `http` field of `key`'s entry: its stored responses, oldest first; nil when it has
    /// none (or they are no longer its: `httpVariants`).
    func httpEntryJSON(_ key: String) -> JSONValue? {
        guard hasHTTPNamespaces, let set = http.variants[key], !set.responses.isEmpty, holdsHTTPVariants(key, set) else { return nil }
        return .array(set.responses.map(Self.responseJSON))
    }

    /// The `http` field of a request in flight that an HTTP read or `request` sent.
    func httpRequestJSON(_ id: UInt64) -> JSONValue? {
        guard let exchange = http.exchanges[id] else { return nil }
        var f: [String: JSONValue] = ["method": .string(exchange.request.method), "headers": exchange.request.fields.json]
        if let body = exchange.request.body { f["request_body"] = body }
        if exchange.conditional { f["conditional"] = .bool(true) }
        if let fwd = exchange.fwd { f["fwd"] = .string(fwd) }
        if let answer = exchange.answer {
            var a: [String: JSONValue] = ["status": .int(Int64(answer.status)), "headers": answer.fields.json]
            Self.encodeBody(answer.body, into: &a)
            f["answer"] = .object(a)
        }
        return .object(f)
    }
}

// MARK: - Reading

extension Snapshot {
    /// Reads a body written by `encodeBody` (`HTTPBodyCoding.decode`), checked as a data value.
    static func decodeBody(_ o: SnapshotObject) throws(SnapshotError) -> HTTPBody? {
        try HTTPBodyCoding.decode(o.fields) { name throws(SnapshotError) in try o.dataValue(name) }
    }

    /// The names `decodeBody` reads (for `only`).
    static var bodyFields: Set<String> { HTTPBodyCoding.fieldNames }

    /// A namespace's `http` field.
    static func httpNamespace(_ o: SnapshotObject) throws(SnapshotError) -> HTTPNamespace {
        try o.only(["shared", "heuristic_percent", "origin"])
        let percent = try o.int("heuristic_percent")
        guard percent >= 0, percent <= HTTPNamespace.maxHeuristicPercent else {
            throw o.fail("heuristic_percent", "expected a percentage from 0 to \(HTTPNamespace.maxHeuristicPercent)")
        }
        var origin: String?
        if o.has("origin") {
            let text = try o.string("origin")
            if let problem = HTTPNamespace.originProblem(text) { throw o.fail("origin", problem) }
            origin = text
        }
        return HTTPNamespace(origin: origin, policy: HTTPCachePolicy(shared: try o.bool("shared"), heuristicPercent: percent))
    }

    /// Header fields written as `HTTPFields.json`, checked: names tokens, values without control
    /// characters, at most `maxStoredLines` lines and `maxStoredBytes` bytes.
    static func fields(_ o: SnapshotObject, _ name: String) throws(SnapshotError) -> HTTPFields {
        let path = o.path.child(name)
        let list = try o.array(name)
        guard list.count <= HTTPFields.maxStoredLines else {
            throw o.fail(name, "\(list.count) field lines; at most \(HTTPFields.maxStoredLines)")
        }
        var fields = HTTPFields()
        var bytes = 0
        for (i, item) in list.enumerated() {
            guard case .array(let pair) = item, pair.count == 2, case .string(let n) = pair[0], case .string(let v) = pair[1] else {
                throw SnapshotError(path: path.element(i).text, "expected a field line, [\"Name\", \"value\"]")
            }
            if let problem = HTTPFields.nameProblem(n) { throw SnapshotError(path: path.element(i).text, problem) }
            if let problem = HTTPFields.valueProblem(v) { throw SnapshotError(path: path.element(i).text, "the value of \(n) " + problem) }
            bytes += n.utf8.count + v.utf8.count
            guard bytes <= HTTPFields.maxStoredBytes else {
                throw o.fail(name, "more than \(HTTPFields.maxStoredBytes) bytes of names and values")
            }
            fields.append(n, v)
        }
        return fields
    }

    /// A status code: 100 to 599 (`final`: 200 to 599).
    static func status(_ o: SnapshotObject, final: Bool) throws(SnapshotError) -> Int {
        let n = try o.int("status")
        let low: Int64 = final ? 200 : 100
        guard n >= low, n <= 599 else { throw o.fail("status", "expected an HTTP status code from \(low) to 599, not \(n)") }
        return Int(n)
    }

    /// An entry's `http` field: its stored responses, oldest first.
    static func httpResponses(_ e: SnapshotObject, now: Int64) throws(SnapshotError) -> [HTTPVariant] {
        let list = try e.array("http")
        guard !list.isEmpty, list.count <= HTTPStore.maxVariants else {
            throw e.fail("http", "expected 1 to \(HTTPStore.maxVariants) stored responses")
        }
        var out: [HTTPVariant] = []
        for (i, item) in list.enumerated() {
            let o = try SnapshotObject(item, e.path.child("http").element(i))
            try o.only(Set(["status", "headers", "request_time", "response_time", "vary"]).union(bodyFields))
            let status = try status(o, final: true)
            let fields = try fields(o, "headers")
            let requestTime = try o.time("request_time"), responseTime = try o.time("response_time")
            guard requestTime <= responseTime else { throw o.fail("response_time", "is before request_time") }
            guard responseTime <= now else { throw o.fail("response_time", "is after now (\(TimeText.iso8601(ms: now)))") }
            var vary: [String: String] = [:]
            if o.has("vary") {
                let v = try o.object("vary")
                for name in v.fields.keys.sorted() {
                    if let problem = HTTPFields.nameProblem(name) { throw v.fail(name, problem) }
                    guard name == name.lowercased() else { throw v.fail(name, "a Vary name is written in lower case") }
                    let value = try v.string(name)
                    if let problem = HTTPFields.valueProblem(value) { throw v.fail(name, problem) }
                    vary[name] = value
                }
            }
            var response = StoredHTTPResponse(status: status, fields: HTTPFields(), requestTime: requestTime, responseTime: responseTime)
            response.fields = fields
            response.varyValues = vary
            out.append(HTTPVariant(response: response, body: try decodeBody(o)))
        }
        return out
    }

    /// A request's `http` field, for a request of `kind` of the one key `key`.
    static func httpExchange(_ r: SnapshotObject, kind: RequestKind, keys: [String]) throws(SnapshotError) -> HTTPExchange {
        let o = try r.object("http")
        try o.only(["method", "headers", "request_body", "conditional", "fwd", "answer"])
        let method = try o.string("method")
        let methods = kind == .fetch ? ["GET", "HEAD"] : kind == .mutate ? ["POST", "PUT", "DELETE", "PATCH"] : []
        guard methods.contains(method) else {
            throw o.fail("method", methods.isEmpty ? "a \(kind.rawValue) request is no HTTP request"
                                                   : "a \(kind.rawValue) request's method is one of \(methods.joined(separator: ", "))")
        }
        guard keys.count == 1 else { throw r.fail("keys", "an HTTP request has one key") }
        var exchange = HTTPExchange(request: HTTPRequest(method: method, key: keys[0], fields: try fields(o, "headers"),
                                                         body: o.has("request_body") ? .some(try o.dataValue("request_body")) : Optional<JSONValue>.none),
                                    conditional: try o.bool("conditional", default: false), fwd: try o.optionalString("fwd"))
        if o.has("answer") {
            let a = try o.object("answer")
            try a.only(Set(["status", "headers"]).union(bodyFields))
            exchange.answer = HTTPAnswer(status: try status(a, final: false), fields: try fields(a, "headers"), body: try decodeBody(a))
        }
        return exchange
    }

    /// The server section's `headers`: each key's header fields.
    static func serverHeaders(_ o: SnapshotObject) throws(SnapshotError) -> [String: HTTPFields] {
        let h = try o.object("headers")
        var out: [String: HTTPFields] = [:]
        for key in h.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { h.fail(key, $0) }
            out[key] = try fields(h, key)
        }
        return out
    }
}

// MARK: - The persisted copy

extension CacheEngine {
    /// `key`'s stored responses as an entry's `http` field writes them (an app's disk cache keeps
    /// them with the body); nil when it has none.
    public func httpResponsesDocument(_ key: String) -> JSONValue? { httpEntryJSON(key) }

    /// Gives `key`'s entry, just stored with the body of the last of them, the responses
    /// `document` holds (`httpResponsesDocument`): a client hydrating from the persisted copy.
    /// - Throws: `SnapshotError` when the document is not such a list, the key is of no HTTP
    ///   namespace, or it has no entry; then nothing changed.
    public func restoreHTTPResponses(_ key: String, _ document: JSONValue) throws(SnapshotError) {
        guard httpSettings(ofKey: key) != nil, entrySlot(forKey: key) != nil else {
            throw SnapshotError(path: key, "not an entry of an HTTP namespace")
        }
        let responses = try Snapshot.httpResponses(SnapshotObject(fields: ["http": document], path: SnapshotPath(key)), now: now)
        keepHTTPVariants(key, responses)
    }
}
