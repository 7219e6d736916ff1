import CacheCore
import CacheShell
import CacheStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens `--store` for the executable (SPEC §5.3): the SQLite store, locked against other
/// processes, becomes the session's store link (`Session.open(store:)`); `finish` closes it.
enum StoreOpener {
    /// Opens the store at `path` for the session; another process having it open is an error
    /// (exit 2), or with `wait` a wait, announced once on stderr, that ends when that process
    /// closes the store or when this one is interrupted (Ctrl-C). With `pipelined` (a batch), full
    /// groups of commands are committed on a writer thread while the next group runs
    /// (`Session.pipelineCommits(through:)`); the interactive shell commits each line itself.
    static func open(_ path: String, wait: Bool, pipelined: Bool, session: Session, terminal: Terminal, on cache: isolated Cache) {
        do {
            let store = try SQLiteStore(path: path, wait: wait) { note in
                terminal.write("cachesh: \(note)\n", isError: true)
            }
            try session.open(store: store, on: cache)
            if pipelined { session.pipelineCommits(through: store) }
        } catch {
            fail(usage: error.description)
        }
    }
}

/// Ends the process with `status` after ending an open `record` (its file replaced by the whole
/// transcript) and closing the session's store, if it has one, so the store
/// file alone holds everything and the lock is released; a store that cannot be closed cleanly
/// is reported and turns a status of 0 into 1. The session itself stays alive: freeing a large
/// cache and its history piece by piece is work nobody waits for.
func finish(_ session: Session, _ terminal: Terminal, status: Int32) -> Never {
    var status = status
    if let failure = session.endRecording() {
        terminal.write("cachesh: \(failure)\n", isError: true)
        if status == 0 { status = 1 }
    }
    do { try session.closeStore() } catch {
        terminal.write("cachesh: \(error)\n", isError: true)
        if status == 0 { status = 1 }
    }
    terminal.flush()
    exit(status)
}
