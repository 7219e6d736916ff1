/// The header fields of an HTTP message, in the order they came, names compared without regard to
/// case (RFC 9110 §5.1). A field sent on several lines is one list: its values joined with ", "
/// (RFC 9110 §5.3).
///
/// Kept as text: a cache decides from a few fields and hands the rest on as they came.
public struct HTTPFields: Sendable, Equatable, Sequence {
    /// One field line.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var lines: [Field]

    public init(_ lines: [Field] = []) { self.lines = lines }

    public init(_ pairs: KeyValuePairs<String, String>) {
        lines = pairs.map { Field($0.key, $0.value) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { lines.makeIterator() }

    public var isEmpty: Bool { lines.isEmpty }

    /// The field's value, its lines joined with ", "; nil when absent.
    public subscript(name: String) -> String? {
        var found: String?
        for line in lines where Self.same(line.name, name) {
            found = found.map { $0 + ", " + line.value } ?? line.value
        }
        return found
    }

    /// Whether the field is present (even empty).
    public func contains(_ name: String) -> Bool { lines.contains { Self.same($0.name, name) } }

    /// How many lines carry the field (a singleton field sent twice is invalid: RFC 9111 §4.2.1).
    public func count(of name: String) -> Int { lines.reduce(0) { $0 + (Self.same($1.name, name) ? 1 : 0) } }

    /// The members of a list field (RFC 9110 §5.6.1): split at commas outside quoted strings,
    /// each trimmed, empty members dropped.
    public func list(_ name: String) -> [String] {
        guard let value = self[name] else { return [] }
        return HTTPFields.splitList(value)
    }

    /// Adds a line at the end.
    public mutating func append(_ name: String, _ value: String) { lines.append(Field(name, value)) }

    /// Removes every line of the field.
    public mutating func remove(_ name: String) { lines.removeAll { Self.same($0.name, name) } }

    /// Replaces every line of the field with one, where its first line was (else at the end).
    public mutating func set(_ name: String, _ value: String) {
        if let first = lines.firstIndex(where: { Self.same($0.name, name) }) {
            lines[first] = Field(lines[first].name, value)
            var i = lines.count - 1
            while i > first {
                if Self.same(lines[i].name, name) { lines.remove(at: i) }
                i -= 1
            }
        } else {
            lines.append(Field(name, value))
        }
    }

    /// `set(name, value)` of each of `other`'s lines in turn, in one pass: a field of this
    /// message that `other` has keeps its first line's place and name, with the value of
    /// `other`'s last line of it, its other lines gone; `other`'s fields this message lacks are
    /// added at the end in the order they first come, each once, with its last value.
    /// - Complexity: O(n + m) for n lines here and m in `other` (`set` in turn: O(n·m)).
    public mutating func set(_ other: HTTPFields) {
        guard !other.isEmpty else { return }
        var last: [String: String] = [:]
        var order: [(folded: String, name: String)] = []
        for line in other.lines {
            let name = Self.folded(line.name)
            if last.updateValue(line.value, forKey: name) == nil { order.append((name, line.name)) }
        }
        var kept: [Field] = []
        kept.reserveCapacity(lines.count + order.count)
        var placed = Set<String>()
        for line in lines {
            let name = Self.folded(line.name)
            if let value = last[name] {
                if placed.insert(name).inserted { kept.append(Field(line.name, value)) }
            } else {
                kept.append(line)
            }
        }
        for (folded, name) in order where !placed.contains(folded) { kept.append(Field(name, last[folded] ?? "")) }
        lines = kept
    }

    /// A field name with its ASCII letters in lower case: one key for the names `same` equates.
    static func folded(_ name: String) -> String {
        name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? name.lowercased() : name
    }

    /// Whether two field names are the same field (ASCII case-insensitive; names are tokens).
    public static func same(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { lower($0) == lower($1) }
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// `text` split at commas outside double quotes, members trimmed of spaces and tabs.
    /// - Complexity: O(n).
    static func splitList(_ text: String) -> [String] {
        var members: [String] = []
        var current: [UInt8] = []
        var quoted = false
        var escaped = false
        for byte in text.utf8 {
            if quoted {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { quoted = false }
                current.append(byte)
            } else if byte == UInt8(ascii: ",") {
                members.append(trimmed(current))
                current.removeAll(keepingCapacity: true)
            } else {
                if byte == UInt8(ascii: "\"") { quoted = true }
                current.append(byte)
            }
        }
        members.append(trimmed(current))
        return members.filter { !$0.isEmpty }
    }

    static func trimmed(_ bytes: [UInt8]) -> String {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !blank($0) }), let end = bytes.lastIndex(where: { !blank($0) }) else { return "" }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }
}
