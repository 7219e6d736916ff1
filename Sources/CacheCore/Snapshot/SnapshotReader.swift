
/// A JSON path built only when an error needs it: a parent path plus a field name or an index.
struct SnapshotPath {
    private let parent: String
    private let index: Int?

    init(_ text: String) { parent = text; index = nil }
    private init(parent: String, index: Int) { self.parent = parent; self.index = index }

    var text: String { index.map { "\(parent)[\($0)]" } ?? parent }
    func field(_ name: String) -> String { let t = text; return t.isEmpty ? name : "\(t).\(name)" }
    func child(_ name: String) -> SnapshotPath { SnapshotPath(field(name)) }
    func element(_ i: Int) -> SnapshotPath { SnapshotPath(parent: text, index: i) }
}

/// The fields of one JSON object of a snapshot, by name: a decoded object (`SnapshotObject`) or
/// an entry read straight from the text (`EntryFields`), checked by the same accessors.
protocol SnapshotFields {
    /// The field's value, nil when absent.
    func field(_ name: String) -> JSONValue?
    var path: SnapshotPath { get }
    /// True when a whole number in a time field was already checked (`time`): the reader turned
    /// a time written as text into its ms, and refused a number in the years 0000–9999.
    var timesChecked: Bool { get }
    /// True for a store's row (`SnapshotObject.isStoreRow`), whose `state` is not stored.
    var isStoreRow: Bool { get }
    /// True when no value of these fields can be nested deeper than `JSONValue.maxDepth`
    /// (the reader saw the whole document shallower): `dataValue` need not measure.
    var valuesWithinDepth: Bool { get }
    /// `dataValue(name)` in its stored form (a reader that read it so gives it without a tree).
    func storedValue(_ name: String) throws(SnapshotError) -> StoredValue
    /// Whether an entry has a `version` (SPEC §1.1 Versions), asked of every entry: a reader with
    /// its fields in slots answers without looking the name up.
    var hasVersion: Bool { get }
}

/// Typed, path-aware access to the fields of one JSON object of a snapshot.
struct SnapshotObject: SnapshotFields {
    let fields: [String: JSONValue]
    let path: SnapshotPath

    init(_ value: JSONValue, _ path: SnapshotPath) throws(SnapshotError) {
        guard case .object(let o) = value else { throw SnapshotError(path: path.text, "expected an object") }
        fields = o
        self.path = path
    }

    init(fields: [String: JSONValue], path: SnapshotPath) { self.fields = fields; self.path = path }

    @inline(__always) func field(_ name: String) -> JSONValue? { fields[name] }
    var valuesWithinDepth: Bool { false }
    /// A store's row made into an entry object (`StoredEntry.snapshotObject`): its times are
    /// numbers (typed columns) and its `state` is not stored.
    var isStoreRow = false
    var timesChecked: Bool { isStoreRow }

    /// Refuses fields not in `allowed` (a damaged or foreign document).
    func only(_ allowed: Set<String>) throws(SnapshotError) {
        var unknown: String?
        for key in fields.keys where !allowed.contains(key) {
            if unknown.map({ key < $0 }) ?? true { unknown = key }
        }
        if let unknown { throw fail(unknown, "unknown field") }
    }

    static func checkKey(_ key: String, _ fail: (String) -> SnapshotError) throws(SnapshotError) {
        if key.isEmpty { throw fail("a key must not be empty") }
        if let problem = KeyName.problem(withKey: key) { throw fail("bad key \(JSONValue.string(key).compactText): \(problem)") }
        if KeyName.canonical(key) != key { throw fail("\"\(key)\" is not a key's printed form") }
    }
}

extension SnapshotFields {
    func fail(_ name: String, _ message: String) -> SnapshotError { SnapshotError(path: path.field(name), message) }

    func has(_ name: String) -> Bool { field(name) != nil }

    var hasVersion: Bool { has("version") }

    func value(_ name: String) throws(SnapshotError) -> JSONValue {
        guard let v = field(name) else { throw fail(name, "missing") }
        return v
    }

    /// A cached or server value; one nested deeper than values may be (`JSONValue.maxDepth`) is
    /// refused, so a document never brings in what the shell would not accept.
    /// One larger than a value may be (`JSONValue.maxBytes`) is refused too.
    func dataValue(_ name: String) throws(SnapshotError) -> JSONValue {
        let v = try valueWithinDepth(name)
        if let problem = v.sizeProblem { throw fail(name, problem) }
        return v
    }

    /// `dataValue` but for its size.
    func valueWithinDepth(_ name: String) throws(SnapshotError) -> JSONValue {
        let v = try value(name)
        if !valuesWithinDepth && v.depth > JSONValue.maxDepth { throw fail(name, "nested deeper than \(JSONValue.maxDepth) levels") }
        return v
    }

    func storedValue(_ name: String) throws(SnapshotError) -> StoredValue {
        try Self.checkedSize(StoredValue(try valueWithinDepth(name))) { fail(name, $0) }
    }

    /// `stored`, unless it is larger than a value may be (`JSONValue.maxBytes`): measured once
    /// printed, at no cost (a snapshot is at most 1 GiB, so its values are too).
    static func checkedSize(_ stored: StoredValue, _ fail: (String) -> SnapshotError) throws(SnapshotError) -> StoredValue {
        guard stored.utf8Count <= JSONValue.maxBytes else { throw fail(JSONValue.tooLarge) }
        return stored
    }

    func object(_ name: String) throws(SnapshotError) -> SnapshotObject {
        try SnapshotObject(value(name), path.child(name))
    }

    func array(_ name: String) throws(SnapshotError) -> [JSONValue] {
        guard case .array(let a) = try value(name) else { throw fail(name, "expected an array") }
        return a
    }

    func string(_ name: String) throws(SnapshotError) -> String {
        guard case .string(let s) = try value(name) else { throw fail(name, "expected a string") }
        return s
    }

    func optionalString(_ name: String) throws(SnapshotError) -> String? {
        guard let v = field(name), v != .null else { return nil }
        guard case .string(let s) = v else { throw fail(name, "expected a string or null") }
        return s
    }

    func bool(_ name: String, default fallback: Bool? = nil) throws(SnapshotError) -> Bool {
        guard let v = field(name) else {
            if let fallback { return fallback }
            throw fail(name, "missing")
        }
        guard case .bool(let b) = v else { throw fail(name, "expected true or false") }
        return b
    }

    func int(_ name: String, default fallback: Int64? = nil) throws(SnapshotError) -> Int64 {
        guard let v = field(name) else {
            if let fallback { return fallback }
            throw fail(name, "missing")
        }
        guard case .int(let n) = v else { throw fail(name, "expected a whole number") }
        return n
    }

    func count(_ name: String, default fallback: Int64? = nil) throws(SnapshotError) -> Int {
        let n = try int(name, default: fallback)
        guard n >= 0, n <= Int64(Int32.max) else { throw fail(name, "expected a count from 0 to \(Int32.max)") }
        return Int(n)
    }

    func optionalInt(_ name: String) throws(SnapshotError) -> Int64? {
        guard let v = field(name), v != .null else { return nil }
        guard case .int(let n) = v else { throw fail(name, "expected a whole number or null") }
        return n
    }

    /// A sequence number (a whole number, not negative); `fallback` when absent.
    func seq(_ name: String, default fallback: UInt64? = nil) throws(SnapshotError) -> UInt64 {
        guard let v = field(name) else {
            if let fallback { return fallback }
            throw fail(name, "missing")
        }
        guard case .int(let n) = v, n >= 0 else { throw fail(name, "expected a sequence number (a whole number, not negative)") }
        guard n <= Self.maxSeq else { throw fail(name, "\(n) is past the largest sequence number, \(Self.maxSeq) (2^53)") }
        return UInt64(n)
    }

    /// A server version (SPEC §1.1 Versions): a whole number from 0 to 2^53, as a sequence number.
    func version(_ name: String) throws(SnapshotError) -> UInt64 {
        guard case .int(let n)? = field(name), n >= 0, n <= Self.maxSeq else {
            throw fail(name, "expected a version (a whole number from 0 to \(Self.maxSeq), 2^53)")
        }
        return UInt64(n)
    }

    /// The largest sequence number (and id) a document may hold: 2^53. The engine adds 1 for each
    /// request, put, mutation or scheduled item, so from there no run reaches 2^63, where the
    /// numbers stop fitting what the documents write (a whole number of 64 bits).
    static var maxSeq: Int64 { 1 << 53 }

    func optionalSeq(_ name: String) throws(SnapshotError) -> UInt64? {
        guard let v = field(name), v != .null else { return nil }
        return try seq(name)
    }

    /// An instant written `YYYY-MM-DDTHH:MM:SS.sssZ`, or (outside the years 0000–9999) as whole
    /// ms since the epoch.
    ///
    /// No time is before 1970-01-01T00:00:00.000Z (0 ms): the virtual clock starts in 2026 and a
    /// live cache's at the system's, so the engine never makes one, and with every time at least
    /// 0 the difference of two (an age, a time left) always fits in 64 bits.
    func time(_ name: String) throws(SnapshotError) -> Int64 {
        let v = try value(name)
        let ms: Int64
        if case .int(let n) = v {
            if !timesChecked && n >= CacheEngine.minISOTime && n <= CacheEngine.maxISOTime {
                throw fail(name, "expected a time like \"2026-01-01T00:00:00.000Z\" (a whole number of ms only outside the years 0000–9999)")
            }
            ms = n
        } else {
            guard case .string(let s) = v else { throw fail(name, "expected a time like \"2026-01-01T00:00:00.000Z\"") }
            guard let parsed = TimeText.parseISO8601(Substring(s)) else {
                throw fail(name, "\"\(s)\" is not a time like \"2026-01-01T00:00:00.000Z\"")
            }
            ms = parsed
        }
        guard ms >= 0 else { throw fail(name, "is before 1970-01-01T00:00:00.000Z") }
        return ms
    }

    /// An instant or null (never); null reads as `Int64.max`.
    func timeOrNever(_ name: String) throws(SnapshotError) -> Int64 {
        if try value(name) == .null { return .max }
        return try time(name)
    }

    func optionalTime(_ name: String) throws(SnapshotError) -> Int64? {
        guard let v = field(name), v != .null else { return nil }
        return try time(name)
    }

    /// A duration in ms (a whole number, not negative), or null.
    func optionalDuration(_ name: String) throws(SnapshotError) -> Int64? {
        guard let n = try optionalInt(name) else { return nil }
        guard n >= 0 else { throw fail(name, "expected a duration in ms (not negative)") }
        return n
    }

    func strings(_ name: String) throws(SnapshotError) -> [String] {
        let items = try array(name)
        var out: [String] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else {
                throw SnapshotError(path: path.child(name).element(i).text, "expected a string")
            }
            out.append(s)
        }
        return out
    }

    func bools(_ name: String, count: Int) throws(SnapshotError) -> [Bool] {
        let items = try array(name)
        guard items.count == count else { throw fail(name, "expected \(count) values, one per key") }
        var out: [Bool] = []
        for (i, item) in items.enumerated() {
            guard case .bool(let b) = item else {
                throw SnapshotError(path: path.child(name).element(i).text, "expected true or false")
            }
            out.append(b)
        }
        return out
    }

    /// A cache key in its printed form.
    func key(_ name: String) throws(SnapshotError) -> String {
        let key = try string(name)
        try SnapshotObject.checkKey(key) { fail(name, $0) }
        return key
    }

    func keys(_ name: String) throws(SnapshotError) -> [String] {
        let keys = try strings(name)
        for (i, key) in keys.enumerated() {
            try SnapshotObject.checkKey(key) { SnapshotError(path: path.child(name).element(i).text, $0) }
        }
        return keys
    }
}
