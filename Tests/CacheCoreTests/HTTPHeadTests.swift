@_spi(Engine) @testable import CacheCore
import CacheServer
import Testing

/// A HEAD answered from a stored GET response (RFC 9110 §9.3.2, RFC 9111 §4; docs/SPEC.md §8).
@Suite struct HTTPHeadTests {
    /// A fresh stored GET answers the HEAD: a hit without a body, nothing sent; once stale, the
    /// HEAD is sent (and its 200 updates the stored response, §4.3.5).
    @Test func aFreshStoredGETAnswersAHead() throws {
        let (cache, server) = try HTTPNamespaceTests.make()
        server.set("api:/feed", .string("v1"), at: cache.now, headers: HTTPFields(["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        _ = try cache.httpGet("api:/feed")
        try cache.advance(by: 10_000)
        let head = try cache.httpRequest("HEAD", "api:/feed")
        #expect(head.status == 200)
        #expect(head.body == nil)
        #expect(head.fields["ETag"] == "\"v1\"")
        #expect(head.fields["Age"] == "10")
        #expect(head.cacheStatus.text == "cachesh; hit; ttl=49; detail=\"HEAD from the stored GET\"")
        #expect(cache.requestLog.count == 1)
        #expect(cache.stats().hits == 1)
        try cache.advance(by: 60_000)
        let sent = try cache.httpRequest("HEAD", "api:/feed")
        #expect(sent.cacheStatus.text == "cachesh; fwd=method; fwd-status=200; stored; detail=\"HEAD updated 1\"")
        #expect(cache.requestLog.count == 2)
    }

    /// The request's own directives and Vary decide as for a GET: `no-cache` sends the HEAD, a
    /// request no stored response matches sends it, `max-stale` lets a stale one answer.
    @Test func theRequestDecidesAsAGETWould() throws {
        let (cache, server) = try HTTPNamespaceTests.make()
        server.set("api:/feed", .string("v1"), at: cache.now,
                   headers: HTTPFields(["Cache-Control": "max-age=60", "Vary": "Accept-Language"]))
        _ = try cache.httpGet("api:/feed", request: HTTPFields(["Accept-Language": "en"]))
        let other = try cache.httpRequest("HEAD", "api:/feed", request: HTTPFields(["Accept-Language": "fr"]))
        #expect(other.cacheStatus.fwd == "method")
        let noCache = try cache.httpRequest("HEAD", "api:/feed", request: HTTPFields(["Accept-Language": "en", "Cache-Control": "no-cache"]))
        #expect(noCache.cacheStatus.fwd == "method")
        try cache.advance(by: 70_000)
        let stale = try cache.httpRequest("HEAD", "api:/feed", request: HTTPFields(["Accept-Language": "en", "Cache-Control": "max-stale=60"]))
        #expect(stale.cacheStatus.hit)
        #expect(stale.cacheStatus.detail == "HEAD from the stored GET, max-stale")
        #expect(cache.requestLog.count == 3)
    }
}
