// What an inspector (CacheInspector, `cachesh attach`) needs of a running cache, and nothing
// more: a tap on every change with its cause, and a way in to run an operation on the actor.
// No socket here: the server is its own module.
//
// The way in is `withIsolation(_:)`: an inspector's own thread runs a command on the cache's
// serial queue, between the app's calls, as a synchronous program does. The tap costs nothing
// while it is unset: the engine reports every change only while `reportsAllChanges` or a tap
// asks, the check it already makes for its observers (SPEC §9).

extension Cache {
    /// Hands every change to an entry (watched or not) to `tap`, with its cause, synchronously
    /// inside the call that made it, on the cache's executor; nil removes the tap. The tap must
    /// only note the event (queue it): it runs inside the app's call. Setting a tap does not
    /// change what the delegate hears.
    public func setChangeTap(_ tap: (@Sendable (CacheEvent) -> Void)?) {
        changeTap = tap
        engine.reportsAllChanges = allChangesRequested || tap != nil
    }

    /// Whether a change tap is set.
    public var hasChangeTap: Bool { changeTap != nil }
}
