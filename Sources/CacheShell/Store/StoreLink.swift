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
/// are grouped (every `groupSize` top-level commands, and at the end of each source run) so a batch
/// does not pay a transaction per command.
public final class StoreLink {
    public let store: any PersistentStore
    /// Top-level commands per commit at most (their output waits for it).
    /// (A constant: a public variable of a class is read through a run-time exclusivity check,
    /// about 60 instructions at every top-level command.)
    public let groupSize: Int
    var commandsHeld = 0
    /// A read-only store (`PersistentStore.isReadOnly`): the state document as opened, which no
    /// command may change (commands that would are refused before they run,
    /// ``Session/readOnlyRefusal(_:)``); nil for a store that is written.
    var readOnlyState: String?

    public init(_ store: any PersistentStore, groupSize: Int = 1024) {
        self.store = store
        self.groupSize = max(1, groupSize)
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
    public func open(store: any PersistentStore, groupSize: Int = 1024, on cache: isolated Cache) throws(StoreError) {
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
        } else if store.isReadOnly {
            throw StoreError("cannot open store \(store.path): it is read-only and holds no session yet")
        } else {
            cache.startTrackingChanges(everything: true)
        }
        let changes = cache.takeChanges(scheduledCommand: { [schedule] in schedule.fields($0) })
        let link = StoreLink(store, groupSize: groupSize)
        // A read-only store is only read: what it holds is the state as opened, and stays so.
        if store.isReadOnly { link.readOnlyState = changes.state } else { try store.commit(changes) }
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
    /// command's changes were committed when it ended, so there is nothing left to commit.
    /// - Throws: `StoreError` when the store cannot be closed cleanly; the session has no store
    ///   after it either way.
    public func closeStore() throws(StoreError) {
        guard let link = store else { return }
        store = nil
        try link.store.close()
    }

    /// After a top-level command: with a store, commits when a group is full (or `final`, at the
    /// end of a run) and only then hands the output on; without one, hands it on at once.
    func commitOrHold(final: Bool, on cache: isolated Cache) {
        guard let link = store else {
            terminal.release()
            return
        }
        if !final {
            link.commandsHeld += 1
            if link.commandsHeld < link.groupSize { return }
        }
        link.commandsHeld = 0
        do {
            let changes = cache.takeChanges(scheduledCommand: { [schedule] in schedule.fields($0) })
            if let opened = link.readOnlyState {
                // Commands that would change the store are refused before they run; one that
                // changed it all the same is not reported as done (its output is dropped below).
                if !changes.changesNothing(besides: opened) { throw StoreError("cannot write store \(link.store.path): it is read-only") }
            } else {
                try link.store.commit(changes)
            }
        } catch {
            // The engine's row ids no longer match the store's rows: should the store be used
            // again, its next commit writes everything anew.
            cache.changesNotCommitted()
            // The held output reports changes that are not durable: it is not printed.
            terminal.discard()
            add(.line("cachesh: \(error)", isError: true))
            anyFailed = true
            quitRequested = true
            store = nil
        }
        terminal.release()
    }

    /// Commits the commands run since the last commit, if any, and hands on their output: the
    /// end of a group that a source's end did not end (`runPiece(_:endsCommitGroup:on:)`).
    /// - Returns: false when the commit failed (reported, and the session then has no store).
    public func commitHeld(on cache: isolated Cache) -> Bool {
        guard frames.isIdle, let link = store, link.commandsHeld > 0 else { return true }
        commitOrHold(final: true, on: cache)
        return store != nil
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
