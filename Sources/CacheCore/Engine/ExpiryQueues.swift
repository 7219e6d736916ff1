/// A queued expiry: the entry in `slot` expires (at its `expiresAt`) unless it changed since: it
/// was stored again or removed (its `storedSeq` is no longer `seq`), or its expiry was overridden
/// or reported.
///
/// The record names its entry's store by the store's sequence number, which every store of an
/// entry and every new entry in a slot takes afresh: a record is live exactly while its entry's
/// `storedSeq` is the record's. It keeps no time: a live record's is its entry's `expiresAt` (the
/// time changes only with a new store, which makes the record dead, with an override, which does
/// too, or with the namespace's times recomputed, which rebuilds the FIFO), and a dead record's
/// is never read. Its sequence number also orders expiries due at one instant.
struct ExpiryRecord: Equatable {
    var slot: Int32
    /// The entry's `storedSeq` when the record was made.
    var seq: UInt64
}

/// The expiries to report, one FIFO per namespace slot. The entries of a namespace share a ttl,
/// so records are appended in expiry order and one scan item in the scheduler per namespace
/// (for the head record) is enough; records of entries that changed since are dropped lazily.
///
/// A FIFO holds each record in 8 bytes (`Packed`): its slot and its sequence number as an offset
/// from a base kept per FIFO. A record whose number is too far from the base to fit in 32 bits
/// (more than some 2^31 sequence numbers after the records before it) is preceded by a mark
/// (`Packed` with a negative slot) that sets a new base for the records after it. The records'
/// numbers are exact: a dead record is never taken for a live one, however long it waits.
///
/// Invariants (`invariantViolations()`):
/// - each FIFO's live records are in (time, sequence number) order (the engine checks that, as
///   their times are their entries');
/// - a FIFO's scan is marked scheduled whenever it holds a record (the engine checks the
///   scheduler holds that scan, and that every entry waiting to expire has a live record);
/// - no FIFO starts with a mark.
struct ExpiryQueues {
    /// A record as a FIFO holds it. `slot >= 0`: the record of that slot whose sequence number
    /// is `offset` past the base in effect; `slot < 0`: a mark, whose low 31 bits and `offset`
    /// hold the base for the records after it, in units of `baseUnit`.
    struct Packed {
        var slot: Int32
        var offset: UInt32
    }

    struct Queue {
        /// Expiry records in (time, seq) order, with the marks of new bases; dead records are
        /// skipped lazily.
        var records = Chunks()
        /// The base of the records from the head up to the first mark.
        var headBase: UInt64 = 0
        /// The base of the records after the last mark (`headBase` when there is none).
        var tailBase: UInt64 = 0
        /// Bumped when the FIFO is rebuilt, so a scheduled scan of the old one is ignored.
        var epoch: UInt32 = 0
        /// A scan item for this FIFO (and its `epoch`) is in the scheduler.
        var scanScheduled = false
    }

    /// The records of a FIFO in chunks of `chunkSize`: an append never copies the records held
    /// (a `Deque` grows by copying them all into a buffer half as large again, and for a moment
    /// holds both: at 1 M records the 7.6 MB of the old one beside the new, which was the
    /// process's peak), and the memory follows the records, one chunk at most more (the first
    /// chunk grows as an array does, up to `chunkSize`).
    struct Chunks: Sequence {
        /// 32 KiB of records a chunk.
        static let chunkSize = 4096
        /// The chunks; those before `firstChunk` are emptied, dropped from time to time.
        private var chunks: [[Packed]] = []
        private var firstChunk = 0
        /// The index of the first record in `chunks[firstChunk]`.
        private var head = 0
        /// The number of records.
        private(set) var count = 0

        var isEmpty: Bool {
            @inline(__always) get { count == 0 }
        }

        var first: Packed? {
            @inline(__always) get { count == 0 ? nil : chunks[firstChunk][head] }
        }

        /// - Complexity: O(1) amortized.
        @inline(__always)
        mutating func append(_ p: Packed) {
            let last = chunks.count - 1
            if last >= firstChunk && chunks[last].count < Self.chunkSize {
                chunks[last].append(p)
            } else {
                appendChunk(p)
            }
            count += 1
        }

        /// Starts a chunk with `p`: a whole one after a full chunk; else (the FIFO was empty) one
        /// that grows as an array does, so that a FIFO of a few records (a namespace of a few
        /// entries) holds a few records' memory, not a chunk's.
        private mutating func appendChunk(_ p: Packed) {
            var chunk: [Packed] = []
            if chunks.count > firstChunk { chunk.reserveCapacity(Self.chunkSize) }
            chunk.append(p)
            chunks.append(chunk)
        }

        /// Removes the first record (there must be one).
        /// - Complexity: O(1) amortized.
        @inline(__always)
        mutating func removeFirst() {
            precondition(count > 0, "removeFirst of an empty FIFO")
            head += 1
            count -= 1
            if head == chunks[firstChunk].count { dropFirstChunk() }
        }

        private mutating func dropFirstChunk() {
            chunks[firstChunk] = []
            firstChunk += 1
            head = 0
            if firstChunk == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                firstChunk = 0
            } else if firstChunk >= 64 && 2 * firstChunk >= chunks.count {
                chunks.removeFirst(firstChunk)
                firstChunk = 0
            }
        }

        func makeIterator() -> Iterator { Iterator(chunks: chunks, chunk: firstChunk, index: head) }

        /// The records in order. (A struct: an `AnyIterator` over a closure kept its place in
        /// captured variables, boxes checked for exclusive access at run time on every record,
        /// some 80 instructions a record, 4.5% of a batch of puts and gets that compacts its FIFOs.)
        struct Iterator: IteratorProtocol {
            let chunks: [[Packed]]
            var chunk: Int
            var index: Int

            @inline(__always)
            mutating func next() -> Packed? {
                while chunk < chunks.count {
                    if index < chunks[chunk].count {
                        defer { index += 1 }
                        return chunks[chunk][index]
                    }
                    chunk += 1
                    index = 0
                }
                return nil
            }
        }
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

    // MARK: Bases

    /// Bases are multiples of this (2^30).
    static let baseUnit: UInt64 = 1 << 30

    /// The base a new run of records starts with for a record of `seq`: some 2^30 to 2^31 below
    /// it, so that the records of the run may have numbers from about 2^30 below to 2^31 above.
    @inline(__always)
    static func base(for seq: UInt64) -> UInt64 {
        seq >= 2 * baseUnit ? (seq / baseUnit - 1) * baseUnit : 0
    }

    /// `seq` as an offset from `base`, or nil when it is before it or 2^32 or more past it.
    @inline(__always)
    static func offset(_ seq: UInt64, from base: UInt64) -> UInt32? {
        seq >= base && seq - base <= UInt64(UInt32.max) ? UInt32(truncatingIfNeeded: seq - base) : nil
    }

    /// The mark that sets `base` (a multiple of `baseUnit`).
    static func mark(_ base: UInt64) -> Packed {
        let units = base / baseUnit
        return Packed(slot: Int32(bitPattern: 0x8000_0000 | UInt32(truncatingIfNeeded: units >> 32)),
                      offset: UInt32(truncatingIfNeeded: units))
    }

    /// The base a mark sets.
    static func base(ofMark p: Packed) -> UInt64 {
        (UInt64(UInt32(bitPattern: p.slot) & 0x7FFF_FFFF) << 32 | UInt64(p.offset)) * baseUnit
    }

    /// Appends `record` to `queue`, after a mark of a new base when its number does not fit the
    /// tail's base.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    private static func append(_ record: ExpiryRecord, to queue: inout Queue) {
        if let offset = offset(record.seq, from: queue.tailBase), !queue.records.isEmpty {
            queue.records.append(Packed(slot: record.slot, offset: offset))
            return
        }
        let base = base(for: record.seq)
        if queue.records.isEmpty {
            queue.headBase = base
        } else {
            queue.records.append(mark(base))
        }
        queue.tailBase = base
        queue.records.append(Packed(slot: record.slot, offset: UInt32(truncatingIfNeeded: record.seq - base)))
    }

    /// `records` packed into a FIFO (epoch and scan left as in a new one).
    /// - Complexity: O(r) for the r records.
    private static func packed<S: Sequence>(_ records: S) -> Queue where S.Element == ExpiryRecord {
        var queue = Queue()
        for record in records { append(record, to: &queue) }
        return queue
    }

    // MARK: Records

    /// The first record of a namespace's FIFO.
    /// - Complexity: O(1).
    @inline(__always)
    func head(_ ns: Int32) -> ExpiryRecord? {
        guard let first = queues[Int(ns)].records.first else { return nil }
        return ExpiryRecord(slot: first.slot, seq: queues[Int(ns)].headBase &+ UInt64(first.offset))
    }

    /// The records of a namespace's FIFO, dead ones included, in order.
    /// - Complexity: O(r) for its r records.
    func records(_ ns: Int32) -> [ExpiryRecord] {
        var out: [ExpiryRecord] = []
        let queue = queues[Int(ns)]
        out.reserveCapacity(queue.records.count)
        var base = queue.headBase
        for p in queue.records {
            if p.slot < 0 {
                base = Self.base(ofMark: p)
            } else {
                out.append(ExpiryRecord(slot: p.slot, seq: base &+ UInt64(p.offset)))
            }
        }
        return out
    }

    /// The number of records and marks a namespace's FIFO holds.
    /// - Complexity: O(1).
    @inline(__always)
    func count(_ ns: Int32) -> Int { queues[Int(ns)].records.count }

    /// Appends a record to its namespace's FIFO (it must not come before the last one). The
    /// caller then claims the FIFO's scan (`EngineState.claimExpiryScan`), which needs the head's
    /// time and sequence number from its entry.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func enqueue(_ record: ExpiryRecord, in ns: Int32) {
        Self.append(record, to: &queues[Int(ns)])
    }

    /// Whether a scan of the namespace's FIFO is in the scheduler.
    @inline(__always)
    func scanScheduled(_ ns: Int32) -> Bool { queues[Int(ns)].scanScheduled }

    /// Marks a scan of the namespace's FIFO scheduled, unless one is or the FIFO is empty. The
    /// head record must be live, `time` and `seq` its entry's `expiresAt` and `storedSeq`.
    /// - Returns: the scan item to put in the scheduler, due at the head record's (time, seq).
    /// - Complexity: O(1).
    mutating func claimScan(_ ns: Int32, time: Int64, seq: UInt64) -> ScheduledItem? {
        let n = Int(ns)
        guard !queues[n].scanScheduled, !queues[n].records.isEmpty else { return nil }
        queues[n].scanScheduled = true
        return ScheduledItem(time: time, seq: seq, work: .expiryScan(ns: ns, epoch: queues[n].epoch))
    }

    /// Starts a scan the scheduler ran: false for a scan of a FIFO since rebuilt (ignore it).
    /// - Complexity: O(1).
    mutating func beginScan(_ ns: Int32, epoch: UInt32) -> Bool {
        guard queues[Int(ns)].epoch == epoch else { return false }
        queues[Int(ns)].scanScheduled = false
        return true
    }

    /// Drops the head record of a namespace's FIFO if it is the record of `slot` at `seq`
    /// (an entry just removed, so the record is dead).
    /// - Complexity: O(1).
    @inline(__always)
    mutating func dropHead(_ ns: Int32, ifOf slot: Int32, seq: UInt64) {
        guard let head = head(ns), head.slot == slot, head.seq == seq else { return }
        removeHead(ns)
    }

    /// Removes the head record of a namespace's FIFO, and the marks after it (taking their base).
    /// - Complexity: O(1) plus the marks.
    mutating func removeHead(_ ns: Int32) {
        let n = Int(ns)
        queues[n].records.removeFirst()
        while let first = queues[n].records.first, first.slot < 0 {
            queues[n].headBase = Self.base(ofMark: first)
            queues[n].records.removeFirst()
        }
    }

    /// Drops the records of a namespace's FIFO that `isLive` refuses, keeping the others in order.
    /// A scan already scheduled stays (it may now be early: it finds the head not due and
    /// schedules the next scan for it).
    /// - Complexity: O(r) for the r records of the FIFO.
    mutating func compact(_ ns: Int32, keeping isLive: (ExpiryRecord) -> Bool) {
        let n = Int(ns)
        // Packed as they are read: no list of the records, nor of those kept, in between.
        var kept = Queue()
        var base = queues[n].headBase
        for p in queues[n].records {
            if p.slot < 0 {
                base = Self.base(ofMark: p)
                continue
            }
            let record = ExpiryRecord(slot: p.slot, seq: base &+ UInt64(p.offset))
            if isLive(record) { Self.append(record, to: &kept) }
        }
        queues[n].records = kept.records
        queues[n].headBase = kept.headBase
        queues[n].tailBase = kept.tailBase
    }

    /// Replaces a namespace's FIFO with `records` (in (time, seq) order) and forgets its scan;
    /// the caller claims the new one (`EngineState.claimExpiryScan`) and schedules it.
    /// - Parameter restoring: keep the epoch; else bump it, so a scan scheduled for the old FIFO
    ///   is ignored.
    /// - Complexity: O(r) for the r records given.
    mutating func replace<S: Sequence>(_ ns: Int32, with records: S, restoring: Bool = false) where S.Element == ExpiryRecord {
        let n = Int(ns)
        let new = Self.packed(records)
        queues[n].records = new.records
        queues[n].headBase = new.headBase
        queues[n].tailBase = new.tailBase
        if !restoring { queues[n].epoch &+= 1 }
        queues[n].scanScheduled = false
    }
}

// MARK: - Invariants

extension ExpiryQueues {
    /// What is wrong with the FIFOs, one message per broken rule (see the type's invariants);
    /// empty when they are sound.
    /// - Complexity: O(k) for k namespaces.
    func invariantViolations() -> [String] {
        var v: [String] = []
        for ns in queues.indices {
            let queue = queues[ns]
            if !queue.records.isEmpty && !queue.scanScheduled {
                v.append("expiry FIFO of namespace slot \(ns): holds \(queue.records.count) records but no scan is scheduled")
            }
            if let first = queue.records.first, first.slot < 0 {
                v.append("expiry FIFO of namespace slot \(ns): starts with the mark of a base")
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
        let reversed = Self.packed(records(ns).reversed())
        queues[Int(ns)].records = reversed.records
        queues[Int(ns)].headBase = reversed.headBase
        queues[Int(ns)].tailBase = reversed.tailBase
    }
}
