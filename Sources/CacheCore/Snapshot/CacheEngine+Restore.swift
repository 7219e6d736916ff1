import DequeModule
import HeapModule

extension CacheEngine {
    /// Checks a whole snapshot document, then replaces the entire state with it (SPEC §5.2): clock,
    /// sequence numbers, statistics and the simulated server included. The pending work of the state
    /// before is dropped and the snapshot's is rescheduled. Commands scheduled with
    /// `schedule(after:token:)` are rescheduled through `scheduleCommand`, which returns their new token.
    /// - Throws: `SnapshotError` naming the first problem; then nothing changed.
    /// - Complexity: O(size of the document + n log n) for n entries (their expiry order).
    public func restore(_ json: JSONValue, scheduleCommand: (Snapshot.ScheduledCommand) -> Int = { _ in -1 }) throws(SnapshotError) {
        restore(try Snapshot(json), scheduleCommand: scheduleCommand)
    }

    /// Replaces the entire state with a checked snapshot; see `restore(_:scheduleCommand:)`.
    /// Cannot fail: everything was checked when the snapshot was decoded.
    public func restore(_ snapshot: Snapshot, scheduleCommand: (Snapshot.ScheduledCommand) -> Int) {
        clockStart = snapshot.clockStart
        now = snapshot.now
        seq = snapshot.seq
        idField = snapshot.idField
        pushRules = snapshot.pushRules
        watches = snapshot.watches
        total = snapshot.total
        requestLog = snapshot.requestLog
        logPosition = [:]
        for (i, line) in requestLog.enumerated() where line.fate == .pending { logPosition[line.id] = i }

        namespaces = snapshot.namespaces
        namespaceIndex = [:]
        lastNamespace = nil
        for (i, ns) in namespaces.enumerated() { namespaceIndex[ns.name] = Int32(i) }

        let tracking = changes != nil
        store = EntryStore(namespaceCount: namespaces.count)
        store.entries.tracking = tracking
        if tracking { changes = ChangeLog(replacedAll: true) }
        store.reserveCapacity(snapshot.entries.count)
        index = Dictionary(minimumCapacity: snapshot.entries.count)
        idIndex = [:]
        tagIndex = [:]
        for entry in snapshot.entries {
            let slot = store.insert(entry)
            index[entry.key] = slot
            indexIDs(slot, entry.value)
            for tag in entry.tags { tagIndex[tag, default: []].insert(slot) }
        }
        if let recencies = snapshot.recencies {
            // A store's stamps: keep them, so rows not rewritten stay in order with new ones.
            for (i, stamp) in recencies.enumerated() { slots[i].recency = stamp }
            nextRecency = (recencies.last ?? 0) &+ 1
        }

        var scheduled: [ScheduledItem] = []
        for n in namespaces.indices {
            var records: [ExpiryRecord] = []
            for s in store.slots(inNamespace: Int32(n)) {
                let e = slots[Int(s)]
                if !e.expiryOverridden && !e.expiryReported {
                    records.append(ExpiryRecord(time: e.expiresAt, seq: e.storedSeq, slot: s, generation: e.generation))
                }
            }
            records.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
            namespaces[n].expiryFIFO = Deque(records)
            if let head = records.first {
                namespaces[n].scanScheduled = true
                scheduled.append(ScheduledItem(time: head.time, seq: head.seq, work: .expiryScan(ns: Int32(n), epoch: 0)))
            }
        }
        for (i, e) in slots.enumerated() where e.expiryOverridden && !e.expiryReported {
            scheduled.append(ScheduledItem(time: e.expiresAt, seq: e.expirySeq,
                                           work: .expiryOverride(slot: Int32(i), generation: e.generation)))
        }

        requests = [:]
        requestsByKey = [:]
        for request in snapshot.requests {
            requests[request.id] = request
            for key in request.keys { requestsByKey[key, default: []].append(request.id) }
            if let due = request.completesAt {
                scheduled.append(ScheduledItem(time: due, seq: request.id, work: .completion(request.id)))
            }
        }
        fetchInFlight = snapshot.fetchInFlight
        keyOutcomes = [:]
        validationOutcomes = [:]
        mutationQueue = Deque(snapshot.mutationQueue)
        replaying = snapshot.replaying

        scheduledExternal = [:]
        for command in snapshot.scheduledCommands {
            scheduledExternal[command.id] = ScheduledCommand(token: scheduleCommand(command), due: command.due)
            scheduled.append(ScheduledItem(time: command.due, seq: command.id, work: .external(command.id)))
        }
        heap = Heap(scheduled)

        if let server = snapshot.server, let state = origin.persistentState {
            state.restore(server)
        }
    }
}
