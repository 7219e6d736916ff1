import Testing
import TestSupport
@testable import CacheCore

@Suite("JSON reader and printer")
struct JSONTests {
    @Test("integers stay integers, fractions and exponents become doubles")
    func numbers() throws {
        #expect(try JSONValue(parsing: "42") == .int(42))
        #expect(try JSONValue(parsing: "-0") == .int(0))
        #expect(try JSONValue(parsing: "42.0") == .double(42))
        #expect(try JSONValue(parsing: "1e3") == .double(1000))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .int(.min))
        #expect(try JSONValue(parsing: "9223372036854775807") == .int(.max))
        #expect(try JSONValue(parsing: "9.223372036854775808e18") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue(parsing: "0e-400") == .double(0))
        #expect(try JSONValue(parsing: "1e-300") == .double(1e-300))
        #expect(try JSONValue(parsing: "0.1") == .double(0.1))
    }

    @Test("numbers print so they read back as the same value")
    func numberPrinting() throws {
        for text in ["42", "-7", "42.0", "0.1", "-0.0", "1e+20", "1.5e-07", "123456.789"] {
            let value = try JSONValue(parsing: text)
            #expect(try JSONValue(parsing: value.compactText) == value, "\(text) → \(value.compactText)")
        }
        #expect(JSONValue.double(42).compactText == "42.0")
        #expect(JSONValue.int(42).compactText == "42")
        #expect(JSONValue.double(2.5).compactText == "2.5")
    }

    @Test("strings: escapes, surrogate pairs and non-ASCII text round-trip")
    func strings() throws {
        #expect(try JSONValue(parsing: #""a\"b\\c\/d\n\t""#) == .string("a\"b\\c/d\n\t"))
        #expect(try JSONValue(parsing: #""\u00e9\ud83d\ude00""#) == .string("é😀"))
        #expect(try JSONValue(parsing: "\"café\"") == .string("café"))
        let tricky = JSONValue.string("line\nquote\" back\\ bell\u{7} é")
        #expect(tricky.compactText == #""line\nquote\" back\\ bell\u0007 é""#)
        #expect(try JSONValue(parsing: tricky.compactText) == tricky)
    }

    @Test("objects print with sorted keys, compact and pretty")
    func printing() throws {
        let value = try JSONValue(parsing: #"{"b": [1, {"d": null, "c": true}], "a": {}, "e": []}"#)
        #expect(value.compactText == #"{"a":{},"b":[1,{"c":true,"d":null}],"e":[]}"#)
        #expect(value.prettyText() == """
            {
              "a": {},
              "b": [
                1,
                {
                  "c": true,
                  "d": null
                }
              ],
              "e": []
            }
            """)
        #expect(try JSONValue(parsing: value.prettyText()) == value)
    }

    /// One rule for numbers that would not survive being read: refused, never changed.
    @Test("a number that would not read back as written is refused", arguments: [
        ("1e400", "number out of range: 1e400"),
        ("-1e400", "number out of range: -1e400"),
        ("1e-400", "number out of range: 1e-400 (too small for a 64-bit float, it would read as 0)"),
        ("[-2.5e-999]", "number out of range: -2.5e-999 (too small for a 64-bit float, it would read as 0)"),
        ("9223372036854775808", "number out of range: 9223372036854775808 (a whole number must fit in 64 bits)"),
        ("{\"n\": -9223372036854775809}", "number out of range: -9223372036854775809 (a whole number must fit in 64 bits)"),
        ("123456789012345678901234567890", "number out of range: 123456789012345678901234567890 (a whole number must fit in 64 bits)"),
    ])
    func numbersThatDoNotSurvive(text: String, message: String) {
        #expect(throws: JSONError.self) { try JSONValue(parsing: text) }
        do { _ = try JSONValue(parsing: text) } catch { #expect(error.message == message) }
    }

    /// Which of two values of one key counts is not for the reader to guess: refused, with the
    /// path of the second and its offset, at any depth, also for keys equal as Unicode text.
    @Test("a key given twice is refused with its path", arguments: [
        (#"{"a":1,"a":2}"#, #"duplicate key "a" at a"#, 7),
        (#"{"x": [0, {"b": 1, "c": 2, "b": 3}]}"#, #"duplicate key "b" at x[1].b"#, 27),
        (#"{"e\u0301":1,"é":2}"#, #"duplicate key "é" at é"#, 13),
    ])
    func duplicateKeys(text: String, message: String, offset: Int) {
        do {
            _ = try JSONValue(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.message == message)
            #expect(error.offset == offset)
        }
    }

    @Test("bad JSON is refused with a message and the offset of the first wrong byte",
          arguments: [
            ("{\"a\":1,}", "unexpected character '}', expected a string key", 7),
            ("[1,2", "unexpected end of JSON, expected ']'", 4),
            ("[1 2]", "unexpected character '2', expected ',' or ']'", 3),
            ("{\"a\" 1}", "unexpected character '1', expected ':' after an object key", 5),
            ("01", "invalid number: leading zero", 0),
            ("+1", "unexpected character '+', expected a JSON value", 0),
            ("1.", "invalid number: expected a digit after '.'", 0),
            ("-", "invalid number: expected a digit after '-'", 0),
            ("1e", "invalid number: expected a digit in the exponent", 0),
            ("1e999", "number out of range: 1e999", 0),
            ("\"abc", "unterminated string", 0),
            ("\"a\\qb\"", "invalid escape \\q in a string", 2),
            ("\"\\u12\"", "invalid \\u escape (needs 4 hex digits)", 1),
            ("\"\\ud800\"", "unpaired surrogate in \\u escape", 1),
            ("\"a\nb\"", "control character \\u000a in a string", 2),
            ("tru", "unexpected character 't', expected a JSON value", 0),
            ("NaN", "unexpected character 'N', expected a JSON value", 0),
            ("{} x", "unexpected character 'x' after the JSON value", 3),
            ("", "unexpected end of JSON, expected a value", 0),
            ("[1,]", "unexpected character ']', expected a JSON value", 3),
            ("é", "unexpected character 'é', expected a JSON value", 0),
          ])
    func refusals(text: String, message: String, offset: Int) {
        #expect(throws: JSONError(message: message, offset: offset)) { try JSONValue(parsing: text) }
    }

    @Test("nesting is bounded at 512 levels, so 100,000 brackets are an error, not a crash")
    func depthLimit() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONValue(parsing: ok) }
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONError(message: "JSON nested deeper than 512 levels", offset: 512)) { try JSONValue(parsing: tooDeep) }
        let runaway = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: JSONError.self) { try JSONValue(parsing: runaway) }
    }

    @Test("seeded random values round-trip through both printers")
    func randomRoundTrip() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let value = randomValue(&rng, depth: 0)
            #expect(try JSONValue(parsing: value.compactText) == value)
            #expect(try JSONValue(parsing: value.prettyText()) == value)
        }
    }

    private func randomValue(_ rng: inout SeededGenerator, depth: Int) -> JSONValue {
        switch rng.next() % (depth > 3 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3: return .double(Double(Int64(bitPattern: rng.next()) % 1_000_000) / 7)
        case 4:
            let alphabet: [Character] = ["a", "\"", "\\", "\n", "é", "😀", "\u{1}", " ", "/"]
            return .string(String((0..<rng.next() % 8).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
        case 5: return .array((0..<rng.next() % 4).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var object: [String: JSONValue] = [:]
            for k in 0..<rng.next() % 4 { object["k\(k)\(rng.next() % 3)"] = randomValue(&rng, depth: depth + 1) }
            return .object(object)
        }
    }
}

