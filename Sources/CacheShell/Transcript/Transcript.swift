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
        /// The leading blanks dropped from each of its lines: an indented Markdown fence's spaces,
        /// or the indentation of a transcript indented as a whole (``indentedBlocks(_:)``).
        public var indent: String
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
            for block in Self.indentedBlocks(lines) ?? [(0..<lines.count, "")] {
                Self.readSteps(lines, block.lines, indent: block.indent, into: &steps)
            }
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
        step.indent.isEmpty || text.isEmpty ? text : step.indent + text
    }

    // MARK: Reading

    /// Splits `range` of `lines` into commands and their expected output.
    private static func readSteps(_ lines: [Substring], _ range: Range<Int>, indent: String, into steps: inout [Step]) {
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

    /// `line` less the longest start of `indent` it starts with (all of it but on a blank line, or
    /// a Markdown line indented less than its fence).
    static func dropIndent(_ line: Substring, _ indent: String) -> Substring {
        guard !indent.isEmpty else { return line }
        var result = line
        for character in indent {
            guard result.first == character else { break }
            result = result.dropFirst()
        }
        return result
    }

    /// A plain transcript indented as a whole (pasted from a man page, a mail, a quoted comment),
    /// read as blocks; nil when a line starts with a prompt (`cachesh>`), as the file is then
    /// read as it stands. Each line that is blanks (spaces, tabs) then a prompt opens a block,
    /// which runs through the lines after it that start with the same blanks or are blank (only
    /// spaces and tabs), up to the last that is not blank; its lines are read less those blanks.
    /// Lines outside blocks are prose.
    ///
    /// - Complexity: O(n) in the length of the lines.
    static func indentedBlocks(_ lines: [Substring]) -> [(lines: Range<Int>, indent: String)]? {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        if lines.contains(where: { TranscriptSyntax.command(in: $0) != nil }) { return nil }
        var blocks: [(lines: Range<Int>, indent: String)] = []
        var i = 0
        while i < lines.count {
            let indent = lines[i].prefix(while: isBlank)
            guard !indent.isEmpty, TranscriptSyntax.command(in: lines[i].dropFirst(indent.count)) != nil else {
                i += 1
                continue
            }
            var end = i + 1
            while end < lines.count, lines[end].hasPrefix(indent) || lines[end].allSatisfy(isBlank) { end += 1 }
            // The blank lines that end it separate it from the prose after it.
            var last = end
            while lines[last - 1].allSatisfy(isBlank) { last -= 1 }
            blocks.append((i..<last, String(indent)))
            i = end
        }
        return blocks
    }

    /// The content lines of each fenced code block whose info string starts with the word
    /// `cachesh` (CommonMark fences: three or more backticks or tildes, indented at most three
    /// spaces; an unclosed block runs to the end of the document).
    ///
    /// - Complexity: O(n) in the number of lines.
    static func cacheshBlocks(_ lines: [Substring]) -> [(lines: Range<Int>, indent: String)] {
        var blocks: [(lines: Range<Int>, indent: String)] = []
        var i = 0
        while i < lines.count {
            guard let fence = Fence(opening: lines[i]) else {
                i += 1
                continue
            }
            var end = i + 1
            while end < lines.count, !fence.isClosed(by: lines[end]) { end += 1 }
            if fence.info.split(separator: " ", maxSplits: 1).first == "cachesh" {
                blocks.append((i + 1..<end, String(repeating: " ", count: fence.indent)))
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
