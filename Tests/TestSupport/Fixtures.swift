import Foundation
import Synchronization

/// The directories `Fixtures.directory` made, removed when the test process exits.
private let madeDirectories = Mutex<[String]>([])

/// What several suites share: a fresh directory, and a script whose commands reach every part of
/// a session's state.
public enum Fixtures {
    /// A fresh empty directory for the files of one test, named after `purpose`; removed, with
    /// what it holds, when the test process exits (a run leaves nothing behind in the system's
    /// temporary directory; a test may use its files until its end).
    public static func directory(_ purpose: String = "test") -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-\(purpose)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        madeDirectories.withLock { made in
            if made.isEmpty { atexit { Fixtures.removeMadeDirectories() } }
            made.append(path)
        }
        return path
    }

    /// Removes every directory `directory` made (at exit; a file made read-only inside is
    /// made writable first, so that it can go).
    private static func removeMadeDirectories() {
        for path in madeDirectories.withLock({ $0 }) {
            if let inside = FileManager.default.enumerator(atPath: path) {
                for case let name as String in inside {
                    try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path + "/" + name)
                }
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Commands that reach every part of the state: namespaces, entries with tags, mutation logs
    /// and expiry overrides, requests in flight, queued mutations, scheduled commands, watches,
    /// the server's data, settings and log, statistics. It ends with work still pending.
    public static let everyPartOfTheState = """
        ns feed ttl=45m stale=5m max=3
        ns profile ttl=10m --purgeable
        ns page ttl=5m stale-if-error=1h timeout=300ms
        server set feed:home [{"id":1,"likes":3},{"id":2,"likes":0}]
        server set profile:1 {"id":1,"name":"ann"}
        server set page:1 "page one"
        server set page:2 "page two"
        server latency 250ms page:2
        watch *
        put feed:a {"id":2,"text":"hi"} tags=mine,recent
        get feed:home
        get profile:1
        get page:1
        put other 1.5
        advance 6m
        invalidate profile:1
        expire page:1 in=2m
        mutate feed:home {"seen":true}
        get feed:a --nowait
        server offline
        mutate entity 2 {"likes":{"$inc":1}}
        server fail 1 page:2
        at 30s get page:2
        """

    /// What a session does next with that state: the pending work completes.
    public static let pendingWorkCompletes = """
        pending
        advance 10ms
        server online
        advance 1m
        get page:2
        get page:1
        event entity 1 {"likes":{"$inc":5}}
        validate --items
        """
}
