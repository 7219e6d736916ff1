import CacheCore
import CacheShell
import CacheStore
import Foundation
import Synchronization
import Testing
import TestSupport

/// A batch's full groups committed on a writer thread while the next group runs
/// (`Session.pipelineCommits(through:)`, SPEC §5.3): what is printed, stored and written to files
/// is what synchronous commits give, byte for byte, a failed commit included; no output is handed
/// on before the commit that covers it ends, and no file is written by a command after a group
/// whose commit failed.
@Suite struct PipelinedCommitTests {
    /// What was handed on, in order, behind a lock: the writer thread reads how much.
    final class Printed: Sendable {
        private let items = Mutex<[String]>([])
        func append(_ text: String, isError: Bool) { items.withLock { $0.append(isError ? "!! " + text : text) } }
        var count: Int { items.withLock { $0.count } }
        var text: String { items.withLock { $0.joined() } }
    }

    /// An SQLite store in memory that notes how many pieces of output had been handed on at the
    /// start and at the end of each commit, and fails its `failing`-th commit (the open's is the
    /// first) and every one after, as a full disk would.
    final class WatchedStore: PersistentStore, Sendable {
        let inner: SQLiteStore
        let failing: Int
        let printed: Printed
        private let notes = Mutex<(commits: Int, printedAtCommits: [[Int]])>((0, []))

        init(failing: Int, printed: Printed) throws {
            inner = try SQLiteStore()
            self.failing = failing
            self.printed = printed
        }

        var printedAtCommits: [[Int]] { notes.withLock { $0.printedAtCommits } }
        func load() throws(StoreError) -> StoredState? { try inner.load() }
        func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) { try inner.loadEntries(each) }
        func commit(_ changes: StoreChanges) throws(StoreError) {
            let n = notes.withLock { $0.commits += 1; return $0.commits }
            let before = printed.count
            defer {
                let after = printed.count
                notes.withLock { $0.printedAtCommits.append([before, after]) }
            }
            if n >= failing { throw StoreError("cannot write store s.db: database or disk is full") }
            try inner.commit(changes)
        }
    }

    /// Everything a run left: its output, how it ended, the commits' notes, the files its
    /// commands wrote (by name), and the state a session opened anew on its store holds.
    struct Run: Equatable, Sendable {
        var printed: String
        var failed: Bool
        var quit: Bool
        var printedAtCommits: [[Int]]
        var files: [String: String]
        var stored: String
    }

    /// Expects `run` to be `expected` field by field, naming the first difference of each.
    static func expectSame(_ run: Run, _ expected: Run, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        func first<T: Equatable>(_ a: [T], _ b: [T]) -> String {
            let i = Array(zip(a, b)).firstIndex { $0 != $1 } ?? min(a.count, b.count)
            return "at \(i) of \(a.count) and \(b.count): \(i < a.count ? "\(a[i])" : "-") vs \(i < b.count ? "\(b[i])" : "-")"
        }
        let lines = { (text: String) in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        #expect(run.printed == expected.printed, "\(what): printed \(first(lines(run.printed), lines(expected.printed)))",
                sourceLocation: sourceLocation)
        #expect(run.failed == expected.failed && run.quit == expected.quit, "\(what)", sourceLocation: sourceLocation)
        #expect(run.printedAtCommits == expected.printedAtCommits,
                "\(what): printed at commits \(first(run.printedAtCommits, expected.printedAtCommits))", sourceLocation: sourceLocation)
        #expect(run.files.keys.sorted() == expected.files.keys.sorted(), "\(what)", sourceLocation: sourceLocation)
        #expect(run.files == expected.files, "\(what): files differ", sourceLocation: sourceLocation)
        #expect(run.stored == expected.stored, "\(what): stored \(first(lines(run.stored), lines(expected.stored)))",
                sourceLocation: sourceLocation)
    }

    /// A script of `commands` commands that reaches every way output is held (replies written
    /// straight into the batch's buffer, error lines and tables as text, a scheduled command's
    /// output inside another's) and every way a command touches a file: `snapshot FILE` (a
    /// write), `source FILE` (a read), and a scheduled `snapshot FILE`, run by an `advance`.
    static func script(commands: Int) -> String {
        (0..<commands).map { i in
            switch i % 11 {
            case 0: "put feed:\(i % 13) {\"i\":\(i)}"
            case 1: "get feed:\(i % 13)"
            case 2: "snapshot snap-\(i).json"
            case 3: "nonsense \(i)"
            case 4: "at 3ms snapshot at-\(i).json"
            case 5: "advance 5ms"
            case 6: "evict feed:\((i + 5) % 13)"
            case 7: "keys feed:*"
            case 8: "put other:\(i % 7) \(i)"
            case 9: "source part.cachesh"
            default: "stats feed"
            }
        }.joined(separator: "\n") + "\n"
    }

    /// Runs `script` as a batch does, on a new session over a `WatchedStore`, in a new directory
    /// (which its file commands use), with commit groups of `groupSize` commands, committed on a
    /// writer thread when `pipelined`. `pieces`: the script is run in that many pieces that end
    /// no commit group (as a script file is read), then the last group is committed (`commitHeld`);
    /// `direct`: replies are written straight into an output buffer, as a batch's are.
    static func run(_ script: String, pipelined: Bool, groupSize: Int, heldOutputLimit: Int = StoreLink.defaultHeldOutputLimit,
                    failing: Int = .max, pieces: Int = 1, direct: Bool = true, collects: Bool = false,
                    part: String = "put feed:sourced 1\nget feed:sourced\n") async throws -> Run {
        let directory = Fixtures.directory("pipelined")
        try part.write(toFile: directory + "/part.cachesh", atomically: true, encoding: .utf8)
        let printed = Printed()
        let store = try WatchedStore(failing: failing, printed: printed)
        let shell = await TestShell()
        let ended = try await shell.run { session, cache in
            session.keepsWholeHistory = false
            if collects {
                // No sink: the session keeps its output for `takeOutput` (a library's session).
            } else if direct {
                _ = session.writeRepliesDirectly(flushed: { printed.append(String(decoding: $0, as: UTF8.self), isError: false) },
                                                 error: { printed.append($0, isError: true) })
            } else {
                session.sink = { text, isError in printed.append(text, isError: isError) }
            }
            try session.open(store: store, groupSize: groupSize, heldOutputLimit: heldOutputLimit, on: cache)
            if pipelined { session.pipelineCommits(through: store) }
            let lines = script.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let size = (lines.count + pieces - 1) / pieces
            if pieces == 1 {
                session.run(SourceFile(name: directory + "/s.cachesh", text: script), on: cache)
            } else {
                var first = 1
                for start in stride(from: 0, to: lines.count, by: size) {
                    let piece = lines[start..<min(start + size, lines.count)].joined(separator: "\n") + "\n"
                    _ = session.runPiece(SourceFile(name: directory + "/s.cachesh", text: piece, firstLine: first),
                                         endsCommitGroup: false, on: cache)
                    first += size
                    if session.quitRequested { break }
                }
                _ = session.commitHeld(on: cache)
            }
            session.directOutput?.flush()
            // An open `record` writes its file as the session ends.
            _ = session.endRecording()
            return (session.anyFailed, session.quitRequested)
        }
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name != "part.cachesh" {
            files[name] = try String(contentsOfFile: directory + "/" + name, encoding: .utf8).replacingOccurrences(of: directory, with: "DIR")
        }
        let reader = await TestShell()
        try await reader.run { session, cache in try session.open(store: store.inner, on: cache) }
        // (Each run has a directory of its own, which error lines and scheduled commands name.)
        return Run(printed: printed.text.replacingOccurrences(of: directory, with: "DIR"), failed: ended.0, quit: ended.1, printedAtCommits: store.printedAtCommits,
                   files: files, stored: await reader.snapshotText().replacingOccurrences(of: directory, with: "DIR"))
    }

    /// A group also ends once the output it holds reaches `heldOutputLimit` bytes (SPEC §7: what a
    /// group of commands that each print much would hold): with groups of 1000 commands, a
    /// script of 66 commits many times, and prints, stores and writes what it does when only its
    /// end ends its group, whether its commits are made on the writer thread or not.
    @Test(arguments: [true, false])
    func aGroupEndsOnceItsHeldOutputReachesTheLimit(direct: Bool) async throws {
        let script = Self.script(commands: 66)
        let whole = try await Self.run(script, pipelined: false, groupSize: 1000, direct: direct)
        // The store's open commits once, the script's end once.
        #expect(whole.printedAtCommits.count == 2, "\(whole.printedAtCommits)")
        // Under 200 bytes a group (the script prints some 3,000): each group ends at the command
        // that takes its output to 200 bytes or more.
        let synchronous = try await Self.run(script, pipelined: false, groupSize: 1000, heldOutputLimit: 200, direct: direct)
        let pipelined = try await Self.run(script, pipelined: true, groupSize: 1000, heldOutputLimit: 200, direct: direct)
        Self.expectSame(pipelined, synchronous, "limit of 200 bytes")
        #expect(synchronous.printed == whole.printed && synchronous.files == whole.files && synchronous.stored == whole.stored)
        #expect(synchronous.printed.utf8.count > 2000 && synchronous.printedAtCommits.count >= synchronous.printed.utf8.count / 400,
                "\(synchronous.printed.utf8.count) bytes printed over \(synchronous.printedAtCommits.count) commits")
        // With a limit of one byte, every command that prints ends its group.
        let each = try await Self.run(script, pipelined: true, groupSize: 1000, heldOutputLimit: 1, direct: direct)
        #expect(each.printed == whole.printed && each.stored == whole.stored)
        #expect(each.printedAtCommits.count > 50, "\(each.printedAtCommits.count) commits")
    }

    /// The bound holds inside a `source` too: the group ends after the sourced command that
    /// takes its held output to the bound, not only once the `source` ends, so a long `source`
    /// holds no more output than the same commands as a script. What is printed and stored is
    /// the same, whether the commits are made on the writer thread or not.
    @Test(arguments: [true, false])
    func aSourcedCommandEndsTheGroupOnceItsHeldOutputReachesTheLimit(pipelined: Bool) async throws {
        // (A `source` stops at its first failing command: the script's unknown commands are left out.)
        let part = Self.script(commands: 66).split(separator: "\n").filter { !$0.hasPrefix("nonsense") }
            .joined(separator: "\n").replacingOccurrences(of: "source part.cachesh", with: "echo sourced") + "\n"
        let script = "put feed:first 1\nsource part.cachesh\nget feed:first\n"
        let whole = try await Self.run(script, pipelined: pipelined, groupSize: 1000, direct: false, part: part)
        // The store's open commits once, the script's end once.
        #expect(whole.printedAtCommits.count == 2, "\(whole.printedAtCommits)")
        let bounded = try await Self.run(script, pipelined: pipelined, groupSize: 1000, heldOutputLimit: 200, direct: false, part: part)
        #expect(bounded.printed == whole.printed && bounded.stored == whole.stored && bounded.files == whole.files)
        #expect(bounded.printed.utf8.count > 2000 && bounded.printedAtCommits.count >= bounded.printed.utf8.count / 400,
                "\(bounded.printed.utf8.count) bytes printed over \(bounded.printedAtCommits.count) commits")
        // Output goes out as the groups inside the `source` are committed, before it ends: the
        // last commit, at the script's end, finds most of the 67 texts printed (the sink's
        // count), where with no bound it found none.
        #expect(whole.printedAtCommits.last?.first == 0)
        #expect((bounded.printedAtCommits.last?.first ?? 0) >= 50, "\(bounded.printedAtCommits)")
        let direct = try await Self.run(script, pipelined: pipelined, groupSize: 1000, heldOutputLimit: 200, direct: true, part: part)
        #expect(direct.printed == whole.printed && direct.stored == whole.stored && direct.printedAtCommits.count == bounded.printedAtCommits.count)
    }

    /// The default bound, 1 MiB: a script of 30 commands printing 100,001 bytes each ends a
    /// group after every 11th (the first to take its group past 1 MiB), then at its end.
    @Test func theDefaultLimitIsOneMebibyte() async throws {
        let line = "echo " + String(repeating: "x", count: 100_000) + "\n"
        let run = try await Self.run(String(repeating: line, count: 30), pipelined: true, groupSize: 1000, direct: false)
        #expect(run.printed.utf8.count == 30 * 100_001)
        // The store's open, two groups of 11 commands, the last 8 at the script's end.
        #expect(run.printedAtCommits.count == 4, "\(run.printedAtCommits)")
    }

    /// Output a session without a sink keeps for `takeOutput` is handed on, not held: it does not
    /// count against the next group's bound, so the commands after a large output are grouped.
    @Test(arguments: [true, false])
    func outputKeptForTheCallerIsNotHeld(pipelined: Bool) async throws {
        let script = "echo " + String(repeating: "x", count: 2000) + "\n"
            + (0..<50).map { "put k:\($0) \($0)" }.joined(separator: "\n") + "\n"
        let run = try await Self.run(script, pipelined: pipelined, groupSize: 1000, heldOutputLimit: 1000, collects: true)
        // The store's open, the group the echo ends, the 50 puts at the script's end.
        #expect(run.printedAtCommits.count == 3, "\(run.printedAtCommits.count) commits")
    }

    /// A script of many groups prints, stores and writes what synchronous commits give, output
    /// handed on at the same points (between the same commits), whether the script runs whole or
    /// in pieces (the last group then ends at `commitHeld`, with a commit in flight when the
    /// script's length is a multiple of the group size).
    @Test(arguments: [(3, 1, true), (3, 4, true), (4, 1, false), (5, 3, false), (1, 1, true)])
    func outputStoreAndFilesAreThoseOfSynchronousCommits(groupSize: Int, pieces: Int, direct: Bool) async throws {
        for commands in [60, 66] {
            let script = Self.script(commands: commands)
            let synchronous = try await Self.run(script, pipelined: false, groupSize: groupSize, pieces: pieces, direct: direct)
            let pipelined = try await Self.run(script, pipelined: true, groupSize: groupSize, pieces: pieces, direct: direct)
            Self.expectSame(pipelined, synchronous, "\(commands) commands")
            // The script ran whole: every file command wrote its file, and nothing failed but `nonsense`.
            // (The last `at` of 60 commands is never run: no `advance` follows it.)
            #expect(synchronous.files.count == (commands == 60 ? 11 : 12), "\(synchronous.files.keys.sorted())")
            #expect(!synchronous.quit && synchronous.printed.contains("wrote snap-57.json"))
            // A group's output went out after its commit, not before: some did before the last.
            if !direct { #expect(synchronous.printedAtCommits.count > 10 && synchronous.printedAtCommits[5][0] > 0) }
        }
    }

    /// A commit that fails in the middle of a pipelined batch prints exactly what it printed
    /// synchronously (the groups before it, then the error line), ends the session as that did,
    /// and leaves the files that did: none written by a command after the group it covered,
    /// though those commands ran while it was in flight (their file commands wait for it).
    @Test(arguments: [true, false])
    func failedCommitPrintsAndWritesWhatASynchronousOneDid(direct: Bool) async throws {
        let script = Self.script(commands: 66)
        for failing in 2...24 {
            let synchronous = try await Self.run(script, pipelined: false, groupSize: 3, failing: failing, direct: direct)
            let pipelined = try await Self.run(script, pipelined: true, groupSize: 3, failing: failing, direct: direct)
            Self.expectSame(pipelined, synchronous, "commit \(failing) failing")
            #expect(synchronous.failed && synchronous.quit)
            #expect(synchronous.printed.hasSuffix("!! cachesh: cannot write store s.db: database or disk is full\n"))
            // The group of commit `failing` (its commands 3(failing - 2) ..< 3(failing - 1)) ran;
            // none after it did.
            let ran = 3 * (failing - 1)
            for name in synchronous.files.keys {
                // `snap-I.json` is written by command I, `at-I.json` by the `advance` after it.
                let i = Int(name.split(separator: "-")[1].dropLast(".json".count))!
                let command = name.hasPrefix("at-") ? i + 1 : i
                #expect(command < ran, "\(name) written, commit \(failing) failing")
            }
            #expect(synchronous.printedAtCommits.count == failing)
        }
    }

    /// An SQLite store in memory that notes where each commit's entry rows are written: the
    /// address of their bytes' buffer, its size, and the rows.
    final class BufferNotingStore: PersistentStore, Sendable {
        struct Note: Equatable, Sendable {
            var address: Int
            var room: Int
            var rows: Int
        }
        let inner: SQLiteStore
        private let notes = Mutex<[Note]>([])
        init() throws { inner = try SQLiteStore() }
        var commits: [Note] { notes.withLock { $0 } }
        func load() throws(StoreError) -> StoredState? { try inner.load() }
        func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) { try inner.loadEntries(each) }
        func commit(_ changes: StoreChanges) throws(StoreError) {
            let address = changes.rows.bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
            notes.withLock { $0.append(Note(address: address, room: changes.rows.bytes.count, rows: changes.rows.count)) }
            try inner.commit(changes)
        }
    }

    /// Each commit's entry rows are written into the buffers of the last commit's (no new
    /// buffer, whose fresh pages the system faults in and zeroes, for each group), on the writer
    /// thread or not, the run's last commit too; buffers of more than 8 MiB (SPEC §7.1) are given
    /// back, not kept for the next commit. What is stored is the same either way.
    @Test(arguments: [true, false])
    func eachCommitWritesItsRowsIntoTheLastOnesBuffers(pipelined: Bool) async throws {
        func run(_ script: String) async throws -> (commits: [BufferNotingStore.Note], stored: String) {
            let store = try BufferNotingStore()
            let shell = await TestShell()
            try await shell.run { session, cache in
                session.keepsWholeHistory = false
                try session.open(store: store, groupSize: 4, on: cache)
                if pipelined { session.pipelineCommits(through: store) }
                session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
            }
            let reader = await TestShell()
            try await reader.run { session, cache in try session.open(store: store.inner, on: cache) }
            return (store.commits, await reader.snapshotText())
        }
        // 30 puts: the open's commit (no rows), then 7 groups of 4 rows and a last one of 2
        // (whose rows new buffers would give less room).
        let small = (0..<30).map { "put feed:\($0 % 11) {\"id\":\($0),\"text\":\"item \($0)\"}" }
        let (commits, stored) = try await run(small.joined(separator: "\n") + "\n")
        #expect(commits.map(\.rows) == [0, 4, 4, 4, 4, 4, 4, 4, 2])
        #expect(Set(commits.dropFirst().map(\.address)).count == 1, "\(commits)")
        #expect(Set(commits.dropFirst().map(\.room)).count == 1, "\(commits)")
        #expect(stored.contains("\"item 29\"") && stored.contains("\"item 19\""))

        // A group of 4 values of 2.5 MB: its buffers (over 10 MB) are not kept, and the next
        // group's rows (values of 1,000 bytes) get new ones, which the group after it (small
        // rows, which new buffers would give less room) writes into.
        let big = String(repeating: "x", count: 2_500_000)
        let medium = String(repeating: "y", count: 1000)
        let mixed = small[0..<8] + (0..<4).map { "put big:\($0) \"\(big)\"" } + (0..<4).map { "put medium:\($0) \"\(medium)\"" }
            + small[8..<12]
        let after = try await run(mixed.joined(separator: "\n") + "\n")
        // (The run ends on a full group: its end commits no row.)
        #expect(after.commits.map(\.rows) == [0, 4, 4, 4, 4, 4, 0])
        #expect(after.commits[3].room > 10_000_000)
        #expect(after.commits[4].room > 4000 && after.commits[4].room < 1 << 20, "\(after.commits)")
        #expect(after.commits[5].room == after.commits[4].room && after.commits[5].address == after.commits[4].address,
                "\(after.commits)")
        #expect(after.stored.contains(big) && after.stored.contains(medium))

        // Values of 1.2 MB: buffers of some 5 MB, under the limit, kept for the next group.
        let large = String(repeating: "z", count: 1_200_000)
        let kept = try await run((small[0..<4] + (0..<4).map { "put large:\($0) \"\(large)\"" } + small[4..<8])
            .joined(separator: "\n") + "\n")
        #expect(kept.commits.map(\.rows) == [0, 4, 4, 4, 0])
        #expect(kept.commits[2].room > 4_000_000 && kept.commits[2].room < 8 << 20, "\(kept.commits)")
        #expect(kept.commits[3].room == kept.commits[2].room && kept.commits[3].address == kept.commits[2].address,
                "\(kept.commits)")
    }

    /// While a `record` is open (it writes each command to its file as it runs), commits are
    /// made synchronously: a commit failing after it started leaves the recording a synchronous
    /// run leaves, holding no command of a group after the failed one; the `record` command
    /// itself waits for the commit in flight before it starts the file.
    @Test func recordingKeepsCommitsSynchronous() async throws {
        var lines = (0..<40).map { i in i % 4 == 0 ? "get feed:\(i % 5)" : "put feed:\(i % 5) {\"i\":\(i)}" }
        lines[10] = "record rec-10.txt"
        lines[31] = "record stop"
        let script = lines.joined(separator: "\n") + "\n"
        for failing in [2, 4, 5, 6, 9, 12, .max] {
            let synchronous = try await Self.run(script, pipelined: false, groupSize: 3, failing: failing)
            let pipelined = try await Self.run(script, pipelined: true, groupSize: 3, failing: failing)
            Self.expectSame(pipelined, synchronous, "commit \(failing) failing")
            // The recording is written when the commit of the group of `record` (its 4th) succeeded.
            #expect((synchronous.files["rec-10.txt"] != nil) == (failing > 4), "commit \(failing) failing")
        }
    }

    /// A batch writes each reply straight into its output buffer; with commits on a writer
    /// thread it stays there, unflushed, until the commit of its group has ended, though the next
    /// group's replies are written behind it meanwhile; a failed commit takes back the replies of
    /// its group and of those since. (`StoreTests.directRepliesWaitForTheirCommit`, pipelined.)
    @Test func directRepliesWaitForTheirCommitOnTheWriterThread() async throws {
        // Each `get` prints a value of 40 000 bytes: two of them pass the buffer's flush size.
        let big = "{\"text\":\"" + String(repeating: "x", count: 40_000) + "\"}"
        let firstGroup = "put k:1 \(big)\nget k:1\nget k:1\n"
        let script = firstGroup + "get k:1\nget k:1\nget k:1\n"
        func run(failing: Int, _ script: String) async throws -> (stdout: String, errors: [String], flushedAtCommits: [[Int]]) {
            let stdout = Printed()
            let errors = Printed()
            let store = try WatchedStore(failing: failing, printed: stdout)
            let shell = await TestShell()
            try await shell.run { session, cache in
                session.keepsWholeHistory = false
                // One piece a byte: the store notes how many bytes were written out.
                let buffer = session.writeRepliesDirectly(
                    flushed: { for byte in $0 { stdout.append(String(decoding: [byte], as: UTF8.self), isError: false) } },
                    error: { errors.append($0, isError: false) })
                try session.open(store: store, groupSize: 3, on: cache)
                session.pipelineCommits(through: store)
                session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
                buffer.flush()
            }
            return (stdout.text, errors.text.isEmpty ? [] : [errors.text], store.printedAtCommits)
        }
        let plain = try await run(failing: .max, script)
        let firstGroupOutput = try await run(failing: .max, firstGroup).stdout
        #expect(plain.stdout.utf8.count > 5 * 40_000 && plain.errors.isEmpty)
        // Commits: at the open, the first group (on the writer thread, while the second runs),
        // the second (likewise), the run's end (nothing held). No reply is flushed before its
        // group's commit has ended, nor after it is flushed, until the commit it waited for.
        let first = firstGroupOutput.utf8.count, all = plain.stdout.utf8.count
        #expect(plain.flushedAtCommits == [[0, 0], [0, 0], [first, first], [all, all]])

        // The second group's commit fails: only the first group's replies are printed.
        let failed = try await run(failing: 3, script)
        #expect(failed.stdout == firstGroupOutput)
        #expect(failed.errors == ["cachesh: cannot write store s.db: database or disk is full\n"])
    }

    /// A store that cannot be written is not given a writer thread: a session on it commits
    /// nothing, and refuses what would change it, as before.
    @Test func readOnlyStoreStaysSynchronous() async throws {
        let path = Fixtures.directory("pipelined") + "/ro.db"
        let writer = try SQLiteStore(path: path)
        let shell = await TestShell()
        try await shell.run { session, cache in try session.open(store: writer, on: cache) }
        _ = await shell.typed("put a 1")
        try writer.close()
        #expect(chmod(path, 0o444) == 0)
        let store = try SQLiteStore(path: path)
        #expect(store.isReadOnly)
        let reader = await TestShell()
        let output = try await reader.run { session, cache in
            try session.open(store: store, groupSize: 1, on: cache)
            session.pipelineCommits(through: store)
            session.run(SourceFile(name: "s.cachesh", text: "peek a\nkeys\nput b 2\n"), on: cache)
            return session.takeOutput().map(\.text).joined()
        }
        #expect(!output.contains("cannot write store") && output.hasSuffix("s.cachesh:3: error: the store \(path) is read-only: put would change it\n"), "\(output)")
        #expect(await reader.run { session, _ in session.store != nil })
        try store.close()
    }
}
