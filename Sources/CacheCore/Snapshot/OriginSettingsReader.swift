/// Checked reading of an origin's settings (`OriginState.settings`) with the snapshot decoder's
/// checks and error paths (`server.NAME: ...`), for an origin's `PersistentOrigin.check`: the
/// settings' names and meaning are the origin's, the checks of a snapshot's values are the core's.
public struct OriginSettingsReader {
    private let object: SnapshotObject

    public init(_ settings: [String: JSONValue]) { object = SnapshotObject(fields: settings, path: SnapshotPath("server")) }

    /// An error about one setting, with its path.
    public func fail(_ name: String, _ message: String) -> SnapshotError { object.fail(name, message) }
    /// Refuses settings not in `allowed`, naming the first in sorted order.
    public func only(_ allowed: Set<String>) throws(SnapshotError) { try object.only(allowed) }
    public func bool(_ name: String) throws(SnapshotError) -> Bool { try object.bool(name) }
    public func string(_ name: String) throws(SnapshotError) -> String { try object.string(name) }
    /// A count from 0 to `Int32.max`.
    public func count(_ name: String) throws(SnapshotError) -> Int { try object.count(name) }

    /// A duration in ms, not negative.
    public func duration(_ name: String) throws(SnapshotError) -> Int64 {
        guard let ms = try object.optionalDuration(name) else { throw fail(name, "expected a duration in ms") }
        return ms
    }

    /// An object of durations in ms by key, each key in its printed form.
    public func durationsByKey(_ name: String) throws(SnapshotError) -> [String: Int64] {
        let o = try object.object(name)
        var out: [String: Int64] = [:]
        for key in o.fields.keys {
            try SnapshotObject.checkKey(key) { o.fail(key, $0) }
            guard let ms = try o.optionalDuration(key) else { throw o.fail(key, "expected a duration in ms") }
            out[key] = ms
        }
        return out
    }

    /// An object of counts by key, each key in its printed form.
    public func countsByKey(_ name: String) throws(SnapshotError) -> [String: Int] {
        let o = try object.object(name)
        var out: [String: Int] = [:]
        for key in o.fields.keys {
            try SnapshotObject.checkKey(key) { o.fail(key, $0) }
            out[key] = try o.count(key)
        }
        return out
    }
}
