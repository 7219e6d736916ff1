// Polling (`poll KEY every=D`): a key refetched every D through the scheduler, in (due time,
// sequence) order with everything else; each turn schedules the next one, so a poll holds one
// item at a time.

extension CacheEngine {
    /// The polls, by key: period and next due time.
    public var polls: [(key: String, everyMs: Int64, due: Int64)] {
        behaviours.polls.sorted { $0.key < $1.key }.map { ($0.key, $0.value.every, $0.value.due) }
    }

    /// Refetches `key` every `every` ms from now (replacing its poll, if any). Each turn sends a
    /// fetch unless one is in flight or the origin is unreachable; nobody waits for it.
    /// - Throws: `CacheError` when `every` is under 1 ms; nothing changes.
    public func poll(_ key: String, every: Int64) throws(CacheError) {
        defer { if checksInvariants { checkInvariants() } }
        guard every >= 1 else { throw CacheError("every must be at least 1ms") }
        let key = KeyName.canonical(key)
        schedulePoll(key, every: every, due: now.addingClamped(every))
    }

    /// Stops polling `key`. - Returns: whether it was polled.
    @discardableResult
    public func unpoll(_ key: String) -> Bool {
        defer { if checksInvariants { checkInvariants() } }
        // Its scheduled item stays and finds no poll when it comes up.
        return behaviours.removePoll(KeyName.canonical(key))
    }

    /// Stops every poll. - Returns: the keys that were polled.
    @discardableResult
    public func unpollAll() -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let keys = behaviours.polls.keys.sorted()
        for key in keys { behaviours.removePoll(key) }
        return keys
    }

    private func schedulePoll(_ key: String, every: Int64, due: Int64) {
        let id = nextSeq()
        behaviours.setPoll(key, Poll(every: every, due: due, id: id))
        scheduler.insert(ScheduledItem(time: due, seq: id, work: .poll(id)))
    }

    /// Runs a poll's turn: schedules the next, then sends the fetch (a refresh if the key is cached).
    func runPoll(_ id: UInt64, at time: Int64) {
        guard let key = behaviours.pollKey(id: id, at: time), let poll = behaviours.polls[key] else { return }
        schedulePoll(key, every: poll.every, due: time.addingClamped(poll.every))
        guard origin.isOnline, requestTable.fetch(forKey: key) == nil else { return }
        sendFetch([key], refresh: [entrySlot(forKey: key) != nil])
    }

    /// The scheduled items of restored polls.
    func pollItems() -> [ScheduledItem] {
        behaviours.polls.values.map { ScheduledItem(time: $0.due, seq: $0.id, work: .poll($0.id)) }
    }
}
