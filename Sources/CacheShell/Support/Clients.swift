import CacheCore

/// One client of the session (SPEC §3 Clients: a tab, a device, an app and its widget): its own
/// cache, with its observers and stats, on the session's one simulated server and one virtual
/// clock. While the session has several clients, each cache's delegate is its client, which
/// tells the session what the cache reports with the client's name on it; alone, the session's
/// first cache reports to the session itself, as before clients existed.
final class Client: CacheDelegate {
    let name: String
    let cache: Cache
    unowned let session: Session
    /// The client's changes to entries (`timeline`) while another client is the current one:
    /// the current client's are the session's own timeline (swapped on `client NAME`).
    var timeline = Timeline()

    init(name: String, cache: Cache, session: Session) {
        self.name = name
        self.cache = cache
        self.session = session
    }

    func cache(_ cache: isolated Cache, observed event: CacheEvent) {
        session.speaking(as: name) { session.cache(cache, observed: event) }
    }

    func cache(_ cache: isolated Cache, noted event: consuming CacheEvent) {
        guard session.history.enabled else { return }
        if session.clients.current === self { session.timeline.append(event) } else { timeline.append(event) }
    }

    func cache(_ cache: isolated Cache, runScheduled token: Int) {
        session.speaking(as: name) { session.cache(cache, runScheduled: token) }
    }

    func cache(_ cache: isolated Cache, validated result: ValidationResult) {
        session.speaking(as: name) { session.cache(cache, validated: result) }
    }

    func cache(_ cache: isolated Cache, finishedRead result: ReadResult) {
        session.speaking(as: name) { session.cache(cache, finishedRead: result) }
    }
}

/// The session's clients, in the order they were made (the order their scheduled work runs in
/// at one instant, SPEC §2). Empty while the session has only its first client, the implicit
/// one every script that names no client uses: nothing about clients is printed or written then.
struct ClientTable {
    /// The most clients a session may have (SPEC §7.1).
    static let limit = 16
    /// The longest client name, in bytes (SPEC §7.1).
    static let maxNameLength = 32
    /// The name of the first client, which exists from the start.
    static let firstName = "main"

    private(set) var all: [Client] = []
    /// The client commands run in (`client NAME` switches); nil while there is only the first.
    private(set) var current: Client?

    /// Whether there are several clients (their output lines then carry their names).
    var several: Bool { all.count > 1 }

    func named(_ name: String) -> Client? { all.first { $0.name == name } }

    mutating func add(_ client: Client) { all.append(client) }

    mutating func makeCurrent(_ client: Client) { current = client }

    /// What is wrong with the table; empty when nothing is.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if all.count == 1 { problems.append("a client table holds one client (the first needs none)") }
        if all.count > Self.limit { problems.append("more than \(Self.limit) clients") }
        if Set(all.map(\.name)).count != all.count { problems.append("two clients share a name") }
        if let current, !all.contains(where: { $0 === current }) { problems.append("the current client is not in the table") }
        return problems
    }

    /// The reason `name` cannot name a client, or nil: a lowercase letter, then lowercase
    /// letters, digits or `-`, at most ``maxNameLength`` bytes (a word that needs no quoting
    /// in a transcript or a JSON line).
    static func nameProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return "a client name cannot be empty" }
        if bytes.count > maxNameLength { return "a client name is at most \(maxNameLength) bytes (this one is \(bytes.count))" }
        let lower = UInt8(ascii: "a")...UInt8(ascii: "z")
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard lower.contains(first), bytes.allSatisfy({ lower.contains($0) || digit.contains($0) || $0 == UInt8(ascii: "-") }) else {
            return "a client name is a lowercase letter, then lowercase letters, digits or - (like tab2 or widget)"
        }
        return nil
    }
}

extension Session {
    /// The client whose cache `cache` is, while the session has several; nil while it has one.
    func client(of cache: Cache) -> Client? { clients.all.first { $0.cache === cache } }

    /// The changes to entries of the client whose cache `cache` is (`timeline`, `explain`): the
    /// session's own timeline while that client is the current one or the only one, else the
    /// one the client keeps while another is current. A command `at` scheduled runs on the
    /// cache of the client that scheduled it, whichever client is current when it runs.
    func timeline(of cache: Cache) -> Timeline {
        guard let current = clients.current, current.cache !== cache, let owner = client(of: cache) else { return timeline }
        return owner.timeline
    }

    /// Runs `body` with what it adds to the outcome marked as said by client `name`, when the
    /// session has several clients.
    func speaking(as name: String, _ body: () -> Void) {
        guard clients.several else { return body() }
        let saved = speaker
        speaker = name
        defer { speaker = saved }
        body()
    }

    /// Runs `body` on the current client's cache (`cache`, the session's first, while it is the
    /// current one): what a line editor completes and hints is the cache the next command runs in.
    public func withCurrentClient(_ cache: isolated Cache, _ body: (isolated Cache) -> Void) {
        guard let current = clients.current, current.cache !== cache else { return body(cache) }
        withoutActuallyEscaping(body) { body in
            let carried = SameExecutor(body)
            cache.withClient(current.cache) { other in carried.value(other) }
        }
    }

    /// Runs `body` on every client's cache in order (the session's first cache alone while it
    /// has one client), `cache` being the one isolated now; the clients share one executor, so
    /// each is entered in place (`Cache.withClient`).
    func forEachClient(_ cache: isolated Cache, _ body: (isolated Cache) throws(ShellError) -> Void) throws(ShellError) {
        guard clients.several else { return try body(cache) }
        try withoutActuallyEscaping(body) { body throws(ShellError) in
            let carried = SameExecutor(body)
            try forEachClient(cache, only: nil) { other, _ throws(ShellError) in try carried.value(other) }
        }
    }

    /// Runs `body` on every client's cache in order, or on client `only`'s, with the client's
    /// name when the session has several (nil otherwise).
    func forEachClient(_ cache: isolated Cache, only: String?,
                       _ body: (isolated Cache, String?) throws(ShellError) -> Void) throws(ShellError) {
        guard clients.several else { return try body(cache, nil) }
        for client in clients.all where only == nil || client.name == only {
            if client.cache === cache {
                try body(cache, client.name)
                continue
            }
            try withoutActuallyEscaping(body) { body throws(ShellError) in
                let carried = SameExecutor((body, client.name))
                let result: ShellError? = cache.withClient(client.cache) { other in
                    do throws(ShellError) { try carried.value.0(other, carried.value.1) } catch { return error }
                    return nil
                }
                if let result { throw result }
            }
        }
    }

    /// The client a command's `client=NAME` option addresses (nil: every client), checked.
    func addressedClient(_ args: Arguments) throws(ShellError) -> String? {
        guard let option = args.option("client") else { return nil }
        let name = String(option.value)
        if let problem = ClientTable.nameProblem(name) { throw ShellError("client=: \(problem)", at: option.word.offset) }
        let names = clients.all.isEmpty ? [ClientTable.firstName] : clients.all.map(\.name)
        guard names.contains(name) else {
            throw ShellError("client=: there is no client \(name) (clients: \(names.joined(separator: " ")); client NAME makes one)",
                             at: option.word.offset)
        }
        return name
    }
}

/// Values of the session carried into another client's isolation by `Cache.withClient`.
// Unchecked Sendable: a box is made, handed to `Cache.withClient` and dropped within one call,
// and `withClient` runs its body synchronously on the calling thread, isolated to a cache that
// shares the caller's serial executor (`Cache.makeClient()`); so the values inside are only
// ever used on the thread and executor that made them, one access at a time, as if no
// isolation boundary were crossed (the compiler cannot see that two caches share an executor).
struct SameExecutor<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The cache the session's clients persist to and hydrate from (SPEC §3 Clients: an app's
/// localStorage or disk cache, which two tabs or an app and its widget share): each key's
/// value and tags (and an HTTP key's stored responses), as the last `persist` that wrote the key
/// left them. Not kept by snapshots,
/// stores or recordings: a script rebuilds it by running its `persist` commands again.
struct PersistedCopy {
    struct Entry: Equatable {
        var value: JSONValue
        var tags: [String]
        /// An HTTP key's stored responses, as a snapshot's entry writes them (`http`); nil for
        /// an ordinary key.
        var http: JSONValue? = nil
    }

    private(set) var entries: [String: Entry] = [:]

    /// Writes the entries of one client: each key it holds replaces the persisted one (a
    /// per-entry merge); with `wholeCache`, the persisted keys of those namespaces it does not
    /// hold are dropped first (the last writer's dump replaces the other's).
    /// - Returns: the keys dropped, sorted.
    mutating func write(_ held: [(key: String, entry: Entry)], wholeCache namespaces: Set<String>) -> [String] {
        let holds = Set(held.map(\.key))
        var dropped: [String] = []
        if !namespaces.isEmpty {
            for key in entries.keys where !holds.contains(key) && namespaces.contains(String(KeyName.namespace(of: key))) {
                dropped.append(key)
            }
            for key in dropped { entries[key] = nil }
        }
        for (key, entry) in held { entries[key] = entry }
        return dropped.sorted()
    }

    /// The persisted entries, by key.
    var sorted: [(key: String, entry: Entry)] { entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
}
