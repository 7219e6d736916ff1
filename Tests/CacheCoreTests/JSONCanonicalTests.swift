@testable import CacheCore
import TestSupport
import Testing

/// Canonical compact text straight from JSON text, and the pretty form of a canonical text: both
/// are what the tree gives (`JSONValue(parsing:).compactText`, `prettyText()`), byte for byte.
@Suite struct JSONCanonicalTests {
    static func randomValue(_ rng: inout SeededGenerator, depth: Int) -> JSONValue {
        switch rng.next() % (depth > 3 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3: return .double(Double(Int64(bitPattern: rng.next()) % 1_000_000) / 7)
        case 4, 5:
            let alphabet: [String] = ["a", "\"", "\\", "\n", "é", "😀", "\u{1}", " ", "/", "\u{7F}", "\u{85}", "Z", ":", ","]
            return .string((0..<rng.next() % 8).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined())
        case 6: return .array((0..<rng.next() % 4).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            let keys = ["id", "a", "B", "é", "k\"q", "", "a b", "\u{7F}", "ab", "~"]
            var object: [String: JSONValue] = [:]
            for _ in 0..<rng.next() % 5 { object[keys[Int(rng.next() % UInt64(keys.count))]] = randomValue(&rng, depth: depth + 1) }
            return .object(object)
        }
    }

    @Test func randomValuesGiveTheTreesTexts() throws {
        var rng = SeededGenerator(seed: 19)
        for _ in 0..<3_000 {
            let value = Self.randomValue(&rng, depth: 0)
            let compact = value.compactText
            #expect(try JSONValue.canonicalCompactText(parsing: compact) == compact)
            #expect(try JSONValue.canonicalCompactText(parsing: value.prettyText()) == compact)
            #expect(JSONValue.prettyText(ofCompact: compact) == value.prettyText())
        }
    }

    /// Text that is JSON but not canonical: keys out of order, escapes the writer
    /// does not use, numbers in other forms, blanks.
    @Test(arguments: [
        #"{"b":1,"a":2}"#, #"{"a":{"y":1,"x":[{"q":1,"p":2}]},"b":0}"#,
        #"{"\u0061":1,"b":2}"#, #"{"é":1,"e":2,"f":3}"#, #"{"e\u0301":1,"f":2}"#,
        #"["\/","\u0041","\ud83d\ude00","\u00e9","\u007f","\u0085","\t"]"#,
        "[-0, 0.0, -0.0, 1.0, 1e2, 1E-2, 12345678901234567890.0, -9223372036854775808, 9223372036854775807, 0.1]",
        " { \"a\" : [ 1 , true , false , null ] } ", #"["x\u0000y\u001F"]"#,
        "\"\u{C2}\u{85}\"", "[{}, [], {\"\": {}}]",
    ])
    func otherFormsGiveTheTreesText(text: String) throws {
        #expect(try JSONValue.canonicalCompactText(parsing: text) == JSONValue(parsing: text).compactText)
    }

    /// Bad text gets the reader's own error, offset included.
    @Test(arguments: ["{\"a\":1,}", "[1 2]", "{\"b\":1,\"a\":}", "01", "\"\\ud800\"", "[1,2", "{} x", "", "[1e999]"])
    func badTextGetsTheReadersError(text: String) {
        var expected: JSONError?
        do { _ = try JSONValue(parsing: text) } catch { expected = error }
        #expect(expected != nil)
        #expect(throws: expected!) { try JSONValue.canonicalCompactText(parsing: text) }
    }

    @Test func depthIsBoundedAsTheReaderBoundsIt() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSONValue.canonicalCompactText(parsing: ok) == ok)
        let tooDeep = "[" + ok + "]"
        #expect(throws: JSONError(message: "JSON nested deeper than 512 levels", offset: 512)) {
            try JSONValue.canonicalCompactText(parsing: tooDeep)
        }
    }
}

/// A stored value straight from JSON bytes (`StoredValue(parsingJSON:)`, what the shell's `put`
/// and a snapshot's entries use) is the tree's, byte for byte, and bad text gets the tree's error.
@Suite struct StoredValueParsingTests {
    /// The tree path's outcome for `bytes`: the stored text, or the reader's error.
    static func treeOutcome(_ bytes: [UInt8], maxDepth: Int = JSONValue.maxDepth) -> Result<String, JSONError> {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer, maxDepth: maxDepth)
            do throws(JSONError) { return .success(StoredValue(try reader.parseDocument()).text) } catch { return .failure(error) }
        }
    }

    static func scannedOutcome(_ bytes: [UInt8], maxDepth: Int = JSONValue.maxDepth) -> Result<String, JSONError> {
        bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONError) { return .success(try StoredValue(parsingJSON: buffer, maxDepth: maxDepth).text) } catch { return .failure(error) }
        }
    }

    static func expectSame(_ bytes: [UInt8], maxDepth: Int = JSONValue.maxDepth, sourceLocation: SourceLocation = #_sourceLocation) {
        let tree = treeOutcome(bytes, maxDepth: maxDepth)
        let scanned = scannedOutcome(bytes, maxDepth: maxDepth)
        #expect(scanned == tree, "\(String(decoding: bytes, as: UTF8.self).debugDescription)", sourceLocation: sourceLocation)
    }

    /// Text of `value` in forms other than the canonical one: blanks anywhere, escapes the writer
    /// does not use, numbers written otherwise, keys in another order.
    static func otherForm(_ value: JSONValue, _ rng: inout SeededGenerator) -> String {
        func blank() -> String { ["", "", " ", "\n  ", "\t", "\r\n"][Int(rng.next() % 6)] }
        func string(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch (scalar.value, rng.next() % 4) {
                case (0x22, _): out += "\\\""
                case (0x5C, _): out += "\\\\"
                case (0..<0x20, _): out += "\\u" + hex4(UInt16(scalar.value)).uppercased()
                case (let v, 0) where v < 0x10000: out += "\\u" + hex4(UInt16(v))
                case (0x2F, _): out += "\\/"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        switch value {
        case .null, .bool: return blank() + value.compactText + blank()
        case .int(let n):
            return n == 0 && rng.next() % 2 == 0 ? "-0" : String(n)
        case .double(let d):
            let text = JSONValue.text(of: d)
            if text.contains("e") { return text.uppercased() }
            return rng.next() % 2 == 0 ? text + "0" : text + "E0"
        case .string(let s): return string(s)
        case .array(let items):
            return "[" + blank() + items.map { otherForm($0, &rng) }.joined(separator: blank() + "," + blank()) + blank() + "]"
        case .object(let fields):
            let pairs = fields.sorted { $0.key < $1.key }
            let ordered = rng.next() % 3 == 0 ? pairs.reversed() : pairs
            return "{" + blank() + ordered.map { string($0.key) + blank() + ":" + blank() + otherForm($0.value, &rng) }
                .joined(separator: blank() + "," + blank()) + blank() + "}"
        }
    }

    @Test func randomValuesInEveryFormGiveTheTreesBytes() {
        var rng = SeededGenerator(seed: 1919)
        for _ in 0..<4_000 {
            let value = JSONCanonicalTests.randomValue(&rng, depth: 0)
            let compact = value.compactText
            for text in [compact, value.prettyText(), Self.otherForm(value, &rng), " \(compact)\n"] {
                let bytes = Array(text.utf8)
                Self.expectSame(bytes)
                // The canonical text is the stored value's own.
                let stored = try? StoredValue(parsingJSON: text)
                #expect(stored?.text == StoredValue(value).text)
                #expect(stored.map { (try? StoredValue(parsingJSON: $0.text)) == $0 } ?? false)
            }
        }
    }

    /// Texts damaged a byte at a time (a byte dropped, changed or added, the text cut short):
    /// the same value or the same error, message and offset.
    @Test func damagedTextsGetTheTreesErrors() {
        var rng = SeededGenerator(seed: 77)
        let alphabet = Array(#"{}[]:,"\ -+.eE019aunlftr/"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC2, 0xE2, 0xED, 0xF4, 0xFF]
        for _ in 0..<4_000 {
            let value = JSONCanonicalTests.randomValue(&rng, depth: 0)
            var bytes = Array((rng.next() % 2 == 0 ? value.compactText : Self.otherForm(value, &rng)).utf8)
            for _ in 0..<(1 + rng.next() % 2) {
                let at = bytes.isEmpty ? 0 : Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 4 {
                case 0 where !bytes.isEmpty: bytes.remove(at: at)
                case 1 where !bytes.isEmpty: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 2: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                default: bytes = Array(bytes.prefix(at))
                }
            }
            Self.expectSame(bytes)
        }
    }

    /// Bytes a `String` could not hold: invalid UTF-8 is read as the tree reads it (repaired).
    @Test(arguments: [
        [0x22, 0xFF, 0x22], [0x22, 0xC2, 0x85, 0x22], [0x22, 0xC2, 0xA0, 0x22], [0x22, 0xC0, 0xAF, 0x22],
        [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], [0x22, 0x7F, 0x22], [0x5B, 0x22, 0xE9, 0x22, 0x5D],
        [0x7B, 0x22, 0xC3, 0xA9, 0x22, 0x3A, 0x31, 0x7D], [0x22, 0xE2, 0x82, 0xAC, 0x22],
    ] as [[UInt8]])
    func bytesNotValidUTF8AreReadAsTheTreeReadsThem(bytes: [UInt8]) {
        Self.expectSame(bytes)
    }

    @Test func depthIsBoundedAsTheReaderBoundsIt() {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        Self.expectSame(Array(ok.utf8))
        Self.expectSame(Array(("[" + ok + "]").utf8))
        Self.expectSame(Array(("{\"a\":" + ok + "}").utf8))
        Self.expectSame(Array("[[[1]]]".utf8), maxDepth: 2)
        Self.expectSame(Array("[[1]]".utf8), maxDepth: 2)
        #expect(throws: JSONError(message: "JSON nested deeper than 512 levels", offset: 512)) {
            try StoredValue(parsingJSON: "[" + ok + "]")
        }
        // A larger bound asked is the document's at most, in the plain check as in the reader.
        let deep = String(repeating: "[", count: 600) + "0" + String(repeating: "]", count: 600)
        Self.expectSame(Array(deep.utf8), maxDepth: 1_000)
        #expect(throws: JSONError.self) { try StoredValue(parsingJSON: deep, maxDepth: 1_000) }
        Self.expectSame(Array(String(repeating: "[", count: 100_000).utf8), maxDepth: .max)
    }

    @Test(arguments: [
        "", " ", "1 2", "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"",
        "\"\\udc00\"", "\"a\u{1}\"", "tru", "nul", "[1e999]", "{\"b\":1,\"a\":}", "{\"a\" 1}", "[", "\"abc",
    ])
    func badTextGetsTheReadersError(text: String) {
        Self.expectSame(Array(text.utf8))
    }

    /// The plain canonical check (`CanonicalCheck`) reads strings and digits eight bytes at a time:
    /// every byte that ends a run, at every offset in and around a word, with the text ending
    /// there or not. What it takes is the text kept as it is, the tree's text; what it leaves
    /// gets the tree's text or error as before.
    @Test func plainTextsAreCheckedAtEveryOffsetOfAWord() {
        let stops: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xC3, 0xFF, 0x2F, 0x30, 0x39, 0x3A, 0x2E, 0x65,
                              0x45, 0x2C, 0x7D, 0x5D, 0x2D]
        var taken = 0
        for length in 0...26 {
            for at in 0...length {
                for stop in stops {
                    var run = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    var digits = [UInt8](repeating: UInt8(ascii: "7"), count: length)
                    if at < length {
                        run[at] = stop
                        digits[at] = stop
                    }
                    let texts: [[UInt8]] = [
                        [0x22] + run + [0x22],
                        Array(#"{"a":1,""#.utf8) + run + Array(#"":"x"}"#.utf8),
                        [0x5B, 0x22] + run + [0x22, 0x2C, 0x31, 0x5D],
                        digits, [0x2D] + digits, Array(#"{"n":"#.utf8) + digits + [0x7D], [0x5B] + digits + Array(",0]".utf8),
                    ]
                    for text in texts {
                        let plain = text.withUnsafeBufferPointer { CanonicalCheck.isPlainCanonical($0, maxDepth: JSONValue.maxDepth) }
                        if plain {
                            taken += 1
                            #expect(Self.treeOutcome(text) == .success(String(decoding: text, as: UTF8.self)),
                                    "\(String(decoding: text, as: UTF8.self).debugDescription)")
                        }
                        Self.expectSame(text)
                    }
                }
            }
        }
        // The check takes the plain texts (else this test tests nothing of it).
        #expect(taken > 10_000)
        for text in [#"{"id":10437,"likes":599,"title":"item 10437"}"#, "[true,false,null,0,-1,123456789012345678]", #"{"":{"a":[]}}"#] {
            #expect(Array(text.utf8).withUnsafeBufferPointer { CanonicalCheck.isPlainCanonical($0, maxDepth: JSONValue.maxDepth) })
        }
        for text in [#"{"b":1,"a":2}"#, #"{"a":1,"a":2}"#, "-0", "01", "1234567890123456789", "1.5", " 1", "1 ", "[[1]]", "tru", "nulls"] {
            #expect(!Array(text.utf8).withUnsafeBufferPointer { CanonicalCheck.isPlainCanonical($0, maxDepth: 1) })
            Self.expectSame(Array(text.utf8), maxDepth: 1)
        }
    }

    @Test func canonicalTextIsKeptAsItIs() throws {
        for text in [#"{"a":[1,-2,3.5,1e+22,"x\n\u0001\u007f\u0085é😀"],"b":{"c":null,"d":true}}"#, "-0.0", "\"\"", "[]", "{}"] {
            #expect(try StoredValue(parsingJSON: text).text == text)
            #expect(try JSONValue(parsing: text).compactText == text)
        }
        #expect(try StoredValue(parsingJSON: "-0").text == "0")
        #expect(try StoredValue(parsingJSON: "1E+22").text == "1e+22")
        #expect(try StoredValue(parsingJSON: #"{"b":1,"a":{"d":2,"c":3}}"#).text == #"{"a":{"c":3,"d":2},"b":1}"#)
        #expect(try StoredValue(parsingJSON: #"["\/\u0041\u00E9\u00e9"]"#).text == #"["/Aéé"]"#)
    }
}
