/// A cached value as the engine keeps it: its compact JSON text in canonical form (object keys
/// sorted, numbers as `JSONValue.compactText` prints them), parsed into a `JSONValue` only where a
/// tree is needed (a patch, `explain`, a snapshot). One string per value instead of a tree of
/// enums and dictionaries: a small object such as `{"id":1,"likes":2}` takes one allocation
/// instead of about five, and printing it is a copy.
///
/// Two stored values are equal exactly when their `JSONValue`s are: the same text is the same
/// value; texts that differ only where `JSONValue`'s equality is looser than bytes (canonically
/// equivalent Unicode such as `é` composed or not, `-0.0` and `0.0`) are compared as trees.
public struct StoredValue: Sendable, Equatable, CustomStringConvertible {
    /// A value deeper than the reader takes back (`JSONValue.documentDepth`), which only an app's
    /// own `JSONValue` can be (the shell, the server and patches stop at `JSONValue.maxDepth`):
    /// kept as a tree so that it still reads back as it was stored.
    final class Deep: Sendable {
        let value: JSONValue
        init(_ value: JSONValue) { self.value = value }
    }

    enum Storage: Sendable {
        /// Canonical compact text: `JSONValue(parsing:)` of it prints it back byte for byte.
        case text(String)
        case deep(Deep)
    }

    let storage: Storage

    /// The stored form of `value`.
    /// - Complexity: O(n log k) for n bytes of text and objects of at most k keys.
    public init(_ value: JSONValue) {
        let text = value.compactText
        // A value nested d levels deep prints at least 2d bytes, so only a long text can be too deep.
        if text.utf8.count > 2 * JSONValue.documentDepth && value.depth > JSONValue.documentDepth {
            storage = .deep(Deep(value))
        } else {
            storage = .text(text)
        }
    }

    /// A text already in canonical form (the compact text of a `JSONValue`, or a stored value's).
    init(canonical text: String) {
        storage = .text(text)
    }

    /// `null`.
    public static let null = StoredValue(canonical: "null")

    /// The compact text: what `get` prints (equal to `json.compactText`).
    /// - Complexity: O(1) (a value deeper than `JSONValue.documentDepth`: O(size)).
    public var text: String {
        switch storage {
        case .text(let text): return text
        case .deep(let deep): return deep.value.compactText
        }
    }

    /// The value as a tree.
    /// - Complexity: O(size of the text).
    public var json: JSONValue {
        switch storage {
        case .text(let text):
            do { return try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch {
                preconditionFailure("a stored value's text does not read back: \(error.message)")
            }
        case .deep(let deep):
            return deep.value
        }
    }

    /// Appends the compact text's UTF-8 bytes to `bytes` (for output written as bytes).
    public func append(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
    }

    public var description: String { text }

    public static func == (a: StoredValue, b: StoredValue) -> Bool {
        switch (a.storage, b.storage) {
        case (.text(let x), .text(let y)):
            if x.utf8.elementsEqual(y.utf8) { return true }
            if isBytewise(x) && isBytewise(y) { return false }
            return a.json == b.json
        default:
            return a.json == b.json
        }
    }

    /// Whether `JSONValue` equality of this canonical text and another such text is byte
    /// equality: ASCII only (no Unicode canonical equivalence) and no `-0` (where `-0.0` equals `0.0`).
    private static func isBytewise(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte >= 0x80 || (previous == UInt8(ascii: "-") && byte == UInt8(ascii: "0")) { return false }
            previous = byte
        }
        return true
    }
}

// MARK: - Entity ids

extension StoredValue {
    /// What the id scan looks for: an id field's name as a canonical text prints an object key.
    struct IDField {
        let name: String
        /// `"name"`, escaped as the writer escapes it.
        let quoted: [UInt8]

        init(_ name: String) {
            self.name = name
            quoted = Array(JSONValue.string(name).compactText.utf8)
        }
    }

    /// The entity ids the value embeds under `field` (B8), sorted, each once: the same as
    /// `json.collectEntityIDs(idField:into:)`, read off the canonical text without a tree.
    /// - Complexity: O(size of the text).
    func entityIDs(_ field: IDField) -> [String] {
        var ids: [String] = []
        switch storage {
        case .text(let text):
            var text = text
            text.withUTF8 { Self.scanIDs($0, field.quoted, into: &ids) }
            if ids.count < 2 { return ids }
        case .deep(let deep):
            var set = Set<String>()
            deep.value.collectEntityIDs(idField: field.name, into: &set)
            return set.sorted()
        }
        ids.sort()
        var unique: [String] = [ids[0]]
        for id in ids.dropFirst() where id != unique[unique.count - 1] { unique.append(id) }
        return unique
    }

    /// Appends the id of every object in canonical compact text `b` whose key `quoted` holds an
    /// integer (its decimal text) or a string. Canonical text has no white space, so a key is the
    /// string right after `{` or after `,` inside an object, and its value starts right after `:`.
    /// - Complexity: O(n); each turn of the loop moves past at least one byte.
    private static func scanIDs(_ b: UnsafeBufferPointer<UInt8>, _ quoted: [UInt8], into ids: inout [String]) {
        let n = b.count
        // Whether each open container is an object: bits for the first 64 levels, an array deeper.
        var objectBits: UInt64 = 0
        var deeper: [Bool] = []
        var depth = 0
        var expectKey = false
        func inObject() -> Bool {
            depth == 0 ? false : depth <= 64 ? objectBits & (1 << UInt64(depth - 1)) != 0 : deeper[depth - 65]
        }
        var i = 0
        while i < n {
            switch b[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = b[i] == UInt8(ascii: "{")
                depth += 1
                if depth <= 64 {
                    if isObject { objectBits |= 1 << UInt64(depth - 1) } else { objectBits &= ~(1 << UInt64(depth - 1)) }
                } else {
                    deeper.append(isObject)
                }
                expectKey = isObject
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth > 64 { deeper.removeLast() }
                depth -= 1
                expectKey = false
                i += 1
            case UInt8(ascii: ","):
                expectKey = inObject()
                i += 1
            case UInt8(ascii: "\""):
                let end = endOfString(b, from: i)
                if expectKey {
                    expectKey = false
                    if end - i == quoted.count && end < n && b[end] == UInt8(ascii: ":")
                        && quoted.withUnsafeBufferPointer({ q in (0..<q.count).allSatisfy { b[i + $0] == q[$0] } }) {
                        if let id = idText(b, at: end + 1) { ids.append(id) }
                    }
                }
                i = end
            default:
                i += 1
            }
        }
    }

    /// The index just past the string whose opening quote is at `start` (`b.count` if it does not end).
    private static func endOfString(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start + 1
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\""): return i + 1
            case UInt8(ascii: "\\"): i += 2
            default: i += 1
            }
        }
        return b.count
    }

    /// The id text of the value starting at `start`: an integer's decimal text (as canonical text
    /// prints an `.int`; a `.double` always has a `.` or an exponent), a string's content; else nil.
    private static func idText(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> String? {
        guard start < b.count else { return nil }
        if b[start] == UInt8(ascii: "\"") {
            let end = endOfString(b, from: start)
            let content = UnsafeBufferPointer(rebasing: b[(start + 1)..<max(start + 1, end - 1)])
            if !content.contains(UInt8(ascii: "\\")) { return String(decoding: content, as: UTF8.self) }
            guard case .string(let s)? = try? JSONValue(parsing: UnsafeBufferPointer(rebasing: b[start..<end])) else { return nil }
            return s
        }
        var end = start
        if b[end] == UInt8(ascii: "-") { end += 1 }
        let digits = end
        while end < b.count && b[end] &- UInt8(ascii: "0") < 10 { end += 1 }
        guard end > digits else { return nil }
        if end < b.count {
            let next = b[end]
            if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { return nil }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self)
    }
}
