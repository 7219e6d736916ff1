@testable import CacheCore
import Testing
import TestSupport

/// A 304's fields merged into a stored response's in one pass (`HTTPFields.set(_:)`,
/// `HTTPCachePolicy.updated`): the same lines, in the same order, as merging them one at a time,
/// which took time growing with the product of the two lists (a HAR replay of a 304 with 40,000
/// header lines took minutes).
@Suite struct HTTPFieldsMergeTests {
    /// Names that collide without regard to case, and values that tell the lines apart.
    static func randomFields(_ random: inout SeededGenerator, count: Int, tag: String) -> HTTPFields {
        let names = ["ETag", "etag", "Cache-Control", "cache-control", "Date", "X-A", "x-a", "Content-Length", "Vary"]
        return HTTPFields((0..<count).map { i in HTTPFields.Field(random.pick(names), "\(tag)\(i)") })
    }

    @Test func settingAllTheFieldsAtOnceIsSettingEachInTurn() {
        var random = SeededGenerator(seed: 40)
        for _ in 0..<500 {
            let base = Self.randomFields(&random, count: Int.random(in: 0...8, using: &random), tag: "s")
            let other = Self.randomFields(&random, count: Int.random(in: 0...8, using: &random), tag: "n")
            var inTurn = base
            for line in other { inTurn.set(line.name, line.value) }
            var atOnce = base
            atOnce.set(other)
            #expect(atOnce == inTurn, "\(base.lines) set \(other.lines)")
        }
    }

    /// RFC 9111 §4.3.4: each field of the 304 replaces every stored line of that name (but
    /// Content-Length), its own lines all kept, after the stored fields it leaves alone.
    @Test func aFreshenedResponseHasTheStoredFieldsThe304LacksThenThe304s() {
        var random = SeededGenerator(seed: 41)
        for _ in 0..<500 {
            let stored = StoredHTTPResponse(status: 200, fields: Self.randomFields(&random, count: Int.random(in: 0...8, using: &random), tag: "s"),
                                            requestTime: 0, responseTime: 0)
            let notModified = Self.randomFields(&random, count: Int.random(in: 0...8, using: &random), tag: "n")
            var expected = stored.fields
            var replaced = Set<String>()
            for line in notModified where !HTTPFields.same(line.name, "Content-Length") {
                if replaced.insert(line.name.lowercased()).inserted { expected.remove(line.name) }
                expected.append(line.name, line.value)
            }
            let updated = HTTPCachePolicy.updated(stored, with: notModified, requestTime: 5, responseTime: 6)
            #expect(updated.fields == expected, "\(stored.fields.lines) freshened by \(notModified.lines)")
            #expect(updated.requestTime == 5 && updated.responseTime == 6)
        }
    }
}
