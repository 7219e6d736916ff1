extension Snapshot {
    /// Has `origin` check this snapshot's origin state (its settings), as a restore into a cache
    /// over that origin does first. A snapshot without origin state passes.
    public func checkOrigin(_ origin: any PersistentOrigin) throws(SnapshotError) {
        if let server { try origin.check(server) }
    }

    /// The snapshot document of this decoded snapshot, as `CacheEngine.makeSnapshot` would write it
    /// right after restoring it: the scheduled commands keep the fields they were read with.
    ///
    /// Lets a caller keep a decoded snapshot (which shares its values with the engine it was
    /// restored into) instead of a document of the whole state, and render it only when asked.
    /// - Complexity: O(size of the state).
    public func document() -> JSONValue {
        let engine = CacheEngine(origin: FrozenOrigin(server), clockStart: clockStart)
        var fields: [[String: JSONValue]] = []
        // A frozen origin accepts any settings: they were checked by the origin this snapshot was
        // restored into, or are written back as they were read.
        engine.restoreChecked(self) { command in
            fields.append(command.fields)
            return fields.count - 1
        }
        return engine.makeSnapshot { token in fields.indices.contains(token) ? fields[token] : [:] }
    }
}

/// An origin that only holds a snapshot's server section, for `Snapshot.document()`: the engine
/// around it is written, never run, so it is never asked anything.
private final class FrozenOrigin: Origin, PersistentOrigin {
    private var state: OriginState?
    init(_ state: OriginState?) { self.state = state }

    var isOnline: Bool { true }
    var persistentState: (any PersistentOrigin)? { state == nil ? nil : self }

    func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        preconditionFailure("a frozen origin is never asked")
    }
    func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        preconditionFailure("a frozen origin is never asked")
    }
    func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]> {
        preconditionFailure("a frozen origin is never asked")
    }

    /// Only asked when `state` is set (`persistentState` is nil otherwise).
    func snapshot(withData: Bool) -> OriginState {
        var s = state ?? OriginState(data: [:], modifiedAt: [:], settings: [:])
        if !withData { s.data = [:]; s.modifiedAt = [:] }
        return s
    }
    /// Takes the settings as they are: they were checked by the origin the snapshot was restored into.
    func check(_ state: OriginState) {}
    func restore(_ state: OriginState) { self.state = state }
    func startTrackingChanges() {}
    func takeChangedKeys() -> [String] { [] }
    func allKeys() -> [String] { [] }
    func storedKey(_ key: String) -> StoredServerKey { StoredServerKey(key: key, value: nil, modifiedAt: nil) }
}
