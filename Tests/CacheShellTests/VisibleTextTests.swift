@testable import CacheShell
import Testing
import TestSupport

/// `Render.visible` escapes exactly the control characters (its word-at-a-time scan agrees with
/// a scalar-by-scalar reference on every position and mix).
@Suite struct VisibleTextTests {
    static func isControl(_ v: UInt32) -> Bool { (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v) }

    @Test func agreesWithAScalarByScalarReference() {
        let pieces = ["a", "bcd", "\n", "\t", "\u{1B}", "\u{7F}", "\u{85}", "\u{9F}", "\u{A0}", "é", "€", "\u{0}", "ok ", "\u{C2}"]
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
