// A stored value straight from JSON text: checked and put in canonical form in one pass, with no
// tree (`CanonicalScanner`), for a value read from a snapshot or typed in the shell.

extension StoredValue {
    /// The stored form of one JSON text given as UTF-8 bytes, surrounding blanks allowed:
    /// `StoredValue(JSONValue(parsing: bytes))` (with `maxDepth`) without building the tree.
    /// The same text, the same errors.
    ///
    /// Canonical text (compact, keys sorted) is checked and copied once (the plainest kind by
    /// `CanonicalCheck`, eight bytes at a time); other text is put in
    /// canonical form as it is checked; only a value with an object whose keys are not plain
    /// ASCII in increasing order (or text that is not JSON, for its error) goes through the tree.
    /// - Throws: `JSONError` as `JSONValue(parsing:)` throws it, offset included (from the
    ///   start of `bytes`).
    /// - Complexity: O(n) in the length of the text (O(n log k) for an object read as a tree).
    public init(parsingJSON bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.maxDepth) throws(JSONError) {
        if CanonicalCheck.isPlainCanonical(bytes, maxDepth: maxDepth) {
            self.init(canonicalUTF8: bytes)
            return
        }
        var scanner = CanonicalScanner(bytes, maxDepth: maxDepth)
        if scanner.scan() && scanner.atEnd() {
            self = scanner.withText { StoredValue(canonicalUTF8: $0) }
            return
        }
        var reader = JSONReader(bytes, maxDepth: maxDepth)
        let value = try reader.parseDocument()
        self.init(value)
    }

    /// `init(parsingJSON:maxDepth:)` of a string's UTF-8 text.
    public init(parsingJSON text: String, maxDepth: Int = JSONValue.maxDepth) throws(JSONError) {
        var text = text
        let result = text.withUTF8 { bytes in
            Result { () throws(JSONError) -> StoredValue in try StoredValue(parsingJSON: bytes, maxDepth: maxDepth) }
        }
        self = try result.get()
    }

    /// A value given as its canonical compact text's UTF-8 bytes (at most `JSONValue.documentDepth`
    /// deep), copied.
    init(canonicalUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count <= Inline.capacity {
            storage = .small(Inline(bytes))
        } else {
            storage = .bytes(Bytes.make(bytes), count: bytes.count)
        }
    }
}
