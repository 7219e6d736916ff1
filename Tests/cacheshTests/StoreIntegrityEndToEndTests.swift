import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--store` keeps exactly what the session holds (SPEC §5.3), run as a user runs cachesh.
@Suite struct StoreIntegrityEndToEndTests {
    /// Keys and values with unusual characters read back from the store byte for byte: the
    /// snapshot of the reopened session is the snapshot of the session that wrote it.
    @Test func unusualKeysAndValuesSurviveARestart() throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        let script = #"""
            put emoji:😀 "a\u0000b\u001f\u007f😀"
            put cafe\#u{301} {"text": "line\u2028sep\u0000end", "nfc": "caf\u00e9"}
            put café "precomposed"
            put path:a\b/c "back\\slash \"quoted\""
            put bom:\#u{FEFF}x "\ufeff"
            server set emoji:😀 "\u0000"
            put emoji:😀 "again\u0000"
            evict path:a\b/c
            snapshot
            """#
        let first = try Cachesh.run(["--store", store], stdin: script + "\n")
        #expect(first.status == 0, "\(first)")
        let written = try #require(first.stdout.range(of: "{\n")).lowerBound
        let second = try Cachesh.run(["--store", store, "-c", "snapshot"])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout == String(first.stdout[written...]))
        #expect(second.stdout.contains(#""key": "emoji:😀""#))
        #expect(second.stdout.contains(#""value": "again\u0000""#))
        #expect(!second.stdout.contains("path:a"))
    }
}
