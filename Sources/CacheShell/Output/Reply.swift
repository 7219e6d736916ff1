import CacheCore

/// What a command answers: its JSON fields (SPEC §4) and, where the generic `name: value`
/// layout does not suit it, its own human lines.
///
/// The most frequent replies (a read, a list of changed keys) keep their parts and are written
/// straight to text in either mode, byte for byte as the generic layout would write their fields.
struct Reply {
    private enum Content {
        case fields([String: JSONValue], human: [String]?)
        /// `get` (`isGet`) or `peek`: the fields of `EntryCommands.fields`.
        case read(ReadResult, isGet: Bool)
        /// `keys` and, with `ok`, `ok: true`.
        case keys([String], ok: Bool)
    }

    private var content: Content
    /// Field order for the generic human layout; fields not named follow, sorted.
    let order: [String]

    init(_ fields: [String: JSONValue], order: [String] = [], human: [String]? = nil) {
        content = .fields(fields, human: human)
        self.order = order
    }

    private init(_ content: Content, order: [String] = []) {
        self.content = content
        self.order = order
    }

    /// The JSON fields (SPEC §4), without `command`.
    var fields: [String: JSONValue] {
        switch content {
        case .fields(let fields, _): return fields
        case .read(let result, let isGet): return EntryCommands.fields(result, isGet: isGet)
        case .keys(let keys, let ok):
            var fields: [String: JSONValue] = ["keys": .array(keys.map(JSONValue.string))]
            if ok { fields["ok"] = .bool(true) }
            return fields
        }
    }

    /// Human lines; nil renders `fields` as aligned `name: value` lines in `order`.
    var human: [String]? {
        switch content {
        case .fields(_, let human): return human
        case .read: return nil
        case .keys(let keys, _): return [Self.keysLine(keys)]
        }
    }

    /// A reply that prints nothing, to start from.
    static let nothing = Reply(.keys([], ok: false))

    /// `ok: true` and what changed.
    static func ok(_ extra: [String: JSONValue] = [:], human: [String]? = nil) -> Reply {
        var fields = extra
        fields["ok"] = .bool(true)
        return Reply(fields, human: human)
    }

    /// The changed keys, for the commands SPEC §4 gives a `keys` field; `ok` adds `ok: true`,
    /// for the commands it does not name (`mutate`, `event`).
    static func keys(_ keys: [String], ok: Bool = false) -> Reply {
        Reply(.keys(keys, ok: ok))
    }

    /// What a read printed: `get` (`isGet`) or `peek`.
    static func read(_ result: ReadResult, isGet: Bool) -> Reply {
        Reply(.read(result, isGet: isGet), order: EntryCommands.readOrder)
    }

    private static func keysLine(_ keys: [String]) -> String {
        keys.isEmpty ? "keys: (none)" : "keys: " + keys.joined(separator: " ")
    }

    /// Everything the reply prints, each line ending in a line feed; empty when it prints nothing.
    /// - Parameter command: the command's name, the `command` field of JSON output.
    func text(command: String, mode: OutputMode, colour: Bool) -> String {
        var bytes: [UInt8] = []
        write(into: &bytes, command: command, mode: mode, colour: colour)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends to `bytes` everything the reply prints (``text(command:mode:colour:)``), written
    /// straight into them.
    func write(into bytes: inout [UInt8], command: String, mode: OutputMode, colour: Bool) {
        // Switched on `content` alone, then on `mode` (pairing the two in a tuple would copy the
        // content, a read's result with its strings, for each reply).
        switch content {
        case .read(let result, let isGet):
            var out = TextBuilder(taking: &bytes)
            if mode == .json {
                Self.readJSON(result, isGet: isGet, command: command, into: &out)
            } else {
                Self.readLines(result, isGet: isGet, colour: colour, into: &out)
            }
            out.finish(into: &bytes)
        case .keys(let keys, let ok):
            if mode == .json {
                var out = TextBuilder(taking: &bytes)
                out.append("{\"command\":")
                out.appendJSONString(command)
                out.append(",\"keys\":")
                out.appendJSONArray(keys)
                out.append(ok ? ",\"ok\":true}\n" : "}\n")
                out.finish(into: &bytes)
            } else if keys.isEmpty {
                bytes.append(contentsOf: "keys: (none)\n".utf8)
            } else {
                bytes.append(contentsOf: "keys:".utf8)
                for key in keys {
                    bytes.append(UInt8(ascii: " "))
                    ValueText.append(key, to: &bytes)
                }
                bytes.append(UInt8(ascii: "\n"))
            }
        case .fields(let fields, let human):
            if mode == .json {
                var fields = fields
                fields["command"] = .string(command)
                bytes.append(contentsOf: JSONValue.object(fields).compactText.utf8)
                bytes.append(UInt8(ascii: "\n"))
            } else {
                let lines = human ?? Render.fieldLines(fields.filter { $0.key != "ok" }, order: order, colour: colour)
                for line in lines {
                    bytes.append(contentsOf: line.utf8)
                    bytes.append(UInt8(ascii: "\n"))
                }
            }
        }
    }

    /// The JSON object of a read with its `command`: the keys in sorted order, as `compactText` writes them.
    private static func readJSON(_ r: ReadResult, isGet: Bool, command: String, into out: inout TextBuilder) {
        out.append("{\"age_ms\":")
        out.append(r.ageMs)
        out.append(",\"command\":")
        out.appendJSONString(command)
        if isGet, let error = r.error {
            out.append(",\"error\":")
            out.appendJSONString(error)
        }
        out.append(",\"expires_in_ms\":")
        out.append(r.expiresInMs)
        out.append(",\"key\":")
        out.appendJSONString(r.key)
        if isGet && r.offline { out.append(",\"offline\":true") }
        if isGet && r.pending { out.append(",\"pending\":true") }
        if isGet {
            out.append(",\"source\":")
            out.appendJSONString(r.source.rawValue)
        }
        out.append(",\"state\":")
        out.appendJSONString(r.state.rawValue)
        out.append(",\"tags\":")
        out.appendJSONArray(r.tags)
        out.append(",\"value\":")
        out.appendStored(r.stored)
        out.append("}\n")
    }

    /// The human lines of a read: `fieldLines` of its fields in `readOrder`, whose longest name,
    /// `expires_in_ms`, is always present and sets the width.
    private static func readLines(_ r: ReadResult, isGet: Bool, colour: Bool, into out: inout TextBuilder) {
        out.appendField("key:           ")
        out.append(r.key)
        out.appendField("state:         ")
        out.append(Render.stateText(r.state.rawValue, colour: colour))
        out.appendField("value:         ")
        out.appendStored(r.stored)
        if isGet {
            out.appendField("source:        ")
            out.append(r.source.rawValue)
        }
        out.appendField("age_ms:        ")
        out.append(r.ageMs)
        out.appendWords(r.ageMs)
        out.appendField("expires_in_ms: ")
        out.append(r.expiresInMs)
        out.appendWords(r.expiresInMs)
        out.appendField("tags:          ")
        out.appendJSONArray(r.tags)
        if isGet {
            if r.offline {
                out.appendField("offline:       ")
                out.append("true")
            }
            if r.pending {
                out.appendField("pending:       ")
                out.append("true")
            }
            if let error = r.error {
                out.appendField("error:         ")
                out.append(Render.visible(error))
            }
        }
        out.append("\n")
    }
}

/// Output text built as UTF-8 bytes, which take many small appends far faster than a `String`:
/// a reply's text, or a reply written straight after the output before it (``init(taking:)``).
struct TextBuilder {
    private(set) var bytes: [UInt8] = []
    /// Where this text starts in `bytes`.
    private let start: Int

    init() {
        bytes.reserveCapacity(256)
        start = 0
    }

    /// Continues `bytes`, taking them over (no copy) until ``finish(into:)`` hands them back.
    init(taking bytes: inout [UInt8]) {
        swap(&self.bytes, &bytes)
        start = self.bytes.count
    }

    /// Hands the bytes back to where ``init(taking:)`` took them from.
    mutating func finish(into bytes: inout [UInt8]) {
        swap(&self.bytes, &bytes)
    }

    /// The text so far.
    var text: String { String(decoding: bytes[start...], as: UTF8.self) }

    mutating func append(_ text: String) {
        ValueText.append(text, to: &bytes)
    }

    /// A whole number as JSON (and the human layout) writes it; nil is `null`.
    mutating func append(_ number: Int64?) {
        guard let number else { return append("null") }
        ValueText.writeInteger(number, into: &bytes)
    }

    /// A value as JSON, as `JSONValue.compactText` writes it (``ValueText/write(_:into:)``).
    mutating func appendValue(_ value: JSONValue) {
        ValueText.write(value, into: &bytes)
    }

    /// A value as the cache keeps it, its compact text copied as it is (`null` for none).
    mutating func appendStored(_ value: StoredValue?) {
        if let value { value.append(to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
    }

    /// After a duration in milliseconds, the same in words (` (16h20m1s)`), from a second on:
    /// `Render.durationWords`, written without building strings.
    mutating func appendWords(_ ms: Int64?) {
        guard let ms, ms.magnitude >= 1_000 else { return }
        var rest = ms.magnitude >= 60_000 ? ms.magnitude / 1_000 * 1_000 : ms.magnitude
        bytes.append(UInt8(ascii: " "))
        bytes.append(UInt8(ascii: "("))
        if ms < 0 { bytes.append(UInt8(ascii: "-")) }
        func unit(_ size: UInt64, _ first: UInt8, _ second: UInt8? = nil) {
            let amount = rest / size
            guard amount > 0 else { return }
            ValueText.writeInteger(amount, into: &bytes)
            bytes.append(first)
            if let second { bytes.append(second) }
            rest -= amount * size
        }
        unit(86_400_000, UInt8(ascii: "d"))
        unit(3_600_000, UInt8(ascii: "h"))
        unit(60_000, UInt8(ascii: "m"))
        unit(1_000, UInt8(ascii: "s"))
        unit(1, UInt8(ascii: "m"), UInt8(ascii: "s"))
        bytes.append(UInt8(ascii: ")"))
    }

    /// `text` as a JSON string, escaped exactly as `JSONValue.compactText` escapes it.
    /// - Complexity: O(n) in the length of `text`.
    mutating func appendJSONString(_ text: String) {
        ValueText.writeString(text, into: &bytes)
    }

    /// An array of strings as compact JSON.
    mutating func appendJSONArray(_ strings: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (i, string) in strings.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(string)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Starts a `name: value` line of `Render.fieldLines`: ends the line before it, if any, and
    /// writes `prefix`, the name, its colon and the padding to the width of the longest name.
    mutating func appendField(_ prefix: StaticString) {
        if bytes.count > start { bytes.append(UInt8(ascii: "\n")) }
        bytes.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
    }
}

/// How a cached value is printed: compact JSON, keys sorted, byte for byte as
/// `JSONValue.compactText` writes it, but straight into the output. Every value a read prints
/// goes through ``write(_:into:)``, the one place to change when values are stored as text.
enum ValueText {
    /// Appends `value` as compact JSON to `out`.
    /// - Complexity: O(n log k) for n bytes of output and objects of at most k keys.
    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let n): writeInteger(n, into: &out)
        case .double: out.append(contentsOf: value.compactText.utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (k, element) in array.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            // The members' positions sorted by key in a scratch buffer (on the stack when small):
            // no hashing, and no member copied to be sorted.
            out.append(UInt8(ascii: "{"))
            withUnsafeTemporaryAllocation(of: Dictionary<String, JSONValue>.Index.self, capacity: object.count) { slots in
                var count = 0
                var index = object.startIndex
                while index != object.endIndex {
                    slots[count] = index
                    count += 1
                    object.formIndex(after: &index)
                }
                var sorted = UnsafeMutableBufferPointer(rebasing: slots[..<count])
                if count > 1 { sorted.sort { object.keys[$0] < object.keys[$1] } }
                for (k, slot) in sorted.enumerated() {
                    if k > 0 { out.append(UInt8(ascii: ",")) }
                    writeString(object.keys[slot], into: &out)
                    out.append(UInt8(ascii: ":"))
                    write(object.values[slot], into: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A whole number in decimal.
    static func writeInteger(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        writeInteger(n.magnitude, into: &out)
    }

    static func writeInteger(_ n: UInt64, into out: inout [UInt8]) {
        if n < 10 {
            out.append(UInt8(ascii: "0") + UInt8(n))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        var rest = n
        withUnsafeMutableBytes(of: &digits) { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            while rest > 0 {
                count += 1
                buffer[24 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }

    /// `text` as a JSON string, escaped exactly as `JSONValue.compactText` escapes it.
    /// - Complexity: O(n) in the length of `text`.
    static func writeString(_ text: String, into out: inout [UInt8]) {
        var text = text
        let plain = text.withUTF8 { utf8 in
            guard isPlain(utf8) else { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if !plain { append(JSONValue.string(text).compactText, to: &out) }
    }

    /// Appends the UTF-8 bytes of `text` (in one copy).
    @inline(__always)
    static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// No byte of `bytes` needs an escape in a JSON string (nor starts a C1 control).
    private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F || byte == 0xC2 {
            return false
        }
        return true
    }

    private static func isPlain(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(isPlain) }
}

extension Session {
    /// Prints a command's reply in the session's output mode.
    func emit(_ reply: Reply, command: String) {
        let text = reply.text(command: command, mode: options.mode, colour: options.colour)
        if !text.isEmpty { write(lines: text) }
    }

    /// Writes a top-level command's reply straight to ``directOutput`` when nothing stands in the
    /// way: a batch that prints nothing else for the command, keeps only the last history entry,
    /// records nothing, echoes nothing and has no colour nor store. The bytes are those `emit`
    /// would hand the sink.
    /// - Returns: false when the reply must go through `emit` instead.
    func writeDirectly(_ reply: Reply, command: String, outputFrom start: Int) -> Bool {
        guard let direct = directTarget, start == 0, output.isEmpty, historyRewrite == nil, interactiveForms.isEmpty
        else { return false }
        // The buffer's bytes taken out while the reply is written (one access to them, not one per use).
        var bytes: [UInt8] = []
        swap(&bytes, &direct.bytes)
        let from = bytes.count
        reply.write(into: &bytes, command: command, mode: options.mode, colour: false)
        if bytes.withUnsafeBufferPointer({ Render.hasControl(UnsafeBufferPointer(rebasing: $0[from...])) }) {
            // What `write(lines:)` would do: escape what could drive the terminal.
            let text = Render.visible(String(decoding: bytes[from...], as: UTF8.self))
            bytes.removeSubrange(from...)
            bytes.append(contentsOf: text.utf8)
        }
        let full = bytes.count >= OutputBuffer.flushSize
        swap(&bytes, &direct.bytes)
        if full { direct.flush() }
        return true
    }

    /// ``noteHistory(_:outputFrom:)`` for a command whose reply was written straight out
    /// (``writeDirectly(_:command:outputFrom:)``), before the output since `start`.
    /// - Complexity: O(n) in the length of the command and its output.
    func noteHistory(_ command: ArraySlice<UInt8>, outputFrom start: Int, directReply reply: inout Reply, name: String) {
        if output.count == start && interactiveForms.isEmpty {
            // Only kept as the last entry, rendered if ever read: no copy of the output. (The
            // reply is swapped in, and the previous one handed back to be let go.)
            history.appendLast(command: command, reply: &reply, name: name, mode: options.mode)
            return
        }
        let text = Render.visible(reply.text(command: name, mode: options.mode, colour: false))
        let pieces = [text] + (start..<output.count).map { interactiveForms[$0] ?? output[$0].text }
        history.append(command: command, output: pieces)
        interactiveForms.removeAll()
    }

    /// Adds a top-level command and what it printed since output index `start` to the history
    /// (and to an open recording).
    /// - Complexity: O(n) in the length of the command and its output.
    func noteHistory(_ command: ArraySlice<UInt8>, outputFrom start: Int) {
        if let rewrite = historyRewrite {
            historyRewrite = nil
            interactiveForms.removeAll()
            history.append(command: rewrite.command, output: rewrite.output)
        } else if interactiveForms.isEmpty && !options.colour {
            history.append(command: command, output: output[start...].lazy.map(\.text))
        } else {
            let pieces = (start..<output.count).map { interactiveForms[$0] ?? output[$0].text }
            // Colour is for the terminal's copy only: the history, and so `record`, holds plain text.
            history.append(command: command, output: options.colour ? pieces.map(Render.withoutColour) : pieces)
            interactiveForms.removeAll()
        }
        if let recording, let last = history.last {
            recording.append(command: last.command, output: last.output)
        }
        if options.echo, let last = history.last {
            // The command and its output as a recording writes them, in place of its output.
            output.removeSubrange(start...)
            if !RecordCommands.isRecordCommand(last.command) {
                output.append((RecordCommands.entry(command: last.command, output: last.output), false))
            }
        }
    }
}

/// Human output: aligned `name: value` lines and tables, states coloured on a terminal.
enum Render {
    static func stateText(_ state: String, colour: Bool) -> String {
        guard colour else { return state }
        let code: String
        switch state {
        case "fresh": code = "32"
        case "stale": code = "33"
        case "expired": code = "31"
        default: code = "2"
        }
        return "\u{1B}[\(code)m\(state)\u{1B}[0m"
    }

    /// `text` without the colour `stateText` gives a state word: each `ESC[<code>m<word>ESC[0m`
    /// becomes `<word>`. Other bytes, escape characters included, are kept.
    /// - Complexity: O(n) in the length of `text`.
    static func withoutColour(_ text: String) -> String {
        guard text.utf8.contains(0x1B) else { return text }
        let bytes = Array(text.utf8)
        let reset: [UInt8] = [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")]
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x1B, let (word, next) = colouredWord(bytes, at: i, reset: reset) {
                result += bytes[word]
                i = next
            } else {
                result.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The word of a coloured state at `start` (`ESC[32mfresh ESC[0m`) and the index after it.
    private static func colouredWord(_ bytes: [UInt8], at start: Int, reset: [UInt8]) -> (Range<Int>, Int)? {
        var i = start + 1
        guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        let codeStart = i
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
        let code = String(decoding: bytes[codeStart..<i], as: UTF8.self)
        guard ["32", "33", "31", "2"].contains(code), i < bytes.count, bytes[i] == UInt8(ascii: "m") else { return nil }
        i += 1
        let wordStart = i
        while i < bytes.count, (bytes[i] >= UInt8(ascii: "a") && bytes[i] <= UInt8(ascii: "z")) || bytes[i] == UInt8(ascii: "-")
            || bytes[i] == UInt8(ascii: "_") { i += 1 }
        guard i > wordStart, i + reset.count <= bytes.count, Array(bytes[i..<i + reset.count]) == reset else { return nil }
        return (wordStart..<i, i + reset.count)
    }

    /// A field as a human reads it: a cached or server value (`value`) as its JSON text, so `"1"`
    /// and `1` differ; other strings (keys, states, messages) bare, with control characters escaped.
    static func text(_ value: JSONValue, field: String = "value") -> String {
        if field != "value", case .string(let s) = value { return visible(s) }
        return value.compactText
    }

    /// `text` with every control character that could drive a terminal (U+0000–U+001F but line
    /// feed and tab, U+007F, U+0080–U+009F) written as its JSON escape (`\u001b`).
    /// - Complexity: O(n); `text` itself (no copy) when it has none, the usual case.
    static func visible(_ text: String) -> String {
        let found = text.utf8.withContiguousStorageIfAvailable(hasControl) ?? hasControl(Array(text.utf8))
        guard found else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v) {
                let hex = String(v, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether UTF-8 `bytes` hold a control character `visible` escapes: one tight pass over the
    /// bytes (the usual answer is no).
    static func hasControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Eight bytes at a time, with exact per-byte masks (no carries between bytes): a word with
        // no byte below 0x20 but line feed and tab, no 0x7F and no 0xC2 is plain; a word with one
        // is looked at byte by byte, with the byte after it (a C1 control is 0xC2 0x80...0x9F).
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F, ones: UInt64 = 0x0101_0101_0101_0101
        @inline(__always) func equal(_ w: UInt64, _ byte: UInt8) -> UInt64 {
            let x = w ^ (ones &* UInt64(byte))
            return ~(((x & lows) &+ lows) | x | lows)
        }
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let below = ~((w & lows) &+ (ones &* 0x60)) & ~w & ~lows
                let flagged = (below & ~equal(w, 0x0A) & ~equal(w, 0x09)) | equal(w, 0x7F) | equal(w, 0xC2)
                if flagged != 0 {
                    let end = min(bytes.count, i + 9)
                    for j in i..<end where isControlByte(bytes[j], after: j > 0 ? bytes[j - 1] : 0) { return true }
                }
                i += 8
            }
        }
        for j in i..<bytes.count where isControlByte(bytes[j], after: j > 0 ? bytes[j - 1] : 0) { return true }
        return false
    }

    private static func hasControl(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(hasControl) }

    /// Whether `byte` (after `previous`) starts or is a control character `visible` escapes.
    @inline(__always)
    private static func isControlByte(_ byte: UInt8, after previous: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x0A && byte != 0x09) || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte))
    }

    /// Output on its way to the terminal with every control character `visible` escapes escaped:
    /// the last guard that no byte of data or input drives the terminal, whatever path it took.
    /// With `colour`, the state colours `stateText` writes (`ESC[32mfresh ESC[0m`) stay; data
    /// never holds one, as values, keys, messages and `echo` text are escaped where they are made.
    /// - Complexity: O(n); `text` itself when it holds nothing to escape.
    static func safeForTerminal(_ text: String, colour: Bool) -> String {
        guard colour, text.utf8.contains(0x1B) else { return visible(text) }
        let bytes = Array(text.utf8)
        let reset: [UInt8] = [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")]
        var out = ""
        var plainStart = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x1B, let (_, next) = colouredWord(bytes, at: i, reset: reset) {
                out += visible(String(decoding: bytes[plainStart..<i], as: UTF8.self))
                out += String(decoding: bytes[i..<next], as: UTF8.self)
                i = next
                plainStart = i
            } else {
                i += 1
            }
        }
        return out + visible(String(decoding: bytes[plainStart...], as: UTF8.self))
    }

    /// `name: value` lines, names padded to one width (independent of the terminal).
    static func fieldLines(_ fields: [String: JSONValue], order: [String], colour: Bool) -> [String] {
        var names = order.filter { fields[$0] != nil }
        names += fields.keys.filter { !order.contains($0) }.sorted()
        let width = names.map(\.count).max() ?? 0
        return names.map { name in
            let value = fields[name]!
            var shown = text(value, field: name)
            if name == "state", case .string(let s) = value { shown = stateText(s, colour: colour) }
            if name.hasSuffix("_ms"), case .int(let ms) = value, let words = durationWords(ms) { shown += " (" + words + ")" }
            return name + ":" + String(repeating: " ", count: width - name.count + 1) + shown
        }
    }

    /// `words` joined by spaces into lines of at most `width` columns: the first starting with
    /// `first`, the others with `indent` spaces. A word longer than a line gets a line of its own.
    static func wrap(_ words: [String], first: String, indent: Int, width: Int) -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        for word in words {
            if !empty && TextWidth.of(line) + 1 + TextWidth.of(word) > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines
    }

    /// A duration in words for human output beside its milliseconds (SPEC §4): nil under a second,
    /// where the number says it; whole seconds from a minute on (`58801200` is `16h20m1s`).
    static func durationWords(_ ms: Int64) -> String? {
        guard ms.magnitude >= 1_000 else { return nil }
        return TimeText.formatDuration(ms.magnitude >= 60_000 ? ms / 1_000 * 1_000 : ms)
    }

    /// The columns human output fits, whatever the terminal (SPEC §4): a transcript recorded
    /// anywhere verifies anywhere.
    static let width = 80

    /// An aligned table: a header row and one row per item, columns padded to their widest cell
    /// in display columns (CJK and emoji take two). The last column is not padded. A table whose
    /// columns before the last (and the last one's header) do not fit ``width`` is shown as
    /// records instead (``records(_:_:colourColumn:colour:)``).
    static func table(_ columns: [String], _ rows: [[String]], colourColumn: Int? = nil, colour: Bool = false) -> [String] {
        // A duration column (`age_ms`) also says each duration in words.
        let durations = columns.indices.filter { columns[$0].hasSuffix("_ms") }
        var rows = rows
        if !durations.isEmpty {
            for r in rows.indices {
                for i in durations where i < rows[r].count {
                    if let ms = Int64(rows[r][i]), let words = durationWords(ms) { rows[r][i] += " (" + words + ")" }
                }
            }
        }
        var widths = columns.map(TextWidth.of)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], TextWidth.of(cell)) }
        }
        // The last column is free text (a value, a list of keys) that may run on as a value line
        // does; the columns before it, and its header, must fit.
        if widths.dropLast().reduce(0, +) + 2 * max(widths.count - 1, 0) + (columns.last.map(TextWidth.of) ?? 0) > width {
            return records(columns, rows, colourColumn: colourColumn, colour: colour)
        }
        func line(_ cells: [String], colourize: Bool) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let shown = colourize && i == colourColumn ? stateText(cell, colour: colour) : cell
                if i == cells.count - 1 {
                    out += shown
                } else {
                    out += shown + String(repeating: " ", count: widths[i] - TextWidth.of(cell) + 2)
                }
            }
            return out
        }
        return [line(columns, colourize: false)] + rows.map { line($0, colourize: true) }
    }

    /// A table too wide for the screen, one record per row (as `psql`'s expanded display):
    /// `column: cell` lines, names padded to one width, records apart by a blank line.
    static func records(_ columns: [String], _ rows: [[String]], colourColumn: Int? = nil, colour: Bool = false) -> [String] {
        let nameWidth = columns.map(TextWidth.of).max() ?? 0
        var lines: [String] = []
        for (r, row) in rows.enumerated() {
            if r > 0 { lines.append("") }
            for (i, cell) in row.enumerated() where i < columns.count {
                let shown = i == colourColumn ? stateText(cell, colour: colour) : cell
                lines.append(TextWidth.pad(columns[i] + ":", to: nameWidth + 2) + shown)
            }
        }
        return lines
    }

    static func eventLine(_ event: CacheEvent, clockStart: Int64, colour: Bool) -> String {
        let time = TimeText.iso8601(ms: event.at)
        if event.cause == .pushed {
            return "* \(time) pushed \(event.key)"
        }
        var line = "* \(time) \(event.cause.rawValue) \(event.key) \(stateText(event.state.rawValue, colour: colour))"
        if let text = event.valueText { line += " " + text }
        line += " (\(event.source.rawValue))"
        return line
    }
}
