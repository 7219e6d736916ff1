import CacheCore
import CacheShell
import Foundation
import Testing
import TestSupport

/// `ns NAME naive=...` and the configuration's `"naive"` (SPEC §1.2), and `mget` run by `at`.
@Suite struct NaivePolicyCommandTests {
    static func run(_ script: String) async -> String {
        await TestShell().scriptText(SourceFile(name: "t.cachesh", text: script))
    }

    @Test func nsSwitchesNaivePoliciesOnAndOffAndConfigShowsThem() async {
        let out = await Self.run("""
            ns feed ttl=1m naive=join-refetch,last-answer-wins
            config
            ns feed naive=none
            config
            """)
        #expect(out.contains("ns feed ttl=1m naive=last-answer-wins,join-refetch\nid-field"))
        #expect(out.hasSuffix("ns feed ttl=1m\nid-field: id\nserver latency: 100ms\n"))
    }

    @Test func anUnknownNaivePolicyIsOneErrorAndChangesNothing() async {
        let out = await Self.run("""
            ns feed ttl=1m
            ns feed ttl=2m naive=last-answer-wins,fastest
            config
            """)
        #expect(out.contains("t.cachesh:2: error: ns: unknown naive policy \"fastest\""))
        #expect(out.contains("ns feed ttl=1m\nid-field"))
    }

    @Test func theSwitchSurvivesASnapshotAndIsWrittenOnlyWhenOn() async {
        let shell = await TestShell()
        _ = await shell.typed("ns feed naive=serve-expired\nns page ttl=1m")
        let text = await shell.snapshotText()
        #expect(text.contains("\"naive\": [\n        \"serve-expired\"\n      ]"))
        #expect(text.components(separatedBy: "\"naive\"").count == 2, "only the namespace with one on")
        let copy = await TestShell()
        _ = await copy.typed("restore " + text)
        #expect(await copy.typed("config").contains("ns feed ttl=5m naive=serve-expired"))
    }

    @Test func theConfigurationSetsNaivePolicies() async throws {
        let path = Fixtures.directory("naive") + "/config.json"
        try #"{"namespaces": {"feed": {"ttl": "1m", "naive": ["answer-drops-mutations"]}}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let shell = await TestShell()
        _ = await shell.typed("load \(path)")
        #expect(await shell.typed("config").contains("ns feed ttl=1m naive=answer-drops-mutations"))
        let bad = Fixtures.directory("naive") + "/bad.json"
        try #"{"namespaces": {"feed": {"naive": ["slowest"]}}}"#.write(toFile: bad, atomically: true, encoding: .utf8)
        #expect(await shell.typed("load \(bad)").contains("$.namespaces.feed.naive: unknown naive policy \"slowest\""))
    }

    /// SPEC §2: a command run by `at` never blocks; `mget` included.
    @Test func scheduledMgetNeverBlocks() async {
        let out = await Self.run("""
            server set a 1
            at 10ms mget a
            advance 10ms
            """)
        #expect(out.contains("a    absent  cache   -       -              pending  null"))
        #expect(out.hasSuffix("now:    2026-01-01T00:00:00.010Z\nnow_ms: 10\n"))
    }
}
