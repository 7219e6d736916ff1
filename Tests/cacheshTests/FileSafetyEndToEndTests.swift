import Foundation
import Testing

/// Files the shell writes: `--safe` refuses every write, and a snapshot file is replaced atomically
/// (a kill in the middle of writing leaves the old file or the new one, never half of one).
@Suite("File safety")
struct FileSafetyEndToEndTests {
    @Test("--safe refuses snapshot FILE, restore and record, creating no file; snapshot to stdout still works")
    func safeModeRefusesCommandsThatWriteFiles() throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", "put a:1 1\nsnapshot a.json\nrestore old.json\nrecord t.transcript\nkeys\n")
        try sandbox.write("old.json", "{}")
        let run = try Cachesh.run(["--safe", "script.cachesh"], in: sandbox.url)
        #expect(run == Outcome(stdout: "keys: a:1\nkey  state  age_ms\na:1  fresh  0\n", stderr: """
            script.cachesh:2: error: --safe: commands may not write files (a.json)
            script.cachesh:3: error: --safe: commands may not read files (old.json)
            script.cachesh:4: error: --safe: commands may not write files (t.transcript)

            """, status: 1))
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(files == ["old.json", "script.cachesh"])
        let stdout = try Cachesh.run(["--safe", "-c", "put a:1 1; snapshot"])
        #expect(stdout.status == 0 && stdout.stdout.contains("\"format\": \"cachesh-snapshot\""))
    }

    @Test("a snapshot write killed at a random moment leaves the old file or the new one, whole",
          arguments: [11, 12, 13, 14, 15] as [UInt64])
    func killedSnapshotWriteLeavesAWholeFile(seed: UInt64) throws {
        let sandbox = try Sandbox()
        // A large state, so writing its snapshot takes a while.
        var script = "ns big max=200000\n"
        for i in 0..<40_000 { script += "put big:\(i) {\"id\":\(i),\"text\":\"entry number \(i)\"}\n" }
        script += "snapshot state.json\n"
        try sandbox.write("fill.cachesh", script)
        let old = "{\"old\": true}\n"
        try sandbox.write("state.json", old)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Cachesh.binaryPath)
        process.arguments = ["fill.cachesh"]
        process.currentDirectoryURL = sandbox.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Kill it once the snapshot's temporary file holds a seeded number of bytes: mid-write.
        let threshold = 1 + Int(seed % 5) * 400_000
        var sawTemporary = false
        while process.isRunning {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: sandbox.url.path)) ?? []
            guard let temporary = names.first(where: { $0.hasPrefix(".state.json.") }) else { continue }
            sawTemporary = true
            let size = (try? FileManager.default.attributesOfItem(atPath: sandbox.url.appendingPathComponent(temporary).path)[.size] as? Int) ?? 0
            if size >= threshold {
                kill(process.processIdentifier, SIGKILL)
                break
            }
        }
        process.waitUntilExit()
        #expect(sawTemporary || process.terminationStatus == 0)

        let text = try String(contentsOf: sandbox.url.appendingPathComponent("state.json"), encoding: .utf8)
        if text != old {
            // The new file: whole, and restorable.
            let check = try Cachesh.run(["-c", "restore state.json; keys big:3999*"], in: sandbox.url)
            #expect(check.status == 0, "\(check)")
            #expect(check.stdout.contains("restored state.json (40000 entries"), "\(check)")
        }
    }
}
