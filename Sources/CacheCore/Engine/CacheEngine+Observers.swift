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

    /// `emit` when something may have to hear of the change (`hooked`). What listens is read from
    /// `hooks` again after each step that may run other code (a deferred patch, a delegate).
    private func emitHooked(_ cause: ChangeCause, slot: Int32, source: ValueSource) {
        if hooks.contains(.deferred) && (cause == .fetched || cause == .stored) { applyDeferred(slot, cause: cause) }
        let hooks = self.hooks
        if !hooks.isDisjoint(with: [.observers, .allChanges]) {
            if hooks.contains(.observers) && isWatched(slot) {
                let event = state.changeEvent(cause, slot: slot, source: source)
                delegate?.cacheEngine(self, observed: event)
                if self.hooks.contains(.allChanges) { note(event) }
            } else if hooks.contains(.allChanges) {
                // Noted only (the timeline's case): the event made once, in the call's argument,
                // and moved to where it is kept, never copied (`noteChange`).
                noteChange(cause, slot: slot, source: source)
            }
        }
        if self.hooks.contains(.active) { refetchIfActive(slot, after: cause) }
    }

    /// A change that observers are not told of (`silent-rollback`, SPEC §1.2): what notes every
    /// change (the timeline, a recording) still hears of it.
    func emitUnobserved(_ cause: ChangeCause, slot: Int32, source: ValueSource) {
        guard hooked, hooks.contains(.allChanges) else { return }
        noteChange(cause, slot: slot, source: source)
    }

    /// `emitUnobserved` of a key that is not cached.
    func emitUnobserved(_ cause: ChangeCause, key: String, namespace: Int32) {
        guard hooked, hooks.contains(.allChanges) else { return }
        note(CacheEvent(cause: cause, key: key, at: now, state: .absent, stored: nil, source: .cache))
    }

    /// Whether a change of the entry in `slot` is reported to observers.
    private func isWatched(_ slot: Int32) -> Bool {
        let i = Int(slot)
        return observers.isWatched(slots[i].key, namespace: namespaces[slots[i].namespace].name)
    }

    /// Reports a change of a key that is no longer cached.
    @inline(__always)
    func emit(_ cause: ChangeCause, key: String, namespace: Int32) {
        if hooked { emitHooked(cause, key: key, namespace: namespace) }
    }

    /// `emit` of a key no longer cached, when something may have to hear of it (`hooked`).
    private func emitHooked(_ cause: ChangeCause, key: String, namespace: Int32) {
        let hooks = self.hooks
        if hooks.contains(.observers) && observers.isWatched(key, namespace: namespaces[namespace].name) {
            let event = CacheEvent(cause: cause, key: key, at: now, state: .absent, stored: nil, source: .cache)
            delegate?.cacheEngine(self, observed: event)
            if self.hooks.contains(.allChanges) { note(event) }
        } else if hooks.contains(.allChanges) {
            note(CacheEvent(cause: cause, key: key, at: now, state: .absent, stored: nil, source: .cache))
        }
    }

    /// Hands a change noted (`allChanges`) on, a copy of `event`:
    /// to the owning cache's relay (with no reference counted, see `relay`), else the delegate.
    @inline(__always)
    private func note(_ event: CacheEvent) {
        if let relay {
            relay._withUnsafeGuaranteedRef { $0.noted { $0.initialize(to: event) } }
        } else {
            delegate?.cacheEngine(self, noted: event)
        }
    }

    /// `note` of the change of the entry in `slot`, the event made in each call's argument: made
    /// first and handed on by name (`note`), it was made in one place, copied to another and
    /// the first dropped (some 180 instructions a change).
    @inline(__always)
    private func noteChange(_ cause: ChangeCause, slot: Int32, source: ValueSource) {
        if let relay {
            relay._withUnsafeGuaranteedRef { $0.noted { state.initializeChangeEvent($0, cause, slot: slot, source: source) } }
        } else {
            delegate?.cacheEngine(self, noted: state.changeEvent(cause, slot: slot, source: source))
        }
    }

    /// Reports a push to observers of everything.
    func emitPushed(_ type: String) {
        guard observers.watchesAll else { return }
        delegate?.cacheEngine(self, observed: CacheEvent(cause: .pushed, key: type, at: now, state: .absent,
                                                          value: nil, source: .server))
    }
}
