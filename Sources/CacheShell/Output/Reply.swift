import CacheCore

/// What a command answers: its JSON fields (SPEC §4) and, where the generic `name: value`
/// layout does not suit it, its own human lines.
///
/// The most frequent replies (a read, a list of changed keys) keep their parts and are written
/// straight to text in either mode, byte for byte as the generic layout would write their fields.
struct Reply: Sendable {
    private enum Content: Sendable {
        case fields([String: JSONValue], human: [String]?)
        /// Fields whose human form holds a table, laid out as it is written: to the width of
        /// where it goes (``Render/table(_:_:colourColumn:colour:width:)``).
        case table([String: JSONValue], TableText)
        /// `get` (`isGet`) or `peek`: the fields of `EntryCommands.fields`.
        case read(ReadResult, isGet: Bool)
        /// `keys`.
        case keys([String])
        /// Nothing: the command failed inside (a `source` whose command failed, a trace's error),
        /// where its diagnostics say.
        case failed
        /// Two views of one answer (``views(shown:replayed:)``): `shown` is what the session
        /// prints, and a recording writes; `replayed` what a replay of the session's history
        /// prints, where they differ.
        indirect case views(Reply, replayed: Reply)
    }

    private var content: Content
    /// Field order for the generic human layout; fields not named follow, sorted.
    let order: [String]
    /// The form of a command with subcommands that answered (`next` of `server next`): the
    /// `subcommand` field of JSON output (SPEC §4); human output does not show it.
    var subcommand: String?
    /// The `ok` field of JSON output: false only for a reply its command printed before it failed
    /// (a request strict mode found nothing queued for); an error says `ok: false` too.
    var ok = true

    init(_ fields: [String: JSONValue], order: [String] = [], human: [String]? = nil) {
        content = .fields(fields, human: human)
        self.order = order
    }

    /// A reply whose human form is `table` (between lines of its own), laid out as it is written:
    /// 80 columns for the history, a recording, `--echo` and a pipe; a terminal's own width (SPEC §4).
    init(_ fields: [String: JSONValue], table: TableText) {
        content = .table(fields, table)
        order = []
    }

    private init(_ content: Content, order: [String] = []) {
        self.content = content
        self.order = order
    }

    /// The JSON fields (SPEC §4), without `command`: every reply says `ok` (true unless its
    /// command failed after it, ``ok``), and the reply of a subcommand names it.
    var fields: [String: JSONValue] {
        var fields: [String: JSONValue]
        switch content {
        case .fields(let own, _), .table(let own, _): fields = own
        case .read(let result, let isGet): fields = EntryCommands.fields(result, isGet: isGet)
        case .keys(let keys): fields = ["keys": .array(keys.map(JSONValue.string))]
        case .failed: return [:]
        case .views(let shown, _): fields = shown.fields
        }
        fields["ok"] = .bool(ok)
        if let subcommand { fields["subcommand"] = .string(subcommand) }
        return fields
    }

    /// Human lines; nil renders `fields` as aligned `name: value` lines in `order`. A table is
    /// laid out for `width` columns, its state column coloured with `colour`.
    func human(colour: Bool = false, width: Int = Render.width) -> [String]? {
        switch content {
        case .fields(_, let human): return human
        case .table(_, let table): return table.lines(colour: colour, width: width)
        case .read: return nil
        case .keys(let keys): return [Self.keysLine(keys)]
        case .failed: return []
        case .views(let shown, _): return shown.humanLines(colour: colour, width: width)
        }
    }

    /// The human lines (``human(colour:width:)``), or the fields as aligned `name: value` lines in
    /// `order`, less the fields human output leaves out (`ok`, `subcommand`; SPEC §4).
    func humanLines(colour: Bool, width: Int = Render.width) -> [String] {
        if let human = human(colour: colour, width: width) { return human }
        var fields = fields
        fields["ok"] = nil
        fields["subcommand"] = nil
        return Render.fieldLines(fields, order: order, colour: colour)
    }

    /// A reply that prints nothing, to start from. Made where it is used (an empty array takes no
    /// storage): a stored `static let` cost a `swift_once` and a copy of the whole reply at each
    /// use, which every command of a batch makes when its outcome is reset.
    static var nothing: Reply { Reply(.keys([])) }

    /// The result of a command that failed inside, where the diagnostics it made say (the
    /// `source` of a file whose command failed): it prints nothing more, and fails.
    static let failedWithin = Reply(.failed)

    /// A reply that prints `shown` and, in the history a replay of the session is checked against
    /// (`--echo`, `record --from-start`), `replayed`: `timeline` and `explain` while a recording
    /// from here on sets the earlier changes aside (SPEC §6), which a replay of the whole session
    /// still has. `shown` alone when the two print the same.
    static func views(shown: Reply, replayed: Reply) -> Reply {
        if shown.fields == replayed.fields && shown.humanLines(colour: false) == replayed.humanLines(colour: false) { return shown }
        return Reply(.views(shown, replayed: replayed), order: shown.order)
    }

    /// What a replay of the session's history prints (``views(shown:replayed:)``): this reply but
    /// for one with two views.
    var replayed: Reply {
        guard case .views(_, var replayed) = content else { return self }
        replayed.ok = ok
        replayed.subcommand = subcommand
        return replayed
    }

    /// Whether the reply has two views (``views(shown:replayed:)``).
    var hasViews: Bool {
        if case .views = content { return true }
        return false
    }

    /// Whether this is ``failedWithin``.
    var isFailure: Bool {
        if case .failed = content { return true }
        return false
    }

    /// `ok: true` and what changed.
    static func ok(_ extra: [String: JSONValue] = [:], human: [String]? = nil) -> Reply {
        var fields = extra
        fields["ok"] = .bool(true)
        return Reply(fields, human: human)
    }

    /// The changed keys, for the commands SPEC §4 gives a `keys` field.
    static func keys(_ keys: [String]) -> Reply {
        Reply(.keys(keys))
    }

    /// What a read printed: `get` (`isGet`) or `peek`.
    static func read(_ result: ReadResult, isGet: Bool) -> Reply {
        Reply(.read(result, isGet: isGet), order: EntryCommands.readOrder)
    }

    private static func keysLine(_ keys: [String]) -> String {
        keys.isEmpty ? "keys: (none)" : "keys: " + keys.joined(separator: " ")
    }

    /// Everything the reply prints, each line ending in a line feed; empty when it prints nothing.
    /// - Parameters:
    ///   - command: the command's name, the `command` field of JSON output.
    ///   - width: the columns a table must fit, else it is shown as records: ``Render/width``
    ///     but on a terminal (SPEC §4).
    func text(command: String, mode: OutputMode, colour: Bool, width: Int = Render.width) -> String {
        var out = ByteWriter(capacity: 256)
        defer { out.deallocate() }
        write(into: &out, command: command, mode: mode, colour: colour, width: width)
        return out.text()
    }

    /// Appends to `out` everything the reply prints (``text(command:mode:colour:width:)``), written
    /// straight into it.
    /// - Returns: whether what it wrote may hold a control character `Render.visible` escapes:
    ///   false when none of the text it took from data (keys, values, tags) holds one, so the
    ///   rest, written here, need not be looked through.
    @discardableResult
    func write(into out: inout ByteWriter, command: String, mode: OutputMode, colour: Bool, width: Int = Render.width) -> Bool {
        // Switched on `content` alone, then on `mode` (pairing the two in a tuple would copy the
        // content, a read's result with its strings, for each reply).
        switch content {
        case .read(let result, let isGet):
            if mode == .json {
                return Self.readJSON(result, isGet: isGet, command: command, subcommand: subcommand, ok: ok, into: &out)
            } else {
                return Self.readLines(result, isGet: isGet, colour: colour, into: &out)
            }
        case .keys(let keys):
            return Self.writeKeys(keys, command: command, subcommand: subcommand, ok: ok, mode: mode, into: &out)
        case .fields, .table, .views:
            let start = out.count
            if mode == .json {
                var fields = fields
                fields["command"] = .string(command)
                out.append(JSONValue.object(fields).compactText)
                out.append(UInt8(ascii: "\n"))
            } else {
                for line in humanLines(colour: colour, width: width) {
                    out.append(line)
                    out.append(UInt8(ascii: "\n"))
                }
            }
            return Render.hasControl(out.written(from: start))
        case .failed:
            return false
        }
    }

    /// What a reply of changed keys writes (``write(into:command:mode:colour:width:)``).
    /// - Returns: whether it may hold a control character.
    static func writeKeys(_ keys: [String], command: String, subcommand: String?, ok: Bool, mode: OutputMode,
                          into out: inout ByteWriter) -> Bool {
        var control = false
        if mode == .json {
            out.append("{\"command\":")
            control = out.appendJSONString(command)
            out.append(",\"keys\":")
            control = out.appendJSONArray(keys) || control
            out.append(ok ? ",\"ok\":true" as StaticString : ",\"ok\":false")
            if let subcommand {
                out.append(",\"subcommand\":")
                control = out.appendJSONString(subcommand) || control
            }
            out.append("}\n")
        } else if keys.isEmpty {
            out.append("keys: (none)\n")
        } else {
            out.append("keys:")
            for key in keys {
                out.append(UInt8(ascii: " "))
                control = out.appendChecked(key) || control
            }
            out.append(UInt8(ascii: "\n"))
        }
        return control
    }

    /// The JSON object of a read with its `command` (and `subcommand`, for a form of a command
    /// that has them): the keys in sorted order, as `compactText` writes them.
    /// - Returns: whether it may hold a control character (``write(into:command:mode:colour:)``).
    static func readJSON(_ r: ReadResult, isGet: Bool, command: String, subcommand: String?, ok: Bool,
                         into out: inout ByteWriter) -> Bool {
        out.append("{\"age_ms\":")
        out.appendNumber(r.ageMs)
        out.append(",\"command\":")
        // A get's own name as a literal: the string checked and copied took some 70 instructions.
        var control = false
        if command == "get" { out.append("\"get\"") } else { control = out.appendJSONString(command) }
        if isGet, let error = r.error {
            out.append(",\"error\":")
            control = out.appendJSONString(error) || control
        }
        out.append(",\"expires_in_ms\":")
        out.appendNumber(r.expiresInMs)
        out.append(",\"key\":")
        control = out.appendJSONString(r.key) || control
        if isGet && ok && !r.offline && !r.pending {
            // The usual get: its fields from `ok` to `state` as one literal.
            out.append(ReadNames.getFields(source: r.source, state: r.state))
        } else {
            if isGet && r.offline { out.append(",\"offline\":true") }
            out.append(ok ? ",\"ok\":true" as StaticString : ",\"ok\":false")
            if isGet && r.pending { out.append(",\"pending\":true") }
            if isGet {
                out.append(",\"source\":\"")
                out.append(ReadNames.source(r.source))
                out.append(UInt8(ascii: "\""))
            }
            out.append(",\"state\":\"")
            out.append(ReadNames.state(r.state))
            out.append(UInt8(ascii: "\""))
        }
        if let subcommand {
            out.append(",\"subcommand\":")
            control = out.appendJSONString(subcommand) || control
        }
        out.append(",\"tags\":")
        control = out.appendJSONArray(r.tags) || control
        out.append(",\"value\":")
        control = out.appendStored(r.stored) || control
        out.append("}\n")
        return control
    }

    /// The human lines of a read: `fieldLines` of its fields in `readOrder`, whose longest name,
    /// `expires_in_ms`, is always present and sets the width.
    /// - Returns: whether they may hold a control character (``write(into:command:mode:colour:)``).
    static func readLines(_ r: ReadResult, isGet: Bool, colour: Bool, into out: inout ByteWriter) -> Bool {
        out.append("key:           ")
        var control = out.appendChecked(r.key)
        if colour {
            out.append("\nstate:         ")
            out.append(Render.stateText(r.state.rawValue, colour: colour))
            out.append("\nvalue:         ")
        } else {
            out.append(ReadNames.stateLine(r.state))
        }
        control = out.appendStored(r.stored) || control
        out.append(isGet ? ReadNames.sourceLine(r.source) : "\nage_ms:        ")
        out.appendNumber(r.ageMs)
        out.appendWords(r.ageMs)
        out.append("\nexpires_in_ms: ")
        out.appendNumber(r.expiresInMs)
        out.appendWords(r.expiresInMs)
        out.append("\ntags:          ")
        control = out.appendJSONArray(r.tags) || control
        if isGet {
            if r.offline { out.append("\noffline:       true") }
            if r.pending { out.append("\npending:       true") }
            if let error = r.error {
                out.append("\nerror:         ")
                out.append(Render.visible(error))
            }
        }
        out.append(UInt8(ascii: "\n"))
        return control
    }
}

/// A read's state and source as literals, their raw values (`EntryState`, `ValueSource`): written
/// into the output with no string made and let go for each read.
enum ReadNames {
    /// The human line of a state with the labels around it, `\nstate: ...` up to the value: one
    /// copy into the output where there were three (some 25 instructions each).
    @inline(__always)
    static func stateLine(_ state: EntryState) -> StaticString {
        switch state {
        case .fresh: "\nstate:         fresh\nvalue:         "
        case .stale: "\nstate:         stale\nvalue:         "
        case .expired: "\nstate:         expired\nvalue:         "
        case .absent: "\nstate:         absent\nvalue:         "
        }
    }

    /// A get's JSON fields from `ok` to `state`, when it succeeded, online and with no fetch
    /// pending: one copy into the output where there were seven.
    @inline(__always)
    static func getFields(source: ValueSource, state: EntryState) -> StaticString {
        switch (source, state) {
        case (.cache, .fresh): #","ok":true,"source":"cache","state":"fresh""#
        case (.cache, .stale): #","ok":true,"source":"cache","state":"stale""#
        case (.cache, .expired): #","ok":true,"source":"cache","state":"expired""#
        case (.cache, .absent): #","ok":true,"source":"cache","state":"absent""#
        case (.server, .fresh): #","ok":true,"source":"server","state":"fresh""#
        case (.server, .stale): #","ok":true,"source":"server","state":"stale""#
        case (.server, .expired): #","ok":true,"source":"server","state":"expired""#
        case (.server, .absent): #","ok":true,"source":"server","state":"absent""#
        }
    }

    /// A get's human source line with the labels around it, `\nsource: ...` up to the age.
    @inline(__always)
    static func sourceLine(_ source: ValueSource) -> StaticString {
        switch source {
        case .cache: "\nsource:        cache\nage_ms:        "
        case .server: "\nsource:        server\nage_ms:        "
        }
    }

    @inline(__always)
    static func state(_ state: EntryState) -> StaticString {
        switch state {
        case .fresh: "fresh"
        case .stale: "stale"
        case .expired: "expired"
        case .absent: "absent"
        }
    }

    @inline(__always)
    static func source(_ source: ValueSource) -> StaticString {
        switch source {
        case .cache: "cache"
        case .server: "server"
        }
    }
}

/// A table in a reply's human form, with the lines before and after it (a note, a total), laid
/// out when the reply is written (``Reply/init(_:table:)``).
struct TableText {
    var before: [String] = []
    var columns: [String]
    var rows: [[String]]
    /// The column of entry states, coloured on a terminal.
    var colourColumn: Int?
    var after: [String] = []

    init(before: [String] = [], _ columns: [String], _ rows: [[String]], colourColumn: Int? = nil, after: [String] = []) {
        self.before = before
        self.columns = columns
        self.rows = rows
        self.colourColumn = colourColumn
        self.after = after
    }

    func lines(colour: Bool, width: Int) -> [String] {
        before + Render.table(columns, rows, colourColumn: colourColumn, colour: colour, width: width) + after
    }
}

/// How replies are written: pieces of JSON and of the human layout, byte for byte as
/// `JSONValue.compactText` and `Render` write them, straight into the output.
extension ByteWriter {
    /// A whole number as JSON (and the human layout) writes it; nil is `null`.
    @inline(__always)
    mutating func appendNumber(_ number: Int64?) {
        guard let number else { return append("null" as StaticString) }
        appendInteger(number)
    }

    /// A value as the cache keeps it, its compact text copied as it is (`null` for none).
    /// - Returns: whether the text holds a control character `Render.visible` escapes.
    @inline(__always)
    mutating func appendStored(_ value: StoredValue?) -> Bool {
        guard let value else {
            append("null" as StaticString)
            return false
        }
        return value.withUTF8 { text in
            append(text)
            return Render.hasControl(text)
        }
    }

    /// The UTF-8 bytes of `text`.
    /// - Returns: whether they hold a control character `Render.visible` escapes.
    @inline(__always)
    mutating func appendChecked(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { text in
            append(text)
            return Render.hasControl(text)
        }
    }

    /// After a duration in milliseconds, the same in words (` (16h20m1s)`), from a second on:
    /// `Render.durationWords`, written without building strings.
    mutating func appendWords(_ ms: Int64?) {
        guard let ms, ms.magnitude >= 1_000 else { return }
        var rest = ms.magnitude >= 60_000 ? ms.magnitude / 1_000 * 1_000 : ms.magnitude
        append(ms < 0 ? " (-" as StaticString : " (")
        func unit(_ size: UInt64, _ first: UInt8, _ second: UInt8? = nil) {
            let amount = rest / size
            guard amount > 0 else { return }
            appendInteger(amount)
            append(first)
            if let second { append(second) }
            rest -= amount * size
        }
        unit(86_400_000, UInt8(ascii: "d"))
        unit(3_600_000, UInt8(ascii: "h"))
        unit(60_000, UInt8(ascii: "m"))
        unit(1_000, UInt8(ascii: "s"))
        unit(1, UInt8(ascii: "m"), UInt8(ascii: "s"))
        append(UInt8(ascii: ")"))
    }

    /// `text` as a JSON string, escaped exactly as `JSONValue.compactText` escapes it.
    /// - Returns: whether the string written holds a control character `Render.visible` escapes
    ///   (JSON escapes those below U+0020, not U+007F nor the C1 controls).
    /// - Complexity: O(n) in the length of `text`.
    @discardableResult
    mutating func appendJSONString(_ text: String) -> Bool {
        var text = text
        let plain = text.withUTF8 { utf8 in
            // Plain text holds no byte below 0x20, no 0x7F and no 0xC2: no control character.
            guard ValueText.isPlain(utf8) else { return false }
            reserve(utf8.count + 2)
            append(UInt8(ascii: "\""))
            append(utf8)
            append(UInt8(ascii: "\""))
            return true
        }
        if plain { return false }
        return appendChecked(JSONValue.string(text).compactText)
    }

    /// An array of strings as compact JSON.
    /// - Returns: whether it holds a control character (``appendJSONString(_:)``).
    @discardableResult
    mutating func appendJSONArray(_ strings: [String]) -> Bool {
        guard !strings.isEmpty else {
            append("[]" as StaticString)
            return false
        }
        append(UInt8(ascii: "["))
        var control = false
        for (i, string) in strings.enumerated() {
            if i > 0 { append(UInt8(ascii: ",")) }
            control = appendJSONString(string) || control
        }
        append(UInt8(ascii: "]"))
        return control
    }
}

/// The checks behind the writing of JSON strings.
enum ValueText {
    /// No byte of `bytes` needs an escape in a JSON string (nor starts a C1 control, or a
    /// bidirectional or line-separator character: 0xD8 and 0xE2 lead the ones `Render.visible` escapes).
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Printable ASCII with no quote and no backslash, eight bytes at a time (the last word
        // read where it overlaps the one before): a key or a tag of a reply, in a few
        // instructions a word, where the byte loop below took some ten a byte. Text with any
        // other byte (non-ASCII among them) goes through that loop, which decides it.
        if bytes.count >= 8, let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base), n = bytes.count
            var i = 0
            while i < n, stops(raw.loadUnaligned(fromByteOffset: min(i, n - 8), as: UInt64.self)) == 0 { i += 8 }
            if i >= n { return true }
        }
        for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F || byte == 0xC2
            || byte == 0xE2 || byte == 0xD8 {
            return false
        }
        return true
    }

    /// 0x80 in each byte of `w` that is not printable ASCII, or is a quote or a backslash (exact
    /// per byte: no sum carries out of its byte).
    @inline(__always)
    private static func stops(_ w: UInt64) -> UInt64 {
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F, highs = ~lows, ones: UInt64 = 0x0101_0101_0101_0101
        let low = w & lows
        let control = ~(low &+ ones &* 0x60) & highs  // low seven bits below 0x20
        let del = (low &+ ones) & highs  // low seven bits 0x7F
        let quote = ~((low ^ (ones &* 0x22)) &+ lows) & highs
        let backslash = ~((low ^ (ones &* 0x5C)) &+ lows) & highs
        return (w & highs) | control | del | quote | backslash
    }
}
