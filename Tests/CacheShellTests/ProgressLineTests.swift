@testable import CacheShell
import Synchronization
import Testing

/// The progress line of long work: not before a second, at most four lines a second, erased at
/// the end only when one was shown (on a clock the test moves).
@Suite struct ProgressLineTests {
    @Test func showsAfterASecondAtMostFourTimesASecondAndErasesItsLine() {
        let shown = Mutex<[String?]>([])
        var clock: UInt64 = 5_000_000_000
        var line = ProgressLine(show: { text in shown.withLock { $0.append(text) } }, now: { clock })
        var made = 0
        func update(at ms: UInt64) {
            clock = 5_000_000_000 + ms * 1_000_000
            line.update({ made += 1; return "at \(ms)" }())
        }
        for ms: UInt64 in [0, 500, 999] { update(at: ms) }
        #expect(shown.withLock { $0 }.isEmpty && made == 0, "nothing in the first second, not even the text made")
        for ms: UInt64 in [1_000, 1_100, 1_249, 1_250, 1_400, 2_000] { update(at: ms) }
        #expect(shown.withLock { $0 } == ["at 1000", "at 1250", "at 2000"])
        line.end()
        #expect(shown.withLock { $0 }.last == .some(nil))
        line.end()
        #expect(shown.withLock { $0 }.count == 4, "erased once")
    }

    @Test func workUnderASecondLeavesNoTrace() {
        let shown = Mutex<[String?]>([])
        var clock: UInt64 = 0
        var line = ProgressLine(show: { text in shown.withLock { $0.append(text) } }, now: { clock })
        clock = 900_000_000
        line.update("almost")
        line.end()
        #expect(shown.withLock { $0 }.isEmpty)
    }
}
