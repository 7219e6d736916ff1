@_spi(Engine) @testable import CacheCore
import Testing

/// The documents this program writes are read straight from their text (the tree reader is only
/// for the out of the ordinary): what makes `restore` fast is not silently skipped.
@Suite struct SnapshotFastPathTests {
    static func readFromText(_ text: String) -> Bool {
        var text = text
        guard let result = text.withUTF8({ Snapshot.decode(utf8: $0) }), case .success = result else { return false }
        return true
    }

    @Test func writtenSnapshotsAreReadFromTheirText() {
        var harnesses = [SnapshotTests.busyHarness(), Harness()]
        for seed in UInt64(1)...3 { harnesses.append(EvictionPolicyTests.busy(seed: seed, ops: 80)) }
        for h in harnesses {
            #expect(Self.readFromText(h.engine.snapshotText(pretty: true)))
            #expect(Self.readFromText(h.engine.snapshotText(pretty: false)))
        }
    }

    @Test func outOfTheOrdinaryTextGoesToTheTree() {
        let text = SnapshotTests.busyHarness().engine.snapshotText(pretty: false)
        for (from, to) in [(#""entries":["#, #""entries":[1,"#), (#""key":"#, #""k\u0065y":"#),
                           (#""key":"#, #""color":1,"key":"#), (#""entries":["#, #""entries":[],"entries":["#)] {
            #expect(!Self.readFromText(text.replacingOccurrences(of: from, with: to)))
        }
    }
}
