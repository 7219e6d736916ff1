import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the shell writes to (SPEC §5.4): only regular files, replaced whole with their mode kept,
/// through symbolic links; `snapshot FILE`, `record FILE` and `--verify --update` alike.
@Suite("File writes")
struct FileWriteEndToEndTests {
    static func mode(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! Int
    }

    static func type(_ path: String) -> String {
        var st = stat()
        guard lstat(path, &st) == 0 else { return "missing" }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return "file"
        case S_IFDIR: return "directory"
        case S_IFIFO: return "fifo"
        case S_IFCHR: return "character device"
        case S_IFLNK: return "link"
        default: return "other"
        }
    }

    /// A character device to write at: a copy of /dev/null's node in the sandbox when this
    /// process may make one (root), else /dev/null itself, which then cannot be replaced anyway.
    static func characterDevice(in sandbox: Sandbox) -> String {
        var null = stat()
        let copy = sandbox.url.appendingPathComponent("null").path
        if stat("/dev/null", &null) == 0, mknod(copy, S_IFCHR | 0o666, null.st_rdev) == 0 { return copy }
        return "/dev/null"
    }

    /// Names in the sandbox that start with `.`: a temporary file left behind.
    static func leftovers(_ sandbox: Sandbox) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).filter { $0.hasPrefix(".") }
    }

    @Test("snapshot FILE refuses a FIFO, a device and a directory, leaving each as it was and the cache unchanged")
    func snapshotRefusesWhatIsNotARegularFile() async throws {
        let sandbox = try Sandbox()
        let fifo = sandbox.url.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o644) == 0)
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("dir"), withIntermediateDirectories: false)
        let device = Self.characterDevice(in: sandbox)
        let run = try await Cachesh.run(["-c", "put a 1; snapshot pipe; snapshot \(device); snapshot dir; put b 2; keys"], in: sandbox.url)
        #expect(run.stderr == """
            -c:1:10: error: cannot write pipe: is a FIFO, not a regular file
            -c:1:25: error: cannot write \(device): is a character device, not a regular file
            -c:1:\(36 + device.count): error: cannot write dir: is a directory

            """)
        #expect(run.status == 1)
        #expect(run.stdout.hasSuffix("keys: b\nkey  state  age_ms\na    fresh  0\nb    fresh  0\n"), "\(run)")
        #expect(Self.type(fifo) == "fifo")
        #expect(Self.type(device) == "character device")
        #expect(Self.type(sandbox.url.appendingPathComponent("dir").path) == "directory")
        #expect(try Self.leftovers(sandbox).isEmpty)
    }

    @Test("snapshot FILE keeps the file's mode, and through a symbolic link replaces the file it points to")
    func snapshotKeepsModeAndFollowsLinks() async throws {
        let sandbox = try Sandbox()
        let private_ = try sandbox.write("private.json", "old\n", permissions: 0o600)
        let shared = try sandbox.write("shared.json", "old\n", permissions: 0o640)
        let target = try sandbox.write("real/target.json", "old\n", permissions: 0o604)
        let link = sandbox.url.appendingPathComponent("link.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/target.json")
        let run = try await Cachesh.run(["-c", "put a 1; snapshot private.json; snapshot shared.json; snapshot link.json; snapshot new.json"],
                                  in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        #expect(try Self.mode(private_) == 0o600)
        #expect(try Self.mode(shared) == 0o640)
        #expect(Self.type(link) == "link")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/target.json")
        #expect(try Self.mode(target) == 0o604)
        let written = try String(contentsOfFile: target, encoding: .utf8)
        let other = try String(contentsOfFile: private_, encoding: .utf8)
        #expect(written.contains("\"cachesh-snapshot\"") && written == other)
        // A new file gets the usual mode, 0666 less the umask: that of a file created so here.
        let reference = sandbox.url.appendingPathComponent("reference").path
        let fd = open(reference, O_WRONLY | O_CREAT | O_EXCL, 0o666)
        #expect(fd >= 0)
        close(fd)
        #expect(try Self.mode(sandbox.url.appendingPathComponent("new.json").path) == (try Self.mode(reference)))
        #expect(try Self.leftovers(sandbox).isEmpty)
    }

    @Test("snapshot FILE refuses a file its owner made read-only", .enabled(if: geteuid() != 0, "root may write any file"))
    func snapshotRefusesAReadOnlyFile() async throws {
        let sandbox = try Sandbox()
        let kept = try sandbox.write("kept.json", "old\n", permissions: 0o444)
        let run = try await Cachesh.run(["-c", "snapshot kept.json"], in: sandbox.url)
        #expect(run == Outcome(stdout: "", stderr: "-c:1:1: error: cannot write kept.json: Permission denied\n", status: 1))
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "old\n")
    }

    @Test("record FILE on a full disk leaves the old transcript whole and reports the error")
    func recordOnAFullDiskKeepsTheOldTranscript() async throws {
        let sandbox = try Sandbox()
        let old = "cachesh> echo old\nold\n"
        let transcript = try sandbox.write("t.transcript", old, permissions: 0o600)
        // Enough history that the recording's start is larger than the file size limit below.
        var script = ""
        for i in 0..<200 { script += "put k:\(i) \"a value long enough to fill the disk \(i)\"\n" }
        script += "record t.transcript\nkeys k:199\n"
        try sandbox.write("script.cachesh", script)
        let run = try await Self.runOnAFullDisk(["script.cachesh"], in: sandbox)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "script.cachesh:201: error: record: cannot write t.transcript: File too large\n", "\(run)")
        #expect(try String(contentsOfFile: transcript, encoding: .utf8) == old)
        #expect(try Self.mode(transcript) == 0o600)
        #expect(try Self.leftovers(sandbox).isEmpty)
    }

    /// A write that fails while recording (a full disk) leaves the file that was there as it was:
    /// a recording replaces it whole or not at all. (It used to be replaced at `record`, and the
    /// failed write cut back to the last whole command: a shorter transcript that passed --verify.)
    @Test("a recording whose write fails later leaves the old file as it was")
    func recordWhoseWriteFailsLeavesTheOldFile() async throws {
        let sandbox = try Sandbox()
        let old = "cachesh> echo before\nbefore\n"
        let transcript = try sandbox.write("t.transcript", old)
        let long = String(repeating: "x", count: 20_000)
        try sandbox.write("script.cachesh", "record t.transcript\necho short\necho \(long)\necho after\nrecord stop\n")
        let run = try await Self.runOnAFullDisk(["script.cachesh"], in: sandbox)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "script.cachesh:5: error: record: could not write t.transcript: File too large\n", "\(run)")
        #expect(try String(contentsOfFile: transcript, encoding: .utf8) == old)
        #expect(try Self.leftovers(sandbox).isEmpty)
        let replay = try await Cachesh.run(["--verify", "t.transcript"], in: sandbox.url)
        #expect(replay.stdout == "1 passed, 0 failed\n", "\(replay)")
    }

    @Test("--verify --update keeps a transcript's mode and its symbolic link")
    func updateKeepsModeAndLink() async throws {
        let sandbox = try Sandbox()
        let target = try sandbox.write("kept/real.transcript", "cachesh> echo hi\nwrong\n", permissions: 0o600)
        let link = sandbox.url.appendingPathComponent("t.transcript").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        // Without CI in the environment, where --update refuses to run.
        let run = try await Cachesh.run(["-u", "CI", Cachesh.binaryPath, "--verify", "--update", "t.transcript"], in: sandbox.url,
                                  executable: "/usr/bin/env")
        #expect(run.status == 0 && run.stdout.hasSuffix("0 passed, 1 failed, 1 updated\n"), "\(run)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "cachesh> echo hi\nhi\n")
        #expect(Self.type(link) == "link")
        #expect(try Self.mode(target) == 0o600)
    }

    /// Runs cachesh with a file size limit of a few KiB (as a full disk would stop it: a write past
    /// it fails with EFBIG, the signal it would raise ignored).
    static func runOnAFullDisk(_ arguments: [String], in sandbox: Sandbox) async throws -> Outcome {
        try await Cachesh.run(["-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\"", Cachesh.binaryPath] + arguments,
                        in: sandbox.url, executable: "/bin/sh")
    }
}

/// What the shell reads (SPEC §5.4): only regular files, up to a size limit, and nothing blocks.
@Suite("File reads")
struct FileReadEndToEndTests {
    /// A sparse file of `size` bytes (instant, and takes no disk).
    static func sparse(_ sandbox: Sandbox, _ name: String, size: Int) throws -> String {
        let path = try sandbox.write(name, "")
        #expect(truncate(path, off_t(size)) == 0)
        return path
    }

    @Test("source, load and restore refuse a device, a FIFO with no writer and a directory at once")
    func commandsRefuseWhatIsNotARegularFile() async throws {
        let sandbox = try Sandbox()
        #expect(mkfifo(sandbox.url.appendingPathComponent("pipe").path, 0o644) == 0)
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("dir"), withIntermediateDirectories: false)
        let run = try await Cachesh.run(["-c", "put a 1; source /dev/zero; source pipe; load pipe; restore /dev/zero; restore pipe; load dir; keys"],
                                  in: sandbox.url)
        #expect(run == Outcome(stdout: "keys: a\nkey  state  age_ms\na    fresh  0\n", stderr: """
            -c:1:10: error: cannot read /dev/zero: is a character device, not a regular file
            -c:1:28: error: cannot read pipe: is a FIFO, not a regular file
            -c:1:41: error: cannot read pipe: is a FIFO, not a regular file
            -c:1:52: error: cannot read /dev/zero: is a character device, not a regular file
            -c:1:71: error: cannot read pipe: is a FIFO, not a regular file
            -c:1:85: error: cannot read dir: is a directory

            """, status: 1))
    }

    @Test("a script, --config or --verify file that is a FIFO or a device exits 2 at once")
    func commandLineFilesRefuseWhatIsNotARegularFile() async throws {
        let sandbox = try Sandbox()
        #expect(mkfifo(sandbox.url.appendingPathComponent("pipe").path, 0o644) == 0)
        for arguments in [["pipe"], ["--config", "pipe", "-c", "now"], ["--verify", "pipe"], ["/dev/zero"]] {
            let run = try await Cachesh.run(arguments, in: sandbox.url)
            let name = arguments.contains("/dev/zero") ? "/dev/zero" : "pipe"
            let kind = name == "pipe" ? "a FIFO" : "a character device"
            #expect(run == Outcome(stdout: "", stderr: "cachesh: cannot read \(name): is \(kind), not a regular file\n", status: 2),
                    "\(arguments)")
        }
    }

    @Test("a file over the limit is refused with the file and the limit named, and nothing of it is run")
    func filesOverTheLimitAreRefused() async throws {
        let sandbox = try Sandbox()
        _ = try Self.sparse(sandbox, "big.cachesh", size: 64 << 20 + 1)
        _ = try Self.sparse(sandbox, "big.json", size: 64 << 20 + 1)
        _ = try Self.sparse(sandbox, "huge.json", size: 1 << 30 + 1)
        let commands = try await Cachesh.run(["-c", "put a 1; source big.cachesh; load big.json; restore huge.json; keys"], in: sandbox.url)
        #expect(commands == Outcome(stdout: "keys: a\nkey  state  age_ms\na    fresh  0\n", stderr: """
            -c:1:10: error: cannot read big.cachesh: larger than 64 MiB, the most cachesh reads from such a file
            -c:1:30: error: cannot read big.json: larger than 64 MiB, the most cachesh reads from such a file
            -c:1:45: error: cannot read huge.json: larger than 1 GiB, the most cachesh reads from such a file

            """, status: 1))
        for arguments in [["--config", "big.json", "-c", "now"], ["--verify", "big.cachesh"]] {
            let name = arguments.first { $0.hasPrefix("big") }!
            let run = try await Cachesh.run(arguments, in: sandbox.url)
            #expect(run == Outcome(stdout: "", stderr: "cachesh: cannot read \(name): larger than 64 MiB, the most cachesh reads from such a file\n",
                                   status: 2), "\(arguments)")
        }
    }

    @Test("a script FILE streams: its limit is per command, so a file of 64 MiB with no line feed is one command too long")
    func aScriptHasALimitPerCommand() async throws {
        let sandbox = try Sandbox()
        // Text, not a sparse file: a NUL byte stops a script as binary input.
        try Data(repeating: UInt8(ascii: "x"), count: 64 << 20 + 1).write(to: sandbox.url.appendingPathComponent("big.cachesh"))
        #expect(try await Cachesh.run(["big.cachesh"], in: sandbox.url, timeLimit: Cachesh.heavyTimeLimit) == Outcome(stdout: "",
            stderr: "big.cachesh:1: error: command longer than 16 MiB (a { or [ never closed?): skipped to its end\n", status: 1))
    }

    @Test("a snapshot over 64 MiB is still restored: snapshots have a limit of their own")
    func snapshotsHaveALargerLimit() async throws {
        let sandbox = try Sandbox()
        // A snapshot padded past 64 MiB with blanks, which JSON ignores.
        let snapshot = try await Cachesh.run(["-c", "put a 1; snapshot s.json"], in: sandbox.url)
        #expect(snapshot.status == 0)
        let path = sandbox.url.appendingPathComponent("s.json").path
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x20, count: 64 << 20))
        try handle.close()
        let run = try await Cachesh.run(["-c", "restore s.json; keys"], in: sandbox.url, timeLimit: Cachesh.heavyTimeLimit)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("a    fresh  0\n"), "\(run)")
    }
}
