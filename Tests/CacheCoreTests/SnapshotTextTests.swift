@_spi(Engine) import CacheCore
import Testing

/// The snapshot text written in one pass (`snapshotText`) is byte for byte the document tree
/// printed (`makeSnapshot().prettyText()` / `.compactText`), for every kind of state.
@Suite struct SnapshotTextTests {
    static func expectSameText(_ h: Harness, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let document = h.engine.makeSnapshot { token in ["command": .string("echo \(token)"), "file": .null, "line": 3] }
        let fields: (Int) -> [String: JSONValue] = { token in ["command": .string("echo \(token)"), "file": .null, "line": 3] }
        #expect(h.engine.snapshotText(pretty: true, scheduledCommand: fields) == document.prettyText(), comment, sourceLocation: sourceLocation)
        #expect(h.engine.snapshotText(pretty: false, scheduledCommand: fields) == document.compactText, comment, sourceLocation: sourceLocation)
    }

    @Test func anEmptyCache() {
        Self.expectSameText(Harness())
    }

    @Test func aBusyCacheWithMutationLogsRequestsAndScheduledCommands() {
        Self.expectSameText(SnapshotTests.busyHarness())
    }

    @Test func everyEvictionPolicy() {
        for seed in UInt64(1)...5 {
            Self.expectSameText(EvictionPolicyTests.busy(seed: seed, ops: 80), "seed \(seed)")
        }
    }

    /// Values that need escapes, non-ASCII text, C1 controls, doubles, nested and empty containers.
    @Test func valuesThatNeedEscapes() {
        let h = Harness(["n": Policy(ttl: 60_000)])
        let values: [JSONValue] = [
            "plain", "quote \" backslash \\ slash /", "line\nbreak\ttab\r\u{8}\u{C}", "\u{0}\u{1F}\u{7F}",
            "C1 \u{80}\u{9F} not C1 \u{A0} é 日本 🎉", "Â", "ends in Â",
            .double(1.5), .double(42), .double(-0.0), .double(1e300), .int(.min), .int(.max), .int(-7), .int(0),
            [], [:], [[], [:], [[[]]]], ["z": 1, "a": ["é": true, "e": false, "E": .null], "Z": "x", "\u{7F}k": 1],
        ]
        for (i, value) in values.enumerated() { h.engine.put("n:\(i)", value, tags: i % 2 == 0 ? ["t\"ag", "é"] : []) }
        Self.expectSameText(h)
    }

    /// Times outside the years 0000–9999 are written as ms; never (no stale time) as null.
    @Test func extremeTimes() {
        let h = Harness(["n": Policy(ttl: Int64.max / 2, stale: 1)])
        h.engine.put("n:1", 1)
        h.advance(10)
        Self.expectSameText(h)
    }
}
