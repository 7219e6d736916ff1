// The times of entries and the reporting of expiries: entries (their times), the namespaces'
// expiry FIFOs and the scheduler's scans of them.

extension CacheEngine {
    /// Sets `storedAt = now` and derives the entry's stale and expiry times from its policy.
    func restamp(_ slot: Int32) {
        slots[Int(slot)].restamp(at: now)
        // A new sequence number: the entry's expiry record and `expire in=` item so far are dead.
        slots[Int(slot)].storedSeq = nextSeq()
        applyTimes(slot)
    }

    /// Derives stale and expiry times from `storedAt` and the policy, and queues the expiry.
    /// - Complexity: O(1) amortized (one append to the namespace's expiry FIFO).
    func applyTimes(_ slot: Int32) {
        if let scan = state.applyTimes(slot) { scheduler.insert(scan) }
    }

    /// Rebuilds a namespace's expiry FIFO after its times were recomputed.
    /// - Complexity: O(k log k) for the k entries of the namespace.
    func rebuildExpiryFIFO(_ ns: Int32) {
        expiry.replace(ns, with: expiryRecords(ns, skippingReported: false))
        if let scan = state.claimExpiryScan(ns) { scheduler.insert(scan) }
    }

    /// The expiry records of a namespace's entries whose expiry is not overridden, in (time, seq) order.
    /// - Complexity: O(k log k) for the k entries of the namespace; O(k) when their recency order
    ///   is already that order (entries stored and not read since, as a store's puts leave them).
    func expiryRecords(_ ns: Int32, skippingReported: Bool) -> some Sequence<ExpiryRecord> {
        // Made at its final size, and sorted only when out of order: a restore of 1 M entries
        // grew it by doubling, so its copies were the largest part of a store's open peak.
        var records: [(time: Int64, seq: UInt64, slot: Int32)] = []
        records.reserveCapacity(entries.ordered.count(inNamespace: ns))
        var inOrder = true
        for slot in entries.ordered.slots(inNamespace: ns) {
            let e = slots[Int(slot)]
            if e.expiryOverridden || (skippingReported && e.expiryReported) { continue }
            let record = (time: e.expiresAt, seq: e.storedSeq, slot: slot)
            if inOrder, let last = records.last, (last.time, last.seq) > (record.time, record.seq) { inOrder = false }
            records.append(record)
        }
        if !inOrder { records.sort { ($0.time, $0.seq) < ($1.time, $1.seq) } }
        // Read once, as the FIFO packs them: no second array of the records.
        return records.lazy.map { ExpiryRecord(slot: $0.slot, seq: $0.seq) }
    }

    /// Whether an expiry record still stands for its entry's expiry (else it is skipped).
    func isLive(_ r: ExpiryRecord) -> Bool {
        EngineState.isLive(r, in: slots)
    }

    /// Runs a scheduled scan of a namespace's FIFO, due at (`time`, `seq`): reports the head's
    /// expiry if it is live and due no later than the scan in (time, sequence) order, drops dead
    /// records at the head, and schedules the next scan.
    ///
    /// The scan was scheduled for the record then at the head. When that entry was removed or
    /// stored again since, the head is another record, which may fall due at the same instant
    /// with a later sequence number: work scheduled between the two (an `at` command) runs
    /// first (SPEC §2), so that record gets a scan of its own instead of being reported now.
    func runExpiryScan(_ ns: Int32, epoch: UInt32, time: Int64, seq: UInt64) {
        guard expiry.beginScan(ns, epoch: epoch) else { return }
        // A live head's time and sequence number are its entry's (see `ExpiryRecord`); a dead
        // head is dropped by the claim below, reported or not.
        if let record = expiry.head(ns), isLive(record), (slots[Int(record.slot)].expiresAt, record.seq) <= (time, seq) {
            expiry.removeHead(ns)
            reportExpiry(record.slot)
        }
        // The claim drops the dead records at the head, so the next scan is scheduled for a live one.
        if let scan = state.claimExpiryScan(ns) { scheduler.insert(scan) }
    }

    /// Runs a scheduled `expire in=` override: reports the expiry if the entry still expires then.
    /// The item is the entry's while the entry's `storedSeq` is still the one it was made with.
    func runExpiryOverride(slot: Int32, storedSeq: UInt64, at time: Int64) {
        let e = slots[Int(slot)]
        if e.live && e.storedSeq == storedSeq && e.expiryOverridden && e.expiresAt == time {
            reportExpiry(slot)
        }
    }

    /// Counts and reports an entry's expiry once.
    func reportExpiry(_ slot: Int32) {
        guard !slots[Int(slot)].expiryReported else { return }
        slots[Int(slot)].expiryReported = true
        count(\.expirations, slots[Int(slot)].namespace)
        emit(.expired, slot: slot, source: .cache)
    }
}
