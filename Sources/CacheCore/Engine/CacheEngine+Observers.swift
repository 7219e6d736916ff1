// Observers (B15): what is watched, and the reports of changes to the delegate.

extension CacheEngine {
    /// Starts reporting changes in `scope` to the delegate.
    public func watch(_ scope: WatchScope) {
        defer { if checksInvariants { checkInvariants() } }
        observers.watch(scope)
    }

    /// Stops watching `scope`, or everything when nil.
    /// - Returns: whether something was being watched.
    @discardableResult
    public func unwatch(_ scope: WatchScope?) -> Bool {
        defer { if checksInvariants { checkInvariants() } }
        return observers.unwatch(scope)
    }

    public var watchedScopes: [WatchScope] {
        observers.scopes.sorted { "\($0)" < "\($1)" }
    }

    /// Reports a change of the entry in `slot` if it is watched.
    @inline(__always)
    func emit(_ cause: ChangeCause, slot: Int32, source: ValueSource) {
        if hooked { emitHooked(cause, slot: slot, source: source) }
    }

    /// `emit` when something may have to hear of the change (`hooked`).
    private func emitHooked(_ cause: ChangeCause, slot: Int32, source: ValueSource) {
        if !behaviours.deferred.isEmpty && (cause == .fetched || cause == .stored) { applyDeferred(slot, cause: cause) }
        if !observers.isEmpty || reportsAllChanges {
            let e = slots[Int(slot)]
            let watched = !observers.isEmpty && observers.isWatched(e.key, namespace: namespaces[e.namespace].name)
            if watched || reportsAllChanges {
                let event = CacheEvent(cause: cause, key: e.key, at: now, state: e.state(at: now), stored: e.stored, source: source)
                if watched { delegate?.cacheEngine(self, observed: event) }
                if reportsAllChanges { delegate?.cacheEngine(self, noted: event) }
            }
        }
        if !behaviours.active.isEmpty { refetchIfActive(slot, after: cause) }
    }

    /// Reports a change of a key that is no longer cached.
    @inline(__always)
    func emit(_ cause: ChangeCause, key: String, namespace: Int32) {
        if hooked { emitHooked(cause, key: key, namespace: namespace) }
    }

    /// `emit` of a key no longer cached, when something may have to hear of it (`hooked`).
    private func emitHooked(_ cause: ChangeCause, key: String, namespace: Int32) {
        let watched = !observers.isEmpty && observers.isWatched(key, namespace: namespaces[namespace].name)
        guard watched || reportsAllChanges else { return }
        let event = CacheEvent(cause: cause, key: key, at: now, state: .absent, value: nil, source: .cache)
        if watched { delegate?.cacheEngine(self, observed: event) }
        if reportsAllChanges { delegate?.cacheEngine(self, noted: event) }
    }

    /// Reports a push to observers of everything.
    func emitPushed(_ type: String) {
        guard observers.watchesAll else { return }
        delegate?.cacheEngine(self, observed: CacheEvent(cause: .pushed, key: type, at: now, state: .absent,
                                                          value: nil, source: .server))
    }
}
