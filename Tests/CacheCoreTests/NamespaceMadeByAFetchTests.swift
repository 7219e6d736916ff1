@_spi(Engine) @testable import CacheCore
import Testing

/// A fetch can be the first thing to name a key's namespace (a `poll`, or an active key's
/// refetch after `focus` or when the origin comes back online, of a key of a namespace nothing
/// defined or stored yet). With a `dedupe=` window on
/// some namespace, the fetch's start is noted by the policy of the key's namespace, read after
/// the namespace is made: reading the table in the same expression read it as it was before and
/// trapped on the new slot (found by fuzzing: `ns k dedupe=1s`, `poll f:e every=1s`, `advance 1s`).
@Suite struct NamespaceMadeByAFetchTests {
    @Test func aPollOfAKeyOfANewNamespaceFetchesItWhileAnotherDedupes() throws {
        let h = Harness(["k": Policy(dedupe: 1_000)])
        h.server("f:e", .int(7))
        try h.engine.poll("f:e", every: 1_000)
        h.advance(1_000)
        h.advance(200)
        #expect(h.value("f:e") == .int(7))
        #expect(h.engine.namespacePolicies().contains { $0.name == "f" })
    }

    @Test func aFocusRefetchOfAKeyOfANewNamespaceFetchesItWhileAnotherDedupes() throws {
        let h = Harness(["k": Policy(dedupe: 1_000)])
        h.server("f:e", .int(8))
        h.engine.setActive("f:e", true)
        _ = h.engine.focus()
        h.advance(200)
        #expect(h.value("f:e") == .int(8))
    }

    @Test func anActiveKeyOfANewNamespaceIsRefetchedWhenTheOriginComesBackOnline() {
        let h = Harness(["k": Policy(dedupe: 1_000)])
        h.server("f:e", .int(9))
        h.engine.setActive("f:e", true)
        h.origin.isOnline = false
        h.origin.isOnline = true
        h.engine.originDidComeOnline()
        h.advance(200)
        #expect(h.value("f:e") == .int(9))
    }

    @Test func theNewNamespacesOwnDedupeWindowIsTheDefaultNone() throws {
        // A key of the new namespace is not deduplicated (its policy has no window); a key of
        // the deduplicating namespace still is.
        let h = Harness(["k": Policy(dedupe: 10_000)])
        h.server("f:e", .int(1))
        h.server("k:a", .int(2))
        try h.engine.poll("f:e", every: 1_000)
        h.advance(1_000)
        #expect(h.engine.behaviours.fetchStarts["f:e"] == nil)
        _ = h.get("k:a", nowait: true)
        #expect(h.engine.behaviours.fetchStarts["k:a"] != nil)
    }
}
