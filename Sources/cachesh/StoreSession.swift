import CacheShell
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ends the process with `status` after closing the session's store, if it has one, so the store
/// file alone holds everything; a store that cannot be closed cleanly
/// is reported and turns a status of 0 into 1. The session itself stays alive: freeing a large
/// cache and its history piece by piece is work nobody waits for.
func finish(_ session: Session, _ terminal: Terminal, status: Int32) -> Never {
    var status = status
    do { try session.closeStore() } catch {
        terminal.write("cachesh: \(error)\n", isError: true)
        if status == 0 { status = 1 }
    }
    terminal.flush()
    exit(status)
}
