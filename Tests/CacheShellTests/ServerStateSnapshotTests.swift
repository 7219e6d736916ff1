import CacheCore
import CacheShell
import Testing
import TestSupport

/// What the simulated server holds beside its data (SPEC §5.2): versions, text and binary
/// bodies, the idempotency keys it applied, the answers `server next` queued and strict mode
/// are in a snapshot's `server` section, each only when it holds something; restored, they give
/// the same bytes back, and a hostile one is one error line that changes nothing.
@Suite struct ServerStateSnapshotTests {
    static let digest = String(repeating: "ab", count: 32)

    /// A session whose server holds every kind of such state.
    static func session() async -> (TestShell, String) {
        let shell = await TestShell()
        _ = await shell.typed("""
            ns counter ttl=10m retry=2 backoff=500ms
            ns api http
            server set counter:views {"n":41} version=3
            get counter:views
            mutate counter:views {"n":{"$inc":1}} --idempotent
            advance 1s
            server set api:/page text="<p>hi</p>"
            server set api:/logo binary=2048:sha256:\(digest)
            server next counter:views latency=2s value={"n":9} version=12
            server next counter:views error="busy" --commit
            server next counter:views --lost-answer error="timed out"
            server next counter:other --not-found
            server next counter:other --no-answer
            server next api:/page status=203 headers={"Cache-Control":"max-age=5"} text="<p>new</p>"
            server next api:/logo binary=4:sha256:\(digest)
            server next --validate value={"counter":{"invalidate":true,"items":{"counter:views":{"n":1}}}}
            server next --validate --fail
            server strict on
            """)
        return (shell, await shell.typed("snapshot"))
    }

    @Test func theServersStateRestoresToTheSameBytesAndAnswersTheSame() async {
        let (original, snapshot) = await Self.session()
        for field in ["\"versions\": {", "\"bodies\": {", "\"idempotency_keys\": [", "\"next\": {", "\"next_validations\": [", "\"strict\": true"] {
            #expect(snapshot.contains(field), "\(field) in \(snapshot)")
        }
        let restored = await TestShell()
        let said = await restored.typed("restore " + snapshot.split(separator: "\n").joined(separator: " "))
        #expect(said.hasPrefix("restored ("), "\(said)")
        #expect(await restored.typed("snapshot") == snapshot)
        // Both sessions take the same answers from here on.
        let script = """
            server strict off
            get counter:views --force
            advance 3s
            get api:/page headers={"Cache-Control":"no-cache"}
            advance 1s
            validate
            server show counter:views
            """
        #expect(await restored.typed(script) == (await original.typed(script)))
    }

    /// A file without any of them is written as before they existed.
    @Test func aServerWithoutThemWritesNoneOfTheirFields() async {
        let shell = await TestShell()
        let snapshot = await shell.typed("server set a:1 1\nget a:1\nsnapshot")
        for field in ["versions", "bodies", "idempotency_keys", "next", "next_validations", "strict"] {
            #expect(!snapshot.contains("\"\(field)\""), "\(field) in \(snapshot)")
        }
    }

    /// A snapshot lists at most the keys the server remembers (SPEC §7.1).
    @Test func moreIdempotencyKeysThanTheServerRemembersAreRefused() async {
        let (_, snapshot) = await Self.session()
        let pairs = (1...65_537).map { "[1, \($0)]" }.joined(separator: ", ")
        let bad = snapshot.replacingOccurrences(of: "\"idempotency_keys\": [", with: "\"idempotency_keys\": [\(pairs), ")
        let (shell, before) = await Self.session()
        let said = await shell.typed("restore " + bad.split(separator: "\n").joined(separator: " "))
        #expect(said == "error: restore: server.idempotency_keys: 65538 items; at most 65536\n", "\(said.prefix(300))")
        #expect(await shell.typed("snapshot") == before)
    }

    @Test(arguments: [
        ("\"versions\": {\n      \"counter:views\": 4\n    }", "\"versions\": {\"counter:views\": -1}",
         "server.versions.counter:views: expected a version (a whole number from 0 to 9007199254740992, 2^53)"),
        ("\"api:/page\": \"text\"", "\"api:/page\": \"html\"", "server.bodies.api:/page: expected text or binary, not \"html\""),
        ("\"api:/page\": \"text\"", "\"api:/nowhere\": \"text\"", "server.bodies.api:/nowhere: the key has no data (server.data)"),
        ("\"api:/page\": \"text\"", "\"counter:views\": \"text\"", "server.bodies.counter:views: a text body's data is a JSON string"),
        ("\"api:/page\": \"text\"", "\"api:/page\": \"binary\"", "server.bodies.api:/page: a binary body's data is"),
        ("\"idempotency_keys\": [", "\"idempotency_keys\": [[0, 9], [0, 9], ",
         "server.idempotency_keys: a key is listed twice"),
        ("\"idempotency_keys\": [", "\"idempotency_keys\": [[0, -2], ",
         "server.idempotency_keys[0]: expected [A, B]"),
        ("\"outcome\": \"not_found\"", "\"outcome\": \"teapot\"", "server.next.counter:other[0].outcome: expected data, value, not_found, error, no_answer, lost_answer, not \"teapot\""),
        ("\"outcome\": \"not_found\"", "\"outcome\": \"not_found\", \"message\": \"x\"", "server.next.counter:other[0].message: an answer of outcome not_found has no message"),
        ("\"outcome\": \"not_found\"", "\"outcome\": \"not_found\", \"commit\": true", "server.next.counter:other[0].commit: commit goes with outcome error or no_answer, not not_found"),
        ("\"outcome\": \"not_found\"", "\"outcome\": \"not_found\", \"colour\": 1", "server.next.counter:other[0].colour: unknown field"),
        ("\"outcome\": \"not_found\"", "\"outcome\": \"not_found\", \"latency_ms\": -5", "server.next.counter:other[0].latency_ms: expected a duration in ms (not negative)"),
        ("\"status\": 203", "\"status\": 1000", "server.next.api:/page[0].status: expected an HTTP status code from 200 to 599, not 1000"),
        ("\"body_text\": \"<p>new</p>\"", "\"body_text\": \"<p>other</p>\"", "server.next.api:/page[0].body_text: an answer with a text or binary body has outcome value, the body's value"),
        ("\"outcome\": \"verdicts\"", "\"outcome\": \"lost_answer\"", "server.next_validations[0].outcome: expected data, verdicts, error, no_answer, not \"lost_answer\""),
        ("\"next_validations\": [", "\"next_validations\": [{\"outcome\": \"data\", \"version\": 1}, ", "server.next_validations[0].version: an answer to a validation has no version"),
        ("\"strict\": true", "\"strict\": \"yes\"", "server.strict: expected true or false"),
    ])
    func aHostileFieldIsOneErrorAndChangesNothing(original: String, hostile: String, message: String) async {
        let (_, snapshot) = await Self.session()
        let bad = snapshot.replacingOccurrences(of: original, with: hostile)
        #expect(bad != snapshot, "\(original) not in \(snapshot)")
        let (shell, before) = await Self.session()
        let said = await shell.typed("restore " + bad.split(separator: "\n").joined(separator: " "))
        #expect(said.contains(message), "\(said)")
        #expect(said.split(separator: "\n").count == 1, "\(said)")
        #expect(await shell.typed("snapshot") == before)
    }
}
