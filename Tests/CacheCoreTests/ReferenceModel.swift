import CacheCore

/// A deliberately naive model of the parts of SPEC §1/§1.1 that `put` (typed and scheduled by
/// `at`), `get` (blocking, `--nowait`, `--force`), `mget` (blocking, `--nowait` and scheduled by
/// `at`), `peek`, `keys`, `advance`, `evict`, `clear`, key events (versioned or not), pushes whose rule refreshes a
/// key, optimistic mutations (`mutate KEY VALUE`, `--refetch`, of cached keys and of keys not
/// cached, offline queues; the rule for an unknown outcome when their answer is lost), `server
/// fail 1 KEY`, `server next KEY --lost-answer` and `server latency D KEY` touch, for the
/// model-based test, with each namespace's eviction policy (LRU, FIFO, SIEVE, LFU) found by
/// sorting and scanning.
///
/// A mutation's patch is a whole value (a JSON merge patch that is not an object replaces the
/// value), so an entry with mutations pending shows the last item of its log, or its base.
///
/// Everything is a plain array searched linearly: entries in recency order (least recent first),
/// requests in flight in the order sent. Times are ms since the clock's start. Sequence numbers
/// only need the same relative order as the engine's: they are drawn, in the same order, for each
/// `put`, each request sent and each store, which is all the rules below compare.
///
/// The server holds `"srv-KEY"` for every key except those in `missing`, which answer `not
/// found`, until an event changes a key's value; it answers with the data as of the request;
/// every request takes `latency` ms, or the longest `server latency` of its keys. Offline
/// (`server offline`) it is sent nothing; requests already in flight complete.
final class ReferenceModel {
    struct NamespacePolicy {
        var ttl: Int64
        var stale: Int64?
        var max: Int?
        var eviction: Eviction = .lru
    }

    struct Entry {
        var key: String
        var namespace: String
        /// Its namespace's policy (policies do not change during a run).
        var policy: NamespacePolicy
        var value: String
        var storedAt: Int64
        /// Orders this entry's expiry among scheduled work due at the same instant.
        var storeSeq: Int
        /// Sequence number of the last `put` (B12: older responses are discarded).
        var lastWrite: Int
        /// Sequence number of the `put` or request whose value is stored now (B12).
        var storedBy: Int
        /// The clock passed `expiresAt` while this stored value was live: `expirations` counted it.
        var expiryCounted = false
        /// Invalidated (stale until the next store), by an answer that arrived marked.
        var invalidated = false
        /// Eviction state: its namespace's counter when stored (FIFO, SIEVE) or last accessed (LFU).
        var rank = 0
        /// LFU: accesses since stored, 1 when new.
        var uses = 1
        /// SIEVE: read since the hand last passed it.
        var visited = false
        /// Sequence number of the last `put` (with mutations pending, events do not discard answers).
        var lastPut = 0
        /// Mutations pending (B11): the confirmed base and the log applied on top.
        var log: Log?
        /// The server version the value reflects (SPEC §1.1 Versions); nil: none, every event applies.
        var version: Int?
    }

    /// An item of a mutation log: a mutation's value or an event's, in arrival order.
    struct LogItem {
        var seq: Int
        var value: String
        var mutation: Int?
        /// The request that carried it to the server (an event's own sequence number).
        var reachedServer: Int?
        /// A versioned event's version.
        var version: Int? = nil
    }

    /// B11: a confirmed base and the pending mutations and events applied on top.
    struct Log {
        var base: String
        var baseSeq: Int
        var items: [LogItem] = []
        var pending: Set<Int> = []
        /// Each item replaces the value: the last one shows.
        var value: String { items.last?.value ?? base }

        /// A new base at `version`: events of that version or older leave (the base has them).
        /// - Returns: the entry's version, the newest of the base's and the events' left.
        mutating func rebase(_ version: Int?) -> Int? {
            if let version { items.removeAll { $0.mutation == nil && ($0.version ?? .max) <= version } }
            return items.compactMap(\.version).reduce(version) { max($0 ?? 0, $1) }
        }
    }

    /// A mutation as sent: its id (the sequence number it was made at), key and value.
    struct Mutation {
        var id: Int
        var key: String
        var value: String
        var refetch: Bool
    }

    /// A fetch of one key or more (a bulk read's), each key's flags kept by position.
    struct Request {
        var id: Int
        var mutation: Mutation?
        var keys: [String]
        var completesAt: Int64
        var refresh: [Bool]
        /// `evict`, `clear` or LRU eviction voided the key's response (fate `discarded`).
        var voided: [Bool]
        /// A push's refresh or an event reached the key while this was in flight: stored stale.
        var invalidated: [Bool]
        /// The server's answer per key as of sending (nil: not found).
        var answers: [String?]
        /// The version each answer carries (SPEC §1.1 Versions).
        var versions: [Int?] = []
        /// `server fail` failed it whole, or its answer was lost.
        var failed = false
        /// The failure's message.
        var message = "server error"
        /// Its answer was lost (`server next KEY --lost-answer`): a mutation's outcome is unknown.
        var unknown = false

        var isFetch: Bool { mutation == nil }

        func index(_ key: String) -> Int? { keys.firstIndex(of: key) }
    }

    enum Outcome { case stored, discarded, failed(String) }

    /// An `mget` (or a `put`, `value` set) scheduled by `at`: the `mget` runs as `--nowait` when due.
    struct Scheduled {
        var seq: Int
        var due: Int64
        var keys: [String]
        var value: String?
    }

    /// What a read shows, in the engine's `ReadResult` terms.
    struct Read: Equatable, CustomStringConvertible {
        var key: String
        var state: String
        var value: String?
        var ageMs: Int64?
        var expiresInMs: Int64?
        var source: String
        var error: String?
        var pending: Bool
        var offline = false

        var description: String {
            "\(key) state=\(state) value=\(value ?? "null") age=\(ageMs.map(String.init) ?? "-") "
                + "expires_in=\(expiresInMs.map(String.init) ?? "-") source=\(source) "
                + "error=\(error ?? "-") pending=\(pending)" + (offline ? " offline" : "")
        }
    }

    let policies: [String: NamespacePolicy]
    let latency: Int64
    let missing: Set<String>

    /// A deliberate fault (reads leave recency alone), to prove the comparison catches a wrong LRU.
    var breakTouch = false
    /// A deliberate fault (every namespace evicts as LRU), to prove the comparison catches a wrong policy.
    var evictAsLRU = false

    private(set) var now: Int64 = 0
    /// `server offline` / `server online`.
    var online = true
    private(set) var entries: [Entry] = []
    private(set) var requests: [Request] = []
    /// Counters in total and by namespace.
    private(set) var total = Stats()
    private(set) var stats: [String: Stats] = [:]
    /// The server log: when each request was sent, its key and its fate, in the order sent.
    private(set) var log: [(atMs: Int64, keys: [String], fate: String)] = []
    private var logIndex: [Int: Int] = [:]
    private var seq = 0
    private var outcomes: [Int: [String: Outcome]] = [:]
    private(set) var scheduled: [Scheduled] = []
    /// Values events and mutations gave the server (otherwise `"srv-KEY"`).
    private var data: [String: String] = [:]
    /// The server's version of each key numbered by a versioned event: one more at each change.
    private var versions: [String: Int] = [:]
    /// `server latency D KEY`.
    var latencies: [String: Int64] = [:]
    /// `server fail N KEY`: how many more requests holding the key fail.
    var failures: [String: Int] = [:]
    /// `server next KEY --lost-answer`: how many lost answers are queued for the key.
    var lostAnswers: [String: Int] = [:]
    /// Mutations made offline or behind queued ones, oldest first, and the request replaying one.
    private(set) var queue: [Mutation] = []
    private var replaying: Int?
    /// Patches of mutations of keys not cached, waiting for the key's first value.
    private var deferred: [String: [LogItem]] = [:]
    /// Mutations of keys not cached whose own answer may still store the key.
    private var deferredMutations: Set<Int> = []
    /// The next rank of each namespace.
    private var nextRank: [String: Int] = [:]
    /// SIEVE: the key the hand of each namespace rests on (none: the next search starts at the oldest).
    private var hand: [String: String] = [:]
    /// How many reads saw an entry exactly at its stale or expiry instant (a coverage check).
    private(set) var boundaryReads = 0
    /// How many mutations of cached entries ended with their outcome unknown (a coverage check).
    private(set) var unknownOutcomes = 0

    init(policies: [String: NamespacePolicy], latency: Int64, missing: Set<String>) {
        self.policies = policies
        self.latency = latency
        self.missing = missing
    }

    // MARK: Rules

    static func namespace(of key: String) -> String {
        guard let colon = key.firstIndex(of: ":") else { return "default" }
        return String(key[..<colon])
    }

    func policy(namespace: String) -> NamespacePolicy {
        policies[namespace] ?? NamespacePolicy(ttl: 300_000, stale: nil, max: nil)
    }

    func expiresAt(_ e: Entry) -> Int64 { e.storedAt + e.policy.ttl }

    func state(_ e: Entry) -> String {
        if now >= expiresAt(e) { return "expired" }
        if e.invalidated { return "stale" }
        if let stale = e.policy.stale, now >= e.storedAt + stale { return "stale" }
        return "fresh"
    }

    func position(_ key: String) -> Int? { entries.firstIndex { $0.key == key } }

    /// The fetch a read of `key` joins: the latest fetch sent, still in flight, whose response
    /// for it is not void (an older one when a newer completed first).
    func inFlight(_ key: String) -> Int? {
        requests.last { r in r.isFetch && (r.index(key).map { !r.voided[$0] } ?? false) }?.id
    }

    /// Marks the responses of fetches in flight for `key` to be stored stale.
    func markInvalidated(_ key: String) {
        for j in requests.indices where requests[j].isFetch {
            if let i = requests[j].index(key) { requests[j].invalidated[i] = true }
        }
    }

    func nextSeq() -> Int {
        seq += 1
        return seq
    }

    func count(_ counter: WritableKeyPath<Stats, Int>, _ key: String) {
        total[keyPath: counter] += 1
        stats[Self.namespace(of: key), default: Stats()][keyPath: counter] += 1
    }

    func read(_ e: Entry, source: String = "cache") -> Read {
        Read(key: e.key, state: state(e), value: e.value, ageMs: now - e.storedAt,
             expiresInMs: expiresAt(e) - now, source: source, error: nil, pending: inFlight(e.key) != nil)
    }

    func current(_ key: String) -> Read {
        if let i = position(key) { return read(entries[i]) }
        return Read(key: key, state: "absent", value: nil, ageMs: nil, expiresInMs: nil, source: "cache",
                    error: nil, pending: inFlight(key) != nil)
    }

    /// An access to the entry at `i`: it becomes the most recently used; SIEVE marks it
    /// visited; LFU counts one more use, reached now.
    func touch(_ i: Int) {
        if breakTouch { return }
        entries[i].visited = true
        entries[i].uses += 1
        entries[i].rank = takeRank(entries[i].namespace, ifLFU: true) ?? entries[i].rank
        entries.append(entries.remove(at: i))
    }

    private func takeRank(_ ns: String, ifLFU: Bool = false) -> Int? {
        if ifLFU && policy(namespace: ns).eviction != .lfu { return nil }
        defer { nextRank[ns, default: 0] += 1 }
        return nextRank[ns, default: 0]
    }

    /// A new entry: stored last in every order, unvisited, one use.
    func store(_ entry: Entry) {
        var e = entry
        e.rank = takeRank(e.namespace)!
        entries.append(e)
    }

    /// Takes an entry out; a SIEVE hand on it moves to the entry stored after it.
    func remove(_ key: String) {
        guard let i = position(key) else { return }
        let ns = entries[i].namespace
        if hand[ns] == key {
            let rank = entries[i].rank
            hand[ns] = entries.filter { $0.namespace == ns && $0.rank > rank }.min { $0.rank < $1.rank }?.key
        }
        entries.remove(at: i)
    }

    /// The entry the namespace's policy evicts, leaving `sparing` (just stored) to last.
    func victim(_ ns: String, sparing: String?) -> String {
        let members = entries.filter { $0.namespace == ns }
        let others = members.filter { $0.key != sparing }
        guard !others.isEmpty else { return members[0].key }
        switch evictAsLRU ? .lru : policy(namespace: ns).eviction {
        case .lru: return others[0].key
        case .fifo: return others.min { $0.rank < $1.rank }!.key
        case .lfu: return others.min { ($0.uses, $0.rank) < ($1.uses, $1.rank) }!.key
        case .sieve:
            let order = others.sorted { $0.rank < $1.rank }.map(\.key)
            var k = hand[ns].flatMap { order.firstIndex(of: $0) } ?? 0
            while entries[position(order[k])!].visited {
                entries[position(order[k])!].visited = false
                k = (k + 1) % order.count
            }
            hand[ns] = k + 1 < order.count ? order[k + 1] : nil
            return order[k]
        }
    }

    /// Evicts entries of the key's namespace down to its `max`, by its policy; `sparing` is the
    /// key just stored.
    @discardableResult
    func evictOverflow(namespaceOf key: String, sparing: String? = nil) -> [String] {
        let ns = Self.namespace(of: key)
        guard let max = policy(namespace: ns).max else { return [] }
        var evicted: [String] = []
        while entries.filter({ $0.namespace == ns }).count > max {
            let victim = victim(ns, sparing: sparing)
            void(victim)
            // Queued mutations of the victim are still sent; their answers no longer store it.
            for m in queue where m.key == victim { deferredMutations.remove(m.id) }
            remove(victim)
            count(\.evictions, victim)
            evicted.append(victim)
        }
        return evicted
    }

    func void(_ key: String) {
        for j in requests.indices { if let i = requests[j].index(key) { requests[j].voided[i] = true } }
    }

    func send(_ key: String, refresh: Bool) -> Int { send([key], refresh: [refresh]) }

    func serverValue(_ key: String) -> String? { data[key] ?? (missing.contains(key) ? nil : "srv-\(key)") }

    /// The version an answer from the data carries: the key's, when it has data and a version.
    func serverVersion(_ key: String) -> Int? { serverValue(key) == nil ? nil : versions[key] }

    /// A change of the server's data: a numbered key's version goes one up.
    func serverWrite(_ key: String, _ value: String) {
        data[key] = value
        if let v = versions[key] { versions[key] = v + 1 }
    }

    /// Whether a request holding `keys` fails (`server fail N KEY`), using up the failures.
    func takeFailure(_ keys: [String]) -> Bool {
        var failed = false
        for key in keys {
            if let n = failures[key], n > 0 {
                failed = true
                failures[key] = n == 1 ? nil : n - 1
            }
        }
        return failed
    }

    /// Whether a request holding `keys` takes a queued lost answer (one per key that has one): a
    /// scripted request, which fails whole with its answer lost and uses up no `server fail`.
    func takeLostAnswer(_ keys: [String]) -> Bool {
        guard keys.contains(where: { lostAnswers[$0] != nil }) else { return false }
        for key in keys {
            if let n = lostAnswers[key] { lostAnswers[key] = n == 1 ? nil : n - 1 }
        }
        return true
    }

    /// Sends one fetch for `keys`: `requests` rises once in total and once per namespace involved.
    func send(_ keys: [String], refresh: [Bool]) -> Int {
        let id = nextSeq()
        let lost = takeLostAnswer(keys)
        let failed = lost || takeFailure(keys)
        let answers = keys.map(serverValue)
        let ms = keys.map { latencies[$0] ?? latency }.max()!
        var request = Request(id: id, keys: keys, completesAt: now + ms, refresh: refresh,
                              voided: keys.map { _ in false }, invalidated: keys.map { _ in false }, answers: answers,
                              versions: keys.map(serverVersion))
        request.failed = failed
        if lost { (request.message, request.unknown) = ("answer lost", true) }
        requests.append(request)
        logIndex[id] = log.count
        log.append((now, keys, "pending"))
        total.requests += 1
        var seen = Set<String>()
        for key in keys where seen.insert(Self.namespace(of: key)).inserted {
            stats[Self.namespace(of: key), default: Stats()].requests += 1
        }
        for (key, r) in zip(keys, refresh) where r { count(\.refreshes, key) }
        return id
    }

    // MARK: Scheduled work

    enum Work { case completion(Int), expiry(String), scheduled(Int) }

    /// The earliest scheduled item, by (time, sequence number).
    func nextWork() -> (time: Int64, seq: Int, work: Work)? {
        var best: (time: Int64, seq: Int, work: Work)?
        for c in scheduled where best.map({ (c.due, c.seq) < ($0.time, $0.seq) }) ?? true {
            best = (c.due, c.seq, .scheduled(c.seq))
        }
        for r in requests where best.map({ (r.completesAt, r.id) < ($0.time, $0.seq) }) ?? true {
            best = (r.completesAt, r.id, .completion(r.id))
        }
        for e in entries where !e.expiryCounted {
            if best.map({ (expiresAt(e), e.storeSeq) < ($0.time, $0.seq) }) ?? true {
                best = (expiresAt(e), e.storeSeq, .expiry(e.key))
            }
        }
        return best
    }

    func run(_ item: (time: Int64, seq: Int, work: Work)) {
        now = max(now, item.time)
        switch item.work {
        case .expiry(let key):
            let i = position(key)!
            entries[i].expiryCounted = true
            count(\.expirations, key)
        case .scheduled(let seq):
            let c = scheduled.first { $0.seq == seq }!
            scheduled.removeAll { $0.seq == seq }
            if let value = c.value { _ = put(c.keys[0], value) } else { _ = mget(c.keys, nowait: true) }
        case .completion(let id):
            let r = requests.first { $0.id == id }!
            requests.removeAll { $0.id == id }
            if r.mutation != nil { return completeMutation(r) }
            var keyOutcomes: [String: Outcome] = [:]
            var evicted: [String] = []
            var anyStored = false
            for (i, key) in r.keys.enumerated() {
                let outcome = r.voided[i] || evicted.contains(key) ? .discarded : complete(r, i, evicted: &evicted)
                keyOutcomes[key] = outcome
                if case .stored = outcome { anyStored = true }
            }
            outcomes[id] = keyOutcomes
            let allFailed = keyOutcomes.values.allSatisfy { if case .failed = $0 { true } else { false } }
            // A request the server failed is `failed` in the log even when its keys' responses were void.
            log[logIndex[id]!].fate = r.failed ? "failed" : anyStored ? "stored" : allFailed ? "failed" : "discarded"
        }
    }

    /// Key `k` of request `r`'s answer: stored (stale if marked), discarded by B12, or failed.
    func complete(_ r: Request, _ k: Int, evicted: inout [String]) -> Outcome {
        let key = r.keys[k]
        guard !r.failed, let answer = r.answers[k] else {
            count(r.refresh[k] ? \.refreshFailures : \.fetchFailures, key)
            return .failed(r.failed ? r.message : "not found")
        }
        if let i = position(key), var log = entries[i].log {
            // B11: the answer becomes the base; log items it already saw are dropped.
            if r.id < entries[i].lastPut || r.id < log.baseSeq { return .discarded }
            log.base = answer
            log.baseSeq = max(log.baseSeq, r.id)
            log.items.removeAll { ($0.reachedServer ?? .max) < r.id }
            entries[i].version = log.rebase(r.versions[k])
            entries[i].log = log
            entries[i].value = log.value
            entries[i].storedAt = now
            entries[i].storeSeq = nextSeq()
            entries[i].storedBy = max(entries[i].storedBy, r.id)
            entries[i].expiryCounted = false
            entries[i].invalidated = r.invalidated[k]
            return .stored
        }
        if let i = position(key) {
            if r.id < entries[i].lastWrite || r.id < entries[i].storedBy { return .discarded }
            // Versions: an answer older than the entry's is discarded.
            if let v = r.versions[k], let held = entries[i].version, v < held { return .discarded }
            entries[i].value = answer
            entries[i].version = r.versions[k]
            entries[i].storedAt = now
            entries[i].storeSeq = nextSeq()
            entries[i].storedBy = r.id
            entries[i].expiryCounted = false
            entries[i].invalidated = r.invalidated[k]
            return .stored
        }
        var entry = Entry(key: key, namespace: Self.namespace(of: key),
                          policy: policy(namespace: Self.namespace(of: key)), value: answer, storedAt: now, storeSeq: nextSeq(),
                          lastWrite: 0, storedBy: r.id)
        entry.invalidated = r.invalidated[k]
        entry.version = r.versions[k]
        store(entry)
        applyDeferred(key, fetchedBy: r.id)
        evicted += evictOverflow(namespaceOf: key, sparing: key)
        return .stored
    }

    /// The first value of `key` was stored: the patches waiting for it join its log; a fetched
    /// value keeps only those its request did not see.
    func applyDeferred(_ key: String, fetchedBy request: Int?) {
        guard let items = deferred.removeValue(forKey: key), let i = position(key) else { return }
        var log = entries[i].log ?? Log(base: entries[i].value, baseSeq: entries[i].storedBy)
        log.items += request.map { r in items.filter { ($0.reachedServer ?? .max) >= r } } ?? items
        for item in items { if let m = item.mutation { log.pending.insert(m) } }
        entries[i].log = log
        entries[i].value = log.value
    }

    // MARK: Mutations (B11)

    /// `mutate KEY VALUE`: applied at once to a cached entry (an access), or waiting for the key's
    /// first value; sent, or queued while offline or behind queued ones.
    func mutate(_ key: String, _ value: String, refetch: Bool) -> [String] {
        let m = nextSeq()
        let item = LogItem(seq: m, value: value, mutation: m, reachedServer: nil)
        if let i = position(key) {
            var log = entries[i].log ?? Log(base: entries[i].value, baseSeq: entries[i].storedBy)
            log.items.append(item)
            log.pending.insert(m)
            entries[i].log = log
            entries[i].value = log.value
            touch(i)
        } else {
            deferred[key, default: []].append(item)
            deferredMutations.insert(m)
        }
        let mutation = Mutation(id: m, key: key, value: value, refetch: refetch)
        if !online || !queue.isEmpty { queue.append(mutation) } else { _ = sendMutation(mutation) }
        return [key]
    }

    /// Sends a mutation: the server applies it now unless it fails (or does not have the key).
    func sendMutation(_ m: Mutation) -> Int {
        let id = nextSeq()
        // A lost answer: the server applies it (when it has the key), the client never hears.
        let lost = takeLostAnswer([m.key])
        var failed = lost || takeFailure([m.key])
        if !failed || lost {
            if serverValue(m.key) == nil { failed = true } else { serverWrite(m.key, m.value) }
        }
        for key in deferred.keys {
            for j in deferred[key]!.indices where deferred[key]![j].mutation == m.id { deferred[key]![j].reachedServer = id }
        }
        if let i = position(m.key), var log = entries[i].log {
            for j in log.items.indices where log.items[j].mutation == m.id { log.items[j].reachedServer = id }
            entries[i].log = log
        }
        var request = Request(id: id, mutation: m, keys: [m.key], completesAt: now + (latencies[m.key] ?? latency),
                              refresh: [false], voided: [false], invalidated: [false], answers: [serverValue(m.key)],
                              versions: [serverVersion(m.key)])
        request.failed = failed
        if lost { (request.message, request.unknown) = ("answer lost", true) }
        requests.append(request)
        logIndex[id] = log.count
        log.append((now, [m.key], "pending"))
        count(\.requests, m.key)
        return id
    }

    func sendNextQueued() {
        guard replaying == nil, online, !queue.isEmpty else { return }
        replaying = sendMutation(queue.removeFirst())
    }

    /// `server online`: queued mutations replay, one at a time.
    func goOnline() {
        online = true
        sendNextQueued()
    }

    /// A mutation's answer: confirms (new base) or rolls back; on a key not cached (or whose
    /// answer is void) as a waiting mutation's.
    func completeMutation(_ r: Request) {
        let m = r.mutation!
        let key = m.key
        var applied = false
        var refetch: [String] = []
        if position(key) == nil || r.voided[0], deferredMutations.contains(m.id) {
            if var items = deferred[key] {
                items.removeAll { $0.mutation == m.id }
                deferred[key] = items.isEmpty ? nil : items
            }
            deferredMutations.remove(m.id)
            if !r.voided[0] && position(key) == nil {
                applied = true
                if r.unknown {
                    // Unknown outcome: nothing was shown, nothing rolled back; a fetch in flight may predate it.
                    markInvalidated(key)
                } else if !r.failed, let answer = r.answers[0] {
                    if m.refetch {
                        refetch.append(key)
                    } else {
                        var entry = Entry(key: key, namespace: Self.namespace(of: key), policy: policy(namespace: Self.namespace(of: key)),
                                          value: answer, storedAt: now, storeSeq: nextSeq(), lastWrite: 0, storedBy: r.id)
                        entry.version = r.versions[0]
                        store(entry)
                        applyDeferred(key, fetchedBy: nil)
                        evictOverflow(namespaceOf: key, sparing: key)
                    }
                } else {
                    count(\.rollbacks, key)
                }
            }
        }
        var unknown: [String] = []
        if !r.voided[0], let i = position(key), var log = entries[i].log, log.pending.contains(m.id), r.unknown {
            // Unknown outcome: the change stays shown, the entry turns stale, answers sent before
            // the mutation are discarded, and the key is refetched.
            applied = true
            log.pending.remove(m.id)
            log.baseSeq = max(log.baseSeq, r.id)
            if log.pending.isEmpty {
                entries[i].storedBy = max(entries[i].storedBy, log.baseSeq)
                entries[i].log = nil
            } else {
                entries[i].log = log
            }
            let st = state(entries[i])
            if st != "expired" {
                if st == "fresh" { count(\.invalidations, key) }
                entries[i].invalidated = true
            }
            unknown.append(key)
            unknownOutcomes += 1
        } else if !r.voided[0], let i = position(key), var log = entries[i].log, log.pending.contains(m.id) {
            applied = true
            log.pending.remove(m.id)
            let success = !r.failed && (r.answers[0] != nil || m.refetch)
            if success {
                if m.refetch {
                    refetch.append(key)
                } else if r.id < log.baseSeq && (entries[i].lastPut == log.baseSeq || !log.items.contains { $0.mutation == m.id }) {
                    // The base is newer: a put's, or an answer that has this change.
                    log.items.removeAll { $0.mutation == m.id }
                } else {
                    // Also when an unknown outcome raised the base's request with no newer base.
                    log.base = r.answers[0]!
                    log.baseSeq = max(log.baseSeq, r.id)
                    log.items.removeAll { ($0.reachedServer ?? .max) <= r.id }
                    entries[i].version = log.rebase(r.versions[0])
                }
            } else {
                log.items.removeAll { $0.mutation == m.id }
                count(\.rollbacks, key)
            }
            entries[i].value = log.value
            if log.pending.isEmpty {
                // A refetch's answer older than the mutation must not undo it; a failure wrote nothing.
                let newest = m.refetch && success ? max(log.baseSeq, r.id) : log.baseSeq
                entries[i].storedBy = max(entries[i].storedBy, newest)
                entries[i].log = nil
            } else {
                entries[i].log = log
            }
        }
        log[logIndex[r.id]!].fate = r.failed ? "failed" : applied ? "stored" : "discarded"
        deferredMutations.remove(m.id)
        refetch += unknown.filter { (inFlight($0) ?? 0) < r.id }
        if !refetch.isEmpty && online { _ = send(refetch, refresh: refetch.map { position($0) != nil }) }
        if replaying == r.id {
            replaying = nil
            sendNextQueued()
        }
    }

    // MARK: Commands

    func advance(by ms: Int64) {
        let target = now + ms
        while let item = nextWork(), item.time <= target { run(item) }
        now = target
    }

    func put(_ key: String, _ value: String) -> [String] {
        let s = nextSeq()
        if let i = position(key) {
            if var log = entries[i].log {
                // B11: a put replaces the base and keeps the log applied on top.
                log.base = value
                log.baseSeq = s
                entries[i].log = log
                entries[i].value = log.value
            } else {
                entries[i].value = value
            }
            entries[i].storedAt = now
            entries[i].version = nil
            entries[i].lastWrite = s
            entries[i].lastPut = s
            entries[i].storedBy = s
            entries[i].storeSeq = nextSeq()
            entries[i].expiryCounted = false
            entries[i].invalidated = false
            touch(i)
            return [key]
        }
        store(Entry(key: key, namespace: Self.namespace(of: key),
                    policy: policy(namespace: Self.namespace(of: key)), value: value, storedAt: now, storeSeq: nextSeq(), lastWrite: s,
                    storedBy: s, lastPut: s))
        applyDeferred(key, fetchedBy: nil)
        return [key] + evictOverflow(namespaceOf: key, sparing: key)
    }

    /// An offline read (B5): a cached value in any state is served, flagged; counted by its state.
    func offlineRead(_ key: String) -> Read {
        guard let i = position(key) else {
            count(\.misses, key)
            var r = current(key)
            r.offline = true
            r.error = "offline"
            return r
        }
        noteBoundary(entries[i])
        switch state(entries[i]) {
        case "fresh": count(\.hits, key)
        case "stale": count(\.staleHits, key)
        default: count(\.misses, key)
        }
        touch(i)
        var r = read(entries[position(key)!])
        r.offline = true
        return r
    }

    func get(_ key: String, nowait: Bool, force: Bool = false) -> Read {
        if !online { return offlineRead(key) }
        if let i = position(key), force {
            noteBoundary(entries[i])
            touch(i)
        } else if let i = position(key) {
            noteBoundary(entries[i])
            let st = state(entries[i])
            touch(i)
            let e = entries[position(key)!]
            if st == "fresh" {
                count(\.hits, key)
                return read(e)
            }
            if st == "stale" {
                count(\.staleHits, key)
                if inFlight(key) == nil { _ = send(key, refresh: true) }
                return read(e)
            }
        }
        count(\.misses, key)
        let id: Int
        if !force, let joined = inFlight(key) {
            count(\.joined, key)
            id = joined
        } else {
            id = send(key, refresh: false)
        }
        if nowait { return current(key) }
        while requests.contains(where: { $0.id == id }) { run(nextWork()!) }
        return result(key, outcomes[id]![key]!)
    }

    /// What a reader waiting on a completed request gets for `key`.
    func result(_ key: String, _ outcome: Outcome) -> Read {
        switch outcome {
        case .stored:
            // A bulk answer holding more keys than `max` may evict a key it stored.
            return position(key).map { read(entries[$0], source: "server") } ?? current(key)
        case .discarded:
            return current(key)
        case .failed(let message):
            var r = current(key)
            r.error = message
            // Nothing cached: the failure is the server's answer (a cancelled fetch got none).
            if position(key) == nil && message != "cancelled" { r.source = "server" }
            if let i = position(key), state(entries[i]) == "expired", now - expiresAt(entries[i]) > 0 {
                r.value = nil
            }
            return r
        }
    }

    /// `mget`: one request for the keys `get` would fetch or refresh that have none in flight.
    func mget(_ keys: [String], nowait: Bool) -> [Read] {
        if !online { return keys.map(offlineRead) }
        var toSend: [String] = []
        var refresh: [Bool] = []
        var waitOn: [String: Int?] = [:]     // nil: the bulk request
        var served: [String: Read] = [:]
        for key in keys {
            var st = "absent"
            if let i = position(key) {
                noteBoundary(entries[i])
                st = state(entries[i])
                touch(i)
            }
            switch st {
            case "fresh":
                count(\.hits, key)
                served[key] = read(entries[position(key)!])
            case "stale":
                count(\.staleHits, key)
                if inFlight(key) == nil && !toSend.contains(key) { toSend.append(key); refresh.append(true) }
                served[key] = read(entries[position(key)!])
            default:
                count(\.misses, key)
                if let joined = inFlight(key) {
                    count(\.joined, key)
                    waitOn[key] = .some(joined)
                } else if let j = toSend.firstIndex(of: key) {
                    count(\.joined, key)
                    refresh[j] = false
                    waitOn[key] = .some(nil)
                } else {
                    toSend.append(key); refresh.append(false)
                    waitOn[key] = .some(nil)
                }
            }
        }
        let bulk = toSend.isEmpty ? nil : send(toSend, refresh: refresh)
        func pendingNow(_ r: Read) -> Read { var r = r; r.pending = inFlight(r.key) != nil; return r }
        if nowait {
            return keys.map { waitOn[$0] == nil ? pendingNow(served[$0] ?? current($0)) : current($0) }
        }
        var ids: [Int] = []
        for key in keys { if let target = waitOn[key] { let id = target ?? bulk!; if !ids.contains(id) { ids.append(id) } } }
        for id in ids { while requests.contains(where: { $0.id == id }) { run(nextWork()!) } }
        return keys.map { key in
            guard let target = waitOn[key] else { return pendingNow(served[key] ?? current(key)) }
            return result(key, outcomes[target ?? bulk!]![key]!)
        }
    }

    /// The refetch of every page of a list (SPEC §1.1 Pages): one new request for the keys (each
    /// once), whatever their freshness, as `get --force` does one: a miss each, an access when
    /// cached, joining nothing. Offline, as `mget`.
    func refetch(_ keys: [String], nowait: Bool) -> [Read] {
        var seen = Set<String>()
        let keys = keys.filter { seen.insert($0).inserted }
        if !online { return mget(keys, nowait: nowait) }
        for key in keys {
            if let i = position(key) {
                noteBoundary(entries[i])
                touch(i)
            }
            count(\.misses, key)
        }
        let id = send(keys, refresh: keys.map { _ in false })
        if nowait { return keys.map(current) }
        while requests.contains(where: { $0.id == id }) { run(nextWork()!) }
        return keys.map { result($0, outcomes[id]![$0]!) }
    }

    /// `at D mget KEYS`.
    func schedule(after delay: Int64, mget keys: [String]) {
        scheduled.append(Scheduled(seq: nextSeq(), due: now + delay, keys: keys))
    }

    /// `at D put KEY VALUE`.
    func schedule(after delay: Int64, put key: String, _ value: String) {
        scheduled.append(Scheduled(seq: nextSeq(), due: now + delay, keys: [key], value: value))
    }

    /// `event KEY "VALUE"`: the server's data changes; a cached value is replaced (and B12 then
    /// discards older answers); a first fetch in flight of the key has its answer stored stale.
    func event(_ key: String, _ value: String, version: Int? = nil) -> [String] {
        // Versions: an event not newer than the server's version leaves its data alone.
        if let version {
            if versions[key].map({ version > $0 }) ?? true { data[key] = value; versions[key] = version }
        } else {
            serverWrite(key, value)
        }
        if let i = position(key) {
            // Versions: an event not newer than the entry's is skipped.
            if let version, let held = entries[i].version, version <= held { return [] }
            let s = nextSeq()
            if var log = entries[i].log {
                // While mutations are pending, events join the log (B11).
                log.items.append(LogItem(seq: s, value: value, mutation: nil, reachedServer: s, version: version))
                entries[i].log = log
            }
            if let version { entries[i].version = max(entries[i].version ?? 0, version) }
            entries[i].value = value
            entries[i].lastWrite = s
            return [key]
        }
        if inFlight(key) != nil { markInvalidated(key) }
        return []
    }

    /// A push whose rule refreshes `key`: a new request even with one in flight (whose answer is
    /// then stored stale), for a cached key or one whose first fetch is in flight.
    /// Offline nothing can be sent: the key is invalidated instead (counted only if it was fresh).
    func pushRefresh(_ key: String) -> [String] {
        _ = nextSeq()
        guard position(key) != nil || inFlight(key) != nil else { return [] }
        if !online {
            _ = nextSeq()
            markInvalidated(key)
            guard let i = position(key), state(entries[i]) != "expired" else { return [] }
            let wasFresh = state(entries[i]) == "fresh"
            entries[i].invalidated = true
            if wasFresh { count(\.invalidations, key) }
            return wasFresh ? [key] : []
        }
        if inFlight(key) != nil { markInvalidated(key) }
        _ = send([key], refresh: [true])
        return [key]
    }

    func peek(_ key: String) -> Read {
        if let i = position(key) { noteBoundary(entries[i]) }
        return current(key)
    }

    /// `evict` and `clear` drop the queued mutations and waiting patches of the keys they remove.
    private func dropMutations(where inScope: (String) -> Bool) {
        queue.removeAll { inScope($0.key) }
        guard !deferredMutations.isEmpty else { return }
        for key in deferred.keys where inScope(key) { deferred[key] = nil }
        let live = Set(queue.map(\.id) + requests.compactMap { $0.mutation?.id })
        deferredMutations.formIntersection(live)
        for key in deferred.keys {
            deferred[key]!.removeAll { !live.contains($0.mutation ?? 0) }
            if deferred[key]!.isEmpty { deferred[key] = nil }
        }
    }

    func evict(_ key: String) -> [String] {
        void(key)
        dropMutations { $0 == key }
        guard position(key) != nil else { return [] }
        remove(key)
        return [key]
    }

    func clear(namespace: String?) -> [String] {
        let inScope = { (key: String) in namespace.map { Self.namespace(of: key) == $0 } ?? true }
        for r in requests { for key in r.keys where inScope(key) { void(key) } }
        dropMutations(where: inScope)
        let removed = entries.filter { inScope($0.key) }.map(\.key)
        for key in removed { remove(key) }
        return removed
    }

    /// Requests in flight by (due time, id), as `pending` lists them.
    func pendingRequests() -> [Request] {
        requests.sorted { ($0.completesAt, $0.id) < ($1.completesAt, $1.id) }
    }

    /// `keys`: key, state and age of every entry, least recent first.
    func keys() -> [(key: String, state: String, ageMs: Int64)] {
        entries.map { ($0.key, state($0), now - $0.storedAt) }
    }

    private func noteBoundary(_ e: Entry) {
        let p = e.policy
        if now == expiresAt(e) || (p.stale.map { now == e.storedAt + $0 } ?? false) { boundaryReads += 1 }
    }
}
