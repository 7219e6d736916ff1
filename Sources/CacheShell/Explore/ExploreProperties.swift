import CacheCore
import CacheServer

/// Every value the server's data and its scripted answers held during one schedule, by key
/// (canonical), sampled after each command the schedule runs (SPEC §3.1, "no invented value").
struct ServerHistory {
    private(set) var values: [String: Set<String>] = [:]

    mutating func sample(_ server: SimulatedServer) {
        for (key, value) in server.data { values[key, default: []].insert(value.compactText) }
        for (key, answers) in server.scripted {
            for answer in answers { if case .value(let value) = answer.outcome { values[key, default: []].insert(value.compactText) } }
        }
    }
}

/// The two built-in properties that look at the whole schedule rather than one step's request
/// (SPEC §3.1): *read after change* and *no invented value*.
extension Explorer {
    /// What one schedule left for the properties to read.
    struct Evidence {
        var issueAt: [Int: Int64]
        var answerAt: [Int: Int64]
        /// The answer each step's request got (the written one for a step without latency=).
        var answers: [Int: ExploreScenario.Answer]
        /// Steps with latency= that sent no request in this schedule.
        var silent: Set<Int>
        /// The client the setup ended in (the steps' without client=).
        var home: String
        /// When the block started, and how many changes each client's timeline held then.
        var start: Int64
        var changesBefore: [String: Int]
        var server: ServerHistory
        /// Keys with a mutation in flight when the block started (the setup's): not checked.
        var pendingBefore: Set<String>
    }

    static func canonicalKey(_ key: String) -> String { KeyName.canonical(key) }

    /// The most changes *no invented value* combines for one value shown (SPEC §7.1): 2^10 subsets.
    static let maxCombined = 10

    /// The steps that change a key's value in the cache without asking the server, by verb.
    static let localWrites: Set<String> = ["put", "mutate", "event", "push", "evict", "clear", "memory-warning", "hydrate",
                                           "expire", "request", "restore", "load", "delete"]

    /// *Read after change*: once every request has been answered, a read that reached the server
    /// after the server's last change of its key returned that change, so the entry holds it. A
    /// read is a `get` step that sent a request of its own in this schedule (`--force`, or one
    /// with latency= that was not silent) and got an `ok` answer; it does not count when a local
    /// write of the key in its client (a step of `localWrites`; an event or push in any client)
    /// came after it, or a mutation of
    /// the key was answered after it, or the server no longer has the key, or the entry is gone.
    static func readAfterChange(_ scenario: ExploreScenario, _ evidence: Evidence, session: Session,
                                on cache: isolated Cache) -> (failure: ExploreFailure, key: String, client: String)? {
        for (s, step) in scenario.steps.enumerated() where step.verb == "get" {
            guard let argument = step.argument, let sent = evidence.issueAt[s], evidence.answers[s] == .ok else { continue }
            let forced = step.command.text.split(separator: " ").contains("--force")
            guard forced || (step.latency != nil && !evidence.silent.contains(s)) else { continue }
            let key = canonicalKey(argument)
            let client = step.client ?? evidence.home
            guard let data = session.server.data[key], sent > (session.server.modifiedAt[key] ?? .min) else { continue }
            let overwritten = scenario.steps.indices.contains { o in
                let other = scenario.steps[o]
                // Events and pushes come from the server: every client gets them.
                let everywhere = other.verb == "event" || other.verb == "push"
                guard o != s, everywhere || (other.client ?? evidence.home) == client, let at = evidence.issueAt[o] else { return false }
                let sameKey = other.argument.map(canonicalKey) == key || other.key.map(canonicalKey) == key
                    || ["clear", "memory-warning", "hydrate", "push", "restore", "load"].contains(other.verb)
                guard sameKey, localWrites.contains(other.verb) else { return false }
                return at >= sent || (evidence.answerAt[o] ?? at) >= sent
            }
            if overwritten { continue }
            let held: (value: String?, inFlight: Bool) = clientCache(client, session, cache) { other in
                let inFlight = other.pendingWork().contains { item in
                    if case .request(_, let keys) = item.kind { return keys.map(KeyName.canonical).contains(key) }
                    if case .queuedMutation(let keys) = item.kind { return keys.map(KeyName.canonical).contains(key) }
                    return false
                }
                return (other.peek(key).value?.compactText, inFlight)
            }
            guard !held.inFlight, let value = held.value, value != data.compactText else { continue }
            return (ExploreFailure(property: "read after change",
                                   message: "the read of line \(step.command.line) (\(step.command.text)) came after the server's last change of \(key), "
                                       + "yet once all was answered the entry holds \(value), not \(data.compactText)"),
                    key, client)
        }
        return nil
    }

    /// *No invented value*: every value an observer saw in the block (a change of an entry whose
    /// cause is an answer, a confirmation, a rollback or an optimistic mutation) is one the
    /// server's data or a scripted answer held during the schedule, a value a `put` step wrote,
    /// or one the cache held from another source (the setup, an event, a push),
    /// with some of the key's changes applied on it in the order they were made: its mutation
    /// steps sent so far, but for those failed and rolled back by then, and its `event patch`
    /// steps so far (in any client: events come from the server). Keys with a mutation in flight from
    /// the setup, a scenario with a `mutate entity` or `event entity` step, and a change with
    /// more than ``maxCombined`` changes to combine are not checked.
    static func noInventedValue(_ scenario: ExploreScenario, _ evidence: Evidence, session: Session)
        -> (failure: ExploreFailure, key: String, client: String)? {
        if scenario.steps.contains(where: { ($0.verb == "mutate" || $0.verb == "event") && $0.argument == "entity" }) { return nil }
        let checked: Set<ChangeCause> = [.fetched, .refreshed, .confirmed, .rolledBack, .mutated]
        var clients = session.clients.several ? session.clients.all.map(\.name) : [evidence.home]
        clients.sort()
        for client in clients {
            let changes = timeline(of: client, session)
            let before = min(evidence.changesBefore[client] ?? 0, changes.count)
            // Values held from another source so far, by key: the setup's changes, then the block's.
            var sources: [String: Set<String>] = [:]
            for change in changes[..<before] { if let value = change.stored { sources[canonicalKey(change.key), default: []].insert(value.text) } }
            func mine(_ step: ExploreScenario.Step) -> Bool { (step.client ?? evidence.home) == client }
            for change in changes[before...] {
                let key = canonicalKey(change.key)
                guard let stored = change.stored else { continue }
                if !checked.contains(change.cause) {
                    sources[key, default: []].insert(stored.text)
                    continue
                }
                // Not checked (a mutation in flight from the setup): taken as held.
                if evidence.pendingBefore.contains(key) {
                    sources[key, default: []].insert(stored.text)
                    continue
                }
                let seen = stored.text
                var bases = evidence.server.values[key] ?? []
                bases.formUnion(sources[key] ?? [])
                // What the put steps so far wrote, as written.
                for (w, step) in scenario.steps.enumerated() where step.verb == "put" && mine(step) {
                    guard step.writeKey.map(canonicalKey) == key, let at = evidence.issueAt[w], at <= change.at,
                          let text = step.writeValue, let value = try? JSONValue(parsing: text) else { continue }
                    bases.insert(value.compactText)
                }
                // (A value shown rightly is not a base for later ones: it may hold a change rolled
                // back since. The changes below cover what it was built from.)
                if bases.contains(seen) { continue }
                // The key's changes to combine: its mutation steps so far but the failed ones
                // answered by now, and its event patch steps so far, in the order made.
                let combined = scenario.steps.indices.filter { m in
                    let step = scenario.steps[m]
                    guard let sent = evidence.issueAt[m], sent <= change.at else { return false }
                    // An event comes from the server: every client gets it.
                    if step.verb == "event" { return step.writeKey.map(canonicalKey) == key && step.eventPatch != nil }
                    guard mine(step) else { return false }
                    guard step.verb == "mutate", step.argument.map(canonicalKey) == key else { return false }
                    // Sent so far, and not failed and rolled back by now: pending, confirmed (its change
                    // is the server's), or of unknown outcome (its change stays).
                    return !(evidence.answers[m] == .fail && (evidence.answerAt[m] ?? .max) <= change.at)
                }.sorted { (evidence.issueAt[$0]!, $0) < (evidence.issueAt[$1]!, $1) }
                guard combined.count <= Self.maxCombined else { continue }
                let patches = combined.compactMap { m -> Patch? in
                    guard let text = scenario.steps[m].patch ?? scenario.steps[m].eventPatch, let document = try? JSONValue(parsing: text) else { return nil }
                    return try? Patch(document)
                }
                guard patches.count == combined.count else { continue }
                if reachable(seen, from: bases, applying: patches) { continue }
                let pending = combined.filter { scenario.steps[$0].verb == "mutate" }
                let described = pending.isEmpty ? "no mutation of it sent and not rolled back" : "not even with the changes of line "
                    + pending.map { String(scenario.steps[$0].command.line) }.joined(separator: ", ")
                return (ExploreFailure(property: "no invented value",
                                       message: "\(client == evidence.home ? "" : "in client \(client), ")\(key) showed \(seen) (\(change.cause.rawValue)), "
                                           + "which neither the server's data, a scripted answer nor a local write held (\(described))"),
                        key, client)
            }
        }
        return nil
    }

    /// Whether `value` is some base with a subsequence of `patches` applied in order.
    private static func reachable(_ value: String, from bases: Set<String>, applying patches: [Patch]) -> Bool {
        guard !patches.isEmpty else { return false }
        for base in bases.sorted() {
            guard let document = try? JSONValue(parsing: base) else { continue }
            for mask in 1..<(1 << patches.count) {
                var current = document
                var applies = true
                for (i, patch) in patches.enumerated() where mask & (1 << i) != 0 {
                    guard let next = try? patch.apply(to: current) else { applies = false; break }
                    current = next
                }
                if applies && current.compactText == value { return true }
            }
        }
        return false
    }

    /// Runs `body` on client `name`'s cache.
    static func clientCache<T: Sendable>(_ name: String, _ session: Session, _ cache: isolated Cache,
                                         _ body: @Sendable (isolated Cache) -> T) -> T {
        guard let client = session.clients.named(name), client.cache !== cache else { return body(cache) }
        return cache.withClient(client.cache) { other in body(other) }
    }
}
