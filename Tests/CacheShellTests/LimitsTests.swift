import CacheCore
@testable import CacheShell
import Foundation
import Testing
import TestSupport

/// One limit for values and one rule for numbers (SPEC §7): what the shell accepts can always be
/// snapshotted and restored, and nothing grows past the limit or out of range.
@Suite struct LimitsTests {
    /// `[[[...1...]]]` nested `levels` deep.
    static func nested(_ levels: Int, around inner: String = "1") -> String {
        String(repeating: "[", count: levels) + inner + String(repeating: "]", count: levels)
    }

    static func directory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-limits-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aValueAtTheLimitIsAcceptedSnapshottedAndRestored() async {
        let dir = Self.directory()
        let session = await TestShell()
        #expect(await session.typed("put deep:1 \(Self.nested(JSONValue.maxDepth))") == "keys: deep:1\n")
        #expect(await session.typed("put deep:2 \(Self.nested(JSONValue.maxDepth + 1))").hasPrefix("error: "))
        _ = await session.typed("snapshot \(dir)/s.json")
        let fresh = await TestShell()
        #expect(await fresh.typed("restore \(dir)/s.json").hasPrefix("restored "))
        #expect(await fresh.typed("peek deep:1") == session.typed("peek deep:1"))
    }

    @Test func entityPatchesCannotGrowAValuePastTheLimit() async {
        let session = await TestShell()
        // An entity 500 levels down; each patch nests 10 more levels under it.
        let inner = #"{"id": 7, "n": 0}"#
        #expect(await session.typed("put deep:1 \(Self.nested(500, around: inner))") == "keys: deep:1\n")
        let patch = #"{"child": "# + Self.nested(10) + "}"
        #expect(await session.typed("event entity 7 \(patch)") == "keys: deep:1\n")
        let before = await session.typed("peek deep:1")
        let refused = await session.typed("event entity 7 {\"child\": \(Self.nested(20))}")
        #expect(refused.hasPrefix("error: the patch would nest the value deeper than 512 levels"), "\(refused)")
        #expect(await session.typed("peek deep:1") == before, "the refused patch changed nothing")
        #expect(await session.typed("mutate entity 7 {\"child\": \(Self.nested(20))}").hasPrefix("error: "))
    }

    @Test(arguments: ["1e400", "-2e999", "1.5e308000"])
    func aBareNumberOutOfRangeIsRefusedLikeOneInJSON(_ word: String) async {
        let session = await TestShell()
        #expect(await session.typed("put n:1 \(word)") == "error: number out of range: \(word) (quote it to store the text)\n")
        #expect(await session.typed("put n:1 [\(word)]") == "error: bad JSON: number out of range: \(word)\n")
        #expect(await session.typed("put n:1 \"\(word)\"") == "keys: n:1\n", "quoted, it is text")
    }

    @Test func aWordThatIsNotAJSONNumberStaysText() async {
        let session = await TestShell()
        _ = await session.typed("put n:1 01e400")
        #expect(await session.typed("peek n:1").contains("value:         \"01e400\"\n"))
    }

    @Test func incThatOverflowsADoubleIsRefused() async {
        let session = await TestShell()
        _ = await session.typed("put n:1 {\"x\": 1.7e308}")
        #expect(await session.typed("event patch n:1 {\"x\": {\"$inc\": 1.7e308}}") == "error: $inc at x gives a number out of range\n")
        #expect(await session.typed("peek n:1").contains(#"{"x":1.7e+308}"#))
    }
}
