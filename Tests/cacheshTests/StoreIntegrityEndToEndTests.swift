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
    @Test func unusualKeysAndValuesSurviveARestart() async throws {
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
        let first = try await Cachesh.run(["--store", store], stdin: script + "\n")
        #expect(first.status == 0, "\(first)")
        let written = try #require(first.stdout.range(of: "{\n")).lowerBound
        let second = try await Cachesh.run(["--store", store, "-c", "snapshot"])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout == String(first.stdout[written...]))
        #expect(second.stdout.contains(#""key": "emoji:😀""#))
        #expect(second.stdout.contains(#""value": "again\u0000""#))
        #expect(!second.stdout.contains("path:a"))
    }

    /// After a clean exit (every command accepted, one rejected, `quit`, a `--config` that is
    /// refused) the WAL is checkpointed into the database file: a copy of that file alone, without
    /// its `-wal`, is the whole store.
    @Test(arguments: [
        (["-c", "put a 1; put b 2"], "", Int32(0)),
        (["-c", "put a 1; put b 2; frob"], "", 1),
        ([], "put a 1\nput b 2\nquit\nput c 3\n", 0),
        (["-c", "put a 1; put b 2", "--config", "missing.json"], "", 2),
    ])
    func aCleanExitLeavesTheWholeStoreInItsFile(arguments: [String], stdin: String, status: Int32) async throws {
        let sandbox = try Sandbox()
        let store = sandbox.url.appendingPathComponent("s.db").path
        if status == 2 {
            // The store already holds a and b; the refused --config changes nothing.
            #expect(try await Cachesh.run(["--store", store, "-c", "put a 1; put b 2"]).status == 0)
        }
        let run = try await Cachesh.run(["--store", store] + arguments, stdin: stdin, in: sandbox.url)
        #expect(run.status == status, "\(run)")
        let wal = (try? FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "the WAL still holds \(wal) bytes")

        let elsewhere = try Sandbox()
        let copy = elsewhere.url.appendingPathComponent("copy.db").path
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let reopened = try await Cachesh.run(["--store", copy, "-c", "keys"])
        #expect(reopened == Outcome(stdout: "key  state  age_ms\na    fresh  0\nb    fresh  0\n", stderr: "", status: 0))
    }
}
