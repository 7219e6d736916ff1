import DequeModule

/// A queued expiry: the entry in `slot` expires at `time` unless it changed since (its
/// `generation` moved on, its expiry was overridden or reported, or it was removed).
struct ExpiryRecord {
    var time: Int64
    var seq: UInt64
    var slot: Int32
    var generation: UInt32
}

/// The expiries to report, one FIFO per namespace slot. The entries of a namespace share a ttl,
/// so records are appended in expiry order and one scan item in the scheduler per namespace
/// (for the head record) is enough; records of entries that changed since are dropped lazily.
///
/// Invariants (`invariantViolations()`):
/// - each FIFO is ordered by (time, sequence number);
/// - a FIFO's scan is marked scheduled whenever it holds a record (the engine checks the
///   scheduler holds that scan, and that every entry waiting to expire has a live record).
struct ExpiryQueues {
    struct Queue {
        /// Expiry records in (time, seq) order; dead ones are skipped lazily.
        var records = Deque<ExpiryRecord>()
        /// Bumped when the FIFO is rebuilt, so a scheduled scan of the old one is ignored.
        var epoch: UInt32 = 0
        /// A scan item for this FIFO (and its `epoch`) is in the scheduler.
        var scanScheduled = false
    }

    private(set) var queues: [Queue]

    /// Empty FIFOs for `namespaceCount` namespaces.
    /// - Complexity: O(k) for k namespaces.
    init(namespaceCount: Int = 0) {
        queues = Array(repeating: Queue(), count: namespaceCount)
    }

    /// Adds the FIFO of one more namespace (the next namespace slot).
    /// - Complexity: O(1) amortized.
    mutating func addNamespace() { queues.append(Queue()) }

    /// The first record of a namespace's FIFO.
    /// - Complexity: O(1).
    @inline(__always)
    func head(_ ns: Int32) -> ExpiryRecord? { queues[Int(ns)].records.first }

    /// Appends a record to its namespace's FIFO (it must not come before the last one).
    /// - Returns: the scan to schedule, when none was.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func enqueue(_ record: ExpiryRecord, in ns: Int32) -> ScheduledItem? {
        queues[Int(ns)].records.append(record)
        return claimScan(ns)
    }

    /// Marks a scan of the namespace's FIFO scheduled, unless one is or the FIFO is empty.
    /// - Returns: the scan item to put in the scheduler, due at the head record's time.
    /// - Complexity: O(1).
    mutating func claimScan(_ ns: Int32) -> ScheduledItem? {
        let n = Int(ns)
        guard !queues[n].scanScheduled, let head = queues[n].records.first else { return nil }
        queues[n].scanScheduled = true
        return ScheduledItem(time: head.time, seq: head.seq, work: .expiryScan(ns: ns, epoch: queues[n].epoch))
    }

    /// Starts a scan the scheduler ran: false for a scan of a FIFO since rebuilt (ignore it).
    /// - Complexity: O(1).
    mutating func beginScan(_ ns: Int32, epoch: UInt32) -> Bool {
        guard queues[Int(ns)].epoch == epoch else { return false }
        queues[Int(ns)].scanScheduled = false
        return true
    }

    /// Drops the head record of a namespace's FIFO if it is the record of `slot` at `generation`
    /// (an entry just removed, so the record is dead).
    /// - Complexity: O(1).
    @inline(__always)
    mutating func dropHead(_ ns: Int32, ifOf slot: Int32, generation: UInt32) {
        guard let head = queues[Int(ns)].records.first, head.slot == slot, head.generation == generation else { return }
        queues[Int(ns)].records.removeFirst()
    }

    /// Removes the head record of a namespace's FIFO.
    /// - Complexity: O(1).
    mutating func removeHead(_ ns: Int32) {
        queues[Int(ns)].records.removeFirst()
    }

    /// Drops the records of a namespace's FIFO that `isLive` refuses, keeping the others in order.
    /// A scan already scheduled stays (it may now be early: it finds the head not due and
    /// schedules the next scan for it).
    /// - Complexity: O(r) for the r records of the FIFO.
    mutating func compact(_ ns: Int32, keeping isLive: (ExpiryRecord) -> Bool) {
        let n = Int(ns)
        queues[n].records = Deque(queues[n].records.filter(isLive))
    }

    /// Replaces a namespace's FIFO with `records` (in (time, seq) order) and forgets its scan.
    /// - Parameter restoring: keep the epoch and mark a scan scheduled when there is a record
    ///   (the caller schedules it with the returned item); else bump the epoch, so a scan
    ///   scheduled for the old FIFO is ignored.
    /// - Returns: the scan item to schedule, if any.
    /// - Complexity: O(r) for the r records given.
    mutating func replace(_ ns: Int32, with records: [ExpiryRecord], restoring: Bool = false) -> ScheduledItem? {
        let n = Int(ns)
        queues[n].records = Deque(records)
        if !restoring { queues[n].epoch &+= 1 }
        queues[n].scanScheduled = false
        return claimScan(ns)
    }
}

// MARK: - Invariants

extension ExpiryQueues {
    /// What is wrong with the FIFOs, one message per broken rule (see the type's invariants);
    /// empty when they are sound.
    /// - Complexity: O(r) for r records.
    func invariantViolations() -> [String] {
        var v: [String] = []
        for ns in queues.indices {
            let queue = queues[ns]
            if !queue.records.isEmpty && !queue.scanScheduled {
                v.append("expiry FIFO of namespace slot \(ns): holds \(queue.records.count) records but no scan is scheduled")
            }
            var previous: ExpiryRecord?
            for record in queue.records {
                if let p = previous, record.time < p.time || (record.time == p.time && record.seq < p.seq) {
                    v.append("expiry FIFO of namespace slot \(ns): (\(record.time), \(record.seq)) of slot \(record.slot) "
                             + "follows (\(p.time), \(p.seq)) of slot \(p.slot)")
                }
                previous = record
            }
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "ExpiryQueues invariants broken:\n" + violations.joined(separator: "\n"))
    }

    /// Test hook: reverses a namespace's FIFO, as an append out of order would leave it.
    mutating func testingReverse(_ ns: Int32) {
        queues[Int(ns)].records = Deque(queues[Int(ns)].records.reversed())
    }
}
