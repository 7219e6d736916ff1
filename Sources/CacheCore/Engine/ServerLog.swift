/// The server log: every request sent, in order, with its fate, and where the line of each
/// request still pending is (to set its fate when it completes).
///
/// Invariants (`invariantViolations()`):
/// - the pending lines and the positions are one to one: each position is in range and holds a
///   pending line of its request's id, and each pending line has its position.
struct ServerLog {
    /// Every request sent since the log was last cleared, in order (`CacheEngine.requestLog`).
    private(set) var lines: [RequestLogEntry] = []
    /// Request id → position of its pending line.
    private(set) var positions: [UInt64: Int] = [:]
    /// Lines dropped from the front since the log was last cleared, to keep it within `limit`.
    private(set) var dropped = 0

    /// The most lines the log keeps: past `limit + limit / 4`, the oldest are dropped down to
    /// `limit` (a pending line dropped this way is no longer listed), so memory does not grow with
    /// the length of a run, at O(1) amortized per request (SPEC §4, `server log`).
    static let limit = 10_000

    init() {}

    /// The lines of a snapshot; the pending ones are found again.
    /// - Complexity: O(lines).
    init(restoring lines: [RequestLogEntry], dropped: Int = 0) {
        self.lines = lines
        self.dropped = dropped
        for (i, line) in lines.enumerated() where line.fate == .pending { positions[line.id] = i }
    }

    /// Drops the oldest lines when the log is past its bound, before a line is appended.
    /// - Returns: true when lines were dropped (every position moved).
    /// - Complexity: O(limit), once every `limit / 4` appends.
    mutating func trimIfNeeded() -> Bool {
        guard lines.count >= Self.limit + Self.limit / 4 else { return false }
        let cut = lines.count - Self.limit + 1
        lines.removeFirst(cut)
        dropped += cut
        positions.removeAll(keepingCapacity: true)
        for (i, line) in lines.enumerated() where line.fate == .pending { positions[line.id] = i }
        return true
    }

    /// Appends the line of a request just sent (pending).
    /// - Returns: its position.
    /// - Complexity: O(1) amortized.
    mutating func append(_ line: RequestLogEntry) -> Int {
        let position = lines.count
        if line.fate == .pending { positions[line.id] = position }
        lines.append(line)
        return position
    }

    /// Sets the fate of request `id`'s line, if it is still logged.
    /// - Returns: the position of the line changed.
    /// - Complexity: O(1).
    mutating func setFate(_ id: UInt64, _ fate: RequestLogEntry.Fate) -> Int? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        lines[position].fate = fate
        return position
    }

    /// Forgets every line (`server log clear`); requests in flight are no longer listed either.
    /// - Complexity: O(lines).
    mutating func clear() {
        lines.removeAll()
        positions.removeAll()
        dropped = 0
    }
}

// MARK: - Invariants

extension ServerLog {
    /// What is wrong with the log, one message per broken rule (see the type's invariants);
    /// empty when it is sound.
    /// - Complexity: O(lines).
    func invariantViolations() -> [String] {
        var v: [String] = []
        for (id, position) in positions {
            guard position >= 0, position < lines.count else {
                v.append("server log: request \(id) has position \(position), out of range")
                continue
            }
            if lines[position].id != id || lines[position].fate != .pending {
                v.append("server log: request \(id) has position \(position), which logs request "
                         + "\(lines[position].id) (\(lines[position].fate.rawValue))")
            }
        }
        for i in lines.indices where lines[i].fate == .pending && positions[lines[i].id] != i {
            v.append("server log: pending line \(i) of request \(lines[i].id) has no position")
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "ServerLog invariants broken:\n" + violations.joined(separator: "\n"))
    }
}
