import CacheShell
import Testing
import TestSupport

private func check(_ text: String, name: String = "t.transcript") async -> TranscriptCheck {
    await TranscriptCheck.replay(name: name, transcript: Transcript(text: text, markdown: Transcript.isMarkdown(path: name)), baseDirectory: nil)
}

@Suite struct TranscriptCheckTests {
    @Test func aTranscriptOfWhatTheSessionPrintsPasses() async {
        let result = await check("""
            cachesh> put feed:1 [1]
            keys: feed:1
            cachesh> advance 2s
            now:    2026-01-01T00:00:02.000Z
            now_ms: 2000 (2s)
            cachesh> nonsense
            error: unknown command "nonsense" (try help)

            """)
        #expect(result.passed)
        #expect(result.report() == "")
    }

    @Test func eachFileReplaysInAFreshSessionOnTheVirtualClock() async {
        let text = "cachesh> advance 1s\nnow:    2026-01-01T00:00:01.000Z\nnow_ms: 1000 (1s)\n"
        #expect(await check(text).passed)
        #expect(await check(text).passed)
    }

    @Test func aDifferenceIsShownAsTheHunkUpdateWouldApply() async {
        let text = """
            Prose.
            cachesh> put a 1
            keys: a
            cachesh> get a
            key:           a
            state:         stale
            value:         [..]
            source:        cache
            ...
            cachesh> now
            now_ms: 0

            """
        let result = await check(text)
        #expect(result.report() == """
            @ t.transcript:4
            --- t.transcript
            +++ t.transcript (actual)
            @@ -3,7 +3,7 @@
             keys: a
             cachesh> get a
             key:           a
            -state:         stale
            +state:         fresh
             value:         [..]
             source:        cache
             ...
            @ t.transcript:10
            --- t.transcript
            +++ t.transcript (actual)
            @@ -10,2 +10,3 @@
             cachesh> now
            +now:    2026-01-01T00:00:00.000Z
             now_ms: 0

            """)
        let updated = result.updatedText()
        #expect(updated == text.replacingAll("state:         stale", "state:         fresh")
            .replacingAll("cachesh> now\n", "cachesh> now\nnow:    2026-01-01T00:00:00.000Z\n"))
        #expect(result.updatedLines.count == 2 && result.updatedLines.last == 10)
        #expect(await check(updated).passed)
    }

    /// Context never reaches back into lines an earlier diff rewrites, so the diffs apply in turn.
    @Test func laterHunksCountLinesOfTheUpdatedFile() async {
        let text = """
            cachesh> echo a
            a
            x
            y
            cachesh> echo b
            c

            """
        let result = await check(text)
        #expect(result.report() == """
            @ t.transcript:1
            --- t.transcript
            +++ t.transcript (actual)
            @@ -1,6 +1,4 @@
             cachesh> echo a
             a
            -x
            -y
             cachesh> echo b
             c
            @ t.transcript:5
            --- t.transcript
            +++ t.transcript (actual)
            @@ -5,2 +3,2 @@
             cachesh> echo b
            -c
            +b

            """)
        #expect(result.updatedLines == [1, 3])
        #expect(result.updatedText() == "cachesh> echo a\na\ncachesh> echo b\nb\n")
    }

    @Test func changesFarApartInOneOutputAreSeparateHunks() async {
        var text = ""
        for i in 0..<10 { text += "cachesh> put k\(i) \(i)\nkeys: k\(i)\n" }
        text += "cachesh> keys\nkey  state  age_ms\n"
        for i in 0..<10 { text += "k\(i)   \(i == 0 || i == 9 ? "stale" : "fresh")  0\n" }
        let result = await check(text)
        #expect(result.report() == """
            @ t.transcript:21
            --- t.transcript
            +++ t.transcript (actual)
            @@ -20,7 +20,7 @@
             keys: k9
             cachesh> keys
             key  state  age_ms
            -k0   stale  0
            +k0   fresh  0
             k1   fresh  0
             k2   fresh  0
             k3   fresh  0
            @@ -29,4 +29,4 @@
             k6   fresh  0
             k7   fresh  0
             k8   fresh  0
            -k9   stale  0
            +k9   fresh  0

            """)
    }

    @Test func outputThatShrinksToNothingIsDeleted() async {
        let result = await check("cachesh> echo x\nx\nmore\nlines\n")
        #expect(result.updatedText() == "cachesh> echo x\nx\n")
    }

    @Test func markdownBlocksShareOneSessionAndKeepTheFilesLineNumbers() async {
        let text = """
            # Guide

            ```cachesh
            cachesh> put a 1
            keys: a
            ```

            Later, a is still there:

            ```cachesh
            cachesh> keys
            key  state  age_ms
            a    stale  0
            ```

            """
        let result = await check(text, name: "docs/guide.md")
        #expect(result.report() == """
            @ docs/guide.md:11
            --- docs/guide.md
            +++ docs/guide.md (actual)
            @@ -10,5 +10,5 @@
             ```cachesh
             cachesh> keys
             key  state  age_ms
            -a    stale  0
            +a    fresh  0
             ```

            """)
        let updated = result.updatedText()
        #expect(updated == text.replacingAll("a    stale  0", "a    fresh  0"))
        #expect(await check(updated, name: "docs/guide.md").passed)
    }

    @Test func anIndentedMarkdownBlockKeepsItsIndentationWhenUpdated() async {
        let text = "- step:\n\n  ```cachesh\n  cachesh> echo new\n  old\n  ```\n"
        let result = await check(text, name: "a.md")
        #expect(result.updatedText() == "- step:\n\n  ```cachesh\n  cachesh> echo new\n  new\n  ```\n")
    }

    @Test func markdownWithoutCacheshBlocksPasses() async {
        #expect(await check("# Title\n\n```sh\ncachesh> nothing\n```\n", name: "README.md").passed)
    }

    @Test func aFileWithoutTrailingNewlineKeepsItsEnding() async {
        let result = await check("cachesh> echo b\na", name: "t.transcript")
        #expect(result.updatedText() == "cachesh> echo b\nb")
    }
}

private extension String {
    /// Every occurrence of `target` replaced (tests only; the package avoids Foundation).
    func replacingAll(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
