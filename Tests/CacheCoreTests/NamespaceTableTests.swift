@_spi(Engine) @testable import CacheCore
import Foundation
import Testing
import TestSupport

/// The namespace table on its own: `slot(forKey:)` must find the namespace `KeyName.namespace(of:)`
/// names, whatever the length of that name (packed in two integers up to 15 bytes, compared as
/// strings past that), whether the key has a colon, and in whatever order keys come.
@Suite struct NamespaceTableTests {
    /// Names around the packed form's bounds (8 and 15 bytes), the empty one, `default`, and
    /// names that share their first bytes.
    static let names = ["", "a", "feed", "default", "profile", "comments", "abcdefghijklmno", "abcdefghijklmnop",
                        "abcdefghijklmnopq", "abcdefghijklmnox", "notifications-of-a-user", "feed2", "fee", "x.y_z-1"]

    /// Keys of every name, and keys without a colon (the default namespace) of lengths around
    /// the 16 bytes the packed form reads.
    static func keys() -> [String] {
        var keys = names.map { "\($0):1" } + names.map { "\($0):a:b:c:\($0)" }
        for length in [1, 7, 8, 15, 16, 17, 40] { keys.append(String(repeating: "k", count: length)) }
        return keys
    }

    @Test func eachKeyIsInTheNamespaceItsNameSays() {
        var generator = SeededGenerator(seed: 41)
        let keys = Self.keys()
        var table = NamespaceTable()
        var expected: [Substring: Int32] = [:]
        for _ in 0..<5_000 {
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            let name = KeyName.namespace(of: key)
            let (slot, created) = table.slot(forKey: key)
            if let known = expected[name] {
                #expect(slot == known && !created, "\(key) found slot \(slot), created \(created); \(name) is in \(known)")
            } else {
                #expect(created && slot == Int32(expected.count), "\(key): a new namespace, \(name), in slot \(slot)")
                expected[name] = slot
            }
            #expect(table[slot].name == String(name), "\(key): slot \(slot) is \(table[slot].name), not \(name)")
        }
        #expect(expected.count == Set(keys.map { KeyName.namespace(of: $0) }).count)
        #expect(table.invariantViolations().isEmpty, "\(table.invariantViolations())")
    }

    /// A table restored from a snapshot's namespaces finds them by key as one built by use does.
    @Test func aRestoredTableFindsItsNamespaces() {
        let states = Self.names.map { NamespaceState(name: $0, policy: Policy(), defined: true) }
        var table = NamespaceTable(restoring: states)
        #expect(table.invariantViolations().isEmpty)
        for (i, name) in Self.names.enumerated().reversed() {
            let key = name == KeyName.defaultNamespace ? "no-colon-here" : "\(name):id"
            #expect(table.slot(forKey: key) == (Int32(i), false), "\(key)")
        }
    }
}
