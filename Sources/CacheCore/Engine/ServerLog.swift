/// The server log: every request sent, in order, with its fate, and where the line of each
/// request still pending is (to set its fate when it completes).
///
/// Invariants:
/// - the pending lines and the positions are one to one: each position is in range and holds a
///   pending line of its request's id, and each pending line has its position.
struct ServerLog {
    /// Every request sent since the log was last cleared, in order (`CacheEngine.requestLog`).
    private(set) var lines: [RequestLogEntry] = []
    /// Request id → position of its pending line.
    private(set) var positions: [UInt64: Int] = [:]

    init() {}

    /// The lines of a snapshot; the pending ones are found again.
    /// - Complexity: O(lines).
    init(restoring lines: [RequestLogEntry]) {
        self.lines = lines
        for (i, line) in lines.enumerated() where line.fate == .pending { positions[line.id] = i }
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
    mutating func setFate(_ id: UInt64, _ fate: RequestLogEntry.Fate) -> Int? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        lines[position].fate = fate
        return position
    }

    /// Forgets every line (`server log clear`); requests in flight are no longer listed either.
    mutating func clear() {
        lines.removeAll()
        positions.removeAll()
    }
}
