import CacheCore
import CacheServer
import CacheShell
@testable import CacheStore
import Foundation
import Testing
import TestSupport

/// A session on a store that can only be read (SPEC §5.3): what changes nothing the store keeps
/// runs, and writes nothing; every other command is refused before it runs, naming the store as
/// read-only, and changes nothing. The first command used to fail (`cannot write store`) and end
/// the session, even `keys`.
@Suite struct ReadOnlyStoreTests {
    /// Reads as the store it wraps; never written: a commit is counted and refused.
    final class ReadOnly: PersistentStore {
        let inner: SQLiteStore
        var commits = 0
        init(_ inner: SQLiteStore) { self.inner = inner }
        func load() throws(StoreError) -> StoredState? { try inner.load() }
        func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) { try inner.loadEntries(each) }
        func commit(_ changes: StoreChanges) throws(StoreError) {
            commits += 1
            throw StoreError("cannot write store ro.db: attempt to write a readonly database")
        }
        var isReadOnly: Bool { true }
        var path: String { "ro.db" }
    }

    /// A session opened read-only on a store holding every part of the state.
    static func opened() async throws -> (shell: TestShell, before: String) {
        let store = try SQLiteStore()
        let writer = await TestShell()
        try await writer.run { session, cache in try session.open(store: store, on: cache) }
        _ = await writer.typed(Fixtures.everyPartOfTheState)
        let reader = await TestShell()
        try await reader.run { session, cache in try session.open(store: ReadOnly(store), on: cache) }
        #expect(await reader.snapshotText() == writer.snapshotText())
        return (reader, await reader.snapshotText())
    }

    /// Whether the session's store was committed to, and whether it is still open.
    static func commitsAndOpen(_ shell: TestShell) async -> (Int, Bool) {
        await shell.run { session, _ in ((session.store?.store as? ReadOnly)?.commits ?? -1, session.store != nil) }
    }

    @Test func commandsThatChangeNothingRun() async throws {
        let (shell, before) = try await Self.opened()
        let reads = """
            keys
            keys feed:*
            peek feed:home
            stats
            stats feed
            config
            ns
            now
            pending
            timeline *
            explain feed:home
            snapshot
            activate
            poll
            watch
            server show
            server show feed:home
            server log
            output json
            keys
            output human
            echo done
            help get
            expect peek feed:a key=feed:a
            q
            """
        for line in reads.split(separator: "\n") {
            let output = await shell.typed(String(line))
            #expect(!output.hasPrefix("error") && !output.contains("read-only"), "\(line): \(output)")
            #expect(await Self.commitsAndOpen(shell) == (0, true), "\(line)")
        }
        #expect(await shell.snapshotText() == before)
    }

    @Test func commandsThatWouldChangeTheStoreAreRefusedBeforeTheyRun() async throws {
        let (shell, before) = try await Self.opened()
        let read = " (a read counts in the statistics and makes the entry the most recent; peek changes nothing)"
        let writes: [(command: String, name: String)] = [
            ("put feed:z 1", "put"), ("put feed:z {\"a\":1}", "put"), ("get feed:a", "get"),
            ("get feed:home --nowait", "get"), ("mget feed:a feed:home", "mget"),
            ("pages feed:list", "pages"), ("pages feed:list --next", "pages"), ("pages feed:list --refetch", "pages"),
            ("expire feed:a in=30s", "expire"), ("invalidate tag:mine", "invalidate"), ("evict feed:a", "evict"),
            ("clear feed", "clear"), ("clear", "clear"), ("memory-warning", "memory-warning"),
            ("mutate feed:a {\"x\":1}", "mutate"), ("event entity 2 {\"x\":1}", "event"), ("push x", "push"),
            ("validate --items", "validate"), ("cancel feed:home", "cancel"), ("activate feed:a", "activate"),
            ("deactivate feed:a", "deactivate"), ("deactivate", "deactivate"), ("focus", "focus"),
            ("poll feed:a every=30s", "poll"), ("unpoll", "unpoll"), ("watch feed:*", "watch"),
            ("unwatch", "unwatch"), ("stats reset", "stats reset"), ("ns feed ttl=1m", "ns"),
            ("load {\"namespaces\":{}}", "load"), ("restore {}", "restore"), ("advance 30s", "advance"),
            ("at 5m echo hi", "at"), ("server set feed:a 1", "server set"), ("server patch feed:home {\"x\":1}", "server patch"),
            ("server delete page:1", "server delete"), ("server latency 1s", "server latency"), ("server fail 1", "server fail"),
            ("server offline", "server offline"), ("server online", "server online"), ("server log clear", "server log clear"),
            // The store keeps the answers queued and strict mode.
            ("server next feed:x 1", "server next"), ("server strict on", "server strict"), ("server strict off", "server strict"),
            ("expect get feed:a state=fresh", "expect get"),
            // A command's name runs it quoted too (an alias only bare): the refusal goes by what runs.
            ("\"put\" feed:z 1", "put"), ("\"get\" feed:a", "get"), ("\"server\" \"set\" feed:a 1", "server set"),
            ("\"stats\" reset", "stats reset"),
        ]
        for (command, name) in writes {
            let output = await shell.typed(command)
            let hint = name.hasSuffix("get") || name == "pages" ? read : ""
            #expect(output == "error: the store ro.db is read-only: \(name) would change it\(hint)\n", "\(command)")
            #expect(await Self.commitsAndOpen(shell) == (0, true), "\(command)")
        }
        #expect(await shell.snapshotText() == before)

        // A script's `put` and `get` in their plain form too, at their lines; the script goes on.
        let script = "put feed:y {\"a\":1}\nget feed:a\nkeys feed:y\n"
        let printed = await shell.run { session, cache in
            session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
            return session.takeOutput().map(\.text).joined()
        }
        #expect(printed == """
            s.cachesh:1: error: the store ro.db is read-only: put would change it
            s.cachesh:2: error: the store ro.db is read-only: get would change it\(read)
            (no entries)

            """, "\(printed)")
        #expect(await shell.snapshotText() == before)
    }

    /// Every command of the catalog, as its example shows it, is either refused or changes
    /// nothing: none reaches a commit (which a read-only store would refuse, ending the session).
    @Test func everyCommandIsRefusedOrChangesNothing() async throws {
        let (shell, before) = try await Self.opened()
        // `record` and `snapshot FILE` write files of their own; `quit` ends the session.
        for spec in CommandCatalog.all where !["quit", "record"].contains(spec.name) && !spec.example.isEmpty {
            let output = await shell.typed(spec.example)
            if !output.hasPrefix("error: the store ro.db is read-only: ") {
                #expect(await shell.snapshotText() == before, "\(spec.example) changed the state: \(output)")
            }
            #expect(await Self.commitsAndOpen(shell) == (0, true), "\(spec.example): \(output)")
        }
    }
}
