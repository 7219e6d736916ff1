@_spi(Engine) @testable import CacheCore
import CacheServer
import Testing

/// The naive switches of HTTP namespaces (SPEC §1.2): each, on, shows what a real client does
/// with the headers; off (the default), RFC 9111 and RFC 5861 hold.
@Suite struct HTTPNaiveTests {
    /// An HTTP namespace `api` with `naive` on, over a simulated server.
    static func make(_ naive: Set<NaivePolicy>) throws -> (CacheEngine, SimulatedServer) {
        let (cache, server) = try HTTPNamespaceTests.make()
        var change = PolicyChange()
        change.naive = naive
        _ = try cache.defineNamespace("api", change)
        return (cache, server)
    }

    static func fields(_ pairs: KeyValuePairs<String, String>) -> HTTPFields { HTTPFields(pairs) }

    /// square/okhttp#1083: OkHttp has no stale-while-revalidate: the stale read waits for the
    /// validation instead of being served at once.
    @Test(arguments: [true, false])
    func ignoreStaleExtensionsWaitsInsteadOfServingStale(naive: Bool) throws {
        let (cache, server) = try Self.make(naive ? [.ignoreStaleExtensions] : [])
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"1\""]))
        _ = try cache.httpGet("api:/feed")
        try cache.advance(by: 20_000)
        let read = try cache.httpGet("api:/feed")
        #expect(read.cacheStatus.hit == !naive)
        #expect(read.cacheStatus.text.contains(naive ? "fwd=stale; fwd-status=304" : "detail=\"stale-while-revalidate\""), "\(read.cacheStatus.text)")
        #expect(cache.stats().staleHits == (naive ? 0 : 1))
    }

    /// square/okhttp#1083: nor stale-if-error: a failed validation is a 504, not the stale response.
    @Test(arguments: [true, false])
    func ignoreStaleExtensionsServesNothingStaleOnAnError(naive: Bool) throws {
        let (cache, server) = try Self.make(naive ? [.ignoreStaleExtensions] : [])
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10, stale-if-error=600"]))
        _ = try cache.httpGet("api:/feed")
        try cache.advance(by: 20_000)
        server.fail(next: 1)
        let read = try cache.httpGet("api:/feed")
        #expect(read.status == (naive ? 504 : 200))
        #expect(read.body == (naive ? nil : .json(.string("v1"))))
    }

    /// mizosoft/methanol#60: one response per URL: the second variant replaces the first, whose
    /// next read is a miss again.
    @Test(arguments: [true, false])
    func oneVariantPerURLKeepsTheLastOnly(naive: Bool) throws {
        let (cache, server) = try Self.make(naive ? [.oneVariantPerURL] : [])
        server.set("api:/page", .string("hello"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=600", "Vary": "Accept-Language"]))
        let en = Self.fields(["Accept-Language": "en"]), fr = Self.fields(["Accept-Language": "fr"])
        _ = try cache.httpGet("api:/page", request: en)
        _ = try cache.httpGet("api:/page", request: fr)
        let again = try cache.httpGet("api:/page", request: en)
        #expect(again.cacheStatus.hit == !naive)
        #expect(again.cacheStatus.fwd == (naive ? "vary-miss" : nil))
        #expect(cache.requestLog.count == (naive ? 3 : 2))
        #expect(cache.httpExplain("api:/page")?.count == (naive ? 1 : 2))
    }

    /// forwardemail/superagent#1096: the 304 is an error: the read gets no body, a failure is
    /// counted, and the stored response stays stale (the next read validates again).
    @Test(arguments: [true, false])
    func notModifiedAsFailureFailsTheRead(naive: Bool) throws {
        let (cache, server) = try Self.make(naive ? [.notModifiedAsFailure] : [])
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"1\""]))
        _ = try cache.httpGet("api:/feed")
        try cache.advance(by: 20_000)
        let read = try cache.httpGet("api:/feed")
        #expect(read.status == (naive ? 304 : 200))
        #expect(read.body == (naive ? nil : .json(.string("v1"))))
        #expect(cache.stats().fetchFailures == (naive ? 1 : 0))
        let next = try cache.httpGet("api:/feed")
        #expect(next.cacheStatus.hit == !naive)
    }

    /// addisonj/node-cacher#24: the 304 is stored as an empty 200, which later reads are served.
    @Test(arguments: [true, false])
    func notModifiedAsEmptyStoresAnEmptyBody(naive: Bool) throws {
        let (cache, server) = try Self.make(naive ? [.notModifiedAsEmpty] : [])
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"1\""]))
        _ = try cache.httpGet("api:/feed")
        try cache.advance(by: 20_000)
        let read = try cache.httpGet("api:/feed")
        #expect(read.status == 200)
        #expect(read.body == (naive ? .json(.string("")) : .json(.string("v1"))))
        let next = try cache.httpGet("api:/feed")
        #expect(next.cacheStatus.hit)
        #expect(next.body == (naive ? .json(.string("")) : .json(.string("v1"))))
        #expect(cache.peek("api:/feed").value == (naive ? .string("") : .string("v1")))
    }

    /// aliostad/CacheCow#257: Age is ignored: a response 50 s old upstream with max-age=60 stays
    /// fresh for 60 s here, not 10.
    @Test(arguments: [true, false])
    func ignoreAgeCountsFromArrival(naive: Bool) throws {
        let (cache, server) = try Self.make(naive ? [.ignoreAge] : [])
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60", "Age": "50"]))
        let first = try cache.httpGet("api:/feed")
        #expect(first.cacheStatus.ttl == (naive ? 59 : 9))
        try cache.advance(by: 30_000)
        let read = try cache.httpGet("api:/feed")
        #expect(read.cacheStatus.hit == naive)
        #expect(cache.requestLog.count == (naive ? 1 : 2))
    }
}
