/// One line of expected output: literal text, text with `[..]` wildcards, or the line `...`.
enum ExpectedLine: Equatable {
    /// `...`: any number of lines, none included.
    case anyLines
    /// Text that must equal the actual line byte for byte.
    case literal(Substring)
    /// Text split at each `[..]`: the actual line starts with the first part, ends with the last,
    /// and holds the others in order between them.
    case pattern([Substring])

    /// Classifies a line as written in the file (after any Markdown indentation): a leading `\`
    /// is removed and makes the rest literal text, though `[..]` in it still matches any text.
    ///
    /// - Complexity: O(n) in the length of the line.
    init(written line: Substring) {
        if line == TranscriptSyntax.anyLines {
            self = .anyLines
            return
        }
        let text = line.hasPrefix("\\") ? line.dropFirst() : line
        let utf8 = text.utf8
        var parts: [Substring] = []
        var partStart = utf8.startIndex
        var i = utf8.startIndex
        // One pass: at each `[`, look at most three bytes ahead for `..]`.
        scan: while i < utf8.endIndex {
            if utf8[i] == UInt8(ascii: "[") {
                var j = utf8.index(after: i)
                for expected in [UInt8(ascii: "."), UInt8(ascii: "."), UInt8(ascii: "]")] {
                    guard j < utf8.endIndex, utf8[j] == expected else {
                        i = utf8.index(after: i)
                        continue scan
                    }
                    j = utf8.index(after: j)
                }
                parts.append(text[partStart..<i])
                i = j
                partStart = j
            } else {
                i = utf8.index(after: i)
            }
        }
        if parts.isEmpty {
            self = .literal(text)
        } else {
            parts.append(text[partStart...])
            self = .pattern(parts)
        }
    }

    /// True when `actual` is a line this one accepts (never for `...`, which stands for lines).
    ///
    /// - Complexity: O(n + m) in the lengths of the line and of this pattern, whatever the
    ///   pattern: each part between `[..]` is found with a Knuth–Morris–Pratt scan that starts
    ///   where the previous part ended, so no byte of the line is looked at twice by the search.
    func matches(_ actual: Substring) -> Bool {
        switch self {
        case .anyLines:
            return false
        case .literal(let text):
            return text.utf8.elementsEqual(actual.utf8)
        case .pattern(let parts):
            if let result = actual.utf8.withContiguousStorageIfAvailable({ Self.matches(parts, $0) }) {
                return result
            }
            return Array(actual.utf8).withUnsafeBufferPointer { Self.matches(parts, $0) }
        }
    }

    /// `line` starts with the first part, ends with the last, and holds the others in order
    /// between them, without overlaps.
    private static func matches(_ parts: [Substring], _ line: UnsafeBufferPointer<UInt8>) -> Bool {
        let first = Array(parts[0].utf8), last = Array(parts[parts.count - 1].utf8)
        guard line.count >= first.count + last.count else { return false }
        for (i, byte) in first.enumerated() where line[i] != byte { return false }
        let lastStart = line.count - last.count
        for (i, byte) in last.enumerated() where line[lastStart + i] != byte { return false }
        // Leftmost placement of each middle part is optimal when every gap accepts any text.
        var start = first.count
        for part in parts.dropFirst().dropLast() {
            guard let found = find(Array(part.utf8), in: line, from: start, to: lastStart) else { return false }
            start = found
        }
        return true
    }

    /// The index just past the first occurrence of `needle` in `haystack[start..<end]`.
    ///
    /// - Complexity: O(m + k) where m is the needle's length and k the bytes scanned (up to the
    ///   end of the occurrence, or `end - start` when there is none).
    static func find(_ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        if needle.isEmpty { return start }
        guard end - start >= needle.count else { return nil }
        // failure[i]: the length of the longest proper prefix of needle[...i] that is also its suffix.
        var failure = [Int](repeating: 0, count: needle.count)
        var k = 0
        for i in 1..<needle.count {
            while k > 0 && needle[i] != needle[k] { k = failure[k - 1] }
            if needle[i] == needle[k] { k += 1 }
            failure[i] = k
        }
        k = 0
        for i in start..<end {
            let byte = haystack[i]
            while k > 0 && byte != needle[k] { k = failure[k - 1] }
            if byte == needle[k] {
                k += 1
                if k == needle.count { return i + 1 }
            }
        }
        return nil
    }
}

/// How one command's expected output becomes its actual output: the edit `--update` applies.
enum TranscriptEdit: Equatable {
    /// The expected line stays: it matched, or it is a wildcard (`...`, or `[..]` that matched).
    case keep(Int)
    /// The expected line goes.
    case delete(Int)
    /// The actual line is written, escaped.
    case insert(Int)
}

/// Comparing expected output with actual output.
enum TranscriptMatcher {
    /// True when `actual` is what `expected` describes: each line matches in order, each `...`
    /// standing for any number of lines. Without a limit on its work (`matches(_:_:budget:)`).
    static func matches(_ expected: [ExpectedLine], _ actual: [Substring]) -> Bool {
        var unlimited = Int.max
        return matches(expected, actual, budget: &unlimited) ?? false
    }

    /// The work `--verify` lets the matching of a transcript's outputs do, in steps (a position
    /// of a run tried at a line, a byte compared by a `[..]` line): `matchWorkBase`, and
    /// `matchWorkPerByte` for each byte of the transcript and of each output it matches (SPEC §7.1).
    static let matchWorkBase = 16_000_000
    static let matchWorkPerByte = 64
    /// The error when matching a command's output spent the budget; the replay stops there.
    static let overBudget = "matching this output against its expected lines takes more than --verify spends "
        + "(\(matchWorkBase) steps and \(matchWorkPerByte) per byte of the transcript and of its output): "
        + "a run between two ... that nearly matches at almost every line? Fewer [..] lines in it would do"

    /// As `matches(_:_:)`, spending at most `budget` steps of the runs' search (it is lowered by
    /// what the search did); nil when that was not enough to decide.
    ///
    /// The lines between two `...` are a run that must appear whole; the first run is anchored at
    /// the start, the last at the end, and each run between is placed at its leftmost occurrence
    /// after the one before (which is optimal, as the gaps take any lines).
    ///
    /// - Complexity: O(e + a) line matches without `...`. With `...`, each actual line is looked at
    ///   in the search of one run only. A run of literal lines is found by Knuth–Morris–Pratt over
    ///   the lines' numbers: O(r + k) for the k actual lines it scans, whatever they hold. A run
    ///   with `[..]` lines follows, line by line, only the positions of the run that the lines so
    ///   far leave possible (a bit set): O(1) per possible position plus one match per distinct
    ///   `[..]` line at a possible position, so O(k) when the run does not nearly match almost
    ///   everywhere; what it spends beyond is counted against `budget`.
    static func matches(_ expected: [ExpectedLine], _ actual: [Substring], budget: inout Int) -> Bool? {
        let runs = expected.split(separator: .anyLines, omittingEmptySubsequences: false)
        guard runs.count > 1 else {
            return expected.count == actual.count && zip(expected, actual).allSatisfy { $0.matches($1) }
        }
        let head = runs[0], tail = runs[runs.count - 1]
        guard head.count + tail.count <= actual.count else { return false }
        for (offset, line) in head.enumerated() where !line.matches(actual[offset]) { return false }
        let tailStart = actual.count - tail.count
        for (offset, line) in tail.enumerated() where !line.matches(actual[tailStart + offset]) { return false }
        var start = head.count
        for run in runs.dropFirst().dropLast() where !run.isEmpty {
            guard let found = leftmost(run, in: actual, from: start, to: tailStart, budget: &budget) else { return nil }
            guard found >= 0 else { return false }
            start = found
        }
        return true
    }

    /// The index just past the first place where every line of `run` matches `actual` in turn,
    /// within `start..<end`; -1 when there is none; nil when finding out would spend more than
    /// `budget` steps.
    private static func leftmost(_ run: ArraySlice<ExpectedLine>, in actual: [Substring], from start: Int, to end: Int,
                                 budget: inout Int) -> Int? {
        let r = run.count
        // Literal lines numbered by their bytes (byte for byte, not by Unicode equivalence);
        // `[..]` lines numbered by their parts, each distinct one matched once per actual line.
        var literalNumbers: [[UInt8]: Int32] = [:]
        var patternNumbers: [[[UInt8]]: Int32] = [:]
        var patterns: [(line: ExpectedLine, bytes: Int)] = []
        // Each position's line: a literal's number (from 0), or -1 - the `[..]` line's number.
        var positions: [Int32] = []
        positions.reserveCapacity(r)
        for line in run {
            switch line {
            case .literal(let text):
                let bytes = Array(text.utf8)
                if let n = literalNumbers[bytes] { positions.append(n) } else {
                    let n = Int32(literalNumbers.count)
                    literalNumbers[bytes] = n
                    positions.append(n)
                }
            case .pattern(let parts):
                let key = parts.map { Array($0.utf8) }
                if let n = patternNumbers[key] { positions.append(-1 - n) } else {
                    let n = Int32(patterns.count)
                    patternNumbers[key] = n
                    patterns.append((line, parts.reduce(0) { $0 + $1.utf8.count }))
                    positions.append(-1 - n)
                }
            case .anyLines:
                return -1
            }
        }
        if patterns.isEmpty {
            return leftmostLiteral(positions, literalNumbers, in: actual, from: start, to: end, budget: &budget)
        }
        // state bit i: the run's first i + 1 lines match the actual lines ending at the last one
        // looked at; `active` lists its non-zero words in increasing order, so a line costs what
        // its possible positions are, not the run's length.
        let words = (r + 63) / 64
        var state = [UInt64](repeating: 0, count: words)
        var active: [Int] = [], touched: [Int] = [], next: [Int] = []
        // Each `[..]` line's verdict on the actual line `checkedAt` is `verdict`.
        var checkedAt = [Int](repeating: -1, count: patterns.count)
        var verdict = [Bool](repeating: false, count: patterns.count)
        for j in start..<end {
            let line = actual[j]
            let number = literalNumbers[Array(line.utf8)] ?? -1
            // The words position i can be in at this line (i == 0, or bit i - 1 set), from the top,
            // so that each word's carry is read from the word below before that one changes.
            touched.removeAll(keepingCapacity: true)
            for w in active.reversed() {
                if w + 1 < words && w + 1 < touched.last ?? Int.max { touched.append(w + 1) }
                touched.append(w)
            }
            if touched.last != 0 { touched.append(0) }
            var steps = touched.count
            next.removeAll(keepingCapacity: true)
            for w in touched {
                let old = state[w]
                var candidates = (old << 1) | (w == 0 ? 1 : state[w - 1] >> 63)
                var word: UInt64 = 0
                while candidates != 0 {
                    let bit = candidates.trailingZeroBitCount
                    let i = w * 64 + bit
                    if i >= r { break }
                    candidates &= candidates - 1
                    steps += 1
                    let at = positions[i]
                    let ok: Bool
                    if at >= 0 {
                        ok = at == number
                    } else {
                        let p = Int(-1 - at)
                        if checkedAt[p] != j {
                            checkedAt[p] = j
                            verdict[p] = patterns[p].line.matches(line)
                            steps += line.utf8.count + patterns[p].bytes
                        }
                        ok = verdict[p]
                    }
                    if ok { word |= 1 << UInt64(bit) }
                }
                state[w] = word
                if word != 0 { next.append(w) }
            }
            active.removeAll(keepingCapacity: true)
            active.append(contentsOf: next.reversed())
            budget -= steps
            if budget < 0 { return nil }
            if state[(r - 1) / 64] & (1 << UInt64((r - 1) % 64)) != 0 { return j + 1 }
        }
        return -1
    }

    /// `leftmost` for a run of literal lines (`positions`: each line's number in `numbers`):
    /// Knuth–Morris–Pratt over the numbers of the actual lines. What it spends is counted in
    /// `budget` too, never past it: it is linear.
    /// - Complexity: O(r + k) steps and the bytes of the k actual lines it scans.
    private static func leftmostLiteral(_ positions: [Int32], _ numbers: [[UInt8]: Int32], in actual: [Substring],
                                        from start: Int, to end: Int, budget: inout Int) -> Int {
        let r = positions.count
        var failure = [Int](repeating: 0, count: r)
        var k = 0
        for i in 1..<r {
            while k > 0 && positions[i] != positions[k] { k = failure[k - 1] }
            if positions[i] == positions[k] { k += 1 }
            failure[i] = k
        }
        k = 0
        budget -= r
        for j in start..<end {
            budget -= 1
            let number = numbers[Array(actual[j].utf8)] ?? -1
            while k > 0 && number != positions[k] { k = failure[k - 1] }
            if number == positions[k] {
                k += 1
                if k == r { return j + 1 }
            }
        }
        return -1
    }

    /// The largest block (expected × actual lines, after common ends are set aside) aligned line by
    /// line; past it the differing middle is replaced whole.
    static let alignmentLimit = 4_000_000
    /// The most bytes compared when matching the differing middle's `[..]` lines against its actual
    /// lines before the alignment (each `[..]` line against each actual line); past it the middle
    /// is replaced whole, as past `alignmentLimit`.
    static let patternWorkLimit = 16_000_000

    /// The edit that turns `expected` into a block matching `actual` while keeping every wildcard
    /// that matched.
    ///
    /// It keeps as many expected lines as it can (each lost line costs more than all insertions);
    /// among those choices it prefers letting `...` stand for unchanged lines over writing them out,
    /// and replacing a line in place over deleting one and inserting another elsewhere. The result
    /// always matches `actual`, so applying it twice changes nothing the second time.
    ///
    /// - Complexity: O(e·a) time and space in the numbers of differing lines.
    static func align(_ expected: [ExpectedLine], _ actual: [Substring]) -> [TranscriptEdit] {
        var head = 0
        while head < expected.count, head < actual.count, expected[head] != .anyLines,
              expected[head].matches(actual[head]) { head += 1 }
        var tail = 0
        while tail < expected.count - head, tail < actual.count - head,
              expected[expected.count - 1 - tail] != .anyLines,
              expected[expected.count - 1 - tail].matches(actual[actual.count - 1 - tail]) { tail += 1 }
        let e = expected[head..<expected.count - tail]
        let a = actual[head..<actual.count - tail]
        var edits = (0..<head).map(TranscriptEdit.keep)
        if e.count * a.count <= alignmentLimit, let table = MatchTable(e, a) {
            edits += alignMiddle(e, a, table)
        } else {
            edits += e.indices.map(TranscriptEdit.delete) + a.indices.map(TranscriptEdit.insert)
        }
        edits += (expected.count - tail..<expected.count).map(TranscriptEdit.keep)
        return grouped(edits)
    }

    /// Dynamic programming over the middle: `cost[i][j]` is the least cost of turning expected
    /// lines from `i` into actual lines from `j`.
    private static func alignMiddle(_ e: ArraySlice<ExpectedLine>, _ a: ArraySlice<Substring>, _ table: MatchTable) -> [TranscriptEdit] {
        let n = e.count, m = a.count
        let lost = 2 * m + 1, insert = 2, absorb = 1
        let width = m + 1
        var cost = [Int](repeating: 0, count: (n + 1) * width)
        func at(_ i: Int, _ j: Int) -> Int { cost[i * width + j] }
        func matches(_ i: Int, _ j: Int) -> Bool { table.matches(i, j) }
        func isAny(_ i: Int) -> Bool { e[e.startIndex + i] == .anyLines }
        for j in stride(from: m - 1, through: 0, by: -1) { cost[n * width + j] = insert + at(n, j + 1) }
        for i in stride(from: n - 1, through: 0, by: -1) {
            cost[i * width + m] = (isAny(i) ? 0 : lost) + at(i + 1, m)
            for j in stride(from: m - 1, through: 0, by: -1) {
                if isAny(i) {
                    cost[i * width + j] = min(at(i + 1, j), absorb + at(i, j + 1))
                } else {
                    let pair = (matches(i, j) ? 0 : lost) + at(i + 1, j + 1)
                    cost[i * width + j] = min(pair, lost + at(i + 1, j), insert + at(i, j + 1))
                }
            }
        }
        var edits: [TranscriptEdit] = []
        var i = 0, j = 0
        while i < n || j < m {
            let here = at(i, j)
            let ei = e.startIndex + i, aj = a.startIndex + j
            if i < n, isAny(i) {
                if at(i + 1, j) == here {
                    edits.append(.keep(ei)); i += 1
                } else {
                    j += 1
                }
            } else if i < n, j < m, matches(i, j), at(i + 1, j + 1) == here {
                edits.append(.keep(ei)); i += 1; j += 1
            } else if i < n, j < m, lost + at(i + 1, j + 1) == here {
                edits.append(.delete(ei)); edits.append(.insert(aj)); i += 1; j += 1
            } else if i < n, lost + at(i + 1, j) == here {
                edits.append(.delete(ei)); i += 1
            } else {
                edits.append(.insert(aj)); j += 1
            }
        }
        return edits
    }

    /// Which expected line of the middle matches which actual line, worked out once before the
    /// alignment, so each of its cells costs O(1) instead of comparing two lines (a transcript of
    /// long lines took minutes): literal lines by number (each distinct actual line numbered
    /// once, by its bytes), `[..]` lines in a bit table.
    struct MatchTable {
        /// Each actual line's number; each literal expected line's number, -1 for none or a `[..]`
        /// line or `...`.
        private var actualIDs: [Int32] = []
        private var expectedIDs: [Int32] = []
        /// For the expected `[..]` line at `patternRow[i]` (-1 for others), bit `j` of its row.
        private var patternRow: [Int32] = []
        private var bits: [UInt64] = []
        private let rowWords: Int

        /// Nil when matching the `[..]` lines would compare more than `patternWorkLimit` bytes.
        /// - Complexity: O(bytes of both sides), plus at most `patternWorkLimit` for `[..]` lines.
        init?(_ e: ArraySlice<ExpectedLine>, _ a: ArraySlice<Substring>) {
            rowWords = (a.count + 63) / 64
            var patternLines = 0, patternBytes = 0, actualBytes = 0
            for line in e { if case .pattern(let parts) = line { patternLines += 1; patternBytes += parts.reduce(0) { $0 + $1.utf8.count } } }
            for line in a { actualBytes += line.utf8.count }
            let work = patternLines.multipliedReportingOverflow(by: actualBytes + a.count)
            let work2 = a.count.multipliedReportingOverflow(by: patternBytes)
            guard !work.overflow, !work2.overflow, work.partialValue + work2.partialValue <= TranscriptMatcher.patternWorkLimit else {
                return nil
            }
            var numbers: [[UInt8]: Int32] = [:]
            actualIDs.reserveCapacity(a.count)
            for line in a {
                let bytes = Array(line.utf8)
                if let n = numbers[bytes] {
                    actualIDs.append(n)
                } else {
                    let n = Int32(numbers.count)
                    numbers[bytes] = n
                    actualIDs.append(n)
                }
            }
            for line in e {
                switch line {
                case .literal(let text):
                    expectedIDs.append(numbers[Array(text.utf8)] ?? -1)
                    patternRow.append(-1)
                case .pattern:
                    expectedIDs.append(-1)
                    let row = Int32(bits.count / max(1, rowWords))
                    patternRow.append(row)
                    var words = [UInt64](repeating: 0, count: rowWords)
                    for (j, actual) in a.enumerated() where line.matches(actual) { words[j / 64] |= 1 << UInt64(j % 64) }
                    bits += words
                case .anyLines:
                    expectedIDs.append(-1)
                    patternRow.append(-1)
                }
            }
        }

        /// Whether expected line `i` of the middle matches actual line `j` (both from 0).
        /// - Complexity: O(1).
        func matches(_ i: Int, _ j: Int) -> Bool {
            let row = patternRow[i]
            if row >= 0 { return bits[Int(row) * rowWords + j / 64] & (1 << UInt64(j % 64)) != 0 }
            return expectedIDs[i] >= 0 && expectedIDs[i] == actualIDs[j]
        }
    }

    /// Within each run of changes, deletions first, then insertions, as a diff shows them.
    private static func grouped(_ edits: [TranscriptEdit]) -> [TranscriptEdit] {
        var result: [TranscriptEdit] = []
        result.reserveCapacity(edits.count)
        var deletions: [TranscriptEdit] = [], insertions: [TranscriptEdit] = []
        func flush() {
            result += deletions + insertions
            deletions.removeAll()
            insertions.removeAll()
        }
        for edit in edits {
            switch edit {
            case .keep: flush(); result.append(edit)
            case .delete: deletions.append(edit)
            case .insert: insertions.append(edit)
            }
        }
        flush()
        return result
    }
}
