import CacheCore
@testable import CacheReplay
import Foundation
import SystemPackage
import Testing

/// The HAR reader (issue 37, point 5): the committed exporters' fixtures, each quirk, every
/// class of bad input with its exact line, the bounds, and memory that does not grow with the
/// number of entries.
@Suite struct HARReaderTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/har")

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    /// Every item of the log at `path`: entries in time order and warnings.
    static func items(path: String, limits: HARLimits = .standard) throws(HARError) -> [HARLog.Item] {
        var log = HARLog(reader: try HARReader(path: path, limits: limits))
        var items: [HARLog.Item] = []
        while let item = try log.next() { items.append(item) }
        return items
    }

    static func items(_ text: String, limits: HARLimits = .standard) throws(HARError) -> [HARLog.Item] {
        let path = TraceReaderTests.temporaryFile(Array(text.utf8), suffix: ".har")
        defer { unlink(path) }
        return try items(path: path, limits: limits)
    }

    static func error(_ text: String, limits: HARLimits = .standard) -> String? {
        do {
            _ = try items(text, limits: limits)
            return nil
        } catch {
            return error.message
        }
    }

    static func entries(_ items: [HARLog.Item]) -> [HAREntry] {
        items.compactMap { if case .entry(let e) = $0 { e } else { nil } }
    }

    static func warnings(_ items: [HARLog.Item]) -> [String] {
        items.compactMap { if case .warning(let w) = $0 { w } else { nil } }
    }

    /// One entry's JSON with `replacing` put in place of its members of the same name.
    static func entry(_ replacing: String = "", start: String = "2026-03-01T09:15:02.000Z", url: String = "https://a.example/x") -> String {
        var members: [String: String] = [
            "startedDateTime": "\"\(start)\"",
            "time": "10",
            "request": "{\"method\": \"GET\", \"url\": \"\(url)\", \"headers\": []}",
            "response": "{\"status\": 200, \"headers\": [], \"content\": {\"size\": 1, \"text\": \"x\"}}",
            "timings": "{\"send\": 0, \"wait\": 10, \"receive\": 0}",
        ]
        if !replacing.isEmpty, case .object(let fields)? = try? JSONValue(parsing: "{" + replacing + "}") {
            for (name, value) in fields { members[name] = value == .null ? nil : value.compactText }
        }
        return "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
    }

    static func log(_ entries: [String]) -> String {
        "{\"log\": {\"version\": \"1.2\", \"entries\": [" + entries.joined(separator: ",\n") + "]}}"
    }

    // MARK: Exporters' quirks

    @Test func chromeFromCachePseudoHeadersAndSkippedEntries() throws {
        let items = try Self.items(path: Self.fixture("chrome.har"))
        let entries = Self.entries(items)
        #expect(entries.map(\.index) == [0, 1, 2, 3])
        let first = entries[0]
        #expect(first.start == TimeText.parseISO8601("2026-03-01T09:15:02.123Z"))
        #expect(first.method == "GET")
        #expect(first.origin == "https://app.example.com")
        #expect(first.target == "/feed?page=2")
        #expect(first.requestHeaders.lines.map(\.name) == ["accept", "cache-control"])
        #expect(first.status == 200)
        #expect(first.responseHeaders["Cache-Control"] == "max-age=60")
        #expect(first.body == .text("{\"items\":[1,2]}"))
        #expect(first.latency == 2.1 + 0.3 + 110.0 + 8.0)
        #expect(first.fromCache == nil)
        #expect(first.resourceType == "document")
        #expect(entries[1].fromCache == .disk)
        #expect(entries[1].body == .absent(size: 2048))
        #expect(entries[2].fromCache == .memory)
        #expect(entries[2].body == .absent(size: 0))
        #expect(entries[3].notModifiedOnWire)
        #expect(entries[3].responseHeaders.lines.map(\.name) == ["etag"])
        #expect(Self.warnings(items) == [
            "entries[4]: skipped: a data: URL (nothing went over the network)",
            "entries[5]: skipped: no response (status 0: the request failed or was cancelled)",
        ])
    }

    @Test func firefoxZoneOffsetsFragmentsAndAllAbsentTimings() throws {
        let entries = Self.entries(try Self.items(path: Self.fixture("firefox.har")))
        #expect(entries.map(\.start) == [TimeText.parseISO8601("2026-03-01T09:15:02.123Z"), TimeText.parseISO8601("2026-03-01T09:15:03.500Z")])
        #expect(entries[0].latency == 105)  // 0 + 12 + 30 + 0 + 61 + 2: ssl is within connect
        #expect(entries[0].requestHeaders["host"] == "app.example.com")
        #expect(entries[0].body == .text("{\"n\": \"é\"}"))
        #expect(entries[1].target == "/feed")
        #expect(entries[1].latency == 7)  // every timing -1: the entry's time
    }

    @Test func charlesKeyOrderPortsBase64BodiesAndConnect() throws {
        let items = try Self.items(path: Self.fixture("charles.har"))
        let entries = Self.entries(items)
        // The second entry started first (09:15:03.000123Z is after 10:15:02.785+01:00).
        #expect(entries.map(\.index) == [0, 1])
        #expect(entries[0].origin == "http://api.example.com")
        #expect(entries[0].target == "/img/logo.png")
        #expect(entries[0].body == .encoded(size: 11, digest: "sha256:1c8927715e5b55c70366bc753ad77e5cb5972184066cdc1be8f85176e341cfa2"))
        #expect(entries[0].latency == 93)  // 1 + 80 + 12, the others -1
        #expect(entries[1].origin == "http://api.example.com:8080")
        #expect(entries[1].target == "/login?next=%2Fhome")
        #expect(entries[1].method == "POST")
        #expect(entries[1].status == 201)
        #expect(entries[1].responseHeaders.list("set-cookie") == ["s=1", "t=2"])
        #expect(entries[1].body == .encoded(size: 0, digest: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(entries[1].latency == 0.5 + 1.25 + 2.5 + 0.25 + 9.5 + 0.25)
        #expect(entries[1].start == TimeText.parseISO8601("2026-03-01T09:15:03.000Z"))
        #expect(Self.warnings(items) == ["entries[2]: skipped: a CONNECT request (a proxy's tunnel, not an exchange a cache sees)"])
    }

    @Test func proxymanMicrosecondsFractionalTimingsAndSizesWithoutText() throws {
        let entries = Self.entries(try Self.items(path: Self.fixture("proxyman.har")))
        #expect(entries[0].start == TimeText.parseISO8601("2026-03-01T09:15:02.123Z"))
        #expect(entries[0].target == "/v1/users/7?fields=name,avatar")
        #expect(entries[0].body == .encoded(size: 20, digest: "sha256:e7aebf577f60412f0312d442c70a1fa6148c090bf5bab404caec29482ae779e8"))
        #expect(entries[0].body.size == 20)
        #expect(entries[0].latency == 0.512 + 3.25 + 0.113 + 35.5 + 3.0)
        #expect(entries[0].requestHeaders["authorization"] == "Bearer secret")
        // No timings: the entry's time; no content.text nor content.size: bodySize.
        #expect(entries[1].latency == 12)
        #expect(entries[1].body == .absent(size: 4096))
        #expect(entries[1].status == 206)
    }

    @Test func aMissingContentTextTakesTheSizeTheLogGives() throws {
        let entries = Self.entries(try Self.items(path: Self.fixture("missing-text.har")))
        #expect(entries[0].body == .absent(size: 524_288))
        #expect(entries[0].body.digest == nil)
        #expect(entries[0].latency == 50)
        #expect(entries[1].method == "HEAD")
        #expect(entries[1].body == .absent(size: nil))
        #expect(entries[1].latency == 10)
    }

    /// mitmproxy writes a body that is not UTF-8 (an image) as its bytes read as Latin-1, one
    /// character per byte, `content.size` the bytes: the body is those bytes, not the text's UTF-8.
    @Test func aBodyWrittenAsLatin1IsItsBytes() throws {
        let bytes = (0..<4).flatMap { _ in (0...255).map(UInt8.init) }
        let text = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        let json = JSONValue.string(text).compactText
        let png = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"size\": 1024, \"mimeType\": \"image/png\", \"text\": \(json)}}")
        // Text past ASCII whose size is its UTF-8 bytes is text, as the log says.
        let utf8 = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"size\": 6, \"text\": \"caf\u{E9} \"}}")
        let entries = Self.entries(try Self.items(Self.log([png, utf8])))
        #expect(entries[0].body == .encoded(size: 1024, digest: SHA256.hexDigest(of: bytes)))
        #expect(entries[1].body == .text("café "))
        #expect(entries[1].body.size == 6)
    }

    @Test func webSocketEntriesAreSkippedWithAWarning() throws {
        let items = try Self.items(path: Self.fixture("websocket.har"))
        #expect(items == [
            .warning("entries[0]: skipped: a WebSocket connection (_resourceType \"websocket\")"),
            .warning("entries[1]: skipped: a WebSocket connection (_webSocketMessages)"),
            items[2],
        ])
        #expect(Self.entries(items).map(\.target) == ["/config.json"])
    }

    @Test func entriesOutOfOrderAreSortedWithinTheWindow() throws {
        let entries = Self.entries(try Self.items(path: Self.fixture("out-of-order.har")))
        // Equal starts keep the log's order.
        #expect(entries.map(\.index) == [4, 1, 2, 3, 0, 5])
        #expect(entries.map(\.start) == entries.map(\.start).sorted())
    }

    @Test func anEntryEarlierThanOneReleasedBeyondTheWindowIsRefusedWithBothIndexes() {
        var limits = HARLimits.standard
        limits.window = 2
        #expect(throws: HARError("entries[4]: starts at 2026-03-01T09:15:01.900Z, before entries[2] (2026-03-01T09:15:02.200Z), which is more than 2 entries before it: entries are put in time order within 2 entries; sort the log by startedDateTime")) {
            try Self.items(path: Self.fixture("out-of-order.har"), limits: limits)
        }
        limits.window = 4
        #expect(Self.entries((try? Self.items(path: Self.fixture("out-of-order.har"), limits: limits)) ?? []).map(\.index) == [4, 1, 2, 3, 0, 5])
    }

    /// Every fixture reads the same through a buffer of 16 bytes as through the standard one:
    /// tokens, escapes and entries cut at every place by a refill.
    @Test(arguments: ["chrome.har", "firefox.har", "charles.har", "proxyman.har", "missing-text.har", "websocket.har", "out-of-order.har"])
    func aTinyBufferReadsTheSame(_ name: String) throws {
        var tiny = HARLimits.standard
        tiny.chunk = 16
        #expect(try Self.items(path: Self.fixture(name), limits: tiny) == Self.items(path: Self.fixture(name)))
    }

    @Test func readsFromAFileDescriptorItDoesNotClose() throws {
        let fd = try FileDescriptor.open(Self.fixture("firefox.har"), .readOnly)
        defer { try? fd.close() }
        let reader = HARReader(fileDescriptor: fd)
        var values: [JSONValue] = []
        while let value = try reader.next() { values.append(value) }
        #expect(values.count == 2)
        #expect(reader.count == 2)
        #expect(try fd.seek(offset: 0, from: .start) == 0)  // still open
    }

    /// A pipe has no size to look at and gives its bytes as they come: the same entries.
    @Test func readsFromAPipe() throws {
        let text = Array(Self.log([Self.entry(), Self.entry(start: "2026-03-01T09:15:01.000Z")]).utf8)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        #expect(text.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == text.count)  // within the pipe's buffer
        close(ends[1])
        defer { close(ends[0]) }
        var limits = HARLimits.standard
        limits.chunk = 32
        var log = HARLog(reader: HARReader(fileDescriptor: FileDescriptor(rawValue: ends[0]), limits: limits))
        var indexes: [Int] = []
        while let item = try log.next() { if case .entry(let e) = item { indexes.append(e.index) } }
        #expect(indexes == [1, 0])
    }

    // MARK: Bad input

    static let badInputs: [(String, String)] = [
        // The file's structure: the byte offset.
        ("", "at byte 0: an empty file, not a HAR log (expected '{')"),
        ("  \n", "at byte 3: an empty file, not a HAR log (expected '{')"),
        ("[1]", "at byte 0: not a HAR log: expected '{' (a JSON object with \"log\"), found '['"),
        ("PK\u{3}\u{4}", "at byte 0: not a HAR log: expected '{' (a JSON object with \"log\"), found 'P'"),
        ("{}", "at byte 1: not a HAR log: the top object has no \"log\""),
        ("{\"version\": 1}", "at byte 13: not a HAR log: the top object has no \"log\""),
        ("{\"log\": []}", "at byte 8: log: expected an object"),
        ("{\"log\": {\"version\": \"1.2\"}}", "at byte 8: log has no \"entries\" (a HAR log lists its requests in log.entries)"),
        ("{\"log\": {\"entries\": {}}}", "at byte 20: log.entries: expected an array"),
        ("{\"log\": {\"entries\": []}, \"log\": {}}", "at byte 25: duplicate key \"log\""),
        ("{\"log\": {\"entries\": [], \"entries\": []}}", "at byte 24: duplicate key \"entries\" in log"),
        ("{\"log\": {\"entries\": []}} x", "at byte 25: unexpected 'x' after the JSON value"),
        ("{\"log\": {\"entries\": []}}{}", "at byte 24: unexpected '{' after the JSON value"),
        ("{\"log\": {\"entries\": []", "at byte 22: unexpected end of the file in log, expected '}' (a file cut short?)"),
        ("{\"log\": {\"entries\": [", "at byte 21: unexpected end of the file in log.entries, expected ']' (a file cut short?)"),
        ("{\"log\": {\"entries\": [] \"x\": 1}}", "at byte 23: unexpected '\"' in log, expected ',' or '}'"),
        ("{\"log\": {\"pages\": [1,,2], \"entries\": []}}", "at byte 21: unexpected ',', expected a JSON value"),
        ("{\"log\": {\"pages\": [01], \"entries\": []}}", "at byte 19: invalid number: leading zero"),
        ("{\"log\": {\"comment\": \"a\\x\", \"entries\": []}}", "at byte 22: invalid escape in a string"),
        ("{\"log\": {\"comment\": \"a\nb\", \"entries\": []}}", "at byte 22: control character in a string"),
        ("{\"log\": {\"comment\": \"cut", "at byte 20: unterminated string (a file cut short?)"),
        ("{\"log\": {\"creator\": tru, \"entries\": []}}", "at byte 20: unexpected ',', expected a JSON value"),
        ("{\"log\": {\"entries\": [1]}}", "entries[0]: expected an object, found '1' (at byte 21)"),
        ("{\"log\": {\"entries\": [" + entry() + " " + entry() + "]}}", "at byte \(21 + entry().utf8.count + 1): unexpected '{' in log.entries, expected ',' or ']'"),
        ("{\"log\": {\"entries\": [{\"a\": 1", "entries[0].a: at byte 28: unexpected end of the file, expected '}' (a file cut short?)"),
        ("{\"log\": {\"entries\": [{\"a\": [1}]}}", "entries[0].a[0]: at byte 29: unexpected '}', expected ',' or ']'"),
        // An entry's fields: the JSON path.
        (log([entry("\"startedDateTime\": null")]), "entries[0].startedDateTime: missing"),
        (log([entry("\"startedDateTime\": 5")]), "entries[0].startedDateTime: expected a string, not a number"),
        (log([entry(start: "2026-03-01 09:15:02")]), "entries[0].startedDateTime: expected a time like \"2026-01-01T10:00:00.000Z\" (ISO 8601 with its zone), not \"2026-03-01 09:15:02\""),
        (log([entry(start: "2026-02-30T09:15:02.000Z")]), "entries[0].startedDateTime: expected a time like \"2026-01-01T10:00:00.000Z\" (ISO 8601 with its zone), not \"2026-02-30T09:15:02.000Z\""),
        (log([entry(start: "2026-03-01T09:15:02.000")]), "entries[0].startedDateTime: expected a time like \"2026-01-01T10:00:00.000Z\" (ISO 8601 with its zone), not \"2026-03-01T09:15:02.000\""),
        (log([entry("\"request\": null")]), "entries[0].request: missing"),
        (log([entry("\"request\": []")]), "entries[0].request: expected an object, not an array"),
        (log([entry("\"request\": {\"url\": \"https://a.example/\", \"headers\": []}")]), "entries[0].request.method: missing"),
        (log([entry("\"request\": {\"method\": \"GET\", \"headers\": []}")]), "entries[0].request.url: missing"),
        (log([entry("\"request\": {\"method\": \"GET\", \"url\": \"https://a.example/\"}")]), "entries[0].request.headers: missing"),
        (log([entry("\"request\": {\"method\": \"GET\", \"url\": \"https://a.example/\", \"headers\": [{\"name\": \"a\"}]}")]), "entries[0].request.headers[0].value: missing"),
        (log([entry("\"request\": {\"method\": \"GET\", \"url\": \"https://a.example/\", \"headers\": [{\"name\": \"a\", \"value\": 1}]}")]), "entries[0].request.headers[0].value: expected a string, not a number"),
        (log([entry("\"request\": {\"method\": \"GET\", \"url\": \"https://a.example/\", \"headers\": [{\"name\": \"\", \"value\": \"1\"}]}")]), "entries[0].request.headers[0].name: a header's name is empty"),
        (log([entry(), entry("\"response\": null")]), "entries[1].response: missing"),
        (log([entry("\"response\": {\"status\": \"200\", \"headers\": [], \"content\": {}}")]), "entries[0].response.status: expected a number, not a string"),
        (log([entry("\"response\": {\"status\": 200.5, \"headers\": [], \"content\": {}}")]), "entries[0].response.status: expected a whole number, not 200.5"),
        (log([entry("\"response\": {\"status\": 42, \"headers\": [], \"content\": {}}")]), "entries[0].response.status: expected a status code from 100 to 999, not 42"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": []}")]), "entries[0].response.content: missing"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"size\": -5}}")]), "entries[0].response.content.size: expected a size in bytes (0 or more, or -1 when it does not apply), not -5"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"size\": 1.5}}")]), "entries[0].response.content.size: expected a whole number of bytes, not 1.5"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {}, \"bodySize\": \"1\"}")]), "entries[0].response.bodySize: expected a number, not a string"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"QQ=\", \"encoding\": \"base64\"}}")]), "entries[0].response.content.text: not base64 (encoding is \"base64\"): a bad character at 3"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"Q!==\", \"encoding\": \"base64\"}}")]), "entries[0].response.content.text: not base64 (encoding is \"base64\"): a bad character at 1"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"QQ==QQ==\", \"encoding\": \"base64\"}}")]), "entries[0].response.content.text: not base64 (encoding is \"base64\"): a bad character at 4"),
        (log([entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"x\", \"encoding\": \"gzip\"}}")]), "entries[0].response.content.encoding: \"gzip\" is not an encoding cachesh reads (a body's text is plain, or base64)"),
        (log([entry("\"timings\": {\"wait\": -2}")]), "entries[0].timings.wait: expected a duration in ms (0 or more, or -1 when it does not apply), not -2"),
        (log([entry("\"timings\": {\"wait\": \"5\"}")]), "entries[0].timings.wait: expected a number, not a string"),
        (log([entry("\"timings\": 5")]), "entries[0].timings: expected an object, not a number"),
        (log([entry("\"time\": -3, \"timings\": null")]), "entries[0].time: expected a duration in ms (0 or more, or -1 when it does not apply), not -3"),
        (log([entry("\"_fromCache\": \"yes\"")]), "entries[0]._fromCache: expected \"memory\" or \"disk\", not \"yes\""),
        // A key given twice, at any depth: the path of the second.
        ("{\"log\": {\"entries\": [{\"time\": 1, \"time\": 2}]}}", "entries[0].time: duplicate key \"time\""),
        ("{\"log\": {\"entries\": [" + entry() + ", " + entry().replacingOccurrences(of: "\"status\": 200", with: "\"status\": 200, \"status\": 304") + "]}}",
         "entries[1].response.status: duplicate key \"status\""),
        // A number the strict parser refuses: the entry and the byte.
        ("{\"log\": {\"entries\": [{\"time\": 1e999}]}}", "entries[0].time: number out of range: 1e999 (at byte 30)"),
        // A syntax error deep in an entry: the path of the value being read.
        ("{\"log\": {\"entries\": [" + entry() + ", {\"request\": {\"headers\": [{\"name\": \"a\", \"value\": x}]}}]}}",
         "entries[1].request.headers[0].value: at byte \(21 + entry().utf8.count + 2 + 48): unexpected 'x', expected a JSON value"),
        ("{\"log\": {\"entries\": [{\"response\": {\"content\": {\"text\": \"a\\qb\"}}}]}}",
         "entries[0].response.content.text: at byte 57: invalid escape in a string"),
    ]

    @Test func everyBadInputGetsItsLine() {
        for (input, message) in Self.badInputs {
            #expect(Self.error(input) == message, "\(input)")
        }
    }

    /// Strings are scanned eight bytes at a time: a control character, quote or backslash is
    /// found at every place of a word, and UTF-8's high bytes pass.
    @Test func stringsAreCheckedAtEveryByte() {
        for place in 0..<17 {
            let before = String(repeating: "é", count: place / 2) + String(repeating: "a", count: place % 2)
            let prefix = "{\"log\": {\"comment\": \"" + before
            for control in [0x00, 0x01, 0x0A, 0x1F] {
                let text = prefix + String(Character(Unicode.Scalar(UInt8(control)))) + "zzzzzzzzzzzzzzzz\", \"entries\": []}}"
                #expect(Self.error(text) == "at byte \(prefix.utf8.count): control character in a string", "\(place) \(control)")
            }
            let quoted = prefix + "\\\"\\\\\u{7F}€zzzzzzzzzzzzzzzz\", \"entries\": []}}"
            #expect(Self.error(quoted) == nil, "\(place)")
            let cut = prefix + "\\"
            #expect(Self.error(cut) == "at byte 20: unterminated string (a file cut short?)", "\(place)")
        }
    }

    /// Entries that cannot be replayed are skipped, each with its reason, and the rest is read.
    @Test func entriesThatCannotBeReplayedAreSkippedWithTheirReason() throws {
        let urls = [
            ("ftp://a.example/x", "a ftp: URL; a replay takes http and https"),
            ("ws://a.example/socket", "a WebSocket connection (ws: URL)"),
            ("data:text/plain,hi", "a data: URL (nothing went over the network)"),
            ("https:///x", "the URL \"https:///x\" has no host a key can name"),
            ("https://a.example:99999/x", "the URL \"https://a.example:99999/x\" has a bad port"),
            ("https://a.example//x", "a URL no key can hold (\"https://a.example//x\"): an HTTP key starting with // names a host; give the path alone"),
            ("https://a.example/a*b", "a URL no key can hold (\"https://a.example/a*b\"): * is for patterns (keys, NS:*)"),
            ("/relative", "the URL \"/relative\" has no host, and no :authority or Host header gives one"),
        ]
        let log = Self.log(urls.map { Self.entry(url: $0.0) } + [Self.entry()])
        let items = try Self.items(log)
        #expect(Self.warnings(items) == urls.enumerated().map { "entries[\($0.offset)]: skipped: \($0.element.1)" })
        #expect(Self.entries(items).map(\.index) == [urls.count])
    }

    @Test func urlsSplitIntoOriginAndTarget() throws {
        let cases: [(String, String, String)] = [
            ("HTTPS://User:pw@A.Example:443/a/./b/../c?q=1#frag", "https://a.example", "/a/c?q=1"),
            ("http://a.example:8080", "http://a.example:8080", "/"),
            ("http://a.example?x=1", "http://a.example", "/?x=1"),
            ("https://[::1]:8443/p", "https://[::1]:8443", "/p"),
            ("https://a.example/%61b%2fc d", "https://a.example", "/ab%2Fc%20d"),
        ]
        for (url, origin, target) in cases {
            let items = try Self.items(Self.log([Self.entry(url: url)]))
            #expect(Self.entries(items).map { [$0.origin, $0.target] } == [[origin, target]], "\(url)")
        }
        // A path alone: HTTP/2's pseudo-headers, else Host, name the origin.
        let pseudo = Self.entry("\"request\": {\"method\": \"GET\", \"url\": \"/feed\", \"headers\": [{\"name\": \":authority\", \"value\": \"h2.example\"}, {\"name\": \":scheme\", \"value\": \"http\"}]}")
        let host = Self.entry("\"request\": {\"method\": \"GET\", \"url\": \"/feed\", \"headers\": [{\"name\": \"Host\", \"value\": \"h1.example\"}]}")
        let split = Self.entries(try Self.items(Self.log([pseudo, host])))
        #expect(split.map { $0.origin + $0.target } == ["http://h2.example/feed", "https://h1.example/feed"])
        #expect(split[0].requestHeaders.isEmpty)
    }

    @Test func startTimesInTheFormsExportersWrite() {
        let ms = TimeText.parseISO8601("2026-03-01T09:15:02.123Z")!
        let cases: [(String, Int64?)] = [
            ("2026-03-01T09:15:02.123Z", ms),
            ("2026-03-01T09:15:02.123456789Z", ms),
            ("2026-03-01T09:15:02.1Z", ms - 23),
            ("2026-03-01T09:15:02Z", ms - 123),
            ("2026-03-01T10:15:02.123+01:00", ms),
            ("2026-03-01T10:45:02.123+0130", ms),
            ("2026-02-28T23:15:02.123-10:00", ms),
            ("2026-03-01t09:15:02.123z", ms),
            ("2026-03-01T09:15:02.Z", nil),
            ("2026-03-01T09:15:02.123", nil),
            ("2026-03-01T09:15:02.123+1", nil),
            ("2026-03-01T09:15:02.123+25:00", nil),
            ("2026-03-01T24:15:02.123Z", nil),
            ("2026-03-01T09:15:02.123Zjunk", nil),
            ("1772356502123", nil),
        ]
        for (text, expected) in cases {
            #expect(HARTime.milliseconds(text) == expected, "\(text)")
        }
    }

    /// A replay reads without digests: the same sizes and the same errors, the digest "".
    @Test func base64WithoutDigestsChecksAndSizesAlike() throws {
        let plain = try Base64Digest.decode("aGVsbG8=", limit: 100, digest: false).get()
        #expect(plain.size == 5 && plain.digest == "")
        #expect(try Base64Digest.decode("aGVsbG8=", limit: 100).get().size == 5)
        for bad in ["QQ=", "Q!==", "QQ==QQ==", "QQ"] {
            #expect(Base64Digest.decode(bad, limit: 100, digest: false).failure == Base64Digest.decode(bad, limit: 100).failure, "\(bad)")
        }
        #expect(Base64Digest.decode("aGVsbG8=", limit: 4, digest: false).failure == .tooLarge)
    }

    @Test func sha256MatchesTheStandardsVectors() {
        #expect(SHA256.hexDigest(of: []) == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexDigest(of: Array("abc".utf8)) == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hexDigest(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Fed in pieces that straddle blocks: the same digest.
        var hash = SHA256()
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        for start in stride(from: 0, to: million.count, by: 999) { hash.update(Array(million[start..<min(start + 999, million.count)])) }
        #expect(hash.hexDigest() == "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    // MARK: Bounds

    @Test func theFileSizeIsBounded() {
        var limits = HARLimits.standard
        limits.fileBytes = 100
        let text = Self.log([Self.entry()])
        #expect(Self.error(text, limits: limits) == "larger than 100 bytes, the most cachesh reads from a HAR file")
        // Through a descriptor (a pipe has no size to look at first): refused once read past it.
        let path = TraceReaderTests.temporaryFile(Array(text.utf8), suffix: ".har")
        defer { unlink(path) }
        let fd = try! FileDescriptor.open(path, .readOnly)
        defer { try? fd.close() }
        limits.chunk = 16
        let reader = HARReader(fileDescriptor: fd, limits: limits)
        #expect(throws: HARError("larger than 100 bytes, the most cachesh reads from a HAR file")) { while try reader.next() != nil {} }
        #expect(HARLimits.standard.fileBytes == 1 << 30)
    }

    @Test func theEntryCountIsBounded() {
        var limits = HARLimits.standard
        limits.entries = 2
        #expect(Self.error(Self.log([Self.entry(), Self.entry(), Self.entry()]), limits: limits)
                == "entries[2]: more than 2 entries, the most a HAR log may have")
        #expect(Self.error(Self.log([Self.entry(), Self.entry()]), limits: limits) == nil)
        #expect(HARLimits.standard.entries == 1_000_000)
    }

    @Test func oneEntrysBytesAreBounded() {
        var limits = HARLimits.standard
        limits.chunk = 64
        limits.entryBytes = 1024
        let big = Self.entry("\"comment\": \"" + String(repeating: "x", count: 2000) + "\"")
        #expect(Self.error(Self.log([Self.entry(), big]), limits: limits) == "entries[1]: longer than 1 KiB, the most one HAR entry may be")
        // Just past the bound, within the chunk the buffer grows beyond it: refused too.
        for size in 1025...1030 {
            let exact = "{\"comment\": \"" + String(repeating: "x", count: size - 15) + "\"}"
            #expect(exact.utf8.count == size)
            #expect(Self.error(Self.log([exact]), limits: limits) == "entries[0]: longer than 1 KiB, the most one HAR entry may be")
        }
        // What lies outside the entries is skipped without being held, whatever its size.
        let pages = "{\"log\": {\"pages\": [\"" + String(repeating: "p", count: 100_000) + "\"], \"entries\": [" + Self.entry() + "]}}"
        #expect(Self.error(pages, limits: limits) == nil)
        #expect(HARLimits.standard.entryBytes == 32 << 20)
    }

    @Test func theBodySizeIsBounded() {
        var limits = HARLimits.standard
        limits.bodyBytes = 4
        let text = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"hello\"}}")
        #expect(Self.error(Self.log([text]), limits: limits) == "entries[0].response.content.text: a body of 5 bytes, larger than 4 bytes, the most a HAR body may be")
        let base64 = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"aGVsbG8=\", \"encoding\": \"base64\"}}")
        #expect(Self.error(Self.log([base64]), limits: limits) == "entries[0].response.content.text: a body larger than 4 bytes, the most a HAR body may be")
        let size = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"size\": 5}}")
        #expect(Self.error(Self.log([size]), limits: limits) == "entries[0].response.content.size: a body of 5 bytes, larger than 4 bytes, the most a HAR body may be")
        let bodySize = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {}, \"bodySize\": 5}")
        #expect(Self.error(Self.log([bodySize]), limits: limits) == "entries[0].response.bodySize: a body of 5 bytes, larger than 4 bytes, the most a HAR body may be")
        let fits = Self.entry("\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"text\": \"aGVsbA==\", \"encoding\": \"base64\"}}")
        #expect(Self.error(Self.log([fits]), limits: limits) == nil)
        #expect(HARLimits.standard.bodyBytes == 16 << 20)
    }

    /// A duration past 2^53 ms is refused at its field: a `timings` part or `time` of 1e300 (or
    /// 2^63 - 1) was summed and converted to the virtual clock's milliseconds, and trapped (found
    /// by fuzzing: exit status 132, no message).
    @Test func durationsAreBounded() {
        let wait = Self.entry("\"timings\": {\"send\": 0, \"wait\": 1e300, \"receive\": 0}")
        #expect(Self.error(Self.log([wait])) == "entries[0].timings.wait: expected a duration in ms of at most 9007199254740992 (2^53), not 1e+300")
        let time = Self.entry("\"timings\": null, \"time\": 9223372036854775807")
        #expect(Self.error(Self.log([time])) == "entries[0].time: expected a duration in ms of at most 9007199254740992 (2^53), not 9223372036854775807")
        let largest = Self.entry("\"timings\": {\"send\": 0, \"wait\": 9007199254740992, \"receive\": 9007199254740992}")
        #expect(Self.error(Self.log([largest])) == nil)
    }

    /// Nesting is bounded around the entries (a document's depth) and within one (a value's).
    @Test func nestingIsBounded() {
        let deepPages = "{\"log\": {\"pages\": " + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + ", \"entries\": []}}"
        #expect(Self.error(deepPages) == "at byte \(18 + 526): JSON nested deeper than \(JSONValue.documentDepth) levels")
        let deepEntry = "{\"log\": {\"entries\": [{\"a\": " + String(repeating: "[", count: 520) + String(repeating: "]", count: 520) + "}]}}"
        #expect(Self.error(deepEntry) == "entries[0]: JSON nested deeper than 512 levels (at byte \(21 + 6 + 511))")
        let fits = "{\"log\": {\"entries\": [{\"a\": " + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}]}}"
        #expect(Self.error(fits) == "entries[0].startedDateTime: missing")
    }

    /// The reader holds one entry and one chunk, however many entries the log has: counted in
    /// the bytes of its buffer, not in time.
    @Test func memoryDoesNotGrowWithTheNumberOfEntries() throws {
        var limits = HARLimits.standard
        limits.chunk = 4096
        func peak(entries n: Int) throws -> (peak: Int, count: Int, largest: Int) {
            let one = Self.entry("\"response\": {\"status\": 200, \"headers\": [{\"name\": \"cache-control\", \"value\": \"max-age=60\"}], \"content\": {\"size\": 300, \"text\": \"" + String(repeating: "b", count: 300) + "\"}}")
            var text = Array("{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"gen\", \"version\": \"1\"}, \"entries\": [\n".utf8)
            for i in 0..<n {
                if i > 0 { text += Array(",\n".utf8) }
                text += Array(one.replacingOccurrences(of: "/x", with: "/r\(i)").utf8)
            }
            text += Array("]}}\n".utf8)
            let path = TraceReaderTests.temporaryFile(text, suffix: ".har")
            defer { unlink(path) }
            let reader = try HARReader(path: path, limits: limits)
            var count = 0
            while try reader.next() != nil {
                count += 1
                #expect(reader.bufferBytes <= 2 * limits.chunk)
            }
            return (reader.peakBufferBytes, count, one.utf8.count + 8)
        }
        let small = try peak(entries: 1_000)
        let large = try peak(entries: 20_000)
        #expect(large.count == 20_000)
        // An entry of some 600 bytes and a chunk of 4 KiB: the buffer never grew past its chunk.
        #expect(large.peak == limits.chunk)
        #expect(large.peak == small.peak)
    }

    @Test func aLargeEntryGrowsTheBufferOnlyWhileItIsRead() throws {
        var limits = HARLimits.standard
        limits.chunk = 1024
        let big = Self.entry("\"comment\": \"" + String(repeating: "x", count: 20_000) + "\"")
        let path = TraceReaderTests.temporaryFile(Array(Self.log([big] + Array(repeating: Self.entry(), count: 50)).utf8), suffix: ".har")
        defer { unlink(path) }
        let reader = try HARReader(path: path, limits: limits)
        _ = try reader.next()
        #expect(reader.peakBufferBytes >= 20_000 && reader.peakBufferBytes <= 2 * 20_000 + limits.chunk)
        while try reader.next() != nil {}
        #expect(reader.bufferBytes <= 4 * limits.chunk)
        #expect(reader.count == 51)
    }
}

extension Result {
    /// The failure, if any (for comparing two results' errors).
    var failure: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
