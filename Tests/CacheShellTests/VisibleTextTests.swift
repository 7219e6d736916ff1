@testable import CacheShell
import Testing
import TestSupport

/// `Render.visible` escapes exactly the control characters and the bidirectional and
/// line-separator characters (its word-at-a-time scan agrees with a scalar-by-scalar reference on
/// every position and mix).
@Suite struct VisibleTextTests {
    static func isControl(_ v: UInt32) -> Bool {
        (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v)
            || [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069].contains(v)
    }

    @Test func agreesWithAScalarByScalarReference() {
        let pieces = ["a", "bcd", "\n", "\t", "\u{1B}", "\u{7F}", "\u{85}", "\u{9F}", "\u{A0}", "é", "€", "\u{0}", "ok ", "\u{C2}",
                      "\u{202E}", "\u{2028}", "\u{2029}", "\u{200F}", "\u{2066}", "\u{2069}", "\u{061C}", "\u{2027}", "\u{202F}",
                      "\u{2065}", "\u{206A}", "\u{0618}", "—", "\u{200D}",
                      // Printable ASCII at its bounds, and long runs of it (told a word at a time).
                      " ", "~", "\u{1F}", "{\"id\":1,\"title\":\"item 1\"}", "feed:10437 "]
        var g = SeededGenerator(seed: 99)
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...24, using: &g)).map { _ in g.pick(pieces) }.joined()
            let shown = Render.visible(text)
            let expected = String(String.UnicodeScalarView(text.unicodeScalars.flatMap { scalar -> [Unicode.Scalar] in
                guard Self.isControl(scalar.value) else { return [scalar] }
                let hex = String(scalar.value, radix: 16)
                return Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            }))
            #expect(shown == expected, "\(text.debugDescription)")
            if shown != expected { return }
        }
    }
}
