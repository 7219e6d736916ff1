@_spi(Engine) import CacheCore
import Testing

/// B16 (SPEC §5.2): a snapshot holds everything the engine needs to continue exactly; restoring it
/// and snapshotting again gives the same bytes; a bad document is refused whole.
@Suite struct SnapshotTests {
    static let policies: [String: Policy] = [
        "feed": Policy(ttl: 45 * minute, stale: 5 * minute, max: 3),
        "profile": Policy(ttl: 10 * minute, purgeable: true),
        "page": Policy(ttl: 5 * minute, staleIfError: 60 * minute, timeout: 300),
    ]
    static let rules: [String: PushRule] = [
        "blocked": PushRule(invalidate: ["profile:{user}"], refresh: ["feed:*"]),
    ]

    /// A harness driven into every kind of state: fresh, stale, expired, invalidated and overridden
    /// entries, tags, a mutation log, requests in flight, a queued mutation, scripted failures,
    /// a scheduled command, watches and counters.
    static func busyHarness() -> Harness {
        let h = Harness(policies, push: rules)
        h.engine.watch(.all)
        h.server("feed:home", json(#"[{"id":1,"likes":3},{"id":2,"likes":0}]"#))
        h.server("profile:1", json(#"{"id":1,"name":"ann"}"#))
        h.server("page:1", "page one")
        h.server("page:2", "page two")
        h.engine.put("feed:a", json(#"{"id":2,"text":"hi"}"#), tags: ["mine", "recent"])
        _ = h.get("feed:home")
        _ = h.get("profile:1")
        _ = h.get("page:1")
        h.engine.put("other", 1.5)
        h.advance(6 * minute)
        h.engine.invalidate(.key("profile:1"))
        h.engine.expire("page:1", in: 2 * minute)
        _ = try! h.engine.mutate("feed:home", patch: patch(#"{"seen":true}"#))
        _ = h.get("feed:a", nowait: true)
        h.origin.isOnline = false
        _ = try! h.engine.mutate(entity: "2", patch: patch(#"{"likes":{"$inc":1}}"#))
        h.origin.fail(next: 1, key: "page:2")
        h.engine.schedule(after: 30_000, token: 7)
        _ = try! h.engine.event("feed:home", patch: patch(#"{"live":1}"#))
        return h
    }

    /// Runs the same operations on a harness; returns what a user would see of them.
    static func continueScript(_ h: Harness) -> [String] {
        var seen: [String] = []
        var tokens: [Int] = []
        h.events.onScheduled = { tokens.append($0) }
        func note(_ r: ReadResult) { seen.append("\(r.key) \(r.state) \(r.value?.compactText ?? "-") \(r.error ?? "")") }
        h.advance(10)
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        h.advance(minute)
        note(h.get("page:2"))
        note(h.get("page:1"))
        _ = try! h.engine.event(entity: "1", patch: patch(#"{"likes":{"$inc":5}}"#))
        _ = try! h.engine.push("blocked", arguments: ["user": "1"])
        _ = try! h.engine.validate(items: true)
        h.advance(5 * minute)
        note(h.get("profile:1"))
        h.engine.put("feed:b", 2)
        h.engine.put("feed:c", 3)
        h.advance(60 * minute)
        for key in ["feed:home", "feed:a", "feed:b", "feed:c", "page:1", "other"] { note(h.engine.peek(key)) }
        seen += h.events.summary
        seen += h.engine.requestLog.map { "\($0.atMs) \($0.kind) \($0.keys) \($0.fate)" }
        seen += tokens.map { "ran \($0)" }
        seen += h.engine.stats().fields.map { "\($0.name)=\($0.value)" }
        return seen
    }

    @Test func restoreThenSnapshotGivesTheSameBytes() throws {
        let original = Self.busyHarness()
        let text = original.engine.makeSnapshot().compactText
        let copy = Harness()
        try copy.engine.restore(JSONValue(parsing: text)) { _ in 7 }
        #expect(copy.engine.makeSnapshot().compactText == text)
        #expect(copy.engine.keys().map(\.key) == original.engine.keys().map(\.key))
        #expect(copy.engine.peek("feed:home") == original.engine.peek("feed:home"))
        #expect(copy.engine.stats() == original.engine.stats())
        #expect(copy.origin.data == original.origin.data)
        #expect(copy.engine.pendingWork() == original.engine.pendingWork())
    }

    @Test func emptyCacheRoundTrips() throws {
        let h = Harness()
        let text = h.engine.makeSnapshot().compactText
        let copy = Harness(["x": Policy(ttl: 1)])
        copy.engine.put("x:1", 1)
        try copy.engine.restore(JSONValue(parsing: text))
        #expect(copy.engine.count == 0)
        #expect(copy.engine.makeSnapshot().compactText == text)
    }

    @Test func restoredEngineContinuesExactlyAsTheOriginal() throws {
        let original = Self.busyHarness()
        let copy = Harness()
        try copy.engine.restore(original.engine.makeSnapshot()) { _ in 7 }
        original.events.events.removeAll()
        let expected = Self.continueScript(original)
        let actual = Self.continueScript(copy)
        #expect(actual == expected)
        #expect(copy.engine.makeSnapshot() == original.engine.makeSnapshot())
    }

    @Test func snapshotListsEntriesLeastRecentlyUsedFirstWithTheirTimes() throws {
        let h = Harness(["feed": Policy(ttl: 45 * minute, stale: 5 * minute)])
        h.engine.put("feed:1", 1, tags: ["t"])
        h.advance(1000)
        h.engine.put("feed:2", 2)
        _ = h.get("feed:1")
        guard case .object(let top) = h.engine.makeSnapshot(), case .array(let entries)? = top["entries"],
              case .object(let first) = entries[0] else { Issue.record("not a snapshot"); return }
        #expect(top["format"] == "cachesh-snapshot")
        #expect(top["version"] == 1)
        #expect(top["now"] == "2026-01-01T00:00:01.000Z")
        #expect(entries.count == 2)
        #expect(first["key"] == "feed:2")
        #expect(first["stored_at"] == "2026-01-01T00:00:01.000Z")
        #expect(first["stale_at"] == "2026-01-01T00:05:01.000Z")
        #expect(first["expires_at"] == "2026-01-01T00:45:01.000Z")
        #expect(first["state"] == "fresh")
        guard case .object(let second) = entries[1] else { return }
        #expect(second["key"] == "feed:1")
        #expect(second["tags"] == ["t"])
    }

    /// An open `dedupe=` window is kept (`pending.fetch_starts`): a restored cache shares the fetch
    /// that opened it as the original does, the document reads back byte for byte, and once the
    /// window closed nothing is written (so such a snapshot reads as before the field existed).
    @Test func anOpenDedupeWindowIsKeptAndSharedAfterARestore() throws {
        let h = Harness(["feed": Policy(ttl: 600_000, dedupe: 2_000)])
        h.server("feed:1", "v1")
        _ = h.get("feed:1")
        h.server("feed:1", "v2")
        let document = h.engine.makeSnapshot()
        guard case .object(let top) = document, case .object(let pending)? = top["pending"] else { Issue.record("no pending"); return }
        #expect(pending["fetch_starts"] == .array([.object(["key": "feed:1", "at": "2026-01-01T00:00:00.000Z"])]))
        let copy = Harness(["feed": Policy(ttl: 600_000, dedupe: 2_000)])
        copy.server("feed:1", "v2")
        try copy.engine.restore(JSONValue(parsing: document.compactText))
        #expect(copy.engine.makeSnapshot().compactText == document.compactText)
        let sent = copy.engine.requestLog.count
        #expect(copy.get("feed:1", force: true).value == "v1")
        #expect(h.get("feed:1", force: true).value == "v1")
        #expect(copy.engine.requestLog.count == sent, "the read shares the fetch whose window is open")
        h.advance(2_000)
        guard case .object(let later) = h.engine.makeSnapshot(), case .object(let closed)? = later["pending"] else { return }
        #expect(closed["fetch_starts"] == nil)
    }

    @Test(arguments: [
        (JSONValue.array([.object(["key": "feed:1", "at": "2026-01-01T00:00:01.000Z"])]), "pending.fetch_starts[0].at: is after now"),
        (JSONValue.array([.object(["key": "feed:1", "at": "2026-01-01T00:00:00.000Z"]),
                          .object(["key": "feed:1", "at": "2026-01-01T00:00:00.000Z"])]), "pending.fetch_starts[1].key: appears twice"),
        (JSONValue.array([.object(["key": "feed:1", "when": "2026-01-01T00:00:00.000Z"])]), "pending.fetch_starts[0].when: unknown field"),
        (JSONValue.array([.object(["key": "", "at": "2026-01-01T00:00:00.000Z"])]), "pending.fetch_starts[0].key: "),
    ])
    func aBadDedupeWindowIsRefusedWithItsPath(value: JSONValue, message: String) {
        let h = Harness(["feed": Policy(ttl: 600_000, dedupe: 2_000)])
        let bad = Self.replacing(h.engine.makeSnapshot(), ["pending", "fetch_starts"], with: value)
        #expect { try Harness().engine.restore(bad) } throws: { "\($0)".hasPrefix(message) }
    }

    // MARK: Refusals

    /// Replaces the value at `path` (object keys and array indices) in a document.
    static func replacing(_ doc: JSONValue, _ path: [String], with value: JSONValue?) -> JSONValue {
        guard let head = path.first else { return value ?? .null }
        switch doc {
        case .object(var o):
            if path.count == 1 && value == nil { o[head] = nil } else { o[head] = replacing(o[head] ?? .null, Array(path.dropFirst()), with: value) }
            return .object(o)
        case .array(var a):
            let i = Int(head)!
            a[i] = replacing(a[i], Array(path.dropFirst()), with: value)
            return .array(a)
        default:
            return doc
        }
    }

    static let refusals: [(path: [String], value: JSONValue?, message: String)] = [
        (["format"], "other", "format: not a cachesh snapshot"),
        (["version"], 2, "version: snapshot version 2 is not supported"),
        (["entries", "1", "stored_at"], "yesterday", "entries[1].stored_at: \"yesterday\" is not a time"),
        (["entries", "0", "tags"], 3, "entries[0].tags: expected an array"),
        (["entries", "4", "key"], "other", "entries[4].key: other appears twice"),
        (["entries", "0", "color"], "red", "entries[0].color: unknown field"),
        (["namespaces", "feed", "ttl_ms"], -1, "namespaces.feed.ttl_ms: must not be negative"),
        (["pending", "requests", "0", "voided"], [], "pending.requests[0].voided: expected 1 values"),
        (["server", "latency_ms"], "fast", "server.latency_ms: expected a whole number"),
        (["stats", "hits"], nil, "stats.hits: missing"),
        (["clock_start"], nil, "clock_start: missing"),
    ]

    @Test(arguments: refusals)
    func badDocumentIsRefusedWithItsPathAndChangesNothing(_ refusal: (path: [String], value: JSONValue?, message: String)) {
        let source = Self.busyHarness()
        let bad = Self.replacing(source.engine.makeSnapshot(), refusal.path, with: refusal.value)
        let target = Self.busyHarness()
        let before = target.engine.makeSnapshot()
        #expect {
            try target.engine.restore(bad)
        } throws: { error in
            "\(error)".hasPrefix(refusal.message)
        }
        #expect(target.engine.makeSnapshot() == before)
    }

    /// The server's settings are the server's to check: decoding keeps them as written, and a
    /// restore into a cache over the simulated server refuses a bad one before changing anything,
    /// the simulated server included; the written document keeps them byte for byte.
    @Test func theOriginChecksItsOwnSettingsBeforeARestoreChangesAnything() throws {
        let document = Self.busyHarness().engine.makeSnapshot()
        for (path, value, message) in [
            (["server", "latency_ms"], JSONValue.int(-5), "server.latency_ms: expected a duration in ms (not negative)"),
            (["server", "id_field"], "", "server.id_field: must not be empty"),
            (["server", "speed"], "fast", "server.speed: unknown field"),
            (["server", "fail_keys"], ["x:1": -1], "server.fail_keys.x:1: expected a count from 0 to 2147483647"),
        ] as [([String], JSONValue, String)] {
            let bad = Self.replacing(document, path, with: value)
            let snapshot = try Snapshot(bad)  // the core's part is sound
            let target = Self.busyHarness()
            let before = (target.engine.makeSnapshot(), target.origin.snapshot(withData: true))
            #expect { try target.engine.restore(snapshot) { _ in 0 } } throws: { "\($0)" == message }
            #expect(target.engine.makeSnapshot() == before.0)
            #expect(target.origin.snapshot(withData: true) == before.1)
        }
        // A good document's settings reach the server and are written back the same.
        let target = Harness()
        try target.engine.restore(document)
        #expect(target.engine.makeSnapshot() == document)
        #expect(try Snapshot(document).document() == document)
        // Without `data`, the section is only the engine's log: nothing else may be there.
        guard case .object(let top) = document, case .object(var server)? = top["server"] else { Issue.record("no server section"); return }
        server["data"] = nil
        #expect { try Snapshot(Self.replacing(document, ["server"], with: .object(server))) } throws: {
            "\($0)" == "server.fail_keys: unknown field"
        }
    }

    @Test func truncatedTextIsRefusedAsDamaged() {
        let text = Self.busyHarness().engine.makeSnapshot().compactText
        #expect {
            try Snapshot(parsing: String(text.prefix(text.count / 2)))
        } throws: { error in
            "\(error)".hasPrefix("damaged snapshot (not valid JSON at line 1")
        }
    }
}
