@testable import CacheShell
import Testing

/// `OutputBuffer.flush(before:)`, which a `--store` session calls to print a committed group's
/// output while keeping the output of the commands run since: the bytes before the offset are
/// written out in order, the rest stays, first, for the next flush.
@Suite struct OutputBufferTests {
    /// A buffer whose flush collects what it writes out, as the terminal writes to standard output.
    static func collecting() -> (OutputBuffer, () -> String) {
        let buffer = OutputBuffer()
        var out: [UInt8] = []
        buffer.flush = {
            buffer.withBytes { out.append(contentsOf: $0) }
            buffer.removeAll()
        }
        return (buffer, { String(decoding: out, as: UTF8.self) })
    }

    static func contents(_ buffer: OutputBuffer) -> String {
        buffer.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theBytesBeforeTheOffsetGoOutAndTheRestStaysFirst() {
        let (buffer, written) = Self.collecting()
        buffer.append("group 1\n")
        buffer.append("group 2\n")
        buffer.flush(before: 8)
        #expect(written() == "group 1\n")
        #expect(Self.contents(buffer) == "group 2\n")
        buffer.append("group 3\n")
        buffer.flush(before: 8)
        #expect(written() == "group 1\ngroup 2\n")
        #expect(Self.contents(buffer) == "group 3\n")
        buffer.flush(before: 0)
        #expect(written() == "group 1\ngroup 2\n")
        #expect(Self.contents(buffer) == "group 3\n")
        buffer.flush(before: buffer.count)
        #expect(written() == "group 1\ngroup 2\ngroup 3\n")
        #expect(buffer.count == 0)
    }

    @Test func manyFlushesOfLargeHeldOutputLoseAndRepeatNothing() {
        let (buffer, written) = Self.collecting()
        var expected = ""
        var held = ""
        // Groups of about 200 KB, and some of over 4 MiB (a command that printed much).
        for group in 0..<12 {
            let line = "line of group \(group)\n"
            let count = group % 4 == 3 ? (4 << 20) / line.utf8.count + 10 : 200_000 / line.utf8.count
            let text = String(repeating: line, count: count)
            let end = buffer.count
            buffer.append(text)
            buffer.flush(before: end)
            expected += held
            held = text
            #expect(written() == expected)
            #expect(Self.contents(buffer) == held)
        }
    }
}
