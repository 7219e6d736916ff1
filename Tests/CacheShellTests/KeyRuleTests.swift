import CacheCore
@testable import CacheShell
import Foundation
import Testing
import TestSupport

/// One rule for keys and namespace names (`KeyName.problem`), used alike by the shell, a
/// configuration's server data and a snapshot: what one refuses, the others refuse too.
@Suite struct KeyRuleTests {
    static let badKeys: [(key: String, problem: String)] = [
        ("ns:", "keys are NAMESPACE:ID or ID"),
        (":id", "keys are NAMESPACE:ID or ID"),
        ("tag:x", "\"tag\" is not a namespace name"),
        ("a*b", "* is for patterns (keys, NS:*)"),
        ("we/ird:1", "namespace \"we/ird\" may use letters, digits, -, _ and ."),
        ("h\u{0}", "a key may not contain control characters"),
        ("s\u{1B}[31m", "a key may not contain control characters"),
        ("del\u{7F}", "a key may not contain control characters"),
    ]

    @Test(arguments: badKeys.indices)
    func theRuleNamesTheProblem(_ i: Int) {
        #expect(KeyName.problem(withKey: Self.badKeys[i].key) == Self.badKeys[i].problem)
    }

    /// The bytes a plain key's namespace is read with are the ASCII name characters of the rule.
    @Test func nameBytesAreTheRulesASCIINameCharacters() {
        for byte in UInt8.min...UInt8.max {
            let expected = byte < 128 && KeyName.isNameCharacter(Character(Unicode.Scalar(byte)))
            #expect(Arguments.isNameByte(byte) == expected, "byte \(byte)")
        }
    }

    @Test(arguments: ["home", "feed:home", "feed.v2:home", "página:1", "a:b:c", "feed:[1]"])
    func goodKeysPass(_ key: String) {
        #expect(KeyName.problem(withKey: key) == nil)
    }

    @Test(arguments: badKeys.indices)
    func theShellRefusesWhatTheRuleRefuses(_ i: Int) async {
        let key = Self.badKeys[i].key
        let quoted = JSONValue.string(key).compactText
        let session = await TestShell()
        // The key is typed as a bare word, control characters and all.
        let output = await session.typed("put \(key) 1")
        #expect(output == "error: bad key \(quoted): \(Self.badKeys[i].problem)\n")
        #expect(await session.typed("keys") == "(no entries)\n")
    }

    @Test(arguments: badKeys.indices)
    func aConfigurationCannotLoadWhatTheShellCannotType(_ i: Int) async throws {
        let key = Self.badKeys[i].key
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = JSONValue.object(["server": .object(["data": .object([key: 1])])]).compactText
        try config.write(toFile: directory + "/c.json", atomically: true, encoding: .utf8)
        let output = await TestShell().typed("load \(directory)/c.json")
        #expect(output.hasPrefix("error: \(directory)/c.json: $.server.data.\(JSONValue.string(key).compactText): bad key: "),
                "\(output)")
        #expect(output.hasSuffix(Self.badKeys[i].problem + "\n"), "\(output)")
    }

    @Test(arguments: badKeys.indices)
    func aSnapshotCannotRestoreWhatTheShellCannotType(_ i: Int) async throws {
        let key = Self.badKeys[i].key
        let session = await TestShell()
        _ = await session.typed("put good:1 1")
        let document = await session.run { session, cache in session.makeSnapshot(on: cache).compactText }
        let edited = document.replacingOccurrences(of: "\"good:1\"", with: JSONValue.string(key).compactText)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try edited.write(toFile: directory + "/s.json", atomically: true, encoding: .utf8)
        let fresh = await TestShell()
        let output = await fresh.typed("restore \(directory)/s.json")
        #expect(output.contains("bad key \(JSONValue.string(key).compactText): \(Self.badKeys[i].problem)"), "\(output)")
        #expect(await fresh.typed("keys") == "(no entries)\n")
    }

    @Test func namespaceNamesFollowOneRuleInTheCoreAndTheShell() async throws {
        #expect(KeyName.problem(withNamespace: "feed.v2") == nil)
        #expect(KeyName.problem(withNamespace: "a b") == "use letters, digits, -, _ and .")
        let cache = Cache()
        await #expect(throws: CacheError("bad namespace name \"a/b\": use letters, digits, -, _ and .")) {
            try await cache.defineNamespace("a/b", PolicyChange())
        }
        #expect(await TestShell().typed("ns a/b ttl=1m") == "error: bad namespace name \"a/b\": use letters, digits, -, _ and .\n")
    }
}
