/// A fetch sent again after failing (`ns NAME retry=N`).
struct RetryState: Equatable {
    /// The retries sent so far (the first attempt not counted).
    var made: Int
    /// While waiting for the next one: when it is sent, and its scheduled item's sequence number.
    var due: Int64?
    var item: UInt64?
    /// Once a retry is sent: the sequence number of its completion item, which orders its
    /// answer among the items of its millisecond (the first attempt's is the request's id).
    var attemptSeq: UInt64?
    /// A mutation's: an attempt so far failed with an unknown outcome (it may have been applied),
    /// so the last attempt's failure is of unknown outcome too.
    var outcomeUnknown = false
}

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
struct AppBehaviours {
    /// The active keys (`setActive`; the shell's `activate KEY` or `watch KEY --active`), canonical.
    var active: Set<String> = []
    /// The polls by key.
    private(set) var polls: [String: Poll] = [:]
    /// Poll id → key (the scheduled item names the id).
    private(set) var pollKeys: [UInt64: String] = [:]
    /// Fetches in flight that were sent again after failing, by request id.
    var retries: [UInt64: RetryState] = [:]
    /// Patches of mutations made while their key was not cached, waiting for its value, by key.
    var deferred: [String: [MutationLog.Item]] = [:]
    /// The mutations made while their key was not cached, until they complete.
    var deferredMutations: Set<UInt64> = []
    /// When the last fetch of each key of a namespace with a `dedupe=` window was sent (SPEC §1.2);
    /// snapshots keep those whose window is open (`pending.fetch_starts`). Pruned of passed
    /// windows each time it doubles.
    var fetchStarts: [String: Int64] = [:]
    /// The size of `fetchStarts` after its last pruning.
    var fetchStartsPruned = 0
    /// `next-page-drops-writes` (SPEC §1.2): by the id of a next page's fetch, the earlier pages
    /// as they were when it was sent, written back when its answer is stored; snapshots keep them
    /// (`pending.held_pages`).
    var pagesAtRequest: [UInt64: [(key: String, value: StoredValue)]] = [:]

    init() {}

    /// The active keys and polls of a snapshot.
    /// - Complexity: O(a + p).
    init(active: Set<String>, polls: [String: Poll], retries: [UInt64: RetryState] = [:]) {
        self.active = active
        self.retries = retries
        for (key, poll) in polls { setPoll(key, poll) }
    }

    var isEmpty: Bool { active.isEmpty && polls.isEmpty && retries.isEmpty && deferredMutations.isEmpty }

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

    /// - Parameters:
    ///   - inFlight: whether a request id is in flight (every retry's request must be).
    ///   - mutationWaits: whether a mutation is queued or in flight (every deferred one must be).
    func invariantViolations(inFlight: (UInt64) -> Bool, mutationWaits: (UInt64) -> Bool) -> [String] {
        var v: [String] = []
        for id in deferredMutations.sorted() where !mutationWaits(id) {
            v.append("behaviours: deferred mutation \(id) is neither queued nor in flight")
        }
        for id in retries.keys.sorted() where !inFlight(id) { v.append("behaviours: retry of request \(id), which is not in flight") }
        for id in pagesAtRequest.keys.sorted() where !inFlight(id) {
            v.append("behaviours: pages held for request \(id), which is not in flight")
        }
        for (key, items) in deferred.sorted(by: { $0.key < $1.key }) {
            for item in items where !deferredMutations.contains(item.mutation ?? 0) {
                v.append("behaviours: \(key) waits for a patch of mutation \(item.mutation ?? 0), which is not a deferred mutation")
            }
        }
        for (key, poll) in polls.sorted(by: { $0.key < $1.key }) {
            if pollKeys[poll.id] != key { v.append("behaviours: poll of \(key) has id \(poll.id), which leads to \(pollKeys[poll.id] ?? "nothing")") }
            if poll.every < 1 { v.append("behaviours: poll of \(key) every \(poll.every) ms") }
        }
        if pollKeys.count != polls.count { v.append("behaviours: \(pollKeys.count) poll ids for \(polls.count) polls") }
        return v
    }
}
