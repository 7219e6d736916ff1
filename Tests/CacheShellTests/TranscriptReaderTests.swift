@testable import CacheShell
import Testing

/// Each step as `LINE: COMMAND => expected lines`, lines numbered from 1 as an editor shows them.
private func steps(_ text: String, markdown: Bool = false) -> [String] {
    let transcript = Transcript(text: text, markdown: markdown)
    return transcript.steps.map { step in
        let lines = step.expected.map { String(Transcript.dropIndent(transcript.lines[$0], step.indent)) }
        return "\(step.line + 1): \(step.command) => \(lines)"
    }
}

@Suite struct TranscriptReaderTests {
    @Test func proseBeforeTheFirstCommandIsIgnoredAndOutputRunsToTheNextCommand() {
        let text = """
            How the feed goes stale.
            cachesh> put a 1
            keys: a
            cachesh> now
            now:    2026-01-01T00:00:00.000Z
            now_ms: 0

            """
        #expect(steps(text) == [
            "2: put a 1 => [\"keys: a\"]",
            "4: now => [\"now:    2026-01-01T00:00:00.000Z\", \"now_ms: 0\"]",
        ])
    }

    @Test func continuationLinesJoinTheCommandAndABarePromptIsAnEmptyCommand() {
        let text = "cachesh> put a {\n...>   \"x\": 1\n...>\n...> }\nkeys: a\ncachesh>\n"
        #expect(steps(text) == [
            "1: put a {\n  \"x\": 1\n\n} => [\"keys: a\"]",
            "6:  => []",
        ])
    }

    @Test func escapedLinesAreOutputNotCommands() {
        let text = "cachesh> echo cachesh> x\n\\cachesh> x\n\\...> y\n"
        #expect(steps(text) == ["1: echo cachesh> x => [\"\\\\cachesh> x\", \"\\\\...> y\"]"])
        let transcript = Transcript(text: text, markdown: false)
        #expect(transcript.expectedLines(of: transcript.steps[0]) == [.literal("cachesh> x"), .literal("...> y")])
    }

    @Test func aFileWithoutCommandsHasNoSteps() {
        #expect(steps("just prose\n").isEmpty)
        #expect(steps("").isEmpty)
    }

    @Test func markdownReadsOnlyBlocksTaggedCachesh() {
        let text = """
            # Title
            cachesh> not in a block
            ```sh
            cachesh> not cachesh either
            ```
            ~~~~text
            ```cachesh
            cachesh> inside another fence
            ```
            ~~~~
            ```cachesh
            cachesh> put a 1
            keys: a
            ```
            Prose between blocks.
              ```cachesh title
              cachesh> get a
              state: fresh
              ```
            ````cachesh
            cachesh> echo ```
            ```
            ````
            """
        #expect(steps(text, markdown: true) == [
            "12: put a 1 => [\"keys: a\"]",
            "17: get a => [\"state: fresh\"]",
            "21: echo ``` => [\"```\"]",
        ])
    }

    @Test func anUnclosedMarkdownBlockRunsToTheEnd() {
        #expect(steps("```cachesh\ncachesh> now\nnow_ms: 0\n", markdown: true) == ["2: now => [\"now_ms: 0\"]"])
    }

    @Test func markdownWithoutCacheshBlocksHasNoSteps() {
        #expect(steps("# Readme\n```swift\nlet x = 1\n```\n", markdown: true).isEmpty)
    }

    @Test(arguments: [("README.md", true), ("docs/a.markdown", true), ("a.transcript", false), ("md", false)])
    func markdownIsChosenByExtension(path: String, markdown: Bool) {
        #expect(Transcript.isMarkdown(path: path) == markdown)
    }

    @Test func renderWritesPromptsAndEscapesOutput() {
        let text = TranscriptSyntax.render(command: "put a {\n\"x\": 1\n}", output: "keys: a\ncachesh> x\n...> y\n...\n\\z\ncachesh>\n")
        #expect(text == """
            cachesh> put a {
            ...> "x": 1
            ...> }
            keys: a
            \\cachesh> x
            \\...> y
            \\...
            \\\\z
            \\cachesh>

            """)
        // Read back, it is the same command and the same output.
        let transcript = Transcript(text: text, markdown: false)
        #expect(transcript.steps.map(\.command) == ["put a {\n\"x\": 1\n}"])
        #expect(TranscriptMatcher.matches(transcript.expectedLines(of: transcript.steps[0]),
                                          ["keys: a", "cachesh> x", "...> y", "...", "\\z", "cachesh>"]))
    }
}
