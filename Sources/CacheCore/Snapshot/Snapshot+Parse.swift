// Reading a snapshot's text without a tree of the whole document. A first pass checks the
// top-level fields but `entries` (small: the state) and finds where each starts, passing over
// `entries` by its brackets only; the state fields are parsed into values and decoded as
// before, and the entries, usually nearly all of the text, are then parsed and checked one by one
// straight from the text into the engine's entries, each entry's fields into a fixed table
// (`EntryFields`) rather than a dictionary, its times read from the bytes. Anything out of the
// ordinary (text that is not JSON, an entry that is not an object or has a field no entry has, a
// field name with escapes, `entries` given twice) is left to the tree reader, and a document
// refused for its content is first checked whole (a damaged file says so first), so every error
// a document can get stays the one it got before, word for word.

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

    /// Where a document's `entries` array is in its text: found by its brackets, not yet checked.
    struct EntryText {
        let bytes: UnsafeBufferPointer<UInt8>
        /// The offset of its `[`, and the offset after its `]` by its brackets.
        let start: Int
        let end: Int
        /// About the number of entries (a capacity to reserve).
        let count: Int
    }

    /// The snapshot of a document's UTF-8 text; nil when the tree reader is to read it.
    static func decode(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Result<Snapshot, SnapshotError>? {
        // Where `entries` ends is guessed first (see `entriesEnd`). Only a success is taken from
        // a guess: it means the entries, parsed from their start, ended right there, so the rest
        // was read as it is. Anything else is read again by the brackets (a wrong guess could
        // have skipped fields the error would then miss).
        if let guess = entriesEnd(bytes), let result = decode(utf8: bytes, entriesEnd: guess), case .success = result {
            return result
        }
        return decode(utf8: bytes, entriesEnd: nil)
    }

    /// Where `entries` ends, guessed without reading it: after the `]` that comes before the last
    /// `, "format"` of the text (the field after it in a document this program writes, whose
    /// fields are sorted). The state after it is small, so this reads little.
    private static func entriesEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let name: StaticString = "\"format\""
        let length = name.utf8CodeUnitCount
        var p = bytes.count - length
        // The state after `entries` is what a long search would pass: give up after 64 MiB.
        let limit = max(0, bytes.count - (64 << 20))
        while p > limit {
            p -= 1
            guard bytes[p] == UInt8(ascii: "\""), name.withUTF8Buffer({ $0.elementsEqual(bytes[p..<p + length]) }) else { continue }
            var k = p - 1
            while k > 0 && isBlank(bytes[k]) { k -= 1 }
            guard k > 0, bytes[k] == UInt8(ascii: ",") else { return nil }
            k -= 1
            while k > 0 && isBlank(bytes[k]) { k -= 1 }
            guard bytes[k] == UInt8(ascii: "]") else { return nil }
            return k + 1
        }
        return nil
    }

    @inline(__always)
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// `decode(utf8:)` with `entries` ending at `entriesEnd` if given, else where its brackets close.
    private static func decode(utf8 bytes: UnsafeBufferPointer<UInt8>, entriesEnd: Int?) -> Result<Snapshot, SnapshotError>? {
        // Pass 1: check the text but `entries`, note where each top-level field's value starts.
        var r = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
        r.skipWhitespace()
        guard r.i < bytes.count, bytes[r.i] == UInt8(ascii: "{") else { return nil }
        r.i += 1
        r.deepest = 1
        var members: [(name: String, start: Int)] = []
        var entries: EntryText?
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
                if name == "entries" {
                    // Given twice (only the last counts), or not an array: the tree reads it.
                    guard entries == nil, r.i < bytes.count, bytes[r.i] == UInt8(ascii: "[") else { return nil }
                    if let end = entriesEnd {
                        guard end > start else { return nil }
                        r.i = end
                    } else {
                        guard passEntries(&r) else { return nil }
                    }
                    // Entries are rarely under 200 bytes.
                    entries = EntryText(bytes: bytes, start: start, end: r.i, count: (r.i - start) / 200)
                } else {
                    do { try r.skipValue(depth: 1) } catch { return nil }
                }
                members.append((name, start))
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
        guard r.i == bytes.count, let entries else { return nil }

        // Pass 2: the state fields as values, the entries from the text.
        var top: [String: JSONValue] = [:]
        for member in members {
            // A field given twice: the tree reader refuses it.
            guard top[member.name] == nil else { return nil }
            if member.start == entries.start {
                top[member.name] = .array([])
            } else {
                r.i = member.start
                guard let value = try? r.parseValue(depth: 1) else { return nil }
                top[member.name] = value
            }
        }
        do {
            return .success(try Snapshot(.object(top), entrySource: .text(entries)))
        } catch {
            // Refused for its content: unless the entries not yet read are JSON, the text is damaged.
            if error == readAsTree { return nil }
            var check = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
            check.i = entries.start
            // Read, not skipped: a key given twice there is damage too (`skipValue` takes it).
            do { _ = try check.parseValue(depth: 1) } catch { return nil }
            return .failure(error)
        }
    }

    /// Passes over the `entries` array at `r.i` by its brackets (strings skipped whole), checking
    /// nothing else; false if the text ends first.
    private static func passEntries(_ r: inout JSONReader) -> Bool {
        let bytes = r.bytes
        guard let base = bytes.baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        let n = bytes.count
        var i = r.i
        var level = 1
        var inString = false
        while i < n {
            // Eight bytes at a time past those that matter: outside a string, quotes and
            // brackets (`[` and `]` are `{` and `}` but for the 0x20 bit); inside, quotes and
            // backslashes.
            if inString {
                while i + 8 <= n {
                    let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    if hasByte(word, 0x22) || hasByte(word, 0x5C) { break }
                    i += 8
                }
            } else {
                while i + 8 <= n {
                    let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    let folded = word | 0x2020_2020_2020_2020
                    if hasByte(word, 0x22) || hasByte(folded, 0x7B) || hasByte(folded, 0x7D) { break }
                    i += 8
                }
            }
            guard i < n else { break }
            let byte = bytes[i]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { inString = false }
            } else {
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    level += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    level -= 1
                    if level == 1 {
                        r.i = i + 1
                        return true
                    }
                default:
                    break
                }
            }
            i += 1
        }
        return false
    }

    /// Whether one of the eight bytes of `word` is `byte`.
    @inline(__always)
    private static func hasByte(_ word: UInt64, _ byte: UInt64) -> Bool {
        let x = word ^ (byte &* 0x0101_0101_0101_0101)
        return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080 != 0
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

    /// The byte at `r.i` after blanks is `byte`: read past it. Else the tree reads the text.
    @inline(__always)
    private static func expect(_ byte: UInt8, _ r: inout JSONReader) throws(SnapshotError) {
        r.skipWhitespace()
        guard r.i < r.bytes.count, r.bytes[r.i] == byte else { throw readAsTree }
        r.i += 1
    }

    /// Parses, checks and decodes the entries in order, as `decodeEntries` decodes an array; the
    /// tree reader takes over (`readAsTree`) where the text is not JSON or out of the ordinary.
    mutating func decodeEntries(text: EntryText, namespaceIndex: [String: Int]) throws(SnapshotError) {
        entries.reserveCapacity(text.count)
        ranks.reserveCapacity(text.count)
        var checks = EntryChecks(seen: [], seenRanks: Array(repeating: Set<Int64>(), count: namespaces.count),
                                 keys: KeyIndex(capacity: text.count))
        keyHashes.reserveCapacity(text.count)
        let bytes = text.bytes
        var r = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
        r.i = text.start
        try Self.expect(UInt8(ascii: "["), &r)
        var fields = EntryFields()
        var scanner = CanonicalScanner(bytes, maxDepth: JSONValue.maxDepth)
        r.skipWhitespace()
        if r.i < bytes.count && bytes[r.i] == UInt8(ascii: "]") {
            r.i += 1
        } else {
            while true {
                fields.clear(index: entries.count)
                try Self.expect(UInt8(ascii: "{"), &r)
                r.skipWhitespace()
                if r.i < bytes.count && bytes[r.i] == UInt8(ascii: "}") {
                    r.i += 1
                } else {
                    while true {
                        r.skipWhitespace()
                        // A field given twice: the tree reader refuses it.
                        guard let name = Self.plainName(&r), let slot = EntryFields.slot(of: name),
                              fields.values[slot] == nil else { throw Self.readAsTree }
                        try Self.expect(UInt8(ascii: ":"), &r)
                        // The deepest level inside the field: an entry's values start at level 3.
                        if slot == EntryFields.valueSlot {
                            try Self.readValue(&fields, &r, &scanner)
                        } else {
                            do { fields.values[slot] = try Self.readField(slot, &r) } catch { throw Self.readAsTree }
                        }
                        r.skipWhitespace()
                        guard r.i < bytes.count else { throw Self.readAsTree }
                        let separator = bytes[r.i]
                        r.i += 1
                        if separator == UInt8(ascii: "}") { break }
                        guard separator == UInt8(ascii: ",") else { throw Self.readAsTree }
                    }
                }
                try decodeEntry(fields: fields, namespaceIndex: namespaceIndex, checks: &checks)
                r.skipWhitespace()
                guard r.i < bytes.count else { throw Self.readAsTree }
                let separator = bytes[r.i]
                r.i += 1
                if separator == UInt8(ascii: "]") { break }
                guard separator == UInt8(ascii: ",") else { throw Self.readAsTree }
            }
        }
        guard r.i == text.end else { throw Self.readAsTree }
        try checkHands()
    }

    /// The entry's `value` at `r.i`: checked and put in canonical form straight from the text
    /// (`CanonicalScanner`), or else (an object with keys not plain ASCII in order, a value nested
    /// deeper than values may be, text that is not JSON) read as a tree as any other field, whose
    /// depth `dataValue` then checks.
    @inline(__always)
    private static func readValue(_ fields: inout EntryFields, _ r: inout JSONReader, _ scanner: inout CanonicalScanner) throws(SnapshotError) {
        r.skipWhitespace()
        scanner.position = r.i
        if scanner.scan() {
            r.i = scanner.position
            fields.stored = scanner.withText { StoredValue(canonicalUTF8: $0) }
            // Too large: the tree reader says so, with the entry's path.
            if fields.stored!.utf8Count > JSONValue.maxBytes { throw readAsTree }
            fields.values[EntryFields.valueSlot] = .null  // present; `storedValue` gives it
            return
        }
        fields.stored = nil
        // The deepest level inside the field: an entry's values start at level 3.
        r.deepest = 0
        do { fields.values[EntryFields.valueSlot] = try r.parseValue(depth: 3) } catch { throw readAsTree }
        fields.valuesWithinDepth = r.deepest <= 3 + JSONValue.maxDepth
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
            // A number where the writer writes text (the years 0000–9999): the tree reader says so.
            let value = try r.parseValue(depth: 3)
            if case .int(let ms) = value, ms >= CacheEngine.minISOTime && ms <= CacheEngine.maxISOTime {
                throw JSONError(message: "a time written as a number", offset: i)
            }
            return value
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
        "rank", "uses", "visited", "version",
    ]
    private static let nameBytes: [[UInt8]] = names.map { Array($0.utf8) }

    var values: [JSONValue?]
    /// The `value` read straight into its stored form (its slot in `values` then holds a placeholder).
    var stored: StoredValue?
    private(set) var path = SnapshotPath("entries")
    /// The `value` read is nested no deeper than `JSONValue.maxDepth` (then `dataValue` need
    /// not measure it); the other fields are never data values.
    var valuesWithinDepth = false
    /// `readField` read the times (text to ms; a number only outside the years 0000–9999).
    var timesChecked: Bool { true }
    var isStoreRow: Bool { false }

    /// The slot of `value`.
    static let valueSlot = 1
    /// The slot of `version`.
    static let versionSlot = 19

    var hasVersion: Bool { values[Self.versionSlot] != nil }

    init() {
        values = Array(repeating: nil, count: Self.names.count)
    }

    /// Empties every slot for the entry at `index` of `entries`.
    mutating func clear(index: Int) {
        for k in values.indices { values[k] = nil }
        stored = nil
        path = SnapshotPath("entries").element(index)
        valuesWithinDepth = false
    }

    /// Whether the field of `slot` is an instant (stored_at, stale_at, expires_at).
    @inline(__always) static func isTime(_ slot: Int) -> Bool { slot >= 3 && slot <= 5 }

    /// The slot of a name given as bytes: the one candidate of its length and first byte, compared.
    static func slot(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = name.first else { return nil }
        let k: Int
        switch (name.count, first) {
        case (3, UInt8(ascii: "k")): k = 0
        case (3, UInt8(ascii: "s")): k = 7
        case (4, UInt8(ascii: "t")): k = 6
        case (4, UInt8(ascii: "r")): k = 16
        case (4, UInt8(ascii: "u")): k = 17
        case (5, UInt8(ascii: "v")): k = 1
        case (5, UInt8(ascii: "s")): k = 2
        case (7, UInt8(ascii: "v")): k = name[1] == UInt8(ascii: "i") ? 18 : 19
        case (8, UInt8(ascii: "s")): k = 4
        case (8, UInt8(ascii: "l")): k = 10
        case (9, UInt8(ascii: "s")): k = 3
        case (9, UInt8(ascii: "m")): k = 15
        case (10, UInt8(ascii: "l")): k = 9
        case (10, UInt8(ascii: "e")): k = name[7] == UInt8(ascii: "s") ? 14 : 5
        case (11, _): k = 11
        case (14, UInt8(ascii: "s")): k = 8
        case (14, UInt8(ascii: "e")): k = 12
        case (17, _): k = 13
        default: return nil
        }
        return nameBytes[k].withUnsafeBufferPointer { candidate in
            guard candidate.count == name.count else { return false }
            for j in 0..<name.count where candidate[j] != name[j] { return false }
            return true
        } ? k : nil
    }

    func field(_ name: String) -> JSONValue? {
        guard let k = Self.slot(of: name) else { return nil }
        return values[k]
    }

    func storedValue(_ name: String) throws(SnapshotError) -> StoredValue {
        if let stored, name == "value" { return stored }
        return try Self.checkedSize(StoredValue(try valueWithinDepth(name))) { fail(name, $0) }
    }

    /// The slot of `name`, compared only with names of its length (the check of every entry
    /// asks for about twenty fields by name).
    static func slot(of name: String) -> Int? {
        switch name.utf8.count {
        case 3: return name == "key" ? 0 : name == "seq" ? 7 : nil
        case 4: return name == "tags" ? 6 : name == "rank" ? 16 : name == "uses" ? 17 : nil
        case 5: return name == "value" ? 1 : name == "state" ? 2 : nil
        case 7: return name == "visited" ? 18 : name == "version" ? 19 : nil
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
