/// A request in flight: explicit state, completed by the scheduler at start + latency.
struct InFlight {
    enum Answer {
        case keys(Result<[KeyAnswer], OriginFailure>)
        case validation(Result<[String: NamespaceVerdict], OriginFailure>)
    }
    let id: UInt64
    let kind: RequestKind
    var keys: [String]
    let startedAt: Int64
    var completesAt: Int64?
    /// Per key: a background refresh (true) or a blocking fetch (false).
    var refresh: [Bool]
    /// Per key: its response is void (`clear`, `evict`, memory warning, LRU eviction).
    var voided: [Bool]
    /// Per key: an invalidation arrived after the request was sent; store the response as stale.
    var invalidatedAfterSend: [Bool]
    /// Per key: the ids of the `event entity` events that arrived while this was in flight and
    /// could not patch the key (SPEC §1.1, events during a fetch); an answer embedding one is
    /// stored stale. Decided when the answer is stored, so a live cache and its replay agree.
    var entityEvents: [[String]] = []
    var answer: Answer?
    var mutation: QueuedMutation?
    var validation: [String: Int64] = [:]
    var waiters = 0
}

/// What became of one key of a completed fetch, for the readers waiting on it.
enum KeyOutcome: Equatable {
    case stored
    case discarded
    case failed(String)
}

/// The requests in flight and what waiting readers need of them: the requests by id, by key,
/// the fetch each key joins, and the outcomes of completed requests that readers waited on.
///
/// Invariants (`invariantViolations()`):
/// - the key index is the inverse of the requests: each key leads to the ids of the requests
///   holding it, in increasing order, once per time the request holds it;
/// - each key's fetch in flight is a fetch request holding the key, its response not void;
/// - every request has one refresh, void and invalidation flag per key, and no negative waiters;
/// - outcomes are kept only for requests no longer in flight.
struct RequestTable {
    /// Requests in flight by id (`CacheEngine.requests`).
    fileprivate(set) var byID: [UInt64: InFlight] = [:]
    /// Key → ids of the requests in flight holding it, oldest first.
    private(set) var byKey: [String: [UInt64]] = [:]
    /// Key → the fetch a read of it joins (`CacheEngine.fetchInFlight`).
    fileprivate(set) var fetchInFlight: [String: UInt64] = [:]
    /// Per completed fetch that readers wait on: each key's outcome (`CacheEngine.keyOutcomes`).
    fileprivate(set) var keyOutcomes: [UInt64: [String: KeyOutcome]] = [:]
    /// Per completed validation that a caller waits on: its result.
    private(set) var validationOutcomes: [UInt64: ValidationResult] = [:]

    init() {}

    /// The requests and fetches in flight of a snapshot (`fetchInFlight` as it was: a key whose
    /// response was voided has none even if a fetch holding it is in flight).
    /// - Complexity: O(r + keys in flight).
    init(restoring requests: [InFlight], fetchInFlight: [String: UInt64]) {
        for request in requests {
            byID[request.id] = request
            for key in request.keys { byKey[key, default: []].append(request.id) }
        }
        self.fetchInFlight = fetchInFlight
    }

    var isEmpty: Bool { byID.isEmpty }

    /// The ids in flight, oldest first.
    /// - Complexity: O(r log r).
    var sortedIDs: [UInt64] { byID.keys.sorted() }

    subscript(id: UInt64) -> InFlight? { byID[id] }

    /// The fetch in flight a read of `key` would join.
    /// - Complexity: O(1).
    @inline(__always)
    func fetch(forKey key: String) -> UInt64? {
        fetchInFlight.isEmpty ? nil : fetchInFlight[key]
    }

    /// Forgets the outcomes of the last unit of work's requests.
    /// - Complexity: O(outcomes kept).
    mutating func beginUnitOfWork() {
        // Most units send nothing: an empty collection is left alone (emptying one costs a call).
        if !keyOutcomes.isEmpty { keyOutcomes.removeAll(keepingCapacity: true) }
        if !validationOutcomes.isEmpty { validationOutcomes.removeAll(keepingCapacity: true) }
    }

    /// Adds a sent request; a fetch becomes the one each of its keys' reads join.
    /// - Complexity: O(keys).
    mutating func add(_ request: InFlight) {
        if request.kind == .fetch {
            for key in request.keys { fetchInFlight[key] = request.id }
        }
        for key in request.keys { byKey[key, default: []].append(request.id) }
        byID[request.id] = request
    }

    /// Takes a completing request out of the table and its keys' indexes.
    /// - Complexity: O(keys · requests in flight per key).
    mutating func remove(_ id: UInt64) -> InFlight? {
        guard let request = byID.removeValue(forKey: id) else { return nil }
        for key in request.keys {
            var ids = byKey.removeValue(forKey: key) ?? []
            ids.removeAll { $0 == id }
            if !ids.isEmpty { byKey[key] = ids }
            if fetchInFlight[key] == id {
                // An older fetch of the key may still be in flight (a `get --force` sent after it
                // completed first): reads join that one now, not a request of their own.
                fetchInFlight[key] = newestFetch(of: key, among: ids)
            }
        }
        return request
    }

    /// The newest fetch among `ids` (requests holding `key`, oldest first) whose response for the
    /// key is not void.
    /// - Complexity: O(ids · their keys).
    private func newestFetch(of key: String, among ids: [UInt64]) -> UInt64? {
        ids.last { id in
            guard let r = byID[id], r.kind == .fetch, let i = r.keys.firstIndex(of: key) else { return false }
            return !r.voided[i]
        }
    }

    /// One more caller waits for request `id`.
    /// - Complexity: O(1).
    mutating func addWaiter(_ id: UInt64) { byID[id]?.waiters += 1 }

    /// Gives a deferred request its answer, completing at `now`.
    /// - Returns: false when `id` is not in flight or already has its answer.
    /// - Complexity: O(1).
    mutating func deliver(_ id: UInt64, _ answer: InFlight.Answer, at now: Int64) -> Bool {
        guard byID[id]?.completesAt == nil, byID[id] != nil else { return false }
        byID[id]!.answer = answer
        byID[id]!.completesAt = now
        return true
    }

    /// Marks the responses in flight for `key` void: they will be discarded (SPEC §1.1 B12); a
    /// read of it no longer joins them.
    /// - Complexity: O(requests holding the key · their keys).
    mutating func voidResponses(forKey key: String) {
        if !fetchInFlight.isEmpty { fetchInFlight.removeValue(forKey: key) }
        guard !byKey.isEmpty, let ids = byKey[key] else { return }
        for id in ids {
            guard let i = byID[id]?.keys.firstIndex(of: key) else { continue }
            byID[id]!.voided[i] = true
        }
    }

    /// Voids every response in flight whose key satisfies `inScope` (namespace clear, clear all).
    /// - Complexity: O(r log r + keys in flight).
    mutating func voidResponses(where inScope: (String) -> Bool) {
        for id in sortedIDs {
            for key in byID[id]!.keys where inScope(key) { voidResponses(forKey: key) }
        }
    }

    /// Notes that `key` was invalidated while fetches of it are in flight: their responses are stored stale.
    /// - Complexity: O(requests holding the key · their keys).
    mutating func markInvalidated(_ key: String) {
        guard let ids = byKey[key] else { return }
        for id in ids {
            guard byID[id]?.kind == .fetch, let i = byID[id]!.keys.firstIndex(of: key) else { continue }
            byID[id]!.invalidatedAfterSend[i] = true
        }
    }

    /// Notes that the event about entity `id` reached the fetches in flight, for each key of them
    /// that `reached` says it could not patch.
    /// - Complexity: O(r log r + keys in flight).
    mutating func noteEntityEvent(_ id: String, unpatched reached: (String) -> Bool) {
        for rid in sortedIDs where byID[rid]!.kind == .fetch {
            let keys = byID[rid]!.keys
            for (i, key) in keys.enumerated() where reached(key) {
                if byID[rid]!.entityEvents.isEmpty { byID[rid]!.entityEvents = Array(repeating: [], count: keys.count) }
                if !byID[rid]!.entityEvents[i].contains(id) { byID[rid]!.entityEvents[i].append(id) }
            }
        }
    }

    /// Notes the invalidation of every key in flight that satisfies `inScope`.
    /// - Complexity: O(r log r + keys in flight).
    mutating func markInvalidated(where inScope: (String) -> Bool) {
        for id in sortedIDs {
            for key in byID[id]!.keys where inScope(key) { markInvalidated(key) }
        }
    }

    /// Keeps the per-key outcomes of a completed fetch for the readers waiting on it.
    /// - Complexity: O(1).
    mutating func setOutcomes(_ id: UInt64, _ outcomes: [String: KeyOutcome]) { keyOutcomes[id] = outcomes }

    /// Keeps the result of a completed validation for its caller.
    /// - Complexity: O(1).
    mutating func setValidationOutcome(_ id: UInt64, _ result: ValidationResult) { validationOutcomes[id] = result }
}

extension CacheEngine {
    /// Requests in flight by id (kept in `requestTable`; the `Cache` actor adds waiters).
    var requests: [UInt64: InFlight] {
        _read { yield requestTable.byID }
        _modify { yield &requestTable.byID }
    }

    /// Key → the fetch in flight a read of it joins (kept in `requestTable`).
    var fetchInFlight: [String: UInt64] {
        _read { yield requestTable.fetchInFlight }
        _modify { yield &requestTable.fetchInFlight }
    }

    /// Per completed fetch that readers wait on: each key's outcome (kept in `requestTable`; the
    /// `Cache` actor forgets them once its readers are answered).
    var keyOutcomes: [UInt64: [String: KeyOutcome]] {
        _read { yield requestTable.keyOutcomes }
        _modify { yield &requestTable.keyOutcomes }
    }
}

// MARK: - Invariants

extension RequestTable {
    /// What is wrong with the table, one message per broken rule (see the type's invariants);
    /// empty when it is sound.
    /// - Complexity: O(r log r + keys in flight).
    func invariantViolations() -> [String] {
        var v: [String] = []
        var expected: [String: [UInt64]] = [:]
        for id in sortedIDs {
            let r = byID[id]!
            if r.id != id { v.append("request table: request \(r.id) is filed under id \(id)") }
            for key in r.keys { expected[key, default: []].append(id) }
            let n = r.keys.count
            if r.refresh.count != n || r.voided.count != n || r.invalidatedAfterSend.count != n {
                v.append("request table: request \(id) has \(n) keys but \(r.refresh.count) refresh, "
                         + "\(r.voided.count) void and \(r.invalidatedAfterSend.count) invalidation flags")
            }
            if !r.entityEvents.isEmpty && r.entityEvents.count != n {
                v.append("request table: request \(id) has \(n) keys but \(r.entityEvents.count) lists of entity events")
            }
            if r.waiters < 0 { v.append("request table: request \(id) has \(r.waiters) waiters") }
        }
        if expected != byKey {
            for key in Set(expected.keys).union(byKey.keys).sorted() where expected[key] != byKey[key] {
                v.append("requests by key: \(key) leads to \(byKey[key] ?? []), the requests holding it are \(expected[key] ?? [])")
            }
        }
        for (key, id) in fetchInFlight {
            guard let r = byID[id], r.kind == .fetch, let i = r.keys.firstIndex(of: key) else {
                v.append("fetch in flight: \(key) joins request \(id), which is not a fetch of it in flight")
                continue
            }
            if i < r.voided.count && r.voided[i] { v.append("fetch in flight: \(key) joins request \(id), whose response for it is void") }
        }
        for id in keyOutcomes.keys where byID[id] != nil { v.append("request table: request \(id) has outcomes but is in flight") }
        for id in validationOutcomes.keys where byID[id] != nil {
            v.append("request table: validation \(id) has a result but is in flight")
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "RequestTable invariants broken:\n" + violations.joined(separator: "\n"))
    }

    /// Test hook: makes `key` lead to no request, as a forgotten index update would.
    mutating func testingForgetKey(_ key: String) {
        byKey.removeValue(forKey: key)
    }
}
