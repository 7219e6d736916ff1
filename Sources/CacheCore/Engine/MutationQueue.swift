import DequeModule

/// An optimistic mutation as sent to the origin (B11).
struct QueuedMutation {
    var id: UInt64
    var keys: [String]
    var patch: Patch
    var entityID: String?
    /// Applied only when the server confirms it (`MutationOptions.pessimistic`).
    var pessimistic = false
    /// Its answer has no body: on success the keys are refetched (`MutationOptions.refetch`).
    var refetch = false
    /// Sent with an idempotency key and retried (`MutationOptions.idempotent`).
    var idempotent = false
}

/// The offline queue of optimistic mutations (B11): mutations made while the origin was
/// unreachable or behind earlier queued ones, replayed one at a time, in order.
///
/// Invariants (`invariantViolations()`):
/// - queued mutations are in the order they were made (increasing ids), each with a key (the
///   engine checks that none is in flight and that the replay is a mutation in flight).
struct MutationQueue {
    /// Mutations waiting to be sent, oldest first.
    private(set) var queued = Deque<QueuedMutation>()
    /// The request of the replayed mutation in flight, if one is.
    private(set) var replaying: UInt64?

    init() {}

    /// The queue of a snapshot.
    /// - Complexity: O(q) for q mutations.
    init(restoring queued: [QueuedMutation], replaying: UInt64?) {
        self.queued = Deque(queued)
        self.replaying = replaying
    }

    var isEmpty: Bool { queued.isEmpty }

    /// Queues a mutation behind the others.
    /// - Complexity: O(1) amortized.
    mutating func append(_ mutation: QueuedMutation) { queued.append(mutation) }

    /// Takes the next mutation to replay, unless one is being replayed (then nil).
    /// - Complexity: O(1).
    mutating func takeNext() -> QueuedMutation? {
        guard replaying == nil else { return nil }
        return queued.popFirst()
    }

    /// Notes the request replaying the mutation taken last.
    /// - Complexity: O(1).
    mutating func markReplaying(_ request: UInt64) { replaying = request }

    /// Notes that request `id` completed.
    /// - Returns: whether it was the replay in flight (then the next may go).
    /// - Complexity: O(1).
    mutating func finished(_ id: UInt64) -> Bool {
        guard replaying == id else { return false }
        replaying = nil
        return true
    }

    /// Drops the keys satisfying `inScope` from every queued mutation, and mutations left with none
    /// (a logged-out user's likes never replay).
    /// - Complexity: O(queued keys).
    mutating func drop(keysWhere inScope: (String) -> Bool) {
        guard !queued.isEmpty else { return }
        var kept = Deque<QueuedMutation>()
        for var m in queued {
            m.keys.removeAll(where: inScope)
            if !m.keys.isEmpty { kept.append(m) }
        }
        queued = kept
    }
}

// MARK: - Invariants

extension MutationQueue {
    /// What is wrong with the queue, one message per broken rule (see the type's invariants);
    /// empty when it is sound.
    /// - Complexity: O(queued mutations).
    func invariantViolations() -> [String] {
        var v: [String] = []
        var previous: UInt64?
        for m in queued {
            if let p = previous, m.id <= p { v.append("mutation queue: mutation \(m.id) is queued after \(p)") }
            if m.keys.isEmpty { v.append("mutation queue: mutation \(m.id) has no key") }
            previous = m.id
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "MutationQueue invariants broken:\n" + violations.joined(separator: "\n"))
    }
}
