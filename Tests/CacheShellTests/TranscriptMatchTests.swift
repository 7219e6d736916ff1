@testable import CacheShell
import Testing
import TestSupport

/// Expected output as a transcript writes it, one line per element.
private func expected(_ lines: [String]) -> [ExpectedLine] {
    lines.map { ExpectedLine(written: Substring($0)) }
}

private func actual(_ lines: [String]) -> [Substring] { lines.map { Substring($0) } }

/// The block `--update` writes: kept expected lines, then inserted actual lines, escaped.
private func updated(_ expectedLines: [String], _ actualLines: [String]) -> [String] {
    TranscriptMatcher.align(expected(expectedLines), actual(actualLines)).compactMap { edit in
        switch edit {
        case .keep(let i): expectedLines[i]
        case .delete: nil
        case .insert(let j): TranscriptSyntax.escape(Substring(actualLines[j]))
        }
    }
}

@Suite struct TranscriptMatchTests {
    @Test(arguments: [
        ("state: fresh", "state: fresh", true),
        ("state: fresh", "state: stale", false),
        ("state: fresh", "state: fresh ", false),
        ("age_ms: [..]", "age_ms: 1500", true),
        ("age_ms: [..]", "age_ms: ", true),
        ("age_ms: [..]", "age: 1", false),
        ("[..]", "", true),
        ("[..]", "anything at all", true),
        ("* [..] fetched [..] (server)", "* 2026-01-01T00:00:00.100Z fetched feed:1 fresh [1] (server)", true),
        ("* [..] fetched [..] (server)", "* 2026-01-01T00:00:00.100Z refreshed feed:1 fresh [1] (server)", false),
        ("a[..]b[..]b", "ab", false),
        ("a[..]b[..]b", "abb", true),
        ("a[..]a", "a", false),
        // An escaped line is text, not a prompt; `[..]` in it still matches.
        ("\\cachesh> x", "cachesh> x", true),
        ("\\...", "...", true),
        ("\\\\back", "\\back", true),
        ("\\[..]> x", "cachesh> x", true),
        // Byte for byte: a precomposed é is not e and a combining accent.
        ("caf\u{E9}", "cafe\u{301}", false),
    ] as [(String, String, Bool)])
    func lineMatchesByTextAndWildcard(pattern: String, line: String, matches: Bool) {
        #expect(ExpectedLine(written: Substring(pattern)).matches(Substring(line)) == matches)
    }

    @Test(arguments: [
        ([], [], true),
        ([], ["a"], false),
        (["a"], [], false),
        (["..."], [], true),
        (["..."], ["a", "b", "c"], true),
        (["a", "...", "d"], ["a", "b", "c", "d"], true),
        (["a", "...", "d"], ["a", "d"], true),
        (["a", "...", "d"], ["a", "b", "c"], false),
        (["...", "x", "..."], ["a", "x", "b"], true),
        (["...", "x", "..."], ["a", "b"], false),
        (["...", "b[..]", "c"], ["b1", "b2", "c"], true),
        (["a", "...", "...", "b"], ["a", "b"], true),
    ] as [([String], [String], Bool)])
    func blockMatchesWithAnyLines(pattern: [String], lines: [String], matches: Bool) {
        #expect(TranscriptMatcher.matches(expected(pattern), actual(lines)) == matches)
    }

    @Test(arguments: [
        // A changed line is replaced in place.
        (["a", "b", "c"], ["a", "x", "c"], ["a", "x", "c"]),
        (["a", "b", "c"], ["a", "c"], ["a", "c"]),
        (["a", "c"], ["a", "b", "c"], ["a", "b", "c"]),
        ([], ["x"], ["x"]),
        (["x"], [], []),
        // A `[..]` line that matched stays; one that does not is replaced.
        (["age: [..]", "state: fresh"], ["age: 5", "state: stale"], ["age: [..]", "state: stale"]),
        (["age: [..]"], ["size: 5"], ["size: 5"]),
        // `...` keeps standing for the lines it matched; the line after it is replaced.
        (["...", "hits: 3"], ["n1", "n2", "n3", "hits: 4"], ["...", "hits: 4"]),
        (["a", "...", "b"], ["a", "q", "r", "c"], ["a", "...", "c"]),
        (["a", "...", "z"], ["a", "q", "z", "extra"], ["a", "...", "z", "extra"]),
        // A `...` is never removed, even where it now stands for nothing.
        (["a", "...", "b"], ["x", "y"], ["x", "...", "y"]),
        // Output that looks like a prompt or a wildcard is written escaped.
        (["a"], ["cachesh> x", "...", "\\b"], ["\\cachesh> x", "\\...", "\\\\b"]),
    ] as [([String], [String], [String])])
    func updateKeepsMatchedWildcardsAndWritesTheRest(old: [String], new: [String], result: [String]) {
        let block = updated(old, new)
        #expect(block == result)
        // What update writes matches, so a second update changes nothing.
        let again = expected(block)
        #expect(TranscriptMatcher.matches(again, actual(new)))
    }

    @Test func updateOfALargeBlockStaysCorrectPastTheAlignmentLimit() {
        let old = (0..<2500).map { "old \($0)" }
        let new = (0..<2500).map { "new \($0)" }
        let block = updated(old, new)
        #expect(block == new)
    }

    @Test func groupsDeletionsBeforeInsertionsWithinAChange() {
        let edits = TranscriptMatcher.align(expected(["a", "b", "c", "d"]), actual(["a", "x", "y", "d"]))
        #expect(edits == [.keep(0), .delete(1), .delete(2), .insert(1), .insert(2), .keep(3)])
    }
}

/// The meaning of `[..]` in a line, by memoised recursion over (pattern byte, line byte):
/// slow but plainly right, to check the linear matcher against.
private func referenceLineMatch(_ pattern: String, _ line: String) -> Bool {
    if pattern == "..." { return false }
    let text = pattern.hasPrefix("\\") ? String(pattern.dropFirst()) : pattern
    let p = Array(text.utf8), l = Array(line.utf8), marker = Array("[..]".utf8)
    var memo: [Int: Bool] = [:]
    func go(_ i: Int, _ j: Int) -> Bool {
        if let known = memo[i * (l.count + 1) + j] { return known }
        let result: Bool
        if i == p.count {
            result = j == l.count
        } else if p.count - i >= 4, Array(p[i..<i + 4]) == marker {
            result = (j...l.count).contains { go(i + 4, $0) }
        } else {
            result = j < l.count && p[i] == l[j] && go(i + 1, j + 1)
        }
        memo[i * (l.count + 1) + j] = result
        return result
    }
    return go(0, 0)
}

/// The meaning of `...` over lines, by memoised recursion, with the reference line matcher.
private func referenceBlockMatch(_ pattern: [String], _ lines: [String]) -> Bool {
    var memo: [Int: Bool] = [:]
    func go(_ i: Int, _ j: Int) -> Bool {
        if let known = memo[i * (lines.count + 1) + j] { return known }
        let result: Bool
        if i == pattern.count {
            result = j == lines.count
        } else if pattern[i] == "..." {
            result = (j...lines.count).contains { go(i + 1, $0) }
        } else {
            result = j < lines.count && referenceLineMatch(pattern[i], lines[j]) && go(i + 1, j + 1)
        }
        memo[i * (lines.count + 1) + j] = result
        return result
    }
    return go(0, 0)
}

@Suite struct TranscriptMatchLinearTests {
    /// Inputs built so that a matcher that retries each part at every position, or lets `...`
    /// backtrack line by line, does quadratic work: the answers must still be right.
    @Test func adversarialLinePatternsMatchCorrectly() {
        let long = String(repeating: "a", count: 20_000)
        let cases: [(String, String, Bool)] = [
            ("[..]" + long + "b[..]", long + long + "b", true),
            ("[..]" + long + "b[..]", long + long, false),
            ("[..]" + long + "b", long + long + "b", true),
            (String(repeating: "a[..]", count: 2_000) + "b", String(repeating: "a", count: 40_000), false),
            (String(repeating: "a[..]", count: 2_000) + "a", String(repeating: "a", count: 40_000), true),
            ("[..]aab[..]aab[..]", String(repeating: "a", count: 30_000) + "b" + String(repeating: "a", count: 30_000) + "b", true),
            ("[..]abab[..]", String(repeating: "ab", count: 10_000) + "a", true),
            ("[..]abacabab", "abacabacabab", true),
            ("[..]abacabad[..]", "abacabacabacabad", true),
        ]
        for (pattern, line, expected) in cases {
            #expect(ExpectedLine(written: Substring(pattern)).matches(Substring(line)) == expected,
                    "\(pattern.prefix(40))… against \(line.prefix(40))…")
        }
    }

    /// The steps a run's search spends, counted (not timed): for runs between `...` that nearly
    /// match at every line, twice the lines cost about twice the steps. Before, a run of distinct
    /// `[..]` lines tried each against every actual line, and a run's bit set was scanned whole
    /// at each line: four times the steps for twice the lines.
    @Test(arguments: ["distinct [..] lines", "a long [..] run matched late", "literal near-miss"])
    func theSearchOfARunSpendsStepsInProportionToItsInput(kind: String) {
        func spent(_ n: Int) -> Int {
            let lines: [String], pattern: [String]
            switch kind {
            case "distinct [..] lines":
                lines = (0..<n).map { "item \($0)," }
                pattern = ["..."] + (1..<n).map { "[..] \($0)," } + ["..."]
            case "a long [..] run matched late":
                lines = (0..<n).map { "x\($0 % 7)" } + (0..<n).map { "y\($0)" }
                pattern = ["..."] + (0..<n).map { $0 % 2 == 0 ? "y[..]" : "y\($0)" } + ["..."]
            default:
                lines = Array(repeating: "a", count: 2 * n) + ["b"]
                pattern = ["..."] + Array(repeating: "a", count: n) + ["b", "..."]
            }
            var budget = Int.max
            #expect(TranscriptMatcher.matches(expected(pattern), actual(lines), budget: &budget) == true)
            return Int.max - budget
        }
        let small = spent(2_000), large = spent(4_000)
        #expect(large <= small * 5 / 2, "\(kind): \(small) steps, then \(large) for twice the lines")
    }

    /// Past its budget the search stops and says so (nil), rather than deciding wrongly; with
    /// enough budget the same block matches.
    @Test func aRunThatNearlyMatchesEverywhereStopsAtItsBudget() {
        let lines = Array(repeating: "a", count: 3_000) + ["b"]
        let pattern = expected(["..."] + Array(repeating: "[..]a", count: 1_500) + ["[..]b", "..."])
        var small = 100_000
        #expect(TranscriptMatcher.matches(pattern, actual(lines), budget: &small) == nil)
        var enough = Int.max
        #expect(TranscriptMatcher.matches(pattern, actual(lines), budget: &enough) == true)
    }

    @Test func linePatternsAgreeWithTheReferenceOnRandomInput() {
        var random = SeededGenerator(seed: 7)
        let pieces = ["a", "b", "ab", "[..]", "[.", ".]", "\\", "é", "e\u{301}"]
        for _ in 0..<3_000 {
            let pattern = (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let line = (0..<Int.random(in: 0...8, using: &random)).map { _ in ["a", "b", "[", ".", "]", "é"].randomElement(using: &random)! }.joined()
            #expect(ExpectedLine(written: Substring(pattern)).matches(Substring(line)) == referenceLineMatch(pattern, line),
                    "\(pattern) against \(line)")
        }
    }

    @Test func adversarialBlocksMatchCorrectly() {
        let lines = Array(repeating: "a", count: 5_000)
        // Each run after `...` nearly matches everywhere.
        let runs = Array(repeating: "a", count: 300)
        #expect(TranscriptMatcher.matches(expected(["..."] + runs + ["b"]), actual(lines)) == false)
        #expect(TranscriptMatcher.matches(expected(["..."] + runs + ["..."]), actual(lines)) == true)
        #expect(TranscriptMatcher.matches(expected(["..."] + runs + ["b", "b", "..."]), actual(lines + ["b"])) == false)
        #expect(TranscriptMatcher.matches(expected(["..."] + runs + ["b", "..."]), actual(lines + ["b", "c"])) == true)
        // The same with `[..]` lines, and many `...` in a row of runs.
        let wild = Array(repeating: "[..]a", count: 200)
        #expect(TranscriptMatcher.matches(expected(["..."] + wild + ["...", "a", "...", "b"]), actual(lines + ["b"])) == true)
        #expect(TranscriptMatcher.matches(expected(["..."] + wild + ["x", "..."]), actual(lines)) == false)
        let many = Array(repeating: ["...", "a"], count: 1_000).flatMap { $0 } + ["..."]
        #expect(TranscriptMatcher.matches(expected(many), actual(lines)) == true)
        #expect(TranscriptMatcher.matches(expected(many + ["b"]), actual(lines)) == false)
    }

    @Test func blocksAgreeWithTheReferenceOnRandomInput() {
        var random = SeededGenerator(seed: 11)
        let patternLines = ["...", "a", "b", "[..]", "a[..]", "[..]b", "\\...", "", "é"]
        let actualLines = ["a", "b", "ab", "...", "", "é", "e\u{301}"]
        for _ in 0..<3_000 {
            let pattern = (0..<Int.random(in: 0...7, using: &random)).map { _ in patternLines.randomElement(using: &random)! }
            let lines = (0..<Int.random(in: 0...9, using: &random)).map { _ in actualLines.randomElement(using: &random)! }
            #expect(TranscriptMatcher.matches(expected(pattern), actual(lines)) == referenceBlockMatch(pattern, lines),
                    "\(pattern) against \(lines)")
        }
        // Runs longer than one 64-bit word of the bit-parallel search.
        for _ in 0..<200 {
            let run = (0..<Int.random(in: 60...140, using: &random)).map { _ in ["a", "b", "[..]"].randomElement(using: &random)! }
            let lines = (0..<Int.random(in: 100...300, using: &random)).map { _ in ["a", "b"].randomElement(using: &random)! }
            let pattern = ["..."] + run + ["..."]
            #expect(TranscriptMatcher.matches(expected(pattern), actual(lines)) == referenceBlockMatch(pattern, lines))
        }
    }
}
