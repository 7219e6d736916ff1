import CacheCore
import Dispatch
import Synchronization

/// The thread a batch's store commits on while the session runs the next group of commands
/// (SPEC §5.3, `Session.pipelineCommits(through:)`): one commit at a time, handed over whole
/// (`StoreChanges` is a value the engine no longer holds) and waited for by the session before it
/// hands on that group's output, starts another commit, or lets anything else depend on the store.
///
/// The store is used by one thread at a time: by this one from `commit` until the commit ends,
/// and by the session only once `wait` has returned (the session calls nothing else of the store
/// while a commit is in flight). Nothing here touches the engine.
final class CommitWriter: Sendable {
    private let store: any PersistentStore & Sendable
    /// Serial: `wait`'s empty block runs after the commit before it ends.
    private let queue = DispatchQueue(label: "cachesh.store-writer")
    /// The error of the last commit, set by the writer thread, taken by `wait`.
    private let failure = Mutex<StoreError?>(nil)
    /// The entry rows of the last commit, once committed (`takeRows`).
    private let committedRows = Mutex<StoredEntryRows?>(nil)

    init(_ store: any PersistentStore & Sendable) {
        self.store = store
    }

    /// Starts committing `changes` on the writer thread and returns at once. The caller waits
    /// (`wait()`) before it starts another commit or uses the store.
    func commit(_ changes: StoreChanges) {
        queue.async { self.run(changes) }
    }

    private func run(_ changes: StoreChanges) {
        do { try store.commit(changes) } catch { failure.withLock { $0 = error } }
        committedRows.withLock { $0 = changes.rows }
    }

    /// The entry rows of the commit last waited for (`wait`), their buffers for the next
    /// commit's rows (`Cache.takeChanges(scheduledCommand:reusing:)`); nil when taken already.
    func takeRows() -> StoredEntryRows? {
        committedRows.withLock { rows in
            defer { rows = nil }
            return rows
        }
    }

    /// Waits until the commit started last has ended.
    /// - Returns: its error, or nil when it was committed (or none was started).
    func wait() -> StoreError? {
        queue.sync {}
        return failure.withLock { failure in
            defer { failure = nil }
            return failure
        }
    }
}
