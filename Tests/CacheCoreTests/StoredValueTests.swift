@_spi(Engine) @testable import CacheCore
import Testing
import TestSupport

/// Values kept as canonical compact text (`StoredValue`): they read back as the value stored,
/// compare as `JSONValue`s do, and give the id index the ids a walk of the tree gives; the entry
/// record keeps its rarely used fields out of line without changing what they read.
@Suite struct StoredValueTests {
    @Test func randomValuesReadBackPrintTheSameAndEmbedTheSameIDs() throws {
        var rng = SeededGenerator(seed: 19)
        let fields = ["id", "k", "a\"b"].map(StoredValue.IDField.init)
        for _ in 0..<3_000 {
            let value = randomValue(&rng, depth: 0)
            let stored = StoredValue(value)
            #expect(stored.json == value)
            #expect(stored.text == value.compactText)
            #expect(StoredValue(stored.json).text == stored.text, "the text is canonical")
            for field in fields {
                var walked = Set<String>()
                value.collectEntityIDs(idField: field.name, into: &walked)
                #expect(stored.entityIDs(field) == walked.sorted(), "\(stored.text) under \(field.name)")
                #expect(Set(stored.entityIDKeys(field)) == Set(walked.map(IDIndex.Key.init)), "\(stored.text) under \(field.name)")
            }
        }
    }

    @Test func idsAreIntegersAndStringsAtAnyDepthNeverDoublesOrOtherKeysValues() {
        let value = StoredValue(json(#"""
            {"id":1,"items":[{"id":"x\"y","n":{"id":-20}},{"id":2.0},{"id":1e3},{"id":[3]},{"id":{"id":4}}],
             "name":"id","x":{"ids":5,"id":"é"},"y":["id",6]}
            """#))
        #expect(value.entityIDs(.init("id")) == ["-20", "1", "4", "x\"y", "é"])
        #expect(StoredValue(json(#"[1,{"id":1},{"id":"1"}]"#)).entityIDs(.init("id")) == ["1"], "42 and \"42\" are one entity")
        #expect(StoredValue(json(#"{"a\"b":7,"id":8}"#)).entityIDs(.init("a\"b")) == ["7"])
    }

    /// A plain id field's keys are found by their bytes (`"id":` at an unescaped quote): text
    /// that holds those bytes inside a string, or after escaped quotes, embeds no id.
    @Test(arguments: [
        (#"{"a":"\"id\":1","id":2}"#, [IDIndex.Key.int(2)]),
        (#"{"x\"id":1}"#, []),
        (#"{"a\\":{"id":3}}"#, [.int(3)]),
        (#"{"a":"x\\","id":"5"}"#, [.int(5)]),
        (#"["\"id\":4",{"id":"a\"b"},{"id":-7,"k":{"id":[1]}},{"id":1.5},{"ids":9},{"idx":9}]"#, [.text("a\"b"), .int(-7)]),
        (#"{"id":{"id":8}}"#, [.int(8)]),
    ])
    func plainIDFieldsAreFoundByTheirBytes(text: String, expected: [IDIndex.Key]) {
        let value = StoredValue(json(text))
        #expect(value.entityIDKeys(.init("id")) == expected, "\(value.text)")
        var walked = Set<String>()
        value.json.collectEntityIDs(idField: "id", into: &walked)
        #expect(Set(expected) == Set(walked.map(IDIndex.Key.init)))
    }

    @Test func storedValuesCompareAsTheirValuesDo() {
        // Canonically equivalent strings are equal Swift strings, and -0.0 equals 0.0, though
        // their texts differ.
        #expect(StoredValue(.string("\u{E9}")) == StoredValue(.string("e\u{301}")))
        #expect(StoredValue(["k": .string("\u{212A}")]) == StoredValue(["k": "K"]))
        #expect(StoredValue(.double(-0.0)) == StoredValue(.double(0.0)))
        #expect(StoredValue([.double(-0.0), 1]).text == "[-0.0,1]")
        #expect(StoredValue(["a": 1, "b": [true, nil]]) == StoredValue(json(#"{"b":[true,null],"a":1}"#)))
        #expect(StoredValue(42) != StoredValue(42.0))
        #expect(StoredValue("x-0") != StoredValue("x-1"))
        #expect(StoredValue(["k": "é"]) != StoredValue(["k": "e"]))
    }

    /// The inline integer reader (`StoredValue.Inline.integer`) against the grammar it reads, on
    /// texts of every length up to 15 built from digits and the bytes around them (`/` and `:`
    /// border `0` and `9`, `-`, `.`, `e`, a byte of 0x80 and above): an optional `-`, then `0` or
    /// digits not starting with `0`, read as the number they spell; anything else nil.
    @Test func inlineIntegersAreReadExactlyWhenTheTextIsOne() {
        var rng = SeededGenerator(seed: 1915)
        let alphabet: [UInt8] = Array("0123456789".utf8) + Array("0123456789".utf8) + Array("-/:.e ".utf8) + [0x80, 0xC3, 0xFF, 0x00]
        func expected(_ bytes: [UInt8]) -> Int64? {
            var digits = bytes[...]
            let negative = digits.first == UInt8(ascii: "-")
            if negative { digits = digits.dropFirst() }
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            guard digits.first != UInt8(ascii: "0") || digits.count == 1 else { return nil }
            let magnitude = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
            return negative ? -magnitude : magnitude
        }
        for _ in 0..<200_000 {
            let n = Int(rng.next() % 16)
            var bytes = (0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            // Half the texts are numbers but for at most one byte.
            if rng.next() % 2 == 0 {
                bytes = (0..<n).map { i in i == 0 && rng.next() % 3 == 0 ? UInt8(ascii: "-") : UInt8(ascii: "1") &+ UInt8(rng.next() % 9) }
                if n > 0 && rng.next() % 2 == 0 { bytes[Int(rng.next() % UInt64(n))] = alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            }
            let read = bytes.withUnsafeBufferPointer { StoredValue.Inline($0).integer }
            #expect(read == expected(bytes), "\(bytes)")
        }
    }


    /// Short texts read back as the reader reads them, integers (taken without the reader) and
    /// anything else alike.
    @Test func shortTextsReadBackAsTheReaderReadsThem() throws {
        let texts = ["0", "-0", "7", "-7", "42", "-1234567890", "99999999999999", "-9999999999999",
                     "123456789012345", "1.5", "-0.0", "1e3", "2E-3", "true", "false", "null", "\"7\"", "[1]", "{}",
                     // Eight digits fill the first word; a ninth, or a sign, reaches the second.
                     "12345678", "-12345678", "123456789", "-1234567", "90000000", "10000000000001",
                     "98765432109876", "-98765432109876", "1234567.5", "-1234567e5", "12345678.5", "1234567890.25"]
        for text in texts {
            let read = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth)
            #expect(StoredValue(canonical: text).json == read, "\(text)")
            if case .int(let n) = read { #expect(StoredValue(int: n).json == .int(n)) }
        }
        #expect(StoredValue(canonical: "-0").json == .int(0))
        #expect(StoredValue(canonical: "123456789012345").json == .int(123_456_789_012_345))
    }

    /// A value only an app's own `JSONValue` can make (the reader refuses it) is kept as it was.
    @Test func aValueDeeperThanTheReaderTakesIsStoredAndReadAsItWas() throws {
        var deep: JSONValue = ["id": 9]
        for _ in 0..<(JSONValue.documentDepth + 10) { deep = .array([deep]) }
        let h = Harness()
        h.engine.put("deep", deep)
        #expect(h.engine.peek("deep").value == deep)
        #expect(h.engine.peek("deep").valueText == deep.compactText)
        #expect(h.engine.details(of: "deep")?.ids == ["9"])
        #expect(h.engine.entries.slots(embedding: "9") == [h.engine.entries.slot(forKey: "deep")!])
        #expect(h.engine.invariantViolations() == [])
    }

    @Test func aReadServesTheStoredTextAndItsTree() throws {
        let h = Harness()
        h.engine.put("feed:1", ["likes": 2, "id": 1])
        let r = h.engine.peek("feed:1")
        #expect(r.valueText == #"{"id":1,"likes":2}"#)
        #expect(r.value == ["id": 1, "likes": 2])
        var changed = r
        changed.value = nil
        #expect(changed.valueText == nil && changed.stored == nil)
    }

    /// An id's bytes key the index as its text does: an integer only when `String(n)` prints
    /// exactly that text (no sign `+`, no leading zero, no `-0`, within `Int64`).
    @Test(arguments: ["0", "7", "-7", "42", "007", "+7", "-0", "00", "-", "", "1a", "a1", " 1", "1.0", "1e3",
                      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                      "99999999999999999999", "-09", "١٢", "x\"y"])
    func anIDsBytesKeyTheIndexAsItsTextDoes(text: String) {
        let expected: IDIndex.Key
        if let n = Int64(text), text.first != "+", String(n) == text { expected = .int(n) } else { expected = .text(text) }
        #expect(IDIndex.Key(text) == expected)
        var bytes = text
        #expect(bytes.withUTF8 { IDIndex.Key(utf8: $0) } == expected)
    }

    /// An id embedded by one entry is held inline; by more, in a set; as entries go, inline again.
    /// The index is built first (on the empty table), so each change below is kept in step by
    /// the puts and removals themselves.
    @Test func theIDIndexHoldsOneSlotInlineAndASetForMore() throws {
        let h = Harness()
        h.engine.entries.buildIDIndex()
        func index() throws -> IDIndex { try #require(h.engine.entries.idIndex, "built, and kept once built") }
        h.engine.put("a", ["id": 7])
        h.engine.put("b", [["id": 7], ["id": 8]])
        h.engine.put("c", ["x": ["id": "7"]])
        #expect(try index()["7"].count == 3)
        #expect(try index().raw("8") == h.engine.entries.slot(forKey: "b"), "one slot, inline")
        #expect(try #require(try index().raw("7")) < 0, "three slots, in a set")
        h.engine.evict("a")
        h.engine.put("c", ["x": "no ids"])
        #expect(try index().raw("7") == h.engine.entries.slot(forKey: "b"), "one slot again, inline")
        h.engine.put("b", ["id": 8])
        #expect(try index()["7"].isEmpty)
        #expect(try index().count == 1)
        h.engine.put("f", [["id": "007"], ["id": "+7"], ["id": "-0"], ["id": 0], ["id": -7]])
        let index = try index()
        #expect(["007", "+7", "-0", "0", "-7", "7"].map { index[$0].count } == [1, 1, 1, 1, 1, 0],
                "an integer id and a text that only reads as one are two entities")
        h.engine.evict("f")
        h.engine.put("d", [["id": 8], ["id": 9]])
        h.engine.put("e", ["id": 9])
        h.engine.clear()
        #expect(try #require(h.engine.entries.idIndex).count == 0)
        #expect(h.engine.invariantViolations() == [])
    }

    /// The checker reads a value's ids off its text as the index does, and sees a text that is not canonical.
    @Test func aValueChangedBehindTheIndexIsReported() {
        let h = Harness()
        h.engine.put("a", ["id": 7])
        h.engine.entries.buildIDIndex()
        let slot = h.engine.entries.slot(forKey: "a")!
        h.engine.entries.testingReplaceStored(slot, StoredValue(canonical: #"{ "id": 8 }"#))
        let violations = h.engine.invariantViolations()
        #expect(violations.contains(#"entry table: the value of a is not in canonical form: { "id": 8 }"#))
        #expect(violations.contains("id index: 7 leads to a, which does not list it"))
    }

    /// The write sequence numbers read back what was set, in any order, while an entry keeps no
    /// out-of-line record when each has its usual value; a copy never sees another's writes.
    @Test func anEntrysWriteFieldsReadBackWhatWasSet() {
        var rng = SeededGenerator(seed: 5)
        var entry = Entry(key: "k", namespace: 0, stored: .null, tags: [], storedAt: 0, staleAt: .max, expiresAt: .max)
        var model = (request: UInt64(0), local: UInt64(0), put: UInt64(0), expiry: UInt64(0), log: false, tags: [String]())
        let choices: [UInt64] = [0, 1, 2, 3]
        for step in 0..<5_000 {
            let n = choices[Int(rng.next() % 4)]
            switch rng.next() % 8 {
            case 0: entry.storedRequest = n; model.request = n
            case 1: entry.lastLocalWrite = n; model.local = n
            case 2: entry.lastPut = n; model.put = n
            case 3: entry.expirySeq = n; model.expiry = n
            case 4: entry.notePut(n); model.request = n; model.local = n; model.put = n
            case 5: entry.setWrites(local: n, put: 3 - n); model.local = n; model.put = 3 - n
            case 6:
                let tags = n == 0 ? [] : ["t\(n)"]
                entry.tags = tags
                model.tags = tags
            default:
                let on = rng.next() % 2 == 0
                entry.log = on ? MutationLog(base: .null, baseSeq: n) : nil
                model.log = on
            }
            #expect(entry.storedRequest == model.request && entry.lastLocalWrite == model.local && entry.lastPut == model.put,
                    "step \(step)")
            #expect(entry.expirySeq == model.expiry && (entry.log != nil) == model.log && entry.tags == model.tags, "step \(step)")
            #expect(!entry.hasIdleColdRecord, "step \(step)")
            #expect(entry.live && !entry.invalidated && !entry.marked)
        }
        var a = entry
        a.expirySeq = 9
        a.lastPut = 9
        a.tags = ["x"]
        let b = a
        a.expirySeq = 1
        a.lastPut = 1
        a.tags = []
        #expect(b.expirySeq == 9 && b.lastPut == 9 && b.tags == ["x"])
        #expect(a.expirySeq == 1 && a.lastPut == 1)
    }

    /// An integer is stored as `String(n)` prints it, on both sides of the inline fast path's
    /// bounds (15 bytes) and at the extremes.
    @Test func integersAreStoredAsTheyPrint() {
        let edges: [Int64] = [0, 1, -1, 9, 10, -10, 42, 99_999_999_999_999, 100_000_000_000_000,
                              -99_999_999_999_999, -100_000_000_000_000, 999_999_999_999_999,
                              .max, .min, .max - 1, .min + 1]
        var rng = SeededGenerator(seed: 19)
        let random = (0..<2000).map { _ in Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64) }
        for n in edges + random {
            let stored = StoredValue(.int(n))
            #expect(stored.text == String(n))
            #expect(stored.json == .int(n))
            #expect(stored == StoredValue(canonical: String(n)))
        }
    }

    /// What a read needs and the sequence numbers every entry has fit in 96 bytes (184 when the
    /// value was a tree and the rarely used fields were inline), a text of up to 31 bytes included.
    @Test func theEntryRecordStaysSmall() {
        #expect(MemoryLayout<Entry>.stride <= 96)
        #expect(MemoryLayout<StoredValue>.size <= 33)
        #expect(StoredValue.Inline.capacity == 31)
    }

    private func randomValue(_ rng: inout SeededGenerator, depth: Int) -> JSONValue {
        switch rng.next() % (depth > 3 ? 5 : 8) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3:
            let doubles: [Double] = [-0.0, 0, 42, 1e15, 1e16, 0.1, -2.5e-8, 1e300, Double(Int64(bitPattern: rng.next()) % 1_000_000) / 7]
            return .double(doubles[Int(rng.next() % UInt64(doubles.count))])
        case 4:
            let alphabet: [Character] = ["a", "1", "-", "\"", "\\", "\n", "é", "e\u{301}", "😀", "\u{1}", "\u{85}", " ", "/", ":", ",", "{", "]"]
            return .string(String((0..<rng.next() % 6).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
        case 5: return .array((0..<rng.next() % 4).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var object: [String: JSONValue] = [:]
            let keys = ["id", "k", "a\"b", "ids", "i", "é"]
            for _ in 0..<rng.next() % 4 {
                object[keys[Int(rng.next() % UInt64(keys.count))]] = randomValue(&rng, depth: depth + 1)
            }
            return .object(object)
        }
    }
}
