import CacheCore
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

    /// Text that is JSON but not canonical: keys out of order or repeated, escapes the writer
    /// does not use, numbers in other forms, blanks.
    @Test(arguments: [
        #"{"b":1,"a":2}"#, #"{"a":1,"a":2}"#, #"{"a":{"y":1,"x":[{"q":1,"p":2}]},"b":0}"#,
        #"{"\u0061":1,"b":2}"#, #"{"é":1,"e":2,"f":3}"#, #"{"e\u0301":1,"é":2}"#,
        #"["\/","\u0041","\ud83d\ude00","\u00e9","\u007f","\u0085","\t"]"#,
        "[-0, 0.0, -0.0, 1.0, 1e2, 1E-2, 12345678901234567890, -9223372036854775808, 9223372036854775807, 0.1]",
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
