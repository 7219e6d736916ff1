import CacheCore

/// What the executor of a schedule asks of the session's clients (SPEC §3.1: a step may run in
/// another client, `client=NAME`), and of a paged list's next page.
extension Explorer {
    /// The client commands run in now.
    static func currentClient(_ session: Session) -> String {
        session.clients.current?.name ?? ClientTable.firstName
    }

    /// Runs `body` on the current client's cache.
    static func onCurrentClient<T: Sendable>(_ session: Session, _ cache: isolated Cache, _ body: @Sendable (isolated Cache) -> T) -> T {
        guard let current = session.clients.current, current.cache !== cache else { return body(cache) }
        return cache.withClient(current.cache) { other in body(other) }
    }

    /// The work pending in every client (the session's first cache alone while it has one): each
    /// client's requests and scheduled work run on the one clock, whichever client is current.
    static func pendingWorkOfEveryClient(_ session: Session, _ cache: isolated Cache) -> [PendingItem] {
        var all: [PendingItem] = []
        try? session.forEachClient(cache, only: nil) { other, _ in all += other.pendingWork() }
        return all
    }

    /// The key of the page `pages LIST --next` asks for now, in the current client.
    static func nextPageKey(of list: String, _ session: Session, _ cache: isolated Cache) -> String {
        let canonical = KeyName.canonical(list)
        let count = onCurrentClient(session, cache) { $0.pageKeys(of: canonical).count }
        return canonical + "@" + String(count + 1)
    }

    /// The changes to entries in client `name` (the current one's are the session's timeline).
    static func timeline(of name: String, _ session: Session) -> [CacheEvent] {
        if name == currentClient(session) { return session.timeline.filter { _ in true } }
        return session.clients.named(name)?.timeline.filter { _ in true } ?? []
    }

    /// Each client's entries (key, state, value), in client order, for the state compared.
    static func clientStates(_ session: Session, _ cache: isolated Cache) -> String {
        var parts: [String] = []
        try? session.forEachClient(cache, only: nil) { other, name in
            let entries = other.keys().sorted { $0.key < $1.key }.map { entry in
                "\(entry.key) \(entry.state) \(other.peek(entry.key).value.map { $0.compactText } ?? "null")"
            }
            parts.append((name.map { "client \($0)\n" } ?? "") + entries.joined(separator: "\n"))
        }
        return parts.joined(separator: "\n")
    }

    /// With `naive=none`, `ns NAME naive=none` for each namespace with a switch on, in every
    /// client (each has its own configuration), run; the client current before is current after.
    static func naiveOffEverywhere(_ options: ExploreOptions, session: Session, on cache: isolated Cache) -> [String] {
        guard options.naiveOff else { return [] }
        let home = currentClient(session)
        let names = session.clients.several ? session.clients.all.map(\.name) : [home]
        var commands: [String] = []
        for name in names {
            if name != currentClient(session) {
                commands.append("client \(name)")
                _ = perform("client \(name)", in: session, on: cache)
            }
            let on = onCurrentClient(session, cache) { client in
                client.namespacePolicies().filter { !$0.policy.naive.isEmpty }.map(\.name)
            }
            for namespace in on {
                let off = "ns \(namespace) naive=none"
                commands.append(off)
                _ = perform(off, in: session, on: cache)
            }
        }
        if home != currentClient(session) {
            commands.append("client \(home)")
            _ = perform("client \(home)", in: session, on: cache)
        }
        return commands
    }
}
