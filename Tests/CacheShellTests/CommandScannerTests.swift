@testable import CacheShell
import Testing
import TestSupport

/// Feeds `text` line by line and returns, after each line, whether the scanner says a JSON value
/// is still open, next to what the lexer says of everything since the last complete command.
private func compare(_ text: String) -> [(scanner: Bool, lexer: Bool)] {
    var scanner = CommandScanner()
    var pending: [UInt8] = []
    var results: [(Bool, Bool)] = []
    // By bytes: "\r\n" is one Character, and a line ends at every line feed.
    for line in Array(text.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
        let bytes = Array(line) + [UInt8(ascii: "\n")]
        let end = bytes.withUnsafeBufferPointer { scanner.scan($0) }
        pending += bytes
        results.append((scanner.insideJSON, Lexer.needsContinuation(String(decoding: pending, as: UTF8.self))))
        #expect((end != nil) == !scanner.insideJSON)
        if end != nil { pending = [] }
    }
    return results
}

@Suite struct CommandScannerTests {
    @Test(arguments: [
        "get a\n",
        "put a {\n\"x\": 1\n}\n",
        "put a {\"x\": \"}\"\n}\n",
        "put a {\"x\": \"unterminated\n}\n",
        "put a [1, 2}\nget a\n",
        "put a {} {\n1\n}\n",
        "echo \"{\n",
        "echo \"a\\\"{\"\n",
        "# {\nget a\n",
        "get a#{\n}\n",
        "put a {\"a\\\n\": 1}\n",
        "put a {}x{\n}\n",
        "put a \"x\"{\n}\n",
        "echo step [1 of 3\nget a\n",
        "keys [fg]* {\n}\n",
        "keys [f\"]\"{\n}\n",
        "at 5s put k {\n}\n",
        "at 5s keys {\n}\n",
        "put k 1 # {\nget a\n",
        "put k #{\n}\n",
        "# x\nput k {\n}\n",
        "server set k [\n]\n",
        "ns x [\n]\n",
    ])
    func agreesWithTheLexer(text: String) {
        for (scanner, lexer) in compare(text) { #expect(scanner == lexer, "\(text.debugDescription)") }
    }

    @Test func agreesWithTheLexerOnRandomInput() {
        var random = SeededGenerator(seed: 5)
        let pieces = ["put", " ", "a", "{", "}", "[", "]", "\"", "\\", "\n", "#", "x", "\r", ":", ",", "\t",
                      "keys ", "echo ", "at 1s ", "server set ", "ttl=1s ", "--force "]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...30, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() + "\n"
            for (scanner, lexer) in compare(text) { #expect(scanner == lexer, "\(text.debugDescription)") }
        }
    }

    @Test func deepNestingPastTheLimitStillFindsTheEnd() {
        let deep = String(repeating: "[", count: Lexer.maxJSONDepth + 10) + "\n" + String(repeating: "]", count: Lexer.maxJSONDepth + 10) + "\nget a\n"
        for (scanner, lexer) in compare("put a " + deep) { #expect(scanner == lexer) }
    }
}
