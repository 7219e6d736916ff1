// The app behaviours bug reports need, on the `Cache` actor: cancelling a fetch, active keys and
// `focus`, polling. Each works the same on the virtual clock and live: in live mode a cancelled
// fetch's async call keeps running (a Swift task is not stopped from here) and its answer, when
// it comes, finds the request gone and is dropped; polls and active refetches are scheduled items
// and requests like any other, run when the clock reaches them.

extension Cache {
    /// Cancels every fetch in flight holding `key`: its answer is discarded, its readers get what
    /// the cache has (fate `cancelled`, observers see `cancelled`).
    /// - Throws: `CacheError` naming the key when no fetch of it is in flight.
    /// - Returns: the keys of the requests cancelled.
    @discardableResult
    public func cancel(_ key: String) throws(CacheError) -> [String] {
        sync()
        defer { finish() }
        return try tryNoting(.cancel(key: key), RecordedReturn.keys) { () throws(CacheError) in try engine.cancel(key) }
    }

    /// Makes `key` active (refetched when it turns stale or expires, on `focus` and reconnect) or not.
    public func setActive(_ key: String, _ active: Bool) {
        noting(.setActive(key: key, active: active), { RecordedReturn.nothing }) { engine.setActive(key, active) }
    }

    /// Makes no key active.
    public func clearActive() {
        noting(.clearActive, { RecordedReturn.nothing }) { engine.clearActive() }
    }

    /// The active keys, sorted.
    public var activeKeys: [String] { engine.activeKeys }

    /// The app came back to the foreground: fetches every active key that is not fresh.
    /// - Returns: the keys fetched.
    @discardableResult
    public func focus() -> [String] {
        sync()
        defer { finish() }
        return noting(.focus, RecordedReturn.keys) { engine.focus() }
    }

    /// Refetches `key` every `every` ms from now. - Throws: `CacheError` for a period under 1 ms.
    public func poll(_ key: String, every: Int64) throws(CacheError) {
        sync()
        defer { finish() }
        try tryNoting(.poll(key: key, every: every), { RecordedReturn.nothing }) { () throws(CacheError) in try engine.poll(key, every: every) }
    }

    /// Stops polling `key`. - Returns: whether it was polled.
    @discardableResult
    public func unpoll(_ key: String) -> Bool {
        noting(.unpoll(key: key), RecordedReturn.polled) { engine.unpoll(key) }
    }

    /// Stops every poll. - Returns: the keys that were polled.
    @discardableResult
    public func unpollAll() -> [String] {
        noting(.unpollAll, RecordedReturn.keys) { engine.unpollAll() }
    }

    /// The polls, by key.
    public var polls: [(key: String, everyMs: Int64, due: Int64)] { engine.polls }
}
