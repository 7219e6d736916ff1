/// A request that has just completed, as the engine reports it to its delegate.
@_spi(Engine) public struct RequestCompletion: Sendable, Equatable {
    public var id: UInt64
    public var kind: RequestKind
    public var keys: [String]
    /// The answer the request completed with: the origin's, or the timeout's failure.
    public var answer: RequestAnswer?
    /// An HTTP request's answer (status, fields, body), when it got one.
    public var http: HTTPAnswer? = nil
}

/// What an origin answered to one request.
public enum RequestAnswer: Sendable, Equatable {
    /// A fetch or a mutation: one answer per key, in the order of the request's keys, or a failure.
    case keys(Result<[KeyAnswer], OriginFailure>)
    case validation(Result<[String: NamespaceVerdict], OriginFailure>)
}

extension CacheEngineDelegate {
    /// Every completed request, after its answer was applied (default: nothing).
    public func cacheEngine(_ engine: CacheEngine, completed request: RequestCompletion) {}
    /// Every change, watched or not, with `reportsAllChanges` (default: nothing).
    public func cacheEngine(_ engine: CacheEngine, noted event: CacheEvent) {}
}

/// Live mode's answers and timeouts as scheduled items, so a live run and a replay of it on the
/// virtual clock order them the same way: a request's completion is the item (time, request id),
/// exactly where a simulated server answering after the same latency puts it.
extension CacheEngine {
    /// The largest (time, sequence) of a scheduled item run so far (kept by `scheduler`).
    var maxRunKey: (time: Int64, seq: UInt64) { scheduler.maxRunKey }

    /// Fails deferred request `id` at `startedAt + limit` unless its answer is scheduled earlier:
    /// the completion is scheduled now with the timeout's failure as its answer.
    /// - Returns: the deadline, or nil when the request is not in flight or already has its answer.
    @discardableResult
    func armTimeout(_ id: UInt64, limit: Int64) -> Int64? {
        defer { if checksInvariants { checkInvariants() } }
        guard var request = requests[id], request.completesAt == nil else { return nil }
        let deadline = request.startedAt.addingClamped(max(0, limit))
        let failure = OriginFailure.timedOut(after: limit)
        request.answer = request.kind == .validate ? .validation(.failure(failure)) : .keys(.failure(failure))
        request.completesAt = deadline
        requests[id] = request
        scheduler.insert(ScheduledItem(time: deadline, seq: id, work: .completion(id)))
        return deadline
    }

    /// Schedules the answer to a deferred fetch or mutation at `time` (not before `now`), as
    /// the item (time, id). The timeout's item, if any, stays and finds the request done.
    /// - Returns: false when the request has completed or its timeout falls before `time`: the
    ///   answer is then not used.
    func scheduleAnswer(_ id: UInt64, _ result: Result<[KeyAnswer], OriginFailure>, at time: Int64) -> Bool {
        defer { if checksInvariants { checkInvariants() } }
        guard var request = requests[id], request.kind != .validate else { return false }
        let time = max(time, now)
        if let due = request.completesAt, due < time { return false }
        request.answer = .keys(result)
        // At the timeout's own time, its item (time, id) completes the request with this answer.
        if let due = request.completesAt, due == time {
            requests[id] = request
            return true
        }
        if let due = request.completesAt { scheduler.supersede(completion: id, at: due) }
        request.completesAt = time
        requests[id] = request
        scheduler.insert(ScheduledItem(time: time, seq: id, work: .completion(id)))
        return true
    }

    /// Reports a completed request to the delegate.
    func reportCompletion(_ request: InFlight, http: HTTPAnswer? = nil) {
        guard let delegate else { return }
        let answer: RequestAnswer?
        switch request.answer {
        case .keys(let result)?: answer = .keys(result)
        case .validation(let result)?: answer = .validation(result)
        case nil: answer = nil
        }
        delegate.cacheEngine(self, completed: RequestCompletion(id: request.id, kind: request.kind, keys: request.keys,
                                                                answer: answer, http: http))
    }
}
