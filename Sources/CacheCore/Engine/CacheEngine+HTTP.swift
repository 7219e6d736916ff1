// HTTP namespaces (docs/SPEC.md, HTTP namespaces): an entry is a response, decided by
// `HTTPCachePolicy` on the virtual clock. The engine keeps the body of the response last stored
// for a key as the entry's value (so keys, peek, evict, clear, max=, observers and stats see it),
// and every stored response of the key (one per secondary key, RFC 9111 §4.1) with its status and
// header fields beside it, in `http`. Those are valid while the entry exists: an entry evicted,
// cleared or expired away takes them with it.

/// One stored response of an HTTP key, with its body.
struct HTTPVariant {
    var response: StoredHTTPResponse
    var body: HTTPBody?

    /// What it counts against its namespace's budget (`HTTPStore.maxBytes`): the bytes of its
    /// header fields' names and values and of its body, and 64 for the rest of the record.
    /// - Complexity: O(size of the fields and body).
    var bytes: Int {
        var n = 64 + bodyBytes
        for line in response.fields.lines { n += line.name.utf8.count + line.value.utf8.count }
        return n
    }

    /// The bytes of its body (JSON as its compact text, a binary body by its size).
    var bodyBytes: Int {
        switch body {
        case .json(let value)?: value.compactCount(atMost: .max) ?? 0
        case .text(let text)?: text.utf8.count
        case .binary(let size, _)?: size
        case nil: 0
        }
    }
}

/// A request an HTTP read sent, while it is in flight.
struct HTTPExchange {
    var request: HTTPRequest
    /// It validates a stored response (it carries the conditional fields the cache added).
    var conditional: Bool
    /// Why it went forward (`Cache-Status` `fwd=`).
    var fwd: String?
    /// The origin's answer, when it gave one as it was sent.
    var answer: HTTPAnswer?
    /// Reads waiting for it.
    var waiters = 0
}

/// An HTTP key's stored responses, and the write marks of the entry when the last was stored:
/// they are the entry's while it holds that value (no put, event, mutation or other fetch since).
struct HTTPVariantSet {
    var responses: [HTTPVariant]
    var storedRequest: UInt64
    var lastLocalWrite: UInt64
    /// The responses' `bytes`, and the last one's body once more: the entry's value holds it too.
    var bytes: Int

    init(responses: [HTTPVariant], storedRequest: UInt64, lastLocalWrite: UInt64) {
        self.responses = responses
        self.storedRequest = storedRequest
        self.lastLocalWrite = lastLocalWrite
        bytes = Self.bytes(of: responses)
    }

    /// `bytes` of a set holding `responses`.
    static func bytes(of responses: [HTTPVariant]) -> Int {
        responses.reduce(0) { $0 + $1.bytes } + (responses.last?.bodyBytes ?? 0)
    }
}

/// The HTTP namespaces' state beside the entries.
struct HTTPStore {
    /// Each HTTP key's stored responses, oldest first. Written only through `setHTTPVariants`
    /// (or a filter followed by `recountHTTPBytes`), which keeps `bytes` in step.
    private(set) var variants: [String: HTTPVariantSet] = [:]
    /// The `bytes` of the responses in `variants`, by namespace slot.
    var bytes: [Int32: Int] = [:]
    /// The most bytes of responses one namespace keeps: `maxBytes`, lowered by tests.
    var budget = HTTPStore.maxBytes
    /// The requests HTTP reads sent, by request id, while in flight.
    var exchanges: [UInt64: HTTPExchange] = [:]
    /// What each completed request gives the reads waiting on it, until the last has taken it.
    var outcomes: [UInt64: (result: HTTPReadResult, waiters: Int)] = [:]
    /// The request the last read or request that returned without waiting would wait for (live mode).
    var lastUnawaited: UInt64?

    /// The number of keys in `variants` past which the next key stored sweeps out the responses
    /// of keys that no longer hold them (`sweepHTTPVariants`).
    var sweepAt = HTTPStore.minSweep

    /// The most responses kept for one key, one per secondary key (docs/SPEC.md §7.1): past it
    /// the oldest goes.
    static let maxVariants = 64
    /// The fewest keys `variants` holds before a sweep.
    static let minSweep = 64
    /// The most bytes of stored responses (`HTTPVariant.bytes`) one HTTP namespace keeps
    /// (docs/SPEC.md §7.1): 256 MiB. Past it, entries of the namespace are evicted as `max=`
    /// evicts them.
    static let maxBytes = 256 << 20

    /// Sets or drops `key`'s responses (of namespace `ns`), keeping `bytes` in step.
    mutating func set(_ key: String, ns: Int32, _ set: HTTPVariantSet?) {
        let old: HTTPVariantSet?
        if let set { old = variants.updateValue(set, forKey: key) } else { old = variants.removeValue(forKey: key) }
        let change = (set?.bytes ?? 0) - (old?.bytes ?? 0)
        if change != 0 { bytes[ns, default: 0] += change }
    }

    /// Keeps the responses `isKept` keeps, and counts `bytes` again.
    /// - Complexity: O(keys in `variants`).
    mutating func filter(namespace: (String) -> Int32, _ isKept: (String, HTTPVariantSet) -> Bool) {
        variants = variants.filter { isKept($0.key, $0.value) }
        bytes = [:]
        for (key, set) in variants { bytes[namespace(key), default: 0] += set.bytes }
    }
}

extension CacheEngine {
    /// Keeps `hasHTTPNamespaces` after the namespaces changed (`ns`, `load`, `restore`), and
    /// forgets the responses of keys whose namespace is no longer an HTTP one, and every request
    /// in flight a restore replaced.
    func noteHTTPNamespaces(restored: Bool = false) {
        hasHTTPNamespaces = namespaces.indices.contains { namespaces.policy(Int32($0)).http != nil }
        if restored {
            let budget = http.budget
            http = HTTPStore()
            http.budget = budget
        }
        guard !http.variants.isEmpty else { return }
        http.filter(namespace: httpNamespaceSlot) { key, _ in httpSettings(ofKey: key) != nil }
    }

    /// The slot of an HTTP key's namespace, as `http.bytes` counts it (-1 for none: never made).
    func httpNamespaceSlot(_ key: String) -> Int32 {
        namespaces.slot(named: String(KeyName.namespace(of: key))) ?? -1
    }

    /// The HTTP settings of `key`'s namespace; nil when it is not an HTTP namespace.
    public func httpSettings(ofKey key: String) -> HTTPNamespace? {
        guard hasHTTPNamespaces, let ns = namespaces.slot(named: String(KeyName.namespace(of: key))) else { return nil }
        return namespaces.policy(ns).http
    }

    /// `key` with its target normalized as RFC 3986 makes equivalent URIs one (`HTTPTarget`).
    /// - Throws: when the part after the namespace is no path.
    public static func httpKey(_ key: String) throws(CacheError) -> String {
        let canonical = KeyName.canonical(key)
        let namespace = KeyName.namespace(of: canonical)
        let hasNamespace = canonical.utf8.contains(UInt8(ascii: ":"))
        // A key already normalized (every key the cache gave back, most a proxy gets) is itself.
        if HTTPTarget.isNormalized(hasNamespace ? canonical[canonical.index(after: namespace.endIndex)...] : Substring(canonical)) {
            return canonical
        }
        let target = hasNamespace ? String(canonical[canonical.index(after: namespace.endIndex)...]) : canonical
        do {
            let normalized = try HTTPTarget.normalized(target)
            return KeyName.canonical("\(namespace):\(normalized)")
        } catch {
            throw CacheError("bad key \(JSONValue.string(key).compactText): \(error.description)")
        }
    }

    /// The stored responses of `key`, forgotten when its entry no longer exists or no longer holds
    /// the value the last of them stored (a put, event, mutation or ordinary fetch replaced it).
    func httpVariants(_ key: String) -> [HTTPVariant] {
        guard let set = http.variants[key] else { return [] }
        guard holdsHTTPVariants(key, set) else {
            http.set(key, ns: httpNamespaceSlot(key), nil)
            return []
        }
        return set.responses
    }

    /// Whether `key`'s entry still holds the value `set` stored: it exists, no put, event,
    /// mutation or ordinary fetch replaced it since, and no mutation is pending on it.
    func holdsHTTPVariants(_ key: String, _ set: HTTPVariantSet) -> Bool {
        guard let slot = entrySlot(forKey: key) else { return false }
        return slots[Int(slot)].storedRequest == set.storedRequest && slots[Int(slot)].lastLocalWrite == set.lastLocalWrite
            && slots[Int(slot)].log == nil
    }

    /// Keeps `responses` as `key`'s, with the marks of the entry that now holds their value;
    /// then, unless `budget` is false (a restore, which keeps what the snapshot holds), keeps the
    /// namespace within its bytes of responses (`keepWithinHTTPBudget`).
    func keepHTTPVariants(_ key: String, _ responses: [HTTPVariant], budget: Bool = true) {
        guard let slot = entrySlot(forKey: key) else { return }
        let ns = slots[Int(slot)].namespace
        http.set(key, ns: ns, HTTPVariantSet(responses: responses, storedRequest: slots[Int(slot)].storedRequest,
                                             lastLocalWrite: slots[Int(slot)].lastLocalWrite))
        if http.variants.count > http.sweepAt { sweepHTTPVariants() }
        if budget && http.bytes[ns, default: 0] > http.budget { keepWithinHTTPBudget(key, ns: ns) }
    }

    /// Brings namespace `ns`'s stored responses within `http.budget` bytes after `key`'s were
    /// stored: entries of the namespace other than `key`, each chosen by its eviction policy as `max=`
    /// chooses (counted as evictions, told to observers), and last `key`'s own oldest responses
    /// while it alone is over (its newest stays).
    /// - Complexity: O(1) per entry evicted (SIEVE: amortized), and O(responses of `key`).
    func keepWithinHTTPBudget(_ key: String, ns: Int32) {
        guard let spared = entrySlot(forKey: key) else { return }
        // Each turn removes one entry of the namespace, so this ends within its count.
        while http.bytes[ns, default: 0] > http.budget, let (victim, _, requestsByKey) = state.evictOne(ns, over: 1, sparing: spared) {
            finishEviction(of: victim, ns: ns, requestsByKey: requestsByKey)
        }
        guard http.bytes[ns, default: 0] > http.budget, var set = http.variants[key], set.responses.count > 1 else { return }
        let over = http.bytes[ns, default: 0] - http.budget
        var dropped = 0
        var count = 0
        while count < set.responses.count - 1 && dropped < over {
            dropped += set.responses[count].bytes
            count += 1
        }
        set.responses.removeFirst(count)
        set.bytes = HTTPVariantSet.bytes(of: set.responses)
        http.set(key, ns: ns, set)
    }

    /// The responses of `key` (of namespace `ns`), whose entry was just removed, go with it.
    /// - Complexity: O(1) (nothing when no namespace is an HTTP one).
    @inline(__always)
    func dropHTTPVariants(_ key: String, ns: Int32) {
        if hasHTTPNamespaces && !http.variants.isEmpty { http.set(key, ns: ns, nil) }
    }

    /// Drops the responses of every key whose entry holds another value than the one they stored
    /// (a put, event, mutation or ordinary fetch replaced it; `holdsHTTPVariants` would find them
    /// out of date on the key's next read), or whose entry went: a removed entry's go with it
    /// (`dropHTTPVariants`), so this is what is left. Run when `variants` has doubled since
    /// the last sweep, so it costs O(1) amortized per key stored, and `variants` holds at most
    /// twice the keys whose responses were live at the last sweep (at least 64).
    /// - Complexity: O(keys in `variants`).
    func sweepHTTPVariants() {
        http.filter(namespace: httpNamespaceSlot) { key, set in
            // A pending mutation only hides the responses until it ends: they stay.
            guard let slot = entrySlot(forKey: key) else { return false }
            return slots[Int(slot)].storedRequest == set.storedRequest && slots[Int(slot)].lastLocalWrite == set.lastLocalWrite
        }
        http.sweepAt = max(HTTPStore.minSweep, 2 * http.variants.count)
    }

    /// The stored response a request selects (§4.1), with its index among `all`.
    func httpSelected(_ all: [HTTPVariant], request: HTTPFields) -> Int? {
        all.lastIndex { HTTPCachePolicy.varyMatches($0.response, request: request) }
    }

    /// What a stored response gives the app now: its status, its fields with `Age`, its body, and
    /// `ttl=` its remaining freshness.
    func httpServed(_ key: String, _ variant: HTTPVariant, _ policy: HTTPCachePolicy, status: HTTPCacheStatus) -> HTTPReadResult {
        var cacheStatus = status
        let response = httpView(variant.response, ofKey: key)
        cacheStatus.ttl = (policy.freshnessLifetime(response).ms - policy.currentAge(response, now: now)) / 1000
        return HTTPReadResult(key: key, status: variant.response.status, fields: policy.servedFields(response, now: now),
                              body: variant.body, cacheStatus: cacheStatus)
    }

    /// The naive switches (SPEC §1.2) of `key`'s namespace that an HTTP read acts on.
    func httpNaive(_ key: String) -> Set<NaivePolicy> {
        // The slot first (it may create the namespace): see `noteFetchStart`.
        let ns = namespaceSlot(forKey: key)
        return namespaces.policy(ns).naive
    }

    /// A stored response as the namespace's client sees it when it decides: with `ignore-age`,
    /// without its `Age` field (its age is then the apparent age and the time resident).
    func httpView(_ response: StoredHTTPResponse, ofKey key: String) -> StoredHTTPResponse {
        guard response.parsed.hasAge, httpNaive(key).contains(.ignoreAge) else { return response }
        var view = response
        view.fields.remove("Age")
        return view
    }

    /// The decision on `stored` for `request`, as the namespace's client makes it: with
    /// `ignore-stale-extensions`, `stale-while-revalidate` serves nothing stale (validated instead).
    /// An entry `invalidate` marked (B9) is not served again without asking the origin: it is
    /// validated, as a stale one is, whatever its freshness says.
    func httpDecide(_ key: String, _ policy: HTTPCachePolicy, request: HTTPFields, stored: StoredHTTPResponse?) -> HTTPCachePolicy.Decision {
        if stored != nil, let slot = entrySlot(forKey: key), slots[Int(slot)].invalidated {
            return CacheControl(request).onlyIfCached ? .gatewayTimeout : .validate(reason: .stale)
        }
        let decision = policy.decide(request: request, stored: stored.map { httpView($0, ofKey: key) }, now: now)
        if case .serveStaleAndRevalidate = decision, httpNaive(key).contains(.ignoreStaleExtensions) {
            return CacheControl(request).onlyIfCached ? .gatewayTimeout : .validate(reason: .stale)
        }
        return decision
    }

    /// An app's read of an HTTP key (`get KEY headers=...`): serve, validate or forward as RFC
    /// 9111 decides (`HTTPCachePolicy.decide`), waiting for the origin's answer unless `nowait`.
    /// - Parameter key: the key as `httpKey` gives it, of an HTTP namespace.
    /// - Throws: `CacheError` when waiting runs away or reaches the clock's end.
    public func httpGet(_ key: String, request: HTTPFields = HTTPFields(), nowait: Bool = false) throws(CacheError) -> HTTPReadResult {
        defer { if checksInvariants { checkInvariants() } }
        guard let settings = httpSettings(ofKey: key) else { throw CacheError("\(key) is not a key of an HTTP namespace") }
        let ns = namespaceSlot(forKey: key)
        let policy = settings.policy
        _ = nextSeq()
        let all = httpVariants(key)
        let selected = httpSelected(all, request: request)
        if let slot = entrySlot(forKey: key) { entries.touch(slot) }
        guard origin.isOnline else {
            // Offline (B5): what is stored is served, whatever its freshness; else a 504.
            guard let selected else {
                count(\.misses, ns)
                var status = HTTPCacheStatus()
                status.detail = "offline"
                return HTTPReadResult(key: key, status: 504, cacheStatus: status)
            }
            count(\.hits, ns)
            var status = HTTPCacheStatus()
            status.hit = true
            status.detail = "offline"
            return httpServed(key, all[selected], policy, status: status)
        }
        let decision = httpDecide(key, policy, request: request, stored: selected.map { all[$0].response })
        var status = HTTPCacheStatus()
        switch decision {
        case .serve(_, let stale):
            count(stale ? \.staleHits : \.hits, ns)
            status.hit = true
            if stale { status.detail = "max-stale" }
            return httpServed(key, all[selected!], policy, status: status)
        case .serveStaleAndRevalidate:
            count(\.staleHits, ns)
            if requestTable.fetch(forKey: key) == nil {
                let conditional = HTTPCachePolicy.conditionalFields(selected: all[selected!].response, all: all.map(\.response))
                _ = sendHTTP(HTTPRequest(key: key, fields: Self.merged(request, conditional)), conditional: !conditional.isEmpty,
                             fwd: "stale", refresh: true)
            }
            status.hit = true
            status.detail = "stale-while-revalidate"
            return httpServed(key, all[selected!], policy, status: status)
        case .gatewayTimeout:
            count(\.misses, ns)
            status.detail = "only-if-cached"
            return HTTPReadResult(key: key, status: 504, cacheStatus: status)
        case .miss, .validate:
            count(\.misses, ns)
            var fwd = all.isEmpty ? "uri-miss" : "vary-miss"
            var conditional = HTTPFields()
            if case .validate(let reason) = decision, let selected {
                fwd = reason == .stale || reason == .responseNoCache ? "stale" : "request"
                conditional = HTTPCachePolicy.conditionalFields(selected: all[selected].response, all: all.map(\.response))
                if reason != .stale { status.detail = reason.rawValue }
            }
            let id: UInt64
            if let inFlight = requestTable.fetch(forKey: key), let exchange = http.exchanges[inFlight], exchange.request.method == "GET",
               exchange.request.fields == Self.merged(request, conditional) || exchange.request.fields == request {
                // The request in flight asks what this one would: share it (B4; RFC 9211 `collapsed`).
                count(\.joined, ns)
                id = inFlight
                status.collapsed = true
                fwd = exchange.fwd ?? fwd
            } else {
                id = sendHTTP(HTTPRequest(key: key, fields: Self.merged(request, conditional)), conditional: !conditional.isEmpty,
                              fwd: fwd, refresh: false)
            }
            status.fwd = fwd
            if nowait || runningScheduled > 0 {
                http.lastUnawaited = id
                return HTTPReadResult(key: key, status: nil, cacheStatus: status)
            }
            guard var result = try awaitHTTP(id) else {
                // Voided before it completed (nothing came): what is stored, if anything.
                status.detail = "no answer"
                return HTTPReadResult(key: key, status: 504, cacheStatus: status)
            }
            if status.collapsed { result.cacheStatus.collapsed = true }
            if let detail = status.detail, result.cacheStatus.detail == nil { result.cacheStatus.detail = detail }
            return result
        }
    }

    /// The app's request fields with the cache's conditional ones, unless the app sent its own.
    static func merged(_ request: HTTPFields, _ conditional: HTTPFields) -> HTTPFields {
        guard !conditional.isEmpty, !request.contains("If-None-Match"), !request.contains("If-Modified-Since") else { return request }
        var fields = request
        for line in conditional { fields.append(line.name, line.value) }
        return fields
    }

    /// Sends an HTTP request to the origin, as a fetch of its key (the server log lists it).
    func sendHTTP(_ request: HTTPRequest, conditional: Bool, fwd: String?, refresh: Bool) -> UInt64 {
        let id = nextSeq()
        var inFlight = InFlight(id: id, kind: HTTPCachePolicy.isSafe(request.method) ? .fetch : .mutate, keys: [request.key], startedAt: now, refresh: [refresh],
                                voided: [false], invalidatedAfterSend: [false])
        var exchange = HTTPExchange(request: request, conditional: conditional, fwd: fwd)
        let reply: OriginReply<HTTPAnswer>
        if let httpOrigin = origin as? any HTTPOrigin {
            reply = httpOrigin.http(request, requestID: id, at: now)
        } else {
            switch origin.fetch(keys: [request.key], requestID: id, at: now) {
            case .after(let ms, let result): reply = .after(latencyMs: ms, result.map { HTTPAnswer($0[0]) })
            case .deferred: reply = .deferred
            }
        }
        let latency: Int64?
        switch reply {
        case .after(let ms, .success(let answer)):
            latency = ms
            exchange.answer = answer
            inFlight.answer = .keys(.success([.value(answer.body?.entryValue ?? .null)]))
        case .after(let ms, .failure(let failure)):
            latency = ms
            inFlight.answer = .keys(.failure(failure))
        case .deferred:
            latency = nil
        }
        if refresh { count(\.refreshes, namespaceSlot(forKey: request.key)) }
        http.exchanges[id] = exchange
        register(&inFlight, latency: latency)
        return id
    }

    /// Completes an HTTP request: a `304` freshens the stored responses it selects (§4.3.4), a
    /// storable answer is stored (§3) unless B12 says a newer write wins, a failure or `5xx` serves
    /// the stale response where `stale-if-error` allows (RFC 5861 §4); the reads waiting on it get
    /// what the app would.
    func completeHTTP(_ request: InFlight, _ exchange: HTTPExchange) {
        let key = exchange.request.key
        let ns = namespaceSlot(forKey: key)
        let policy = namespaces.policy(ns).http?.policy ?? HTTPCachePolicy()
        var all = httpVariants(key)
        let selected = httpSelected(all, request: exchange.request.fields)
        var status = HTTPCacheStatus()
        status.fwd = exchange.fwd
        var result: HTTPReadResult
        let answer: HTTPAnswer?
        var failure: OriginFailure?
        switch request.answer {
        case .keys(.failure(let f))?: answer = nil; failure = f
        case .keys(.success(let answers))?: answer = exchange.answer ?? answers.first.map { HTTPAnswer($0) }
        default: answer = nil; failure = OriginFailure("no answer")
        }
        let voided = request.voided.first ?? false
        if let answer { status.fwdStatus = answer.status }
        if exchange.request.method != "GET" {
            result = completeUnsafe(request, exchange, answer: answer, failure: failure, status: status)
        } else if let answer, answer.status == 304, exchange.conditional, !voided,
                  let naive = httpNaive(key).intersection([.notModifiedAsFailure, .notModifiedAsEmpty]).sorted().first {
            // (Both on: the failure, which comes first, wins.)
            result = completeNaive304(request, exchange, answer, naive, all: all, status: status)
            if naive == .notModifiedAsFailure { failure = OriginFailure("304 handled as a failure") }
        } else if let answer, answer.status == 304, exchange.conditional {
            // §4.3.4: the 304 freshens the stored responses it selects, and the read gets the
            // selected one; it is never a failure.
            var chosen = HTTPCachePolicy.selectedForUpdate(by: answer.fields, in: all.map(\.response))
            // A 304 with no validator answers the cache's own conditional request for the
            // response it selected: that one is updated (an origin that omits ETag and
            // Last-Modified from its 304s, as many do).
            if chosen.isEmpty, let selected, !answer.fields.contains("ETag"), !answer.fields.contains("Last-Modified") {
                chosen = [selected]
            }
            if chosen.isEmpty || voided {
                status.detail = chosen.isEmpty ? "the 304 selects no stored response" : nil
                result = HTTPReadResult(key: key, status: 304, fields: answer.fields, cacheStatus: status)
            } else {
                for i in chosen {
                    all[i].response = HTTPCachePolicy.updated(all[i].response, with: answer.fields,
                                                              requestTime: request.startedAt, responseTime: now)
                }
                let shown = selected.flatMap { chosen.contains($0) ? $0 : nil } ?? chosen[0]
                if storeResponse(key: key, value: all[shown].body?.entryValue ?? .null, request: request.id,
                                 refresh: request.refresh[0], invalidated: false) {
                    keepHTTPVariants(key, all)
                    status.stored = true
                }
                result = httpServed(key, all[shown], policy, status: status)
            }
        } else if (answer == nil || (500...599).contains(answer!.status)), let selected, !httpNaive(key).contains(.ignoreStaleExtensions),
                  policy.staleIfErrorAllows(httpView(all[selected].response, ofKey: key), request: exchange.request.fields, now: now) {
            status.detail = "stale-if-error"
            result = httpServed(key, all[selected], policy, status: status)
            if failure != nil { count(request.refresh[0] ? \.refreshFailures : \.fetchFailures, ns) }
        } else if let answer {
            var whyNot = policy.whyNotStored(method: exchange.request.method, request: exchange.request.fields,
                                             status: answer.status, response: answer.fields)?.rawValue
            // §4.1: a response with Vary: * matches no later request; keeping it would only pile up.
            if whyNot == nil, HTTPCachePolicy.varyNames(answer.fields) == nil { whyNot = "Vary: * matches no request" }
            let response = StoredHTTPResponse(status: answer.status, fields: answer.fields, request: exchange.request.fields,
                                              requestTime: request.startedAt, responseTime: now)
            let variant = HTTPVariant(response: response, body: answer.body)
            if whyNot == nil, !voided,
               storeResponse(key: key, value: answer.body?.entryValue ?? .null, request: request.id, refresh: request.refresh[0], invalidated: false) {
                // The new response replaces those the same request selected (§4.1, §4.3.4);
                // with one-variant-per-url, every one.
                if httpNaive(key).contains(.oneVariantPerURL) {
                    all.removeAll()
                } else {
                    all.removeAll { HTTPCachePolicy.varyMatches($0.response, request: exchange.request.fields) }
                }
                all.append(variant)
                if all.count > HTTPStore.maxVariants { all.removeFirst(all.count - HTTPStore.maxVariants) }
                keepHTTPVariants(key, all)
                status.stored = true
                result = httpServed(key, variant, policy, status: status)
            } else {
                if let whyNot { status.detail = "not stored: " + whyNot }
                result = HTTPReadResult(key: key, status: answer.status, fields: response.fields, body: answer.body, cacheStatus: status)
            }
        } else {
            // No answer at all (§4.2.4, §4.3.3): a gateway's error.
            let message = failure?.message ?? "no answer"
            count(request.refresh[0] ? \.refreshFailures : \.fetchFailures, ns)
            status.detail = message
            result = HTTPReadResult(key: key, status: 504,
                                    cacheStatus: status)
        }
        if failure != nil {
            setFate(request.id, .failed)
        } else {
            setFate(request.id, status.stored || result.cacheStatus.stored ? .stored : .discarded)
        }
        if exchange.waiters > 0 { http.outcomes[request.id] = (result, exchange.waiters) }
    }

    /// A `304` to a validation, as a naive client handles it (SPEC §1.2): `not-modified-as-failure`
    /// gives the read the 304 with no body, counted a failure, the stored response as it was;
    /// `not-modified-as-empty` stores the 304 as a 200 with its fields and an empty body, in
    /// place of the responses the request selected, and serves that.
    private func completeNaive304(_ request: InFlight, _ exchange: HTTPExchange, _ answer: HTTPAnswer, _ naive: NaivePolicy,
                                  all: [HTTPVariant], status: HTTPCacheStatus) -> HTTPReadResult {
        let key = exchange.request.key
        let ns = namespaceSlot(forKey: key)
        var status = status
        guard naive == .notModifiedAsEmpty else {
            count(request.refresh[0] ? \.refreshFailures : \.fetchFailures, ns)
            status.detail = "not-modified-as-failure: the 304 is an error"
            return HTTPReadResult(key: key, status: 304, fields: HTTPCachePolicy.storedFields(answer.fields), cacheStatus: status)
        }
        let policy = namespaces.policy(ns).http?.policy ?? HTTPCachePolicy()
        let response = StoredHTTPResponse(status: 200, fields: answer.fields, request: exchange.request.fields,
                                          requestTime: request.startedAt, responseTime: now)
        let variant = HTTPVariant(response: response, body: .json(.string("")))
        status.detail = "not-modified-as-empty: the 304 is stored as an empty 200"
        guard storeResponse(key: key, value: .string(""), request: request.id, refresh: request.refresh[0], invalidated: false) else {
            return HTTPReadResult(key: key, status: 200, fields: response.fields, body: .json(.string("")), cacheStatus: status)
        }
        var kept = all
        kept.removeAll { HTTPCachePolicy.varyMatches($0.response, request: exchange.request.fields) }
        kept.append(variant)
        keepHTTPVariants(key, kept)
        status.stored = true
        return httpServed(key, variant, policy, status: status)
    }

    // MARK: Unsafe methods (§4.4)

    /// An app's unsafe request (`request METHOD KEY`): sent to the origin, never answered from
    /// the cache; a non-error answer invalidates the target and the same-origin `Location` and
    /// `Content-Location` (§4.4). Waits for the answer unless `nowait`.
    public func httpRequest(_ method: String, _ key: String, request: HTTPFields = HTTPFields(), body: JSONValue? = nil,
                            nowait: Bool = false) throws(CacheError) -> HTTPReadResult {
        defer { if checksInvariants { checkInvariants() } }
        guard method == "HEAD" || !HTTPCachePolicy.isSafe(method) else { throw CacheError("\(method) is a safe method: read with get") }
        guard let settings = httpSettings(ofKey: key) else { throw CacheError("\(key) is not a key of an HTTP namespace") }
        _ = nextSeq()
        if method == "HEAD", let served = httpHeadFromStoredGET(key, request: request, settings.policy) { return served }
        var status = HTTPCacheStatus()
        status.fwd = "method"
        guard origin.isOnline else {
            status.detail = "offline"
            return HTTPReadResult(key: key, status: 504, cacheStatus: status)
        }
        let id = sendHTTP(HTTPRequest(method: method, key: key, fields: request, body: body), conditional: false, fwd: "method", refresh: false)
        if nowait || runningScheduled > 0 {
            http.lastUnawaited = id
            return HTTPReadResult(key: key, status: nil, cacheStatus: status)
        }
        guard let result = try awaitHTTP(id) else {
            status.detail = "no answer"
            return HTTPReadResult(key: key, status: 504, cacheStatus: status)
        }
        return result
    }

    /// A HEAD answered from a stored GET response (RFC 9110 §9.3.2, RFC 9111 §4: a cache may
    /// answer a HEAD with the fields of a response it may serve to the same GET): the response
    /// the request selects, when it is fresh (or `max-stale` covers it), without its body, a hit;
    /// nil when the HEAD is to be sent.
    func httpHeadFromStoredGET(_ key: String, request: HTTPFields, _ policy: HTTPCachePolicy) -> HTTPReadResult? {
        let all = httpVariants(key)
        guard let selected = httpSelected(all, request: request),
              case .serve(_, let stale) = httpDecide(key, policy, request: request, stored: all[selected].response) else { return nil }
        let ns = namespaceSlot(forKey: key)
        count(stale ? \.staleHits : \.hits, ns)
        if let slot = entrySlot(forKey: key) { entries.touch(slot) }
        var status = HTTPCacheStatus()
        status.hit = true
        status.detail = stale ? "HEAD from the stored GET, max-stale" : "HEAD from the stored GET"
        var result = httpServed(key, all[selected], policy, status: status)
        result.body = nil
        return result
    }

    /// Waits for HTTP request `id`, running the clock until it completes, and takes this waiter's
    /// share of its outcome (kept for the other waiters of a collapsed request, if any); nil when
    /// the request was voided before it completed.
    private func awaitHTTP(_ id: UInt64) throws(CacheError) -> HTTPReadResult? {
        http.exchanges[id]?.waiters += 1
        requestTable.addWaiter(id)
        try run(until: id)
        guard var outcome = http.outcomes[id] else { return nil }
        outcome.waiters -= 1
        http.outcomes[id] = outcome.waiters > 0 ? outcome : nil
        return outcome.result
    }

    /// The keys `completeUnsafe` invalidated for the read result of request `id` (JSON and the
    /// shell's `invalidated:` line), kept in `detail`.
    func completeUnsafe(_ request: InFlight, _ exchange: HTTPExchange, answer: HTTPAnswer?, failure: OriginFailure?,
                        status: HTTPCacheStatus) -> HTTPReadResult {
        var status = status
        let key = exchange.request.key
        guard let answer else {
            setFate(request.id, .failed)
            status.detail = failure?.message ?? "no answer"
            return HTTPReadResult(key: key, status: 504, cacheStatus: status)
        }
        if exchange.request.method == "HEAD" {
            if answer.status == 200, let updated = headUpdated(key, exchange.request.fields, answer, request: request) {
                status.stored = updated.hasPrefix("HEAD updated")
                if !updated.isEmpty { status.detail = updated }
            }
            // As `Cache-Status` says: a 200 that freshened a stored response was stored.
            setFate(request.id, status.stored ? .stored : .discarded)
            return HTTPReadResult(key: key, status: answer.status, fields: HTTPCachePolicy.storedFields(answer.fields), cacheStatus: status)
        }
        let namespace = String(KeyName.namespace(of: key))
        let target = key.utf8.first == UInt8(ascii: "/") ? key : String(key.dropFirst(namespace.utf8.count + 1))
        let origin = namespaces.slot(named: namespace).flatMap { namespaces.policy($0).http?.origin } ?? "//"
        var invalidated: [String] = []
        for path in HTTPCachePolicy.invalidated(method: exchange.request.method, target: target, status: answer.status,
                                                response: answer.fields, origin: origin) {
            guard let normalized = try? Self.httpKey(namespace + ":" + path) else { continue }
            // As evict drops a key, told to observers as invalidated.
            requestTable.voidResponses(forKey: normalized)
            if let slot = entrySlot(forKey: normalized) {
                _ = nextSeq()
                mutationQueue.drop { $0 == normalized }
                dropDeferred { $0 == normalized }
                let ns = slots[Int(slot)].namespace
                count(\.invalidations, ns)
                removeEntry(slot)
                emit(.invalidated, key: normalized, namespace: ns)
                invalidated.append(normalized)
            }
        }
        setFate(request.id, .discarded)
        if !invalidated.isEmpty { status.detail = "invalidated " + invalidated.joined(separator: " ") }
        return HTTPReadResult(key: key, status: answer.status, fields: HTTPCachePolicy.storedFields(answer.fields),
                              body: answer.body, cacheStatus: status)
    }

    /// §4.3.5: a 200 to a HEAD updates each stored GET response the request could have selected
    /// whose validators (ETag, Last-Modified) and Content-Length agree with it, as a 304 would,
    /// and invalidates (drops) the others. - Returns: what it did, for `detail`; nil when nothing
    /// was stored.
    func headUpdated(_ key: String, _ request: HTTPFields, _ answer: HTTPAnswer, request inFlight: InFlight) -> String? {
        var all = httpVariants(key)
        guard !all.isEmpty else { return nil }
        var updated = 0, dropped = 0
        all = all.compactMap { variant in
            guard HTTPCachePolicy.varyMatches(variant.response, request: request) else { return variant }
            let agree = ["ETag", "Last-Modified", "Content-Length"].allSatisfy { name in
                guard let received = answer.fields[name] else { return true }
                return variant.response.fields[name] == received
            }
            guard agree else { dropped += 1; return nil }
            updated += 1
            var fresh = variant
            fresh.response = HTTPCachePolicy.updated(variant.response, with: answer.fields,
                                                     requestTime: inFlight.startedAt, responseTime: now)
            return fresh
        }
        guard updated + dropped > 0 else { return "" }
        if all.isEmpty {
            if let slot = entrySlot(forKey: key) {
                let ns = slots[Int(slot)].namespace
                count(\.invalidations, ns)
                removeEntry(slot)
                emit(.invalidated, key: key, namespace: ns)
            }
        } else if storeResponse(key: key, value: all[all.count - 1].body?.entryValue ?? .null, request: inFlight.id, refresh: false, invalidated: false) {
            keepHTTPVariants(key, all)
        } else {
            return ""
        }
        return (updated > 0 ? "HEAD updated \(updated)" : "") + (updated > 0 && dropped > 0 ? ", " : "")
            + (dropped > 0 ? "HEAD invalidated \(dropped)" : "")
    }

    /// The freshness arithmetic of the stored response a request of `key` selects (§4.1):
    /// `explain`'s figures for that one response, without the words; nil when none is selected.
    public func httpFreshness(_ key: String, request: HTTPFields) -> HTTPExplanation? {
        guard let settings = httpSettings(ofKey: key) else { return nil }
        let all = httpVariants(key)
        guard let selected = httpSelected(all, request: request) else { return nil }
        let policy = settings.policy
        let r = all[selected].response
        let (lifetime, source) = policy.freshnessLifetime(r)
        let date = policy.dateValue(r)
        return HTTPExplanation(status: r.status, varyValues: r.varyValues, lifetimeMs: lifetime,
                               lifetimeSource: Self.lifetimeSourceText(source, policy),
                               ageMs: policy.currentAge(r, now: now), apparentAgeMs: max(0, r.responseTime - date),
                               ageFieldMs: HTTPCachePolicy.ageValue(r.fields), responseDelayMs: r.responseTime - r.requestTime,
                               residentMs: now - r.responseTime, next: "")
    }

    /// Where a lifetime came from, as `explain` says it.
    static func lifetimeSourceText(_ source: HTTPCachePolicy.LifetimeSource, _ policy: HTTPCachePolicy) -> String {
        switch source {
        case .sMaxAge: "s-maxage"
        case .maxAge: "max-age"
        case .expires: "Expires - Date"
        case .heuristic: "heuristic: \(policy.heuristicPercent)% of Date - Last-Modified"
        case .none: "none: no explicit freshness and no Last-Modified"
        case .invalid(let name): "invalid \(name): stale"
        }
    }

    // MARK: explain

    /// What `explain` says of an HTTP key: for each stored response, the freshness arithmetic
    /// (§4.2: its lifetime and the field it came from, its current age and what it is made of)
    /// and what a read selecting it does now; nil when nothing is stored.
    public func httpExplain(_ key: String) -> [HTTPExplanation]? {
        guard let settings = httpSettings(ofKey: key) else { return nil }
        let all = httpVariants(key)
        guard !all.isEmpty else { return nil }
        let policy = settings.policy
        return all.map { variant in
            let r = variant.response
            let (lifetime, source) = policy.freshnessLifetime(r)
            let date = policy.dateValue(r)
            let apparent = max(0, r.responseTime - date)
            let delay = r.responseTime - r.requestTime
            let ageField = HTTPCachePolicy.ageValue(r.fields)
            let resident = now - r.responseTime
            var request = HTTPFields()
            for (name, value) in r.varyValues.sorted(by: { $0.key < $1.key }) { request.append(name, value) }
            let next: String
            switch httpDecide(key, policy, request: request, stored: r) {
            case .serve(_, let stale): next = stale ? "served stale" : "served from the cache (hit)"
            case .serveStaleAndRevalidate: next = "served stale at once and validated in the background (stale-while-revalidate)"
            case .validate(let reason):
                let conditional = HTTPCachePolicy.conditionalFields(selected: r, all: all.map(\.response))
                next = (conditional.isEmpty ? "sent again without a validator" : "validated with " + conditional.lines.map(\.name).joined(separator: " and "))
                    + " (" + (reason == .stale ? "stale" : reason.rawValue) + ")"
                    + (policy.forbidsStale(r) ? "; never served stale (must-revalidate)" : "")
            case .miss, .gatewayTimeout: next = "sent to the server"
            }
            let sourceText: String
            switch source {
            case .sMaxAge: sourceText = "s-maxage"
            case .maxAge: sourceText = "max-age"
            case .expires: sourceText = "Expires - Date"
            case .heuristic: sourceText = "heuristic: \(policy.heuristicPercent)% of Date - Last-Modified"
            case .none: sourceText = "none: no explicit freshness and no Last-Modified"
            case .invalid(let name): sourceText = "invalid \(name): stale"
            }
            return HTTPExplanation(status: r.status, varyValues: r.varyValues, lifetimeMs: lifetime, lifetimeSource: sourceText,
                                   ageMs: policy.currentAge(r, now: now), apparentAgeMs: apparent, ageFieldMs: ageField,
                                   responseDelayMs: delay, residentMs: resident, next: next)
        }
    }
}

/// One stored response of an HTTP key as `explain` shows it (RFC 9111 §4.2's arithmetic).
public struct HTTPExplanation: Sendable, Equatable {
    public var status: Int
    public var varyValues: [String: String]
    public var lifetimeMs: Int64
    public var lifetimeSource: String
    public var ageMs: Int64
    public var apparentAgeMs: Int64
    public var ageFieldMs: Int64
    public var responseDelayMs: Int64
    public var residentMs: Int64
    /// What a read that selects it does now.
    public var next: String
}
