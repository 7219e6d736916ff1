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
        // The kind of each request in flight by id, for the retries and held pages that name one.
        var kinds: [UInt64: RequestKind] = [:]
        if pending.has("retries") || pending.has("held_pages") {
            for request in requests { kinds[request.id] = request.kind }
        }
        var retries: [UInt64: RetryState] = [:]
        if pending.has("retries") {
            let path = pending.path.child("retries")
            for (i, item) in try pending.array("retries").enumerated() {
                let r = try SnapshotObject(item, path.element(i))
                try r.only(["request", "made", "due", "item", "unknown_outcome"])
                let id = try r.seq("request")
                guard kinds[id] == .fetch || kinds[id] == .mutate, retries[id] == nil else {
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
            for (i, item) in try pending.array("held_pages").enumerated() {
                let h = try SnapshotObject(item, path.element(i))
                try h.only(["request", "pages"])
                let id = try h.seq("request")
                guard kinds[id] == .fetch, behaviours.pagesAtRequest[id] == nil else {
                    throw h.fail("request", "request \(id) is not a fetch in flight, or appears twice")
                }
                let pagesPath = h.path.child("pages")
                var pages: [(key: String, value: StoredValue)] = []
                var keys = Set<String>()
                for (j, page) in try h.array("pages").enumerated() {
                    let p = try SnapshotObject(page, pagesPath.element(j))
                    try p.only(["key", "value"])
                    let key = try p.string("key")
                    try SnapshotObject.checkKey(key) { p.fail("key", $0) }
                    guard keys.insert(key).inserted else { throw p.fail("key", "appears twice") }
                    pages.append((key, try p.storedValue("value")))
                }
                behaviours.pagesAtRequest[id] = pages
            }
        }
    }
}
