import Foundation
import Testing

/// `--store` in a batch, end to end (SPEC §5.3): full groups of 4096 commands are committed on a
/// writer thread while the next group runs. The output, the store and the files commands write
/// are those of a run whose every commit is made before the next command; a commit that fails
/// in the middle of a script prints the groups before it and its error, and no command after
/// the group it covered leaves a file.
@Suite struct StorePipelineEndToEndTests {
    /// The commands a group holds (`StoreLink.defaultGroupSize`, which the executable uses).
    static let groupSize = 4096

    /// `commands` commands: puts over 100 keys with a value of `padding` bytes beside the
    /// number, and a `snapshot snap-I.json` (I: its number, from 0) at the 500th of each group.
    /// Every command prints one line.
    static func script(commands: Int, padding: Int) -> String {
        let pad = String(repeating: "x", count: padding)
        return (0..<commands).map { i in
            i % groupSize == 500 ? "snapshot snap-\(i).json" : "put k:\(i % 100) {\"i\":\(i),\"pad\":\"\(pad)\"}"
        }.joined(separator: "\n") + "\n"
    }

    /// The files `snapshot` wrote in `directory`, by name.
    static func snapshots(in directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasPrefix("snap-") {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    @Test func scriptOfManyGroupsPrintsStoresAndWritesWhatARunWithoutAStoreDoes() async throws {
        let commands = 6 * Self.groupSize + 300
        let script = Self.script(commands: commands, padding: 20)
        let plain = try Sandbox(), stored = try Sandbox()
        try plain.write("s.cachesh", script + "keys\n")
        try stored.write("s.cachesh", script)
        let without = try await Cachesh.run(["s.cachesh"], in: plain.url)
        let with = try await Cachesh.run(["--store", "s.db", "s.cachesh"], in: stored.url)
        #expect(with.status == 0 && with.stderr.isEmpty, "\(with.stderr)")
        let restart = try await Cachesh.run(["--store", "s.db", "-c", "keys"], in: stored.url)
        #expect(with.stdout + restart.stdout == without.stdout)
        let files = try Self.snapshots(in: stored.url)
        #expect(files.count == 6)
        #expect(files == (try Self.snapshots(in: plain.url)))
    }

    /// The store's write-ahead log outgrows the file size limit (`ulimit -f`, SIGXFSZ ignored, so
    /// a write past it fails as a full disk would) in the middle of the script: what is printed
    /// is the output of whole groups, the error line, exit status 1; the group whose commit
    /// failed ran (its snapshot was written, as before commits were made on a thread) and no
    /// command after it left a file, though the next group ran while that commit was in flight;
    /// a restart holds the state after the last command printed.
    @Test func commitFailingMidScriptLeavesNoFileOfALaterGroup() async throws {
        let commands = 30 * Self.groupSize
        let script = Self.script(commands: commands, padding: 150)
        let plain = try Sandbox(), stored = try Sandbox()
        try plain.write("s.cachesh", script)
        try stored.write("s.cachesh", script)
        let without = try await Cachesh.run(["s.cachesh"], in: plain.url)
        #expect(without.status == 0)
        let limited = try await Cachesh.run(["-c", "trap '' XFSZ; ulimit -f 2000; exec \"$0\" \"$@\"",
                                             Cachesh.binaryPath, "--store", "s.db", "s.cachesh"],
                                            in: stored.url, executable: "/bin/sh")
        #expect(limited.status == 1, "\(limited)")
        #expect(limited.stderr.hasPrefix("cachesh: cannot write store s.db: ") && limited.stderr.split(separator: "\n").count == 1,
                "\(limited.stderr)")
        let printed = limited.stdout.split(separator: "\n").count
        #expect(without.stdout.hasPrefix(limited.stdout))
        #expect(printed % Self.groupSize == 0 && printed > 0 && printed < commands, "\(printed) lines printed")
        // The failed group is the one after those printed: its commands ran, none after it did.
        let ran = printed + Self.groupSize
        let expected = try Self.snapshots(in: plain.url).filter { Int($0.key.dropFirst(5).dropLast(5))! < ran }
        #expect(try Self.snapshots(in: stored.url) == expected)

        // Each key's value is the one of its last put among the commands printed.
        let restart = try await Cachesh.run(["--store", "s.db", "--json", "-c", "peek k:0; peek k:99"], in: stored.url)
        let values = restart.stdout.split(separator: "\n").map { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["value"] as? [String: Any]
        }
        func lastPut(of key: Int) -> Int { (0..<printed).last { $0 % 100 == key && $0 % Self.groupSize != 500 }! }
        #expect(values.map { $0?["i"] as? Int } == [lastPut(of: 0), lastPut(of: 99)], "\(restart)")
    }
}
