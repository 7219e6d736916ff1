// How the parts of a decoded snapshot agree: the rules the engine relies on once it runs from the
// state (those `CacheEngine.invariantViolations()` checks, seen from the document's side). A field
// can be well-formed on its own and still contradict another; `restore` refuses such a document
// with the JSON path of the first field at fault, before anything is applied.

extension Snapshot {
    /// Checks the decoded fields against each other.
    /// - Throws: `SnapshotError` with the path of the first contradiction.
    /// - Complexity: O(n + r + q + l) for n entries (and their mutation logs), r requests,
    ///   q queued mutations and l log lines.
    func checkConsistency() throws(SnapshotError) {
        if clockStart > now { throw SnapshotError(path: "clock_start", "is after now") }
        if now == .max { throw SnapshotError(path: "now", "is the clock's end (\(CacheEngine.endOfTime)), which the clock never reaches") }
        try checkEntries()
        try checkPending()
        try checkLog()
    }

    /// Fails with `message` unless `id`, a sequence number in use, is at most the top-level `seq`.
    private func within(_ id: UInt64, _ path: @autoclosure () -> String) throws(SnapshotError) {
        if id > seq { throw SnapshotError(path: path(), "\(id) is past the top-level seq \(seq) (seq must be at least every sequence number in use)") }
    }

    /// The mutation ids in flight (a mutate request's) and queued.
    var mutationsKnown: (inFlight: Set<UInt64>, queued: Set<UInt64>) {
        var inFlight = Set<UInt64>()
        for r in requests { if let m = r.mutation { inFlight.insert(m.id) } }
        return (inFlight, Set(mutationQueue.map(\.id)))
    }

    private func checkEntries() throws(SnapshotError) {
        var perNamespace = Array(repeating: 0, count: namespaces.count)
        let known = mutationsKnown
        for (i, e) in entries.enumerated() {
            try checkEntry(e, at: i, known: known)
            perNamespace[Int(e.namespace)] += 1
        }
        for (i, ns) in namespaces.enumerated() {
            if let max = ns.policy.max, perNamespace[i] > max {
                throw SnapshotError(path: "namespaces.\(ns.name).max", "is \(max), but entries holds \(perNamespace[i]) entries of \(ns.name)")
            }
        }
    }

    /// Checks one decoded entry, `entries[i]`, against the state (its clock, sequence numbers and
    /// the mutations `known`): a snapshot's entries and a store's rows (`append`) alike.
    /// - Throws: `SnapshotError` with the path of the first contradiction.
    func checkEntry(_ e: Entry, at i: Int, known: (inFlight: Set<UInt64>, queued: Set<UInt64>)) throws(SnapshotError) {
        // The path is written only for an error: most documents have none.
        var path: String { "entries[\(i)]" }
        // Times: stored, then stale and expired no earlier; nothing stored after now; an
        // expiry that passed was counted (the engine reports each one when the clock passes it).
        if e.storedAt > now { throw SnapshotError(path: "\(path).stored_at", "is after now (\(TimeText.iso8601(ms: now)))") }
        if e.staleAt < e.storedAt { throw SnapshotError(path: "\(path).stale_at", "is before stored_at") }
        if e.expiresAt < e.storedAt { throw SnapshotError(path: "\(path).expires_at", "is before stored_at") }
        if e.expiresAt < now && !e.expiryReported {
            throw SnapshotError(path: "\(path).expiry_counted", "is false, but expires_at is before now: the expiry passed uncounted")
        }
        try within(e.storedSeq, "\(path).seq")
        try within(e.storedRequest, "\(path).stored_request")
        try within(e.lastLocalWrite, "\(path).last_write")
        try within(e.lastPut, "\(path).last_put")
        try within(e.expirySeq, "\(path).expiry_seq")
        guard let log = e.log else { return }
        let logPath = "\(path).mutations"
        if log.pending.isEmpty { throw SnapshotError(path: "\(logPath).pending", "is empty: an entry keeps a mutation log only while a mutation is pending") }
        try within(log.baseSeq, "\(logPath).base_seq")
        for (j, item) in log.items.enumerated() {
            try within(item.seq, "\(logPath).items[\(j)].seq")
            if let m = item.mutation { try within(m, "\(logPath).items[\(j)].mutation") }
            if let r = item.reachedServer { try within(r, "\(logPath).items[\(j)].reached_server") }
        }
        for id in log.pending.sorted() {
            try within(id, "\(logPath).pending")
            if !known.queued.contains(id) && !known.inFlight.contains(id) {
                throw SnapshotError(path: "\(logPath).pending", "mutation \(id) is neither queued (pending.queued_mutations) nor in flight (pending.requests)")
            }
        }
    }

    private func checkPending() throws(SnapshotError) {
        let known = mutationsKnown
        for (i, r) in requests.enumerated() {
            let path = "pending.requests[\(i)]"
            try within(r.id, "\(path).id")
            if r.startedAt > now { throw SnapshotError(path: "\(path).started_at", "is after now") }
            if let due = r.completesAt, due < now {
                throw SnapshotError(path: "\(path).completes_at", "is before now: the request would have completed")
            }
            if let m = r.mutation { try within(m.id, "\(path).mutation.id") }
        }
        var previous: UInt64?
        for (i, m) in mutationQueue.enumerated() {
            let path = "pending.queued_mutations[\(i)].id"
            try within(m.id, path)
            if let p = previous, m.id <= p { throw SnapshotError(path: path, "mutations are queued in increasing id order (\(m.id) after \(p))") }
            if known.inFlight.contains(m.id) { throw SnapshotError(path: path, "mutation \(m.id) is both queued and in flight") }
            previous = m.id
        }
        for (i, command) in scheduledCommands.enumerated() {
            try within(command.id, "pending.scheduled[\(i)].id")
            if command.due < now { throw SnapshotError(path: "pending.scheduled[\(i)].due", "is before now: the command would have run") }
        }
    }

    private func checkLog() throws(SnapshotError) {
        var inFlight = Set<UInt64>()
        for r in requests { inFlight.insert(r.id) }
        var pendingLines = Set<UInt64>()
        for (i, line) in requestLog.enumerated() {
            try within(line.id, "server.log[\(i)].id")
            guard line.fate == .pending else { continue }
            if !inFlight.contains(line.id) {
                throw SnapshotError(path: "server.log[\(i)].fate", "is pending, but request \(line.id) is not in flight (pending.requests)")
            }
            if !pendingLines.insert(line.id).inserted {
                throw SnapshotError(path: "server.log[\(i)].id", "request \(line.id) has two pending lines")
            }
        }
    }
}
