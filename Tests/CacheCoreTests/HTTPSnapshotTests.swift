@_spi(Engine) @testable import CacheCore
import CacheServer
import Testing

/// HTTP namespaces in snapshots (docs/SPEC.md §5.2, §8): a restore continues exactly where the
/// snapshot was taken (stored responses with their Vary values, the server's header fields, a
/// request in flight), and a hostile document is one error that changes nothing.
@Suite struct HTTPSnapshotTests {
    static func fields(_ pairs: KeyValuePairs<String, String>) -> HTTPFields { HTTPFields(pairs) }

    /// What `restore` of `text` says: nil when it restores, else its error.
    static func restoreError(_ cache: CacheEngine, _ text: String) -> String? {
        let json: JSONValue
        do { json = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch { return "not JSON: \(error)" }
        do throws(SnapshotError) { try cache.restore(json) } catch { return error.description }
        return nil
    }

    /// A session with two Vary'd responses, one revalidated by a 304, and a conditional request in
    /// flight whose 200 is still to come.
    static func session() throws -> (CacheEngine, SimulatedServer) {
        let (cache, server) = try HTTPNamespaceTests.make()
        let vary = ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]
        server.set("api:/feed", .object(["n": 1]), at: cache.now,
                   headers: HTTPFields(vary.sorted { $0.key < $1.key }.map { .init($0.key, $0.value) } + [.init("ETag", "\"v1\"")]))
        _ = try cache.httpGet("api:/feed", request: fields(["Accept-Language": "en"]))
        _ = try cache.httpGet("api:/feed", request: fields(["Accept-Language": "fr"]))
        try cache.advance(by: 120_000)
        let validated = try cache.httpGet("api:/feed", request: fields(["Accept-Language": "en"]))
        #expect(validated.cacheStatus.text.contains("fwd-status=304"))
        try cache.advance(by: 120_000)
        server.set("api:/feed", .object(["n": 2]), at: cache.now,
                   headers: fields(["Cache-Control": "max-age=60", "Vary": "Accept-Language", "ETag": "\"v2\""]))
        let pending = try cache.httpGet("api:/feed", request: fields(["Accept-Language": "fr"]), nowait: true)
        #expect(pending.status == nil)
        return (cache, server)
    }

    /// Snapshot, restore into a new cache, snapshot again: the same bytes; and the restored cache
    /// goes on as the original does (the request in flight completes, a read is a hit).
    @Test func aRestoredSessionGivesTheSameBytesAndGoesOnTheSame() throws {
        let (original, _) = try Self.session()
        let text = original.snapshotText(pretty: true)
        #expect(text.contains("\"http\""))
        #expect(text.contains("\"accept-language\": \"fr\""))
        let server = SimulatedServer()
        let restored = CacheEngine(origin: server)
        restored.checksInvariants = true
        #expect(Self.restoreError(restored, text) == nil)
        #expect(restored.snapshotText(pretty: true) == text)
        #expect(restored.makeSnapshot().prettyText() == text)
        for cache in [original, restored] { try cache.advance(by: 1_000) }
        let reads = try [original, restored].map { try $0.httpGet("api:/feed", request: Self.fields(["Accept-Language": "fr"])) }
        #expect(reads[0] == reads[1])
        #expect(reads[0].body == .json(.object(["n": 2])))
        #expect(reads[0].cacheStatus.hit)
        #expect(original.snapshotText(pretty: false) == restored.snapshotText(pretty: false))
    }

    /// A snapshot without an HTTP namespace has none of the new fields.
    @Test func aSnapshotWithoutHTTPHasNoneOfItsFields() throws {
        let server = SimulatedServer()
        let cache = CacheEngine(origin: server)
        server.set("a", .int(1), at: cache.now)
        _ = try cache.get("a")
        let text = cache.snapshotText(pretty: false)
        for field in ["\"http\"", "\"headers\""] { #expect(!text.contains(field)) }
    }

    /// Hostile HTTP fields (a bad status, a huge or malformed header list, a wrong type, responses
    /// on an ordinary key) are refused with the JSON path of the first, and change nothing.
    @Test(arguments: [
        ("\"status\":200", "\"status\":99", "entries[0].http[0].status: expected an HTTP status code from 200 to 599, not 99"),
        ("\"status\":200", "\"status\":\"200\"", "entries[0].http[0].status: expected a whole number"),
        ("\"headers\":[[\"Cache-Control\"", "\"headers\":[[\"Cache Control\"", "entries[0].http[0].headers[0]: \"Cache Control\" is no field name (letters, digits and !#$%&'*+-.^_`|~)"),
        ("\"headers\":[[\"Cache-Control\",\"max-age=60\"]", "\"headers\":[[\"Cache-Control\",\"max-age=60\\n\"]", "entries[0].http[0].headers[0]: the value of Cache-Control holds a control character (a field value may not)"),
        ("\"headers\":[[\"Cache-Control\",\"max-age=60\"]", "\"headers\":[[\"Cache-Control\"]", "entries[0].http[0].headers[0]: expected a field line, [\"Name\", \"value\"]"),
        ("\"vary\":{\"accept-language\":\"fr\"}", "\"vary\":[\"fr\"]", "entries[0].http[1].vary: expected an object"),
        ("\"request_time\":\"", "\"request_time\":true,\"x\":\"", "entries[0].http[0].x: unknown field"),
        ("\"heuristic_percent\":10", "\"heuristic_percent\":101", "namespaces.api.http.heuristic_percent: expected a percentage from 0 to 100"),
        ("\"method\":\"GET\"", "\"method\":\"POST\"", "pending.requests[0].http.method: a fetch request's method is one of GET, HEAD"),
        ("\"vary\":{\"accept-language\":\"fr\"}", "\"vary\":{\"Accept-Language\":\"fr\"}", "entries[0].http[1].vary.Accept-Language: a Vary name is written in lower case"),
    ])
    func aHostileDocumentIsOneErrorAndChangesNothing(find: String, replace: String, message: String) throws {
        let (original, _) = try Self.session()
        let text = original.snapshotText(pretty: false)
        #expect(text.contains(find), "\(find)")
        var hostile = text
        hostile.replaceSubrange(hostile.range(of: find)!, with: replace)
        let (target, _) = try Self.session()
        try target.advance(by: 5_000)
        let before = target.snapshotText(pretty: false)
        #expect(Self.restoreError(target, hostile) == message)
        #expect(target.snapshotText(pretty: false) == before)
    }

    /// Header lists past the bound of a stored message (1,000 lines, 256 KiB) are refused.
    @Test func hugeHeaderListsAreRefused() throws {
        let (original, _) = try Self.session()
        let text = original.snapshotText(pretty: false)
        let find = "\"headers\":[[\"Cache-Control\",\"max-age=60\"]"
        let many = "\"headers\":[" + Array(repeating: "[\"X\",\"y\"]", count: 1001).joined(separator: ",")
        let big = "\"headers\":[[\"X\",\"" + String(repeating: "y", count: HTTPFields.maxStoredBytes) + "\"]"
        for (replace, message) in [(many, "entries[0].http[0].headers: 1005 field lines; at most 1000"),
                                   (big, "entries[0].http[0].headers: more than 262144 bytes of names and values")] {
            var hostile = text
            hostile.replaceSubrange(hostile.range(of: find)!, with: replace + ",[\"Cache-Control\",\"max-age=60\"]")
            let cache = CacheEngine(origin: SimulatedServer())
            #expect(Self.restoreError(cache, hostile) == message)
            #expect(cache.entries.count == 0)
        }
    }

    /// Responses on a key of an ordinary namespace are refused.
    @Test func responsesOnAnOrdinaryKeyAreRefused() throws {
        let (original, _) = try Self.session()
        var text = original.snapshotText(pretty: false)
        text.replaceSubrange(text.range(of: ",\"http\":{\"heuristic_percent\":10,\"origin\":\"https://api.example.com\",\"shared\":false}")!, with: "")
        let cache = CacheEngine(origin: SimulatedServer())
        #expect(Self.restoreError(cache, text) == "entries[0].http: api:/feed is not a key of an HTTP namespace")
    }
}
