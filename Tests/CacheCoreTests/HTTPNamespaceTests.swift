@_spi(Engine) @testable import CacheCore
import CacheServer
import Synchronization
import Testing
import TestSupport

/// HTTP namespaces on the engine and the `Cache` actor (docs/SPEC.md, HTTP namespaces): each
/// test is one of RFC 9111's decisions, on the virtual clock, against the simulated server.
@Suite struct HTTPNamespaceTests {
    /// A cache over a simulated server with namespace `api` an HTTP one (private unless `shared`).
    static func make(shared: Bool = false, heuristic: Int64 = 10) throws -> (CacheEngine, SimulatedServer) {
        let server = SimulatedServer()
        let cache = CacheEngine(origin: server)
        cache.checksInvariants = true
        var http = HTTPNamespace(origin: "https://api.example.com")
        http.policy.shared = shared
        http.policy.heuristicPercent = heuristic
        _ = try cache.defineNamespace("api", PolicyChange(http: http))
        return (cache, server)
    }

    static func fields(_ pairs: KeyValuePairs<String, String>) -> HTTPFields { HTTPFields(pairs) }

    /// §3, §4.2: a response with max-age is stored on a miss, then served fresh with its Age.
    @Test func aMissStoresAndAFreshReadIsAHitWithAge() throws {
        let (cache, server) = try Self.make()
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        let first = try cache.httpGet("api:/feed")
        #expect(first.status == 200)
        #expect(first.cacheStatus.text == "cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=59")
        try cache.advance(by: 30_000)
        let second = try cache.httpGet("api:/feed")
        #expect(second.cacheStatus.text == "cachesh; hit; ttl=29")
        #expect(second.fields["Age"] == "30")
        #expect(second.body == .json(.string("v1")))
        #expect(cache.requestLog.count == 1)
    }

    /// §4.3, §4.3.4: a stale response is validated; the server's 304 freshens the stored headers
    /// (a new Date) and the read gets the stored body with status 200, never a failure.
    @Test func aStaleResponseIsValidatedAndA304FreshensIt() throws {
        let (cache, server) = try Self.make()
        server.set("api:/feed", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"v1\""]))
        _ = try cache.httpGet("api:/feed")
        try cache.advance(by: 20_000)
        let read = try cache.httpGet("api:/feed")
        #expect(read.status == 200)
        #expect(read.body == .json(.string("v1")))
        #expect(read.cacheStatus.text == "cachesh; fwd=stale; fwd-status=304; stored; ttl=9")
        #expect(read.fields["Date"] == HTTPDate.format(cache.now - 100))
        #expect(cache.stats().fetchFailures == 0)
    }

    /// §4.3.3: a 200 to the conditional request (the representation changed) replaces the entry.
    @Test func a200ToAConditionalRequestReplacesTheEntry() throws {
        let (cache, server) = try Self.make()
        server.set("api:/img", .string("cat"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"1\""]))
        _ = try cache.httpGet("api:/img")
        server.set("api:/img", .string("dog"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"2\""]))
        try cache.advance(by: 11_000)
        let read = try cache.httpGet("api:/img")
        #expect(read.body == .json(.string("dog")))
        #expect(read.fields["ETag"] == "\"2\"")
        #expect(read.cacheStatus.text == "cachesh; fwd=stale; fwd-status=200; stored; ttl=9")
        #expect(cache.peek("api:/img").value == .string("dog"))
    }

    /// RFC 5861 §3: within stale-while-revalidate the stale response is served at once and
    /// revalidated in the background; the next read has the freshened one.
    @Test func staleWhileRevalidateServesStaleAndRevalidatesInTheBackground() throws {
        let (cache, server) = try Self.make()
        server.set("api:/a", .string("A"), at: cache.now,
                   headers: Self.fields(["Cache-Control": "max-age=10, stale-while-revalidate=30", "ETag": "\"a\""]))
        _ = try cache.httpGet("api:/a")
        try cache.advance(by: 15_000)
        let stale = try cache.httpGet("api:/a")
        #expect(stale.cacheStatus.text == "cachesh; hit; ttl=-5; detail=\"stale-while-revalidate\"")
        #expect(stale.fields["Age"] == "15")
        try cache.advance(by: 1000)
        let fresh = try cache.httpGet("api:/a")
        #expect(fresh.cacheStatus.hit)
        #expect(fresh.fields["Age"] == "1")
        #expect(cache.stats().refreshes == 1)
    }

    /// RFC 5861 §4: stale-if-error serves the stale response when validating fails; without it,
    /// and with must-revalidate (§4.2.4), the app gets a 504.
    @Test func staleIfErrorServesStaleAndMustRevalidateGives504() throws {
        let (cache, server) = try Self.make()
        server.set("api:/e", .string("E"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=1, stale-if-error=60"]))
        server.set("api:/m", .string("M"), at: cache.now,
                   headers: Self.fields(["Cache-Control": "max-age=1, stale-if-error=60, must-revalidate"]))
        _ = try cache.httpGet("api:/e")
        _ = try cache.httpGet("api:/m")
        try cache.advance(by: 5000)
        server.fail(next: 2)
        let e = try cache.httpGet("api:/e")
        #expect(e.status == 200)
        #expect(e.cacheStatus.detail == "stale-if-error")
        let m = try cache.httpGet("api:/m")
        #expect(m.status == 504)
        #expect(m.body == nil)
        #expect(m.cacheStatus.text == "cachesh; fwd=stale; detail=\"server error\"")
    }

    /// RFC 5861 §4: a 5xx answer counts as an error too.
    @Test func staleIfErrorCoversA500Answer() throws {
        let (cache, server) = try Self.make()
        server.set("api:/e", .string("E"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=1, stale-if-error=60"]))
        _ = try cache.httpGet("api:/e")
        try cache.advance(by: 5000)
        server.queue(ScriptedAnswer(latency: nil, outcome: .value(.string("oops")), status: 503), for: "api:/e")
        let read = try cache.httpGet("api:/e")
        #expect(read.body == .json(.string("E")))
        #expect(read.cacheStatus.text == "cachesh; fwd=stale; fwd-status=503; ttl=-4; detail=\"stale-if-error\"")
    }

    /// §4.1: one stored response per secondary key; another value of the Vary field is a
    /// vary-miss, the first value a hit again.
    @Test func varyKeepsOneResponsePerSecondaryKey() throws {
        let (cache, server) = try Self.make()
        server.set("api:/v", .string("hello"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60", "Vary": "Accept-Language"]))
        let en = Self.fields(["Accept-Language": "en"])
        let de = Self.fields(["Accept-Language": "de"])
        #expect(try cache.httpGet("api:/v", request: en).cacheStatus.fwd == "uri-miss")
        server.set("api:/v", .string("hallo"), at: cache.now)
        #expect(try cache.httpGet("api:/v", request: de).cacheStatus.fwd == "vary-miss")
        let again = try cache.httpGet("api:/v", request: en)
        #expect(again.cacheStatus.hit)
        #expect(again.body == .json(.string("hello")))
        #expect(try cache.httpGet("api:/v", request: de).body == .json(.string("hallo")))
    }

    /// §5.2.1: request directives: no-cache validates, max-age=0 validates, max-stale serves
    /// stale, min-fresh validates, only-if-cached with nothing stored is a 504, no-store is not stored.
    @Test func requestDirectives() throws {
        let (cache, server) = try Self.make()
        server.set("api:/r", .string("R"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"r\""]))
        _ = try cache.httpGet("api:/r")
        let noCache = try cache.httpGet("api:/r", request: Self.fields(["Cache-Control": "no-cache"]))
        #expect(noCache.cacheStatus.text == "cachesh; fwd=request; fwd-status=304; stored; ttl=9; detail=\"the request says no-cache\"")
        try cache.advance(by: 5000)
        #expect(try cache.httpGet("api:/r", request: Self.fields(["Cache-Control": "max-age=2"])).cacheStatus.fwd == "request")
        #expect(try cache.httpGet("api:/r", request: Self.fields(["Cache-Control": "min-fresh=20"])).cacheStatus.fwd == "request")
        try cache.advance(by: 15_000)
        let maxStale = try cache.httpGet("api:/r", request: Self.fields(["Cache-Control": "max-stale=60"]))
        #expect(maxStale.cacheStatus.hit)
        #expect(maxStale.cacheStatus.detail == "max-stale")
        let onlyIfCached = try cache.httpGet("api:/none", request: Self.fields(["Cache-Control": "only-if-cached"]))
        #expect(onlyIfCached.status == 504)
        server.set("api:/s", .string("S"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60"]))
        let noStore = try cache.httpGet("api:/s", request: Self.fields(["Cache-Control": "no-store"]))
        #expect(noStore.cacheStatus.detail == "not stored: the request says no-store")
        #expect(cache.peek("api:/s").value == nil)
    }

    /// §4.2.4, §5.2.2.4: a response with no-cache is validated at every read.
    @Test func aNoCacheResponseIsValidatedEveryTime() throws {
        let (cache, server) = try Self.make()
        server.set("api:/n", .string("N"), at: cache.now, headers: Self.fields(["Cache-Control": "no-cache", "ETag": "\"n\""]))
        _ = try cache.httpGet("api:/n")
        let second = try cache.httpGet("api:/n")
        #expect(second.cacheStatus.text.hasPrefix("cachesh; fwd=stale; fwd-status=304; stored"))
        #expect(cache.requestLog.count == 2)
    }

    /// §3.5: a shared cache does not store a private response and uses s-maxage; a private one
    /// stores it and ignores s-maxage.
    @Test func sharedAndPrivateCaches() throws {
        let (shared, sharedServer) = try Self.make(shared: true)
        sharedServer.set("api:/p", .string("P"), at: shared.now, headers: Self.fields(["Cache-Control": "private, max-age=60"]))
        #expect(try shared.httpGet("api:/p").cacheStatus.detail == "not stored: the response is private and the cache shared")
        sharedServer.set("api:/s", .string("S"), at: shared.now, headers: Self.fields(["Cache-Control": "max-age=10, s-maxage=100"]))
        #expect(try shared.httpGet("api:/s").cacheStatus.ttl == 99)
        let (own, ownServer) = try Self.make()
        ownServer.set("api:/p", .string("P"), at: own.now, headers: Self.fields(["Cache-Control": "private, max-age=60"]))
        #expect(try own.httpGet("api:/p").cacheStatus.stored)
        ownServer.set("api:/s", .string("S"), at: own.now, headers: Self.fields(["Cache-Control": "max-age=10, s-maxage=100"]))
        #expect(try own.httpGet("api:/s").cacheStatus.ttl == 9)
    }

    /// §4.2.2: heuristic freshness is 10% of the time since Last-Modified, or heuristic=P.
    @Test func heuristicFreshness() throws {
        for (percent, ttl) in [(Int64(10), Int64(999)), (50, 4999)] {
            let (cache, server) = try Self.make(heuristic: percent)
            let lastModified = HTTPDate.format(cache.now - 10_000_000)
            server.set("api:/h", .string("H"), at: cache.now, headers: Self.fields(["Last-Modified": lastModified]))
            #expect(try cache.httpGet("api:/h").cacheStatus.ttl == ttl)
        }
    }

    /// B4 (RFC 9211 collapsed): a read while the same request is in flight shares it.
    @Test func aReadJoinsTheRequestInFlight() throws {
        let (cache, server) = try Self.make()
        server.set("api:/c", .string("C"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60"]))
        let started = try cache.httpGet("api:/c", nowait: true)
        #expect(started.status == nil)
        let joined = try cache.httpGet("api:/c")
        #expect(joined.cacheStatus.text == "cachesh; fwd=uri-miss; fwd-status=200; stored; collapsed; ttl=59")
        #expect(cache.requestLog.count == 1)
        #expect(cache.stats().joined == 1)
    }

    /// B12: a local write made while the request is in flight wins over its answer.
    @Test func aLocalWriteDuringTheRequestWins() throws {
        let (cache, server) = try Self.make()
        server.set("api:/w", .string("server"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60"]))
        _ = try cache.httpGet("api:/w", nowait: true)
        _ = cache.put("api:/w", .string("local"))
        try cache.advance(by: 1000)
        #expect(cache.peek("api:/w").value == .string("local"))
    }

    /// A key keeps at most 64 responses, one per secondary key (docs/SPEC.md §7.1): the 65th
    /// drops the oldest, whose next read is a vary-miss again.
    @Test func aKeyKeepsAtMost64Variants() throws {
        let (cache, server) = try Self.make()
        server.set("api:/v", .string("v"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=600", "Vary": "X-N"]))
        for n in 0...64 { _ = try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "\(n)")])) }
        #expect(try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "1")])).cacheStatus.hit)
        #expect(try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "64")])).cacheStatus.hit)
        #expect(try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "0")])).cacheStatus.fwd == "vary-miss")
    }

    /// The responses of a key evicted by `max=` go with it, not at its next read: a namespace (a
    /// proxy's) that sees a thousand URLs through `max=2` holds the responses of its two keys,
    /// never a thousand bodies, and what it holds is still served.
    @Test func theResponsesOfEvictedKeysDoNotAccumulate() throws {
        let (cache, server) = try Self.make()
        _ = try cache.defineNamespace("api", PolicyChange(max: .some(2)))
        var most = 0
        for n in 0..<1_000 {
            server.set("api:/p\(n)", .string(String(repeating: "x", count: 1_000)), at: cache.now,
                       headers: Self.fields(["Cache-Control": "max-age=600"]))
            #expect(try cache.httpGet("api:/p\(n)").cacheStatus.stored)
            most = max(most, cache.http.variants.count)
        }
        #expect(most <= 2)
        #expect(cache.keys().count == 2)
        #expect(try cache.httpGet("api:/p999").cacheStatus.hit)
        #expect(try cache.httpGet("api:/p998").cacheStatus.hit)
        #expect(try cache.httpGet("api:/p0").cacheStatus.fwd == "uri-miss")
    }

    /// An HTTP namespace keeps at most 256 MiB of responses (docs/SPEC.md §7.1): binary bodies of
    /// 60 MiB (their size counts, not held here; each twice, as the entry's value holds the last)
    /// evict the least recently used key once a third would pass it, as `max=` evicts: counted,
    /// the key read again a miss.
    @Test func aNamespaceKeepsAtMost256MiBOfResponses() throws {
        let (cache, server) = try Self.make()
        let digest = String(repeating: "a", count: 64)
        for path in ["/a", "/b", "/c"] {
            server.set("api:" + path, body: .binary(size: 60 << 20, sha256: digest), at: cache.now,
                       headers: Self.fields(["Cache-Control": "max-age=600"]))
        }
        _ = try cache.httpGet("api:/a")
        _ = try cache.httpGet("api:/b")
        _ = try cache.httpGet("api:/a")
        #expect(cache.stats().evictions == 0)
        #expect(try cache.httpGet("api:/c").cacheStatus.stored)
        #expect(cache.stats().evictions == 1)
        #expect(Set(cache.keys().map(\.key)) == ["api:/a", "api:/c"])
        #expect(cache.http.bytes[cache.httpNamespaceSlot("api:/a")]! <= HTTPStore.maxBytes)
        #expect(try cache.httpGet("api:/b").cacheStatus.fwd == "uri-miss")
        #expect(try cache.httpGet("api:/c").cacheStatus.hit)
    }

    /// The budget, lowered: many keys keep the namespace within it, the most recent served; one
    /// key whose variants alone pass it keeps its newest ones; a restore keeps all it holds.
    @Test func theBudgetEvictsByRecencyAndTrimsAKeysOwnVariantsLast() throws {
        let (cache, server) = try Self.make()
        cache.http.budget = 20_000
        let body = JSONValue.string(String(repeating: "x", count: 1_000))
        for n in 0..<100 {
            server.set("api:/p\(n)", body, at: cache.now, headers: Self.fields(["Cache-Control": "max-age=600"]))
            #expect(try cache.httpGet("api:/p\(n)").cacheStatus.stored)
            #expect(cache.http.bytes[cache.httpNamespaceSlot("api:/p0"), default: 0] <= 20_000)
        }
        let kept = cache.keys().count
        // Each key takes about 2.1 KB: its 1,002-byte body twice (the entry's value holds it too),
        // its fields and 64.
        #expect(kept >= 8 && kept < 10)
        #expect(cache.stats().evictions == 100 - kept)
        #expect(try cache.httpGet("api:/p99").cacheStatus.hit)
        #expect(try cache.httpGet("api:/p0").cacheStatus.fwd == "uri-miss")

        server.set("api:/v", body, at: cache.now, headers: Self.fields(["Cache-Control": "max-age=600", "Vary": "X-N"]))
        for n in 0..<30 { _ = try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "\(n)")])) }
        #expect(cache.keys().map(\.key) == ["api:/v"])
        #expect(cache.http.bytes[cache.httpNamespaceSlot("api:/v"), default: 0] <= 20_000)
        #expect(try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "29")])).cacheStatus.hit)
        #expect(try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "0")])).cacheStatus.fwd == "vary-miss")

        cache.http.budget = HTTPStore.maxBytes
        for n in 0..<30 { _ = try cache.httpGet("api:/v", request: HTTPFields([.init("X-N", "\(n)")])) }
        #expect(cache.http.bytes[cache.httpNamespaceSlot("api:/v"), default: 0] > 20_000)
        let text = cache.snapshotText(pretty: false)
        let (other, _) = try Self.make()
        other.http.budget = 20_000
        try other.restore(try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth))
        #expect(other.http.budget == 20_000)
        #expect(other.http.bytes == cache.http.bytes)
        #expect(other.snapshotText(pretty: false) == text)
    }

    /// §4.4: a non-error answer to an unsafe method invalidates the target and the same-origin
    /// Location and Content-Location, not another origin's, and not after an error status.
    @Test func unsafeMethodsInvalidateTheTargetAndSameOriginLocations() throws {
        let (cache, server) = try Self.make()
        for path in ["/feed", "/feed/7", "/x", "/kept"] {
            server.set("api:" + path, .string(path), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=600"]))
            _ = try cache.httpGet("api:" + path)
        }
        server.queue(ScriptedAnswer(latency: nil, outcome: .value(.null), status: 500), for: "api:/kept")
        let failed = try cache.httpRequest("DELETE", "api:/kept")
        #expect(failed.status == 500 && failed.cacheStatus.detail == nil)
        server.queue(ScriptedAnswer(latency: nil, outcome: .value(.null), status: 201,
                                    headers: Self.fields(["Location": "https://api.example.com/feed/7", "Content-Location": "https://evil.example/x"])),
                     for: "api:/feed")
        let posted = try cache.httpRequest("POST", "api:/feed", body: .string("hi"))
        #expect(posted.status == 201)
        #expect(posted.cacheStatus.text == "cachesh; fwd=method; fwd-status=201; detail=\"invalidated api:/feed api:/feed/7\"")
        #expect(cache.peek("api:/feed").value == nil && cache.peek("api:/feed/7").value == nil)
        #expect(cache.peek("api:/x").value == .string("/x") && cache.peek("api:/kept").value == .string("/kept"))
        #expect(cache.stats().invalidations == 2)
        let put = try cache.httpRequest("PUT", "api:/x", body: .string("new"))
        #expect(put.status == 200 && server.data["api:/x"] == .string("new"))
        #expect(try cache.httpGet("api:/x").body == .json(.string("new")))
    }

    /// §4.3.5: a 200 to HEAD freshens the stored response whose validators agree with it, and
    /// drops one whose validators differ.
    @Test func aHeadUpdatesOrInvalidatesTheStoredResponse() throws {
        let (cache, server) = try Self.make()
        server.set("api:/h", .string("1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"1\""]))
        _ = try cache.httpGet("api:/h")
        try cache.advance(by: 20_000)
        let head = try cache.httpRequest("HEAD", "api:/h")
        #expect(head.status == 200 && head.body == nil)
        #expect(head.cacheStatus.text == "cachesh; fwd=method; fwd-status=200; stored; detail=\"HEAD updated 1\"")
        #expect(try cache.httpGet("api:/h").cacheStatus.hit)
        server.set("api:/h", .string("2"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"2\""]))
        // The stored response is fresh (a HEAD would be answered from it): no-cache sends it.
        let changed = try cache.httpRequest("HEAD", "api:/h", request: Self.fields(["Cache-Control": "no-cache"]))
        #expect(changed.cacheStatus.text == "cachesh; fwd=method; fwd-status=200; detail=\"HEAD invalidated 1\"")
        #expect(cache.peek("api:/h").value == nil)
        #expect(cache.requestLog.map(\.kind) == [.fetch, .fetch, .fetch])
        // The server log says what Cache-Status says: the HEAD that freshened it was stored.
        #expect(cache.requestLog.map(\.fate) == [.stored, .stored, .discarded])
    }

    /// `explain`'s arithmetic is §4.2's: lifetime from its field, age from apparent age, Age,
    /// the response delay and the time resident.
    @Test func explainGivesTheFreshnessArithmetic() throws {
        let (cache, server) = try Self.make()
        server.set("api:/e", .string("e"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60", "Age": "5", "ETag": "\"e\""]))
        _ = try cache.httpGet("api:/e")
        try cache.advance(by: 10_000)
        let e = try #require(cache.httpExplain("api:/e")?.first)
        #expect(e.lifetimeMs == 60_000 && e.lifetimeSource == "max-age")
        #expect(e.ageFieldMs == 5000 && e.responseDelayMs == 100 && e.residentMs == 10_000 && e.ageMs == 15_100)
        #expect(e.next == "served from the cache (hit)")
        try cache.advance(by: 50_000)
        #expect(cache.httpExplain("api:/e")?.first?.next == "validated with If-None-Match (stale)")
        #expect(cache.httpExplain("api:/none") == nil)
    }

    /// A configuration that no longer makes a namespace an HTTP one drops its responses, and the
    /// cache has no HTTP namespace again (so snapshots are allowed again).
    @Test func aConfigurationWithoutHTTPEndsTheHTTPNamespace() throws {
        let (cache, server) = try Self.make()
        server.set("api:/a", .string("a"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60"]))
        _ = try cache.httpGet("api:/a")
        #expect(cache.hasHTTPNamespaces)
        try cache.configure(CacheConfiguration(namespaces: ["api": Policy()], push: [:]))
        #expect(!cache.hasHTTPNamespaces)
        #expect(cache.httpSettings(ofKey: "api:/a") == nil)
        #expect(cache.http.variants.isEmpty)
    }

    /// An entry a put evicts takes its stored responses with it, whether or not anything hears
    /// of changes (unheard, the put evicts in its first step, a path of its own).
    @Test(arguments: [false, true])
    func aPutThatEvictsAnHTTPEntryDropsItsResponses(reportsAllChanges: Bool) throws {
        let server = SimulatedServer()
        let cache = CacheEngine(origin: server)
        cache.checksInvariants = true
        cache.reportsAllChanges = reportsAllChanges
        _ = try cache.defineNamespace("api", PolicyChange(max: .some(1), http: HTTPNamespace(origin: "https://api.example.com")))
        server.set("api:/a", .string("a"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=60", "ETag": "\"1\""]))
        _ = try cache.httpGet("api:/a")
        #expect(cache.http.variants.count == 1)
        #expect(cache.put("api:/b", StoredValue(JSONValue.int(1))) == ["api:/b", "api:/a"])
        #expect(cache.http.variants.isEmpty)
    }

    /// A put, or an ordinary fetch (mget), of an HTTP key replaces its stored responses: the next
    /// read is a miss, not the old response.
    @Test func aLocalWriteOrAnOrdinaryFetchReplacesTheStoredResponses() throws {
        let (cache, server) = try Self.make()
        server.set("api:/p", .string("v1"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=600"]))
        _ = try cache.httpGet("api:/p")
        cache.put("api:/p", .string("local"))
        #expect(try cache.httpGet("api:/p").cacheStatus.fwd == "uri-miss")
        #expect(try cache.httpGet("api:/p").cacheStatus.hit)
        _ = try cache.mget(["api:/p"])
        try cache.advance(by: 1000)
        let afterMget = try cache.httpGet("api:/p")
        #expect(afterMget.cacheStatus.hit)
        _ = try cache.get("api:/p", force: true)
        #expect(try cache.httpGet("api:/p").cacheStatus.fwd == "uri-miss")
    }

    /// Targets are normalized as RFC 3986 makes URIs equivalent: one key.
    @Test func equivalentTargetsAreOneKey() throws {
        #expect(try Cache.httpKey("api:/a/./b/../c?q=1") == "api:/a/c?q=1")
        #expect(try Cache.httpKey("api:/%7euser") == "api:/~user")
        #expect(throws: CacheError.self) { try Cache.httpKey("api:feed") }
    }

    /// The simulated server answers conditional requests itself (RFC 9110 §13.2.2).
    @Test func theServerAnswersConditionalRequests() throws {
        let server = SimulatedServer()
        server.set("api:/x", .string("X"), at: 0, headers: Self.fields(["ETag": "W/\"x\"", "Last-Modified": HTTPDate.format(0)]))
        func status(_ fields: HTTPFields) -> Int? {
            guard case .after(_, .success(let answer)) = server.http(HTTPRequest(key: "api:/x", fields: fields), requestID: 1, at: 5000) else { return nil }
            return answer.status
        }
        #expect(status(Self.fields(["If-None-Match": "\"x\""])) == 304)
        #expect(status(Self.fields(["If-None-Match": "\"y\", *"])) == 304)
        #expect(status(Self.fields(["If-None-Match": "\"y\""])) == 200)
        #expect(status(Self.fields(["If-Modified-Since": HTTPDate.format(1000)])) == 304)
        #expect(status(Self.fields(["If-Modified-Since": HTTPDate.format(-1000)])) == 200)
        #expect(status(HTTPFields()) == 200)
    }

    /// A namespace becomes an HTTP one before any of its keys is stored, and never while a
    /// recording runs.
    @Test func aNamespaceWithEntriesRefusesHTTP() async throws {
        let cache = Cache(origin: SimulatedServer())
        _ = await cache.put("api:/x", .string("x"))
        await #expect(throws: CacheError.self) { _ = try await cache.defineNamespace("api", PolicyChange(http: HTTPNamespace())) }
        #expect(await cache.policy(of: "api").http == nil)
        await #expect(throws: CacheError.self) { _ = try await cache.httpRead("api:/x") }
        await #expect(throws: CacheError.self) { _ = try await cache.httpRequest("GET", "api:/x") }
        // While recording, a namespace becomes an HTTP one (the recording notes it).
        await cache.startRecording()
        _ = try await cache.defineNamespace("web", PolicyChange(http: HTTPNamespace()))
        #expect(await cache.hasHTTPNamespaces)
    }

    /// §4.3.4: a 304 that carries no validator answers the cache's own conditional request, so it
    /// updates the response the cache validated (origins often leave ETag out of their 304s).
    @Test func a304WithoutValidatorsUpdatesTheResponseTheCacheValidated() throws {
        let (cache, server) = try Self.make()
        server.set("api:/n", .string("N"), at: cache.now, headers: Self.fields(["Cache-Control": "max-age=10", "ETag": "\"n\""]))
        _ = try cache.httpGet("api:/n")
        try cache.advance(by: 20_000)
        server.queue(ScriptedAnswer(latency: nil, outcome: .value(.null), status: 304, headers: Self.fields(["Cache-Control": "max-age=30"])),
                     for: "api:/n")
        let read = try cache.httpGet("api:/n")
        #expect(read.status == 200)
        #expect(read.body == .json(.string("N")))
        #expect(read.fields["Cache-Control"] == "max-age=30")
        #expect(read.cacheStatus.text == "cachesh; fwd=stale; fwd-status=304; stored; ttl=29")
        let next = try cache.httpGet("api:/n")
        #expect(next.cacheStatus.hit)
    }

    /// §4.3.2: the app's own conditional request of a fresh response gets a 304 from the cache,
    /// nothing sent; one whose precondition fails gets the 200.
    @Test func anAppsOwnConditionalRequestOfAFreshResponseGetsA304() async throws {
        let server = SimulatedServer()
        server.set("api:/c", .string("C"), at: TimeText.virtualEpochMs,
                   headers: Self.fields(["Cache-Control": "max-age=60", "ETag": "W/\"c\"", "Last-Modified": HTTPDate.format(TimeText.virtualEpochMs - 60_000)]))
        let cache = Cache(origin: server)
        _ = try await cache.defineNamespace("api", PolicyChange(http: HTTPNamespace()))
        _ = try await cache.httpRead("api:/c")
        let matched = try await cache.httpRead("api:/c", request: Self.fields(["If-None-Match": "\"c\""]))
        #expect(matched.status == 304 && matched.body == nil && matched.cacheStatus.hit)
        #expect(matched.fields["ETag"] == "W/\"c\"")
        let notMatched = try await cache.httpRead("api:/c", request: Self.fields(["If-None-Match": "\"d\""]))
        #expect(notMatched.status == 200 && notMatched.body == .json(.string("C")))
        let since = try await cache.httpRead("api:/c", request: Self.fields(["If-Modified-Since": HTTPDate.format(TimeText.virtualEpochMs)]))
        #expect(since.status == 304)
        #expect(await cache.requestLog.count == 1)
    }

    /// Live mode (`cachesh proxy`): a read that must go to the origin awaits the app's `http`
    /// function; a second read is a hit; a request that throws is a 504 with the failure.
    @Test func liveHTTPReadsAwaitTheirAnswer() async throws {
        let sent = Mutex<[String]>([])
        let cache = Cache(fetch: { _ in [:] }, clock: SteppedClock(ms: TimeText.virtualEpochMs), http: { request in
            sent.withLock { $0.append(request.method + " " + request.key) }
            guard request.key != "api:/down" else { throw CacheError("connection refused") }
            return HTTPAnswer(status: 200, fields: HTTPFields(["Cache-Control": "max-age=60", "Date": HTTPDate.format(TimeText.virtualEpochMs)]),
                              body: .json(.string("live")))
        })
        _ = try await cache.defineNamespace("api", PolicyChange(http: HTTPNamespace()))
        let first = try await cache.httpGet("api:/x")
        #expect(first.status == 200 && first.body == .json(.string("live")))
        #expect(first.cacheStatus.text == "cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=60")
        let second = try await cache.httpGet("api:/x")
        #expect(second.cacheStatus.hit && second.body == .json(.string("live")))
        let down = try await cache.httpGet("api:/down")
        #expect(down.status == 504 && down.cacheStatus.detail == "connection refused")
        let deleted = try await cache.httpSend("DELETE", "api:/x")
        #expect(deleted.status == 200 && deleted.cacheStatus.detail == "invalidated api:/x")
        #expect(sent.withLock { $0 } == ["GET api:/x", "GET api:/down", "DELETE api:/x"])
    }
}
