import CacheCore
import CacheServer
import CacheShell
import Testing
import TestSupport

/// An app's recording (`Cache.startRecording`) of a session with HTTP namespaces (docs/SPEC.md
/// §5.6, §8): each HTTP read and request is an `http-get` or `http-request` call, each HTTP
/// answer carries its status, fields and body, and the transcript replays byte for byte.
@Suite struct HTTPRecordingTests {
    static func fields(_ pairs: KeyValuePairs<String, String>) -> HTTPFields { HTTPFields(pairs) }

    /// Reads with a 304 revalidation, Vary variants, a read that does not wait, an unsafe method,
    /// a HEAD and a namespace made HTTP while recording: the transcript replays under --safe, and
    /// the file form reads back as the records it was written from.
    @Test func anHTTPSessionReplaysItsTranscript() async throws {
        let server = SimulatedServer()
        server.set("api:/feed", .object(["n": 1]), at: TimeText.virtualEpochMs,
                   headers: Self.fields(["ETag": "\"v1\"", "Cache-Control": "max-age=60", "Vary": "Accept-Language"]))
        server.set("img:/a.png", .string("cat"), at: TimeText.virtualEpochMs, headers: Self.fields(["Cache-Control": "max-age=604800"]))
        let cache = Cache(origin: server)
        try await cache.defineNamespace("api", PolicyChange(http: HTTPNamespace(origin: "https://api.example.com")))
        await cache.startRecording()
        _ = try await cache.httpRead("api:/feed", request: Self.fields(["Accept-Language": "en"]))
        _ = try await cache.httpRead("api:/feed", request: Self.fields(["Accept-Language": "fr"]))
        try await cache.advance(by: 120_000)
        let validated = try await cache.httpRead("api:/feed", request: Self.fields(["Accept-Language": "en"]))
        #expect(validated.cacheStatus.fwdStatus == 304)
        _ = try await cache.httpRequest("HEAD", "api:/feed", request: Self.fields(["Accept-Language": "en"]))
        _ = try await cache.httpRead("api:/feed", request: Self.fields(["Accept-Language": "de"]), nowait: true)
        try await cache.advance(by: 1_000)
        _ = try await cache.httpRequest("PUT", "api:/feed", body: .object(["n": 2]))
        try await cache.defineNamespace("img", PolicyChange(http: HTTPNamespace()))
        _ = try await cache.httpRead("img:/a.png")
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        #expect(text.contains("cachesh> get api:/feed headers={\"Accept-Language\":\"en\"}\n"), "\(text)")
        #expect(text.contains("status=304 headers="), "\(text)")
        #expect(text.contains("cachesh> request PUT api:/feed {\"n\":2}\n"), "\(text)")
        #expect(text.contains("cachesh> ns img http heuristic=10\n"), "\(text)")
        let check = await TranscriptCheck.replay(name: "http.transcript", text: text, safe: true)
        #expect(check.passed, "\(check.report())\(check.refusal ?? "")\n\(text)")
        let file = RecordingFormat.text(of: recording)
        #expect(try RecordingFormat.parse(file) == recording)
        // A hostile line (a control character in a field value) is one error naming its line.
        let hostile = file.replacingOccurrences(of: #"["Accept-Language","fr"]"#, with: #"["Accept-Language","f\u0001r"]"#)
        #expect(hostile != file)
        do {
            _ = try RecordingFormat.parse(hostile)
            Issue.record("read a hostile recording")
        } catch {
            #expect(error.message.contains("holds a control character (a field value may not)"), "\(error.message)")
        }
    }

    /// A recording without HTTP namespaces has none of the new fields.
    @Test func aRecordingWithoutHTTPHasNoneOfItsFields() async throws {
        let server = SimulatedServer()
        server.set("feed:home", .int(1), at: TimeText.virtualEpochMs)
        let cache = Cache(origin: server)
        await cache.startRecording()
        _ = try await cache.get("feed:home")
        let file = RecordingFormat.text(of: try await cache.stopRecording())
        for field in ["\"http\"", "\"headers\""] { #expect(!file.contains(field)) }
    }
}
