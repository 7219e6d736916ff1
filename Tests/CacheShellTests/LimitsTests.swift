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

    /// Each event merges eight copies of the entity into it (and, innermost first, into every
    /// copy already there), so every patch applies to eight times as many objects as the one before: the value would grow without bound. It stops at
    /// the size limit, with the cache as it was.
    @Test func entityPatchesCannotGrowAValuePastTheSizeLimit() async {
        let session = await TestShell()
        #expect(await session.typed(#"put big:1 {"id": 7}"#) == "keys: big:1\n")
        let copy = #"{"id": 7, "pad": "\#(String(repeating: "x", count: 100))"}"#
        let patch = "{" + "abcdefgh".map { "\"\($0)\": \(copy)" }.joined(separator: ", ") + "}"
        var refused = ""
        for _ in 0..<12 {
            let before = await session.typed("peek big:1")
            let reply = await session.typed("event entity 7 \(patch)")
            if reply.hasPrefix("error: ") {
                refused = reply
                #expect(await session.typed("peek big:1") == before, "the refused patch changed nothing")
                break
            }
            #expect(reply == "keys: big:1\n")
        }
        // Bounded first by the work of the patch (its size times the objects it applies to).
        #expect(refused.hasPrefix("error: the patch applies to more than "), "\(refused)")
        #expect(refused.hasSuffix("more than 16 MiB of patch work (in big:1)\n"), "\(refused)")
        #expect(await session.typed("mutate entity 7 \(patch)").hasPrefix("error: the patch applies to more than "))
        let size = await session.run { _, cache in cache.peek("big:1").stored?.utf8Count ?? 0 }
        #expect(size > 1 << 20 && size <= JSONValue.maxBytes)
    }

    /// A patch that applies once but would take the value past the size limit is refused, by
    /// key as by entity, from the shell as from the server's side.
    @Test func aPatchCannotTakeAValuePastTheSizeLimit() async {
        let session = await TestShell()
        let fifteen = String(repeating: "z", count: 15 << 20)
        #expect(await session.typed(#"put big:1 {"id": 7, "a": "\#(fifteen)"}"#) == "keys: big:1\n")
        let patch = #"{"b": "\#(String(repeating: "w", count: 2 << 20))"}"#
        let message = "error: the patch would make the value larger than 16 MiB (16777216 bytes of JSON)"
        #expect(await session.typed("event entity 7 \(patch)") == "\(message) (in big:1)\n")
        #expect(await session.typed("event patch big:1 \(patch)") == "\(message)\n")
        #expect(await session.typed("mutate big:1 \(patch)") == "\(message)\n")
        let size = await session.run { _, cache in cache.peek("big:1").stored?.utf8Count ?? 0 }
        #expect(size == 15 << 20 + 15, "unchanged")
    }

    /// A patch applied to many objects of one value costs their number times its size: bounded
    /// before anything is built, whatever the result's size would be.
    @Test func anEntityPatchAppliedToManyObjectsIsBoundedInWork() async {
        let session = await TestShell()
        let many = "[" + Array(repeating: #"{"id":1}"#, count: 20_000).joined(separator: ",") + "]"
        #expect(await session.typed("put many:1 \(many)") == "keys: many:1\n")
        let patch = #"{"note": "\#(String(repeating: "y", count: 1_000))"}"#
        let reply = await session.typed("event entity 1 \(patch)")
        #expect(reply.hasPrefix("error: the patch applies to more than 16"), "\(reply)")
        #expect(reply.contains("more than 16 MiB of patch work (in many:1)"), "\(reply)")
        #expect(await session.typed("event entity 1 {\"n\": 1}") == "keys: many:1\n", "a small patch applies")
    }

    /// A value typed whose canonical text is longer than the limit (`1e14` prints as
    /// `100000000000000.0`) is refused, as one from a snapshot or a configuration is.
    @Test func aTypedValuePastTheSizeLimitIsRefused() async {
        let session = await TestShell()
        let count = JSONValue.maxBytes / 18 + 1
        let value = "[" + Array(repeating: "1e14", count: count).joined(separator: ",") + "]"
        #expect(await session.typed("put n:1 \(value)") == "error: \(JSONValue.tooLarge)\n")
        #expect(await session.typed("server set n:1 \(value)") == "error: \(JSONValue.tooLarge)\n")
        #expect(await session.typed("peek n:1").contains("state:         absent"))
    }

    @Test(arguments: ["1e400", "-2e999", "1.5e308000"])
    func aBareNumberOutOfRangeIsRefusedLikeOneInJSON(_ word: String) async {
        let session = await TestShell()
        #expect(await session.typed("put n:1 \(word)") == "error: number out of range: \(word) (quote it to store the text)\n")
        #expect(await session.typed("put n:1 [\(word)]") == "error: bad JSON: number out of range: \(word)\n")
        #expect(await session.typed("put n:1 \"\(word)\"") == "keys: n:1\n", "quoted, it is text")
    }

    /// The same rule for numbers that would change when read: so small it would read as 0, or
    /// a whole number past 64 bits (which would become an inexact float).
    @Test(arguments: [
        ("1e-400", "too small for a 64-bit float, it would read as 0"),
        ("9223372036854775808", "a whole number must fit in 64 bits"),
        ("-99999999999999999999", "a whole number must fit in 64 bits"),
    ])
    func aNumberThatWouldChangeIsRefusedLikeOneOutOfRange(_ word: String, _ why: String) async {
        let session = await TestShell()
        #expect(await session.typed("put n:1 \(word)") == "error: number out of range: \(word) (\(why); quote it to store the text)\n")
        #expect(await session.typed("put n:1 [\(word)]") == "error: bad JSON: number out of range: \(word) (\(why))\n")
        #expect(await session.typed("put n:1 \"\(word)\"") == "keys: n:1\n", "quoted, it is text")
    }

    /// With `max=0` a put stores nothing (its entry is evicted at once): one change of its key,
    /// listed once, with or without observers.
    @Test(arguments: [false, true])
    func aPutIntoANamespaceOfMaxZeroListsItsKeyOnce(watching: Bool) async {
        let session = await TestShell()
        _ = await session.typed("ns feed max=0")
        if watching { _ = await session.typed("watch *") }
        let reply = await session.typed("put feed:a 1")
        #expect(reply.hasSuffix("keys: feed:a\n"), "\(reply)")
        #expect(await session.typed("peek feed:a").contains("state:         absent"))
        _ = await session.typed("ns feed max=1")
        _ = await session.typed("put feed:b 1")
        #expect(await session.typed("put feed:c 1").hasSuffix("keys: feed:c feed:b\n"))
    }

    /// A `max` a snapshot could not hold (more than 2^31 - 1, as a snapshot's counts) is refused
    /// where it is set, so every session's state can be snapshotted and restored.
    @Test func aMaxPastWhatASnapshotHoldsIsRefused() async {
        let session = await TestShell()
        #expect(await session.typed("ns feed max=9223372036854775807") == "error: max must be at most 2147483647, not 9223372036854775807\n")
        #expect(await session.typed("ns feed max=2147483647").hasPrefix("ns feed"))
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
