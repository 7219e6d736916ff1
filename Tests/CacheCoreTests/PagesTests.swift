@_spi(Engine) import CacheCore
import Testing

/// Paged lists (SPEC §1.1 Pages): a list's pages are entries of their own, `LIST@1`, `LIST@2`,
/// ..., so freshness, B12 and B11 hold per page; `pages-marked-fresh` (§1.2) refetches page 1
/// alone and marks the others fresh.
@Suite struct PagesTests {
    static func harness(_ naive: Set<NaivePolicy> = []) -> Harness {
        let h = Harness(["feed": Policy(ttl: 10 * minute, stale: minute, naive: naive)])
        h.server("feed:list@1", [1, 2])
        h.server("feed:list@2", [3, 4])
        h.server("feed:list@3", [5])
        return h
    }

    /// Loads the first `n` pages as `pages LIST --next` does: a read of the page after the last.
    static func load(_ h: Harness, pages n: Int) {
        for _ in 0..<n { _ = h.get("feed:list@\(h.engine.pageKeys(of: "feed:list").count + 1)") }
    }

    @Test func theListIsItsPagesCachedFromTheFirstUpToAGap() {
        let h = Self.harness()
        #expect(h.engine.pageKeys(of: "feed:list").isEmpty)
        Self.load(h, pages: 3)
        #expect(h.engine.pageKeys(of: "feed:list") == ["feed:list@1", "feed:list@2", "feed:list@3"])
        _ = h.engine.evict("feed:list@2")
        #expect(h.engine.pageKeys(of: "feed:list") == ["feed:list@1"])
    }

    @Test func withNoPageCachedTheListReadsItsFirstPage() throws {
        let h = Self.harness()
        let results = try h.engine.readPages("feed:list", refetch: false)
        #expect(results.map(\.key) == ["feed:list@1"])
        #expect(results[0].value == [1, 2])
    }

    @Test func readingThePagesServesEachByItsOwnFreshness() throws {
        let h = Self.harness()
        Self.load(h, pages: 1)
        h.advance(2 * minute)                       // page 1 stale
        Self.load(h, pages: 1)                      // page 2 fresh
        let before = h.engine.stats().requests
        let results = try h.engine.readPages("feed:list", refetch: false)
        #expect(results.map(\.state) == [.stale, .fresh])
        #expect(h.engine.stats().requests == before + 1)   // page 1's refresh only
        #expect(h.engine.stats().staleHits == 1 && h.engine.stats().hits == 1)
    }

    @Test func aRefetchSendsOneRequestForEveryPageAndStoresEachAnswer() throws {
        let h = Self.harness()
        Self.load(h, pages: 2)
        h.server("feed:list@2", [3, 4, "new"])
        let (requests, misses) = (h.engine.stats().requests, h.engine.stats().misses)
        let results = try h.engine.readPages("feed:list", refetch: true)
        #expect(results.map(\.value) == [[1, 2], [3, 4, "new"]])
        #expect(results.map(\.state) == [.fresh, .fresh])
        #expect(h.engine.stats().requests == requests + 1)
        #expect(h.engine.stats().misses == misses + 2)
    }

    /// B12 per page: a put on page 2 after the refetch was sent keeps page 2; page 1 is stored.
    @Test func aPageWrittenDuringTheRefetchKeepsItsWrite() throws {
        let h = Self.harness()
        Self.load(h, pages: 2)
        h.server("feed:list@1", [1, 2, "server"])
        h.server("feed:list@2", [3, "server"])
        _ = try h.engine.readPages("feed:list", refetch: true, nowait: true)
        h.advance(10)
        _ = h.engine.put("feed:list@2", [3, "local"])
        h.advance(200)
        #expect(h.value("feed:list@1") == [1, 2, "server"])
        #expect(h.value("feed:list@2") == [3, "local"])
    }

    /// B12 per page: a page invalidated while the refetch is in flight is stored stale, the
    /// others fresh.
    @Test func aPageInvalidatedDuringTheRefetchIsStoredStale() throws {
        let h = Self.harness()
        Self.load(h, pages: 2)
        _ = try h.engine.readPages("feed:list", refetch: true, nowait: true)
        h.advance(10)
        _ = h.engine.invalidate(.key("feed:list@2"))
        h.advance(200)
        #expect(h.engine.peek("feed:list@1").state == .fresh)
        #expect(h.engine.peek("feed:list@2").state == .stale)
    }

    /// B11 per page: a mutation of page 2 pending while the refetch answers stays applied on
    /// top of page 2's answer.
    @Test func aPendingMutationStaysOnTopOfItsPagesAnswer() throws {
        let h = Self.harness()
        h.server("feed:list@2", ["likes": 0, "page": 2])
        Self.load(h, pages: 2)
        h.server("feed:list@2", ["likes": 0, "page": "2b"])
        _ = try h.engine.readPages("feed:list", refetch: true, nowait: true)
        h.origin.latency = 1_000
        try h.engine.mutate("feed:list@2", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.advance(200)                              // the refetch answered, the mutation not yet
        #expect(h.value("feed:list@2") == ["likes": 1, "page": "2b"])
    }

    /// vercel/swr#785: SWR's infinite list revalidates page 1 only; later pages keep old data.
    @Test(arguments: [true, false])
    func pagesMarkedFreshRefetchesTheFirstPageAlone(naive: Bool) throws {
        let h = Self.harness(naive ? [.pagesMarkedFresh] : [])
        Self.load(h, pages: 2)
        h.server("feed:list@2", [3, "liked"])
        h.advance(2 * minute)
        let requests = h.engine.stats().requests
        let results = try h.engine.readPages("feed:list", refetch: true)
        #expect(h.engine.stats().requests == requests + 1)
        #expect(results[1].value == (naive ? [3, 4] : [3, "liked"]))
        #expect(h.engine.peek("feed:list@2").state == .fresh)
        #expect(h.engine.peek("feed:list@2").ageMs == 0)
    }

    /// Without a refetch, the naive list serves page 1 by its freshness and marks the rest fresh,
    /// sending nothing for them; the default refreshes each stale page.
    @Test(arguments: [true, false])
    func pagesMarkedFreshSendsNothingForALaterStalePage(naive: Bool) throws {
        let h = Self.harness(naive ? [.pagesMarkedFresh] : [])
        Self.load(h, pages: 2)
        _ = h.engine.invalidate(.key("feed:list@2"))
        h.server("feed:list@2", [3, "liked"])
        _ = try h.engine.readPages("feed:list", refetch: false)
        h.advance(200)
        #expect(h.value("feed:list@2") == (naive ? [3, 4] : [3, "liked"]))
        #expect(h.engine.peek("feed:list@2").state == .fresh)
    }

    /// TanStack/query#3579: a write to page 1 while page 3 loads is reverted by page 3's answer.
    @Test(arguments: [true, false])
    func nextPageDropsWritesRevertsAnEarlierPage(naive: Bool) throws {
        let h = Self.harness(naive ? [.nextPageDropsWrites] : [])
        Self.load(h, pages: 2)
        h.origin.latencies["feed:list@3"] = 1_000
        let read = try h.engine.nextPage("feed:list", nowait: true)
        #expect(read.key == "feed:list@3" && read.pending)
        h.advance(200)
        _ = h.engine.put("feed:list@1", [1, "edited"])
        h.advance(1_000)
        #expect(h.value("feed:list@3") == [5])
        #expect(h.value("feed:list@1") == (naive ? [1, 2] : [1, "edited"]))
        #expect(h.engine.peek("feed:list@1").ageMs == (naive ? 200 : 1_000))   // stored with the answer, or put
    }

    /// A snapshot taken while a next page is in flight keeps the earlier pages it holds
    /// (`pending.held_pages`): the restored cache writes them back when the answer is stored, as
    /// the original does, and the document reads back byte for byte. Once the answer is stored
    /// nothing is written, so such a snapshot reads as before the field existed.
    @Test func aSnapshotKeepsTheHeldPagesAndARestoredCacheWritesThemBack() throws {
        let h = Self.harness([.nextPageDropsWrites])
        Self.load(h, pages: 2)
        h.origin.latencies["feed:list@3"] = 1_000
        _ = try h.engine.nextPage("feed:list", nowait: true)
        let document = h.engine.makeSnapshot()
        guard case .object(let top) = document, case .object(let pending)? = top["pending"],
              case .array(let held)? = pending["held_pages"], case .object(let first)? = held.first else {
            Issue.record("no held pages in \(document.compactText)"); return
        }
        #expect(first["pages"] == .array([.object(["key": "feed:list@1", "value": [1, 2]]),
                                          .object(["key": "feed:list@2", "value": [3, 4]])]))
        let copy = Self.harness([.nextPageDropsWrites])
        copy.origin.latencies["feed:list@3"] = 1_000
        try copy.engine.restore(JSONValue(parsing: document.compactText))
        #expect(copy.engine.makeSnapshot().compactText == document.compactText)
        for c in [h, copy] {
            _ = c.engine.put("feed:list@1", [1, "edited"])
            c.advance(1_000)
            #expect(c.value("feed:list@1") == [1, 2], "the held page is written back")
            guard case .object(let later) = c.engine.makeSnapshot(), case .object(let after)? = later["pending"] else { return }
            #expect(after["held_pages"] == nil)
        }
    }

    /// A document a session cannot make is refused, naming the field: held pages must be those
    /// `pages LIST --next` holds for the fetch of LIST@N, LIST@1 up to LIST@(N-1) in order, so a
    /// stranger's snapshot cannot write a value over any key it likes when that fetch is answered.
    @Test(arguments: [
        (#"{"request":99,"pages":[]}"#, "pending.held_pages[0].request: request 99 is not a fetch of a next page"),
        (#"{"request":9,"pages":[],"list":"feed:list"}"#, "pending.held_pages[0].list: unknown field"),
        (#"{"request":9,"pages":[{"key":"feed:list@1","value":1},{"key":"feed:list@1","value":2}]}"#,
         "pending.held_pages[0].pages[1].key: expected feed:list@2: the pages held are feed:list@1 up to the one before"),
        (#"{"request":9,"pages":[{"key":"feed:list@2","value":1},{"key":"feed:list@1","value":2}]}"#,
         "pending.held_pages[0].pages[0].key: expected feed:list@1"),
        (#"{"request":9,"pages":[{"key":"other:k","value":1},{"key":"feed:list@2","value":2}]}"#,
         "pending.held_pages[0].pages[0].key: expected feed:list@1"),
        (#"{"request":9,"pages":[{"key":"feed:list@3","value":1},{"key":"feed:list@2","value":2}]}"#,
         "pending.held_pages[0].pages[0].key: expected feed:list@1"),
        (#"{"request":9,"pages":[]}"#, "pending.held_pages[0].pages: 0 pages; a fetch of feed:list@3 holds the 2 before it"),
        (#"{"request":9,"pages":[{"key":"feed:list@1","value":1}]}"#, "pending.held_pages[0].pages: 1 page; a fetch of feed:list@3"),
        (#"{"request":9,"pages":[{"key":"","value":1},{"key":"feed:list@2","value":2}]}"#, "pending.held_pages[0].pages[0].key: "),
        (#"{"request":9,"pages":[{"key":"feed:list@1"},{"key":"feed:list@2","value":2}]}"#, "pending.held_pages[0].pages[0].value: "),
    ])
    func badHeldPagesAreRefusedWithTheirPath(text: String, message: String) throws {
        let value = try JSONValue(parsing: text)
        let h = Self.harness([.nextPageDropsWrites])
        Self.load(h, pages: 2)
        h.origin.latencies["feed:list@3"] = 1_000
        let read = try h.engine.nextPage("feed:list", nowait: true)
        #expect(read.pending)
        let document = h.engine.makeSnapshot()
        guard case .object(var top) = document, case .object(var pending)? = top["pending"],
              case .array(let requests)? = pending["requests"], case .object(let request)? = requests.last,
              case .int(let id)? = request["id"] else { Issue.record("no request in flight"); return }
        #expect(id == 9, "the cases name request 9")
        pending["held_pages"] = .array([value])
        top["pending"] = .object(pending)
        let bad = JSONValue.object(top)
        let before = Self.harness().engine.makeSnapshot().compactText
        let target = Self.harness()
        #expect { try target.engine.restore(bad) } throws: { "\($0)".hasPrefix(message) }
        #expect(target.engine.makeSnapshot().compactText == before, "nothing restored")
    }

    /// The pages written back are the confirmed values: a mutation pending on a page stays
    /// applied on top, once; an answer that fails writes nothing back.
    @Test func nextPageDropsWritesKeepsPendingMutationsAndNothingOnAFailure() throws {
        let h = Self.harness([.nextPageDropsWrites])
        h.server("feed:list@1", ["likes": 0])
        Self.load(h, pages: 1)
        h.origin.latency = 2_000
        try h.engine.mutate("feed:list@1", patch: patch(#"{"likes": {"$inc": 1}}"#))
        h.origin.latency = 100
        _ = try h.engine.nextPage("feed:list")
        #expect(h.value("feed:list@1") == ["likes": 1])
        _ = h.engine.put("feed:list@1", ["likes": 5])
        h.origin.fail(next: 1)
        let failed = try h.engine.nextPage("feed:list")
        #expect(failed.key == "feed:list@3" && failed.error != nil)
        #expect(h.value("feed:list@1") == ["likes": 6])
    }

    @Test func aListHasAtMostAThousandPages() {
        let h = Harness()
        h.engine.checksInvariants = false          // a thousand puts: checked whole, each is slow
        for n in 1...(CacheEngine.maxPages + 1) { _ = h.engine.put("l@\(n)", .int(Int64(n))) }
        #expect(h.engine.pageKeys(of: "l").count == CacheEngine.maxPages)
        _ = h.engine.evict("l@1001")
        #expect(throws: CacheError.self) { try h.engine.nextPage("l") }
        #expect(h.engine.stats().requests == 0 && h.engine.stats().misses == 0)
    }

    /// Offline, every form serves the cached pages flagged, as `mget` does, and sends nothing,
    /// with or without a naive switch.
    @Test(arguments: [[], [NaivePolicy.pagesMarkedFresh]])
    func offlineThePagesAreServedAsCached(naive: [NaivePolicy]) throws {
        let h = Self.harness(Set(naive))
        Self.load(h, pages: 2)
        h.advance(2 * minute)
        h.origin.isOnline = false
        for refetch in [false, true] {
            let results = try h.engine.readPages("feed:list", refetch: refetch)
            #expect(results.map(\.offline) == [true, true])
            #expect(results.map(\.state) == [.stale, .stale])
        }
        #expect(h.engine.stats().requests == 2)
    }
}
