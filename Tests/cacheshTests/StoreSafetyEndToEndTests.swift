import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store has one writer whatever its name, cachesh writes no file it did not make, and the
/// files it writes are whole or the old ones (SPEC §5.3, §5.4), run as a user runs cachesh.
@Suite struct StoreSafetyEndToEndTests {
    /// Makes a store holding `a` in the sandbox.
    static func makeStore(_ sandbox: Sandbox, _ name: String = "s.db") async throws -> String {
        let made = try await Cachesh.run(["--store", name, "-c", "put a 1"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        return sandbox.url.appendingPathComponent(name).path
    }

    /// A 0-byte file is not a store: it is refused, not filled with a new one.
    @Test func anEmptyFileIsRefusedNotTakenForANewStore() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("s.db", "")
        let outcome = try await Cachesh.run(["--store", "s.db", "-c", "put a 1"], in: sandbox.url)
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "cachesh: cannot open store s.db: it is an empty file (0 bytes), not a cachesh store; "
                + "refusing to take it for a new one (remove it to start a new store)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path + "-lock"))
    }

    /// A store whose rows are damaged is refused with one line naming the file and the row, exit
    /// 2, nothing printed by the commands and the file left byte for byte as it was.
    @Test func aDamagedStoreIsNamedInItsRefusal() async throws {
        let sandbox = try Sandbox()
        let path = try await Self.makeStore(sandbox)
        // Edited as a hand would, through Python's sqlite3 module (the CLI is not installed everywhere).
        let edited = try await ManPageTests.run("/usr/bin/env", ["python3", "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(\"UPDATE entries SET key = CAST('a b' AS BLOB)\"); db.commit()",
            path])
        #expect(edited.status == 0, "\(edited)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let outcome = try await Cachesh.run(["--store", "s.db", "-c", "put b 2"], in: sandbox.url)
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "cachesh: damaged store: s.db: entries[0].key: bad key \"a b\": a key may not contain white space\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// A removed entry's bytes are not zeroed in the store's file (SQLite's `secure_delete` off,
    /// whatever the linked SQLite's default; Debian's turns it on): they stay in the file's free
    /// space, and a copy made with `VACUUM INTO` holds none of them (SPEC §5.3).
    @Test func aRemovedValueStaysInFreeSpaceUntilACopyIsVacuumed() async throws {
        let sandbox = try Sandbox()
        let marker = "removed-value-marker-7f3a"
        let made = try await Cachesh.run(["--store", "s.db", "-c", "put a \"\(marker)\"; put b 2"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let removed = try await Cachesh.run(["--store", "s.db", "-c", "evict a"], in: sandbox.url)
        #expect(removed.status == 0, "\(removed)")
        let kept = try await Cachesh.run(["--store", "s.db", "-c", "keys"], in: sandbox.url)
        #expect(kept.stdout.hasPrefix("key  state  age_ms\nb    fresh"), "\(kept)")
        #expect(!kept.stdout.contains("\na "), "\(kept)")
        let path = sandbox.url.appendingPathComponent("s.db").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.range(of: Data(marker.utf8)) != nil, "the removed value's bytes were zeroed")
        let copy = sandbox.url.appendingPathComponent("copy.db").path
        let vacuumed = try await ManPageTests.run("/usr/bin/env", ["python3", "-c",
            "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM INTO ?', (sys.argv[2],))", path, copy])
        #expect(vacuumed.status == 0, "\(vacuumed)")
        let copied = try Data(contentsOf: URL(fileURLWithPath: copy))
        #expect(copied.range(of: Data(marker.utf8)) == nil)
        let keys = try await ManPageTests.run("/usr/bin/env", ["python3", "-c",
            "import sqlite3, sys; print(*[bytes(r[0]).decode() for r in sqlite3.connect(sys.argv[1]).execute('SELECT key FROM entries')])", copy])
        #expect(keys.output == "b\n", "\(keys)")
    }

    /// Two hard links of one store would each get a lock file and a `-wal` of their own, so two
    /// processes could both write it and each print its writes: a store with more than one link
    /// is refused under every name, and opens again once it has one.
    @Test func aStoreWithTwoHardLinksIsRefusedUnderEitherName() async throws {
        let sandbox = try Sandbox()
        let path = try await Self.makeStore(sandbox)
        let other = sandbox.url.appendingPathComponent("t.db").path
        #expect(link(path, other) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for name in ["s.db", "t.db"] {
            let outcome = try await Cachesh.run(["--store", name, "-c", "put b 2"], in: sandbox.url)
            #expect(outcome.status == 2, "\(outcome)")
            #expect(outcome.stdout.isEmpty)
            #expect(outcome.stderr == "cachesh: cannot open store \(name): the file has 2 hard links; a store must have one name "
                    + "(each name would get its own lock and write-ahead log; a symbolic link is fine)\n")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(unlink(other) == 0)
        let after = try await Cachesh.run(["--store", "s.db", "-c", "keys"], in: sandbox.url)
        #expect(after.status == 0 && after.stdout.contains("a  "), "\(after)")
    }

    /// A file where the lock file goes that cachesh did not make (one with other content, or a
    /// hard link to another file) is neither written nor removed: the store is refused.
    @Test(arguments: ["text", "hard link"])
    func aFileAtTheLocksNameIsLeftAsItIs(kind: String) async throws {
        let sandbox = try Sandbox()
        _ = try await Self.makeStore(sandbox)
        let lock = sandbox.url.appendingPathComponent("s.db-lock").path
        let precious = try sandbox.write("precious.txt", "12\n")
        if kind == "text" { try sandbox.write("s.db-lock", "my notes\n") } else { #expect(link(precious, lock) == 0) }
        let outcome = try await Cachesh.run(["--store", "s.db", "-c", "put b 2"], in: sandbox.url)
        #expect(outcome.status == 2, "\(outcome)")
        let why = kind == "text" ? "exists and is not a cachesh lock file (it holds something other than a process id)"
            : "has 2 hard links, so it is not a lock file cachesh made"
        let real = try #require(realpath(lock, nil).map { p in defer { free(p) }; return String(cString: p) })
        #expect(outcome.stderr == "cachesh: cannot open store s.db: \(real) \(why); refusing to change it (remove it if it is not needed)\n")
        #expect(try String(contentsOfFile: lock, encoding: .utf8) == (kind == "text" ? "my notes\n" : "12\n"))
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "12\n")
    }

    /// A lock file a killed cachesh left (its process id in it) is taken over and removed.
    @Test func aLockFileLeftByAKilledProcessIsTakenOver() async throws {
        let sandbox = try Sandbox()
        _ = try await Self.makeStore(sandbox)
        let lock = try sandbox.write("s.db-lock", "999999\n")
        let outcome = try await Cachesh.run(["--store", "s.db", "-c", "put b 2"], in: sandbox.url)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(!FileManager.default.fileExists(atPath: lock))
    }

    /// A store whose permission bits forbid writing is read-only for every user, root included
    /// (the kernel lets root write it; cachesh checks the bits): a change is refused at its line
    /// and the file keeps its bytes; `ns NAME` alone shows a defined namespace (it changes
    /// nothing) and is refused for one it would define.
    @Test func aStoreWithoutWriteBitsIsReadOnlyForEveryone() async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["--store", "s.db", "-c", "ns feed ttl=45m; put feed:a 1"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let path = sandbox.url.appendingPathComponent("s.db").path
        #expect(chmod(path, 0o444) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        try sandbox.write("script.cachesh", "put b 2\nns feed\nns other\nkeys\n")
        let outcome = try await Cachesh.run(["--store", "s.db", "script.cachesh"], in: sandbox.url)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == """
            script.cachesh:1: error: the store s.db is read-only: put would change it
            script.cachesh:3: error: the store s.db is read-only: ns other would define other and change it

            """, "\(outcome)")
        #expect(outcome.stdout.hasPrefix("ns feed ttl=45m"), "\(outcome)")
        #expect(outcome.stdout.contains("feed:a"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // A file cachesh writes is not replaced over its bits either.
        let kept = try sandbox.write("kept.json", "{}", permissions: 0o444)
        let snapshot = try await Cachesh.run(["-c", "snapshot kept.json"], in: sandbox.url)
        #expect(snapshot.status == 1, "\(snapshot)")
        #expect(snapshot.stderr.contains("Permission denied"), "\(snapshot)")
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "{}")
    }

    /// `--junit` naming a transcript being verified, by any spelling or link, is refused before
    /// anything runs: the transcript stays as it was.
    @Test(arguments: ["v.transcript", "./v.transcript", "hard.transcript", "soft.transcript"])
    func junitNamingATranscriptBeingVerifiedIsRefused(report: String) async throws {
        let sandbox = try Sandbox()
        let transcript = try sandbox.write("v.transcript", "cachesh> echo hi\nhi\n")
        #expect(link(transcript, sandbox.url.appendingPathComponent("hard.transcript").path) == 0)
        #expect(symlink("v.transcript", sandbox.url.appendingPathComponent("soft.transcript").path) == 0)
        let outcome = try await Cachesh.run(["--verify", "other.transcript", "v.transcript", "--junit", report], in: sandbox.url)
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "cachesh: --junit \(report) names the transcript v.transcript being verified; write the report elsewhere\n")
        #expect(try String(contentsOfFile: transcript, encoding: .utf8) == "cachesh> echo hi\nhi\n")
    }

    /// `record` on a disk that fills up (here a file size limit) leaves the old transcript as it
    /// was, which still passes `--verify`, and reports the error; nothing else is left in the
    /// directory. A recording that ends with the session (no `record stop`) is written whole.
    @Test func recordOnAFullDiskLeavesTheOldFile() async throws {
        let sandbox = try Sandbox()
        let big = String(repeating: "x", count: 600)
        var script = "put a:1 1\nrecord out.transcript\n"
        for i in 0..<8 { script += "put a:\(i) \"\(big)\"\n" }
        script += "record stop\n"
        try sandbox.write("long.cachesh", script)
        try sandbox.write("short.cachesh", "put a:1 1\nrecord out.transcript\nput b 2\nget b\n")
        let short = try await Cachesh.run(["short.cachesh"], in: sandbox.url)
        #expect(short.status == 0, "\(short)")
        let old = try String(contentsOfFile: sandbox.url.appendingPathComponent("out.transcript").path, encoding: .utf8)
        #expect(old.hasSuffix("cachesh> put b 2\nkeys: b\ncachesh> get b\nkey:           b\nstate:         fresh\nvalue:         2\n"
                              + "source:        cache\nage_ms:        0\nexpires_in_ms: 300000 (5m)\ntags:          []\n"
                              + "cachesh> # end of recording\n"), "\(old)")
        // 8 blocks of 512 bytes: the header and a few commands fit, the whole recording does not.
        let limited = try await Cachesh.run(["-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" long.cachesh", Cachesh.binaryPath],
                                            in: sandbox.url, executable: "/bin/sh")
        #expect(limited.status == 1, "\(limited)")
        #expect(limited.stderr.hasPrefix("long.cachesh:11: error: record: could not write out.transcript: "), "\(limited)")
        #expect(try String(contentsOfFile: sandbox.url.appendingPathComponent("out.transcript").path, encoding: .utf8) == old)
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).sorted()
        #expect(names == ["long.cachesh", "out.transcript", "short.cachesh"])
        let verified = try await Cachesh.run(["--verify", "out.transcript"], in: sandbox.url)
        #expect(verified.status == 0 && verified.stdout == "1 passed, 0 failed\n", "\(verified)")
    }

    /// Names of 248 to 255 bytes (the longest a file system takes) are written: the temporary
    /// file beside the target keeps only as much of its name as fits.
    @Test(arguments: [248, 251, 255])
    func aFileWithTheLongestNameIsWritten(length: Int) async throws {
        let sandbox = try Sandbox()
        let name = String(repeating: "é", count: (length - 9) / 2) + String(repeating: "n", count: 9 + (length - 9) % 2)
        #expect(name.utf8.count == length)
        let outcome = try await Cachesh.run(["-c", "put a 1; snapshot \(name); record \(name); put b 2"], in: sandbox.url)
        #expect(outcome.status == 0, "\(outcome)")
        let written = try String(contentsOfFile: sandbox.url.appendingPathComponent(name).path, encoding: .utf8)
        #expect(written.hasSuffix("cachesh> put b 2\nkeys: b\ncachesh> # end of recording\n"), "\(written)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path) == [name], "no temporary file is left")
    }
}
