import CacheCore

/// A session over an app's cache, for an inspector (`cachesh attach`, SPEC §9).
extension Session {
    /// A session over a cache it does not own (an app's): the cache keeps its origin, its
    /// delegate and what it reports; the session's simulated server is never the cache's origin.
    /// Only ``InspectedCommand`` runs commands in it.
    convenience init(inspecting cache: isolated Cache, options: SessionOptions) {
        var options = options
        options.inspecting = true
        self.init(settings: options)
    }

    /// Whether the session runs on an app's cache (``init(inspecting:options:)``): it has no
    /// simulated server of its own to show, and its timeline begins when the shell attached.
    var inspecting: Bool { settings.inspecting }
}
