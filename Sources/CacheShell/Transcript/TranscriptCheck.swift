import CacheCore

/// A transcript replayed in a fresh session: the commands whose output differs from what the file
/// expects, the unified diff that shows it and the text `--update` writes (SPEC §6).
public struct TranscriptCheck: Sendable {
    /// One command whose output differs, and how its expected output changes.
    public struct Difference: Sendable {
        public let step: Transcript.Step
        /// The replacement lines for `step.expected`, as the file will hold them.
        public let replacement: [String]
        /// The change line by line, for the diff.
        let edits: [TranscriptEdit]
    }

    /// How the file is named in the report (as given on the command line).
    public let name: String
    public let transcript: Transcript
    /// The commands that differ, in file order; empty when the transcript passes.
    public let differences: [Difference]
    /// Under `--safe`, the first command refused for touching a file, as a script reports it
    /// (`FILE:LINE: error: --safe: ...`), or the first request `server strict on` had no answer
    /// for; the replay stopped there, since what follows depends on it.
    public let refusal: String?

    public var passed: Bool { differences.isEmpty && refusal == nil }

    /// Reads `text` (Markdown when `name` says so) and replays it: one fresh session for the whole
    /// file, relative paths resolving in the file's directory, no colour, the clock at its start.
    /// Each command is fed to the session on its own, never the file as a whole.
    ///
    /// - Complexity: the commands' own cost, plus O(e + a) per command whose output matches.
    /// With `safe` (`--safe`), no command may read or write a file: the first that tries is refused
    /// at its line and ends the replay (`refusal`), as a file command scheduled by `at` is when it runs.
    public static func replay(name: String, text: String, safe: Bool = false) async -> TranscriptCheck {
        await TranscriptCheck(name: name, text: text, safe: safe, on: Cache())
    }

    /// `replay(name:text:safe:)` on a new cache isolated by the caller; with `budget`, the
    /// scheduled work the transcript may make, for its bytes (`--verify`: a stranger's input).
    public init(name: String, text: String, safe: Bool = false, budget: ScheduledBudget? = nil, on cache: isolated Cache) {
        let transcript = Transcript(text: text, markdown: Transcript.isMarkdown(path: name))
        let directory = name.lastIndex(of: "/").map { String(name[..<$0]) }
        self.init(name: name, transcript: transcript, baseDirectory: directory.map { $0.isEmpty ? "/" : $0 }, safe: safe,
                  budget: budget, inputBytes: text.utf8.count, on: cache)
    }

    /// Replays `transcript` in a fresh session (on a new cache) whose relative paths resolve
    /// against `baseDirectory`.
    public static func replay(name: String, transcript: Transcript, baseDirectory: String?,
                              safe: Bool = false) async -> TranscriptCheck {
        await TranscriptCheck(name: name, transcript: transcript, baseDirectory: baseDirectory, safe: safe, on: Cache())
    }

    /// Replays `transcript` in a fresh session on `cache` (a new one).
    public init(name: String, transcript: Transcript, baseDirectory: String?, safe: Bool = false,
                budget: ScheduledBudget? = nil, inputBytes: Int = 0, on cache: isolated Cache) {
        self.name = name
        self.transcript = transcript
        if let cut = RecordCommands.cutShort(transcript) {
            differences = []
            refusal = "\(name):\(transcript.lines.count): error: \(cut)"
            return
        }
        var options = SessionOptions(safe: safe, colour: false, mode: .human, bail: false)
        options.scheduledBudget = budget
        let session = Session(cache: cache, options: options)
        session.noteInput(bytes: inputBytes, on: cache)
        session.baseDirectory = baseDirectory
        var differences: [Difference] = []
        var refusal: String?
        // The matching's work: proportional to the transcript and the outputs (SPEC §7.1).
        let perByte = TranscriptMatcher.matchWorkPerByte
        var matchBudget = transcript.lines.reduce(TranscriptMatcher.matchWorkBase) { $0 &+ perByte &* ($1.utf8.count + 1) }
        for step in transcript.steps {
            let output = session.runTyped(step.command, on: cache)
            if session.safeRefusals > 0 {
                refusal = "\(name):\(step.line + 1): error: \(session.lastSafeRefusal ?? "--safe: refused")"
                break
            }
            if let divergence = session.divergence {
                refusal = "\(name):\(step.line + 1): error: \(divergence)"
                break
            }
            let actual = TranscriptSyntax.outputLines(output)
            let expected = transcript.expectedLines(of: step)
            matchBudget = actual.reduce(matchBudget) { $0 &+ perByte &* ($1.utf8.count + 1) }
            guard let matched = TranscriptMatcher.matches(expected, actual, budget: &matchBudget) else {
                refusal = "\(name):\(step.line + 1): error: \(TranscriptMatcher.overBudget)"
                break
            }
            if matched { continue }
            let edits = TranscriptMatcher.align(expected, actual)
            let replacement = edits.compactMap { edit -> String? in
                switch edit {
                case .keep(let i): String(transcript.lines[step.expected.lowerBound + i])
                case .delete: nil
                case .insert(let j): transcript.written(TranscriptSyntax.escape(actual[j]), in: step)
                }
            }
            differences.append(Difference(step: step, replacement: replacement, edits: edits))
        }
        self.differences = differences
        self.refusal = refusal
    }

    // MARK: Reporting

    /// Lines of context a diff shows around each change.
    static let context = 3

    /// For each differing command, `@ FILE:LINE` (its command line) and the unified diff that
    /// `--update` would apply, numbered in the file's own lines; empty when the transcript passes.
    ///
    /// - Complexity: O(n) in the lines of the differing commands.
    public func report() -> String {
        var text = ""
        var delta = 0
        var changedUpTo = 0
        for difference in differences {
            let name = Render.visible(name)
            text += "@ \(name):\(difference.step.line + 1)\n--- \(name)\n+++ \(name) (actual)\n"
            text += hunks(difference, lineDelta: delta, contextFrom: changedUpTo)
            delta += difference.replacement.count - difference.step.expected.count
            changedUpTo = difference.step.expected.upperBound
        }
        return text
    }

    /// The file with every differing command's expected output replaced.
    ///
    /// - Complexity: O(n) in the length of the file.
    public func updatedText() -> String {
        var lines: [Substring] = []
        lines.reserveCapacity(transcript.lines.count)
        var next = 0
        for difference in differences {
            lines += transcript.lines[next..<difference.step.expected.lowerBound]
            lines += difference.replacement.map { Substring($0) }
            next = difference.step.expected.upperBound
        }
        lines += transcript.lines[next...]
        var text = lines.joined(separator: "\n")
        if transcript.endsWithNewline && !lines.isEmpty { text += "\n" }
        return text
    }

    /// The line (from 1) of each differing command in the updated file, in order, in one pass
    /// (each counted from the file's start took time growing with the square of their number).
    public var updatedLines: [Int] {
        var delta = 0
        return differences.map { difference in
            defer { delta += difference.replacement.count - difference.step.expected.count }
            return difference.step.line + 1 + delta
        }
    }

    /// The hunks of one command's diff. `lineDelta` is how many lines earlier changes in the file
    /// added, so the `+` side counts lines of the updated file; context starts no earlier than
    /// `contextFrom`, past the lines earlier changes rewrite, so the diffs apply one after another.
    private func hunks(_ difference: Difference, lineDelta: Int, contextFrom: Int) -> String {
        typealias Row = (mark: Character, text: Substring)
        let lines = transcript.lines
        let block = difference.step.expected
        let first = max(contextFrom, block.lowerBound - Self.context)
        var rows: [Row] = lines[first..<block.lowerBound].map { (" ", $0) }
        var written = 0
        for edit in difference.edits {
            switch edit {
            case .keep(let i):
                rows.append((" ", lines[block.lowerBound + i]))
                written += 1
            case .delete(let i):
                rows.append(("-", lines[block.lowerBound + i]))
            case .insert:
                rows.append(("+", Substring(difference.replacement[written])))
                written += 1
            }
        }
        rows += lines[block.upperBound..<min(lines.count, block.upperBound + Self.context)].map { (" ", $0) }

        // The file line (from 0) each row starts at, old and new.
        var oldAt: [Int] = [], newAt: [Int] = []
        var old = first, new = first + lineDelta
        for row in rows {
            oldAt.append(old)
            newAt.append(new)
            if row.mark != "+" { old += 1 }
            if row.mark != "-" { new += 1 }
        }
        let changes = rows.indices.filter { rows[$0].mark != " " }
        var text = ""
        var c = 0
        while c < changes.count {
            var last = c
            while last + 1 < changes.count, changes[last + 1] - changes[last] <= 2 * Self.context + 1 { last += 1 }
            let start = max(0, changes[c] - Self.context)
            let end = min(rows.count, changes[last] + Self.context + 1)
            let slice = rows[start..<end]
            let oldCount = slice.filter { $0.mark != "+" }.count
            let newCount = slice.filter { $0.mark != "-" }.count
            text += "@@ -\(Self.range(oldAt[start], oldCount)) +\(Self.range(newAt[start], newCount)) @@\n"
            // A transcript's own lines may hold control characters (a damaged file): written
            // escaped, as all output is, so none reaches the terminal raw (SPEC §4).
            for row in slice { text += String(row.mark) + Render.visible(String(row.text)) + "\n" }
            c = last + 1
        }
        return text
    }

    /// A unified diff range: `start,count`, `start` alone for one line, and for no lines the
    /// line before the gap.
    private static func range(_ startIndex: Int, _ count: Int) -> String {
        switch count {
        case 0: "\(startIndex),0"
        case 1: "\(startIndex + 1)"
        default: "\(startIndex + 1),\(count)"
        }
    }
}
