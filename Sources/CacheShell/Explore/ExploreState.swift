import CacheCore

/// The state explore compares between schedules (SPEC §3.1): what *distinct states* counts, and
/// what two schedules that only reorder commuting steps must end in alike.
enum ExploreState {
    /// The state a schedule ended in, as text: each entry (by key) with its state, value, source,
    /// age, time to expiry and whether a fetch is in flight; each key's observer sequence since the
    /// block began (every change the timeline holds: cause, time, state, value, source); the
    /// pending work (kind, keys, time until due; no ids, which number requests in any order); and,
    /// for each namespace with `max=` alone, its keys in recency order, which decides what it
    /// evicts next. Times are the virtual clock's, ms after the block began.
    /// - Parameters:
    ///   - cache: the cache of the client whose state it is.
    ///   - changes: that client's changes to entries since the block began (its timeline's).
    ///   - times: false leaves every time out (the tests' comparison with plain enumeration,
    ///     whose events are 1 ms apart).
    static func fingerprint(cache: isolated Cache, changes events: [CacheEvent], blockStart start: Int64, times: Bool = true) -> String {
        func time(_ ms: Int64?) -> String { times ? ms.map(String.init) ?? "-" : "" }
        var lines: [String] = []
        let listed = cache.keys()
        for key in listed.map(\.key).sorted() {
            let read = cache.peek(key)
            lines.append("\(key) \(read.state) \(read.stored?.text ?? "null") \(read.source) age=\(time(read.ageMs))"
                         + " expires=\(time(read.expiresInMs))" + (read.pending ? " pending" : ""))
        }
        var changes: [String: [String]] = [:]
        for event in events where event.at >= start {
            changes[event.key, default: []].append("\(event.cause) \(time(event.at - start)) \(event.state) \(event.stored?.text ?? "null") \(event.source)")
        }
        for key in changes.keys.sorted() { lines.append("observed \(key): " + changes[key]!.joined(separator: "; ")) }
        let now = cache.now
        lines += cache.pendingWork().map { item -> String in
            let due = time(item.dueAt.map { $0 - now })
            switch item.kind {
            case .request(let kind, let keys): return "pending request \(kind) \(keys.joined(separator: ",")) in \(due)"
            case .queuedMutation(let keys): return "pending queued mutation \(keys.joined(separator: ","))"
            case .scheduled(let token): return "pending scheduled \(token) in \(due)"
            case .poll(let key, let every): return "pending poll \(key) every \(time(every)) in \(due)"
            }
        }.sorted()
        for namespace in cache.namespacePolicies() where namespace.policy.max != nil {
            let order = listed.map(\.key).filter { KeyName.namespace(of: $0) == namespace.name }
            lines.append("recency \(namespace.name): " + order.joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }
}
