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
    init(written line: Substring) {
        if line == TranscriptSyntax.anyLines {
            self = .anyLines
            return
        }
        let text = line.hasPrefix("\\") ? line.dropFirst() : line
        let marker = Array(TranscriptSyntax.anyText.utf8)
        var parts: [Substring] = []
        var partStart = text.utf8.startIndex
        var i = partStart
        while text.utf8.distance(from: i, to: text.utf8.endIndex) >= marker.count {
            if text.utf8[i...].starts(with: marker) {
                parts.append(text[partStart..<i])
                i = text.utf8.index(i, offsetBy: marker.count)
                partStart = i
            } else {
                i = text.utf8.index(after: i)
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
    /// - Complexity: O(n·k) in the length of the line and the number of `[..]`; O(n) for literal text.
    func matches(_ actual: Substring) -> Bool {
        switch self {
        case .anyLines:
            return false
        case .literal(let text):
            return text.utf8.elementsEqual(actual.utf8)
        case .pattern(let parts):
            let line = actual.utf8
            let first = parts[0].utf8, last = parts[parts.count - 1].utf8
            guard line.count >= first.count + last.count, line.starts(with: first),
                  line.reversed().starts(with: last.reversed()) else { return false }
            // Leftmost placement of each middle part is optimal when every gap accepts any text.
            var start = line.index(line.startIndex, offsetBy: first.count)
            let end = line.index(line.endIndex, offsetBy: -last.count)
            for part in parts.dropFirst().dropLast() {
                guard let found = Self.find(Array(part.utf8), in: line[start..<end]) else { return false }
                start = found
            }
            return true
        }
    }

    /// The index just past the first occurrence of `needle` in `haystack`.
    private static func find(_ needle: [UInt8], in haystack: Substring.UTF8View.SubSequence) -> Substring.UTF8View.Index? {
        if needle.isEmpty { return haystack.startIndex }
        var i = haystack.startIndex
        while haystack.distance(from: i, to: haystack.endIndex) >= needle.count {
            if haystack[i...].starts(with: needle) { return haystack.index(i, offsetBy: needle.count) }
            i = haystack.index(after: i)
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
    /// standing for any number of lines.
    ///
    /// - Complexity: O(e + a) without `...`; at worst O(e·a) in the numbers of lines.
    static func matches(_ expected: [ExpectedLine], _ actual: [Substring]) -> Bool {
        var e = 0, a = 0
        var star: (e: Int, a: Int)?
        while a < actual.count {
            if e < expected.count, expected[e] == .anyLines {
                star = (e, a)
                e += 1
            } else if e < expected.count, expected[e].matches(actual[a]) {
                e += 1
                a += 1
            } else if let last = star {
                // Let the last `...` take one more line and retry from there.
                star = (last.e, last.a + 1)
                e = last.e + 1
                a = last.a + 1
            } else {
                return false
            }
        }
        while e < expected.count, expected[e] == .anyLines { e += 1 }
        return e == expected.count
    }

    /// The largest block (expected × actual lines, after common ends are set aside) aligned line by
    /// line; past it the differing middle is replaced whole.
    static let alignmentLimit = 4_000_000

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
        if e.count * a.count > alignmentLimit {
            edits += e.indices.map(TranscriptEdit.delete) + a.indices.map(TranscriptEdit.insert)
        } else {
            edits += alignMiddle(e, a)
        }
        edits += (expected.count - tail..<expected.count).map(TranscriptEdit.keep)
        return grouped(edits)
    }

    /// Dynamic programming over the middle: `cost[i][j]` is the least cost of turning expected
    /// lines from `i` into actual lines from `j`.
    private static func alignMiddle(_ e: ArraySlice<ExpectedLine>, _ a: ArraySlice<Substring>) -> [TranscriptEdit] {
        let n = e.count, m = a.count
        let lost = 2 * m + 1, insert = 2, absorb = 1
        let width = m + 1
        var cost = [Int](repeating: 0, count: (n + 1) * width)
        func at(_ i: Int, _ j: Int) -> Int { cost[i * width + j] }
        func matches(_ i: Int, _ j: Int) -> Bool { e[e.startIndex + i].matches(a[a.startIndex + j]) }
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
