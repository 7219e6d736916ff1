import CacheCore

/// `client`: several clients of one server on one clock (SPEC §3 Clients).
enum ClientCommands {
    static let client = CommandSpec(
        name: "client", summary: "make or switch to a client (a tab, a device, a widget): own cache, same server and clock",
        arguments: [.placeholder("NAME", meaning: "the client the next commands run in; a new one starts empty, with the "
                                    + "current client's configuration (a lowercase letter, then a-z, 0-9 or -; the first client is main)").optional],
        example: "client tab2", run: client)

    static func client(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: client)
        try args.expect(0...1, usage: "[NAME]")
        guard let word = args.positional.first else { return list(session, cache) }
        let name = word.text
        if let problem = ClientTable.nameProblem(name) { throw ShellError("client: \(problem)", at: word.offset) }
        let current = session.clients.current?.name ?? ClientTable.firstName
        if name == current {
            return .ok(["client": .string(name), "created": .bool(false)], human: ["client \(name)"])
        }
        if let existing = session.clients.named(name) {
            session.switchClient(to: existing)
            return .ok(["client": .string(name), "created": .bool(false)], human: ["client \(name)"])
        }
        if session.store != nil {
            throw ShellError("client: a store keeps one writer (the first client, \(ClientTable.firstName)); "
                             + "several clients need a session without --store", at: word.offset)
        }
        let count = max(1, session.clients.all.count)
        guard count < ClientTable.limit else {
            throw ShellError("client: a session has at most \(ClientTable.limit) clients (\(session.clients.all.map(\.name).joined(separator: " ")))",
                             at: word.offset)
        }
        session.addClient(name, from: cache)
        return .ok(["client": .string(name), "created": .bool(true), "clients": .int(Int64(count + 1))],
                   human: ["client \(name): new, on the same server and clock (\(count + 1) clients)"])
    }

    static let persist = CommandSpec(
        name: "persist", summary: "write the current client's cache to the persisted cache every client shares",
        flags: [.flag("clear", meaning: "forget the persisted cache instead (the app's storage was cleared)")],
        example: "persist", run: persist)

    /// `persist`: the current client's entries (value and tags, any state) into the persisted
    /// copy, entry by entry; a namespace with `persist-whole-cache` on is written whole, the
    /// keys the client does not hold dropped from it (SPEC §3 Clients, §1.2).
    static func persist(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: persist)
        try args.expect(0...0)
        if args.flag("clear") {
            let keys = session.persisted.sorted.map(\.key)
            session.persisted = PersistedCopy()
            return Reply(["keys": .array([]), "dropped": .array(keys.map(JSONValue.string))],
                         human: ["dropped: " + (keys.isEmpty ? "(none)" : keys.joined(separator: " "))])
        }
        var held: [(key: String, entry: PersistedCopy.Entry)] = []
        for entry in cache.keys() {
            let read = cache.peek(entry.key)
            guard let value = read.value else { continue }
            // An HTTP key's responses go with it, as a disk HTTP cache keeps them.
            let http = cache.hasHTTPNamespaces ? cache.httpResponsesDocument(entry.key) : nil
            held.append((entry.key, PersistedCopy.Entry(value: value, tags: read.tags, http: http)))
        }
        let whole = Set(cache.namespacePolicies().filter { $0.policy.naive.contains(.persistWholeCache) }.map(\.name))
        let dropped = session.persisted.write(held, wholeCache: whole)
        let keys = held.map(\.key)
        var human = ["persisted: " + (keys.isEmpty ? "(none)" : keys.joined(separator: " "))]
        if !dropped.isEmpty { human.append("dropped: " + dropped.joined(separator: " ")) }
        return Reply(["keys": .array(keys.map(JSONValue.string)), "dropped": .array(dropped.map(JSONValue.string))], human: human)
    }

    static let hydrate = CommandSpec(
        name: "hydrate", summary: "store the persisted entries the current client does not hold, as put stores them",
        example: "hydrate", run: hydrate)

    /// `hydrate`: each persisted entry the current client does not hold is stored as `put`
    /// stores it (fresh from now, with its tags), in key order.
    static func hydrate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: hydrate)
        try args.expect(0...0)
        var keys: [String] = []
        for (key, entry) in session.persisted.sorted where cache.peek(key).state == .absent {
            cache.put(key, entry.value, tags: entry.tags)
            // The responses were the key's in the client that persisted them, and this cache's
            // namespace is an HTTP one too (or they are left: the value alone is hydrated).
            if let http = entry.http, cache.httpSettings(ofKey: key) != nil { try? cache.restoreHTTPResponses(key, http) }
            keys.append(key)
        }
        return .keys(keys)
    }

    /// `client` alone: every client, in the order made, the current one marked.
    private static func list(_ session: Session, _ cache: isolated Cache) -> Reply {
        var rows: [JSONValue] = []
        var human: [String] = []
        let current = session.clients.current?.name ?? ClientTable.firstName
        var names = session.clients.all.map(\.name)
        if names.isEmpty { names = [ClientTable.firstName] }
        var counts: [Int] = []
        try? session.forEachClient(cache) { other in counts.append(other.count) }
        for (name, entries) in zip(names, counts) {
            rows.append(.object(["name": .string(name), "current": .bool(name == current), "entries": .int(Int64(entries))]))
            human.append("\(name == current ? "*" : " ") \(name) (\(entries) \(entries == 1 ? "entry" : "entries"))")
        }
        return Reply(["clients": .array(rows), "current": .string(current)], human: human)
    }
}

extension Session {
    /// Makes client `name` from `cache` (the current client's): an empty cache on its clock,
    /// with its configuration, the session's server and budget; it becomes the current client.
    /// The first client gets its entry in the table with the second.
    func addClient(_ name: String, from cache: isolated Cache) {
        if clients.all.isEmpty {
            // The plain-command path runs on the session's first cache: from now on every
            // command goes through `execute`, which runs it in the current client.
            frames.readsPlainCommands = false
            let first = Client(name: ClientTable.firstName, cache: cache, session: self)
            clients.add(first)
            clients.makeCurrent(first)
            cache.setDelegate(first)
        }
        let configuration = CacheConfiguration(
            namespaces: Dictionary(uniqueKeysWithValues: cache.namespacePolicies().filter(\.defined).map { ($0.name, $0.policy) }),
            push: cache.pushRules, idField: cache.idField)
        let made = cache.makeClient()
        let client = Client(name: name, cache: made, session: self)
        let budget = options.scheduledBudget.map { ($0, scheduledItemsForANewClient($0)) }
        let setup = SameExecutor((server, client, budget, keepsTimeline))
        cache.withClient(made) { made in
            let (server, client, budget, keepsTimeline) = setup.value
            made.useOrigin(server)
            made.setDelegate(client)
            made.reportsAllChanges = keepsTimeline
            if let (budget, items) = budget { made.setScheduledBudget(items, reason: budget.reason) }
            // The current client's configuration passed its checks where it came in.
            _ = try? made.configure(configuration)
        }
        clients.add(client)
        switchClient(to: client)
    }

    /// Makes `client` the current one: the session's timeline is the current client's.
    func switchClient(to client: Client) {
        guard let current = clients.current, current !== client else { return }
        swap(&timeline, &current.timeline)
        swap(&timeline, &client.timeline)
        clients.makeCurrent(client)
    }
}
