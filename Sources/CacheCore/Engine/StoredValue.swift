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

    /// The UTF-8 bytes of a text longer than a `String` holds inline: one allocation of 16 bytes
    /// of object header plus the bytes (a native `String` adds a 16-byte header of its own, a
    /// terminating zero and rounding: 88 bytes for a 24-byte text where this takes 48).
    final class Bytes: ManagedBuffer<Void, UInt8> {
        static func make(_ bytes: UnsafeBufferPointer<UInt8>) -> Bytes {
            let buffer = unsafeDowncast(Bytes.create(minimumCapacity: bytes.count) { _ in }, to: Bytes.self)
            buffer.withUnsafeMutablePointerToElements { $0.initialize(from: bytes.baseAddress!, count: bytes.count) }
            return buffer
        }
    }

    /// `@unchecked Sendable` for `Bytes` (a `ManagedBuffer`, which cannot be `Sendable`): its bytes
    /// are written once, in `Bytes.make`, before the buffer is stored here, and only read after;
    /// no code writes to a buffer once made (this file's reads take the element pointer to read).
    enum Storage: @unchecked Sendable {
        /// Canonical compact text of at most `Inline.capacity` (31) bytes, held in the value itself.
        case small(Inline)
        /// Canonical compact text of `count` bytes (more than `Inline.capacity`).
        case bytes(Bytes, count: Int)
        case deep(Deep)
    }

    let storage: Storage

    /// The bytes of a text of at most 31 bytes in four words, in memory order, the unused bytes
    /// zero and the count in the last byte. A payload with no reference: a copy of a value that
    /// holds one (each read's result holds a copy) copies four words, and dropping it does
    /// nothing. (A `String` holds at most 15 bytes inline, and each copy and each drop of one is a
    /// call into the runtime, about 15 instructions, that finds nothing to count.)
    ///
    /// Why 31: a small object such as `{"id":123456,"likes":12}` (24 bytes) is held with no
    /// allocation, where a buffer of its own took 48 bytes of the heap (16 of object header, the
    /// text, malloc's rounding); the value is 16 bytes larger for it (33 instead of 17).
    struct Inline: Sendable {
        private var words: (UInt64, UInt64, UInt64, UInt64)

        /// The most bytes an inline text holds.
        static let capacity = 31

        /// A text given as its words, laid out as described above.
        @inline(__always)
        init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

        /// The text of `bytes`, at most `capacity`.
        @inline(__always)
        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            precondition(bytes.count <= Self.capacity, "an inline text holds at most 31 bytes")
            words = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &words) { raw in
                if bytes.count > 0 { raw.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
                raw[Self.capacity] = UInt8(truncatingIfNeeded: bytes.count)
            }
        }

        /// A text of `count` bytes (at most `capacity`) written by `body` into a buffer of that many.
        @inline(__always)
        init(count: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
            precondition(count >= 0 && count <= Self.capacity, "an inline text holds at most 31 bytes")
            words = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &words) { raw in
                raw.withMemoryRebound(to: UInt8.self) { body(UnsafeMutableBufferPointer(rebasing: $0[..<count])) }
                raw[Self.capacity] = UInt8(truncatingIfNeeded: count)
            }
        }

        /// The number of bytes (the last byte of the last word in memory).
        @inline(__always)
        var count: Int { Int(truncatingIfNeeded: UInt64(littleEndian: words.3) >> 56) }

        /// The first byte (0 for an empty text).
        @inline(__always)
        var first: UInt8 { UInt8(truncatingIfNeeded: UInt64(littleEndian: words.0)) }

        /// The integer the text spells as the reader reads one (an optional `-`, then `0` or
        /// digits not starting with `0`; at most 15 bytes, so it fits: a longer text is read by
        /// the reader), or nil for any other text.
        /// Reading back a stored integer (what `get` returns most) this way skips the reader,
        /// about 380 instructions for a one-digit number.
        ///
        /// Read from the words, with no loop over the bytes: eight digits are checked at once (a
        /// byte is a digit when neither subtracting `0` nor adding 0x46 sets its high bit) and
        /// combined in three multiplications (`digits`), where a loop took some 12 instructions
        /// a digit.
        /// - Complexity: O(1).
        @inline(__always)
        var integer: Int64? {
            var n = count
            guard n <= 15 else { return nil }
            var lo = UInt64(littleEndian: words.0)
            // The bytes past the count are zero.
            var hi = UInt64(littleEndian: words.1)
            let negative = lo & 0xFF == UInt64(UInt8(ascii: "-"))
            if negative {
                // The digits move down a byte, into the sign's place.
                lo = lo >> 8 | hi << 56
                hi >>= 8
                n -= 1
            }
            guard n > 0, lo & 0xFF != UInt64(UInt8(ascii: "0")) || n == 1 else { return nil }
            guard var value = Self.digits(lo, min(n, 8)) else { return nil }
            if n > 8 {
                guard let rest = Self.digits(hi, n - 8) else { return nil }
                for _ in 8..<n { value &*= 10 }
                value &+= rest
            }
            let magnitude = Int64(truncatingIfNeeded: value)
            return negative ? 0 &- magnitude : magnitude
        }

        /// The number that the first `k` bytes of `w` (1 to 8, the first in the low byte) spell
        /// as decimal digits, or nil when one of them is not a digit. Bytes past `k` are ignored.
        ///
        /// The digits, less `0` each, are moved to the top of the word (the bytes below read as
        /// leading zeros), then combined in pairs (`d0 * 10 + d1` in every other byte), the pairs
        /// in fours and the fours in eight by two multiplications whose middle 32 bits add the
        /// parts (the method of simdjson and fast_float). No step carries from one byte into
        /// the next: a digit is at most 9, a pair at most 99 and a four at most 9,999.
        @inline(__always)
        private static func digits(_ w: UInt64, _ k: Int) -> UInt64? {
            let mask: UInt64 = k >= 8 ? .max : (1 &<< UInt64(8 * k)) &- 1
            // A byte below `0` borrows (its high bit set by the subtraction), one above `9`
            // carries into its high bit when 0x46 is added; a byte of 0x80 or more has it set by
            // one of the two. A borrow or carry reaches only later bytes, never hiding the
            // first byte that is not a digit.
            let below = w &- 0x3030_3030_3030_3030
            let above = w &+ 0x4646_4646_4646_4646
            guard (below | above) & 0x8080_8080_8080_8080 & mask == 0 else { return nil }
            var v = (below & mask) &<< UInt64(8 * (8 - k))
            v = v &* 10 &+ (v &>> 8)
            let fours = (v & 0x0000_00FF_0000_00FF) &* (100 &+ (1_000_000 &<< 32))
            let pairs = ((v &>> 16) & 0x0000_00FF_0000_00FF) &* (1 &+ (10_000 &<< 32))
            return (fours &+ pairs) &>> 32
        }

        /// The words, to copy the bytes from (see the layout above).
        var wordsForCopy: (UInt64, UInt64, UInt64, UInt64) { @inline(__always) get { words } }

        /// Calls `body` with the bytes, read from a copy of the words on the stack.
        @inline(__always)
        func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            let n = count
            return try withUnsafeBytes(of: words) { raw in
                try raw.withMemoryRebound(to: UInt8.self) { try body(UnsafeBufferPointer(rebasing: $0[..<n])) }
            }
        }
    }

    /// The stored form of `value`.
    /// - Complexity: O(n log k) for n bytes of text and objects of at most k keys.
    public init(_ value: JSONValue) {
        // Scalars print as the writer prints them, without its buffer.
        switch value {
        case .null: self = .null; return
        case .bool(let b): self.init(canonical: b ? "true" : "false"); return
        case .int(let n): self.init(int: n); return
        default: break
        }
        let text = value.compactText
        // A value nested d levels deep prints at least 2d bytes, so only a long text can be too deep.
        if text.utf8.count > 2 * JSONValue.documentDepth && value.depth > JSONValue.documentDepth {
            self.init(storage: .deep(Deep(value)))
        } else {
            self.init(canonical: text)
        }
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The stored form of an integer: its decimal digits, as `String(n)` prints them. One of at
    /// most 15 bytes (any whose magnitude is below 10^14) is written straight into the value's
    /// inline bytes, without the general printer.
    /// - Complexity: O(digits).
    init(int n: Int64) {
        guard n > -100_000_000_000_000 && n < 100_000_000_000_000 else {
            self.init(canonical: String(n))
            return
        }
        var length = n < 0 ? 1 : 0
        var rest = n.magnitude
        repeat { length += 1; rest /= 10 } while rest != 0
        let text = Inline(count: length) { buffer in
            if n < 0 { buffer[0] = UInt8(ascii: "-") }
            var i = length
            var rest = n.magnitude
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest != 0
        }
        self.init(storage: .small(text))
    }

    /// A text already in canonical form (the compact text of a `JSONValue`, or a stored value's).
    init(canonical text: String) {
        var utf8 = text
        storage = utf8.withUTF8 { bytes in
            bytes.count <= Inline.capacity ? .small(Inline(bytes)) : .bytes(Bytes.make(bytes), count: bytes.count)
        }
    }

    /// `null`: its four bytes inline, made where it is used. (A stored constant was a global,
    /// whose every read checked that it was initialized, a `swift_once` call: some 20
    /// instructions for each entry an eviction or removal emptied.)
    public static var null: StoredValue {
        @inline(__always) get {
            // "null" in the first word's low bytes, the count (4) in the last byte (`Inline`).
            StoredValue(storage: .small(Inline(words: (UInt64(0x6C6C_756E).littleEndian, 0, 0, (UInt64(4) << 56).littleEndian))))
        }
    }

    /// Calls `body` with the compact text's UTF-8 bytes (for output written as bytes; no copy).
    public func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch storage {
        case .small(let text):
            return try text.withBytes(body)
        case .bytes(let buffer, let count):
            return try buffer.withUnsafeMutablePointerToElements { try body(UnsafeBufferPointer(start: $0, count: count)) }
        case .deep(let deep):
            var text = deep.value.compactText
            return try text.withUTF8(body)
        }
    }

    /// The byte count of the compact text (`utf8Count`) when the value holds its text (every
    /// value but one deeper than `JSONValue.documentDepth`, which prints it), else nil.
    ///
    /// With `copyHeldUTF8`, the text is read where the value is kept, with no closure of the
    /// caller's lent it: read through a value in an array's storage, `withUTF8` copied the value
    /// out first (a retain and a release of its buffer), since its closure could change that storage.
    var heldUTF8Count: Int? {
        @inline(__always) get {
            switch storage {
            case .small(let text): return text.count
            case .bytes(_, let count): return count
            case .deep: return nil
            }
        }
    }

    /// Copies the compact text, held whole (`heldUTF8Count` is not nil), to `out` (room for its
    /// `heldUTF8Count` bytes).
    @inline(__always)
    func copyHeldUTF8(to out: UnsafeMutablePointer<UInt8>) {
        switch storage {
        case .small(let text):
            let words = text.wordsForCopy
            withUnsafeBytes(of: words) { raw in
                StoredEntryRows.copyBytes(from: raw.baseAddress!, to: out, count: text.count)
            }
        case .bytes(let buffer, let count):
            buffer.withUnsafeMutablePointerToElements { StoredEntryRows.copyBytes(from: UnsafeRawPointer($0), to: out, count: count) }
        case .deep:
            preconditionFailure("a deep value's text is not held")
        }
    }

    /// The compact text: what `get` prints (equal to `json.compactText`).
    /// - Complexity: O(size of the text): a copy (a value deeper than `JSONValue.documentDepth`: printed).
    public var text: String {
        switch storage {
        case .deep(let deep): return deep.value.compactText
        case .small, .bytes: return withUTF8 { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The value as a tree.
    ///
    /// A short integer, the usual value read, is taken from the inline bytes here; anything else
    /// is read in a function of its own, so that this one keeps a small frame with no buffer on
    /// the stack (the reader's frame and the stack check it needed were some 25 instructions of
    /// each read of an integer).
    /// - Complexity: O(size of the text).
    public var json: JSONValue {
        if case .small(let text) = storage, let n = text.integer { return .int(n) }
        return tree()
    }

    /// `json` of any value but a short integer.
    @inline(never)
    private func tree() -> JSONValue {
        if case .deep(let deep) = storage { return deep.value }
        return withUTF8 { bytes in
            var reader = JSONReader(bytes, maxDepth: JSONValue.documentDepth)
            do { return try reader.parseDocument() } catch {
                preconditionFailure("a stored value's text does not read back: \(error)")
            }
        }
    }

    /// The number of bytes of the compact text.
    public var utf8Count: Int { withUTF8 { $0.count } }

    /// Appends the compact text's UTF-8 bytes to `bytes`.
    public func append(to bytes: inout [UInt8]) {
        withUTF8 { bytes.append(contentsOf: $0) }
    }

    public var description: String { text }

    public static func == (a: StoredValue, b: StoredValue) -> Bool {
        if case .deep = a.storage { return a.json == b.json }
        if case .deep = b.storage { return a.json == b.json }
        let (same, bytewise) = a.withUTF8 { x in
            b.withUTF8 { y in (x.elementsEqual(y), isBytewise(x) && isBytewise(y)) }
        }
        return same || (!bytewise && a.json == b.json)
    }

    /// Whether `JSONValue` equality of this canonical text and another such text is byte
    /// equality: ASCII only (no Unicode canonical equivalence) and no `-0` (where `-0.0` equals `0.0`).
    private static func isBytewise(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for byte in text {
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

        /// Whether the name is ASCII letters, digits and `_` only (`id`): then a key of that name
        /// is found by its bytes alone (`scanPlainIDs`).
        let isPlain: Bool

        init(_ name: String) {
            self.name = name
            quoted = Array(JSONValue.string(name).compactText.utf8)
            isPlain = !name.isEmpty && name.utf8.allSatisfy { byte in
                byte &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "A") < 26 || byte &- UInt8(ascii: "0") < 10
                    || byte == UInt8(ascii: "_")
            }
        }
    }

    /// Whether the value is an object or an array, the only values that can embed an entity id:
    /// when not, `entityIDs` is empty without a scan (one byte read).
    /// - Complexity: O(1).
    @inline(__always)
    var mayEmbedIDs: Bool {
        switch storage {
        case .small(let text):
            let first = text.first
            return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        case .bytes(let buffer, _):
            let first = buffer.withUnsafeMutablePointerToElements { $0.pointee }
            return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        case .deep:
            return true
        }
    }

    /// The entity ids the value embeds under `field` (B8), sorted, each once: the same as
    /// `json.collectEntityIDs(idField:into:)`, read off the canonical text without a tree.
    /// - Complexity: O(size of the text).
    func entityIDs(_ field: IDField) -> [String] {
        if case .deep(let deep) = storage {
            var set = Set<String>()
            deep.value.collectEntityIDs(idField: field.name, into: &set)
            return set.sorted()
        }
        var ids: [String] = []
        withUTF8 { text in
            // Only an object or an array holds an object.
            guard let first = text.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return }
            Self.scanIDs(text, field.quoted) { at in
                if let id = Self.idText(text, at: at) { ids.append(id) }
            }
        }
        if ids.count < 2 { return ids }
        ids.sort()
        var unique: [String] = [ids[0]]
        for id in ids.dropFirst() where id != unique[unique.count - 1] { unique.append(id) }
        return unique
    }

    /// The entity ids the value embeds under `field` as the id index keys them
    /// (`IDIndex.Key`), in the order of the text, an id repeated as often as it is embedded: what
    /// a put lists in the index, read with no string made for an integer id.
    /// `Set(entityIDKeys(f)) == Set(entityIDs(f).map(IDIndex.Key.init))`.
    /// - Complexity: O(size of the text).
    func entityIDKeys(_ field: IDField) -> [IDIndex.Key] {
        var keys: [IDIndex.Key] = []
        forEachEntityIDKey(field) { keys.append($0) }
        return keys
    }

    /// Calls `body` with each of ``entityIDKeys(_:)`` in turn, making no array.
    /// - Complexity: O(size of the text).
    @inline(__always)
    func forEachEntityIDKey(_ field: IDField, _ body: (IDIndex.Key) -> Void) {
        if case .deep = storage {
            for id in entityIDs(field) { body(IDIndex.Key(id)) }
            return
        }
        withUTF8 { text in
            guard let first = text.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return }
            if field.isPlain {
                Self.scanPlainIDs(text, field.quoted) { at in
                    if let key = Self.idKey(text, at: at) { body(key) }
                }
            } else {
                Self.scanIDs(text, field.quoted) { at in
                    if let key = Self.idKey(text, at: at) { body(key) }
                }
            }
        }
    }

    /// `scanIDs` for a field whose name is plain (`IDField.isPlain`), by its bytes alone: in
    /// canonical compact text an unescaped quote before a letter, digit or `_` opens a string (a
    /// closing one is followed by `,`, `:`, `}` or `]`), and a string followed by `:` is an
    /// object's key; a quote is escaped when an odd number of backslashes comes before it. So
    /// every place the bytes `"NAME":` start at an unescaped quote is a key NAME, in text order.
    /// - Complexity: O(n), a few instructions a byte.
    @inline(__always)
    private static func scanPlainIDs(_ b: UnsafeBufferPointer<UInt8>, _ quoted: [UInt8], _ found: (Int) -> Void) {
        guard let base = b.baseAddress else { return }
        let n = b.count
        quoted.withUnsafeBufferPointer { q in
            let m = q.count
            let second = q[1]
            var i = 0
            // The key's bytes and the colon after them fit before the end.
            while i + m < n {
                guard base[i] == UInt8(ascii: "\""), base[i + 1] == second else {
                    i += 1
                    continue
                }
                var k = 2
                while k < m && base[i + k] == q[k] { k += 1 }
                if k == m && base[i + m] == UInt8(ascii: ":") {
                    var backslashes = 0
                    while backslashes < i && base[i - 1 - backslashes] == UInt8(ascii: "\\") { backslashes += 1 }
                    if backslashes % 2 == 0 {
                        found(i + m + 1)
                        i += m + 1
                        continue
                    }
                }
                i += 1
            }
        }
    }

    /// Calls `found` with the index of the value of every object's key `quoted` in canonical
    /// compact text `b`. Canonical text has no white space, so a key is the string right after
    /// `{` or after `,` inside an object, and its value starts right after `:`.
    /// - Complexity: O(n); each turn of the loop moves past at least one byte.
    @inline(__always)
    private static func scanIDs(_ b: UnsafeBufferPointer<UInt8>, _ quoted: [UInt8], _ found: (Int) -> Void) {
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
                        && quoted.withUnsafeBufferPointer({ q in
                            var k = 0
                            while k < q.count && b[i + k] == q[k] { k += 1 }
                            return k == q.count
                        }) {
                        found(end + 1)
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

    /// `idText(b, at: start).map(IDIndex.Key.init)`, with no string made for an integer.
    private static func idKey(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> IDIndex.Key? {
        guard start < b.count else { return nil }
        if b[start] == UInt8(ascii: "\"") { return idText(b, at: start).map(IDIndex.Key.init) }
        guard let end = integerEnd(b, at: start) else { return nil }
        return IDIndex.Key(utf8: UnsafeBufferPointer(rebasing: b[start..<end]))
    }

    /// Where the integer starting at `start` ends (an optional `-`, then digits, not followed by
    /// a `.` or an exponent, as canonical text prints an `.int`); nil for any other value.
    @inline(__always)
    private static func integerEnd(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> Int? {
        var end = start
        if b[end] == UInt8(ascii: "-") { end += 1 }
        let digits = end
        while end < b.count && b[end] &- UInt8(ascii: "0") < 10 { end += 1 }
        guard end > digits else { return nil }
        if end < b.count {
            let next = b[end]
            if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { return nil }
        }
        return end
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
        guard let end = integerEnd(b, at: start) else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self)
    }
}
