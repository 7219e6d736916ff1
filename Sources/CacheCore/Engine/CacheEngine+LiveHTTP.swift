// Live mode's HTTP reads and requests (`cachesh proxy`): started without waiting, then the `Cache`
// actor resumes the app's task with its share of the outcome once the request completes.

extension CacheEngine {
    /// Starts an app's awaited HTTP read or unsafe request: what `httpGet` / `httpRequest` with
    /// `nowait` do, and when the result must wait for a request, registers as its waiter.
    /// - Returns: the result now (status nil when waiting), and the request to wait for.
    func startAwaitedHTTP(_ start: () throws(CacheError) -> HTTPReadResult) throws(CacheError) -> (HTTPReadResult, UInt64?) {
        http.lastUnawaited = nil
        let result = try start()
        guard result.status == nil, let id = http.lastUnawaited else { return (result, nil) }
        http.lastUnawaited = nil
        http.exchanges[id]?.waiters += 1
        requestTable.addWaiter(id)
        return (result, id)
    }

    /// The share of request `id`'s outcome of one of its waiters, once it completed: `pending` is
    /// what the read had when it started (its `collapsed` and `detail` carry over). A request
    /// voided before it completed gives a `504` (nothing came).
    func finishAwaitedHTTP(_ id: UInt64, pending: HTTPReadResult) -> HTTPReadResult {
        guard var outcome = http.outcomes[id] else {
            var status = pending.cacheStatus
            status.detail = "no answer"
            return HTTPReadResult(key: pending.key, status: 504, cacheStatus: status)
        }
        outcome.waiters -= 1
        http.outcomes[id] = outcome.waiters > 0 ? outcome : nil
        var result = outcome.result
        if pending.cacheStatus.collapsed { result.cacheStatus.collapsed = true }
        if let detail = pending.cacheStatus.detail, result.cacheStatus.detail == nil { result.cacheStatus.detail = detail }
        return result
    }
}
