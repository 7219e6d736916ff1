import CacheCore
import CacheShell
@testable import CacheStore
import Foundation
import GRDB
import Testing
import TestSupport

/// The store keeps what it is given (SPEC §5.3): keys byte for byte, one process at a time, and
/// after a clean close the database file alone holds everything.
@Suite struct StoreIntegrityTests {
    /// Keys no text column of SQLite's C interface keeps whole, and others that are merely unusual:
    /// a NUL at the end, in the middle and alone, control characters, DEL, the two spellings of
    /// `é` (equal as Swift strings, different bytes), a character outside the BMP, a line
    /// separator, a byte-order mark, quotes and backslashes, and the empty key.
    static let keys = ["h\u{0}", "h", "s\u{0}x", "s", "\u{0}", "tab\there", "\u{1}\u{1f}\u{7f}", "caf\u{e9}",
                       "cafe\u{301}", "emoji:\u{1F600}", "line\u{2028}sep", "\u{FEFF}bom", "q\"'\\", ""]

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A state whose entries and server keys are `keys`, each value naming its key's position,
    /// row i's id i + 1 (as the engine numbers the rows of a store written anew).
    static func rows(_ keys: [String]) -> StoreChanges {
        var changes = StoreChanges()
        changes.replacesAll = true
        changes.state = "{}"
        for (i, key) in keys.enumerated() {
            changes.entries.append(StoredEntry(key: key, recency: Int64(i), value: "{\"n\":\(i),\"v\":\"a\\u0000b\\u001f\u{1F600}e\u{301}\"}",
                                               storedAt: Int64(i), staleAt: nil, expiresAt: 1000, seq: Int64(i),
                                               tags: "[\"t\\u0000\u{1F600}\"]", extra: i == 0 ? "{\"invalidated\":true}" : nil,
                                               rowID: Int64(i + 1)))
            changes.server.append(StoredServerKey(key: key, value: "\(i)", modifiedAt: Int64(i)))
        }
        return changes
    }

    /// The entry rows a store streams, in order.
    static func entries(_ store: SQLiteStore) throws -> [StoredEntry] {
        var out: [StoredEntry] = []
        try store.loadEntries { out.append($0) }
        return out
    }

    /// While a store is open, what its commits wrote is copied from the write-ahead log into the
    /// database file in the background, a MiB of log at a time (`WALCheckpointer`): the file
    /// alone (a copy of it without its log) holds the rows of all but the last commits before
    /// the store is closed, and all of them after.
    @Test func theLogIsCopiedIntoTheFileWhileTheStoreIsOpen() throws {
        let directory = StoreTests.directory()
        let path = directory + "/s.db"
        let store = try SQLiteStore(path: path)
        let value = "\"" + String(repeating: "x", count: 1000) + "\""
        // 40 commits of 200 rows of about 1 KiB: some 8 MiB of log.
        for c in 0..<40 {
            var changes = StoreChanges()
            changes.state = "{}"
            // (Set at once: `entries` is a view of the rows, encoded again at each set.)
            changes.entries = (0..<200).map { r in
                let id = Int64(c * 200 + r + 1)
                return StoredEntry(key: "k\(id)", recency: id, value: value, storedAt: 1, staleAt: nil, expiresAt: nil, seq: id,
                                   rowID: id)
            }
            try store.commit(changes)
        }
        func rowsInFileAlone() throws -> Int {
            let copy = directory + "/copy-\(UUID().uuidString).db"
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            return try DatabaseQueue(path: copy).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM entries") ?? -1 }
        }
        store.settleCheckpoints()
        // Every commit but those of the last MiB of log (about 5 of 40) is in the file.
        let open = try rowsInFileAlone()
        #expect(open >= 6_000 && open <= 8_000, "rows in the file while the store is open: \(open)")
        try store.close()
        #expect(try rowsInFileAlone() == 8_000)
    }

    @Test func keysAndValuesReadBackByteForByte() throws {
        let path = StoreTests.directory() + "/s.db"
        let writer = try SQLiteStore(path: path)
        try writer.commit(Self.rows(Self.keys))
        try writer.close()

        let reader = try SQLiteStore(path: path)
        let loaded = try #require(try reader.load())
        // Every key its own row, in recency order, with its own value.
        #expect(loaded.entryCount == Self.keys.count)
        let entries = try Self.entries(reader)
        #expect(entries.map { Self.bytes($0.key) } == Self.keys.map(Self.bytes))
        #expect(entries.map { Array($0.value.utf8) } == Self.rows(Self.keys).entries.map { Array($0.value.utf8) })
        #expect(entries == Self.rows(Self.keys).entries)
        #expect(entries.map(\.rowID) == Self.keys.indices.map { Int64($0 + 1) })
        let server = loaded.server.sorted { $0.modifiedAt! < $1.modifiedAt! }
        #expect(server.map { Self.bytes($0.key) } == Self.keys.map(Self.bytes))
        #expect(server.map(\.value) == Self.keys.indices.map { "\($0)" })

        // Removing a key removes exactly that key: `h\0` goes, `h` stays; `s` goes, `s\0x` stays.
        var changes = StoreChanges()
        changes.state = "{}"
        changes.removedKeys = ["h\u{0}", "s", ""]
        changes.removedRowIDs = changes.removedKeys.map { key in Int64(Self.keys.firstIndex { Self.bytes($0) == Self.bytes(key) }! + 1) }
        changes.server = [StoredServerKey(key: "\u{0}", value: nil, modifiedAt: nil)]
        try reader.commit(changes)
        let after = try #require(try reader.load())
        let removed = [Self.bytes("h\u{0}"), Self.bytes("s"), []]
        let expected = Self.keys.filter { !removed.contains(Self.bytes($0)) }
        #expect(try Self.entries(reader).map { Self.bytes($0.key) } == expected.map(Self.bytes))
        #expect(!after.server.contains { Self.bytes($0.key) == [0] })
        #expect(after.server.count == Self.keys.count - 1)
    }

    /// Many rows to a commit (more than one statement's batch), written in the order of their
    /// row ids whatever order they come in: keys that share their first 16 bytes or more, that begin
    /// one another, or differ only past a NUL, the empty key and `keys`, in a scrambled order;
    /// then a commit that rewrites some of them and adds others. Every row reads back as
    /// committed, each key once.
    @Test func manyRowsInAnyOrderReadBackAsCommitted() throws {
        let path = StoreTests.directory() + "/s.db"
        var unique = Self.keys
        for i in 0..<150 {
            unique.append("namespace-with-a-long-name:\(i)")
            unique.append("namespace-with-a-long-name:\(i)\u{0}")
            unique.append("profile:\(i)")
            unique.append("p\(i)")
        }
        // Scrambled: the keys at the multiples of a prime, around the list.
        let keys = unique.indices.map { unique[$0 * 7919 % unique.count] }
        #expect(Set(keys.map(Self.bytes)).count == unique.count)
        let first = Self.rows(keys)
        let store = try SQLiteStore(path: path)
        try store.commit(first)
        #expect(try Self.entries(store) == first.entries)

        var changes = StoreChanges()
        changes.state = "{}"
        var expected = first.entries
        for (i, key) in keys.enumerated().reversed() where i % 3 == 0 {
            let row = StoredEntry(key: key, recency: Int64(1000 + i), value: "{\"again\":\(i)}", storedAt: 5, staleAt: 6,
                                  expiresAt: nil, seq: Int64(1000 + i), lastPut: 7, rowID: Int64(i + 1))
            changes.entries.append(row)
            expected.removeAll { Self.bytes($0.key) == Self.bytes(key) }
            expected.append(row)
        }
        for i in 0..<40 {
            let row = StoredEntry(key: "namespace-with-a-long-name:\(i)-new", recency: Int64(2000 + i), value: "\(i)",
                                  storedAt: 1, staleAt: nil, expiresAt: nil, seq: Int64(2000 + i), rowID: Int64(keys.count + 1 + i))
            changes.entries.insert(row, at: i * 3 % (changes.entries.count + 1))
            expected.append(row)
        }
        try store.commit(changes)
        try store.close()

        let reader = try SQLiteStore(path: path)
        let loaded = try #require(try reader.load())
        #expect(loaded.entryCount == expected.count)
        let read = try Self.entries(reader)
        #expect(read == expected.sorted { $0.recency < $1.recency })
        #expect(read.map(\.rowID) == expected.sorted { $0.recency < $1.recency }.map(\.rowID))
    }

    /// Every row (a key with a NUL in it, the empty key, two keys equal as Swift strings but not as
    /// bytes) is written again, moved and deleted by its row id, also in a store reopened in
    /// between, and a new id is a new row; a failed commit changes nothing in the file, so the
    /// next commits find each row where it was.
    @Test func laterCommitsWriteEachRowByItsID() throws {
        let path = StoreTests.directory() + "/s.db"
        var store = try SQLiteStore(path: path)
        try store.commit(Self.rows(Self.keys))
        // Row ids: `keys[i]`'s is i + 1 (`rows`); the rows added later get the ids given here.
        var ids: [[UInt8]: Int64] = [:]
        for (i, key) in Self.keys.enumerated() { ids[Self.bytes(key)] = Int64(i + 1) }
        var next: Int64 = 100
        func id(_ key: String) -> Int64 {
            if let id = ids[Self.bytes(key)] { return id }
            defer { next += 1 }
            ids[Self.bytes(key)] = next
            return next
        }
        func update(_ keys: [String], value: String, removing: [String] = [], moving: [String] = []) -> StoreChanges {
            var changes = StoreChanges()
            changes.state = "{}"
            changes.removedKeys = removing
            changes.removedRowIDs = removing.map { key in ids.removeValue(forKey: Self.bytes(key)) ?? 0 }
            for key in keys {
                changes.entries.append(StoredEntry(key: key, recency: 100, value: value, storedAt: 1, staleAt: nil, expiresAt: nil,
                                                   seq: 1, rowID: id(key)))
            }
            changes.recencies = moving.map { StoredRecency(key: $0, recency: 200, rowID: id($0)) }
            return changes
        }
        // By the keys' bytes: "caf\u{e9}" and "cafe\u{301}" are equal as Swift strings, but two keys.
        func rows() throws -> [[UInt8]: [String]] {
            var out: [[UInt8]: [String]] = [:]
            try store.loadEntries { out[Array($0.key.utf8), default: []].append($0.value + "@\($0.recency)#\($0.rowID)") }
            return out
        }
        try store.commit(update(["h\u{0}", "", "new\u{0}", "caf\u{e9}"], value: "1", removing: ["s"], moving: ["\u{0}"]))
        // A failing commit: the log's insert is refused after the entries were written.
        try DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON log BEGIN SELECT RAISE(ABORT, 'refused'); END") }
        let saved = ids
        var failing = update(["h\u{0}", "s", "other"], value: "2", removing: ["h", "new\u{0}"])
        failing.log = [StoredLogLine(position: 1, body: "x")]
        #expect(throws: StoreError.self) { try store.commit(failing) }
        ids = saved
        try DatabaseQueue(path: path).write { try $0.execute(sql: "DROP TRIGGER refuse") }
        try store.commit(update(["h\u{0}", "s", "new\u{0}"], value: "3", removing: ["h"], moving: [""]))
        var expected: [[UInt8]: [String]] = [:]
        for (i, key) in Self.keys.enumerated() {
            expected[Self.bytes(key)] = ["{\"n\":\(i),\"v\":\"a\\u0000b\\u001f\u{1F600}e\u{301}\"}@\(i)#\(i + 1)"]
        }
        expected[Self.bytes("h")] = nil
        expected[Self.bytes("h\u{0}")] = ["3@100#1"]
        // `s` was removed, then put again: a new row (the failed commit's id for it was never written).
        expected[Self.bytes("s")] = ["3@100#\(ids[Self.bytes("s")]!)"]
        expected[Self.bytes("new\u{0}")] = ["3@100#100"]
        expected[Self.bytes("\u{0}")] = [expected[Self.bytes("\u{0}")]![0].replacingOccurrences(of: "@4#", with: "@200#")]
        expected[Self.bytes("")] = ["1@200#\(Self.keys.count)"]
        expected[Self.bytes("caf\u{e9}")] = ["1@100#8"]
        #expect(try rows() == expected)
        try store.close()
        store = try SQLiteStore(path: path)
        #expect(try rows() == expected)
        try store.commit(update(["s", "late"], value: "4", removing: ["\u{0}"]))
        expected[Self.bytes("s")] = ["4@100#\(ids[Self.bytes("s")]!)"]
        expected[Self.bytes("late")] = ["4@100#\(ids[Self.bytes("late")]!)"]
        expected[Self.bytes("\u{0}")] = nil
        #expect(try rows() == expected)
        try store.close()
    }

    /// New rows (ids from `firstNewRowID` on) keep their ids whether they follow the largest id
    /// in the table (SQLite numbers them) or not (the newest rows were deleted: the ids are
    /// bound); a commit that calls a row new whose id is taken fails and changes nothing.
    @Test func newRowsKeepTheirIDs() throws {
        let store = try SQLiteStore(path: StoreTests.directory() + "/s.db")
        func row(_ key: String, _ id: Int64) -> StoredEntry {
            StoredEntry(key: key, recency: id, value: "\(id)", storedAt: 1, staleAt: nil, expiresAt: nil, seq: id, rowID: id)
        }
        func ids() throws -> [String] { try Self.entries(store).map { "\($0.key)#\($0.rowID)" } }
        var changes = StoreChanges()
        changes.state = "{}"
        changes.replacesAll = true
        changes.firstNewRowID = 1
        changes.entries = (1...300).map { row("k\($0)", Int64($0)) }
        try store.commit(changes)
        #expect(try ids() == (1...300).map { "k\($0)#\($0)" })

        // The newest rows go: the next new rows' ids do not follow the largest left.
        changes = StoreChanges()
        changes.state = "{}"
        changes.removedKeys = ["k299", "k300"]
        changes.removedRowIDs = [299, 300]
        changes.firstNewRowID = 301
        changes.entries = [row("k1", 1)] + (301...440).map { row("n\($0)", Int64($0)) }
        try store.commit(changes)
        // (`k1` rewritten in place, its stamp as it was: first in recency order.)
        var expected = (1...298).map { "k\($0)#\($0)" } + (301...440).map { "n\($0)#\($0)" }
        #expect(try ids() == expected)

        // They follow it: numbered by SQLite, the same ids.
        changes.removedKeys = []
        changes.removedRowIDs = []
        changes.firstNewRowID = 441
        changes.entries = (441...700).map { row("m\($0)", Int64($0)) }
        try store.commit(changes)
        expected += (441...700).map { "m\($0)#\($0)" }
        #expect(try ids() == expected)

        // A row called new whose id is taken fails the commit.
        changes.firstNewRowID = 700
        changes.entries = [row("x", 700), row("y", 701)]
        #expect(throws: StoreError.self) { try store.commit(changes) }
        #expect(try ids() == expected)
        try store.close()
    }

    /// A row without an id is refused, and nothing of its commit is written.
    @Test func anEntryRowWithoutAnIDIsRefused() throws {
        let path = StoreTests.directory() + "/s.db"
        let store = try SQLiteStore(path: path)
        try store.commit(Self.rows(["a"]))
        var changes = Self.rows(["b", "c"])
        changes.entries[1].rowID = 0
        #expect(throws: StoreError.self) { try store.commit(changes) }
        #expect(try Self.entries(store).map(\.key) == ["a"])
    }

    @Test func keysAreStoredAsBlobs() throws {
        let path = StoreTests.directory() + "/s.db"
        let store = try SQLiteStore(path: path)
        try store.commit(Self.rows(["a\u{0}b"]))
        try store.close()
        let db = try DatabaseQueue(path: path)
        let (type, hex) = try db.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT typeof(key), hex(key) FROM entries")!
            return (row[0] as String, row[1] as String)
        }
        #expect(type == "blob" && hex == "610062")
    }

    /// A store of schema 2 (keys as text) is migrated: its keys become blobs (and its rows typed
    /// columns), and a later commit of the same key replaces its row instead of adding a second one.
    @Test func migratesTextKeysToBlobs() throws {
        let path = StoreTests.directory() + "/s.db"
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.prepare(old, name: path, wal: true, upTo: "v2")
        try old.write { db in
            try db.execute(sql: """
                INSERT INTO state (id, body) VALUES (1, '{}');
                INSERT INTO entries (key, recency, body) VALUES
                    ('feed:a', 1, '{"key":"feed:a","value":{"n":1},"state":"fresh","stored_at":5,"stale_at":null,"expires_at":9,"tags":[],"seq":1}'),
                    ('caf\u{e9}', 2, '{"key":"caf\u{e9}","value":{"n":2},"state":"fresh","stored_at":"1970-01-01T00:00:00.006Z","stale_at":7,"expires_at":null,"tags":["t"],"seq":2,"last_put":2,"invalidated":true}');
                INSERT INTO server_data (key, value, modified_at) VALUES ('feed:a', '1', 5);
                """)
        }
        try old.close()

        let store = try SQLiteStore(path: path)
        #expect(try store.schema() == SQLiteStore.schemaVersion)
        let upgraded = try Self.entries(store)
        // Schema 6 numbered the rows in key order.
        #expect(upgraded.map(\.rowID) == [2, 1])
        #expect(upgraded == [
            StoredEntry(key: "feed:a", recency: 1, value: "{\"n\":1}", storedAt: 5, staleAt: nil, expiresAt: 9, seq: 1),
            StoredEntry(key: "caf\u{e9}", recency: 2, value: "{\"n\":2}", storedAt: 6, staleAt: 7, expiresAt: nil, seq: 2,
                        lastPut: 2, tags: "[\"t\"]", extra: "{\"invalidated\":true}"),
        ])
        var changes = StoreChanges()
        changes.state = "{}"
        changes.entries = [StoredEntry(key: "feed:a", recency: 3, value: "{\"n\":3}", storedAt: 5, staleAt: nil, expiresAt: 9, seq: 3,
                                       rowID: 2)]
        changes.server = [StoredServerKey(key: "feed:a", value: "2", modifiedAt: 6)]
        try store.commit(changes)
        let loaded = try #require(try store.load())
        #expect(try Self.entries(store).map { [$0.key, $0.value] } == [["caf\u{e9}", "{\"n\":2}"], ["feed:a", "{\"n\":3}"]])
        #expect(loaded.server == [StoredServerKey(key: "feed:a", value: "2", modifiedAt: 6)])
    }

    /// A damaged file can hold a NULL or a wrong type where the schema says NOT NULL (a cut page,
    /// an edit by hand): reading it is one clear error, never a crash (a `try!` inside GRDB's
    /// non-throwing subscript stopped the process before).
    @Test(arguments: [("log", "body", "INSERT INTO log (position, body) VALUES (1, NULL)"),
                      ("entries", "value", "UPDATE entries SET value = NULL")])
    func aNullWhereTheSchemaForbidsItIsOneClearError(table: String, column: String, damage: String) throws {
        let path = StoreTests.directory() + "/s.db"
        let writer = try SQLiteStore(path: path)
        try writer.commit(Self.rows(["a", "b"]))
        try writer.close()
        let raw = try DatabaseQueue(path: path)
        try raw.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = replace(sql, '\(column) TEXT NOT NULL', '\(column) TEXT') WHERE name = ?",
                           arguments: [table])
        }
        try raw.close()
        let editor = try DatabaseQueue(path: path)
        try editor.write { db in try db.execute(sql: damage) }
        try editor.close()

        let reader = try SQLiteStore(path: path)
        #expect {
            _ = try reader.load()
            _ = try Self.entries(reader)
        } throws: { error in
            "\(error)".contains("cannot read store")
        }
    }

    // MARK: One process at a time

    @Test func aSecondOpenIsRefusedUntilTheFirstCloses() throws {
        let path = StoreTests.directory() + "/s.db"
        let first = try SQLiteStore(path: path)
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("opened a store that is open")
        } catch {
            #expect(error.message == "\(path) is in use by another cachesh (process \(getpid())); one process at a time may open a store (--wait waits for it)")
        }
        // Through another name of the same file too.
        let link = StoreTests.directory() + "/link.db"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(throws: StoreError.self) { try SQLiteStore(path: link) }
        try first.close()
        let second = try SQLiteStore(path: path)
        try second.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-lock"), "the lock file goes with the lock")
    }

    @Test func releasingTheStoreReleasesTheLock() throws {
        let path = StoreTests.directory() + "/s.db"
        do { _ = try SQLiteStore(path: path) }
        _ = try SQLiteStore(path: path)
    }

    // MARK: Clean close

    /// After `close` the WAL is empty or gone, and a copy of the database file alone is the store.
    @Test func closeLeavesEverythingInTheDatabaseFile() async throws {
        let directory = StoreTests.directory()
        let path = directory + "/s.db"
        let writer = try await StoreTests.opened(SQLiteStore(path: path))
        _ = await writer.typed(StoreTests.script)
        try await writer.run { session, _ in try session.closeStore() }
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)

        let copy = StoreTests.directory() + "/copy.db"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let reader = try await StoreTests.opened(SQLiteStore(path: copy))
        #expect(await StoreTests.snapshotText(reader) == StoreTests.snapshotText(writer))
    }

    @Test func aClosedStoreRefusesCommitsAndClosesOnce() throws {
        let store = try SQLiteStore(path: StoreTests.directory() + "/s.db")
        try store.close()
        try store.close()
        #expect(throws: StoreError.self) { try store.commit(Self.rows(["a"])) }
    }
}
