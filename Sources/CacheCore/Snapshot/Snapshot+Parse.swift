// Reading a snapshot's text without a tree of the whole document: one pass checks every byte
// (JSONReader.skipValue) and notes where each top-level field starts; the state fields (small)
// are then parsed into values and decoded as before, and the entries, usually nearly all of the
// text, are decoded one by one straight from the text into the engine's entries, each entry's
// fields into a fixed table (`EntryFields`) rather than a dictionary, its times read from the
// bytes. Anything out of the ordinary (text that is not JSON, an entry that is not an object or
// has a field no entry has, a key with escapes) is left to the tree reader, so every error a
// document can get stays the one it got before, word for word.

extension Snapshot {
    /// Parses and checks a snapshot document's text.
    /// - Throws: `SnapshotError` for text that is not JSON (a damaged or truncated file: the line of
    ///   the problem), another `format` or `version`, or a bad field (its JSON path).
    /// - Complexity: O(size of the text).
    public init(parsing text: String) throws(SnapshotError) {
        var text = text
        let fast: Result<Snapshot, SnapshotError>? = text.withUTF8 { Snapshot.decode(utf8: $0) }
        if let fast {
            switch fast {
            case .success(let snapshot): self = snapshot; return
            case .failure(let error) where error != Self.readAsTree: throw error
            case .failure: break
            }
        }
        try self.init(parsingAsTree: text)
    }

    /// `init(parsing:)` by the tree of the whole document: the reader of every error.
    init(parsingAsTree text: String) throws(SnapshotError) {
        let json: JSONValue
        do { json = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch {
            let line = text.utf8.prefix(error.offset).reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            throw SnapshotError(path: "", "damaged snapshot (not valid JSON at line \(line): \(error.message))")
        }
        try self.init(json)
    }

    /// Thrown inside the text reader for what only the tree reader words right; never seen outside.
    static let readAsTree = SnapshotError(message: "", offset: -1)

    /// Where a document's `entries` array is in its text, checked (every entry an object of
    /// known fields with plain names) but not yet decoded.
    struct EntryText {
        let bytes: UnsafeBufferPointer<UInt8>
        /// The offset of its `[`.
        let start: Int
        let count: Int
        /// No value in the document is nested deeper than `JSONValue.maxDepth`.
        let valuesWithinDepth: Bool
    }

    /// The snapshot of a document's UTF-8 text; nil when the tree reader is to read it.
    static func decode(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Result<Snapshot, SnapshotError>? {
        // Pass 1: check the text, note where each top-level field's value starts.
        var r = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
        r.skipWhitespace()
        guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: "{") else { return nil }
        r.i += 1
        r.deepest = 1
        var members: [(name: String, start: Int, entries: Int?)] = []
        r.skipWhitespace()
        if r.i < bytes.count && bytes[r.i] == UInt8(ascii: "}") {
            r.i += 1
        } else {
            while true {
                r.skipWhitespace()
                guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: "\""), let name = try? r.parseString() else { return nil }
                r.skipWhitespace()
                guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: ":") else { return nil }
                r.i += 1
                r.skipWhitespace()
                let start = r.i
                if name == "entries" && r.i < bytes.count && bytes[r.i] == UInt8(ascii: "[") {
                    guard let count = checkEntries(&r) else { return nil }
                    members.append((name, start, count))
                } else {
                    do { try r.skipValue(depth: 1) } catch { return nil }
                    members.append((name, start, nil))
                }
                r.skipWhitespace()
                guard r.i < bytes.count else { return nil }
                if bytes[r.i] == UInt8(ascii: ",") {
                    r.i += 1
                    continue
                }
                guard bytes[r.i] == UInt8(ascii: "}") else { return nil }
                r.i += 1
                break
            }
        }
        r.skipWhitespace()
        guard r.i == bytes.count else { return nil }

        // Pass 2: the state fields as values, the entries from the text.
        var top: [String: JSONValue] = [:]
        var entries: EntryText?
        for member in members {
            if let count = member.entries {
                top[member.name] = .array([])
                entries = EntryText(bytes: bytes, start: member.start, count: count,
                                    valuesWithinDepth: r.deepest <= 3 + JSONValue.maxDepth)
            } else {
                r.i = member.start
                guard let value = try? r.parseValue(depth: 1) else { return nil }
                top[member.name] = value
                if member.name == "entries" { entries = nil }
            }
        }
        return Result { () throws(SnapshotError) -> Snapshot in
            try Snapshot(.object(top), entrySource: entries.map(EntrySource.text) ?? .document)
        }
    }

    /// Checks the `entries` array at `r.i` (at depth 1 of the document) and reads past it: the
    /// number of entries, or nil when the text is not JSON there or an entry is out of the
    /// ordinary (not an object, a field no entry has, a field name with escapes).
    private static func checkEntries(_ r: inout JSONReader) -> Int? {
        let bytes = r.bytes
        r.i += 1
        r.deepest = max(r.deepest, 2)
        var count = 0
        r.skipWhitespace()
        if r.i < bytes.count && bytes[r.i] == UInt8(ascii: "]") {
            r.i += 1
            return 0
        }
        while true {
            r.skipWhitespace()
            guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: "{") else { return nil }
            r.i += 1
            r.deepest = max(r.deepest, 3)
            r.skipWhitespace()
            if r.i < bytes.count && bytes[r.i] == UInt8(ascii: "}") {
                r.i += 1
            } else {
                while true {
                    r.skipWhitespace()
                    guard let name = plainName(&r), EntryFields.slot(of: name) != nil else { return nil }
                    r.skipWhitespace()
                    guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: ":") else { return nil }
                    r.i += 1
                    do { try r.skipValue(depth: 3) } catch { return nil }
                    r.skipWhitespace()
                    guard r.i < bytes.count else { return nil }
                    if bytes[r.i] == UInt8(ascii: ",") {
                        r.i += 1
                        continue
                    }
                    guard bytes[r.i] == UInt8(ascii: "}") else { return nil }
                    r.i += 1
                    break
                }
            }
            count += 1
            r.skipWhitespace()
            guard r.i < bytes.count else { return nil }
            if bytes[r.i] == UInt8(ascii: ",") {
                r.i += 1
                continue
            }
            guard bytes[r.i] == UInt8(ascii: "]") else { return nil }
            r.i += 1
            return count
        }
    }

    /// The bytes of a field name at `r.i` without escapes or control characters, read past its
    /// closing quote; nil otherwise.
    private static func plainName(_ r: inout JSONReader) -> UnsafeBufferPointer<UInt8>? {
        let bytes = r.bytes
        guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: "\"") else { return nil }
        let start = r.i + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                r.i = end + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<end])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            end += 1
        }
        return nil
    }

    /// Decodes the entries `checkEntries` checked, in order, as `decodeEntries` decodes an array.
    mutating func decodeEntries(text: EntryText, namespaceIndex: [String: Int]) throws(SnapshotError) {
        entries.reserveCapacity(text.count)
        ranks.reserveCapacity(text.count)
        var checks = EntryChecks(seen: Set(minimumCapacity: text.count),
                                 seenRanks: Array(repeating: Set<Int64>(), count: namespaces.count))
        let bytes = text.bytes
        var r = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
        r.i = text.start + 1
        var fields = EntryFields(valuesWithinDepth: text.valuesWithinDepth)
        for n in 0..<text.count {
            fields.clear(index: n)
            r.skipWhitespace()
            if n > 0 { r.i += 1; r.skipWhitespace() }  // ,
            r.i += 1  // {
            r.skipWhitespace()
            if bytes[r.i] == UInt8(ascii: "}") {
                r.i += 1
            } else {
                while true {
                    r.skipWhitespace()
                    guard let name = Self.plainName(&r), let slot = EntryFields.slot(of: name) else { throw Self.readAsTree }
                    r.skipWhitespace()
                    r.i += 1  // :
                    do { fields.values[slot] = try Self.readField(slot, &r) } catch { throw Self.readAsTree }
                    r.skipWhitespace()
                    let separator = bytes[r.i]
                    r.i += 1
                    if separator == UInt8(ascii: "}") { break }
                }
            }
            try decodeEntry(fields: fields, namespaceIndex: namespaceIndex, checks: &checks)
        }
        try checkHands()
    }

    /// The value of the entry field in `slot` at `r.i`: a time written in the usual form is
    /// read from its bytes as its ms (as `time` reads a number).
    @inline(__always)
    private static func readField(_ slot: Int, _ r: inout JSONReader) throws(JSONError) -> JSONValue {
        r.skipWhitespace()
        if EntryFields.isTime(slot) {
            let bytes = r.bytes
            let i = r.i
            if bytes.count - i >= 26 && bytes[i] == UInt8(ascii: "\"") && bytes[i + 25] == UInt8(ascii: "\""),
               let ms = TimeText.parseISO8601(utf8: UnsafeBufferPointer(rebasing: bytes[i + 1..<i + 25])) {
                r.i = i + 26
                return .int(ms)
            }
        }
        return try r.parseValue(depth: 3)
    }
}

/// The fields of one entry read from a snapshot's text, by a fixed slot per field name.
struct EntryFields: SnapshotFields {
    /// Every field an entry may have; a slot is an index in it.
    static let names = [
        "key", "value", "state", "stored_at", "stale_at", "expires_at", "tags", "seq", "stored_request",
        "last_write", "last_put", "invalidated", "expiry_counted", "expiry_overridden", "expiry_seq", "mutations",
        "rank", "uses", "visited",
    ]
    private static let nameBytes: [[UInt8]] = names.map { Array($0.utf8) }

    var values: [JSONValue?]
    private(set) var path = SnapshotPath("entries")
    let valuesWithinDepth: Bool

    init(valuesWithinDepth: Bool) {
        values = Array(repeating: nil, count: Self.names.count)
        self.valuesWithinDepth = valuesWithinDepth
    }

    /// Empties every slot for the entry at `index` of `entries`.
    mutating func clear(index: Int) {
        for k in values.indices { values[k] = nil }
        path = SnapshotPath("entries").element(index)
    }

    /// Whether the field of `slot` is an instant (stored_at, stale_at, expires_at).
    @inline(__always) static func isTime(_ slot: Int) -> Bool { slot >= 3 && slot <= 5 }

    static func slot(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        for (k, candidate) in nameBytes.enumerated() where candidate.count == name.count {
            if candidate.withUnsafeBufferPointer({ $0.elementsEqual(name) }) { return k }
        }
        return nil
    }

    func field(_ name: String) -> JSONValue? {
        guard let k = Self.slot(of: name) else { return nil }
        return values[k]
    }

    /// The slot of `name`, compared only with names of its length (the check of every entry
    /// asks for about twenty fields by name).
    static func slot(of name: String) -> Int? {
        switch name.utf8.count {
        case 3: return name == "key" ? 0 : name == "seq" ? 7 : nil
        case 4: return name == "tags" ? 6 : name == "rank" ? 16 : name == "uses" ? 17 : nil
        case 5: return name == "value" ? 1 : name == "state" ? 2 : nil
        case 7: return name == "visited" ? 18 : nil
        case 8: return name == "stale_at" ? 4 : name == "last_put" ? 10 : nil
        case 9: return name == "stored_at" ? 3 : name == "mutations" ? 15 : nil
        case 10: return name == "expires_at" ? 5 : name == "last_write" ? 9 : name == "expiry_seq" ? 14 : nil
        case 11: return name == "invalidated" ? 11 : nil
        case 14: return name == "stored_request" ? 8 : name == "expiry_counted" ? 12 : nil
        case 17: return name == "expiry_overridden" ? 13 : nil
        default: return nil
        }
    }
}
