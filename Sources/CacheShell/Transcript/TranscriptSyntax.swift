/// The lines of a transcript (SPEC §6): prompts, escapes and wildcards.
///
/// A line starting `cachesh> ` is a command, `...> ` continues it; the lines after a command, up to
/// the next one, are its output. An output line a reader would take for something else (a prompt,
/// the wildcard `...`, or a line starting with `\`) is written with a leading `\`, which the reader
/// removes.
public enum TranscriptSyntax {
    /// Starts a command line.
    public static let prompt = "cachesh> "
    /// Starts each further line of a multi-line command.
    public static let continuationPrompt = "...> "
    /// An expected-output line that is exactly this matches any number of lines.
    public static let anyLines = "..."
    /// Within an expected-output line, matches any text.
    public static let anyText = "[..]"

    /// The command text on a prompt line, or nil when the line is not one.
    /// A bare `cachesh>` (a terminal copy drops trailing blanks) is an empty command.
    static func command(in line: Substring) -> Substring? {
        if line.hasPrefix(prompt) { return line.dropFirst(prompt.count) }
        return line == "cachesh>" ? line.dropFirst(line.count) : nil
    }

    /// The command text on a continuation line, or nil when the line is not one.
    static func continuation(in line: Substring) -> Substring? {
        if line.hasPrefix(continuationPrompt) { return line.dropFirst(continuationPrompt.count) }
        return line == "...>" ? line.dropFirst(line.count) : nil
    }

    /// True when an output line must be written with a leading `\` to be read back as itself.
    public static func needsEscape(_ line: Substring) -> Bool {
        line.hasPrefix("\\") || line.hasPrefix(prompt) || line.hasPrefix(continuationPrompt)
            || line == anyLines || line == "cachesh>" || line == "...>"
    }

    /// An output line as a transcript writes it.
    public static func escape(_ line: Substring) -> String {
        needsEscape(line) ? "\\" + line : String(line)
    }

    /// One command and what it printed as transcript text: the command's first line after
    /// `cachesh> `, its further lines after `...> `, then each output line, escaped.
    /// Every line ends with a newline.
    ///
    /// - Complexity: O(n) in the length of the command and output.
    public static func render(command: String, output: String) -> String {
        var text = ""
        for (i, line) in lines(command).enumerated() {
            text += (i == 0 ? prompt : continuationPrompt) + line + "\n"
        }
        for line in outputLines(output) {
            text += escape(line) + "\n"
        }
        return text
    }

    /// The lines of a command's output; the newline ending the last line does not start another.
    static func outputLines(_ output: String) -> [Substring] {
        var lines = lines(output)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// `text` split at each line feed, a carriage return before it dropped (a line ends with LF
    /// or CRLF). The split is on bytes: a `String` holds CR LF as one `Character`, which a split
    /// on `"\n"` passes over, so a CRLF file would be one line and its output lines would run
    /// as one command's continuation.
    /// - Complexity: O(n) in the length of `text`.
    static func lines(_ text: String) -> [Substring] {
        var lines: [Substring] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var i = start
        while i != utf8.endIndex {
            if utf8[i] == UInt8(ascii: "\n") {
                var end = i
                if end != start, utf8[utf8.index(before: end)] == UInt8(ascii: "\r") { end = utf8.index(before: end) }
                lines.append(text[start..<end])
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        lines.append(text[start...])
        return lines
    }
}
