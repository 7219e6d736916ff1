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

    /// A script longer than the pieces it is read in (64 KiB): its commands are committed in
    /// groups across the pieces, and what it prints, with a failing command and a `quit` in it,
    /// is what it prints without a store. The store then holds every command up to the `quit`
    /// and none after it; without the `quit`, every command to the end.
    @Test func aScriptOfManyPiecesPrintsAndStoresWhatItRan() async throws {
        var lines: [String] = []
        for i in 0..<5000 {
            lines.append(#"put k:\#(i) {"n":\#(i),"pad":"abcdefghijklmnopqrstuvwxyz"}"#)
            if i % 700 == 0 { lines.append("get k:\(i / 2)") }
            if i == 2500 { lines.append("frob") }
            if i == 4000 { lines.append("quit") }
        }
        let script = lines.joined(separator: "\n") + "\n"
        #expect(script.utf8.count > 3 << 16)
        let plain = try await Cachesh.script(script)
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", script)
        let stored = try await Cachesh.run(["--store", "s.db", "script.cachesh"], in: sandbox.url)
        #expect(stored.status == 1 && stored.status == plain.status, "\(stored)")
        #expect(stored.stdout == plain.stdout)
        #expect(stored.stderr == plain.stderr)
        #expect(stored.stderr.contains("frob"))
        let after = try await Cachesh.run(["--store", "s.db", "-c", "get k:4000; get k:4001"], in: sandbox.url)
        #expect(after.stdout.contains(#"value:         {"n":4000,"#), "\(after)")
        #expect(!after.stdout.contains(#""n":4001"#), "\(after)")

        // Without the `quit`, the last command of the script is in the store too.
        try sandbox.write("all.cachesh", lines.filter { $0 != "quit" }.joined(separator: "\n") + "\n")
        #expect(try await Cachesh.run(["--store", "all.db", "all.cachesh"], in: sandbox.url).status == 1)
        let last = try await Cachesh.run(["--store", "all.db", "-c", "get k:4999"], in: sandbox.url)
        #expect(last.stdout.contains(#"value:         {"n":4999,"#), "\(last)")
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
