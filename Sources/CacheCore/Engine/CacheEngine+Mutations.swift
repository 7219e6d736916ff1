extension CacheEngine {
    /// Optimistic mutation of one entry (B11): applied at once, confirmed or rolled back when the
    /// origin answers; queued while offline or behind earlier queued mutations.
    /// A key not cached (absent, or still loading) is no error: see `deferMutation`.
    /// - Throws: `CacheError` when the patch does not apply; nothing changes.
    /// - Returns: the keys changed.
    @discardableResult
    public func mutate(_ key: String, patch: Patch, options: MutationOptions = MutationOptions()) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let key = KeyName.canonical(key)
        guard let slot = entrySlot(forKey: key) else { return deferMutation(key, patch: patch, options: options) }
        let value: JSONValue
        do { value = try patch.apply(to: slots[Int(slot)].value) } catch { throw CacheError("\(error)") }
        return startMutation([(slot, value)], patch: patch, entityID: nil, options: options)
    }

    /// Optimistic mutation of every cached entry embedding entity `id` (B11, B8).
    /// - Complexity: O(entries embedding the id · their size), through the id index.
    @discardableResult
    public func mutate(entity id: String, patch: Patch, options: MutationOptions = MutationOptions()) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let targets = sortedByKey(entries.slots(embedding: id))
        guard !targets.isEmpty else { throw CacheError("no cached entry embeds \(idField) \(id): nothing to mutate") }
        var changes: [(Int32, JSONValue)] = []
        for slot in targets {
            do {
                let (value, _) = try slots[Int(slot)].value.patchingEntities(id: id, idField: idField, with: patch)
                changes.append((slot, value))
            } catch {
                throw CacheError("\(error) (in \(slots[Int(slot)].key))")
            }
        }
        return startMutation(changes, patch: patch, entityID: id, options: options)
    }

    private func startMutation(_ changes: [(Int32, JSONValue)], patch: Patch, entityID: String?,
                               options: MutationOptions) -> [String] {
        let mutation = nextSeq()
        var keys: [String] = []
        for (slot, value) in changes {
            let i = Int(slot)
            var log = slots[i].log ?? MutationLog(base: slots[i].value, baseSeq: slots[i].storedRequest)
            // A pessimistic mutation waits in the log with no item: the value changes when the server confirms.
            if !options.pessimistic {
                let before: JSONValue? = isNaive(.rollbackToSnapshot, ns: slots[i].namespace) ? .some(slots[i].value) : .none
                log.items.append(.init(seq: mutation, patch: patch, entityID: entityID, mutation: mutation, reachedServer: nil,
                                       before: before))
            }
            log.pending.insert(mutation)
            slots[i].log = log
            if !options.pessimistic { entries.setValue(slot, value) }
            entries.touch(slot)
            keys.append(slots[i].key)
            if !options.pessimistic { emit(.mutated, slot: slot, source: .cache) }
        }
        send(QueuedMutation(id: mutation, keys: keys, patch: patch, entityID: entityID,
                            pessimistic: options.pessimistic, refetch: options.refetch, idempotent: options.idempotent))
        return keys
    }

    /// Sends a mutation, or queues it while offline or behind queued ones.
    func send(_ queued: QueuedMutation) {
        if !origin.isOnline || !mutationQueue.isEmpty {
            mutationQueue.append(queued)
        } else {
            sendMutation(queued)
        }
    }

    @discardableResult
    private func sendMutation(_ mutation: QueuedMutation) -> UInt64 {
        let id = nextSeq()
        var request = InFlight(id: id, kind: .mutate, keys: mutation.keys, startedAt: now,
                               refresh: Array(repeating: false, count: mutation.keys.count),
                               voided: Array(repeating: false, count: mutation.keys.count),
                               invalidatedAfterSend: Array(repeating: false, count: mutation.keys.count))
        request.mutation = mutation
        let latency: Int64?
        switch origin.mutate(MutationRequest(keys: mutation.keys, patch: mutation.patch, entityID: mutation.entityID,
                                             idempotencyKey: mutation.idempotent ? IdempotencyKey(client: clockPlace, mutation: mutation.id) : nil),
                             requestID: id, at: now) {
        case .after(let ms, let result):
            latency = ms
            request.answer = .keys(result)
        case .deferred:
            latency = nil
        }
        noteSent(mutation: mutation.id, request: id)
        for key in mutation.keys {
            guard let slot = entrySlot(forKey: key), var log = slots[Int(slot)].log else { continue }
            for j in log.items.indices where log.items[j].mutation == mutation.id { log.items[j].reachedServer = id }
            slots[Int(slot)].log = log
        }
        register(&request, latency: latency)
        return id
    }

    /// Sends the next queued mutation when the origin is reachable and none is being replayed.
    func sendNextQueuedMutation() {
        guard mutationQueue.replaying == nil, origin.isOnline, let next = mutationQueue.takeNext() else { return }
        mutationQueue.markReplaying(sendMutation(next))
    }

    /// Tells the engine its origin is reachable again: queued mutations replay, one at a time, in order.
    public func originDidComeOnline() {
        defer { if checksInvariants { checkInvariants() } }
        sendNextQueuedMutation()
        refetchActiveKeys()
    }

    /// Completes a mutation request: confirm (new base, later log items re-applied) or roll back.
    func completeMutation(_ request: InFlight) {
        guard let mutation = request.mutation, case .keys(let result)? = request.answer else { return }
        var anyApplied = false
        var refetch: [String] = []
        // Keys whose mutation's outcome is unknown: refetched unless a fetch sent after it is in flight.
        var unknown: [String] = []
        for (i, key) in request.keys.enumerated() {
            if entrySlot(forKey: key) == nil || request.voided[i] {
                if completeDeferred(key, mutation: mutation, request: request, answer: i, refetch: &refetch) { anyApplied = true }
            }
            guard !request.voided[i], let slot = entrySlot(forKey: key), var log = slots[Int(slot)].log,
                  log.pending.contains(mutation.id) else { continue }
            anyApplied = true
            log.pending.remove(mutation.id)
            if case .failure(let f) = result, f.outcomeUnknown, !isNaive(.unknownOutcomeRollsBack, ns: slots[Int(slot)].namespace) {
                settleUnknownOutcome(slot, log: log, request: request.id)
                unknown.append(key)
                continue
            }
            var failure: String?
            switch result {
            case .failure(let f): failure = f.message
            case .success(let answers):
                switch answers[i] {
                case .notFound where mutation.refetch:
                    // No body (an app's mutate function returned no value for the key): refetch it.
                    failure = nil
                    refetch.append(key)
                case .notFound: failure = "not found"
                case .value(let answer), .versioned(let answer, _):
                    let inOrder = isNaive(.eventsInArrivalOrder, ns: slots[Int(slot)].namespace)
                    if mutation.refetch {
                        // No body: the optimistic change stays until the refetch's answer replaces it.
                        refetch.append(key)
                    } else if request.id < log.baseSeq
                                && (slots[Int(slot)].lastPut == log.baseSeq || !log.items.contains { $0.mutation == mutation.id }) {
                        // The base is newer: a put's, or an answer sent after the mutation reached
                        // the server (which has its change, and took its item with it).
                        log.items.removeAll { $0.mutation == mutation.id }
                    } else {
                        // Also when a mutation of unknown outcome sent after this one raised the
                        // base's request without a newer base: the answer becomes the base (that
                        // mutation's change stays applied on it, waiting for its refetch), not
                        // dropped, which would show the old base without this confirmed change,
                        // a value the server never held.
                        log.base = answer
                        log.baseSeq = max(log.baseSeq, request.id)
                        log.items.removeAll { ($0.reachedServer ?? .max) <= request.id }
                        slots[Int(slot)].version = log.rebase(version: answers[i].version, inOrder: inOrder)
                        let ns = slots[Int(slot)].namespace
                        if isNaive(.confirmDropsNewer, ns: ns) {
                            // The answer is the value: newer pending changes show again only
                            // through their own answers, so the entry is at the answer's version.
                            log.items.removeAll()
                            slots[Int(slot)].version = answers[i].version
                        } else if isNaive(.confirmCommitsAll, ns: ns) {
                            // The answer is written with the other pending changes on it, as
                            // confirmed data: a later rollback of one of them no longer removes it.
                            // The events it has keep their versions in the entry's.
                            log.base = recompute(log)
                            log.items.removeAll()
                        }
                    }
                }
            }
            if failure != nil && !mutation.pessimistic {
                if let before = log.items.first(where: { $0.mutation == mutation.id })?.before {
                    // rollback-to-snapshot: the value shown before the mutation, whatever came
                    // since; other pending mutations stay for their answers, no longer applied.
                    log.base = before
                    log.items.removeAll { $0.mutation == nil || $0.mutation == mutation.id }
                    for j in log.items.indices { log.items[j].inert = true }
                } else {
                    log.items.removeAll { $0.mutation == mutation.id }
                }
                count(\.rollbacks, slots[Int(slot)].namespace)
            }
            if failure != nil && mutation.pessimistic { slots[Int(slot)].log = log.pending.isEmpty ? nil : log; continue }
            let value = recompute(log)
            if log.pending.isEmpty {
                // A refetch's answer older than the mutation must not undo it: the mutation is the newest write.
                // A failed mutation wrote nothing: it does not count as a write (SPEC §1.1 B11).
                // With join-refetch the refetch is the fetch in flight, sent before the mutation:
                // its answer is the refetch's, so the mutation does not count as newer than it.
                let newest = mutation.refetch && failure == nil && !joinsFetchInFlight(key)
                    ? max(log.baseSeq, request.id) : log.baseSeq
                slots[Int(slot)].storedRequest = max(slots[Int(slot)].storedRequest, newest)
                slots[Int(slot)].log = nil
            } else {
                slots[Int(slot)].log = log
            }
            entries.setValue(slot, value)
            if failure != nil && isNaive(.silentRollback, ns: slots[Int(slot)].namespace) {
                emitUnobserved(.rolledBack, slot: slot, source: .cache)
            } else {
                emit(failure == nil ? .confirmed : .rolledBack, slot: slot, source: failure == nil ? .server : .cache)
            }
        }
        if case .failure = result {
            setFate(request.id, .failed)
        } else {
            setFate(request.id, anyApplied ? .stored : .discarded)
        }
        behaviours.deferredMutations.remove(mutation.id)
        // join-refetch: a key whose fetch is in flight joins it instead of being fetched again.
        // dedupe=: a key fetched less than the window ago is not fetched again.
        refetch += unknown.filter { key in !refetch.contains(key) && (requestTable.fetch(forKey: key) ?? 0) < request.id }
        refetch.removeAll { joinsFetchInFlight($0) || dedupedFetch($0, ns: namespaceSlot(forKey: $0)) != nil }
        if !refetch.isEmpty && origin.isOnline { sendFetch(refetch, refresh: refetch.map { entrySlot(forKey: $0) != nil }) }
        if mutationQueue.finished(request.id) {
            sendNextQueuedMutation()
        }
    }

    /// A mutation of unknown outcome (a `timeout=`, a lost answer: SPEC §1.1 Unknown outcome) on a
    /// cached entry whose log held it (`log` no longer has it pending): neither confirmed nor
    /// rolled back. The value stays as shown, its change still applied until an answer sent after
    /// the mutation replaces it; the entry turns stale (`invalidations+1` and `invalidated` when
    /// it was fresh); answers of requests sent before the mutation are discarded, as they may
    /// predate it (unless `join-refetch` makes the fetch in flight its refetch). The caller
    /// refetches the key.
    private func settleUnknownOutcome(_ slot: Int32, log: MutationLog, request: UInt64) {
        let i = Int(slot)
        var log = log
        // join-refetch: the fetch in flight is the refetch, so its answer is not discarded.
        if !joinsFetchInFlight(slots[i].key) { log.baseSeq = max(log.baseSeq, request) }
        if log.pending.isEmpty {
            slots[i].storedRequest = max(slots[i].storedRequest, log.baseSeq)
            slots[i].log = nil
        } else {
            slots[i].log = log
        }
        entries.setValue(slot, recompute(log))
        let state = slots[i].state(at: now)
        guard state != .expired else { return }
        slots[i].invalidated = true
        if state == .fresh {
            count(\.invalidations, slots[i].namespace)
            emit(.invalidated, slot: slot, source: .cache)
        }
    }

    /// Whether a refetch of `key` joins the fetch of it in flight instead of sending its own
    /// (`join-refetch`, SPEC §1.2).
    func joinsFetchInFlight(_ key: String) -> Bool {
        requestTable.fetch(forKey: key) != nil && isNaive(.joinRefetch, key: key)
    }

    /// The value of an entry with a log: its base with every log item applied in arrival order.
    /// An item that no longer applies to a new base is skipped.
    func recompute(_ log: MutationLog) -> JSONValue {
        var value = log.base
        for item in log.items where !item.inert {
            if let id = item.entityID {
                if let (patched, _) = try? value.patchingEntities(id: id, idField: idField, with: item.patch) { value = patched }
            } else if let patched = try? item.patch.apply(to: value) {
                value = patched
            }
        }
        return value
    }
}
