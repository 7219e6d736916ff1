/// A poll: a key refetched every `every` ms (`poll KEY every=D`).
struct Poll: Equatable {
    /// The period, ms (at least 1).
    var every: Int64
    /// When the next refetch is due.
    var due: Int64
    /// The id of its scheduled item (`ScheduledItem.Work.poll`); a new one for each turn.
    var id: UInt64
}

/// What an app opts into for some keys, beyond reading them: active keys (refetched when they
/// turn stale or expire, on `focus` and on reconnect) and polls (refetched every D).
///
/// Invariants (`invariantViolations()`):
/// - `pollKeys` is the inverse of `polls`: each poll's id leads to its key, and no other id is there;
/// - every poll's period is at least 1 ms.
struct AppBehaviours: Equatable {
    /// The active keys (`watch KEY --active`), canonical.
    var active: Set<String> = []
    /// The polls by key.
    private(set) var polls: [String: Poll] = [:]
    /// Poll id → key (the scheduled item names the id).
    private(set) var pollKeys: [UInt64: String] = [:]

    init() {}

    /// The active keys and polls of a snapshot.
    /// - Complexity: O(a + p).
    init(active: Set<String>, polls: [String: Poll]) {
        self.active = active
        for (key, poll) in polls { setPoll(key, poll) }
    }

    var isEmpty: Bool { active.isEmpty && polls.isEmpty }

    /// Adds or replaces the poll of `key`.
    /// - Complexity: O(1).
    mutating func setPoll(_ key: String, _ poll: Poll) {
        if let old = polls[key] { pollKeys.removeValue(forKey: old.id) }
        polls[key] = poll
        pollKeys[poll.id] = key
    }

    /// Removes the poll of `key`. - Returns: whether there was one.
    /// - Complexity: O(1).
    @discardableResult
    mutating func removePoll(_ key: String) -> Bool {
        guard let old = polls.removeValue(forKey: key) else { return false }
        pollKeys.removeValue(forKey: old.id)
        return true
    }

    /// The key of the poll whose current item has id `id` and is due at `time` (nil: a stale item).
    /// - Complexity: O(1).
    func pollKey(id: UInt64, at time: Int64) -> String? {
        guard let key = pollKeys[id], let poll = polls[key], poll.due == time else { return nil }
        return key
    }

    func invariantViolations() -> [String] {
        var v: [String] = []
        for (key, poll) in polls.sorted(by: { $0.key < $1.key }) {
            if pollKeys[poll.id] != key { v.append("behaviours: poll of \(key) has id \(poll.id), which leads to \(pollKeys[poll.id] ?? "nothing")") }
            if poll.every < 1 { v.append("behaviours: poll of \(key) every \(poll.every) ms") }
        }
        if pollKeys.count != polls.count { v.append("behaviours: \(pollKeys.count) poll ids for \(polls.count) polls") }
        return v
    }
}
