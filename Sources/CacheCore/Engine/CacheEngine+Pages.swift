/// Paged lists (infinite queries, feeds): a list KEY is fetched page by page, each page an entry
/// of its own, `KEY@1`, `KEY@2`, ... (SPEC §1.1 Pages). So every rule of an entry holds per page:
/// its freshness, B12 against a local write or an invalidation, B11's pending mutations.
extension CacheEngine {
    /// The most pages a list has (SPEC §7.1): `nextPage` past it is refused.
    public static let maxPages = 1_000

    /// The key of page `n` (from 1) of the list `key`.
    public static func pageKey(_ key: String, _ n: Int) -> String { key + "@" + String(n) }

    /// The keys of the list's cached pages: `KEY@1`, `KEY@2`, ... up to the first not cached
    /// (at most `maxPages`).
    /// - Complexity: O(pages): one lookup each.
    public func pageKeys(of key: String) -> [String] {
        let key = KeyName.canonical(key)
        var pages: [String] = []
        while pages.count < Self.maxPages {
            let page = Self.pageKey(key, pages.count + 1)
            guard entrySlot(forKey: page) != nil else { break }
            pages.append(page)
        }
        return pages
    }

    /// Reads every cached page of the list `key` (page 1 when none is cached), results in page
    /// order. Without `refetch`, as `mget` of the pages: each page by its own freshness (fresh
    /// served, stale served and refreshed, expired fetched), one request for those that need one.
    /// With `refetch` (an infinite query's refetch): one new request for every page, whatever
    /// its freshness, each page's answer stored as B12 and B11 say for that page.
    ///
    /// With `pages-marked-fresh` on (SPEC §1.2), only page 1 is read (or refetched) and the other
    /// pages are marked fresh at once, as if stored now, their values unchanged.
    /// - Throws: `CacheError` as `get` and `mget` do (a wait that runs away or never ends).
    public func readPages(_ key: String, refetch: Bool, nowait: Bool = false) throws(CacheError) -> [ReadResult] {
        let key = KeyName.canonical(key)
        var pages = pageKeys(of: key)
        if pages.isEmpty { pages = [Self.pageKey(key, 1)] }
        guard origin.isOnline else { return try mget(pages, nowait: nowait) }
        if pages.count > 1 && isNaive(.pagesMarkedFresh, ns: namespaceSlot(forKey: key)) {
            let first = try get(pages[0], force: refetch, nowait: nowait)
            markFresh(Array(pages.dropFirst()))
            return [first] + pages.dropFirst().map { current($0) }
        }
        return refetch ? try self.refetch(pages, nowait: nowait) : try mget(pages, nowait: nowait)
    }

    /// Refetches `keys` (each once, in the order first given) in one new request, whatever their
    /// freshness, as `get --force` does one key: each counts a miss, is an access when cached,
    /// joins nothing, and waits for the answer unless `nowait` (or run by a scheduled command).
    /// Offline, as `mget`. The refetch of every page of a list (SPEC §1.1 Pages).
    /// - Throws: `CacheError` when the wait runs away or would never end (nothing changed then).
    public func refetch(_ keys: [String], nowait: Bool = false) throws(CacheError) -> [ReadResult] {
        var seen = Set<String>()
        let keys = keys.map(KeyName.canonical).filter { seen.insert($0).inserted }
        guard origin.isOnline, !keys.isEmpty else { return try mget(keys, nowait: nowait) }
        defer { if checksInvariants { checkInvariants() } }
        let nowait = nowait || runningScheduled > 0
        if !nowait, let refusal = endOfTimeRefusal(sending: .fetch, keys: keys) { throw refusal }
        _ = nextSeq()
        for key in keys {
            let slot = entrySlot(forKey: key)
            if let slot { entries.touch(slot) }
            count(\.misses, slot.map { slots[Int($0)].namespace } ?? namespaceSlot(forKey: key))
        }
        let id = sendFetch(keys, refresh: Array(repeating: false, count: keys.count))
        if nowait { return keys.map { current($0) } }
        requestTable.addWaiter(id)
        try run(until: id)
        return keys.map { result(for: $0, outcome: requestTable.keyOutcomes[id]?[$0]) }
    }

    /// Reads the page after the list's last cached page (`LIST@1` when none is) exactly as `get`
    /// of it does (an infinite query's `fetchNextPage`).
    ///
    /// With `next-page-drops-writes` on (SPEC §1.2), when that read sends a fetch, the earlier
    /// pages as they are now (their confirmed values, without pending mutations) are written back
    /// when its answer is stored, whatever was written to them meanwhile.
    /// - Throws: `CacheError` as `get` does, and when the list has `maxPages` pages (then
    ///   nothing was sent).
    public func nextPage(_ key: String, nowait: Bool = false) throws(CacheError) -> ReadResult {
        let key = KeyName.canonical(key)
        let pages = pageKeys(of: key)
        guard pages.count < Self.maxPages else {
            throw CacheError("pages: \(key) has \(pages.count) pages, the most a list may have; nothing was sent")
        }
        let next = Self.pageKey(key, pages.count + 1)
        guard !pages.isEmpty, origin.isOnline, requestTable.fetch(forKey: next) == nil,
              isNaive(.nextPageDropsWrites, ns: namespaceSlot(forKey: key)) else { return try get(next, nowait: nowait) }
        let waits = !(nowait || runningScheduled > 0)
        if waits, let refusal = endOfTimeRefusal(reading: next, slot: -1, force: false) { throw refusal }
        let held = pages.map { page -> (key: String, value: StoredValue) in
            let e = slots[Int(entrySlot(forKey: page)!)]
            return (page, e.log.map { StoredValue($0.base) } ?? e.stored)
        }
        let read = try get(next, nowait: true)
        guard let id = requestTable.fetch(forKey: next) else { return read }
        behaviours.pagesAtRequest[id] = held
        guard waits else { return read }
        requestTable.addWaiter(id)
        try run(until: id)
        return result(for: next, outcome: requestTable.keyOutcomes[id]?[next])
    }

    /// `next-page-drops-writes`: the answer to request `id`, a next page's fetch, was stored: the
    /// earlier pages still cached are stored again with the values they had when it was sent, as
    /// parts of that answer (fresh, stored now, pending mutations applied on top).
    func writeBackPages(ofRequest id: UInt64) {
        guard let held = behaviours.pagesAtRequest.removeValue(forKey: id) else { return }
        for (page, value) in held {
            guard let slot = entrySlot(forKey: page) else { continue }
            let i = Int(slot)
            if var log = slots[i].log {
                log.base = value.json
                slots[i].log = log
                entries.setValue(slot, recompute(log))
            } else {
                entries.setValue(slot, value)
            }
            restamp(slot)
            slots[i].invalidated = false
            emit(.refreshed, slot: slot, source: .server)
        }
    }

    /// `pages-marked-fresh`: the pages are stamped as stored now and no longer invalidated,
    /// their values unchanged and nothing sent (SWR's infinite list revalidating page 1 only).
    private func markFresh(_ pages: [String]) {
        for page in pages {
            guard let slot = entrySlot(forKey: page) else { continue }
            restamp(slot)
            slots[Int(slot)].invalidated = false
        }
    }
}
