import CacheCore
import Testing

/// RFC 9111's decisions, each against the section that makes it, on a clock set by hand.
@Suite struct HTTPCachePolicyTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example date.
    static let t0 = HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")!
    static let second: Int64 = 1000

    static func response(_ pairs: KeyValuePairs<String, String>, status: Int = 200, at time: Int64 = t0,
                         sentAt: Int64? = nil, request: HTTPFields = HTTPFields()) -> StoredHTTPResponse {
        StoredHTTPResponse(status: status, fields: HTTPFields(pairs), request: request,
                           requestTime: sentAt ?? time, responseTime: time)
    }

    // MARK: Dates and fields

    @Test func datesInAllThreeFormsNameTheSameTime() {
        #expect(Self.t0 == 784_111_777_000)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Self.t0)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Self.t0)
        #expect(HTTPDate.parse(" Sun, 06 Nov 1994 08:49:37 GMT ") == Self.t0)
        #expect(HTTPDate.format(Self.t0) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Self.t0 + 999) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for bad in ["", "0", "-1", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Foo 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "yesterday",
                    // One space between the parts (RFC 9110 §5.6.7's grammar): the suite's
                    // freshness-expires-invalid-multiple-spaces.
                    "Thu, 18  Aug  2050 02:01:18 GMT", "Sun,\t06 Nov 1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func fieldsAreCaseInsensitiveListsJoinedAcrossLines() {
        var fields = HTTPFields(["cache-control": "max-age=60", "Vary": "Accept", "VARY": "Accept-Language"])
        #expect(fields["Cache-Control"] == "max-age=60")
        #expect(fields["vary"] == "Accept, Accept-Language")
        #expect(fields.list("Vary") == ["Accept", "Accept-Language"])
        fields.set("Vary", "Cookie")
        #expect(fields.lines.map(\.name) == ["cache-control", "Vary"])
        #expect(HTTPFields(["X": #"a, "b,c" , ,d"#]).list("x") == ["a", #""b,c""#, "d"])
    }

    @Test func cacheControlDirectives() {
        let cc = CacheControl(#"Max-Age=60, no-cache="Set-Cookie, X", private, s-maxage="30", max-age=5"#)
        #expect(cc.maxAge == .value(60), "the first occurrence counts")
        #expect(cc.sMaxAge == .value(30), "a quoted argument is unquoted")
        #expect(cc.noCache && !cc.noCacheUnqualified)
        #expect(cc.fieldNames(of: "no-cache") == ["set-cookie", "x"])
        #expect(cc.privateUnqualified)
        for bad in ["max-age=-1", "max-age=1.5", "max-age=", "max-age", "max-age=abc"] {
            #expect(CacheControl(bad).maxAge == .invalid, "\(bad)")
        }
        #expect(CacheControl("max-age=99999999999999999999999").maxAge == .value(CacheControl.greatest))
        #expect(CacheControl("max-stale").maxStale?.ms ?? 0 > 1_000_000_000_000)
        #expect(CacheControl("max-stale=10").maxStale == .value(10))
    }

    // MARK: Storing (§3)

    @Test func storingFollowsSection3() {
        let privateCache = HTTPCachePolicy(), sharedCache = HTTPCachePolicy(shared: true)
        let none = HTTPFields()
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 200, response: none) == nil,
                "200 is heuristically cacheable")
        #expect(privateCache.whyNotStored(method: "POST", request: none, status: 200, response: HTTPFields(["Cache-Control": "max-age=60"])) == .method)
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 302, response: none) == .noFreshnessInformation)
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 302, response: HTTPFields(["Cache-Control": "max-age=60"])) == nil)
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 206, response: HTTPFields(["Cache-Control": "max-age=60"])) == .status)
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 200, response: HTTPFields(["Cache-Control": "no-store"])) == .responseNoStore)
        #expect(privateCache.whyNotStored(method: "GET", request: HTTPFields(["Cache-Control": "no-store"]), status: 200, response: none) == .requestNoStore)
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 200,
                                          response: HTTPFields(["Cache-Control": "no-store, must-understand"])) == nil,
                "must-understand with a status understood overrides no-store")
        // Private and Authorization are a shared cache's limits (§3.5).
        let privateResponse = HTTPFields(["Cache-Control": "private, max-age=60"])
        #expect(privateCache.whyNotStored(method: "GET", request: none, status: 200, response: privateResponse) == nil)
        #expect(sharedCache.whyNotStored(method: "GET", request: none, status: 200, response: privateResponse) == .privateResponse)
        let authorized = HTTPFields(["Authorization": "Bearer x"])
        #expect(sharedCache.whyNotStored(method: "GET", request: authorized, status: 200, response: HTTPFields(["Cache-Control": "max-age=60"])) == .authorization)
        #expect(sharedCache.whyNotStored(method: "GET", request: authorized, status: 200, response: HTTPFields(["Cache-Control": "s-maxage=60"])) == nil)
        #expect(sharedCache.whyNotStored(method: "GET", request: authorized, status: 200, response: HTTPFields(["Cache-Control": "public"])) == nil)
    }

    @Test func connectionFieldsAreNotStored() {
        let stored = Self.response(["Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "5", "ETag": "\"a\""])
        #expect(stored.fields.lines.map(\.name) == ["ETag"])
    }

    // MARK: Freshness and age (§4.2)

    @Test func lifetimeComesFromSMaxAgeThenMaxAgeThenExpiresThenHeuristic() {
        let privateCache = HTTPCachePolicy(), sharedCache = HTTPCachePolicy(shared: true)
        let both = Self.response(["Cache-Control": "max-age=60, s-maxage=600"])
        #expect(privateCache.freshnessLifetime(both) == (60_000, .maxAge))
        #expect(sharedCache.freshnessLifetime(both) == (600_000, .sMaxAge))
        let expires = Self.response(["Date": HTTPDate.format(Self.t0), "Expires": HTTPDate.format(Self.t0 + 3600 * Self.second)])
        #expect(privateCache.freshnessLifetime(expires) == (3_600_000, .expires))
        let invalidExpires = Self.response(["Expires": "0"])
        #expect(privateCache.freshnessLifetime(invalidExpires) == (0, .invalid("Expires")))
        let twoExpires = Self.response(["Expires": HTTPDate.format(Self.t0 + 10_000), "expires": HTTPDate.format(Self.t0 + 10_000)])
        #expect(privateCache.freshnessLifetime(twoExpires).source == .invalid("Expires"))
        let invalidMaxAge = Self.response(["Cache-Control": "max-age=1.5", "Expires": HTTPDate.format(Self.t0 + 10_000)])
        #expect(privateCache.freshnessLifetime(invalidMaxAge) == (0, .invalid("max-age")), "max-age wins over Expires, even invalid")
        // 10% of the 10 days since Last-Modified: a day.
        let heuristic = Self.response(["Date": HTTPDate.format(Self.t0), "Last-Modified": HTTPDate.format(Self.t0 - 10 * 86_400_000)])
        #expect(privateCache.freshnessLifetime(heuristic) == (86_400_000, .heuristic))
        #expect(HTTPCachePolicy(heuristicPercent: 0).freshnessLifetime(heuristic) == (0, .heuristic))
        let notHeuristic = Self.response(["Last-Modified": HTTPDate.format(Self.t0 - 10 * 86_400_000)], status: 302)
        #expect(privateCache.freshnessLifetime(notHeuristic) == (0, .none))
    }

    @Test func currentAgeFollowsSection4_2_3() {
        let policy = HTTPCachePolicy()
        // Sent at t0, answered 2 s later with Age: 10 and a Date 5 s before it arrived.
        let stored = Self.response(["Age": "10", "Date": HTTPDate.format(Self.t0 - 3 * Self.second)],
                                   at: Self.t0 + 2 * Self.second, sentAt: Self.t0)
        // corrected age = max(apparent 5 s, 10 s + 2 s delay) = 12 s; 30 s resident: 42 s.
        #expect(policy.currentAge(stored, now: Self.t0 + 32 * Self.second) == 42_000)
        #expect(policy.servedFields(stored, now: Self.t0 + 32 * Self.second + 999)["Age"] == "42")
        // An Age list uses its first member; an invalid one is ignored.
        #expect(policy.currentAge(Self.response(["Age": "7, 9"]), now: Self.t0) == 7000)
        #expect(policy.currentAge(Self.response(["Age": "-7"]), now: Self.t0) == 0)
    }

    // MARK: Serving (§4.2.4, §5.2.1, RFC 5861)

    @Test func freshIsServedStaleIsValidated() {
        let policy = HTTPCachePolicy()
        let stored = Self.response(["Cache-Control": "max-age=60"])
        #expect(policy.decide(request: HTTPFields(), stored: stored, now: Self.t0 + 59_999) == .serve(age: 59_999, stale: false))
        #expect(policy.decide(request: HTTPFields(), stored: stored, now: Self.t0 + 60_000) == .validate(reason: .stale))
        #expect(policy.decide(request: HTTPFields(), stored: nil, now: Self.t0) == .miss)
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "only-if-cached"]), stored: nil, now: Self.t0) == .gatewayTimeout)
    }

    @Test func requestDirectivesNarrowWhatIsServed() {
        let policy = HTTPCachePolicy()
        let stored = Self.response(["Cache-Control": "max-age=60"])
        let at30 = Self.t0 + 30 * Self.second
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "no-cache"]), stored: stored, now: at30) == .validate(reason: .requestNoCache))
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "max-age=10"]), stored: stored, now: at30) == .validate(reason: .requestMaxAge))
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "max-age=40"]), stored: stored, now: at30) == .serve(age: 30_000, stale: false))
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "min-fresh=40"]), stored: stored, now: at30) == .validate(reason: .requestMinFresh))
        let at90 = Self.t0 + 90 * Self.second
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "max-stale=30"]), stored: stored, now: at90) == .serve(age: 90_000, stale: true))
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "max-stale=29"]), stored: stored, now: at90) == .validate(reason: .stale))
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "max-stale"]), stored: stored, now: at90) == .serve(age: 90_000, stale: true))
        #expect(policy.decide(request: HTTPFields(["Cache-Control": "only-if-cached"]), stored: stored, now: at90) == .gatewayTimeout)
    }

    @Test func mustRevalidateAndNoCacheForbidStale() {
        let privateCache = HTTPCachePolicy(), sharedCache = HTTPCachePolicy(shared: true)
        let at90 = Self.t0 + 90 * Self.second
        let maxStale = HTTPFields(["Cache-Control": "max-stale"])
        let mustRevalidate = Self.response(["Cache-Control": "max-age=60, must-revalidate"])
        #expect(privateCache.decide(request: maxStale, stored: mustRevalidate, now: at90) == .validate(reason: .stale))
        let proxyRevalidate = Self.response(["Cache-Control": "max-age=60, proxy-revalidate"])
        #expect(privateCache.decide(request: maxStale, stored: proxyRevalidate, now: at90) == .serve(age: 90_000, stale: true))
        #expect(sharedCache.decide(request: maxStale, stored: proxyRevalidate, now: at90) == .validate(reason: .stale))
        let noCache = Self.response(["Cache-Control": "max-age=60, no-cache"])
        #expect(privateCache.decide(request: HTTPFields(), stored: noCache, now: Self.t0) == .validate(reason: .responseNoCache))
        let qualified = Self.response(["Cache-Control": #"max-age=60, no-cache="Set-Cookie""#])
        #expect(privateCache.decide(request: HTTPFields(), stored: qualified, now: Self.t0) == .serve(age: 0, stale: false))
    }

    @Test func staleWhileRevalidateAndStaleIfError() {
        let policy = HTTPCachePolicy()
        let stored = Self.response(["Cache-Control": "max-age=60, stale-while-revalidate=30, stale-if-error=300"])
        #expect(policy.decide(request: HTTPFields(), stored: stored, now: Self.t0 + 90_000) == .serveStaleAndRevalidate(age: 90_000))
        #expect(policy.decide(request: HTTPFields(), stored: stored, now: Self.t0 + 90_001) == .validate(reason: .stale))
        #expect(policy.staleIfErrorAllows(stored, request: HTTPFields(), now: Self.t0 + 360_000))
        #expect(!policy.staleIfErrorAllows(stored, request: HTTPFields(), now: Self.t0 + 360_001))
        let mustRevalidate = Self.response(["Cache-Control": "max-age=60, must-revalidate, stale-while-revalidate=30"])
        #expect(policy.decide(request: HTTPFields(), stored: mustRevalidate, now: Self.t0 + 61_000) == .validate(reason: .stale))
    }

    // MARK: Vary (§4.1)

    @Test func varySelectsByTheFieldsItNames() {
        let request = HTTPFields(["Accept-Language": "en,  fr"])
        let stored = Self.response(["Vary": "accept-language, Accept-Encoding", "Cache-Control": "max-age=60"], request: request)
        #expect(HTTPCachePolicy.varyMatches(stored, request: HTTPFields(["accept-language": "en, fr"])))
        #expect(!HTTPCachePolicy.varyMatches(stored, request: HTTPFields(["Accept-Language": "de"])))
        #expect(!HTTPCachePolicy.varyMatches(stored, request: HTTPFields(["Accept-Language": "en, fr", "Accept-Encoding": "gzip"])),
                "a field absent when stored must be absent")
        let star = Self.response(["Vary": "*"])
        #expect(!HTTPCachePolicy.varyMatches(star, request: HTTPFields()))
        #expect(HTTPCachePolicy.varyMatches(Self.response([:]), request: request))
    }

    // MARK: Validation (§4.3)

    @Test func conditionalRequestCarriesEveryStoredTagAndLastModified() {
        let a = Self.response(["ETag": "\"a\"", "Last-Modified": HTTPDate.format(Self.t0 - 1000)])
        let b = Self.response(["ETag": "W/\"b\""])
        let fields = HTTPCachePolicy.conditionalFields(selected: a, all: [a, b])
        #expect(fields["If-None-Match"] == "\"a\", W/\"b\"")
        #expect(fields["If-Modified-Since"] == HTTPDate.format(Self.t0 - 1000))
        #expect(HTTPCachePolicy.conditionalFields(selected: Self.response([:]), all: []).isEmpty)
    }

    @Test func notModifiedUpdatesTheResponsesItsValidatorSelects() {
        let a = Self.response(["ETag": "\"a\"", "Cache-Control": "max-age=60", "Content-Length": "10", "X-Old": "1"])
        let b = Self.response(["ETag": "\"b\""], at: Self.t0 + 5)
        #expect(HTTPCachePolicy.selectedForUpdate(by: HTTPFields(["ETag": "\"a\""]), in: [a, b]) == [0])
        #expect(HTTPCachePolicy.selectedForUpdate(by: HTTPFields(["ETag": "\"c\""]), in: [a, b]) == [])
        #expect(HTTPCachePolicy.selectedForUpdate(by: HTTPFields(), in: [a]) == [], "a validator stored, none in the 304")
        #expect(HTTPCachePolicy.selectedForUpdate(by: HTTPFields(), in: [Self.response([:])]) == [0])
        let later = Self.t0 + 120_000
        let notModified = HTTPFields(["ETag": "\"a\"", "Cache-Control": "max-age=300", "Content-Length": "0", "Connection": "close"])
        let updated = HTTPCachePolicy.updated(a, with: notModified, requestTime: later, responseTime: later)
        #expect(updated.fields["Cache-Control"] == "max-age=300")
        #expect(updated.fields["Content-Length"] == "10", "a 304's Content-Length is not the body's")
        #expect(updated.fields["X-Old"] == "1")
        #expect(updated.fields["Connection"] == nil)
        let policy = HTTPCachePolicy()
        #expect(policy.decide(request: HTTPFields(), stored: a, now: later) == .validate(reason: .stale))
        #expect(policy.decide(request: HTTPFields(), stored: updated, now: later + 1000) == .serve(age: 1000, stale: false))
    }

    // MARK: Invalidation (§4.4)

    @Test func unsafeMethodsInvalidateTheTargetAndSameOriginLocations() {
        let origin = "https://api.example.com"
        let response = HTTPFields(["Location": "https://api.example.com/posts/2", "Content-Location": "https://other.example/x"])
        #expect(HTTPCachePolicy.invalidated(method: "POST", target: "/posts", status: 201, response: response, origin: origin)
                == ["/posts", "/posts/2"])
        #expect(HTTPCachePolicy.invalidated(method: "DELETE", target: "/posts/1", status: 204,
                                            response: HTTPFields(["Content-Location": "/posts"]), origin: origin) == ["/posts/1", "/posts"])
        #expect(HTTPCachePolicy.invalidated(method: "POST", target: "/posts", status: 500, response: response, origin: origin) == [])
        #expect(HTTPCachePolicy.invalidated(method: "GET", target: "/posts", status: 200, response: response, origin: origin) == [])
        #expect(HTTPCachePolicy.invalidated(method: "PUT", target: "/a", status: 200,
                                            response: HTTPFields(["Location": "//evil.example/a"]), origin: origin) == ["/a"])
    }
}

/// The key of an HTTP response: its target, normalized as RFC 3986 §6.2.2 makes URIs equivalent.
@Suite struct HTTPTargetTests {
    @Test func equivalentTargetsAreOneKey() throws {
        #expect(try HTTPTarget.normalized("/a/./b/../c") == "/a/c")
        #expect(try HTTPTarget.normalized("/%61/%7e%2fx") == "/a/~%2Fx", "unreserved decoded, others upper-cased")
        #expect(try HTTPTarget.normalized("/feed?page=2#top") == "/feed?page=2")
        #expect(try HTTPTarget.normalized("/feed?b=2&a=1") == "/feed?b=2&a=1", "a query keeps its order")
        #expect(try HTTPTarget.normalized("/q?x=/a/../b?c") == "/q?x=/a/../b?c", "dot segments are a path's only")
        #expect(try HTTPTarget.normalized("/a b/é") == "/a%20b/%C3%A9")
        #expect(try HTTPTarget.normalized("/100%") == "/100%25")
        #expect(try HTTPTarget.normalized("/..") == "/")
        #expect(try HTTPTarget.normalized("/a/b/.") == "/a/b/")
        #expect(try HTTPTarget.normalized("/") == "/")
    }

    @Test func aTargetIsAPath() {
        for bad in ["", "feed", "https://api.example.com/feed", "//host/feed", "?a=1"] {
            #expect(throws: HTTPTarget.Invalid.self, "\(bad)") { try HTTPTarget.normalized(bad) }
        }
    }

    /// §4.3.2 with RFC 9110 §13.2.2: a cache answers an app's conditional request itself.
    @Test func aConditionalRequestOfA200IsAnswered304WhenNotModified() {
        let modified = HTTPDate.format(HTTPCachePolicyTests.t0 - 3600 * HTTPCachePolicyTests.second)
        let ok = HTTPReadResult(key: "api:/a", status: 200,
                                fields: HTTPFields(["ETag": "W/\"v1\"", "Last-Modified": modified, "Content-Length": "2", "Date": HTTPDate.format(HTTPCachePolicyTests.t0)]),
                                body: .json(.string("ok")))
        func status(_ request: KeyValuePairs<String, String>, _ response: HTTPReadResult = ok) -> Int? {
            HTTPCachePolicy.answeringConditional(response, request: HTTPFields(request)).status
        }
        #expect(status(["If-None-Match": "\"v1\""]) == 304)          // weak comparison
        #expect(status(["If-None-Match": "W/\"v0\", W/\"v1\""]) == 304)
        #expect(status(["If-None-Match": "v1"]) == 304)                 // an unquoted tag, as sent by some
        #expect(status(["If-None-Match": "*"]) == 304)
        #expect(status(["If-None-Match": "\"v2\""]) == 200)
        // If-None-Match decides when present: If-Modified-Since is then not looked at.
        #expect(status(["If-None-Match": "\"v2\"", "If-Modified-Since": HTTPDate.format(HTTPCachePolicyTests.t0)]) == 200)
        #expect(status(["If-Modified-Since": modified]) == 304)
        #expect(status(["If-Modified-Since": HTTPDate.format(HTTPCachePolicyTests.t0 - 7200 * HTTPCachePolicyTests.second)]) == 200)
        #expect(status(["If-Modified-Since": "yesterday"]) == 200)
        // No Last-Modified: the Date counts.
        let noLM = HTTPReadResult(key: "api:/a", status: 200, fields: HTTPFields(["Date": HTTPDate.format(HTTPCachePolicyTests.t0)]), body: .json(.string("ok")))
        #expect(status(["If-Modified-Since": HTTPDate.format(HTTPCachePolicyTests.t0)], noLM) == 304)
        // Only a 200 is answered so.
        let notFound = HTTPReadResult(key: "api:/a", status: 404, fields: HTTPFields(["ETag": "\"v1\""]))
        #expect(status(["If-None-Match": "\"v1\""], notFound) == 404)
        let answered = HTTPCachePolicy.answeringConditional(ok, request: HTTPFields(["If-None-Match": "\"v1\""]))
        #expect(answered.body == nil && answered.fields["Content-Length"] == nil && answered.fields["ETag"] == "W/\"v1\"")
    }

    /// §5.2.2.3: `must-understand` stores only a status the cache knows the semantics of; 599
    /// is none of RFC 9110's, so with `no-store` it is not stored.
    @Test func mustUnderstandStoresOnlyStatusesWithKnownSemantics() {
        let policy = HTTPCachePolicy(shared: true)
        let fields = HTTPFields(["Cache-Control": "max-age=3600, no-store, must-understand"])
        #expect(policy.whyNotStored(method: "GET", request: HTTPFields(), status: 599, response: fields) == .status)
        #expect(policy.whyNotStored(method: "GET", request: HTTPFields(), status: 200, response: fields) == nil)
        #expect(HTTPCachePolicy.understands(404) && HTTPCachePolicy.understands(308) && !HTTPCachePolicy.understands(299))
    }
}
