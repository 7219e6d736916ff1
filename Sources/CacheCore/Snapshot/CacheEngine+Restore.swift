extension CacheEngine {
    /// Checks a whole snapshot document, then replaces the entire state with it (SPEC §5.2): clock,
    /// sequence numbers, statistics and the simulated server included. The pending work of the state
    /// before is dropped and the snapshot's is rescheduled. Commands scheduled with
    /// `schedule(after:token:)` are rescheduled through `scheduleCommand`, which returns their new token.
    /// - Throws: `SnapshotError` naming the first problem; then nothing changed.
    /// - Complexity: O(size of the document + n log n) for n entries (their expiry order).
    public func restore(_ json: JSONValue, scheduleCommand: (Snapshot.ScheduledCommand) -> Int = { _ in -1 }) throws(SnapshotError) {
        let snapshot = try Snapshot(json)
        defer { if checksInvariants { checkInvariants() } }
        replaceState(with: snapshot, scheduleCommand: scheduleCommand)
    }

    /// Replaces the entire state with a checked snapshot; see `restore(_:scheduleCommand:)`.
    /// Cannot fail: everything was checked when the snapshot was decoded.
    public func restore(_ snapshot: Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) {
        defer { if checksInvariants { checkInvariants() } }
        replaceState(with: snapshot, scheduleCommand: scheduleCommand)
    }

    /// `restore` without the check of invariants: every part is rebuilt from the snapshot.
    private func replaceState(with snapshot: Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) {
        clockStart = snapshot.clockStart
        now = snapshot.now
        seq = snapshot.seq
        rules = PushRules(snapshot.pushRules)
        observers = Observers(restoring: snapshot.watches)
        statistics = Statistics(total: snapshot.total, byNamespace: snapshot.namespaceStats)
        serverLog = ServerLog(restoring: snapshot.requestLog, dropped: snapshot.requestLogDropped)
        namespaces = NamespaceTable(restoring: snapshot.namespaces)

        let tracking = changes != nil
        if let stored = snapshot.stored {
            // A store's rows, already in a table with their stamps and eviction orders.
            entries = stored.table
            slots.tracking = tracking
        } else {
            entries = EntryTable(idField: snapshot.idField, namespaceCount: snapshot.namespaces.count,
                                 capacity: snapshot.entries.count)
            slots.tracking = tracking
            if snapshot.keyHashes.count == snapshot.entries.count {
                for (entry, hash) in zip(snapshot.entries, snapshot.keyHashes) { _ = entries.insert(entry, hash: hash) }
            } else {
                for entry in snapshot.entries { _ = entries.insert(entry) }
            }
            // Each namespace outside LRU takes its order back from its entries' ranks (slot i holds
            // entry i: the table was empty).
            var saved = Array(repeating: [Int32: EntryStore.Rank](), count: snapshot.namespaces.count)
            for (i, rank) in snapshot.ranks.enumerated() {
                if let rank { saved[Int(snapshot.entries[i].namespace)][Int32(i)] = rank }
            }
            for (n, ns) in snapshot.namespaces.enumerated() where ns.policy.eviction != .lru {
                let hand = snapshot.hands[n].flatMap { entrySlot(forKey: $0) } ?? -1
                entries.restoreOrder(Int32(n), ns.policy.eviction, ranks: saved[n], hand: hand, nextRank: snapshot.nextRanks[n] ?? 0)
            }
        }
        if tracking { changes = ChangeLog(replacedAll: true) }

        var scheduled: [ScheduledItem] = []
        expiry = ExpiryQueues(namespaceCount: snapshot.namespaces.count)
        for n in snapshot.namespaces.indices {
            let ns = Int32(n)
            if let scan = expiry.replace(ns, with: expiryRecords(ns, skippingReported: true), restoring: true) {
                scheduled.append(scan)
            }
        }
        for (i, e) in slots.enumerated() where e.expiryOverridden && !e.expiryReported {
            scheduled.append(ScheduledItem(time: e.expiresAt, seq: e.expirySeq,
                                           work: .expiryOverride(slot: Int32(i), generation: e.generation)))
        }

        requestTable = RequestTable(restoring: snapshot.requests, fetchInFlight: snapshot.fetchInFlight)
        for request in snapshot.requests {
            if let due = request.completesAt {
                scheduled.append(ScheduledItem(time: due, seq: request.id, work: .completion(request.id)))
            }
        }
        mutationQueue = MutationQueue(restoring: snapshot.mutationQueue, replaying: snapshot.replaying)

        var commands: [UInt64: ScheduledCommand] = [:]
        for command in snapshot.scheduledCommands {
            commands[command.id] = ScheduledCommand(token: scheduleCommand(command), due: command.due)
            scheduled.append(ScheduledItem(time: command.due, seq: command.id, work: .external(command.id)))
        }
        behaviours = snapshot.behaviours
        scheduled += pollItems() + retryItems()
        scheduler.replaceAll(items: scheduled, commands: commands)

        if let server = snapshot.server, let state = origin.persistentState {
            state.restore(server)
        }
    }
}
