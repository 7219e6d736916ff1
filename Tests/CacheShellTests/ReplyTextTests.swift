@testable import CacheCore
@testable import CacheShell
import Testing
import TestSupport

/// Reads and key lists print straight to text; they must print exactly what the generic layout
/// (aligned `name: value` lines, or the sorted JSON object) prints for their fields.
struct ReplyTextTests {
    static let reads: [ReadResult] = [
        ReadResult(key: "feed:1", state: .fresh, value: ["id": 1, "title": "a \"b\"\n"], ageMs: 0, expiresInMs: 60_000,
                   tags: [], source: .cache),
        ReadResult(key: "page:ünï", state: .expired, value: "text", ageMs: 1_250, expiresInMs: -5, tags: ["a", "q\"uo\\te"],
                   source: .server, offline: true, error: "origin said \"no\"\twith a tab", pending: true),
        ReadResult(key: "x", state: .absent, value: nil, ageMs: nil, expiresInMs: nil, tags: ["t"], source: .cache),
    ]

    /// What the generic layout prints for `fields`.
    static func generic(_ fields: [String: JSONValue], order: [String], command: String, mode: OutputMode, colour: Bool) -> String {
        if mode == .json {
            var fields = fields
            fields["command"] = .string(command)
            return JSONValue.object(fields).compactText + "\n"
        }
        return Render.fieldLines(fields.filter { $0.key != "ok" && $0.key != "subcommand" }, order: order, colour: colour)
            .map { $0 + "\n" }.joined()
    }

    /// The forms a reply takes: as made, as a subcommand's (`subcommand`), as a reply its command
    /// printed before failing (`ok: false`).
    static func variants(_ reply: Reply) -> [Reply] {
        var sub = reply
        sub.subcommand = "show"
        var failed = reply
        failed.ok = false
        return [reply, sub, failed]
    }

    @Test(arguments: [OutputMode.human, .json], [false, true])
    func aReadPrintsWhatItsFieldsPrint(mode: OutputMode, colour: Bool) {
        for result in Self.reads {
            for isGet in [true, false] {
                let command = isGet ? "get" : "peek"
                for reply in Self.variants(Reply.read(result, isGet: isGet)) {
                    var fields = EntryCommands.fields(result, isGet: isGet)
                    fields["ok"] = .bool(reply.ok)
                    fields["subcommand"] = reply.subcommand.map(JSONValue.string)
                    #expect(reply.fields == fields)
                    let expected = Self.generic(fields, order: EntryCommands.readOrder, command: command, mode: mode, colour: colour)
                    #expect(reply.text(command: command, mode: mode, colour: colour) == expected)
                }
            }
        }
    }

    @Test(arguments: [OutputMode.human, .json])
    func aKeyListPrintsWhatItsFieldsPrint(mode: OutputMode) {
        for keys in [[], ["feed:1"], ["a", "b\"c", "ü"]] {
            for reply in Self.variants(Reply.keys(keys)) {
                let expected = mode == .json
                    ? Self.generic(reply.fields, order: [], command: "put", mode: .json, colour: false)
                    : (reply.human() ?? []).map { $0 + "\n" }.joined()
                #expect(reply.text(command: "put", mode: mode, colour: false) == expected)
                #expect(expected.hasPrefix(mode == .json ? "{\"command\":\"put\",\"keys\":[" : "keys: "))
                if mode == .json { #expect(expected.contains(reply.ok ? "\"ok\":true" : "\"ok\":false")) }
            }
        }
    }

    /// Whole numbers are written as `String` writes them, at every count of digits.
    @Test func numbersAreWrittenInDecimal() {
        var numbers: [Int64] = Array(-1_000...1_000) + [.max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            numbers += [power - 1, power, power + 1, -power, power * 9 / 7]
        }
        var out = ByteWriter(capacity: 4)
        defer { out.deallocate() }
        for number in numbers {
            out.removeAll()
            out.appendInteger(number)
            #expect(out.text() == String(number))
        }
        out.removeAll()
        out.appendInteger(UInt64.max)
        #expect(out.text() == String(UInt64.max))
    }

    /// A read's state and source are written as their raw values.
    @Test func readNamesAreTheRawValues() {
        for state in [EntryState.fresh, .stale, .expired, .absent] {
            #expect(ReadNames.state(state).description == state.rawValue)
            #expect(ReadNames.stateLine(state).description == "\nstate:         \(state.rawValue)\nvalue:         ")
        }
        for source in [ValueSource.cache, .server] {
            #expect(ReadNames.source(source).description == source.rawValue)
            #expect(ReadNames.sourceLine(source).description == "\nsource:        \(source.rawValue)\nage_ms:        ")
            for state in [EntryState.fresh, .stale, .expired, .absent] {
                #expect(ReadNames.getFields(source: source, state: state).description
                        == #","ok":true,"source":"\#(source.rawValue)","state":"\#(state.rawValue)""#)
            }
        }
    }

    /// A string of a reply is written as `JSONValue.compactText` writes it, and said to hold a
    /// control character exactly when that text does, whatever its length (a word at a time
    /// from eight bytes, the last word overlapping) and whatever it holds: quotes, backslashes,
    /// controls, C1 controls, bidirectional marks, other non-ASCII text.
    @Test func stringsAreWrittenAsCompactJSON() {
        let pieces = ["a", "Z", "0", ":", " ", "~", "\"", "\\", "\n", "\t", "\u{01}", "\u{1F}", "\u{7F}", "\u{85}", "é", "\u{202E}",
                      "\u{061C}", "😀", "/", "{"]
        var generator = SeededGenerator(seed: 42)
        var out = ByteWriter(capacity: 8)
        defer { out.deallocate() }
        for _ in 0..<20_000 {
            var text = ""
            let length = Int(generator.next() % 24)
            // Mostly plain text, as keys are, with one other piece at a random place or none.
            for _ in 0..<length { text += generator.next() % 8 == 0 ? pieces[Int(generator.next() % UInt64(pieces.count))] : "k" }
            let expected = JSONValue.string(text).compactText
            out.removeAll()
            let control = out.appendJSONString(text)
            #expect(out.text() == expected, "\(text.debugDescription)")
            let hasControl = Array(expected.utf8).withUnsafeBufferPointer { Render.hasControl($0) }
            #expect(control == hasControl, "\(text.debugDescription)")
        }
    }

    /// Every reply's JSON says `ok`, and a subcommand's names it; human output shows neither.
    @Test func everyReplySaysOkInJSONAndNeitherInHumanOutput() {
        for reply in Self.variants(Reply(["key": "a:1"], order: ["key"])) {
            let json = reply.text(command: "server", mode: .json, colour: false)
            #expect(json.contains(reply.ok ? "\"ok\":true" : "\"ok\":false"), "\(json)")
            #expect(json.contains("\"subcommand\":\"show\"") == (reply.subcommand != nil), "\(json)")
            #expect(reply.text(command: "server", mode: .human, colour: false) == "key: a:1\n")
        }
    }
}
