import DequeModule

/// A queued expiry: the entry in `slot` expires at `time` unless it changed since (its
/// `generation` moved on, its expiry was overridden or reported, or it was removed).
///
/// 16 bytes. The sequence number that orders expiries due at one instant is not kept: a live
/// record's is its entry's `storedSeq` (every record is made with it, and the entry's `storedSeq`
/// changes only with its generation, which makes the record dead), and a dead record needs none.
struct ExpiryRecord {
    var time: Int64
    var slot: Int32
    var generation: UInt32
}

/// The expiries to report, one FIFO per namespace slot. The entries of a namespace share a ttl,
/// so records are appended in expiry order and one scan item in the scheduler per namespace
/// (for the head record) is enough; records of entries that changed since are dropped lazily.
///
/// Invariants (`invariantViolations()`):
/// - each FIFO is ordered by time (and its live records by (time, sequence number), which the
///   engine checks: the sequence numbers are its entries');
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

    /// Appends a record to its namespace's FIFO (it must not come before the last one). The
    /// caller then claims the FIFO's scan (`EngineState.claimExpiryScan`), which needs the head's
    /// sequence number from its entry.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func enqueue(_ record: ExpiryRecord, in ns: Int32) {
        queues[Int(ns)].records.append(record)
    }

    /// Whether a scan of the namespace's FIFO is in the scheduler.
    @inline(__always)
    func scanScheduled(_ ns: Int32) -> Bool { queues[Int(ns)].scanScheduled }

    /// Marks a scan of the namespace's FIFO scheduled, unless one is or the FIFO is empty. The
    /// head record must be live, `seq` its entry's `storedSeq`.
    /// - Returns: the scan item to put in the scheduler, due at the head record's (time, seq).
    /// - Complexity: O(1).
    mutating func claimScan(_ ns: Int32, seq: UInt64) -> ScheduledItem? {
        let n = Int(ns)
        guard !queues[n].scanScheduled, let head = queues[n].records.first else { return nil }
        queues[n].scanScheduled = true
        return ScheduledItem(time: head.time, seq: seq, work: .expiryScan(ns: ns, epoch: queues[n].epoch))
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

    /// Replaces a namespace's FIFO with `records` (in (time, seq) order) and forgets its scan;
    /// the caller claims the new one (`EngineState.claimExpiryScan`) and schedules it.
    /// - Parameter restoring: keep the epoch; else bump it, so a scan scheduled for the old FIFO
    ///   is ignored.
    /// - Complexity: O(r) for the r records given.
    mutating func replace(_ ns: Int32, with records: [ExpiryRecord], restoring: Bool = false) {
        let n = Int(ns)
        queues[n].records = Deque(records)
        if !restoring { queues[n].epoch &+= 1 }
        queues[n].scanScheduled = false
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
                if let p = previous, record.time < p.time {
                    v.append("expiry FIFO of namespace slot \(ns): (at \(record.time)) of slot \(record.slot) "
                             + "follows (at \(p.time)) of slot \(p.slot)")
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
