@_spi(Engine) import CacheCore
import CacheServer
import Testing

/// `Snapshot(parsing:)` reads the entries straight from the text; everything it accepts, and every
/// error it gives, is what decoding the parsed document gives (`Snapshot(_:)` of the tree).
@Suite struct SnapshotParseTests {
    /// The error (or nil) of decoding `text` through the tree.
    static func treeOutcome(_ text: String) -> String? {
        let json: JSONValue
        do { json = try JSONValue(parsing: text, maxDepth: JSONValue.documentDepth) } catch { return "not JSON" }
        // Decoding checks the engine's part; the origin checks its settings before a restore.
        do { try Snapshot(json).checkOrigin(SimulatedServer()); return nil } catch { return "\(error)" }
    }

    /// The error (or nil) of `Snapshot(parsing:)`, and the compact text of the state it restores.
    static func textOutcome(_ text: String) -> (error: String?, restored: String?) {
        do {
            let snapshot = try Snapshot(parsing: text)
            let engine = CacheEngine(origin: SimulatedServer())
            try engine.restore(snapshot) { _ in 0 }
            return (nil, engine.snapshotText(pretty: false))
        } catch {
            return ("\(error)", nil)
        }
    }

    /// Both forms of `h`'s snapshot read back to the same state, through the text and the tree.
    static func expectRoundTrip(_ h: Harness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let compact = h.engine.snapshotText(pretty: false)
        for text in [h.engine.snapshotText(pretty: true), compact] {
            let outcome = Self.textOutcome(text)
            #expect(outcome.error == nil, sourceLocation: sourceLocation)
            let tree = CacheEngine(origin: SimulatedServer())
            try tree.restore(JSONValue(parsing: text, maxDepth: JSONValue.documentDepth)) { _ in 0 }
            #expect(outcome.restored == tree.snapshotText(pretty: false), sourceLocation: sourceLocation)
            // Scheduled commands keep their fields but get new tokens: compare the rest.
            #expect(outcome.restored?.count == compact.count, sourceLocation: sourceLocation)
        }
    }

    @Test func busyAndEvictingCachesReadBackTheSame() throws {
        try Self.expectRoundTrip(SnapshotTests.busyHarness())
        for seed in UInt64(1)...4 { try Self.expectRoundTrip(EvictionPolicyTests.busy(seed: seed, ops: 80)) }
    }

    /// Escapes, non-ASCII text, surrogate pairs, big and negative numbers, doubles, empty and
    /// nested containers in values and tags.
    @Test func valuesOfEveryKindReadBackTheSame() throws {
        let h = Harness(["n": Policy(ttl: 60_000, stale: 1_000)])
        let values: [JSONValue] = [
            "plain", "quote \" backslash \\ / \n\t\r\u{8}\u{C}\u{0}\u{1F}\u{7F}", "C1 \u{80}\u{9F} é 日本 🎉 \u{10FFFF}",
            .int(.max), .int(.min), .int(-1), .double(1e300), .double(-0.0), .double(0.1), .double(12345678901234567890.0),
            [], [:], [[[[]]]], ["b": ["c": [1, 2, ["d": .null]]], "a": true, "": "empty key", "é": 1],
        ]
        for (i, value) in values.enumerated() { h.engine.put("n:\(i)", value, tags: i % 3 == 0 ? ["t\"1", "日本"] : []) }
        h.advance(2_000)
        try Self.expectRoundTrip(h)
    }

    /// Hand-written forms the printer never writes read as the tree reads them: escaped field
    /// names and times, whitespace everywhere. (A field given twice, or a time in the years
    /// 0000–9999 written as ms, is refused: `handWrittenFormsThatHideSomethingAreRefused`.)
    @Test func handWrittenFormsReadAsTheTreeReadsThem() throws {
        let h = Harness(["n": Policy(ttl: 60_000)])
        h.engine.put("n:1", ["id": 1])
        h.engine.put("n:2", "two", tags: ["x"])
        let text = h.engine.snapshotText(pretty: false)
        let variants = [
            text.replacingOccurrences(of: #""key":"n:1""#, with: #""k\u0065y":"n:1""#),
            text.replacingOccurrences(of: #""stored_at":"2026-01-01T00:00:00.000Z""#, with: #""stored_at":"2026-01-01T00:00:00.00\u0030Z""#),
            text.replacingOccurrences(of: ",", with: " ,\n\t").replacingOccurrences(of: "\":", with: "\"\r\n: "),
            "\n  " + text + "  \n",
        ]
        for variant in variants {
            #expect(variant != text)
            let outcome = Self.textOutcome(variant)
            #expect(outcome.error == nil, "\(variant)")
            #expect(outcome.restored == text, "\(variant)")
        }
    }

    /// A field given twice (which one counts?), a time the writer writes as text given as ms, a
    /// state its times contradict: refused with the path, by the text reader as by the tree.
    @Test func handWrittenFormsThatHideSomethingAreRefused() throws {
        let h = Harness(["n": Policy(ttl: 60_000)])
        h.engine.put("n:1", ["id": 1])
        let text = h.engine.snapshotText(pretty: false)
        let variants: [(String, String)] = [
            (text.replacingOccurrences(of: #""stored_at":"2026-01-01T00:00:00.000Z""#, with: #""stored_at":1767225600000"#),
             "entries[0].stored_at: expected a time like"),
            (text.replacingOccurrences(of: #""seq":3,"#, with: #""seq":"x","seq":3,"#), "duplicate key \"seq\" at entries[0].seq"),
            (text.replacingOccurrences(of: #""entries":["#, with: #""entries":5,"entries":["#), "duplicate key \"entries\" at entries"),
            (text.replacingOccurrences(of: #""state":"fresh""#, with: #""state":"expired""#),
             "entries[0].state: is expired, but the entry's times make it fresh at now"),
        ]
        for (variant, message) in variants {
            #expect(variant != text)
            let outcome = Self.textOutcome(variant)
            #expect(outcome.error?.contains(message) == true, "\(String(describing: outcome.error))")
            #expect(outcome.restored == nil)
        }
    }

    /// An entry's value in forms the printer never writes (keys out of order, keys that are not
    /// plain ASCII, escapes and numbers written otherwise, blanks) reads as the tree reads it: the value is put in canonical form straight from the text.
    @Test func valuesInOtherFormsReadAsTheTreeReadsThem() throws {
        let h = Harness(["n": Policy(ttl: 60_000)])
        h.engine.put("n:1", ["a": 1, "b": [true, "x"]])
        let text = h.engine.snapshotText(pretty: false)
        let canonical = #""value":{"a":1,"b":[true,"x"]}"#
        #expect(text.contains(canonical))
        let forms = [
            #"{"b":[true,"x"],"a":1}"#, #"{ "a" : 1 , "b" : [ true , "\u0078" ] }"#, #"{"a":1.0E0}"#, #"{"a":-0,"b":[true,"\/"]}"#,
            #"{"é":1,"a":[1e2,-0.0,12345678901234567890.0]}"#, #"{"é":"\u00e9"}"#,
            #"{"é":1,"b":2,"a":1}"#, #"["\ud83d\ude00","\u007F","\u0085","x\u0001"]"#,
        ]
        for (i, form) in forms.enumerated() {
            let variant = text.replacingOccurrences(of: canonical, with: #""value":"# + form)
            let outcome = Self.textOutcome(variant)
            let tree = CacheEngine(origin: SimulatedServer())
            try tree.restore(JSONValue(parsing: variant, maxDepth: JSONValue.documentDepth)) { _ in 0 }
            #expect(outcome.error == nil, "\(form)")
            #expect(outcome.restored == tree.snapshotText(pretty: false), "\(form)")
            // The first two are the same value as written.
            #expect((outcome.restored == text) == (i < 2), "\(form)")
        }
    }

    /// Fields in another order than the printer's: `entries` followed by another array before
    /// `format` reads the same, and its errors are the tree's.
    @Test func anotherFieldOrderReadsAsTheTreeReadsIt() {
        let h = Harness(["n": Policy(ttl: 60_000)])
        h.engine.put("n:1", ["id": 1], tags: ["t"])
        let text = h.engine.snapshotText(pretty: false)
        #expect(text.hasSuffix(#","watches":[]}"#))
        let moved = String(text.dropLast(#","watches":[]}"#.count) + "}")
            .replacingOccurrences(of: #"],"format":"#, with: #"],"watches":[],"format":"#)
        #expect(moved != text)
        #expect(Self.textOutcome(moved).restored == text)
        for (from, to) in [(#""hits":0"#, #""hits":-1"#), (#""seq":3,"#, #""seq":"x","#), (#""ttl_ms":60000"#, #""ttl_ms":-1"#)] {
            let bad = moved.replacingOccurrences(of: from, with: to)
            #expect(bad != moved, "\(from)")
            #expect(Self.textOutcome(bad).error == Self.treeOutcome(bad), "\(to)")
            #expect(Self.textOutcome(bad).error != nil, "\(to)")
        }
        let missing = moved.replacingOccurrences(of: #""watches":[],"#, with: "")
        #expect(Self.textOutcome(missing).error == "watches: missing")
    }

    /// Every refusal of `SnapshotTests`, and more about entries, says the same through the text.
    @Test func refusalsSayTheSameAsTheTree() {
        let document = SnapshotTests.busyHarness().engine.makeSnapshot()
        var texts: [String] = []
        for refusal in SnapshotTests.refusals {
            let bad = SnapshotTests.replacing(document, refusal.path, with: refusal.value)
            texts += [bad.prettyText(), bad.compactText]
        }
        let entryRefusals: [([String], JSONValue?)] = [
            (["entries", "0", "key"], 7), (["entries", "0", "key"], "nope:a"), (["entries", "0", "key"], "default:a"),
            (["entries", "0", "key"], "a b"), (["entries", "0", "key"], nil), (["entries", "0", "state"], "absent"),
            (["entries", "0", "value"], nil), (["entries", "0", "tags"], ["mine", 3]), (["entries", "0", "tags"], nil),
            (["entries", "0", "stored_at"], true), (["entries", "0", "stored_at"], "2026-02-30T00:00:00.000Z"),
            (["entries", "0", "stale_at"], "2026-01-01T24:00:00.000Z"), (["entries", "0", "expires_at"], nil),
            (["entries", "0", "seq"], -1), (["entries", "0", "seq"], 1.5), (["entries", "0", "expiry_counted"], 1),
            (["entries", "0", "rank"], 3), (["entries", "0", "visited"], true), (["entries", "0", "mutations"], 1),
            (["entries", "0", "zzz"], 1), (["entries", "0", "aaa"], 1), (["entries", "0"], 1), (["entries", "0"], [:]),
            (["entries"], 1), (["entries"], [:]), (["entries"], nil), (["entries", "1", "key"], "feed:a"),
            (["namespaces", "feed"], nil), (["stored_at"], 1),
        ]
        for (path, value) in entryRefusals {
            let bad = SnapshotTests.replacing(document, path, with: value)
            texts += [bad.prettyText(), bad.compactText]
        }
        let text = document.compactText
        for (from, to) in [
            (#""entries":["#, #""entries":[1,"#),                       // not an object
            (#""entries":["#, #""entries":{"#),                         // not JSON
            (#""key":"feed:a""#, #""key":"feed:a","k\u0065y":"x:1""#), // a field given twice
            (#""state":"#, #""expiry_counted":1,"state":"#),
            (#""seq":"#, #""seq":-1,"seq":"#),
            (#""entries":["#, #""entries":[],"entries":5,"entries":["#),
            (#""entries":["#, #""entries":[],"entries":[1],"entries":5,"entries":["#),
        ] {
            let bad = text.replacingOccurrences(of: from, with: to)
            #expect(bad != text, "\(from)")
            texts.append(bad)
        }
        for bad in texts {
            let expected = Self.treeOutcome(bad)
            let outcome = Self.textOutcome(bad)
            if expected == "not JSON" {
                #expect(outcome.error?.hasPrefix("damaged snapshot (not valid JSON") == true, "\(outcome.error ?? "nil")")
            } else {
                #expect(outcome.error == expected, "\(bad)")
            }
        }
    }

    /// A damaged file gives the tree reader's message and line, whatever part is damaged.
    @Test func damagedTextNamesTheLineAndTheProblem() {
        let text = SnapshotTests.busyHarness().engine.snapshotText(pretty: true)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let keyLine = lines.firstIndex { $0.contains(#""key": "feed:a""#) }! + 1
        let cases: [(String, String)] = [
            (text.replacingOccurrences(of: #""key": "feed:a","#, with: #""key": "feed:a""#),
             "damaged snapshot (not valid JSON at line \(keyLine + 1): unexpected character '\"', expected ',' or '}')"),
            (text.replacingOccurrences(of: #""key": "feed:a""#, with: #""key": "feed:\a""#),
             "damaged snapshot (not valid JSON at line \(keyLine): invalid escape \\a in a string)"),
            (text.replacingOccurrences(of: #""key": "feed:a""#, with: #""key": "feed:\ud800""#),
             "damaged snapshot (not valid JSON at line \(keyLine): unpaired surrogate in \\u escape)"),
            (text.replacingOccurrences(of: #""seq": "#, with: #""seq": 01"#),
             "damaged snapshot (not valid JSON at line"),
            (text.replacingOccurrences(of: #""seq": "#, with: #""seq": 1e999, "s": "#),
             "damaged snapshot (not valid JSON at line"),
            (String(text.dropLast(2)), "damaged snapshot (not valid JSON at line \(lines.count - 1): unexpected end of JSON, expected '}')"),
            (text + "x", "damaged snapshot (not valid JSON at line \(lines.count): unexpected character 'x' after the JSON value)"),
        ]
        for (bad, message) in cases {
            #expect(bad != text)
            #expect(Self.textOutcome(bad).error?.hasPrefix(message) == true, "\(message)")
        }
    }

    /// A value may be nested `JSONValue.maxDepth` levels: one level more is refused by its path;
    /// the document as a whole may go `JSONValue.documentDepth` levels.
    @Test func valueDepthIsBoundedAsTheTreeBoundsIt() {
        func nested(_ levels: Int) -> JSONValue {
            var value: JSONValue = []
            for _ in 1..<levels { value = [value] }
            return value
        }
        let h = Harness(["n": Policy(ttl: 60_000)])
        h.engine.put("n:1", nested(JSONValue.maxDepth))
        let text = h.engine.snapshotText(pretty: false)
        #expect(Self.textOutcome(text).error == nil)
        #expect(Self.textOutcome(text).restored == text)
        let deeper = text.replacingOccurrences(of: #""value":["#, with: #""value":[["#)
            .replacingOccurrences(of: "]}]", with: "]]}]")
        #expect(Self.textOutcome(deeper).error == "entries[0].value: nested deeper than \(JSONValue.maxDepth) levels")
        #expect(Self.treeOutcome(deeper) == Self.textOutcome(deeper).error)
        let runaway = text.replacingOccurrences(of: #""value":["#, with: #""value":["# + String(repeating: "[", count: 20))
            .replacingOccurrences(of: "]}]", with: String(repeating: "]", count: 20) + "]}]")
        #expect(Self.textOutcome(runaway).error?.hasPrefix("damaged snapshot (not valid JSON at line 1: JSON nested deeper than \(JSONValue.documentDepth) levels") == true)
    }
}
