@_spi(Engine) @testable import CacheCore
import Testing

/// The engine's invariant checks: a busy state passes them, and each kind of damage a bug could do
/// (made here through internal test hooks) is reported by the check of the part it breaks, or by
/// the check of how the parts agree.
@Suite struct InvariantTests {
    /// A state with something in every part: entries with ids and tags in several namespaces,
    /// an `expire in=` override, an invalidation, fetches in flight, a mutation in flight and one
    /// queued, an `at` command, watches, counters and a server log.
    static func busyHarness() -> Harness {
        let h = Harness(["feed": Policy(ttl: 10 * minute, stale: minute, max: 3), "page": Policy(ttl: 5 * minute)],
                        push: ["new": PushRule(invalidate: ["feed:*"])])
        h.engine.watch(.all)
        h.engine.watch(.key("default:home"))
        h.server("feed:home", json(#"{"posts":[{"id":1,"likes":0}]}"#))
        h.server("page:1", json(#"{"id":1,"title":"p"}"#))
        _ = h.get("feed:home")
        h.engine.put("feed:a", json(#"{"id":2}"#), tags: ["mine", "recent"])
        h.engine.put("page:2", 2, tags: ["recent"])
        h.engine.put("home", "h")
        h.engine.expire("page:2", in: 2 * minute)
        h.engine.invalidate(.key("feed:a"))
        _ = try! h.engine.mutate(entity: "1", patch: patch(#"{"likes":{"$inc":1}}"#))
        _ = h.get("page:1", nowait: true)
        h.origin.isOnline = false
        _ = try! h.engine.mutate("feed:a", patch: patch(#"{"seen":true}"#))
        h.origin.isOnline = true
        h.engine.schedule(after: 30_000, token: 7)
        h.advance(50)
        return h
    }

    @Test func aBusyStateAndItsRestoredCopyKeepEveryInvariant() throws {
        let h = Self.busyHarness()
        #expect(h.engine.invariantViolations() == [])
        #expect(h.engine.count == 4)
        #expect(h.engine.pendingWork().count == 4, "two requests, one queued mutation, one at command")

        let copy = Harness()
        try copy.engine.restore(h.engine.makeSnapshot()) { _ in 7 }
        #expect(copy.engine.invariantViolations() == [])

        h.engine.originDidComeOnline()
        h.advance(10 * minute)
        #expect(h.engine.invariantViolations() == [])
        #expect(h.engine.pendingWork().isEmpty)
        #expect(h.engine.stats().expirations > 0)
    }

    /// The damage the task's example names: a key index that no longer matches the slots.
    @Test func aCorruptKeyIndexIsReported() {
        let h = Self.busyHarness()
        h.engine.entries.testingCorruptKeyIndex("home", slot: nil)
        let violations = h.engine.invariantViolations()
        #expect(violations.contains("key index: home maps to slot none, its entry is in slot 3"))
        #expect(violations.contains("key index: holds 3 keys, 4 entries are live"))

        let other = Self.busyHarness()
        other.engine.entries.testingCorruptKeyIndex("ghost", slot: 0)
        let found = other.engine.invariantViolations()
        #expect(found.contains("key index: a key maps to slot 0, which holds feed:home of another hash"))
        #expect(found.contains("key index: slot 0 is held twice"))
        #expect(found.contains("key index: holds 5 keys, 4 entries are live"))
    }

    @Test func aRequestMissingFromTheKeyIndexIsReported() {
        let h = Self.busyHarness()
        h.engine.requestTable.testingForgetKey("page:1")
        #expect(h.engine.invariantViolations().contains { $0.hasPrefix("requests by key: page:1 leads to [], the requests holding it are [") })
    }

    @Test func anExpiryFIFOOutOfOrderIsReported() throws {
        let h = Harness(["n": Policy(ttl: minute)])
        h.engine.put("n:1", 1)
        h.advance(10)
        h.engine.put("n:2", 2)
        let ns = try #require(h.engine.namespaces.slot(named: "n"))
        h.engine.expiry.testingReverse(ns)
        #expect(h.engine.invariantViolations().contains { $0.hasPrefix("expiry FIFO of namespace slot \(ns): (") && $0.contains("follows") })
    }

    /// Damage no single part can see: the FIFO is sound on its own, but an entry lost its record.
    @Test func anEntryWhoseExpiryIsNoLongerQueuedIsReported() throws {
        let h = Harness(["n": Policy(ttl: minute)])
        h.engine.put("n:1", 1)
        let ns = try #require(h.engine.namespaces.slot(named: "n"))
        _ = h.engine.expiry.replace(ns, with: [], restoring: true)
        let violations = h.engine.invariantViolations()
        #expect(violations.contains { $0.hasPrefix("expiry: n:1 expires at ") && $0.hasSuffix("but no live record in its FIFO says so") })
        #expect(h.engine.expiry.invariantViolations() == [], "the FIFO alone is sound")
    }

    @Test func aNegativeCounterIsReported() {
        let h = Harness()
        h.engine.count(\.hits, 0, by: -1)
        #expect(h.engine.invariantViolations().contains("statistics: total hits is -1"))
        #expect(h.engine.invariantViolations().contains("statistics: hits of namespace slot 0 is -1"))
    }

    /// With `checksInvariants` on, a public operation that can change the state ends with the
    /// whole check, which hands its messages to the failure handler (a precondition failure
    /// unless a test replaces it); read-only calls and a switched-off engine do not check.
    @Test func theCheckRunsAfterEachOperationOnlyWhileOn() {
        let h = Self.busyHarness()
        var reports: [[String]] = []
        h.engine.invariantFailure = { reports.append($0) }
        h.engine.entries.testingCorruptKeyIndex("home", slot: nil)

        _ = h.engine.peek("feed:a")
        _ = h.engine.keys()
        #expect(reports.isEmpty, "reads do not check")

        h.engine.put("page:3", 3)
        #expect(reports.count == 1)
        #expect(reports.first?.contains("key index: home maps to slot none, its entry is in slot 3") == true)

        h.engine.checksInvariants = false
        h.engine.put("page:4", 4)
        #expect(reports.count == 1, "no check while off")
    }
}
