/// A request that has just completed, as the engine reports it to its delegate.
@_spi(Engine) public struct RequestCompletion: Sendable, Equatable {
    public var id: UInt64
    public var kind: RequestKind
    public var keys: [String]
    /// The answer the request completed with: the origin's, or the timeout's failure.
    public var answer: RequestAnswer?
    /// An HTTP request's answer (status, fields, body), when it got one.
    public var http: HTTPAnswer? = nil
    /// This attempt failed and the request will be sent again (`retry=`): it stays in flight,
    /// and its readers keep waiting for the attempt that ends it.
    public var retried = false
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
/// virtual clock order them the same way: a request's completion is the item (time, request id)
/// (for a retry, its attempt's sequence number: `answerSeq`), exactly where a simulated server
/// answering after the same latency puts it.
extension CacheEngine {
    /// The largest (time, sequence) of a scheduled item run so far (kept by `scheduler`).
    var maxRunKey: (time: Int64, seq: UInt64) { scheduler.maxRunKey }

    /// Live mode: a deferred request (an app's async call) being sent now, its first attempt or
    /// a retry, fails `limit` after now unless its answer is scheduled earlier, where `limit` is
    /// the smallest `timeout=` of its keys' namespaces, else `liveTimeout`. The timeout is armed
    /// here, as the engine sends it, not once the app's call has started: a request sent on the
    /// way while the cache catches up with the clock (its timer woke late) then times out at its
    /// own time inside that catch-up, where the virtual clock's replay of it does.
    /// - Returns: the deadline, to be scheduled by the caller as its request's completion item;
    ///   nil in virtual mode (no `liveTimeout`: a deferred request waits for its answer).
    func armLiveTimeout(_ request: inout InFlight) -> Int64? {
        guard let live = liveTimeout else { return nil }
        let limit = max(0, timeout(for: request.keys) ?? live)
        let failure = OriginFailure.timedOut(after: limit)
        request.answer = request.kind == .validate ? .validation(.failure(failure)) : .keys(.failure(failure))
        request.completesAt = now.addingClamped(limit)
        return request.completesAt
    }

    /// Schedules the answer to a deferred fetch or mutation at `time` (not before `now`), as
    /// the item (time, `answerSeq(of: id)`). The timeout's item, if any, stays and finds the
    /// request done.
    /// - Returns: false when the request has completed or its timeout falls before `time`: the
    ///   answer is then not used.
    func scheduleAnswer(_ id: UInt64, _ result: Result<[KeyAnswer], OriginFailure>, at time: Int64) -> Bool {
        defer { if checksInvariants { checkInvariants() } }
        guard var request = requests[id], request.kind != .validate else { return false }
        let time = max(time, now)
        if let due = request.completesAt, due < time { return false }
        request.answer = .keys(result)
        // At the timeout's own time, its item completes the request with this answer.
        if let due = request.completesAt, due == time {
            requests[id] = request
            return true
        }
        if let due = request.completesAt { scheduler.supersede(completion: id, at: due, seq: answerSeq(of: id)) }
        request.completesAt = time
        requests[id] = request
        scheduler.insert(ScheduledItem(time: time, seq: answerSeq(of: id), work: .completion(id)))
        return true
    }

    /// Which attempt of request `id` is being made: 0 for the first, k for its k-th retry.
    /// - Complexity: O(1).
    func attempt(of id: UInt64) -> Int { behaviours.retries[id]?.made ?? 0 }

    /// Whether attempt `attempt` of request `id` is in flight: sent, not yet completed, and not
    /// failed and waiting to be retried. - Complexity: O(1).
    func isInFlight(_ id: UInt64, attempt: Int) -> Bool {
        requests[id] != nil && behaviours.retries[id]?.due == nil && self.attempt(of: id) == attempt
    }

    /// The sequence number that orders the answer of request `id`'s current attempt among the
    /// items of its millisecond, as the virtual clock orders it: the id for its first attempt,
    /// its completion item's for a retry. - Complexity: O(1).
    func answerSeq(of id: UInt64) -> UInt64 { behaviours.retries[id]?.attemptSeq ?? id }

    /// Reports a completed request, or a failed attempt of one that will be retried, to the delegate.
    func reportCompletion(_ request: InFlight, http: HTTPAnswer? = nil, retried: Bool = false) {
        guard let delegate else { return }
        let answer: RequestAnswer?
        switch request.answer {
        case .keys(let result)?: answer = .keys(result)
        case .validation(let result)?: answer = .validation(result)
        case nil: answer = nil
        }
        delegate.cacheEngine(self, completed: RequestCompletion(id: request.id, kind: request.kind, keys: request.keys,
                                                                answer: answer, http: http, retried: retried))
    }
}
