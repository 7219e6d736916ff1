/// What RFC 9111 has an HTTP cache decide, as functions of the messages and the (virtual) clock:
/// whether to store a response (§3), its freshness lifetime and age (§4.2), whether a stored
/// response may be served, served stale, or must be validated first (§4, §4.2.4, RFC 5861), the
/// conditional request that validates it (§4.3.1), what a `304` updates (§4.3.4), which stored
/// responses a request's `Vary` selects (§4.1), and what an unsafe method invalidates (§4.4).
///
/// Nothing here keeps state or reads a clock: every time is an argument, in ms since the Unix
/// epoch, so the same messages at the same virtual times always decide the same.
public struct HTTPCachePolicy: Sendable, Equatable {
    /// A shared cache (a proxy, a CDN: RFC 9111 §3.5) rather than a private one (a browser's, an
    /// app's URLCache).
    public var shared: Bool
    /// Heuristic freshness as a fraction of the time since `Last-Modified` (§4.2.2), in percent:
    /// 10 by default, as the RFC suggests and most caches do.
    public var heuristicPercent: Int64

    public init(shared: Bool = false, heuristicPercent: Int64 = 10) {
        self.shared = shared
        self.heuristicPercent = heuristicPercent
    }

    // MARK: Storing (§3)

    /// Why a response is not stored; nil when it is.
    public enum NotStored: String, Sendable, Equatable {
        case method = "the request method is not GET"
        case status = "the status is not final, or not one the cache understands"
        case requestNoStore = "the request says no-store"
        case responseNoStore = "the response says no-store"
        case privateResponse = "the response is private and the cache shared"
        case authorization = "the request carries Authorization and the response allows no shared cache to store it"
        case noFreshnessInformation = "the response has no explicit freshness and its status is not heuristically cacheable"
    }

    /// Status codes a cache may give heuristic freshness (RFC 9110 §15.1).
    public static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Whether the cache understands the caching of `status` (§3: a `206` needs range support this
    /// cache does not have; a `304` is never stored itself).
    public static func understands(_ status: Int) -> Bool { understood.contains(status) }

    /// RFC 9110 §15's final status codes, but 206 and 304 (a cache here stores neither).
    static let understood: Set<Int> = [200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 307, 308,
                                       400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415,
                                       416, 417, 421, 422, 426, 500, 501, 502, 503, 504, 505]

    /// Whether a response to `request` may be stored (§3); nil when it may, else why not.
    public func whyNotStored(method: String, request: HTTPFields, status: Int, response: HTTPFields) -> NotStored? {
        guard method == "GET" else { return .method }
        let cc = CacheControl(response)
        let requestCC = CacheControl(request)
        guard status >= 200 else { return .status }
        if status == 206 || status == 304 || cc.mustUnderstand {
            guard Self.understands(status) else { return .status }
        }
        if requestCC.noStore { return .requestNoStore }
        // must-understand with a status understood overrides no-store (§5.2.2.3).
        if cc.noStore && !(cc.mustUnderstand && Self.understands(status)) { return .responseNoStore }
        if shared && cc.privateUnqualified { return .privateResponse }
        if shared && request.contains("Authorization") && !(cc.mustRevalidate || cc.isPublic || cc.sMaxAge != nil) {
            return .authorization
        }
        let explicit = response.contains("Expires") || cc.maxAge != nil || (shared && cc.sMaxAge != nil)
            || cc.isPublic || (!shared && cc.isPrivate)
        guard explicit || Self.heuristicallyCacheable.contains(status) else { return .noFreshnessInformation }
        return nil
    }

    /// The header fields a cache stores from a response: all but the connection's own (§3.1).
    public static func storedFields(_ response: HTTPFields) -> HTTPFields {
        var hopByHop: Set<String> = ["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade"]
        for name in response.list("Connection") { hopByHop.insert(name.lowercased()) }
        return HTTPFields(response.lines.filter { !hopByHop.contains($0.name.lowercased()) })
    }

    // MARK: Freshness (§4.2)

    /// Where a freshness lifetime came from, for `explain`.
    public enum LifetimeSource: Sendable, Equatable {
        case sMaxAge
        case maxAge
        case expires
        /// `heuristicPercent` of the time between `Last-Modified` and `Date`.
        case heuristic
        /// No explicit freshness and none allowed or computable: stale at once.
        case none
        /// The directive or field named is invalid (or a singleton field is repeated), and the
        /// response is considered stale (§4.2.1).
        case invalid(String)
    }

    /// The freshness lifetime of a stored response, in ms, and where it came from (§4.2.1).
    public func freshnessLifetime(_ stored: StoredHTTPResponse) -> (ms: Int64, source: LifetimeSource) {
        let cc = stored.parsed.cacheControl
        if shared, let s = cc.sMaxAge {
            guard let ms = s.ms else { return (0, .invalid("s-maxage")) }
            return (ms, .sMaxAge)
        }
        if let s = cc.maxAge {
            guard let ms = s.ms else { return (0, .invalid("max-age")) }
            return (ms, .maxAge)
        }
        switch stored.parsed.expires {
        case .absent: break
        case .invalid: return (0, .invalid("Expires"))
        case .at(let expires): return (max(0, expires - dateValue(stored)), .expires)
        }
        let heuristicAllowed = Self.heuristicallyCacheable.contains(stored.status) || cc.isPublic
        if heuristicAllowed, let lastModified = stored.parsed.lastModified {
            let since = max(0, dateValue(stored) - lastModified)
            return (since / 100 * heuristicPercent + since % 100 * heuristicPercent / 100, .heuristic)
        }
        return (0, .none)
    }

    /// The response's `Date`, or when it arrived if it has none or an invalid one.
    func dateValue(_ stored: StoredHTTPResponse) -> Int64 {
        stored.parsed.date ?? stored.responseTime
    }

    /// The `Age` field's value in ms: its first member if a list, 0 if invalid (§5.1).
    static func ageValue(_ fields: HTTPFields) -> Int64 {
        guard let first = fields.list("Age").first else { return 0 }
        guard !first.isEmpty, first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return 0 }
        guard first.utf8.count <= 12, let seconds = Int64(first) else { return CacheControl.greatest * 1000 }
        return min(seconds, CacheControl.greatest) * 1000
    }

    /// The response's current age at `now`, in ms (§4.2.3).
    public func currentAge(_ stored: StoredHTTPResponse, now: Int64) -> Int64 {
        let apparentAge = max(0, stored.responseTime - dateValue(stored))
        let responseDelay = stored.responseTime - stored.requestTime
        let correctedAgeValue = stored.parsed.age + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = now - stored.responseTime
        return correctedInitialAge + residentTime
    }

    /// Whether the stored response may ever be served stale, whatever the request allows
    /// (§4.2.4: `must-revalidate`; for a shared cache `proxy-revalidate` and `s-maxage`).
    public func forbidsStale(_ stored: StoredHTTPResponse) -> Bool {
        let cc = stored.parsed.cacheControl
        return cc.mustRevalidate || (shared && (cc.proxyRevalidate || cc.sMaxAge != nil))
    }

    // MARK: Selecting (§4.1)

    /// The lowercased field names the stored response varies on; nil for `Vary: *`, which no
    /// request matches.
    public static func varyNames(_ response: HTTPFields) -> [String]? {
        let names = response.list("Vary").map { $0.lowercased() }
        return names.contains("*") ? nil : names
    }

    /// The values of the request's fields that `response` varies on, as stored with it.
    public static func varyValues(request: HTTPFields, response: HTTPFields) -> [String: String] {
        var values: [String: String] = [:]
        for name in varyNames(response) ?? [] { if let value = normalized(request[name]) { values[name] = value } }
        return values
    }

    /// Whether a request selects the stored response by its `Vary` (§4.1): each field named has
    /// the same value in both (absent in both counts as the same), after joining lines and
    /// dropping whitespace around list members.
    public static func varyMatches(_ stored: StoredHTTPResponse, request: HTTPFields) -> Bool {
        guard let names = stored.parsed.varyNames else { return false }
        return names.allSatisfy { normalized(request[$0]) == stored.varyValues[$0] }
    }

    private static func normalized(_ value: String?) -> String? {
        value.map { HTTPFields.splitList($0).joined(separator: ", ") }
    }

    // MARK: Serving (§4, §4.2.4, §5.2.1, RFC 5861)

    /// What a cache does with a request, given the stored response the request selects.
    public enum Decision: Sendable, Equatable {
        /// Serve it: fresh (or stale as the request allows: `max-stale`), without asking anyone.
        case serve(age: Int64, stale: Bool)
        /// Serve it stale now and validate it in the background (`stale-while-revalidate`).
        case serveStaleAndRevalidate(age: Int64)
        /// Validate it first, with a conditional request (§4.3.1); `reason` for `Cache-Status`.
        case validate(reason: ValidationReason)
        /// Nothing stored for it: forward the request.
        case miss
        /// `only-if-cached` and nothing servable: answer 504 (§5.2.1.7).
        case gatewayTimeout
    }

    /// Why a stored response is validated before it is served.
    public enum ValidationReason: String, Sendable, Equatable {
        case stale
        case responseNoCache = "the response says no-cache"
        case requestNoCache = "the request says no-cache"
        case requestMaxAge = "older than the request's max-age"
        case requestMinFresh = "fresh for less than the request's min-fresh"
    }

    /// Decides how `request` is answered from `stored` (nil: nothing selected) at `now`.
    public func decide(request: HTTPFields, stored: StoredHTTPResponse?, now: Int64) -> Decision {
        let requestCC = CacheControl(request)
        guard let stored else { return requestCC.onlyIfCached ? .gatewayTimeout : .miss }
        let cc = stored.parsed.cacheControl
        let lifetime = freshnessLifetime(stored).ms
        let age = currentAge(stored, now: now)
        let fresh = lifetime > age
        let validate: ValidationReason?
        if cc.noCacheUnqualified {
            validate = .responseNoCache
        } else if requestCC.noCache {
            validate = .requestNoCache
        } else if let maxAge = requestCC.maxAge, age > (maxAge.ms ?? 0) {
            validate = .requestMaxAge
        } else if let minFresh = requestCC.minFresh, lifetime - age < (minFresh.ms ?? 0) {
            validate = .requestMinFresh
        } else if !fresh {
            // Stale: served only where the request accepts it and the response allows it.
            if !forbidsStale(stored), let maxStale = requestCC.maxStale?.ms, age - lifetime <= maxStale {
                return .serve(age: age, stale: true)
            }
            if !forbidsStale(stored), let window = cc.staleWhileRevalidate?.ms, age - lifetime <= window {
                return requestCC.onlyIfCached ? .serve(age: age, stale: true) : .serveStaleAndRevalidate(age: age)
            }
            validate = .stale
        } else {
            validate = nil
        }
        if let validate { return requestCC.onlyIfCached ? .gatewayTimeout : .validate(reason: validate) }
        return .serve(age: age, stale: false)
    }

    /// Whether a stale response may be served when validating it failed (a 5xx or no answer):
    /// `stale-if-error` in the response or the request covers its staleness (RFC 5861 §4).
    public func staleIfErrorAllows(_ stored: StoredHTTPResponse, request: HTTPFields, now: Int64) -> Bool {
        guard !forbidsStale(stored) else { return false }
        let staleness = currentAge(stored, now: now) - freshnessLifetime(stored).ms
        let windows = [stored.parsed.cacheControl.staleIfError?.ms, CacheControl(request).staleIfError?.ms].compactMap { $0 }
        return windows.contains { staleness <= $0 }
    }

    /// The header fields a served response carries: the stored ones, with `Age` set to its current
    /// age in whole seconds (§5.1).
    public func servedFields(_ stored: StoredHTTPResponse, now: Int64) -> HTTPFields {
        var fields = stored.fields
        fields.set("Age", String(max(0, currentAge(stored, now: now)) / 1000))
        return fields
    }

    // MARK: Validating (§4.3)

    /// The fields a cache adds to validate stored responses (§4.3.1): `If-None-Match` with every
    /// entity tag stored for the target, `If-Modified-Since` with the `Last-Modified` of the one
    /// selected. Empty when none has a validator.
    public static func conditionalFields(selected: StoredHTTPResponse, all: [StoredHTTPResponse]) -> HTTPFields {
        var fields = HTTPFields()
        var tags: [String] = []
        for response in [selected] + all {
            if let tag = response.fields["ETag"]?.trimmingBlanks(), !tag.isEmpty, !tags.contains(tag) { tags.append(tag) }
        }
        if !tags.isEmpty { fields.append("If-None-Match", tags.joined(separator: ", ")) }
        if let lastModified = selected.fields["Last-Modified"], HTTPDate.parse(lastModified) != nil {
            fields.append("If-Modified-Since", lastModified)
        }
        return fields
    }

    /// Which stored responses a `304` updates (§4.3.4): indexes into `stored`, possibly none.
    public static func selectedForUpdate(by notModified: HTTPFields, in stored: [StoredHTTPResponse]) -> [Int] {
        if let tag = notModified["ETag"]?.trimmingBlanks(), !tag.isEmpty {
            if !tag.hasPrefix("W/") {
                return stored.indices.filter { stored[$0].fields["ETag"]?.trimmingBlanks() == tag }
            }
            // A weak validator: the most recent stored response with it.
            let matching = stored.indices.filter { stored[$0].fields["ETag"]?.trimmingBlanks() == tag }
            return matching.max { stored[$0].responseTime < stored[$1].responseTime }.map { [$0] } ?? []
        }
        if let lastModified = notModified["Last-Modified"] {
            let matching = stored.indices.filter { stored[$0].fields["Last-Modified"] == lastModified }
            return matching.max { stored[$0].responseTime < stored[$1].responseTime }.map { [$0] } ?? []
        }
        // No validator: the only stored response, when it has none either.
        if stored.count == 1, stored[0].fields["ETag"] == nil, stored[0].fields["Last-Modified"] == nil { return [0] }
        return []
    }

    /// A stored response freshened by a `304` (§3.2, §4.3.4): the `304`'s fields replace those of
    /// the same name (but `Content-Length` and the connection's own), and its times become the
    /// response's, as its age now starts from them.
    public static func updated(_ stored: StoredHTTPResponse, with notModified: HTTPFields,
                               requestTime: Int64, responseTime: Int64) -> StoredHTTPResponse {
        var result = stored
        let incoming = storedFields(notModified).lines.filter { !HTTPFields.same($0.name, "Content-Length") }
        // The stored lines of the fields the 304 has go, then its lines follow: in one pass over
        // each (a removal for each of the 304's fields was a pass over the stored ones each).
        let replaced = Set(incoming.map { HTTPFields.folded($0.name) })
        var fields = HTTPFields(stored.fields.lines.filter { !replaced.contains(HTTPFields.folded($0.name)) })
        for line in incoming { fields.append(line.name, line.value) }
        // Set once: each setting parses the fields again.
        result.fields = fields
        result.requestTime = requestTime
        result.responseTime = responseTime
        return result
    }

    // MARK: Invalidating (§4.4)

    /// Whether a request method is safe (RFC 9110 §9.2.1): one a cache does not invalidate for.
    public static func isSafe(_ method: String) -> Bool { ["GET", "HEAD", "OPTIONS", "TRACE"].contains(method) }

    /// The targets (paths with their query) that an unsafe request's non-error response
    /// invalidates (§4.4): its own, and `Location` and `Content-Location` when they are on the same
    /// origin (a path, or an absolute URI of `origin`, as `https://api.example.com`).
    public static func invalidated(method: String, target: String, status: Int, response: HTTPFields, origin: String) -> [String] {
        guard !isSafe(method), (200...399).contains(status) else { return [] }
        var targets = [target]
        for name in ["Location", "Content-Location"] {
            guard let value = response[name]?.trimmingBlanks(), !value.isEmpty else { continue }
            var path: String?
            if value.hasPrefix("/") && !value.hasPrefix("//") {
                path = value
            } else if value.lowercased().hasPrefix(origin.lowercased() + "/") {
                path = String(value.dropFirst(origin.count))
            }
            if let path, !targets.contains(path) { targets.append(path) }
        }
        return targets
    }
}

/// A response as an HTTP cache keeps it: status, header fields (the connection's own removed),
/// when its request was sent and when it arrived (for its age: RFC 9111 §4.2.3), and the request
/// fields its `Vary` names (for selecting it: §4.1). The body is kept beside it by whoever stores it.
public struct StoredHTTPResponse: Sendable, Equatable {
    public var status: Int
    /// The fields; setting them parses again what the cache decides from (`parsed`).
    public var fields: HTTPFields {
        didSet { parsed = ParsedResponseFields(fields) }
    }
    public var requestTime: Int64
    public var responseTime: Int64
    /// The request's value of each field the response varies on (lowercased name); a field the
    /// request lacked is absent.
    public var varyValues: [String: String]
    /// What the cache decides from, parsed from `fields` once rather than at every read: kept in
    /// memory only (a snapshot, store or recording writes the fields, never this).
    private(set) var parsed: ParsedResponseFields

    /// A response just received to a request with `request`'s fields, sent at `requestTime`.
    public init(status: Int, fields: HTTPFields, request: HTTPFields = HTTPFields(), requestTime: Int64, responseTime: Int64) {
        self.status = status
        let stored = HTTPCachePolicy.storedFields(fields)
        self.fields = stored
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = HTTPCachePolicy.varyValues(request: request, response: fields)
        parsed = ParsedResponseFields(stored)
    }

    /// Equal when what is kept is: `parsed` follows from `fields`.
    public static func == (a: StoredHTTPResponse, b: StoredHTTPResponse) -> Bool {
        a.status == b.status && a.requestTime == b.requestTime && a.responseTime == b.responseTime
            && a.fields == b.fields && a.varyValues == b.varyValues
    }
}

/// The fields of a stored response that freshness, age and selection are decided from, parsed
/// once (a hit then parses no date and no `Cache-Control`). A function of the fields alone.
struct ParsedResponseFields: Sendable {
    /// The `Cache-Control` directives.
    let cacheControl: CacheControl
    /// `Date`, nil when absent or invalid.
    let date: Int64?
    /// `Age` in ms as `HTTPCachePolicy.ageValue` reads it; whether the field is present at all.
    let age: Int64
    let hasAge: Bool
    /// `Expires`: absent, invalid (or repeated: §4.2.1), or the time it names.
    let expires: Expires
    /// `Last-Modified`, nil when absent or invalid.
    let lastModified: Int64?
    /// `Vary`'s lowercased names; nil for `Vary: *`.
    let varyNames: [String]?

    enum Expires: Sendable {
        case absent
        case invalid
        case at(Int64)
    }

    init(_ fields: HTTPFields) {
        cacheControl = CacheControl(fields)
        date = fields["Date"].flatMap(HTTPDate.parse)
        age = HTTPCachePolicy.ageValue(fields)
        hasAge = fields.contains("Age")
        if !fields.contains("Expires") {
            expires = .absent
        } else if fields.count(of: "Expires") == 1, let time = HTTPDate.parse(fields["Expires"]!) {
            expires = .at(time)
        } else {
            expires = .invalid
        }
        lastModified = fields["Last-Modified"].flatMap(HTTPDate.parse)
        varyNames = HTTPCachePolicy.varyNames(fields)
    }
}
