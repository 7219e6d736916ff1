@_spi(Engine) import CacheCore
import CacheShell
@testable import CacheStore
import Foundation
import GRDB
import Testing
import TestSupport

/// Opening a store reads its entry rows in the table's own order where every namespace is LRU
/// (`PersistentStore.loadEntriesInStoredOrder`, no sort in SQLite) and orders them by their
/// stamps itself: the state is the one rows read in recency order give, and a damaged row is
/// reported as it is from rows in recency order.
@Suite struct StoreOpenOrderTests {
    static func directory() -> String { Fixtures.directory("store-order") }

    /// The entry rows' keys in the table's order (by row id) and in recency order.
    static func orders(_ path: String) throws -> (table: [String], recency: [String]) {
        try DatabaseQueue(path: path).read { db in
            (try String.fetchAll(db, sql: "SELECT CAST(key AS TEXT) FROM entries ORDER BY id"),
             try String.fetchAll(db, sql: "SELECT CAST(key AS TEXT) FROM entries ORDER BY recency"))
        }
    }

    /// A store and which of its two ways of reading entry rows a session's open used.
    final class Watched: PersistentStore {
        let inner: SQLiteStore
        var calls: [String] = []
        init(_ inner: SQLiteStore) { self.inner = inner }
        func load() throws(StoreError) -> StoredState? { try inner.load() }
        func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
            calls.append("recency order")
            try inner.loadEntries(each)
        }
        func loadEntriesInStoredOrder(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
            calls.append("stored order")
            try inner.loadEntriesInStoredOrder(each)
        }
        func commit(_ changes: StoreChanges) throws(StoreError) { try inner.commit(changes) }
        func close() throws(StoreError) { try inner.close() }
        var path: String { inner.path }
    }

    /// Opens a session on the store at `path`: its reading orders, and its error or nil.
    static func open(_ path: String, into reader: TestShell) async -> (calls: [String], error: String?) {
        await reader.run { session, cache in
            do throws(StoreError) {
                let store = Watched(try SQLiteStore(path: path))
                do throws(StoreError) { try session.open(store: store, on: cache) } catch { return (store.calls, Optional(error.message)) }
                return (store.calls, nil)
            } catch {
                return ([], Optional(error.message))
            }
        }
    }

    /// Puts, reads, rewrites, removals, tags, times and an invalidated entry over three LRU
    /// namespaces leave rows whose table order is not their recency order: a session opened on
    /// them reads them in the table's order once and holds exactly the state of the session that
    /// wrote them (the snapshot, entries in recency order), and goes on exactly as it would.
    @Test func rowsReadInTheTablesOrderGiveTheStateOfRecencyOrder() async throws {
        let path = Self.directory() + "/s.db"
        var script = "ns feed ttl=1d\nns page ttl=1h stale=30m max=300\nserver latency 0ms\n"
        for i in 0..<400 {
            let ns = ["feed", "page", "x"][i % 3]
            script += "put \(ns):\(i) {\"id\":\(i % 50),\"text\":\"item \(i)\"}" + (i % 5 == 0 ? " tags=t\(i % 7),u\(i % 3)" : "") + "\n"
        }
        var n: UInt64 = 7
        for j in 0..<300 {
            n = n &* 6364136223846793005 &+ 1442695040888963407
            let i = Int(n >> 33) % 400
            let ns = ["feed", "page", "x"][i % 3]
            script += j % 10 == 9 ? "evict \(ns):\(i)\n" : j % 7 == 3 ? "put \(ns):\(i) {\"v\":\(j)}\n" : "get \(ns):\(i)\n"
            if j % 50 == 0 { script += "advance 1s\n" }
        }
        script += "invalidate tag:t3\nadvance 10m\n"
        let writer = await TestShell()
        try await writer.run { session, cache in try session.open(store: SQLiteStore(path: path), on: cache) }
        _ = await writer.typed(script)
        let expected = await writer.snapshotText()
        try await writer.run { session, _ in try session.closeStore() }
        let (table, recency) = try Self.orders(path)
        #expect(table != recency, "the reads moved rows in the recency order but not in the table")
        #expect(Set(table) == Set(recency))

        let reader = await TestShell()
        let opened = await Self.open(path, into: reader)
        #expect(opened.error == nil)
        #expect(opened.calls == ["stored order"])
        #expect(await reader.snapshotText() == expected)
        let more = "keys\nget feed:3\nput page:9999 1\nput page:10000 2\nkeys page:*\nadvance 2h\nstats\nsnapshot"
        #expect(await reader.typed(more) == writer.typed(more))
    }

    /// A namespace outside LRU takes its order from rows in recency order: such a store is read
    /// in that order alone.
    @Test func aStoreWithANamespaceOutsideLRUIsReadInRecencyOrder() async throws {
        let path = Self.directory() + "/s.db"
        let writer = await TestShell()
        try await writer.run { session, cache in try session.open(store: SQLiteStore(path: path), on: cache) }
        _ = await writer.typed("ns f max=3 policy=fifo\nput f:a 1\nput f:b 2\nput g:c 3\nget f:a\nput f:d 4\nput f:e 5")
        let expected = await writer.snapshotText()
        try await writer.run { session, _ in try session.closeStore() }
        let reader = await TestShell()
        let opened = await Self.open(path, into: reader)
        #expect(opened.error == nil)
        #expect(opened.calls == ["recency order"])
        #expect(await reader.snapshotText() == expected)
    }

    /// A damaged row found in the table's order is looked for again in recency order, and the
    /// error names the row by its place there, as it always did: a key given twice, a key that
    /// is no key, two rows of one stamp, on rows whose table order is not their recency order.
    @Test(arguments: [
        ("UPDATE entries SET key = CAST('g:b' AS BLOB) WHERE key = CAST('h:c' AS BLOB)",
         "entries[1].key: g:b appears twice"),
        ("UPDATE entries SET key = CAST('f a' AS BLOB) WHERE key = CAST('f:a' AS BLOB)",
         "entries[2].key: bad key \"f a\": a key may not contain white space"),
        ("UPDATE entries SET recency = (SELECT recency FROM entries WHERE key = CAST('g:b' AS BLOB)) WHERE key = CAST('f:a' AS BLOB)",
         "entries[1].recency: 1 is not after the stamp of the row before (1): two rows share a place in the recency order"),
    ])
    func aDamagedRowIsNamedByItsPlaceInRecencyOrder(damage: String, message: String) async throws {
        let path = Self.directory() + "/s.db"
        let writer = await TestShell()
        try await writer.run { session, cache in try session.open(store: SQLiteStore(path: path), on: cache) }
        // f:a, read last, is the first row in the table and the last in recency order.
        _ = await writer.typed("put f:a 1\nput g:b 2\nput h:c 3\nget f:a")
        try await writer.run { session, _ in try session.closeStore() }
        #expect(try Self.orders(path).table == ["f:a", "g:b", "h:c"])
        #expect(try Self.orders(path).recency == ["g:b", "h:c", "f:a"])
        try await DatabaseQueue(path: path).write { try $0.execute(sql: damage) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let reader = await TestShell()
        let opened = await Self.open(path, into: reader)
        #expect(opened.error == "damaged store: \(path): " + message)
        #expect(opened.calls == ["stored order", "recency order"])
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// The rows are read on a second thread in batches of 1,024 while the open takes them
    /// (`SQLiteStore.loadEntries`): a store of several batches opens to the writer's state, and a
    /// damaged row in the first batch (the reader ahead, stopped) or past several (the reader
    /// waiting for room) is the same one error line, read again in recency order after the
    /// first reading stopped, with nothing opened and the file as it was.
    @Test(arguments: [2, 3_001])
    func rowsReadOnASecondThreadGiveTheSameStateAndErrors(damagedRow: Int) async throws {
        let path = Self.directory() + "/s.db"
        let writer = await TestShell()
        try await writer.run { session, cache in try session.open(store: SQLiteStore(path: path), on: cache) }
        _ = await writer.typed((0..<5_000).map { "put f:\($0) {\"id\":\($0)}" }.joined(separator: "\n"))
        let expected = await writer.snapshotText()
        try await writer.run { session, _ in try session.closeStore() }
        let reader = await TestShell()
        let opened = await Self.open(path, into: reader)
        #expect(opened.error == nil && opened.calls == ["stored order"], "\(opened)")
        #expect(await reader.snapshotText() == expected)
        try await reader.run { session, _ in try session.closeStore() }

        try await DatabaseQueue(path: path).write {
            try $0.execute(sql: "UPDATE entries SET key = CAST('f:0' AS BLOB) WHERE id = \(damagedRow + 1)")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let damaged = await TestShell()
        let refused = await Self.open(path, into: damaged)
        #expect(refused.error == "damaged store: \(path): entries[\(damagedRow)].key: f:0 appears twice", "\(refused)")
        #expect(refused.calls == ["stored order", "recency order"])
        #expect(await damaged.run { _, cache in cache.count } == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }
}
