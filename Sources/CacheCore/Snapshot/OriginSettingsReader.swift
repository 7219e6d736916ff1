/// Checked reading of an origin's settings (`OriginState.settings`) with the snapshot decoder's
/// checks and error paths (`server.NAME: ...`), for an origin's `PersistentOrigin.check`: the
/// settings' names and meaning are the origin's, the checks of a snapshot's values are the core's.
public struct OriginSettingsReader {
    private let object: SnapshotObject

    public init(_ settings: [String: JSONValue]) { object = SnapshotObject(fields: settings, path: SnapshotPath("server")) }

    private init(_ object: SnapshotObject) { self.object = object }

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
        for key in o.fields.keys.sorted() {
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
        for key in o.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { o.fail(key, $0) }
            out[key] = try o.count(key)
        }
        return out
    }

    /// Whether the setting is given (one written only when it holds something).
    public func has(_ name: String) -> Bool { object.has(name) }

    /// An object of server versions by key (SPEC §1.1 Versions: 0 to 2^53), each key in its
    /// printed form.
    public func versionsByKey(_ name: String) throws(SnapshotError) -> [String: UInt64] {
        let o = try object.object(name)
        var out: [String: UInt64] = [:]
        for key in o.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { o.fail(key, $0) }
            out[key] = try o.version(key)
        }
        return out
    }

    /// An object of strings by key, each key in its printed form, each string one of `allowed`.
    public func wordsByKey(_ name: String, allowed: [String]) throws(SnapshotError) -> [String: String] {
        let o = try object.object(name)
        var out: [String: String] = [:]
        for key in o.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { o.fail(key, $0) }
            let word = try o.string(key)
            guard allowed.contains(word) else { throw o.fail(key, "expected \(allowed.joined(separator: " or ")), not \(JSONValue.string(word).compactText)") }
            out[key] = word
        }
        return out
    }

    /// An array of pairs of whole numbers, `[[A, B], ...]`, each from 0 to `limits`' member, at
    /// most `maxCount` of them.
    public func pairs(_ name: String, limits: (Int64, Int64), maxCount: Int) throws(SnapshotError) -> [(Int64, Int64)] {
        let list = try object.array(name)
        guard list.count <= maxCount else { throw fail(name, "\(list.count) items; at most \(maxCount)") }
        let path = object.path.child(name)
        var out: [(Int64, Int64)] = []
        out.reserveCapacity(list.count)
        for (i, item) in list.enumerated() {
            guard case .array(let pair) = item, pair.count == 2, case .int(let a) = pair[0], case .int(let b) = pair[1],
                  a >= 0, a <= limits.0, b >= 0, b <= limits.1 else {
                throw SnapshotError(path: path.element(i).text, "expected [A, B], A a whole number from 0 to \(limits.0), B from 0 to \(limits.1)")
            }
            out.append((a, b))
        }
        return out
    }

    // MARK: Objects within the settings (a scripted answer's fields)

    /// An object of arrays of objects by key (`{"KEY": [{...}, ...]}`), each key in its printed
    /// form and each array not empty, keys in sorted order.
    public func objectListsByKey(_ name: String) throws(SnapshotError) -> [(key: String, items: [OriginSettingsReader])] {
        let o = try object.object(name)
        var out: [(key: String, items: [OriginSettingsReader])] = []
        for key in o.fields.keys.sorted() {
            try SnapshotObject.checkKey(key) { o.fail(key, $0) }
            let items = try OriginSettingsReader(o).objects(key)
            guard !items.isEmpty else { throw o.fail(key, "expected at least one answer") }
            out.append((key, items))
        }
        return out
    }

    /// An array of objects.
    public func objects(_ name: String) throws(SnapshotError) -> [OriginSettingsReader] {
        let path = object.path.child(name)
        var out: [OriginSettingsReader] = []
        for (i, item) in try object.array(name).enumerated() {
            out.append(OriginSettingsReader(try SnapshotObject(item, path.element(i))))
        }
        return out
    }

    /// A duration in ms, not negative; nil when absent.
    public func optionalDuration(_ name: String) throws(SnapshotError) -> Int64? { try object.optionalDuration(name) }
    /// A version (0 to 2^53); nil when absent.
    public func optionalVersion(_ name: String) throws(SnapshotError) -> UInt64? { object.has(name) ? try object.version(name) : nil }
    /// A value as a server or cache holds it: within the depth and size a value may have.
    public func dataValue(_ name: String) throws(SnapshotError) -> JSONValue { try object.dataValue(name) }
    /// A final HTTP status, 200 to 599; nil when absent.
    public func optionalStatus() throws(SnapshotError) -> Int? { object.has("status") ? try Snapshot.status(object, final: true) : nil }
    /// Header fields as `HTTPFields.json` writes them (names tokens, values without control
    /// characters, within the stored limits); nil when absent.
    public func optionalFields(_ name: String) throws(SnapshotError) -> HTTPFields? {
        object.has(name) ? try Snapshot.fields(object, name) : nil
    }
    /// A message's body (`body`, `body_text` or `body_binary`, at most one); nil for none.
    public func body() throws(SnapshotError) -> HTTPBody? {
        do { return try Snapshot.decodeBody(object) } catch { throw error.path.isEmpty ? SnapshotError(path: object.path.text, error.message) : error }
    }
    /// The names a body may be written under.
    public static var bodyFields: Set<String> { Snapshot.bodyFields }
    /// Validation verdicts as a `response` prints them, `{NS: {"invalidate": BOOL, "items": {...}}}`.
    public func verdicts(_ name: String) throws(SnapshotError) -> [String: NamespaceVerdict] {
        do { return try RecordingFormat.verdicts(from: try object.dataValue(name)) } catch {
            throw object.fail(name, error.message)
        }
    }
}
