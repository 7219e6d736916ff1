@testable import CacheShell
import Testing

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
