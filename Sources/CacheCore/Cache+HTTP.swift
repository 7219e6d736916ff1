// HTTP namespaces on the `Cache` actor (docs/SPEC.md, HTTP namespaces). A recording notes each
// HTTP read and request (`http-get`, `http-request`) and each HTTP answer with its status and fields.

extension Cache {
    /// Whether some namespace is an HTTP one.
    public var hasHTTPNamespaces: Bool { engine.hasHTTPNamespaces }

    /// The HTTP settings of `key`'s namespace; nil when it is an ordinary one.
    public func httpSettings(ofKey key: String) -> HTTPNamespace? { engine.httpSettings(ofKey: key) }

    /// `key` with its target normalized (RFC 3986 §6.2.2: `/a/./b`, `/%61/b` and `/a/b` are one).
    /// - Throws: when the part after the namespace is no path.
    public nonisolated static func httpKey(_ key: String) throws(CacheError) -> String { try CacheEngine.httpKey(key) }

    /// An app's read of an HTTP key with its request fields: served, validated or forwarded as RFC
    /// 9111 decides on the clock; waits for the origin unless `nowait` (or in live mode).
    /// In live mode it never waits: a read that must go to the origin returns `status` nil.
    /// - Parameter key: a key of an HTTP namespace; its target is normalized (`httpKey`).
    /// - Throws: when the key is of no HTTP namespace or no path, or waiting runs away.
    public func httpRead(_ key: String, request: HTTPFields = HTTPFields(), nowait: Bool = false) throws(CacheError) -> HTTPReadResult {
        let key = try Self.httpKey(key)
        sync()
        defer { finish() }
        let nowait = nowait || asyncOrigin != nil
        // §4.3.2: the app's own conditional request is answered here when what it gets is a 200.
        let result = try tryNoting(.httpGet(key: key, request: request, nowait: nowait), RecordedReturn.http) { () throws(CacheError) in
            try engine.httpGet(key, request: request, nowait: nowait)
        }
        return HTTPCachePolicy.answeringConditional(result, request: request)
    }
}

extension Cache {
    /// An app's unsafe request (POST, PUT, DELETE, PATCH) of an HTTP key: sent to the origin; a
    /// non-error answer invalidates the target and the same-origin Location and Content-Location
    /// (RFC 9111 §4.4). Waits for the answer unless `nowait` (or in live mode).
    public func httpRequest(_ method: String, _ key: String, request: HTTPFields = HTTPFields(), body: JSONValue? = nil,
                            nowait: Bool = false) throws(CacheError) -> HTTPReadResult {
        let key = try Self.httpKey(key)
        sync()
        defer { finish() }
        let nowait = nowait || asyncOrigin != nil
        return try tryNoting(.httpRequest(method: method, key: key, request: request, body: body, nowait: nowait), RecordedReturn.http) {
            () throws(CacheError) in try engine.httpRequest(method, key, request: request, body: body, nowait: nowait)
        }
    }

    /// `explain` of an HTTP key: each stored response's freshness arithmetic; nil when none is stored.
    public func httpExplain(_ key: String) -> [HTTPExplanation]? { engine.httpExplain(key) }
}

extension Cache {
    /// `key`'s stored responses as a snapshot writes them (status, header fields, times, `Vary`
    /// values, body), for a copy that outlives the cache (the shell's `persist`); nil for none.
    public func httpResponsesDocument(_ key: String) -> JSONValue? { engine.httpResponsesDocument(key) }

    /// Gives `key`'s entry the responses of `document` (`httpResponsesDocument`), after the
    /// entry was stored with the body of the last of them (the shell's `hydrate`).
    /// - Throws: when the document is no such list or the key no HTTP entry; nothing changes then.
    public func restoreHTTPResponses(_ key: String, _ document: JSONValue) throws(CacheError) {
        sync()
        defer { finish() }
        do { try engine.restoreHTTPResponses(key, document) } catch { throw CacheError(error.description) }
    }

    /// An app's HTTP read, awaited (live mode, `cachesh proxy`): served at once when the cache may,
    /// else suspended until the origin's answer (or the request's timeout) completes it. On the
    /// virtual clock it is `httpRead`. A conditional request whose answer would be a 200 its
    /// preconditions find not modified gets a 304 (§4.3.2).
    /// - Throws: when the key is of no HTTP namespace or no path.
    public func httpGet(_ key: String, request: HTTPFields = HTTPFields()) async throws(CacheError) -> HTTPReadResult {
        guard asyncOrigin != nil else { return try httpRead(key, request: request) }
        let key = try Self.httpKey(key)
        sync()
        let (result, waitFor) = try startAwaitedHTTPGet(key, request: request)
        finish()
        guard let id = waitFor else { return HTTPCachePolicy.answeringConditional(result, request: request) }
        let answer = await withCheckedContinuation { continuation in
            httpWaiting[id, default: []].append((result, { continuation.resume(returning: $0) }))
        }
        return HTTPCachePolicy.answeringConditional(answer, request: request)
    }

    /// An app's unsafe request (or `HEAD`), awaited: as `httpRequest`, suspended until its answer
    /// in live mode.
    public func httpSend(_ method: String, _ key: String, request: HTTPFields = HTTPFields(),
                         body: JSONValue? = nil) async throws(CacheError) -> HTTPReadResult {
        guard asyncOrigin != nil else { return try httpRequest(method, key, request: request, body: body) }
        let key = try Self.httpKey(key)
        sync()
        let (result, waitFor) = try tryNoting(.httpRequest(method: method, key: key, request: request, body: body, nowait: true),
                                              { RecordedReturn.http($0.0) }) { () throws(CacheError) in
            try engine.startAwaitedHTTP { () throws(CacheError) in
                try engine.httpRequest(method, key, request: request, body: body, nowait: true)
            }
        }
        finish()
        guard let id = waitFor else { return result }
        return await withCheckedContinuation { continuation in
            httpWaiting[id, default: []].append((result, { continuation.resume(returning: $0) }))
        }
    }

    /// `httpGet` for a thread that must never wait (a server's event loop): entered with
    /// `withIsolation`, it calls `done` before it returns when the cache serves the read, else
    /// from the cache's isolation once the request completes. Live mode only.
    public nonisolated func httpGet(_ key: String, request: HTTPFields,
                                    done: @escaping @Sendable (Result<HTTPReadResult, CacheError>) -> Void) {
        withIsolation { cache in
            do throws(CacheError) {
                let key = try Self.httpKey(key)
                cache.sync()
                let (result, waitFor) = try cache.startAwaitedHTTPGet(key, request: request)
                cache.finish()
                guard let id = waitFor else { return done(.success(HTTPCachePolicy.answeringConditional(result, request: request))) }
                cache.httpWaiting[id, default: []].append((result, { done(.success(HTTPCachePolicy.answeringConditional($0, request: request))) }))
            } catch {
                done(.failure(error))
            }
        }
    }

    /// Starts an awaited HTTP read, noted as a read that does not wait (what the app has at once:
    /// its answer, or pending), so a recording of a live cache replays it on the virtual clock.
    private func startAwaitedHTTPGet(_ key: String, request: HTTPFields) throws(CacheError) -> (HTTPReadResult, UInt64?) {
        try tryNoting(.httpGet(key: key, request: request, nowait: true), { RecordedReturn.http($0.0) }) { () throws(CacheError) in
            try engine.startAwaitedHTTP { () throws(CacheError) in try engine.httpGet(key, request: request, nowait: true) }
        }
    }

    /// Resumes the HTTP reads whose requests have completed, each with its share of the outcome.
    func resumeFinishedHTTPReads() {
        for id in httpWaiting.keys.sorted() where !engine.isInFlight(id) {
            for reader in httpWaiting.removeValue(forKey: id)! {
                reader.resume(engine.finishAwaitedHTTP(id, pending: reader.pending))
            }
        }
    }
}
