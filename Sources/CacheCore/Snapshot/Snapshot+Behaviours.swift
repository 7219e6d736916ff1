// Active keys and polls in snapshots and stores: `active` (top level, the keys) and
// `pending.polls` (`{key, every_ms, due, id}`), each written only when there is one, so a
// snapshot of a cache without them reads exactly as before they existed. So are the retries,
// the deferred mutations, the open `dedupe=` windows (`pending.fetch_starts`, `{key, at}`) and
// the earlier pages a next page in flight writes back (`pending.held_pages`, `{request, pages:
// [{key, value}]}`, `next-page-drops-writes`).

extension CacheEngine {
    /// The `active` field (nil when no key is active) and the `polls` field of `pending` (empty when none).
    func snapshotBehaviours() -> (active: JSONValue?, pending: [String: JSONValue]) {
        let active: JSONValue? = behaviours.active.isEmpty ? nil : .array(behaviours.active.sorted().map(JSONValue.string))
        var pending: [String: JSONValue] = [:]
        if !behaviours.polls.isEmpty {
            pending["polls"] = .array(behaviours.polls.sorted { $0.key < $1.key }.map { key, poll in
                .object(["key": .string(key), "every_ms": .int(poll.every), "due": Self.time(poll.due), "id": .int(Int64(poll.id))])
            })
        }
        if !behaviours.retries.isEmpty {
            pending["retries"] = .array(behaviours.retries.sorted { $0.key < $1.key }.map { id, state in
                var f: [String: JSONValue] = ["request": .int(Int64(id)), "made": .int(Int64(state.made)),
                                              "due": state.due.map(Self.time) ?? .null, "item": state.item.map { .int(Int64($0)) } ?? .null]
                // Only when so, so snapshots of fetches' retries read as before.
                if state.outcomeUnknown { f["unknown_outcome"] = true }
                return .object(f)
            })
        }
        let open = openFetchStarts()
        if !open.isEmpty {
            pending["fetch_starts"] = .array(open.map { .object(["key": .string($0.key), "at": Self.time($0.at)]) })
        }
        if !behaviours.deferredMutations.isEmpty {
            pending["deferred_mutations"] = .array(behaviours.deferredMutations.sorted().map { .int(Int64($0)) })
            pending["deferred_patches"] = .array(deferredJSON())
        }
        if !behaviours.pagesAtRequest.isEmpty {
            pending["held_pages"] = .array(behaviours.pagesAtRequest.sorted { $0.key < $1.key }.map { id, pages in
                .object(["request": .int(Int64(id)),
                         "pages": .array(pages.map { .object(["key": .string($0.key), "value": $0.value.json]) })])
            })
        }
        return (active, pending)
    }

    /// The keys whose `dedupe=` window is open now, and when the fetch that opened it was sent,
    /// by key (SPEC §1.2): what a restored cache needs to share that fetch as this one would.
    /// - Complexity: O(n log n) in the fetches noted.
    func openFetchStarts() -> [(key: String, at: Int64)] {
        guard namespaces.dedupes else { return [] }
        return behaviours.fetchStarts.filter { key, start in
            guard let ns = namespaces.slot(named: String(KeyName.namespace(of: key))),
                  let window = namespaces.policy(ns).dedupe else { return false }
            return now < start.addingClamped(window)
        }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension Snapshot {
    /// The list and page number of `key` when it is a page a next page's fetch reads: `LIST@N`,
    /// N written as the engine writes it, from 2 up to the most pages a list may have.
    static func page(_ key: String) -> (list: String, n: Int)? {
        guard let at = key.lastIndex(of: "@") else { return nil }
        let digits = key[key.index(after: at)...]
        guard let n = Int(digits), String(n) == digits, n >= 2, n <= CacheEngine.maxPages else { return nil }
        return (String(key[..<at]), n)
    }

    /// Reads `active` and `pending.polls`, both optional.
    mutating func decodeBehaviours(_ root: SnapshotObject) throws(SnapshotError) {
        var active = Set<String>()
        if root.has("active") {
            for (i, key) in try root.strings("active").enumerated() {
                try SnapshotObject.checkKey(key) { SnapshotError(path: "active[\(i)]", $0) }
                active.insert(key)
            }
        }
        var polls: [String: Poll] = [:]
        let pending = try root.object("pending")
        if pending.has("polls") {
            let path = pending.path.child("polls")
            var ids = Set<UInt64>()
            for (i, item) in try pending.array("polls").enumerated() {
                let p = try SnapshotObject(item, path.element(i))
                try p.only(["key", "every_ms", "due", "id"])
                let key = try p.string("key")
                try SnapshotObject.checkKey(key) { p.fail("key", $0) }
                let every = try p.int("every_ms")
                if every < 1 { throw p.fail("every_ms", "must be at least 1") }
                let id = try p.seq("id")
                guard ids.insert(id).inserted, polls[key] == nil else { throw p.fail("id", "a key or id appears twice") }
                if id > seq { throw p.fail("id", "\(id) is past the top-level seq \(seq)") }
                let due = try p.time("due")
                if due < now { throw p.fail("due", "is before now: the poll would have run") }
                polls[key] = Poll(every: every, due: due, id: id)
            }
        }
        // Each request in flight by id, for the retries and held pages that name one.
        var inFlight: [UInt64: InFlight] = [:]
        if pending.has("retries") || pending.has("held_pages") {
            for request in requests { inFlight[request.id] = request }
        }
        var retries: [UInt64: RetryState] = [:]
        if pending.has("retries") {
            let path = pending.path.child("retries")
            for (i, item) in try pending.array("retries").enumerated() {
                let r = try SnapshotObject(item, path.element(i))
                try r.only(["request", "made", "due", "item", "unknown_outcome"])
                let id = try r.seq("request")
                guard inFlight[id]?.kind == .fetch || inFlight[id]?.kind == .mutate, retries[id] == nil else {
                    throw r.fail("request", "request \(id) is not a fetch or mutation in flight, or appears twice")
                }
                let due = try r.optionalTime("due"), seqItem = try r.optionalSeq("item")
                if (due == nil) != (seqItem == nil) { throw r.fail("item", "due and item go together") }
                if let due, due < now { throw r.fail("due", "is before now: the retry would have been sent") }
                if let seqItem, seqItem > seq { throw r.fail("item", "\(seqItem) is past the top-level seq \(seq)") }
                retries[id] = RetryState(made: Int(clamping: try r.count("made")), due: due, item: seqItem,
                                         outcomeUnknown: try r.bool("unknown_outcome", default: false))
            }
        }
        behaviours = AppBehaviours(active: active, polls: polls, retries: retries)
        if pending.has("fetch_starts") {
            let path = pending.path.child("fetch_starts")
            for (i, item) in try pending.array("fetch_starts").enumerated() {
                let f = try SnapshotObject(item, path.element(i))
                try f.only(["key", "at"])
                let key = try f.string("key")
                try SnapshotObject.checkKey(key) { f.fail("key", $0) }
                guard behaviours.fetchStarts[key] == nil else { throw f.fail("key", "appears twice") }
                let at = try f.time("at")
                if at > now { throw f.fail("at", "is after now: no fetch is sent in the future") }
                behaviours.fetchStarts[key] = at
            }
            behaviours.fetchStartsPruned = behaviours.fetchStarts.count
        }
        if pending.has("deferred_mutations") {
            let known = Set(mutationQueue.map(\.id) + requests.compactMap { $0.mutation?.id })
            for (i, value) in try pending.array("deferred_mutations").enumerated() {
                guard case .int(let n) = value, n >= 0, known.contains(UInt64(n)) else {
                    throw SnapshotError(path: pending.path.child("deferred_mutations").element(i).text,
                                        "expected the id of a mutation queued or in flight")
                }
                behaviours.deferredMutations.insert(UInt64(n))
            }
            let path = pending.path.child("deferred_patches")
            for (i, item) in try pending.array("deferred_patches").enumerated() {
                let d = try SnapshotObject(item, path.element(i))
                try d.only(["key", "mutation", "seq", "patch", "reached_server"])
                let key = try d.string("key")
                try SnapshotObject.checkKey(key) { d.fail("key", $0) }
                guard let mutation = try d.optionalSeq("mutation"), behaviours.deferredMutations.contains(mutation) else {
                    throw d.fail("mutation", "expected one of deferred_mutations")
                }
                let patch: Patch
                do { patch = try Patch(d.fields["patch"] ?? .null) } catch { throw d.fail("patch", "\(error)") }
                behaviours.deferred[key, default: []].append(MutationLog.Item(
                    seq: try d.seq("seq"), patch: patch, entityID: nil, mutation: mutation,
                    reachedServer: try d.optionalSeq("reached_server")))
            }
        }
        if pending.has("held_pages") {
            let path = pending.path.child("held_pages")
            let httpNamespaces = Set(namespaces.filter { $0.policy.http != nil }.map(\.name))
            for (i, item) in try pending.array("held_pages").enumerated() {
                let h = try SnapshotObject(item, path.element(i))
                try h.only(["request", "pages"])
                let id = try h.seq("request")
                // What `nextPage` makes: a fetch of LIST@N alone (N from 2 to the most pages a
                // list may have), outside an HTTP namespace, holding LIST@1 ... LIST@(N-1) in order.
                guard let request = inFlight[id], request.kind == .fetch, request.keys.count == 1,
                      let (list, n) = Self.page(request.keys[0]), behaviours.pagesAtRequest[id] == nil else {
                    throw h.fail("request", "request \(id) is not a fetch of a next page (LIST@N, N from 2 to "
                                 + "\(CacheEngine.maxPages)) in flight, or appears twice")
                }
                if httpNamespaces.contains(String(KeyName.namespace(of: list))) {
                    throw h.fail("request", "request \(id) fetches \(request.keys[0]), a key of an HTTP namespace, where no next page holds pages")
                }
                let pagesPath = h.path.child("pages")
                let items = try h.array("pages")
                guard items.count == n - 1 else {
                    throw h.fail("pages", "\(items.count) page\(items.count == 1 ? "" : "s"); a fetch of \(request.keys[0]) holds the \(n - 1) before it")
                }
                var pages: [(key: String, value: StoredValue)] = []
                for (j, page) in items.enumerated() {
                    let p = try SnapshotObject(page, pagesPath.element(j))
                    try p.only(["key", "value"])
                    let key = try p.string("key")
                    try SnapshotObject.checkKey(key) { p.fail("key", $0) }
                    let expected = CacheEngine.pageKey(list, j + 1)
                    guard key == expected else {
                        throw p.fail("key", "expected \(expected): the pages held are \(list)@1 up to the one before the page fetched, in order")
                    }
                    pages.append((key, try p.storedValue("value")))
                }
                behaviours.pagesAtRequest[id] = pages
            }
        }
    }
}
