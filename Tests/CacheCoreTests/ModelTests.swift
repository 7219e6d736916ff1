@_spi(Engine) @testable import CacheCore
import CacheServer
import Foundation
import Testing
import TestSupport

/// Model-based test: seeded random command sequences run on the engine and on `ReferenceModel`,
/// compared after every command — the command's result, `keys` (order, states, ages), the clock,
/// requests in flight, the statistics and the server log — with the engine checking its own
/// invariants after each command.
///
/// Four namespaces with a small `max`, one per eviction policy (LRU, FIFO, SIEVE, LFU), make
/// eviction frequent; durations are chosen so reads land
/// exactly on stale and expiry instants; blocking reads of absent or expired keys fetch from a
/// server with fixed data and latency (one key it does not have). On a divergence the test prints
/// the seed, the shortest failing prefix and a smaller sequence that still fails, as shell commands.
///
/// Bulk reads (blocking, `--nowait`, and scheduled by `at`, which never block) may hold more keys of
/// a namespace than its `max`; key events and pushes whose rule refreshes a key land while fetches
/// of it are in flight, first fetches included; the server goes offline and back (reads served
/// flagged, a push's refresh invalidating instead).
///
/// Requests of one key overlap (plain, forced, failing, joined): `server latency D KEY` makes a
/// later request answer first and `server fail 1 KEY` fails the next one. Optimistic mutations
/// (`mutate`, `--refetch`) reach cached keys and keys not cached, in every eviction policy, and
/// queue offline across evictions; `at D put` and `at D mget` fall due at the same instants as
/// expiries, also after the entry at the head of a namespace's expiries was removed.
///
/// Versioned events (SPEC §1.1 Versions) number keys on the server: later changes (events,
/// mutations) raise them, answers carry them, and events and answers older than an entry's
/// version are ignored, also while mutations are pending.
///
/// Lost answers (`server next KEY --lost-answer`, SPEC §1.1 Unknown outcome) fail fetches and
/// leave mutations of unknown outcome: the server applied them, their entries turn stale and are
/// refetched, answers sent before them are discarded.
///
/// Not covered here (other suites test them): `invalidate`, `expire`, entity events, pessimistic
/// mutations, other scripted answers and policy changes during a run.
@Suite struct ModelTests {
    /// 2,000 in `make test`; `CACHESH_MODEL_SEQUENCES=N swift test --filter ModelTests` runs a
    /// longer search (seeds 0 to N-1, in the same chunks).
    static let sequences = ProcessInfo.processInfo.environment["CACHESH_MODEL_SEQUENCES"].flatMap { Int($0) }
        .map { max($0, chunks) } ?? 2_000
    static let length = 200
    static let chunks = 8

    static let policies: [String: ReferenceModel.NamespacePolicy] = [
        "a": .init(ttl: 600, stale: 300, max: 3),
        "b": .init(ttl: 400, stale: nil, max: 2, eviction: .fifo),
        "c": .init(ttl: 250, stale: 0, max: 3, eviction: .sieve),
        "d": .init(ttl: 600, stale: 100, max: 2, eviction: .lfu),
    ]
    static let keys = ["a:1", "a:2", "a:3", "a:4", "b:1", "b:2", "b:3", "b:gone", "c:1", "c:2", "c:3", "c:4",
                       "d:1", "d:2", "d:3", "home"]
    static let missing: Set<String> = ["b:gone"]
    static let latency: Int64 = 100
    static let steps: [Int64] = [0, 1, 49, 50, 99, 100, 150, 250, 300]
    /// `server latency D KEY`: a request sent later may answer first.
    static let latencies: [Int64] = [50, 100, 250, 400]
    /// Delays of `at`: the steps, and the namespaces' ttls, so that scheduled commands fall due at
    /// the instants entries stored with them expire.
    static let atDelays: [Int64] = steps + [400, 600]

    enum Op: CustomStringConvertible {
        case put(String, Int)
        case get(String, nowait: Bool)
        case peek(String)
        case advance(Int64)
        case evict(String)
        case clear(String?)
        case keys
        case mget([String], nowait: Bool)
        case atMget(Int64, [String])
        /// `pages LIST --refetch`: one new request for the keys (SPEC §1.1 Pages).
        case refetch([String], nowait: Bool)
        case atPut(Int64, String, Int)
        case force(String, nowait: Bool)
        case mutate(String, Int, refetch: Bool)
        case fail(String)
        case latency(String, Int64)
        case event(String, Int)
        /// `event patch KEY "eN" version=V` (SPEC §1.1 Versions).
        case versionedEvent(String, Int, version: Int)
        case push(String)
        /// `server next KEY --lost-answer` (SPEC §1.1 Unknown outcome).
        case lostAnswer(String)
        case offline
        case online

        var description: String {
            switch self {
            case .put(let key, let n): "put \(key) v\(n)"
            case .get(let key, let nowait): "get \(key)" + (nowait ? " --nowait" : "")
            case .peek(let key): "peek \(key)"
            case .advance(let ms): "advance \(ms)ms"
            case .evict(let key): "evict \(key)"
            case .clear(let ns): "clear" + (ns.map { " \($0)" } ?? "")
            case .keys: "keys"
            case .mget(let keys, let nowait): "mget " + keys.joined(separator: " ") + (nowait ? " --nowait" : "")
            case .atMget(let ms, let keys): "at \(ms)ms mget " + keys.joined(separator: " ")
            case .refetch(let keys, let nowait): "refetch " + keys.joined(separator: " ") + (nowait ? " --nowait" : "")
            case .atPut(let ms, let key, let n): "at \(ms)ms put \(key) v\(n)"
            case .force(let key, let nowait): "get \(key) --force" + (nowait ? " --nowait" : "")
            case .mutate(let key, let n, let refetch): "mutate \(key) \"m\(n)\"" + (refetch ? " --refetch" : "")
            case .fail(let key): "server fail 1 \(key)"
            case .latency(let key, let ms): "server latency \(ms)ms \(key)"
            case .event(let key, let n): "event \(key) \"e\(n)\""
            case .versionedEvent(let key, let n, let v): "event patch \(key) \"e\(n)\" version=\(v)"
            case .push(let key): "push changed key=\(key)"
            case .lostAnswer(let key): "server next \(key) --lost-answer"
            case .offline: "server offline"
            case .online: "server online"
            }
        }
    }

    /// What a run of the whole test saw, to prove the interesting cases were reached.
    struct Coverage {
        var boundaryReads = 0
        var unknownOutcomes = 0
        var counters: [String: Int] = [:]
    }

    /// Yields between sequences: on a two-core machine a chunk that held its thread of the test
    /// pool for half a minute stopped half of every other test (time limits, real clocks) with it.
    @Test(arguments: 0..<chunks)
    func engineAgreesWithReferenceModel(chunk: Int) async {
        var coverage = Coverage()
        let perChunk = Self.sequences / Self.chunks
        for seed in UInt64(chunk * perChunk)..<UInt64((chunk + 1) * perChunk) {
            let ops = Self.generate(seed: seed)
            if let failure = Self.replay(ops, coverage: &coverage) {
                let prefix = Array(ops[...failure.index])
                let smaller = Self.shrink(prefix)
                Issue.record("""
                    seed \(seed): engine and model differ at command \(failure.index + 1): \(failure.message)
                    shortest failing prefix (\(prefix.count) commands):
                    \(prefix.map { "  \($0)" }.joined(separator: "\n"))
                    smaller failing sequence (\(smaller.ops.count) commands), differing at the last one: \(smaller.message)
                    \(smaller.ops.map { "  \($0)" }.joined(separator: "\n"))
                    """)
                return
            }
            await Task.yield()
        }
        #expect(coverage.boundaryReads > 0, "no read landed exactly on a stale or expiry instant")
        #expect(coverage.unknownOutcomes > 0, "no mutation of a cached entry had its answer lost")
        for counter in ["hits", "stale_hits", "misses", "joined", "refreshes", "fetch_failures", "refresh_failures",
                        "evictions", "expirations", "invalidations", "rollbacks"] {
            #expect(coverage.counters[counter, default: 0] > 0, "\(counter) never moved")
        }
    }

    /// A confirmation at a version drops the late event of that version that joined the log,
    /// whose version the entry had not reached (an unversioned event moved the server past it):
    /// a case the random sequences rarely reach.
    @Test func aVersionedConfirmationAgreesWithTheModel() {
        var coverage = Coverage()
        let ops: [Op] = [.versionedEvent("a:1", 0, version: 1), .get("a:1", nowait: false), .event("a:1", 2),
                         .mutate("a:1", 3, refetch: false), .versionedEvent("a:1", 4, version: 3), .peek("a:1"),
                         .advance(100), .peek("a:1"), .versionedEvent("a:1", 5, version: 3), .peek("a:1"),
                         .versionedEvent("a:1", 6, version: 4), .peek("a:1")]
        let failure = Self.replay(ops, coverage: &coverage)
        #expect(failure == nil, "\(failure?.message ?? "")")
    }

    /// The comparison is not vacuous: a model whose reads and puts leave recency alone disagrees.
    @Test func divergenceIsReportedForAWrongModel() {
        var coverage = Coverage()
        let ops = (0..<UInt64(20)).map { Self.generate(seed: $0) }
        let failures = ops.compactMap { Self.replay($0, coverage: &coverage, model: { $0.breakTouch = true }) }
        #expect(!failures.isEmpty)
    }

    /// Nor for the eviction policies: a model that evicts as LRU everywhere disagrees, in each
    /// namespace that is not LRU.
    @Test func divergenceIsReportedForAModelIgnoringThePolicy() {
        var coverage = Coverage()
        let ops = (0..<UInt64(40)).map { Self.generate(seed: $0) }
        let failures = ops.compactMap { Self.replay($0, coverage: &coverage, model: { $0.evictAsLRU = true }) }
        #expect(!failures.isEmpty)
        for ns in ["b:", "c:", "d:"] {
            #expect(failures.contains { $0.message.contains(ns) }, "no divergence involves \(ns)")
        }
    }

    // MARK: Generating

    static func generate(seed: UInt64) -> [Op] {
        var rng = SeededGenerator(seed: seed)
        var ops: [Op] = []
        var lastKey = keys[0]
        // Odd seeds stay on one key: three commands in four name the key of the one before (runs
        // of four on average), so that requests, failures, latencies and mutations of one key
        // meet. Even seeds move between keys (one command in three stays), so that entries of one
        // namespace evict and expire around each other.
        let stay: UInt64 = seed % 2 == 1 ? 4 : 3
        for n in 0..<length {
            let key = (seed % 2 == 1 ? rng.next() % stay != 0 : rng.next() % stay == 0)
                ? lastKey : keys[Int(rng.next() % UInt64(keys.count))]
            lastKey = key
            let roll = rng.next() % 129
            /// 2 to 4 keys, mostly of one namespace so an answer can hold more of it than its `max`.
            func bulk() -> [String] {
                let n = 2 + Int(rng.next() % 3)
                let pool = rng.next() % 2 == 0 ? keys.filter { $0.hasPrefix(key.prefix(2)) } : keys
                return (0..<n).map { _ in pool[Int(rng.next() % UInt64(pool.count))] }
            }
            switch roll {
            case 0..<20: ops.append(.put(key, n))
            case 20..<36: ops.append(.get(key, nowait: false))
            case 36..<48: ops.append(.get(key, nowait: true))
            case 48..<54: ops.append(.peek(key))
            case 54..<72: ops.append(.advance(steps[Int(rng.next() % UInt64(steps.count))]))
            case 72..<76: ops.append(.evict(key))
            case 76..<79: ops.append(.mget(bulk(), nowait: false))
            case 79..<81: ops.append(.mget(bulk(), nowait: true))
            case 81..<84: ops.append(.atMget(atDelays[Int(rng.next() % UInt64(atDelays.count))], bulk()))
            case 84..<89: ops.append(.event(key, n))
            case 89..<92: ops.append(.push(key))
            case 92: ops.append(rng.next() % 2 == 0 ? .offline : .online)
            case 95..<99: ops.append(.versionedEvent(key, n, version: 1 + Int(rng.next() % 6)))
            case 99: ops.append(.refetch(bulk(), nowait: rng.next() % 2 == 0))
            case 93..<95:
                let names: [String?] = [nil, "a", "b", "c", "d"]
                ops.append(.clear(names[Int(rng.next() % 5)]))
            case 100..<104: ops.append(.force(key, nowait: rng.next() % 2 == 0))
            case 104..<111: ops.append(.mutate(key, n, refetch: rng.next() % 2 == 0))
            case 111..<116: ops.append(.fail(key))
            case 116..<121: ops.append(.latency(key, latencies[Int(rng.next() % UInt64(latencies.count))]))
            case 121..<124: ops.append(.atPut(atDelays[Int(rng.next() % UInt64(atDelays.count))], key, n))
            case 124: ops.append(.offline)
            case 125: ops.append(.online)
            case 126..<129: ops.append(.lostAnswer(key))
            default: ops.append(.keys)
            }
        }
        return ops
    }

    // MARK: Running

    struct Failure {
        var index: Int
        var message: String
    }

    /// Runs `ops` on a fresh engine and a fresh model; the first command after which they differ.
    static func replay(_ ops: [Op], coverage: inout Coverage,
                       model configure: (ReferenceModel) -> Void = { _ in }) -> Failure? {
        let origin = SimulatedServer()
        origin.latency = latency
        for key in keys where !missing.contains(key) { origin.set(key, .string("srv-\(key)"), at: 0) }
        let engine = CacheEngine(origin: origin)
        // Every command ends with a check of the engine's invariants; a violation is a divergence
        // like any other (reported with the seed and shrunk), not a crash of the test process.
        engine.checksInvariants = true
        var broken: [String] = []
        engine.invariantFailure = { broken = $0 }
        try! engine.configure(CacheConfiguration(namespaces: [:], push: ["changed": PushRule(refresh: ["{key}"])]))
        for (name, p) in policies.sorted(by: { $0.key < $1.key }) {
            _ = try! engine.defineNamespace(name, PolicyChange(ttl: p.ttl, stale: .some(p.stale), max: .some(p.max), eviction: p.eviction))
        }
        // `at D mget` and `at D put`: the delegate runs each scheduled command as the shell does,
        // never blocking.
        let delegate = EventLog()
        var scheduledOps: [Int: Op] = [:]
        delegate.onScheduled = { token in
            switch scheduledOps.removeValue(forKey: token)! {
            // Not told `nowait`: the engine must not block in a scheduled command by itself (SPEC §2).
            case .atMget(_, let keys): _ = try! engine.mget(keys)
            case .atPut(_, let key, let n): engine.put(key, .string("v\(n)"))
            default: preconditionFailure("only at commands are scheduled")
            }
        }
        engine.delegate = delegate
        let model = ReferenceModel(policies: policies, latency: latency, missing: missing)
        configure(model)

        for (index, op) in ops.enumerated() {
            engine.beginUnitOfWork()
            var mismatch: (got: String, want: String)?
            switch op {
            case .put(let key, let n):
                let (got, want) = (engine.put(key, .string("v\(n)")), model.put(key, "v\(n)"))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .get(let key, let nowait):
                let (got, want) = (read(try! engine.get(key, nowait: nowait)), model.get(key, nowait: nowait))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .peek(let key):
                let (got, want) = (read(engine.peek(key)), model.peek(key))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .advance(let ms):
                try! engine.advance(by: ms)
                model.advance(by: ms)
            case .evict(let key):
                let (got, want) = (engine.evict(key), model.evict(key))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .clear(let ns):
                let (got, want) = (engine.clear(namespace: ns), model.clear(namespace: ns))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .mget(let keys, let nowait):
                let (got, want) = (try! engine.mget(keys, nowait: nowait).map(read), model.mget(keys, nowait: nowait))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .refetch(let keys, let nowait):
                let (got, want) = (try! engine.refetch(keys, nowait: nowait).map(read), model.refetch(keys, nowait: nowait))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .atMget(let ms, let keys):
                scheduledOps[index] = op
                engine.schedule(after: ms, token: index)
                model.schedule(after: ms, mget: keys)
            case .atPut(let ms, let key, let n):
                scheduledOps[index] = op
                engine.schedule(after: ms, token: index)
                model.schedule(after: ms, put: key, "v\(n)")
            case .force(let key, let nowait):
                let (got, want) = (read(try! engine.get(key, force: true, nowait: nowait)), model.get(key, nowait: nowait, force: true))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .mutate(let key, let n, let refetch):
                let got = try! engine.mutate(key, patch: try! Patch(.string("m\(n)")), options: MutationOptions(refetch: refetch))
                let want = model.mutate(key, "m\(n)", refetch: refetch)
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .fail(let key):
                origin.fail(next: 1, key: key)
                model.failures[key] = 1
            case .lostAnswer(let key):
                origin.queue(ScriptedAnswer(latency: nil, outcome: .lostAnswer("answer lost")), for: key)
                model.lostAnswers[key, default: 0] += 1
            case .latency(let key, let ms):
                origin.latencies[key] = ms
                model.latencies[key] = ms
            case .event(let key, let n):
                origin.set(key, .string("e\(n)"), at: engine.now)
                let (got, want) = (try! engine.event(key, patch: try! Patch(.string("e\(n)"))), model.event(key, "e\(n)"))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .versionedEvent(let key, let n, let v):
                origin.applyEvent(key, .string("e\(n)"), at: engine.now, version: UInt64(v))
                let got = try! engine.event(key, patch: try! Patch(.string("e\(n)")), version: UInt64(v))
                let want = model.event(key, "e\(n)", version: v)
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .push(let key):
                let (got, want) = (try! engine.push("changed", arguments: ["key": key]), model.pushRefresh(key))
                if got != want { mismatch = ("\(got)", "\(want)") }
            case .offline:
                origin.isOnline = false
                model.online = false
            case .online:
                origin.isOnline = true
                engine.originDidComeOnline()
                model.goOnline()
            case .keys:
                let got = engine.keys(matching: Glob("[ab]:*")).map { "\($0.key) \($0.state) \($0.ageMs)" }
                let want = model.keys().filter { $0.key.hasPrefix("a:") || $0.key.hasPrefix("b:") }
                    .map { "\($0.key) \($0.state) \($0.ageMs)" }
                if got != want { mismatch = ("\(got)", "\(want)") }
            }
            if !broken.isEmpty {
                return Failure(index: index, message: "after `\(op)` invariants are broken:\n    " + broken.joined(separator: "\n    "))
            }
            if let mismatch {
                return Failure(index: index, message: "`\(op)` gave\n    \(mismatch.got)\n  the model says\n    \(mismatch.want)")
            }
            if let message = compare(after: op, engine, model, final: index == ops.count - 1) {
                return Failure(index: index, message: message)
            }
        }
        coverage.boundaryReads += model.boundaryReads
        coverage.unknownOutcomes += model.unknownOutcomes
        for (name, value) in model.total.fields { coverage.counters[name, default: 0] += value }
        return nil
    }

    /// Compares what `keys`, `pending`, `stats` and `server log` would show.
    static func compare(after op: Op, _ engine: CacheEngine, _ model: ReferenceModel, final: Bool) -> String? {
        let clock = engine.now - engine.clockStart
        if clock != model.now { return "after `\(op)` the clock is \(clock), the model says \(model.now)" }
        let keys = engine.keys(), entries = model.entries
        let sameKeys = keys.count == entries.count && keys.indices.allSatisfy { i in
            keys[i].key == entries[i].key && keys[i].state.rawValue == model.state(entries[i])
                && keys[i].ageMs == model.now - entries[i].storedAt
        }
        if !sameKeys {
            return "after `\(op)` keys are\n    \(keys.map { "\($0.key) \($0.state) \($0.ageMs)" })\n  the model says\n    "
                + "\(model.keys().map { "\($0.key) \($0.state) \($0.ageMs)" })"
        }
        let pending = engine.pendingWork().filter { if case .request = $0.kind { true } else { false } }
        let requests = model.pendingRequests()
        let samePending = pending.count == requests.count && pending.indices.allSatisfy { i in
            pending[i].kind == .request(requests[i].isFetch ? .fetch : .mutate, keys: requests[i].keys)
                && pending[i].dueAt == requests[i].completesAt + engine.clockStart
        }
        if !samePending {
            let text = pending.map { "\($0.kind)@\(($0.dueAt ?? -1) - engine.clockStart)" }
            return "after `\(op)` pending is \(text), the model says "
                + "\(requests.map { "\($0.isFetch ? "fetch" : "mutate") \($0.keys)@\($0.completesAt)" })"
        }
        // The totals after each command; every namespace's counters after the last one.
        if engine.stats() != model.total {
            return "after `\(op)` stats are \(engine.stats().fields), the model says \(model.total.fields)"
        }
        if final {
            for ns in ["a", "b", "c", "d", "default"] where engine.stats(namespace: ns) != model.stats[ns] ?? Stats() {
                return "after `\(op)` stats \(ns) are \(engine.stats(namespace: ns).fields), "
                    + "the model says \((model.stats[ns] ?? Stats()).fields)"
            }
        }
        // The server log: its length and last line after each command, all of it at the end.
        let log = engine.requestLog
        let lines = final ? log.count : min(1, log.count)
        var sameLog = log.count == model.log.count
        for i in (log.count - lines)..<log.count where sameLog {
            let (line, expected) = (log[i], model.log[i])
            sameLog = line.atMs == expected.atMs && line.keys == expected.keys && line.fate.rawValue == expected.fate
        }
        if !sameLog {
            return "after `\(op)` the server log ends \(log.suffix(lines).map { "\($0.atMs) \($0.keys) \($0.fate)" }), "
                + "the model says \(model.log.suffix(lines).map { "\($0.atMs) \($0.keys) \($0.fate)" })"
        }
        return nil
    }

    /// A read result in the model's terms (string values unquoted).
    static func read(_ r: ReadResult) -> ReferenceModel.Read {
        var value = r.value.map { value -> String in if case .string(let s) = value { s } else { value.compactText } }
        if !r.tags.isEmpty { value = "unexpected tags=\(r.tags)" }
        return ReferenceModel.Read(key: r.key, state: r.state.rawValue, value: value, ageMs: r.ageMs,
                                   expiresInMs: r.expiresInMs, source: r.source.rawValue, error: r.error, pending: r.pending,
                                   offline: r.offline)
    }

    // MARK: Shrinking

    /// Drops commands one at a time, latest first, keeping each drop after which the sequence still
    /// fails; cuts at the new first divergence each time.
    static func shrink(_ ops: [Op]) -> (ops: [Op], message: String) {
        var coverage = Coverage()
        var current = ops
        var message = replay(current, coverage: &coverage)?.message ?? ""
        var i = current.count - 2
        while i >= 0 {
            var candidate = current
            candidate.remove(at: i)
            if let failure = replay(candidate, coverage: &coverage) {
                current = Array(candidate[...failure.index])
                message = failure.message
                i = min(i, current.count - 1)
            }
            i -= 1
        }
        return (current, message)
    }
}

