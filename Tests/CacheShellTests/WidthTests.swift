@testable import CacheShell
import Testing
import TestSupport

/// Human output fits 80 columns and aligns by display width, the same on every machine (SPEC §4).
@Suite struct WidthTests {
    @Test(arguments: [("abc", 3), ("café", 4), ("e\u{301}", 1), ("日本", 4), ("ｆｕｌｌ", 8), ("한국", 4),
                      ("👍", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("❤️", 2), ("", 0)])
    func displayWidth(text: String, columns: Int) {
        #expect(TextWidth.of(text) == columns)
    }

    @Test func tablesAlignWideCharactersByTheirColumns() {
        let lines = Render.table(["key", "state", "age_ms"], [["feed:日本", "fresh", "0"], ["feed:ab", "stale", "12"], ["👍:1", "fresh", "3"]])
        #expect(lines == [
            "key        state  age_ms",
            "feed:日本  fresh  0",
            "feed:ab    stale  12",
            "👍:1       fresh  3",
        ])
    }

    @Test func aTableWiderThanEightyColumnsIsShownAsRecords() {
        let wide = String(repeating: "x", count: 70)
        #expect(Render.table(["key", "state", "note", "value"], [["a:1", "fresh", wide, "1"], ["b:22", "stale", "-", "2"]]) == [
            "key:   a:1",
            "state: fresh",
            "note:  " + wide,
            "value: 1",
            "",
            "key:   b:22",
            "state: stale",
            "note:  -",
            "value: 2",
        ])
        // A long last column runs on, as a value line does: the table stays.
        #expect(Render.table(["key", "state", "value"], [["a:1", "fresh", wide + wide]]).count == 2)
    }

    @Test func aReplysTableIsLaidOutForTheWidthItIsWrittenTo() {
        let wide = String(repeating: "x", count: 70)
        let reply = Reply(["n": .int(1)], table: TableText(before: ["before"], ["key", "state", "note", "value"],
                                                           [["a:1", "fresh", wide, "1"]], after: ["after"]))
        // 80 columns unless told: the history's, a recording's, a pipe's copy.
        #expect(reply.text(command: "t", mode: .human, colour: false)
                == "before\nkey:   a:1\nstate: fresh\nnote:  \(wide)\nvalue: 1\nafter\n")
        // A terminal of 120 columns: the table fits, as a table.
        #expect(reply.text(command: "t", mode: .human, colour: false, width: 120)
                == "before\nkey  state  note" + String(repeating: " ", count: 68) + "value\na:1  fresh  \(wide)  1\nafter\n")
        // A terminal of 40 columns: a narrower table turns into records too.
        #expect(Render.table(["key", "state", "age_ms"], [["feed:home", "fresh", "12"], [String(repeating: "k", count: 30), "stale", "1"]],
                             width: 40).first == "key:    feed:home")
        // JSON has no width, and says ok as every reply does.
        #expect(reply.text(command: "t", mode: .json, colour: false, width: 120) == "{\"command\":\"t\",\"n\":1,\"ok\":true}\n")
    }

    @Test func statsHasARowPerCounterAndFitsEightyColumns() async {
        let output = await TestShell().typed("put a 1\nput feed:x 2\nput profile:1 3\nstats")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("counter           default  feed   profile  total"))
        #expect(lines.contains("hit_ratio         0.000    0.000  0.000    0.000"))
        #expect(lines.allSatisfy { $0.count <= 80 })
    }

    @Test func wrapKeepsWordsWhole() {
        #expect(Render.wrap(["aaa", "bbb", "ccc"], first: "> ", indent: 2, width: 9) == ["> aaa bbb", "  ccc"])
        #expect(Render.wrap([String(repeating: "z", count: 12)], first: "", indent: 0, width: 5) == [String(repeating: "z", count: 12)])
    }
}
