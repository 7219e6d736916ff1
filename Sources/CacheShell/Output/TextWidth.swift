/// How many terminal columns text takes, the same on every machine (no locale, no terminal
/// asked), so a table aligned here is aligned in a transcript verified anywhere: East Asian wide
/// and fullwidth characters and emoji take 2, combining marks and zero-width characters 0,
/// everything else 1, counted per character (grapheme cluster).
public enum TextWidth {
    /// The columns `text` takes.
    /// - Complexity: O(n) in the length of `text`.
    public static func of(_ text: String) -> Int {
        // ASCII, the common case, is one column a byte.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        var columns = 0
        for character in text { columns += of(character) }
        return columns
    }

    /// The columns one character takes.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.isASCII { return 1 }
        if scalars.contains(where: { $0.properties.isEmojiPresentation })
            || scalars.count > 1 && scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D }) && first.properties.isEmoji {
            return 2
        }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        return isWide(first.value) ? 2 : 1
    }

    /// `text` padded with spaces to `columns` columns (unchanged when it is as wide or wider).
    public static func pad(_ text: String, to columns: Int) -> String {
        let width = of(text)
        return width >= columns ? text : text + String(repeating: " ", count: columns - width)
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F).
    private static func isWide(_ value: UInt32) -> Bool {
        for range in wide where range.contains(value) { return true }
        return false
    }

    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
        0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
        0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]
}
