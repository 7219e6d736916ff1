import CacheCore

/// How a failed command reads (SPEC §7): `FILE:LINE: error: MESSAGE` (`-c:LINE:COLUMN: error:
/// MESSAGE` for `-c`) on standard error, or a JSON object with `ok: false`, `error`, `command`,
/// `file`, `line` and `column`; one printable line of a readable length.
/// The interpreter keeps diagnostics as values (``Outcome/Report``); this is their only writer.
enum DiagnosticsFormatter {
    /// The report of `error`, raised at its offset in `source` by `command`, whose bytes are
    /// `span` (nil when not known): a source whose errors name columns (`-c`) names the line and
    /// column where the command starts; the others the line of the error.
    static func report(_ error: ShellError, in source: SourceFile, command: String?, span: Range<Int>?, retyped: Bool,
                       mode: OutputMode) -> Outcome.Report {
        var line = 0
        var column: Int?
        if source.name != nil {
            let start = span?.lowerBound ?? error.offset
            column = source.column(ofOffset: start)
            line = source.location(ofOffset: column == nil ? error.offset : start).line
        }
        let subcommand = command.flatMap { name in span.flatMap { CommandCatalog.subcommand(of: name, in: source.bytes[$0]) } }
        return Outcome.Report(message: shortened(oneLine(error.message)), file: source.name, line: line, column: column,
                              command: command, subcommand: subcommand, retyped: retyped, mode: mode)
    }

    /// The report's line with its line feed; `typed`: as a typed command prints it (no file, no line).
    static func text(_ report: Outcome.Report, typed: Bool) -> String {
        let file = typed ? nil : report.file
        let message = typed ? report.typedMessage ?? report.message : report.message
        if report.mode == .json {
            return json(message, command: report.command, subcommand: report.subcommand, file: file,
                        line: file == nil ? nil : report.line, column: file == nil ? nil : report.column) + "\n"
        }
        guard let file else { return "error: \(message)\n" }
        return "\(file):\(report.line):" + (report.column.map { "\($0):" } ?? "") + " error: \(report.message)\n"
    }

    /// An error as JSON output writes it (SPEC §4), without its line feed: `ok: false`, `error`,
    /// `command` (null for a command that did not lex), `subcommand` when the command has one,
    /// and where it is: `file`, `line` and `column` (null when not known: typed input, a column
    /// outside `-c`). Every writer of an error's JSON writes it here.
    static func json(_ message: String, command: String?, subcommand: String? = nil, file: String?, line: Int?,
                     column: Int?) -> String {
        var fields: [String: JSONValue] = [
            "ok": false, "error": .string(message), "command": command.map(JSONValue.string) ?? .null,
            "file": file.map(JSONValue.string) ?? .null, "line": line.map { .int(Int64($0)) } ?? .null,
            "column": column.map { .int(Int64($0)) } ?? .null,
        ]
        if let subcommand { fields["subcommand"] = .string(subcommand) }
        return JSONValue.object(fields).compactText
    }

    /// `text` with its line breaks written as `\n` and `\r`, and its other control characters
    /// escaped (`Render.visible`): one printable line.
    /// - Complexity: O(n) in the length of `text`.
    static func oneLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else { return Render.visible(text) }
        var line = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            default: line.unicodeScalars.append(scalar)
            }
        }
        return Render.visible(line)
    }

    /// The most bytes of an error message: past it, ``shortened(_:)`` leaves out its middle.
    static let maxErrorBytes = 1000

    /// `message` when it is at most ``maxErrorBytes`` bytes long; else its start and its end with
    /// `... (N bytes left out) ...` between them, cut between characters: an error that quotes a
    /// word of megabytes (`unknown command "xxx..."`) is still a line a person reads, and still
    /// ends as it would (`" (try help)`).
    /// - Complexity: O(n) in the length of `message`.
    static func shortened(_ message: String) -> String {
        let bytes = message.utf8.count
        guard bytes > maxErrorBytes else { return message }
        let headBytes = maxErrorBytes * 3 / 4, tailBytes = maxErrorBytes / 5
        var head = message.startIndex, used = 0
        for i in message.indices {
            let size = message[i...].first!.utf8.count
            if used + size > headBytes { break }
            used += size
            head = message.index(after: i)
        }
        var tail = message.endIndex, kept = 0
        while tail > head {
            let before = message.index(before: tail)
            let size = message[before].utf8.count
            if kept + size > tailBytes { break }
            kept += size
            tail = before
        }
        return message[..<head] + " ... (\(bytes - used - kept) bytes left out) ... " + message[tail...]
    }
}
