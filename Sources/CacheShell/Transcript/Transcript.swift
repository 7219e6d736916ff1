/// A transcript as read from its file: the file's lines as written, and each command with the
/// lines that hold its expected output (SPEC §6).
///
/// A plain transcript is the whole file; lines before its first command are prose. In Markdown only
/// the fenced code blocks tagged `cachesh` count, in order; everything else is prose. Line numbers
/// stay the file's own either way, so a diff or an update points into the real file.
public struct Transcript: Sendable {
    /// One command and where its expected output lies in the file.
    public struct Step: Sendable, Equatable {
        /// Index (from 0) in `lines` of the command's first line.
        public var line: Int
        /// The command as typed, its lines joined by newlines.
        public var command: String
        /// Indices in `lines` of its expected output.
        public var expected: Range<Int>
        /// Leading spaces dropped from each of its lines (an indented Markdown fence).
        public var indent: Int
    }

    /// The file's lines, without their newlines (LF, or CRLF).
    public let lines: [Substring]
    /// The file ends with a newline (kept when it is rewritten).
    public let endsWithNewline: Bool
    /// The commands, in file order.
    public let steps: [Step]

    /// Reads a transcript, or with `markdown` the `cachesh` blocks of a Markdown document.
    ///
    /// - Complexity: O(n) in the length of `text`.
    public init(text: String, markdown: Bool) {
        // CRLF ends a line as LF does (a transcript saved on Windows): `--update` writes LF.
        var lines = TranscriptSyntax.lines(text)
        endsWithNewline = lines.last?.isEmpty == true
        if endsWithNewline { lines.removeLast() }
        self.lines = lines
        var steps: [Step] = []
        if markdown {
            for block in Self.cacheshBlocks(lines) {
                Self.readSteps(lines, block.lines, indent: block.indent, into: &steps)
            }
        } else {
            Self.readSteps(lines, 0..<lines.count, indent: 0, into: &steps)
        }
        self.steps = steps
    }

    /// True for a path that names a Markdown document (`.md`, `.markdown`).
    public static func isMarkdown(path: String) -> Bool {
        path.hasSuffix(".md") || path.hasSuffix(".markdown")
    }

    /// The expected output of a step, classified: a literal line, a line with `[..]`, or `...`.
    func expectedLines(of step: Step) -> [ExpectedLine] {
        step.expected.map { ExpectedLine(written: Self.dropIndent(lines[$0], step.indent)) }
    }

    /// A line of `step`'s block as the file would hold it: its text after the block's indentation.
    func written(_ text: String, in step: Step) -> String {
        step.indent == 0 || text.isEmpty ? text : String(repeating: " ", count: step.indent) + text
    }

    // MARK: Reading

    /// Splits `range` of `lines` into commands and their expected output.
    private static func readSteps(_ lines: [Substring], _ range: Range<Int>, indent: Int, into steps: inout [Step]) {
        var i = range.lowerBound
        var open: (line: Int, command: String, outputStart: Int)?
        while i < range.upperBound {
            guard let first = TranscriptSyntax.command(in: dropIndent(lines[i], indent)) else {
                i += 1
                continue
            }
            if let open {
                steps.append(Step(line: open.line, command: open.command, expected: open.outputStart..<i, indent: indent))
            }
            let line = i
            var command = String(first)
            i += 1
            while i < range.upperBound, let more = TranscriptSyntax.continuation(in: dropIndent(lines[i], indent)) {
                command += "\n" + more
                i += 1
            }
            open = (line, command, i)
        }
        if let open {
            steps.append(Step(line: open.line, command: open.command, expected: open.outputStart..<range.upperBound, indent: indent))
        }
    }

    /// `line` less up to `indent` leading spaces.
    static func dropIndent(_ line: Substring, _ indent: Int) -> Substring {
        guard indent > 0 else { return line }
        var result = line
        var dropped = 0
        while dropped < indent, result.first == " " {
            result = result.dropFirst()
            dropped += 1
        }
        return result
    }

    /// The content lines of each fenced code block whose info string starts with the word
    /// `cachesh` (CommonMark fences: three or more backticks or tildes, indented at most three
    /// spaces; an unclosed block runs to the end of the document).
    ///
    /// - Complexity: O(n) in the number of lines.
    static func cacheshBlocks(_ lines: [Substring]) -> [(lines: Range<Int>, indent: Int)] {
        var blocks: [(lines: Range<Int>, indent: Int)] = []
        var i = 0
        while i < lines.count {
            guard let fence = Fence(opening: lines[i]) else {
                i += 1
                continue
            }
            var end = i + 1
            while end < lines.count, !fence.isClosed(by: lines[end]) { end += 1 }
            if fence.info.split(separator: " ", maxSplits: 1).first == "cachesh" {
                blocks.append((i + 1..<end, fence.indent))
            }
            i = end + 1
        }
        return blocks
    }

    /// The opening line of a fenced code block.
    private struct Fence {
        var character: Character
        var length: Int
        var indent: Int
        var info: Substring

        init?(opening line: Substring) {
            let indent = line.prefix { $0 == " " }.count
            guard indent <= 3 else { return nil }
            let rest = line.dropFirst(indent)
            guard let character = rest.first, character == "`" || character == "~" else { return nil }
            let length = rest.prefix { $0 == character }.count
            guard length >= 3 else { return nil }
            let info = rest.dropFirst(length).drop { $0 == " " || $0 == "\t" }
            if character == "`" && info.contains("`") { return nil }
            self.character = character
            self.length = length
            self.indent = indent
            self.info = info
        }

        func isClosed(by line: Substring) -> Bool {
            let indent = line.prefix { $0 == " " }.count
            guard indent <= 3 else { return false }
            let rest = line.dropFirst(indent)
            let length = rest.prefix { $0 == character }.count
            return length >= self.length && rest.dropFirst(length).allSatisfy { $0 == " " || $0 == "\t" }
        }
    }
}
