// Invariant checks (the swift-collections `_checkInvariants()` habit): each part checks its own
// state; the engine checks how the parts agree. `checksInvariants` runs the whole check after
// every public operation that can change the state.

extension CacheEngine {
    /// Every broken invariant, one message each; empty when the state is sound. The parts' own
    /// (see each part's type) and how they agree:
    /// - the parts kept by namespace slot (recency lists, expiry FIFOs, counters) have one entry per namespace;
    /// - each namespace's list is kept for the eviction policy its policy names;
    /// - each entry is in the namespace its key names;
    /// - the engine's notes of whether changes are hooked (`hooked`) and whether requests are
    ///   kept by key (`EngineState.requestsByKey`) agree with what they note;
    /// - no sequence number in use (an entry's, a request's, a queued mutation's) is past `seq`;
    /// - each FIFO whose scan is marked scheduled has that scan in the scheduler; each entry waiting to
    ///   expire has a live record in its namespace's FIFO, or (after `expire in=`) an override item;
    /// - a request in flight has a completion item exactly when it has a completion time, at that
    ///   time, and every completion item belongs to a request in flight;
    /// - every pending line of the server log belongs to a request in flight;
    /// - the replay in flight is a mutation request, no queued mutation is in flight, and every
    ///   mutation pending on an entry is queued or in flight.
    /// - Complexity: O(n + h + r + q + total size of the values) for n slots, h scheduled items,
    ///   r requests in flight and q queued mutations.
    public func invariantViolations() -> [String] {
        var v = entries.invariantViolations()
        v += namespaces.invariantViolations()
        v += expiry.invariantViolations()
        v += scheduler.invariantViolations()
        v += requestTable.invariantViolations()
        v += serverLog.invariantViolations()
        v += mutationQueue.invariantViolations()
        v += observers.invariantViolations()
        v += statistics.invariantViolations()
        v += behaviours.invariantViolations(inFlight: { requestTable[$0] != nil }, mutationWaits: { id in
            mutationQueue.queued.contains { $0.id == id } || requestTable.byID.values.contains { $0.mutation?.id == id }
        })
        v += agreementViolations()
        return v
    }

    /// Checks every invariant; on a violation, stops the process with the messages.
    /// - Complexity: that of `invariantViolations()`.
    public func checkInvariants() {
        let violations = invariantViolations()
        if !violations.isEmpty { invariantFailure(violations) }
    }

    /// How the parts disagree, one message each.
    private func agreementViolations() -> [String] {
        let n = namespaces.count
        guard entries.ordered.namespaceCount == n, expiry.queues.count == n, statistics.byNamespace.count == n else {
            return ["engine: \(n) namespaces, but \(entries.ordered.namespaceCount) recency lists, "
                    + "\(expiry.queues.count) expiry FIFOs and \(statistics.byNamespace.count) sets of counters"]
        }
        var v: [String] = []
        if state.requestsByKey != (!requestTable.fetchInFlight.isEmpty || !requestTable.byKey.isEmpty) {
            v.append("engine: notes \(state.requestsByKey ? "" : "no ")requests by key, the request table holds "
                     + "\(requestTable.fetchInFlight.count) fetches in flight and \(requestTable.byKey.count) keys")
        }
        let hooks = !observers.isEmpty || reportsAllChanges || !behaviours.deferred.isEmpty || !behaviours.active.isEmpty
        if hooked != hooks { v.append("engine: notes \(hooked ? "" : "no ")hooks on changes, there are \(hooks ? "" : "none")") }
        if defersMutations == behaviours.deferredMutations.isEmpty {
            v.append("engine: notes \(defersMutations ? "" : "no ")deferred mutations, there are \(defersMutations ? "none" : "some")")
        }
        var httpBytes: [Int32: Int] = [:]
        for (key, set) in http.variants { httpBytes[httpNamespaceSlot(key), default: 0] += HTTPVariantSet.bytes(of: set.responses) }
        if httpBytes != http.bytes.filter({ $0.value != 0 }) {
            v.append("engine: HTTP responses counted as \(http.bytes.sorted { $0.key < $1.key }) bytes by namespace, "
                     + "but they hold \(httpBytes.sorted { $0.key < $1.key })")
        }
        for ns in namespaces.indices where entries.ordered.eviction(ofNamespace: Int32(ns)) != namespaces.policy(Int32(ns)).eviction {
            v.append("namespace \(namespaces[Int32(ns)].name): policy \(namespaces.policy(Int32(ns)).eviction.rawValue), "
                     + "but its entries are kept for \(entries.ordered.eviction(ofNamespace: Int32(ns)).rawValue)")
        }

        // What the scheduler holds, by kind of work.
        var scans = Set<Scan>()
        var overrides = Set<Override>()
        var completions: [UInt64: [Int64]] = [:]
        for item in scheduler.heap.unordered {
            switch item.work {
            case .expiryScan(let ns, let epoch): scans.insert(Scan(ns: ns, epoch: epoch))
            case .expiryOverride(let slot, let storedSeq):
                overrides.insert(Override(slot: slot, storedSeq: storedSeq, time: item.time))
            case .completion(let id): completions[id, default: []].append(item.time)
            case .external, .poll, .retry: break
            }
        }

        // Expiries: scans scheduled, records live.
        var recorded = Set<Int32>()
        for ns in expiry.queues.indices {
            let queue = expiry.queues[ns]
            if queue.scanScheduled && !scans.contains(Scan(ns: Int32(ns), epoch: queue.epoch)) {
                v.append("expiry: the scan of namespace slot \(ns) (epoch \(queue.epoch)) is marked scheduled but is not in the scheduler")
            }
            // Live records in (time, seq) order, each's time and sequence number its entry's (`ExpiryRecord`).
            var previous: (time: Int64, seq: UInt64)?
            for record in expiry.records(Int32(ns)) where Int(record.slot) < slots.count && isLive(record) {
                let e = slots[Int(record.slot)]
                if e.namespace != Int32(ns) {
                    v.append("expiry: FIFO of namespace slot \(ns) holds a live record of \(e.key)")
                }
                if let p = previous, (e.expiresAt, e.storedSeq) < p {
                    v.append("expiry FIFO of namespace slot \(ns): (\(e.expiresAt), \(e.storedSeq)) of \(e.key) follows (\(p.time), \(p.seq))")
                }
                previous = (e.expiresAt, e.storedSeq)
                recorded.insert(record.slot)
            }
        }

        // Entries: namespace, sequence numbers, expiry tracking.
        var pendingMutations: [UInt64: String] = [:]
        for i in slots.indices where slots[i].live {
            let e = slots[i]
            if namespaces[e.namespace].name != KeyName.namespace(of: e.key) {
                v.append("engine: \(e.key) is in namespace \(namespaces[e.namespace].name)")
            }
            if e.storedSeq > seq || e.storedRequest > seq || e.lastLocalWrite > seq || e.lastPut > seq {
                v.append("engine: \(e.key) carries a sequence number past the last one, \(seq)")
            }
            if !e.expiryReported && !e.expiryOverridden && !recorded.contains(Int32(i)) {
                v.append("expiry: \(e.key) expires at \(e.expiresAt) but no live record in its FIFO says so")
            }
            if !e.expiryReported && e.expiryOverridden
                && !overrides.contains(Override(slot: Int32(i), storedSeq: e.storedSeq, time: e.expiresAt)) {
                v.append("expiry: \(e.key) has its expiry set to \(e.expiresAt) but no item in the scheduler reports it")
            }
            for id in e.log?.pending ?? [] { pendingMutations[id] = e.key }
        }

        // Requests: completion items, log lines, mutations.
        var mutationsInFlight = Set<UInt64>()
        for id in requestTable.sortedIDs {
            let r = requestTable[id]!
            if id > seq { v.append("request table: request \(id) is past the last sequence number, \(seq)") }
            let items = withoutSuperseded(completions.removeValue(forKey: id) ?? [], of: id)
            if items != (r.completesAt.map { [$0] } ?? []) {
                v.append("scheduler: request \(id) completes at \(r.completesAt.map(String.init) ?? "an unknown time") "
                         + "but has completion items at \(items)")
            }
            if let m = r.mutation { mutationsInFlight.insert(m.id) }
        }
        for id in completions.keys.sorted() where !withoutSuperseded(completions[id]!, of: id).isEmpty { v.append("scheduler: completion item of request \(id), which is not in flight") }
        for id in serverLog.positions.keys.sorted() where requestTable[id] == nil {
            v.append("server log: request \(id) is pending but not in flight")
        }
        if let id = mutationQueue.replaying, requestTable[id]?.kind != .mutate {
            v.append("mutation queue: replaying request \(id), which is not a mutation in flight")
        }
        var queued = Set<UInt64>()
        for m in mutationQueue.queued {
            queued.insert(m.id)
            if m.id > seq { v.append("mutation queue: mutation \(m.id) is past the last sequence number, \(seq)") }
            if mutationsInFlight.contains(m.id) { v.append("mutation queue: mutation \(m.id) is queued and in flight") }
        }
        for (id, key) in pendingMutations.sorted(by: { $0.key < $1.key })
        where !queued.contains(id) && !mutationsInFlight.contains(id) {
            v.append("mutations: \(key) waits for mutation \(id), which is neither queued nor in flight")
        }
        return v
    }

    /// An expiry scan in the scheduler.
    private struct Scan: Hashable {
        var ns: Int32
        var epoch: UInt32
    }

    /// An `expire in=` item in the scheduler.
    private struct Override: Hashable {
        var slot: Int32
        var storedSeq: UInt64
        var time: Int64
    }
}

extension CacheEngine {
    /// The times of a request's completion items, less those a live answer superseded (they stay
    /// queued and find the request done).
    fileprivate func withoutSuperseded(_ times: [Int64], of id: UInt64) -> [Int64] {
        guard let superseded = scheduler.superseded[id] else { return times }
        var rest = times
        for time in superseded.map(\.time) { if let i = rest.firstIndex(of: time) { rest.remove(at: i) } }
        return rest
    }
}
