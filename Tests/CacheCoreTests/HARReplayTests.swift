import CacheCore
@testable import CacheReplay
import Foundation
import Testing

/// The HAR replay's runner (issue 37, points 1 and 2): decisions, the server's answers to the
/// cache's requests, agreement with the recorded client, overrides, namespaces per origin.
@Suite struct HARReplayTests {
    /// An entry at `second` seconds past 2026-03-01T09:15:00Z with the given response.
    static func entry(_ second: Int, _ url: String = "https://a.example/x", method: String = "GET", status: Int = 200,
                      headers: [(String, String)] = [("Cache-Control", "max-age=60")], request: [(String, String)] = [],
                      text: String = "abc", wait: Int = 10, extra: String = "") -> String {
        func list(_ pairs: [(String, String)]) -> String {
            "[" + pairs.map { "{\"name\": \(JSONValue.string($0.0).compactText), \"value\": \(JSONValue.string($0.1).compactText)}" }
                .joined(separator: ", ") + "]"
        }
        let date = HTTPDate.format(TimeText.parseISO8601("2026-03-01T09:15:00.000Z")! + Int64(second) * 1000)
        let start = String(format: "2026-03-01T09:%02d:%02d.000Z", 15 + second / 60, second % 60)
        return "{\"startedDateTime\": \"\(start)\", \"time\": \(wait), "
            + "\"request\": {\"method\": \"\(method)\", \"url\": \"\(url)\", \"headers\": \(list(request))}, "
            + "\"response\": {\"status\": \(status), \"headers\": \(list(headers + [("Date", date)])), \"content\": {\"size\": \(text.utf8.count), \"text\": \"\(text)\"}}, "
            + "\"timings\": {\"send\": 0, \"wait\": \(wait), \"receive\": 0}\(extra)}"
    }

    static func replay(_ entries: [String], bases: [String: HARNamespaceBase] = [:], reserved: Set<String> = [],
                       combinations: [HARSettings] = [HARSettings()]) throws -> HARReplayResult {
        let path = TraceReaderTests.temporaryFile(Array(HARReaderTests.log(entries).utf8), suffix: ".har")
        defer { unlink(path) }
        var log = HARLog(reader: try HARReader(path: path))
        return try HARReplay.run(&log, bases: bases, reserved: reserved, combinations: combinations)
    }

    @Test func aConditionalRequestTheLoggedValidatorsMatchIsAnswered304() throws {
        let tagged: [(String, String)] = [("Cache-Control", "max-age=10"), ("ETag", "\"a\"")]
        // The log shows 200s (the recorded client had no cache); cachesh validates at 30s and the
        // server, whose representation has the same ETag, says 304.
        let result = try Self.replay([Self.entry(0, headers: tagged), Self.entry(30, headers: tagged)])
        #expect(result.rows.map(\.decision) == [.fetched, .revalidated])
        #expect(result.rows[1].cacheStatus == "cachesh; fwd=stale; fwd-status=304; stored")
        #expect(result.rows[1].bytesSaved == 3 && result.rows[1].status == 200)
        #expect(result.rows[1].agrees == true)  // both went to the network
    }

    @Test func aLogged304ToARequestWithoutAValidatorIsAnsweredWithTheURLsLast200() throws {
        // The first response is not stored (no-store): cachesh's second request has no validator,
        // though the recorded client got a 304; the server answers with the last 200, its fields
        // updated by the 304's (max-age=60 now): stored.
        let result = try Self.replay([
            Self.entry(0, headers: [("Cache-Control", "no-store"), ("ETag", "\"a\"")]),
            Self.entry(5, status: 304, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"a\"")], text: ""),
        ])
        #expect(result.rows.map(\.decision) == [.notStored, .fetched])
        #expect(result.rows[1].status == 200 && result.rows[1].agrees == false && result.rows[1].recorded == .revalidated)
    }

    /// A stale response the recorded client served from its cache (Chrome's `_fromCache`) within
    /// `stale-while-revalidate`: cachesh serves it too and revalidates in the background, so the
    /// log's next request for the key is the client's revalidation; a log without one is missing
    /// a request the cache would have sent.
    @Test func aBackgroundRevalidationMissingFromTheLogIsADisagreement() throws {
        let swr: [(String, String)] = [("Cache-Control", "max-age=1, stale-while-revalidate=60"), ("ETag", "\"a\"")]
        let fromCache = ", \"_fromCache\": \"disk\""
        // Served stale from the client's cache at 5s, revalidated on the wire at 6s (a 304); the
        // server now says max-age=30, which cachesh's own revalidation at 5s got.
        let longer: [(String, String)] = [("Cache-Control", "max-age=30, stale-while-revalidate=60"), ("ETag", "\"a\"")]
        let revalidated = try Self.replay([
            Self.entry(0, headers: swr), Self.entry(5, headers: longer, extra: fromCache),
            Self.entry(6, status: 304, headers: longer, text: ""),
        ])
        #expect(revalidated.rows.map(\.decision) == [.fetched, .staleRevalidate, .hit])
        #expect(revalidated.rows.map(\.agrees) == [true, true, true])
        #expect(revalidated.rows[2].why.hasSuffix("; the recorded client's background revalidation of the response served stale at entries[1] (cachesh sent its own then)"),
                "\(revalidated.rows[2].why)")
        #expect(revalidated.totals[0].disagreements == 0)
        // Served stale again from the client's cache with no request between, and at the end.
        let missing = try Self.replay([
            Self.entry(0, headers: swr), Self.entry(5, headers: swr, extra: fromCache),
            Self.entry(7, headers: swr, extra: fromCache),
        ])
        #expect(missing.rows[1].agrees == false)
        #expect(missing.rows[1].why.hasSuffix("; a request the cache would have sent is missing from the log: nothing revalidated the key before entries[2]"),
                "\(missing.rows[1].why)")
        let atTheEnd = try Self.replay([Self.entry(0, headers: swr), Self.entry(5, headers: swr, extra: fromCache)])
        #expect(atTheEnd.rows[1].agrees == false && atTheEnd.rows[1].why.hasSuffix("nothing revalidated the key before the log ends"))
        #expect(atTheEnd.totals[0].disagreements == 1)
        // A sweep keeps no rows and counts the same.
        let sweep = try Self.replay([Self.entry(0, headers: swr), Self.entry(5, headers: swr, extra: fromCache)],
                                    combinations: [HARSettings(), HARSettings(heuristicPercent: 20)])
        #expect(sweep.totals.map(\.disagreements) == [1, 1])
    }

    @Test func overlappingRequestsShareOneRequestAndTheClockFollowsTheLog() throws {
        // The first answer takes 5s; a read at 1s shares the request in flight.
        let result = try Self.replay([Self.entry(0, wait: 5000), Self.entry(1), Self.entry(10)])
        #expect(result.rows.map(\.decision) == [.fetched, .collapsed, .hit])
        #expect(result.rows.map(\.timeMs) == [0, 1000, 10_000])
        #expect(result.totals[0].requests == 1)
        // Dated at 0s, received at 5s: 10s old at 10s (RFC 9111 §4.2.3).
        #expect(result.rows[2].why == "fresh, 50s left: lifetime 1m (max-age), age 10s")
    }

    @Test func fromCacheAgreesWithAHitOnly() throws {
        let result = try Self.replay([
            Self.entry(0, extra: ", \"_fromCache\": \"disk\""),
            Self.entry(1, extra: ", \"_fromCache\": \"memory\""),
        ])
        #expect(result.rows.map(\.recorded) == [.cache, .cache])
        #expect(result.rows.map(\.agrees) == [false, true])
        #expect(result.totals[0].disagreements == 1)
    }

    @Test func eachOriginGetsANamespaceNamedAfterItsHostOrTheSessionsBoundOne() throws {
        var taken: Set<String> = ["a.example"]
        #expect(HARReplay.hostName("https://a.example", taken: &taken) == "a.example-2")
        #expect(HARReplay.hostName("http://127.0.0.1:8080", taken: &taken) == "127.0.0.1_8080")
        #expect(HARReplay.hostName("http://[::1]:80", taken: &taken) == "___1__80")
        var policy = Policy(ttl: HTTPNamespace.defaultKeep)
        policy.http = HTTPNamespace(origin: "https://b.example", policy: HTTPCachePolicy(shared: true))
        let base = HARNamespaceBase(name: "api", policy: policy)
        let result = try Self.replay([Self.entry(0), Self.entry(1, "https://b.example/y?q=1")],
                                     bases: ["https://b.example": base], reserved: ["api"])
        #expect(result.rows.map(\.key) == ["a.example:/x", "api:/y?q=1"])
        #expect(result.namespaces.map(\.shared) == [false, true])
    }

    @Test func overridesAddReplaceAndDropDirectivesOnMatchingTargets() throws {
        let o = try HAROverride.parse("/img/*:max-age=0+-no-store+public").get()
        let fields = HTTPFields([.init("Cache-Control", "no-store, max-age=600, private")])
        #expect(o.applied(to: fields, target: "/img/a.png")["Cache-Control"] == "private, max-age=0, public")
        #expect(o.applied(to: fields, target: "/feed") == fields)
        let dropAll = try HAROverride.parse("*:-no-store").get()
        #expect(dropAll.applied(to: HTTPFields([.init("Cache-Control", "no-store")]), target: "/x")["Cache-Control"] == nil)
        for bad in ["feed:max-age=0", "/a", "/a:", "/a:-x=1", "/a:max-age=", "/a:x=\"y\""] {
            #expect(throws: HARError.self, "\(bad)") { try HAROverride.parse(bad).get() }
        }
        // A sweep: the same log once per combination, one pass.
        let result = try Self.replay([Self.entry(0), Self.entry(5)],
                                     combinations: [HARSettings(), HARSettings(override: try HAROverride.parse("/x:no-cache").get())])
        #expect(result.rows.isEmpty)
        #expect(result.totals.map { $0.decisions[.hit] ?? 0 } == [1, 0])
        #expect(result.totals.map(\.requests) == [1, 2])
    }

    @Test func heuristicAndSharedSettingsChangeTheDecisions() throws {
        let lastModified = HTTPDate.format(TimeText.parseISO8601("2026-03-01T08:15:00.000Z")!)
        let heuristic = [Self.entry(0, headers: [("Last-Modified", lastModified)]), Self.entry(300)]
        // An hour since Last-Modified: 10% is 6 minutes (hit at 5 minutes), 1% is 36s (stale).
        let result = try Self.replay(heuristic, combinations: [HARSettings(heuristicPercent: 10), HARSettings(heuristicPercent: 1)])
        #expect(result.totals.map { $0.decisions[.hit] ?? 0 } == [1, 0])
        let privateResponse = [Self.entry(0, headers: [("Cache-Control", "private, max-age=60")]), Self.entry(5)]
        let shared = try Self.replay(privateResponse, combinations: [HARSettings(shared: false), HARSettings(shared: true)])
        #expect(shared.totals.map { $0.decisions[.hit] ?? 0 } == [1, 0])
        #expect(shared.totals.map { $0.decisions[.notStored] ?? 0 } == [0, 1])
    }

    @Test func anInterruptStopsTheReplayBetweenEntries() throws {
        let path = TraceReaderTests.temporaryFile(Array(HARReaderTests.log([Self.entry(0), Self.entry(1)]).utf8), suffix: ".har")
        defer { unlink(path) }
        var log = HARLog(reader: try HARReader(path: path))
        #expect(throws: HARError("interrupted after 0 entries; nothing changed")) {
            try HARReplay.run(&log, bases: [:], reserved: [], combinations: [HARSettings()], interrupted: { true })
        }
    }
}
