#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CacheCore

/// A session's link to its persistent store (`--store`, SPEC §5.3): the store and the commands run
/// since its last commit.
///
/// Output is held back until the commit that covers it, so everything printed is durable; commits
/// are grouped (every `groupSize` top-level commands, or sooner once the output held reaches
/// `heldOutputLimit` bytes, and at the end of each source run) so a batch does not pay a
/// transaction per command. In a batch, a full group may be committed on a writer
/// thread while the next group runs (``Session/pipelineCommits(through:)``).
public final class StoreLink {
    public let store: any PersistentStore
    /// Top-level commands per commit at most (their output waits for it).
    /// (A constant: a public variable of a class is read through a run-time exclusivity check,
    /// about 60 instructions at every top-level command.)
    public let groupSize: Int
    /// Bytes of output held by a group that end it early (after the command that reached them):
    /// the output held, the group's and that of one whose commit is in flight, stays under twice
    /// this and two commands' output, whatever the commands print.
    public let heldOutputLimit: Int
    var commandsHeld = 0
    /// A read-only store (`PersistentStore.isReadOnly`): the state document as opened, which no
    /// command may change (commands that would are refused before they run,
    /// ``Session/readOnlyRefusal(_:)``); nil for a store that is written.
    var readOnlyState: String?
    /// The thread a batch's full groups commit on while the next group runs
    /// (``Session/pipelineCommits(through:)``); nil: every commit is made on the session's thread.
    var writer: CommitWriter?
    /// A group's changes are being committed by ``writer``: its output is held apart
    /// (`TerminalRenderer.holdForCommitInFlight`) until the session waits for that commit.
    var committing = false
    /// That commit failed, found by a command about to read or write a file
    /// (``Session/touchFile(_:_:at:)``): reported when that command ends.
    var failure: StoreError?
    /// The entry rows of the last commit, whose buffers the next commit's rows are written into
    /// (`Cache.takeChanges(scheduledCommand:reusing:)`), kept when they take at most
    /// `spareRowsLimit` bytes.
    private var spareRows = StoredEntryRows()

    /// The most bytes of buffers kept for the next commit's rows: 8 MiB. The bytes' buffer of a
    /// group of 4,096 rows starts at 393,216 bytes and doubles as its rows need: rows of up to
    /// about 1,500 bytes each (6.3 MB, and 160 KB of ids, stamps and ends) are kept. (A larger
    /// commit's, such as the first of a store opened on a large session, is given back rather
    /// than held for the rest of the session.)
    static let spareRowsLimit = 8 << 20

    /// The commands of a group by default: 4096, so that a batch of small commands commits
    /// (and a writer thread starts a transaction, and rewrites the table's last pages) once every
    /// few milliseconds rather than every one or two. For 100,000 puts the store's log, which its
    /// close empties, reached 14.9 MB at 1024 against 3.9-10.1 MB at 4096 (Benchmarks/README.md,
    /// "`--store` puts: where the wall time goes, and groups of 4096").
    public static let defaultGroupSize = 4096
    /// The bytes of output held that end a group by default: 1 MiB (SPEC §7.1).
    public static let defaultHeldOutputLimit = 1 << 20

    public init(_ store: any PersistentStore, groupSize: Int = StoreLink.defaultGroupSize,
                heldOutputLimit: Int = StoreLink.defaultHeldOutputLimit) {
        self.store = store
        self.groupSize = max(1, groupSize)
        self.heldOutputLimit = max(1, heldOutputLimit)
    }

    /// Keeps the rows of a commit that ended for the next one's (`takeSpareRows`), unless their
    /// buffers take more than `spareRowsLimit` bytes.
    func keepSpare(_ rows: StoredEntryRows?) {
        guard let rows, rows.heldBytes <= Self.spareRowsLimit else { return }
        spareRows = rows
    }

    /// The rows kept by `keepSpare` (empty ones when none), no longer kept here.
    func takeSpareRows() -> StoredEntryRows {
        var rows = StoredEntryRows()
        swap(&rows, &spareRows)
        return rows
    }
}

extension Session {
    /// Opens the session on a store: continues from the state it holds (as `restore` would), or
    /// writes this session's state into a new one. The rows go straight into the cache's entry
    /// table. A session that keeps its whole history (the interactive shell, whose `record` writes
    /// the session from its start) keeps the state it began from (sharing the table until the
    /// first change); a batch keeps none (its `record` starts from the state at that point).
    /// - Throws: `StoreError` when the store cannot be read or holds a damaged state; then the
    ///   session is unchanged.
    /// - Complexity: O(size of the store).
    public func open(store: any PersistentStore, groupSize: Int = StoreLink.defaultGroupSize,
                     heldOutputLimit: Int = StoreLink.defaultHeldOutputLimit, on cache: isolated Cache) throws(StoreError) {
        if let stored = try store.load() {
            // In a scope of its own: once restored, a batch's cache is the only holder of the
            // table, so its first change does not copy it.
            do {
                let snapshot = try Self.snapshot(of: store, stored)
                do {
                    // The session's own store: its scheduled file commands stay (they run when due,
                    // refused then under --safe), unlike those of a snapshot restored from elsewhere.
                    try restore(snapshot, base: keepsWholeHistory ? .decoded : .none, allowingFileCommands: true, on: cache)
                } catch {
                    throw .damagedStore(store.path, error)
                }
            }
            cache.startTrackingChanges(everything: false)
            storeHeldASession = true
        } else if store.isReadOnly {
            throw StoreError("cannot open store \(store.path): it is read-only and holds no session yet")
        } else {
            cache.startTrackingChanges(everything: true)
        }
        let changes = cache.takeChanges(scheduledCommand: { [schedule] in schedule.fields($0) })
        let link = StoreLink(store, groupSize: groupSize, heldOutputLimit: heldOutputLimit)
        // A read-only store is only read: what it holds is the state as opened, and stays so.
        if store.isReadOnly {
            link.readOnlyState = changes.state
        } else {
            try store.commit(changes)
            link.keepSpare(changes.rows)
        }
        self.store = link
    }

    /// The snapshot of a store's rows (its state document and other rows read: `stored`).
    ///
    /// The entry rows are read in the store's own order where the snapshot orders them itself
    /// (`Snapshot.takeRowsInAnyOrder`: a store of LRU namespaces only), which spares a sort of
    /// the whole rows in the store; rows found damaged so are read again in recency order, and
    /// the error is the one that order gives (naming the row by its place in it), as before. A
    /// store with a namespace outside LRU is read once, in recency order, from the one snapshot
    /// of its state.
    /// - Throws: `StoreError` for a store that cannot be read or holds a damaged state.
    private static func snapshot(of store: any PersistentStore, _ stored: StoredState) throws(StoreError) -> Snapshot {
        func started() throws(StoreError) -> Snapshot {
            do { return try Snapshot(stored: stored) } catch { throw .damagedStore(store.path, error) }
        }
        // (A closure literal each: one kept in a variable would put the snapshot in a box.)
        func finished(_ snapshot: inout Snapshot) throws(StoreError) {
            do { try snapshot.finishStored() } catch { throw .damagedStore(store.path, error) }
        }
        /// The rows in the table's order; a failure drops the snapshot (and its table) on return.
        func inStoredOrder(_ snapshot: consuming Snapshot) throws(StoreError) -> Snapshot {
            var snapshot = snapshot
            try store.loadEntriesInStoredOrder { row throws(StoreError) in
                do { try snapshot.append(row) } catch { throw .damagedStore(store.path, error) }
            }
            try finished(&snapshot)
            return snapshot
        }
        var snapshot = try started()
        if snapshot.takeRowsInAnyOrder() {
            if let read = try? inStoredOrder(consume snapshot) { return read }
            // Read again in recency order, for the error that order gives (naming the row by its
            // place in it).
            snapshot = try started()
        }
        try store.loadEntries { row throws(StoreError) in
            do { try snapshot.append(row) } catch { throw .damagedStore(store.path, error) }
        }
        try finished(&snapshot)
        return snapshot
    }

    /// Closes the store at a clean exit (checkpointed, unlocked: `PersistentStore.close`). Every
    /// command's changes were committed when it ended, so there is nothing left to commit; a
    /// commit still in flight (a caller that did not end the run's last group) ends first, and
    /// its group's output is handed on.
    /// - Throws: `StoreError` when the store cannot be closed cleanly, or that last commit failed
    ///   (its output is then dropped, and the store left as a failed commit leaves it); the
    ///   session has no store after it either way.
    public func closeStore() throws(StoreError) {
        guard let link = store else { return }
        store = nil
        do { try awaitCommitInFlight(link) } catch {
            terminal.discard()
            throw error
        }
        try link.store.close()
    }

    /// Has the session's full groups committed on a writer thread while it runs the next group
    /// (a batch: script, `-c`, standard input; SPEC §5.3): the session hands a full group's
    /// changes to that thread and goes on, its output held, and waits for that commit at the
    /// next group's end (or the run's end, or before a command reads or writes a file) before it
    /// hands that group's output on. What is printed and stored is what synchronous commits
    /// give, byte for byte; a failed commit is reported as one made synchronously is.
    /// The last commit of a run (`final`) stays synchronous. `store` must be the session's
    /// store, opened for writing; else, and on a read-only store, nothing changes.
    public func pipelineCommits(through store: any PersistentStore & Sendable) {
        guard let link = self.store, link.store === store, link.readOnlyState == nil, !store.isReadOnly else { return }
        link.writer = CommitWriter(store)
    }

    /// After a top-level command: with a store, commits when a group is full (`groupSize`
    /// commands, or `heldOutputLimit` bytes of output held) or `final` (at the end of a run), and
    /// only then hands the output on; without one, hands it on at once.
    /// With a writer thread (``pipelineCommits(through:)``), a full group is committed there
    /// while the next one runs, its output held until the session waits for that commit.
    func commitOrHold(final: Bool, on cache: isolated Cache) {
        guard let link = store else {
            terminal.release()
            return
        }
        if !final {
            link.commandsHeld += 1
            if link.commandsHeld < link.groupSize && terminal.groupByteCount < link.heldOutputLimit { return }
        }
        commitGroup(link, final: final, on: cache)
    }

    /// `commitOrHold`'s commit of the group that ended, apart: in line, its frame (some 700
    /// bytes, for the commit's error paths) was set up and torn down for every command held,
    /// some 35 instructions a command of a batch with a store.
    @inline(never)
    private func commitGroup(_ link: StoreLink, final: Bool, on cache: isolated Cache) {
        link.commandsHeld = 0
        do throws(StoreError) {
            // The commit in flight ends first: its group's output goes out before this one's.
            try awaitCommitInFlight(link)
            let changes = cache.takeChanges(scheduledCommand: { [schedule] in schedule.fields($0) },
                                            reusing: link.takeSpareRows())
            if let opened = link.readOnlyState {
                // Commands that would change the store are refused before they run; one that
                // changed it all the same is not reported as done (its output is dropped below).
                if !changes.changesNothing(besides: opened) { throw StoreError("cannot write store \(link.store.path): it is read-only") }
            } else if !final, let writer = link.writer, recording == nil {
                // (An open recording writes each command to its file as it runs: commits stay
                // synchronous, so that it never holds a command a failed commit would drop.)
                writer.commit(changes)
                link.committing = true
                terminal.holdForCommitInFlight()
                return
            } else {
                try link.store.commit(changes)
                link.keepSpare(changes.rows)
            }
        } catch {
            commitFailed(error, on: cache)
        }
        terminal.release()
    }

    /// Waits for the commit in flight on the writer thread, if any, and hands its group's
    /// output on.
    /// - Throws: its error, or the one a command found before (``StoreLink/failure``): the
    ///   output held is then not handed on.
    private func awaitCommitInFlight(_ link: StoreLink) throws(StoreError) {
        if let failure = link.failure { throw failure }
        guard link.committing, let writer = link.writer else { return }
        link.committing = false
        if let error = writer.wait() {
            link.failure = error
            throw error
        }
        link.keepSpare(writer.takeRows())
        terminal.releaseCommitted()
    }

    /// A commit failed: the output held (of the commands it covered, and of any run since) is
    /// dropped, as it reports changes that are not durable; the error is printed and the session
    /// stops, without its store.
    private func commitFailed(_ error: StoreError, on cache: isolated Cache) {
        // The engine's row ids no longer match the store's rows: should the store be used
        // again, its next commit writes everything anew.
        cache.changesNotCommitted()
        terminal.discard()
        add(.line("cachesh: \(error)", isError: true))
        anyFailed = true
        quitRequested = true
        store = nil
    }

    /// Commits the commands run since the last commit, if any, and hands on their output: the
    /// end of a group that a source's end did not end (`runPiece(_:endsCommitGroup:on:)`); a
    /// commit in flight ends first.
    /// - Returns: false when a commit failed (reported, and the session then has no store).
    public func commitHeld(on cache: isolated Cache) -> Bool {
        guard frames.isIdle, let link = store else { return true }
        if link.commandsHeld > 0 {
            commitOrHold(final: true, on: cache)
        } else if link.committing || link.failure != nil {
            do { try awaitCommitInFlight(link) } catch { commitFailed(error, on: cache) }
            terminal.release()
        }
        return store != nil
    }

    /// Before a command reads or writes a file (the points `--safe` refuses): under `--safe`,
    /// the refusal (counted); with a store's commit in flight, a wait for it, so that no file is
    /// touched while the commit of an earlier group may yet fail (SPEC §5.3): output a failed
    /// commit drops must not leave a file written behind it, and no file read may find the
    /// store's files half written. A commit found failed fails the command (its output is
    /// dropped with the rest held) and ends the session, the failure reported when the command
    /// ends as a synchronous commit's is.
    func touchFile(_ verb: String, _ path: String, at offset: Int) throws(ShellError) {
        if settings.safe { throw refusedBySafe(verb, path, at: offset) }
        guard let link = store, link.committing || link.failure != nil else { return }
        do { try awaitCommitInFlight(link) } catch {
            quitRequested = true
            throw ShellError("cannot \(verb) \(path): the store's last commit failed: \(error)", at: offset)
        }
    }

}

extension Session {
    /// Why a command may not write `path` (resolved): it is one of the files of the session's
    /// store (SPEC §5.3) — the store, SQLite's `-wal` and `-shm` beside it, or its lock file —
    /// which a file written whole (renamed over it) would replace, losing the store, what its
    /// WAL holds, or its lock; nil for any other file, or without a store on disk.
    /// - Complexity: a few `stat`s.
    func storeFileProblem(_ path: String) -> String? {
        guard let link = store else { return nil }
        var st = stat()
        guard stat(link.store.path, &st) == 0, let base = Self.realPath(link.store.path) else { return nil }
        let target = Self.resolvedName(path)
        for suffix in ["", "-wal", "-shm", "-lock"] {
            var other = stat()
            let same = target == base + suffix
                || (stat(path, &st) == 0 && stat(base + suffix, &other) == 0 && st.st_dev == other.st_dev && st.st_ino == other.st_ino)
            guard same else { continue }
            let what = suffix.isEmpty ? "the session's store" : suffix == "-lock" ? "the lock file of the session's store"
                : "SQLite's \(suffix) file of the session's store"
            return "it is \(what) \(link.store.path): writing it would lose the store"
        }
        return nil
    }

    /// The absolute path of an existing file, links followed; nil when there is none.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` with its directory made absolute and links followed, the file itself too when it
    /// is a link: the file a write to `path` would replace, existing or not.
    private static func resolvedName(_ path: String) -> String {
        if let real = realPath(path) { return real }
        let (directory, name) = FileIO.split(path)
        guard let real = realPath(directory) else { return path }
        return (real == "/" ? "" : real) + "/" + name
    }
}
