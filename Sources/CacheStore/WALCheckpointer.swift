import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Copies a store's write-ahead log into its database file in the background, while the session
/// goes on writing (SPEC §5.3), so that `SQLiteStore.close` finds little left to copy.
///
/// Why: a clean close checkpoints the whole log into the file (after it, the file alone holds the
/// store). For a batch that wrote much, that checkpoint was a serial tail of the run: a sync of
/// the log, every changed page written to the file, a sync of the file. Here the same work is done
/// by SQLite's own passive checkpoint, on a connection of its own and a thread of its own, each
/// time the log has grown by `step` frames since the last one was asked for. A passive
/// checkpoint waits for no reader or writer: the session's commits go on meanwhile, and a
/// checkpoint copies only frames already committed. What a commit makes durable, and what a
/// killed process leaves, does not depend on when checkpoints run (SQLite's WAL design); only
/// how much is left for the close does.
///
/// The store's connection reports its log's growth through SQLite's WAL hook (`install`), which
/// takes the place of its automatic checkpoint; that checkpoint is kept as it was, in the hook
/// (`limit` frames, run on the committing thread), for a log the background checkpoints could
/// not keep short.
final class WALCheckpointer: Sendable {
    /// The database file, opened again by the checkpoint's own connection.
    private let path: String
    /// Frames of log growth that start a background checkpoint (set by `install`).
    private let step = Atomic<Int32>(.max)
    /// Frames at which the committing connection checkpoints itself (SQLite's automatic
    /// checkpoint, which the hook replaces; set by `install`).
    private let limit = Atomic<Int32>(.max)
    /// Serial: one checkpoint at a time, and `finish` after the last.
    private let queue = DispatchQueue(label: "cachesh.store-checkpoint")
    /// The checkpoint's connection, opened by the first checkpoint; used on `queue` only.
    private let connection = Mutex<OpaquePointer?>(nil)
    /// The log's frame count when a checkpoint was last asked for, the count the last commit
    /// left, and whether a checkpoint is asked for and not yet started.
    private let asked = Mutex<(frames: Int32, last: Int32, pending: Bool)>((0, 0, false))
    /// Set by `finish`: no checkpoint starts after it.
    private let finished = Atomic<Bool>(false)

    init(path: String) {
        self.path = path
    }

    /// Has `db` (the store's connection, in WAL mode, pages of `pageSize` bytes) report each
    /// commit's log size here, in place of its automatic checkpoint (at `limit` frames, which it
    /// keeps). `uninstall` before the connection closes or this object goes away.
    func install(on db: OpaquePointer, pageSize: Int, limit: Int32) {
        // A background checkpoint for every MiB of log: fewer would leave more for the close,
        // more would pay two syncs for little each.
        step.store(Int32(max(16, (1 << 20) / max(pageSize, 512))), ordering: .relaxed)
        self.limit.store(limit > 0 ? limit : .max, ordering: .relaxed)
        sqlite3_wal_hook(db, { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            // SQLite's own automatic checkpoint, as `wal_autocheckpoint` made it: on this thread,
            // once the log reaches `limit` frames.
            if frames >= checkpointer.limit.load(ordering: .relaxed) { sqlite3_wal_checkpoint(db, name) }
            checkpointer.logGrew(to: frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops `db` reporting here.
    func uninstall(from db: OpaquePointer) {
        sqlite3_wal_hook(db, nil, nil)
    }

    /// A commit left the log at `frames` frames (fewer than the commit before left: the log was
    /// started again from its beginning, all of it having been copied, and all of `frames` is new).
    private func logGrew(to frames: Int32) {
        let step = step.load(ordering: .relaxed)
        let start = asked.withLock { asked -> Bool in
            if frames < asked.last { asked.frames = 0 }
            asked.last = frames
            guard !asked.pending, frames - asked.frames >= step else { return false }
            asked.frames = frames
            asked.pending = true
            return true
        }
        guard start else { return }
        queue.async { self.checkpoint() }
    }

    private func checkpoint() {
        asked.withLock { $0.pending = false }
        guard !finished.load(ordering: .acquiring) else { return }
        connection.withLock { connection in
            if connection == nil {
                var db: OpaquePointer?
                // A new connection finds the log when it first reads the file (the checkpoint
                // alone would take the file for one without a log).
                if sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) != SQLITE_OK
                    || sqlite3_exec(db, "PRAGMA schema_version", nil, nil, nil) != SQLITE_OK {
                    // Nothing is lost: the close copies all of the log itself.
                    sqlite3_close_v2(db)
                    return
                }
                connection = db
            }
            // A failure leaves the log as it was, for the next checkpoint or the close.
            _ = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }

    /// Waits for the checkpoint running, if any, starts no other, and closes the checkpoint's
    /// connection (before the store's own closes, which then is the last and removes the log).
    func finish() {
        finished.store(true, ordering: .releasing)
        queue.sync {
            connection.withLock { connection in
                sqlite3_close_v2(connection)
                connection = nil
            }
        }
    }

    /// Waits until the checkpoints asked for so far have ended, for tests.
    func settle() {
        queue.sync {}
    }
}
