// Running work in time: the clock, the scheduler's items, the shell's `at` commands, and the
// list of pending work.

extension CacheEngine {
    /// Moves the clock forward by `duration`, running every item due up to then in (time, sequence)
    /// order, each with `now` at its time; then sets `now` to the target.
    /// - Throws: `CacheError` when the command runs more than `runawayLimit` items; the clock then
    ///   stays at the last item run.
    public func advance(by duration: Int64) throws(CacheError) {
        defer { if checksInvariants { checkInvariants() } }
        let target = now.addingClamped(max(0, duration))
        // Bounded: each turn runs one item, and the runaway limit stops a command that runs
        // too many (expiries aside, which are bounded by the entries' records).
        while true {
            while try runNext(upTo: target) {}
            // The other clients' items due by then run too, after this engine's (SPEC §2
            // Clients); one of them may have given this engine more.
            guard let group = clockGroup else { break }
            try group.runOthers(before: target, place: .max, of: self)
            guard let due = nextDueTime, due <= target else { break }
        }
        now = target
    }

    /// Runs the earliest item due at or before `limit`; false when there is none.
    /// - Complexity: O(log h) for h scheduled items, plus the item's work.
    @discardableResult
    func runNext(upTo limit: Int64) throws(CacheError) -> Bool {
        if let group = clockGroup, let due = nextDueTime, due <= limit {
            // The other clients' items before this one run first (SPEC §2 Clients).
            try group.runOthers(before: due, place: clockPlace, of: self)
        }
        unitHasWork = true
        guard let item = try scheduler.next(upTo: limit) else { return false }
        if item.time > now { now = item.time }
        switch item.work {
        case .completion(let id):
            // An item a live answer or a cancel superseded, or a retry left behind (its request
            // completes at another time), does nothing.
            if scheduler.tookSuperseded { break }
            if let due = requestTable[id].map({ $0.completesAt }), due != item.time { break }
            complete(id)
        case .expiryScan(let ns, let epoch):
            runExpiryScan(ns, epoch: epoch, time: item.time, seq: item.seq)
        case .expiryOverride(let slot, let storedSeq):
            runExpiryOverride(slot: slot, storedSeq: storedSeq, at: item.time)
        case .external(let id):
            if let command = scheduler.takeCommand(id) {
                // SPEC §2: a scheduled command never blocks; its reads act as `--nowait`.
                runningScheduled += 1
                defer { runningScheduled -= 1 }
                delegate?.cacheEngine(self, runScheduled: command.token)
            }
        case .poll(let id):
            runPoll(id, at: item.time)
        case .retry(let id):
            runRetry(id, at: item.time)
        }
        return true
    }

    /// Schedules external work (the shell's `at`) `delay` ms from now; it runs at the next
    /// scheduling step at the earliest, never inline.
    /// - Returns: the item's id.
    @discardableResult
    public func schedule(after delay: Int64, token: Int) -> UInt64 {
        defer { if checksInvariants { checkInvariants() } }
        let id = nextSeq()
        scheduler.schedule(ScheduledCommand(token: token, due: now.addingClamped(max(0, delay))), id: id)
        return id
    }

    /// Drops scheduled external work (for `restore`, which replaces everything).
    public func cancelScheduledCommands() {
        defer { if checksInvariants { checkInvariants() } }
        scheduler.cancelCommands()
    }

    /// Requests in flight, queued mutations and scheduled commands, by due time.
    public func pendingWork() -> [PendingItem] {
        var items: [PendingItem] = []
        for request in requests.values {
            let keys = request.kind == .validate ? request.validation.keys.sorted().map { "\($0):*" } : request.keys
            items.append(PendingItem(kind: .request(request.kind, keys: keys),
                                     dueAt: request.completesAt ?? behaviours.retries[request.id]?.due, id: request.id))
        }
        for (id, command) in scheduler.commands {
            items.append(PendingItem(kind: .scheduled(token: command.token), dueAt: command.due, id: id))
        }
        for (key, poll) in behaviours.polls {
            items.append(PendingItem(kind: .poll(key: key, everyMs: poll.every), dueAt: poll.due, id: poll.id))
        }
        items.sort { ($0.dueAt ?? .max, $0.id) < ($1.dueAt ?? .max, $1.id) }
        for m in mutationQueue.queued { items.append(PendingItem(kind: .queuedMutation(keys: m.keys), dueAt: nil, id: m.id)) }
        return items
    }
}
