import CacheCore

/// How a failed command reads (SPEC §7): `FILE:LINE: error: MESSAGE` on standard error, or a JSON
/// object with `error`, `command`, `file` and `line`; one printable line of a readable length.
/// The interpreter keeps diagnostics as values (``Outcome/Report``); this is their only writer.
enum DiagnosticsFormatter {
    /// The report of `error`, raised at its offset in `source` by `command`.
    static func report(_ error: ShellError, in source: SourceFile, command: String?, retyped: Bool, mode: OutputMode) -> Outcome.Report {
        Outcome.Report(message: shortened(oneLine(error.message)), file: source.name,
                       line: source.name == nil ? 0 : source.location(ofOffset: error.offset).line,
                       command: command, retyped: retyped, mode: mode)
    }

    /// The report's line with its line feed; `typed`: as a typed command prints it (no file, no line).
    static func text(_ report: Outcome.Report, typed: Bool) -> String {
        let file = typed ? nil : report.file
        if report.mode == .json {
            var fields: [String: JSONValue] = ["error": .string(report.message), "command": report.command.map(JSONValue.string) ?? .null]
            fields["file"] = file.map(JSONValue.string) ?? .null
            fields["line"] = file == nil ? .null : .int(Int64(report.line))
            return JSONValue.object(fields).compactText + "\n"
        }
        guard let file else { return "error: \(report.message)\n" }
        return "\(file):\(report.line): error: \(report.message)\n"
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
