import CacheCore
import Testing
import TestSupport

/// Glob semantics by memoised recursion: slow but plainly right. A class is `[`, optional `!` or
/// `^`, a first member (which may be `]`), more members up to the first `]`, each a byte or `x-y`.
private func reference(_ pattern: String, _ text: String) -> Bool {
    let p = Array(pattern.utf8), t = Array(text.utf8)
    func classAt(_ start: Int) -> (members: (UInt8) -> Bool, next: Int)? {
        var i = start + 1
        var negate = false
        if i < p.count, p[i] == UInt8(ascii: "!") || p[i] == UInt8(ascii: "^") { negate = true; i += 1 }
        var ranges: [(UInt8, UInt8)] = []
        var first = true
        while i < p.count {
            if p[i] == UInt8(ascii: "]") && !first {
                let found = ranges
                return ({ byte in found.contains { $0.0 <= byte && byte <= $0.1 } != negate }, i + 1)
            }
            first = false
            if i + 2 < p.count, p[i + 1] == UInt8(ascii: "-"), p[i + 2] != UInt8(ascii: "]") {
                ranges.append((p[i], p[i + 2])); i += 3
            } else {
                ranges.append((p[i], p[i])); i += 1
            }
        }
        return nil
    }
    var memo: [Int: Bool] = [:]
    func go(_ i: Int, _ j: Int) -> Bool {
        if let known = memo[i * (t.count + 1) + j] { return known }
        let result: Bool
        if i == p.count {
            result = j == t.count
        } else if p[i] == UInt8(ascii: "*") {
            result = go(i + 1, j) || (j < t.count && go(i, j + 1))
        } else if j == t.count {
            result = false
        } else if p[i] == UInt8(ascii: "?") {
            result = go(i + 1, j + 1)
        } else if p[i] == UInt8(ascii: "["), let (members, next) = classAt(i) {
            result = members(t[j]) && go(next, j + 1)
        } else {
            result = p[i] == t[j] && go(i + 1, j + 1)
        }
        memo[i * (t.count + 1) + j] = result
        return result
    }
    return go(0, 0)
}

@Suite struct GlobTests {
    @Test(arguments: [
        ("feed:*", "feed:home", true),
        ("*:[1]", "profile:1", true),
        ("*:[!1]", "profile:1", false),
        ("[a-c]?", "bx", true),
        ("[]]", "]", true),
        ("[!]]", "a", true),
        ("[", "[", true),
        ("a[b", "a[b", true),
        ("[z-a]", "m", false),
        ("[a-]", "-", true),
        ("***", "", true),
    ] as [(String, String, Bool)])
    func matchesShellGlobs(pattern: String, key: String, matches: Bool) {
        #expect(Glob(pattern).matches(key) == matches)
    }

    @Test func agreesWithTheReferenceOnRandomInput() {
        var random = SeededGenerator(seed: 3)
        let pieces = ["a", "b", ":", "*", "?", "[", "]", "!", "-", "[a-b]", "[!a]", "é"]
        for _ in 0..<5_000 {
            let pattern = (0..<Int.random(in: 0...7, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let key = (0..<Int.random(in: 0...8, using: &random)).map { _ in ["a", "b", ":", "[", "]", "-", "é"].randomElement(using: &random)! }.joined()
            #expect(Glob(pattern).matches(key) == reference(pattern, key), "\(pattern) against \(key)")
        }
    }

    /// Patterns that make a backtracking matcher exponential, or a matcher that rescans an
    /// unclosed `[` at each step cubic: the answers must still be right.
    @Test func adversarialPatternsMatchCorrectly() {
        let key = String(repeating: "a", count: 10_000)
        #expect(Glob(String(repeating: "*a", count: 500) + "b").matches(key) == false)
        #expect(Glob(String(repeating: "*a", count: 500)).matches(key) == true)
        #expect(Glob("*" + String(repeating: "[", count: Glob.maxLength - 1)).matches(key) == false)
        #expect(Glob("*" + String(repeating: "[a]", count: 300) + "*b").matches(key) == false)
        #expect(Glob(String(repeating: "?", count: 10_001)).matches(key) == false)
    }
}
