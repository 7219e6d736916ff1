import Foundation
import Testing

/// What the simulated server holds beside its data (versions, the idempotency keys it applied,
/// text and binary bodies, scripted answers, strict mode) survives a store and a snapshot (SPEC
/// §5.2, §5.3): a session split in two runs on one store prints what one run prints, wherever it
/// is split, run as a user runs cachesh.
@Suite struct ServerStateEndToEndTests {
    /// A script whose every line depends on server state kept beside the data: a version an
    /// older event is checked against, an idempotent retry of a write whose answer was lost (the
    /// server applies its key once), text and binary bodies, answers queued for later requests,
    /// strict mode.
    static let script = [
        "ns counter ttl=10m retry=2 backoff=500ms",
        "ns api http",
        #"server set counter:views {"n":41} version=3"#,
        "get counter:views",
        "server next counter:views --lost-answer",
        #"mutate counter:views {"n":{"$inc":1}} --idempotent"#,
        "advance 100ms",
        "advance 1s",
        #"event patch counter:views {"n":7} version=2"#,
        "server show counter:views",
        #"server set api:/page text="<p>hi</p>""#,
        "server set api:/logo binary=8:sha256:4c1f0e4d1ff0d2d2a7c9ffe3b5e6a0e1c1d9a2b3c4d5e6f708192a3b4c5d6e7f",
        "get api:/page",
        "get api:/logo",
        #"server next api:/page status=200 text="<p>new</p>" latency=2s"#,
        "server next --validate --fail",
        #"server next counter:views value={"n":50}"#,
        "server strict on",
        #"get api:/page headers={"Cache-Control":"no-cache"}"#,
        "advance 3s",
        "validate",
        "get counter:views --force",
        "server strict off",
        "advance 1s",
        "peek counter:views",
        "server show counter:views",
    ]

    @Test func aSessionSplitAnywhereOnAStorePrintsWhatOneRunPrints() async throws {
        let whole = try await Cachesh.run(["-c", Self.script.joined(separator: "\n")])
        #expect(whole.status == 0, "\(whole)")
        // The state each line depends on, seen in the one run.
        #expect(whole.stdout.contains("value:       {\"n\":42}\nmodified_at: 2026-01-01T00:00:00.100Z\nversion:     4\n"), "\(whole.stdout)")
        #expect(whole.stdout.contains("body:         text \"<p>hi</p>\""), "\(whole.stdout)")
        #expect(whole.stdout.contains("body:         binary 8 bytes sha256:4c1f"), "\(whole.stdout)")
        #expect(whole.stdout.contains("body:         text \"<p>new</p>\""), "\(whole.stdout)")
        for split in 1..<Self.script.count {
            let sandbox = try Sandbox()
            let first = try await Cachesh.run(["--store", "s.db", "-c", Self.script[..<split].joined(separator: "\n")], in: sandbox.url)
            let second = try await Cachesh.run(["--store", "s.db", "-c", Self.script[split...].joined(separator: "\n")], in: sandbox.url)
            #expect(first.stdout + second.stdout == whole.stdout, "split before line \(split + 1): \(Self.script[split])")
            #expect(first.stderr + second.stderr == whole.stderr, "split before line \(split + 1)")
        }
    }
}
