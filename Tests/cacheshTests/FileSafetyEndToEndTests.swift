import Foundation
import Testing

/// Files the shell writes: `--safe` refuses every write, and a snapshot file is replaced atomically
/// (a kill in the middle of writing leaves the old file or the new one, never half of one).
@Suite("File safety")
struct FileSafetyEndToEndTests {
    @Test("--safe refuses snapshot FILE, restore and record, creating no file; snapshot to stdout still works")
    func safeModeRefusesCommandsThatWriteFiles() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.cachesh", "put a:1 1\nsnapshot a.json\nrestore old.json\nrecord t.transcript\nkeys\n")
        try sandbox.write("old.json", "{}")
        let run = try await Cachesh.run(["--safe", "script.cachesh"], in: sandbox.url)
        #expect(run == Outcome(stdout: "keys: a:1\nkey  state  age_ms\na:1  fresh  0\n", stderr: """
            script.cachesh:2: error: --safe: commands may not write files (a.json)
            script.cachesh:3: error: --safe: commands may not read files (old.json)
            script.cachesh:4: error: --safe: commands may not write files (t.transcript)

            """, status: 1))
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(files == ["old.json", "script.cachesh"])
        let stdout = try await Cachesh.run(["--safe", "-c", "put a:1 1; snapshot"])
        #expect(stdout.status == 0 && stdout.stdout.contains("\"format\": \"cachesh-snapshot\""))
    }

    /// A file a command writes is replaced whole (renamed over): one of the session's store's
    /// own files was replaced too, `snapshot st.db` leaving `file is not a database` and
    /// `snapshot st.db-wal` losing what the WAL held. They are refused, by name or through a link.
    @Test("snapshot, record, replay, replay-merge and explore refuse the files of the session's store")
    func theStoresFilesAreNotWritten() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.keys", "a\nb\n")
        try FileManager.default.createSymbolicLink(atPath: sandbox.url.appendingPathComponent("link.json").path,
                                                   withDestinationPath: "st.db")
        let shard = try await Cachesh.run(["--json", "-c", "replay t.keys max=1,2 shard=1/1"], in: sandbox.url)
        #expect(shard.status == 0, "\(shard)")
        try sandbox.write("part.json", shard.stdout)
        try sandbox.write("s.explore", "ns a ttl=1m\nconcurrent\n  put a:1 1\nand\n  put a:1 2\nend\nexpect peek a:1 value=3\n")
        let run = try await Cachesh.run(["--store", "st.db", "-c", """
            put a 1; snapshot st.db; snapshot st.db-wal; snapshot ./st.db-shm; record st.db-lock
            snapshot link.json; replay t.keys csv=st.db-wal; put b 2
            replay-merge part.json csv=st.db
            explore s.explore transcript=st.db-wal
            """], in: sandbox.url)
        let lose = "writing it would lose the store"
        #expect(run.stderr == """
            -c:1:10: error: cannot write st.db: it is the session's store st.db: \(lose)
            -c:1:26: error: cannot write st.db-wal: it is SQLite's -wal file of the session's store st.db: \(lose)
            -c:1:46: error: cannot write ./st.db-shm: it is SQLite's -shm file of the session's store st.db: \(lose)
            -c:1:68: error: record: cannot write st.db-lock: it is the lock file of the session's store st.db: \(lose)
            -c:2:1: error: cannot write link.json: it is the session's store st.db: \(lose)
            -c:2:21: error: cannot write st.db-wal: it is SQLite's -wal file of the session's store st.db: \(lose)
            -c:3:1: error: cannot write st.db: it is the session's store st.db: \(lose)
            -c:4:1: error: explore: cannot write st.db-wal: it is SQLite's -wal file of the session's store st.db: \(lose)

            """, "\(run)")
        let reopened = try await Cachesh.run(["--store", "st.db", "-c", "keys"], in: sandbox.url)
        #expect(reopened == Outcome(stdout: "key  state  age_ms\na    fresh  0\nb    fresh  0\n", stderr: "", status: 0), "\(reopened)")
    }

    @Test("--safe --verify refuses a transcript's file commands at their line, as in a script, and touches no file",
          arguments: [
            ("snapshot x.json", "write", "x.json"),
            ("restore old.json", "read", "old.json"),
            ("load app.json", "read", "app.json"),
            ("source evil.cachesh", "read", "evil.cachesh"),
            ("record out.transcript", "write", "out.transcript"),
          ])
    func safeVerifyRefusesTranscriptFileCommands(command: String, verb: String, file: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("old.json", "{}")
        try sandbox.write("app.json", "{}")
        try sandbox.write("evil.cachesh", "snapshot pwned.json\n")
        try sandbox.write("bug.transcript", "A bug report.\ncachesh> put a 1\nkeys: a\ncachesh> \(command)\nwhatever\ncachesh> get a\n")
        let before = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        let run = try await Cachesh.run(["--safe", "--verify", "bug.transcript"], in: sandbox.url)
        #expect(run == Outcome(stdout: "0 passed, 1 failed\n",
                               stderr: "bug.transcript:4: error: --safe: commands may not \(verb) files (\(file))\n", status: 1))
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted() == before)
        // The same file in a script is refused at its line with the same words.
        try sandbox.write("bug.cachesh", "put a 1\n\(command)\n")
        let script = try await Cachesh.run(["--safe", "bug.cachesh"], in: sandbox.url)
        #expect(script.stderr == "bug.cachesh:2: error: --safe: commands may not \(verb) files (\(file))\n")
    }

    @Test("--safe refuses file commands that at scheduled, in a transcript and in a store's restored state")
    func safeRefusesScheduledFileCommands() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bug.transcript", """
            cachesh> at 1m snapshot later.json
            scheduled at 2026-01-01T00:01:00.000Z: snapshot later.json
            cachesh> advance 2m
            whatever

            """)
        let run = try await Cachesh.run(["--safe", "--verify", "bug.transcript"], in: sandbox.url)
        #expect(run == Outcome(stdout: "0 passed, 1 failed\n",
                               stderr: "bug.transcript:3: error: --safe: commands may not write files (later.json)\n", status: 1))
        // A store keeps the scheduled command; reopened with --safe, it is refused when it comes due.
        let store = sandbox.url.appendingPathComponent("s.db").path
        #expect(try await Cachesh.run(["--store", store, "-c", "at 1m snapshot later.json"], in: sandbox.url).status == 0)
        let resumed = try await Cachesh.run(["--safe", "--store", store, "-c", "advance 2m"], in: sandbox.url)
        #expect(resumed.status == 1)
        #expect(resumed.stderr == "-c:1: error: (at 2026-01-01T00:01:00.000Z) --safe: commands may not write files (later.json)\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("later.json").path))
    }

    @Test("a snapshot write killed at a random moment leaves the old file or the new one, whole",
          arguments: [11, 12, 13, 14, 15] as [UInt64])
    func killedSnapshotWriteLeavesAWholeFile(seed: UInt64) async throws {
        let sandbox = try Sandbox()
        // A large state, so writing its snapshot takes a while.
        var script = "ns big max=200000\n"
        for i in 0..<40_000 { script += "put big:\(i) {\"id\":\(i),\"text\":\"entry number \(i)\"}\n" }
        script += "snapshot state.json\n"
        let old = "{\"old\": true}\n"
        try sandbox.write("state.json", old)

        // Kill it once the snapshot's temporary file holds a seeded number of bytes: mid-write;
        // or, should the write end between two looks, once the snapshot is in place. The script
        // comes on a standard input left open, so cachesh cannot end before the kill: it must die
        // of it. The watching polls the folder on a thread of its own, never one of the test pool's.
        let threshold = 1 + Int(seed % 5) * 400_000
        let folder = sandbox.url
        let input = script
        let (sawTemporary, status) = try await ChildSlots.shared.holding {
            let child = try await Child.start(Cachesh.binaryPath, [], in: folder, stdin: .pipe, stdout: .nullDevice, stderr: .pipe)
            try await child.write(input)
            let sawTemporary = await OwnThread.run { () -> Bool in
                var sawTemporary = false
                let deadline = ContinuousClock.now + .seconds(Cachesh.timeLimit)
                while child.isRunning && ContinuousClock.now < deadline {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                    guard let temporary = names.first(where: { $0.hasPrefix(".state.json.") }) else {
                        if (try? String(contentsOf: folder.appendingPathComponent("state.json"), encoding: .utf8)) != old { break }
                        usleep(100)
                        continue
                    }
                    sawTemporary = true
                    let size = (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(temporary).path)[.size] as? Int) ?? 0
                    if size >= threshold { break }
                    usleep(100)
                }
                child.signal(SIGKILL)
                return sawTemporary
            }
            return (sawTemporary, try await child.exitStatus(within: Cachesh.timeLimit))
        }
        #expect(status == SIGKILL, "cachesh ended before the kill (status \(status), temporary file seen: \(sawTemporary))")

        let text = try String(contentsOf: sandbox.url.appendingPathComponent("state.json"), encoding: .utf8)
        if text != old {
            // The new file: whole, and restorable.
            let check = try await Cachesh.run(["-c", "restore state.json; keys big:3999*"], in: sandbox.url)
            #expect(check.status == 0, "\(check)")
            #expect(check.stdout.contains("restored state.json (40000 entries"), "\(check)")
        }
    }
}
