import CacheCore
import CacheShell
import Testing
import TestSupport

/// Lexes `text` to the end and describes each result as a user would see it:
/// a command as its words joined by ` · ` (quoted words as `q:TEXT`, JSON
/// words as `j:TEXT`), an error as its rendered line.
private func lexedLines(_ text: String, name: String? = "script.cachesh", semicolons: Bool = false) -> [String] {
    let source = SourceFile(name: name, text: text)
    var lexer = Lexer(source, semicolonSeparates: semicolons)
    var lines: [String] = []
    while let result = lexer.next() {
        switch result {
        case .success(let command):
            lines.append(command.words.map { word in
                switch word.kind {
                case .bare: word.text
                case .quoted: "q:" + word.text
                case .json: "j:" + word.text
                }
            }.joined(separator: " · "))
        case .failure(let diagnostic):
            lines.append(source.render(diagnostic))
        }
    }
    return lines
}

private func lexedCommands(_ text: String, semicolons: Bool = false) -> [RawCommand] {
    var lexer = Lexer(SourceFile(name: nil, text: text), semicolonSeparates: semicolons)
    var result: [RawCommand] = []
    while let next = lexer.next() {
        if case .success(let command) = next { result.append(command) }
    }
    return result
}

@Suite struct LexerTests {
    @Test(arguments: [
        ("put feed:1 {\"id\":1} tags=a", ["put · feed:1 · j:{\"id\":1} · tags=a"]),
        ("  get\tfeed:home  --force ", ["get · feed:home · --force"]),
        ("", []),
        ("\n\n  \t\n", []),
        // A value may span lines while brackets are open.
        ("put feed:1 {\n  \"id\": 1,\n  \"tags\": [\"a\", \"}\"]\n} tags=x\nget feed:1\n",
         ["put · feed:1 · j:{\n  \"id\": 1,\n  \"tags\": [\"a\", \"}\"]\n} · tags=x", "get · feed:1"]),
        ("put list [\n1,\n[2, 3]\n]", ["put · list · j:[\n1,\n[2, 3]\n]"]),
        ("put a {\"s\": \"brace { and \\\" quote\"}", ["put · a · j:{\"s\": \"brace { and \\\" quote\"}"]),
        // Comments.
        ("#!/usr/bin/env cachesh\n# header\n\n   # indented\nget a # trailing\nput a#b 1\n",
         ["get · a", "put · a#b · 1"]),
        // Quoted strings are JSON strings.
        (#"echo "hello world" "tab\there" "\u00e9\ud83d\ude00" "a\"b\\c\/d" """#,
         ["echo · q:hello world · q:tab\there · q:é😀 · q:a\"b\\c/d · q:"]),
        ("echo \"raw\ttab\"", ["echo · q:raw\ttab"]),
        // Without `;` mode a semicolon is an ordinary character.
        ("put a 1; get a", ["put · a · 1; · get · a"]),
        // CRLF line ends.
        ("get a\r\nput b {\r\n\"x\": 1\r\n}\r\n\r\n# c\r\nget b\r\n",
         ["get · a", "put · b · j:{\r\n\"x\": 1\r\n}", "get · b"]),
        ("echo \"a\"\r\n", ["echo · q:a"]),
    ] as [(String, [String])])
    func splitsCommandsAndWords(text: String, expected: [String]) {
        #expect(lexedLines(text) == expected)
    }

    @Test(arguments: [
        ("put a 1; get a;;get b ;", ["put · a · 1", "get · a", "get · b"]),
        ("put a {\"x\": \";\"}; echo \"a;b\";get a", ["put · a · j:{\"x\": \";\"}", "echo · q:a;b", "get · a"]),
        ("put a {\n\"x\": 1;\n}; get a", ["put · a · j:{\n\"x\": 1;\n}", "get · a"]),
        // A comment ends at the next `;` (or the line's end).
        ("get a # note; get b\nget c", ["get · a", "get · b", "get · c"]),
        ("# note; get b", ["get · b"]),
        ("put a 1 #3; get a", ["put · a · 1 · #3", "get · a"]),
        // A `;` inside a `name=` option's JSON value is text; after the value it separates.
        ("server set k 1 headers={\"Cache-Control\":\"max-age=1;x\"}; get k",
         ["server · set · k · 1 · headers={\"Cache-Control\":\"max-age=1;x\"}", "get · k"]),
        ("expect peek s value=\"a;b\";get s", ["expect · peek · s · value=\"a;b\"", "get · s"]),
        ("expect peek s value=[\"a\\\";\"]; get s", ["expect · peek · s · value=[\"a\\\";\"]", "get · s"]),
        ("put a=1;get a", ["put · a=1", "get · a"]),
        ("put a \"x\\q\"; get a; get b", ["-c:1: error: invalid escape \"\\q\" in quoted string (use \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)", "get · a", "get · b"]),
        // Where no JSON value is taken, a bracket still open at a `;` is an error of that command
        // alone: the commands after it run (it swallowed the rest of the line).
        ("echo step [1 of 3; get a; keys {x;get b", [
            #"-c:1: error: unbalanced "[": it is not closed before the ; that ends its command (only a JSON value may hold a ; in -c; quote text that holds a bracket)"#,
            "get · a",
            #"-c:1: error: unbalanced "{": it is not closed before the ; that ends its command (only a JSON value may hold a ; in -c; quote text that holds a bracket)"#,
            "get · b"]),
        ("keys [fg]*; echo [\"a;b\"]; get a", ["keys · [fg]*", "echo · j:[\"a;b\"]", "get · a"]),
    ] as [(String, [String])])
    func semicolonsSeparateCommandsInCommandLineMode(text: String, expected: [String]) {
        #expect(lexedLines(text, name: "-c", semicolons: true) == expected)
    }

    /// `attach -c` sends each command of its text on a line of its own: the commands are where
    /// `cachesh -c` finds them, a command that does not lex is kept whole (the app reports it),
    /// comments are left out and a value's lines are joined.
    @Test(arguments: [
        ("keys; echo x [1; now ;; keys", ["keys", "echo x [1", "now", "keys"]),
        // Where a JSON value may be taken (a `peek KEY`'s value), it runs to its closing bracket.
        ("keys; peek x [1; now ;; keys", ["keys", "peek x [1; now ;; keys"]),
        ("put a {\"x\": \";\"}; echo \"a;b\" # note; more\n  get a ;", ["put a {\"x\": \";\"}", "echo \"a;b\"", "more", "get a"]),
        ("event patch k {\r\n  \"items\": [1,\n\t2]\n}; stats", ["event patch k { \"items\": [1, 2] }", "stats"]),
        ("server set k 1 headers={\"Cache-Control\":\"a;b\"}; get k", ["server set k 1 headers={\"Cache-Control\":\"a;b\"}", "get k"]),
        ("put a \"x\\q\"; get a", ["put a \"x\\q\"", "get a"]),
        ("# only a note; ;  ", []),
        // A comment before a command that does not lex ends at its `;`: the command is kept.
        ("# note; echo [x; keys", ["echo [x", "keys"]),
        ("keys; # note; echo [x", ["keys", "echo [x"]),
        ("# note; put k {\nkeys", ["put k { keys"]),
    ] as [(String, [String])])
    func inlineCommandsAreTheCommandsOfCommandLineMode(text: String, expected: [String]) {
        #expect(Lexer.inlineCommands(text) == expected)
        // Each one lexes again, on a line of its own, to the command (or an error) it was.
        func outcomes(_ text: String) -> [String] {
            lexedLines(text, name: "-c", semicolons: true).map { $0.hasPrefix("-c:") ? "an error" : $0 }
        }
        if !text.contains("\n") {
            #expect(Lexer.inlineCommands(text).flatMap(outcomes) == outcomes(text))
        }
    }

    @Test(arguments: [
        // `#` starts a comment at the start of a command or as a word of its own; elsewhere it is text.
        ("put a 1 # note\nput a#b 1 #3\n#x\n  #\nget a #", ["put · a · 1", "put · a#b · 1 · #3", "get · a"]),
        // Where no JSON value is taken, brackets balance on their line or the line is an error.
        ("echo step [1 of 3\nget a\nkeys [fg]*\nkeys {a\nget b",
         [#"script.cachesh:1: error: unbalanced "[": it is not closed on its line (only a JSON value may span lines; quote text that holds a bracket)"#,
          "get · a", "keys · [fg]*",
          #"script.cachesh:4: error: unbalanced "{": it is not closed on its line (only a JSON value may span lines; quote text that holds a bracket)"#,
          "get · b"]),
        ("echo {\"a\": [1, 2]}\nat 5s keys [a]\nat 5s put k [\n1]\nevent patch k {\n}\nserver set k [\n]",
         ["echo · j:{\"a\": [1, 2]}", "at · 5s · keys · j:[a]", "at · 5s · put · k · j:[\n1]", "event · patch · k · j:{\n}",
          "server · set · k · j:[\n]"]),
    ] as [(String, [String])])
    func commentsAndBracketsFollowTheCommand(text: String, expected: [String]) {
        #expect(lexedLines(text) == expected)
    }

    @Test(arguments: [
        ("get a\nput b {\n\"x\": [1,\n",
         ["get · a", #"script.cachesh:2: error: unterminated JSON value: "{" opened here is never closed"#]),
        ("get a\nput b {\n\"x\": [1,\n]\n",
         ["get · a", #"script.cachesh:2: error: unterminated JSON value: "{" opened here is never closed"#]),
        ("put a [\n1\n]\nput b {\"x\": 1\n,\"y\": [2]}\nget \"oops\nget c",
         ["put · a · j:[\n1\n]", "put · b · j:{\"x\": 1\n,\"y\": [2]}",
          #"script.cachesh:6: error: unterminated quoted string: the " opened here has no closing " on its line"#,
          "get · c"]),
        ("put a {\"x\":1}b c\nget a",
         [#"script.cachesh:1: error: unexpected "b" right after a JSON value; separate words with a space"#, "get · a"]),
        ("echo \"a\"é", [#"script.cachesh:1: error: unexpected "é" right after a quoted string; separate words with a space"#]),
        ("echo \"a\"#", [##"script.cachesh:1: error: unexpected "#" right after a quoted string; separate words with a space"##]),
        ("put a {\n\"x\": [1}\nget a",
         [#"script.cachesh:2: error: mismatched "}" in JSON value: expected "]""#, "get · a"]),
        ("put a {\"x\": \"ab\n}\n",
         [#"script.cachesh:1: error: unterminated string in JSON value: the " opened here has no closing " on its line"#, "}"]),
        ("echo \"\\u12G4\"", [#"script.cachesh:1: error: invalid escape in quoted string: \u needs four hex digits"#]),
        ("echo \"\\u12\"", [#"script.cachesh:1: error: invalid escape in quoted string: \u needs four hex digits"#]),
        ("echo \"\\ud800x\"", [#"script.cachesh:1: error: invalid escape "\uD800" in quoted string: a surrogate must be part of a pair"#]),
        ("echo \"\\udc00\"", [#"script.cachesh:1: error: invalid escape "\uDC00" in quoted string: a surrogate must be part of a pair"#]),
        ("echo \"\\é\"", [#"script.cachesh:1: error: invalid escape "\é" in quoted string (use \", \\, \/, \b, \f, \n, \r, \t or \uXXXX)"#]),
        ("echo \"a\\\nget b", [#"script.cachesh:1: error: unterminated quoted string: the " opened here has no closing " on its line"#, "get · b"]),
        // The first error of a command is the one reported; its later words are still skipped cleanly.
        ("put \"a\\x\" {\n\"b\\q\": 1\n}\nget a",
         [#"script.cachesh:1: error: invalid escape "\x" in quoted string (use \", \\, \/, \b, \f, \n, \r, \t or \uXXXX)"#, "get · a"]),
    ] as [(String, [String])])
    func reportsErrorsAtTheirLineAndCarriesOn(text: String, expected: [String]) {
        #expect(lexedLines(text) == expected)
    }

    @Test func namesTheSourceOrNotInRenderedErrors() {
        let text = "get a\nput b \"x"
        let message = #"unterminated quoted string: the " opened here has no closing " on its line"#
        #expect(lexedLines(text, name: "-c") == ["get · a", "-c:2: error: " + message])
        #expect(lexedLines(text, name: "<stdin>") == ["get · a", "<stdin>:2: error: " + message])
        #expect(lexedLines(text, name: nil) == ["get · a", "error: " + message])
    }

    @Test func boundsJSONNestingAt512Levels() {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(lexedLines("put a " + deepest) == ["put · a · j:" + deepest])

        let tooDeep = String(repeating: "{\"a\":[", count: 300) + String(repeating: "]}", count: 300)
        #expect(lexedLines("get x\nput a " + tooDeep + "\nget a") ==
            ["get · x", "script.cachesh:2: error: JSON nested deeper than 512 levels", "get · a"])

        // The depth error wins over later damage in the same value.
        let tooDeepThenMismatched = String(repeating: "[", count: 513) + "]}"
        #expect(lexedLines(tooDeepThenMismatched + "\nget a") ==
            ["script.cachesh:1: error: JSON nested deeper than 512 levels", "get · a"])

        // Far deeper than any stack would allow for a recursive scanner.
        let runaway = String(repeating: "[", count: 1_000_000)
        #expect(lexedLines("put a " + runaway) == ["script.cachesh:1: error: JSON nested deeper than 512 levels"])
        #expect(Lexer.needsContinuation("put a " + runaway))
    }

    @Test func commandSpanLetsCallersSliceTheRestOfTheLine() throws {
        let text = "echo   hello   \"world\"  # note\nat 5s put a {\n\"x\": 1\n}  \n"
        let found = lexedCommands(text)
        try #require(found.count == 2)
        let bytes = Array(text.utf8)
        func slice(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        let echo = found[0]
        #expect(slice(echo.offset..<echo.end) == "echo   hello   \"world\"")
        #expect(slice(echo.words[1].offset..<echo.end) == "hello   \"world\"")
        #expect(echo.words.map(\.offset) == [0, 7, 15])
        #expect(echo.words.map(\.end) == [4, 12, 22])

        let at = found[1]
        #expect(slice(at.words[2].offset..<at.end) == "put a {\n\"x\": 1\n}")
        #expect(at.words[4] == Word(text: "{\n\"x\": 1\n}", kind: .json, offset: 43, end: 53))
    }

    @Test(arguments: [
        ("put a {", true),
        ("put a {\n\"x\": 1", true),
        ("put a {\n\"x\": [1, {\"y\": ", true),
        ("put a {} [", true),
        ("put a {\n\"x\": 1\n}", false),
        ("put a {\n\"x\": 1\n} ", false),
        ("get a", false),
        ("", false),
        ("put a \"{", false),
        ("put a {\"x\": \"ab", false),  // a string cannot continue on the next line
        ("put a {]", false),
        ("# put a {", false),
        ("put a {}\nput b [\n", true),
    ] as [(String, Bool)])
    func asksForContinuationOnlyInsideOpenJSON(text: String, expected: Bool) {
        #expect(Lexer.needsContinuation(text) == expected)
    }

    @Test(arguments: [
        ("ttl=5m", "ttl", "5m"),
        ("stale-if-error=30s", "stale-if-error", "30s"),
        ("tags=a,b", "tags", "a,b"),
        ("ttl=", "ttl", ""),
        ("in=a=b", "in", "a=b"),
        ("x2=1", "x2", "1"),
    ])
    func readsOptionWords(text: String, name: String, value: String) throws {
        let option = try #require(Word(text: text, kind: .bare, offset: 0, end: text.utf8.count).option)
        #expect(option.name == name)
        #expect(option.value == value)
    }

    @Test(arguments: ["=5m", "TTL=5m", "2x=1", "-a=1", "ttl", "feed:1", "a_b=1", "é=1"])
    func rejectsOtherWordsAsOptions(text: String) {
        #expect(Word(text: text, kind: .bare, offset: 0, end: text.utf8.count).option == nil)
    }

    @Test func readsFlagWordsAndOnlyBareOnes() {
        func word(_ text: String, _ kind: Word.Kind = .bare) -> Word {
            Word(text: text, kind: kind, offset: 0, end: text.utf8.count)
        }
        #expect(word("--force").flag == "force")
        #expect(word("--no-wait2").flag == "no-wait2")
        #expect(word("--").flag == nil)
        #expect(word("-force").flag == nil)
        #expect(word("---force").flag == nil)
        #expect(word("--Force").flag == nil)
        #expect(word("--force", .quoted).flag == nil)
        #expect(word("ttl=5m", .quoted).option == nil)
        #expect(word("--force").option == nil)
    }

    @Test func mapsByteOffsetsToLinesAndColumns() {
        let source = SourceFile(name: "f", text: "ab\ncd\n\né\r\nx")
        let expected = [(0, 1, 1), (2, 1, 3), (3, 2, 1), (5, 2, 3), (6, 3, 1), (7, 4, 1), (9, 4, 3), (11, 5, 1), (12, 5, 2)]
        for (offset, line, column) in expected {
            let location = source.location(ofOffset: offset)
            #expect(location.line == line && location.column == column, "offset \(offset)")
        }
        #expect(source.render(Diagnostic(message: "boom", offset: 11)) == "f:5: error: boom")
    }

    /// Every offset of random text maps to the line a count of the line feeds before it gives,
    /// runs of line feeds and a byte 0x0B after one (which the word-wide search flags too) among
    /// them; and text known to be UTF-8 makes the same source as the same bytes given unchecked.
    @Test func mapsEveryOffsetOfRandomTextToItsLine() {
        var generator = SeededGenerator(seed: 40)
        let pieces: [[UInt8]] = [[0x0A], [0x0B], [0x0A, 0x0B], [0x0A, 0x0A], [0x09], Array("ab".utf8), Array("é".utf8), [0x0D, 0x0A], [0x01]]
        for _ in 0..<300 {
            var bytes: [UInt8] = []
            let parts = Int(generator.next() % 40)
            for _ in 0..<parts { bytes += pieces[Int(generator.next() % UInt64(pieces.count))] }
            let firstLine = 1 + Int(generator.next() % 5)
            let source = bytes.withUnsafeBufferPointer { SourceFile(name: "f", bytes: $0, firstLine: firstLine) }
            let checked = bytes.withUnsafeBufferPointer { SourceFile(name: "f", validUTF8: $0, firstLine: firstLine) }
            #expect(source.lineCount == 1 + bytes.count { $0 == 0x0A })
            #expect(checked.lineCount == source.lineCount && checked.text == source.text)
            for offset in 0...bytes.count {
                let line = firstLine + bytes[..<offset].count { $0 == 0x0A }
                let lineStart = bytes[..<offset].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
                let location = source.location(ofOffset: offset)
                #expect(location.line == line && location.column == offset - lineStart + 1, "\(bytes) offset \(offset)")
                #expect(checked.location(ofOffset: offset) == location)
            }
        }
    }

    /// The line count of long text, counted before any line is looked up (without the line
    /// table) and after (with it): text of line feeds only, past the 2,040 bytes one count of
    /// the eight-byte lanes takes, and random text of a few thousand bytes.
    @Test func countsTheLinesOfLongText() {
        var generator = SeededGenerator(seed: 41)
        var texts: [[UInt8]] = [1, 7, 8, 9, 2_039, 2_040, 2_041, 2_048, 4_080, 4_089, 10_000].map { [UInt8](repeating: 0x0A, count: $0) }
        for _ in 0..<40 {
            let length = Int(generator.next() % 9_000)
            texts.append((0..<length).map { _ in [0x0A, 0x0B, 0x8A, 0x61, 0x00][Int(generator.next() % 5)] })
        }
        for bytes in texts {
            let expected = 1 + bytes.count { $0 == 0x0A }
            let source = bytes.withUnsafeBufferPointer { SourceFile(name: "f", bytes: $0) }
            #expect(source.lineCount == expected, "\(bytes.count) bytes")
            #expect(source.location(ofOffset: source.text.utf8.count).line == expected)
            #expect(source.lineCount == expected, "\(bytes.count) bytes, with the line table")
        }
    }

    // MARK: Fuzzing

    /// Scripts that lex cleanly; the fuzzer breaks them in small ways.
    private static let corpus: [String] = [
        "ns feed ttl=5m stale=30s max=100 --purgeable\nput feed:1 {\"id\":1} tags=a\nget feed:1 --nowait\n",
        "# comment\nput feed:home {\n  \"items\": [{\"id\": 1, \"t\": \"a\\\"b\"}, {\"id\": 2}],\n  \"n\": null\n} tags=x,y\nadvance 1h30m\n",
        "echo \"hello\\tworld \\u00e9\\ud83d\\ude00\"\nat 5s put a [1, [2, [3]]]\r\nkeys feed:*\r\n",
        "server set feed:1 {\"id\": 1, \"s\": \"{[\"}; server latency 250ms; get feed:1\n",
        "mutate entity 42 {\"likes\": 3}\nevent patch feed:1 {\"a\": [\n1,\n2\n]} --own\npush new-post id=7\n",
    ]

    @Test func lexerSurvivesRandomAndMutatedInput() {
        var generator = SeededGenerator(seed: 2026)
        let interesting = Array("{}[]\"\\;#\n\r\t =-:u0aé".utf8)
        func randomByte() -> UInt8 {
            generator.next() % 4 == 0 ? UInt8(truncatingIfNeeded: generator.next())
                : interesting[Int(generator.next() % UInt64(interesting.count))]
        }

        for iteration in 0..<100_000 {
            var bytes: [UInt8]
            if iteration % 10 == 0 {
                bytes = (0..<Int(generator.next() % 80)).map { _ in randomByte() }
            } else {
                bytes = Array(Self.corpus[Int(generator.next() % UInt64(Self.corpus.count))].utf8)
                for _ in 0...(generator.next() % 4) {
                    let at = Int(generator.next() % UInt64(bytes.count + 1))
                    switch generator.next() % 3 {
                    case 0 where at < bytes.count: bytes[at] = randomByte()
                    case 1: bytes.insert(randomByte(), at: at)
                    default: if at < bytes.count { bytes.remove(at: at) }
                    }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let semicolons = iteration % 2 == 0
            if let problem = lexingProblem(text, semicolons: semicolons) {
                Issue.record("\(problem) in input \(String(reflecting: text)) (semicolons: \(semicolons))")
                return
            }
        }
    }

    /// What is wrong with lexing `text` to the end, or nil when every result is sound.
    private func lexingProblem(_ text: String, semicolons: Bool) -> String? {
        let source = SourceFile(name: "fuzz", text: text)
        let count = text.utf8.count
        var lexer = Lexer(source, semicolonSeparates: semicolons)
        var results = 0
        var previousEnd = 0
        while let result = lexer.next() {
            results += 1
            // Every command or error consumes at least one byte.
            if results > count { return "more results than bytes" }
            switch result {
            case .success(let command):
                if command.words.isEmpty { return "a command without words" }
                if command.offset < previousEnd || command.end > count { return "command span out of order" }
                var wordEnd = command.offset
                for word in command.words {
                    if word.offset < wordEnd || word.end <= word.offset || word.end > command.end {
                        return "word span out of order"
                    }
                    wordEnd = word.end
                }
                previousEnd = command.end
            case .failure(let diagnostic):
                if diagnostic.offset < 0 || diagnostic.offset >= count { return "error offset \(diagnostic.offset) outside the text" }
                if !source.render(diagnostic).hasPrefix("fuzz:") { return "bad rendering" }
            }
        }
        return nil
    }
}

