extension CacheEngine {
    /// Checks a whole snapshot document, then replaces the entire state with it (SPEC §5.2): clock,
    /// sequence numbers, statistics and the simulated server included. The pending work of the state
    /// before is dropped and the snapshot's is rescheduled. Commands scheduled with
    /// `schedule(after:token:)` are rescheduled through `scheduleCommand`, which returns their new token.
    /// - Throws: `SnapshotError` naming the first problem; then nothing changed.
    /// - Complexity: O(size of the document + n log n) for n entries (their expiry order).
    public func restore(_ json: JSONValue, scheduleCommand: (Snapshot.ScheduledCommand) -> Int = { _ in -1 }) throws(SnapshotError) {
        try restore(Snapshot(json), scheduleCommand: scheduleCommand)
    }

    /// Replaces the entire state with a decoded snapshot; see `restore(_:scheduleCommand:)`.
    /// Decoding checked the engine's part; the origin checks its own settings here, first.
    /// - Throws: `SnapshotError` for a setting the origin refuses; then nothing changed.
    public func restore(_ snapshot: consuming Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) throws(SnapshotError) {
        try checkOrigin(of: snapshot)
        restoreChecked(snapshot, scheduleCommand: scheduleCommand)
    }

    /// `restore` of a snapshot whose origin state the origin already accepted (`checkOrigin`).
    func restoreChecked(_ snapshot: consuming Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) {
        defer { if checksInvariants { checkInvariants() } }
        replaceState(with: snapshot, scheduleCommand: scheduleCommand)
    }

    /// Asks the origin to check the snapshot's origin state (its settings), without changing anything.
    public func checkOrigin(of snapshot: borrowing Snapshot) throws(SnapshotError) {
        if let state = origin.persistentState { try snapshot.checkOrigin(state) }
    }

    /// Moves the snapshot's entries into the (empty) table in their order, with their keys'
    /// hashes when decoding took them. Moved, not copied: a copy would touch each value's and
    /// tags' storage (a retain now, a release when the snapshot goes), far apart in memory.
    private func insertEntries(of snapshot: inout Snapshot) {
        var list = snapshot.entries
        snapshot.entries = []
        let hashes = snapshot.keyHashes.count == list.count ? snapshot.keyHashes : nil
        // What is left in the list in place of an entry moved out: nothing to retain or release.
        let placeholder = Entry(key: "", namespace: 0, stored: .null, tags: [], storedAt: 0, staleAt: 0, expiresAt: 0)
        list.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for i in buffer.indices {
                let entry = (base + i).move()
                (base + i).initialize(to: placeholder)
                if let hashes { _ = entries.insert(entry, hash: hashes[i]) } else { _ = entries.insert(entry) }
            }
        }
    }

    /// `restore` without the check of invariants: every part is rebuilt from the snapshot.
    private func replaceState(with snapshot: consuming Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) {
        clockStart = snapshot.clockStart
        now = snapshot.now
        seq = snapshot.seq
        rules = PushRules(snapshot.pushRules)
        observers = Observers(restoring: snapshot.watches)
        statistics = Statistics(total: snapshot.total, byNamespace: snapshot.namespaceStats)
        serverLog = ServerLog(restoring: snapshot.requestLog, dropped: snapshot.requestLogDropped)
        namespaces = NamespaceTable(restoring: snapshot.namespaces)
        noteHTTPNamespaces(restored: true)

        let tracking = changes != nil
        if let stored = snapshot.stored {
            // A store's rows, already in a table with their stamps and eviction orders.
            entries = stored.table
            slots.tracking = tracking
        } else {
            entries = EntryTable(idField: snapshot.idField, namespaceCount: snapshot.namespaces.count,
                                 capacity: snapshot.entries.count)
            slots.tracking = tracking
            // Each namespace outside LRU takes its order back from its entries' ranks (slot i holds
            // entry i: the table was empty).
            var saved = Array(repeating: [Int32: OrderedSlots.Rank](), count: snapshot.namespaces.count)
            for (i, rank) in snapshot.ranks.enumerated() {
                if let rank { saved[Int(snapshot.entries[i].namespace)][Int32(i)] = rank }
            }
            insertEntries(of: &snapshot)
            for (n, ns) in snapshot.namespaces.enumerated() where ns.policy.eviction != .lru {
                let hand = snapshot.hands[n].flatMap { entrySlot(forKey: $0) } ?? -1
                entries.restoreOrder(Int32(n), ns.policy.eviction, ranks: saved[n], hand: hand, nextRank: snapshot.nextRanks[n] ?? 0)
            }
        }
        if tracking { changes = ChangeLog(replacedAll: true) }
        // Room for the namespaces' `max`, as `ns` and `load` make it (the table above is sized to
        // the entries restored).
        reserveDeclaredEntries()

        var scheduled: [ScheduledItem] = []
        expiry = ExpiryQueues(namespaceCount: snapshot.namespaces.count)
        for n in snapshot.namespaces.indices {
            let ns = Int32(n)
            expiry.replace(ns, with: expiryRecords(ns, skippingReported: true), restoring: true)
            if let scan = state.claimExpiryScan(ns) { scheduled.append(scan) }
        }
        for (i, e) in slots.enumerated() where e.expiryOverridden && !e.expiryReported {
            scheduled.append(ScheduledItem(time: e.expiresAt, seq: e.expirySeq,
                                           work: .expiryOverride(slot: Int32(i), storedSeq: e.storedSeq)))
        }

        requestTable = RequestTable(restoring: snapshot.requests, fetchInFlight: snapshot.fetchInFlight)
        // The HTTP keys' stored responses are their entries' as they are now (`keepHTTPVariants`
        // marks them so), and the HTTP requests in flight complete as they would have.
        for (key, responses) in snapshot.httpVariants { keepHTTPVariants(key, responses, budget: false) }
        http.exchanges = snapshot.httpExchanges
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
