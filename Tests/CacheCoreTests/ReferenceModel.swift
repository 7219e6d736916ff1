import CacheCore

/// A deliberately naive model of the parts of SPEC §1/§1.1 that `put`, `get` (blocking and
/// `--nowait`), `peek`, `keys`, `advance`, `evict` and `clear` touch, for the model-based test,
/// with each namespace's eviction policy (LRU, FIFO, SIEVE, LFU) found by sorting and scanning.
///
/// Everything is a plain array searched linearly: entries in recency order (least recent first),
/// requests in flight in the order sent. Times are ms since the clock's start. Sequence numbers
/// only need the same relative order as the engine's: they are drawn, in the same order, for each
/// `put`, each request sent and each store, which is all the rules below compare.
///
/// The server is fixed: it holds `"srv-KEY"` for every key except those in `missing`, which
/// answer `not found`; every request takes `latency` ms; it is always online.
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
        /// Eviction state: its namespace's counter when stored (FIFO, SIEVE) or last accessed (LFU).
        var rank = 0
        /// LFU: accesses since stored, 1 when new.
        var uses = 1
        /// SIEVE: read since the hand last passed it.
        var visited = false
    }

    struct Request {
        var id: Int
        var key: String
        var completesAt: Int64
        var refresh: Bool
        /// `evict`, `clear` or LRU eviction voided its response (fate `discarded`).
        var voided = false
    }

    enum Outcome { case stored, discarded, failed(String) }

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

        var description: String {
            "\(key) state=\(state) value=\(value ?? "null") age=\(ageMs.map(String.init) ?? "-") "
                + "expires_in=\(expiresInMs.map(String.init) ?? "-") source=\(source) "
                + "error=\(error ?? "-") pending=\(pending)"
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
    private(set) var entries: [Entry] = []
    private(set) var requests: [Request] = []
    /// Counters in total and by namespace.
    private(set) var total = Stats()
    private(set) var stats: [String: Stats] = [:]
    /// The server log: when each request was sent, its key and its fate, in the order sent.
    private(set) var log: [(atMs: Int64, key: String, fate: String)] = []
    private var logIndex: [Int: Int] = [:]
    private var seq = 0
    private var outcomes: [Int: Outcome] = [:]
    /// The next rank of each namespace.
    private var nextRank: [String: Int] = [:]
    /// SIEVE: the key the hand of each namespace rests on (none: the next search starts at the oldest).
    private var hand: [String: String] = [:]
    /// How many reads saw an entry exactly at its stale or expiry instant (a coverage check).
    private(set) var boundaryReads = 0

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
        if let stale = e.policy.stale, now >= e.storedAt + stale { return "stale" }
        return "fresh"
    }

    func position(_ key: String) -> Int? { entries.firstIndex { $0.key == key } }

    /// The request whose response would be stored for `key`: the one not voided.
    func inFlight(_ key: String) -> Int? { requests.first { $0.key == key && !$0.voided }?.id }

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
    func evictOverflow(namespaceOf key: String, sparing: String? = nil) -> [String] {
        let ns = Self.namespace(of: key)
        guard let max = policy(namespace: ns).max else { return [] }
        var evicted: [String] = []
        while entries.filter({ $0.namespace == ns }).count > max {
            let victim = victim(ns, sparing: sparing)
            void(victim)
            remove(victim)
            count(\.evictions, victim)
            evicted.append(victim)
        }
        return evicted
    }

    func void(_ key: String) {
        for i in requests.indices where requests[i].key == key { requests[i].voided = true }
    }

    func send(_ key: String, refresh: Bool) -> Int {
        let id = nextSeq()
        requests.append(Request(id: id, key: key, completesAt: now + latency, refresh: refresh))
        logIndex[id] = log.count
        log.append((now, key, "pending"))
        count(\.requests, key)
        if refresh { count(\.refreshes, key) }
        return id
    }

    // MARK: Scheduled work

    enum Work { case completion(Int), expiry(String) }

    /// The earliest scheduled item, by (time, sequence number).
    func nextWork() -> (time: Int64, seq: Int, work: Work)? {
        var best: (time: Int64, seq: Int, work: Work)?
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
        case .completion(let id):
            let r = requests.first { $0.id == id }!
            requests.removeAll { $0.id == id }
            let outcome = complete(r)
            outcomes[id] = outcome
            let fate = switch outcome { case .stored: "stored"; case .discarded: "discarded"; case .failed: "failed" }
            log[logIndex[id]!].fate = fate
        }
    }

    func complete(_ r: Request) -> Outcome {
        if r.voided { return .discarded }
        if missing.contains(r.key) {
            count(r.refresh ? \.refreshFailures : \.fetchFailures, r.key)
            return .failed("not found")
        }
        if let i = position(r.key) {
            if r.id < entries[i].lastWrite || r.id < entries[i].storedBy { return .discarded }
            entries[i].value = "srv-\(r.key)"
            entries[i].storedAt = now
            entries[i].storeSeq = nextSeq()
            entries[i].storedBy = r.id
            entries[i].expiryCounted = false
            return .stored
        }
        store(Entry(key: r.key, namespace: Self.namespace(of: r.key),
                    policy: policy(namespace: Self.namespace(of: r.key)), value: "srv-\(r.key)", storedAt: now, storeSeq: nextSeq(),
                    lastWrite: 0, storedBy: r.id))
        _ = evictOverflow(namespaceOf: r.key, sparing: r.key)
        return .stored
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
            entries[i].value = value
            entries[i].storedAt = now
            entries[i].lastWrite = s
            entries[i].storedBy = s
            entries[i].storeSeq = nextSeq()
            entries[i].expiryCounted = false
            touch(i)
            return [key]
        }
        store(Entry(key: key, namespace: Self.namespace(of: key),
                    policy: policy(namespace: Self.namespace(of: key)), value: value, storedAt: now, storeSeq: nextSeq(), lastWrite: s, storedBy: s))
        return [key] + evictOverflow(namespaceOf: key, sparing: key)
    }

    func get(_ key: String, nowait: Bool) -> Read {
        if let i = position(key) {
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
        if let joined = inFlight(key) {
            count(\.joined, key)
            id = joined
        } else {
            id = send(key, refresh: false)
        }
        if nowait { return current(key) }
        while requests.contains(where: { $0.id == id }) { run(nextWork()!) }
        switch outcomes[id]! {
        case .stored:
            return read(entries[position(key)!], source: "server")
        case .discarded:
            return current(key)
        case .failed(let message):
            var r = current(key)
            r.error = message
            if let i = position(key), state(entries[i]) == "expired", now - expiresAt(entries[i]) > 0 {
                r.value = nil
            }
            return r
        }
    }

    func peek(_ key: String) -> Read {
        if let i = position(key) { noteBoundary(entries[i]) }
        return current(key)
    }

    func evict(_ key: String) -> [String] {
        void(key)
        guard position(key) != nil else { return [] }
        remove(key)
        return [key]
    }

    func clear(namespace: String?) -> [String] {
        let inScope = { (key: String) in namespace.map { Self.namespace(of: key) == $0 } ?? true }
        for r in requests where inScope(r.key) { void(r.key) }
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
