// Active keys (`setActive`; the shell's `activate KEY`): keys an app shows on screen. Unlike a
// plain observer, an active key is refetched when it turns stale or expires (an invalidation, a
// push, a validation, its expiry), when the app comes back to the foreground (`focus`) and when
// the origin is reachable again (`server online`).

extension CacheEngine {
    /// The active keys, sorted.
    public var activeKeys: [String] { behaviours.active.sorted() }

    /// Makes `key` active (or not): see the file's comment.
    public func setActive(_ key: String, _ active: Bool) {
        defer { if checksInvariants { checkInvariants() } }
        let key = KeyName.canonical(key)
        if active { behaviours.active.insert(key) } else { behaviours.active.remove(key) }
    }

    /// Makes no key active.
    public func clearActive() {
        behaviours.active.removeAll()
    }

    /// The app came back to the foreground: every active key that is not fresh (stale, expired or
    /// absent) and has no fetch in flight is fetched, one request per key, in key order.
    /// Offline, nothing is sent.
    /// - Returns: the keys fetched.
    @discardableResult
    public func focus() -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        _ = nextSeq()
        return refetchActiveKeys(focus: true)
    }

    /// Fetches every active key that is not fresh and has no fetch in flight (`focus`, reconnect);
    /// on `focus`, fresh ones too in a namespace with `focus-refetches-fresh` (SPEC §1.2).
    @discardableResult
    func refetchActiveKeys(focus: Bool = false) -> [String] {
        guard origin.isOnline else { return [] }
        var sent: [String] = []
        for key in behaviours.active.sorted() where requestTable.fetch(forKey: key) == nil {
            let slot = entrySlot(forKey: key)
            let state = slot.map { slots[Int($0)].state(at: now) } ?? .absent
            guard state != .fresh || (focus && isNaiveCreatingNone(.focusRefetchesFresh, key: key)) else { continue }
            sendFetch([key], refresh: [state != .absent && state != .expired])
            sent.append(key)
        }
        return sent
    }

    /// After a change to an entry: refetches it if it is active, the origin reachable, no fetch of
    /// it in flight, and the change left it needing one: an invalidation or expiry, or an answer
    /// stored stale because the key was invalidated while it was in flight (`emit` calls this).
    func refetchIfActive(_ slot: Int32, after cause: ChangeCause) {
        let e = slots[Int(slot)]
        switch cause {
        case .invalidated, .expired: break
        case .fetched, .refreshed: guard e.invalidated else { return }
        default: return
        }
        // invalidate-waits-poll: an invalidated key that is polled waits for the poll's next turn.
        if cause != .expired && behaviours.polls[e.key] != nil && isNaive(.invalidateWaitsPoll, ns: e.namespace) { return }
        guard behaviours.active.contains(e.key), origin.isOnline, requestTable.fetch(forKey: e.key) == nil else { return }
        let state = e.state(at: now)
        guard state != .fresh else { return }
        sendFetch([e.key], refresh: [state == .stale])
    }
}
