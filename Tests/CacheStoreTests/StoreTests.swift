@_spi(Engine) import CacheCore
import CacheServer
import CacheShell
@testable import CacheStore
import Foundation
import GRDB
import Testing
import TestSupport

/// The persistent store (SPEC §5.3): round trips, incremental commits, refusals, migration.
@Suite struct StoreTests {
    /// A fresh directory for the files of one test.
    static func directory() -> String { Fixtures.directory("store") }

    /// The store at `path` for edits and reads by hand written against schema 7's entry columns:
    /// on a store of schema 8 or later, each `read` and `write` runs on a temporary table `entries` (found
    /// before the store's table of that name) holding the rows with their `fields` BLOB
    /// (`EntryRowFields`) as `stored_at` ... `last_put`, `tags` and `extra`, and a `write` puts
    /// the rows back, each field into the BLOB again (a NULL as the field absent, as schema 7
    /// would hold it in a damaged file). A store of an older schema is read and written as it is.
    static func editable(_ path: String) throws -> Editable { try Editable(path) }

    struct Editable {
        let queue: DatabaseQueue

        init(_ path: String) throws {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                db.add(function: DatabaseFunction("entry_field", argumentCount: 2, pure: true) { values -> DatabaseValueConvertible? in
                    guard let data = Data.fromDatabaseValue(values[0]), let i = Int.fromDatabaseValue(values[1]),
                          let fields = data.withUnsafeBytes({ EntryRowFields.decode($0) }) else { return nil }
                    switch i {
                    case 7: return fields.tags
                    case 8: return fields.extra
                    default: return fields.integers[i]
                    }
                })
                db.add(function: DatabaseFunction("entry_fields", argumentCount: 9, pure: true) { values in
                    var out: [UInt8] = []
                    EntryRowFields.append(values.prefix(7).map { Int64.fromDatabaseValue($0) },
                                          tags: String.fromDatabaseValue(values[7]), extra: String.fromDatabaseValue(values[8]), to: &out)
                    return Data(out)
                })
            }
            queue = try DatabaseQueue(path: path, configuration: configuration)
        }

        /// Whether the store keeps `fields` (schema 8 and later): then the rows are shown as schema 7's columns.
        private static func unpack(_ db: Database) throws -> Bool {
            guard try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('entries')").contains("fields") else { return false }
            let read = EntryRowFields.names.enumerated().map { "entry_field(fields, \($0.offset)) AS \($0.element)" }.joined(separator: ", ")
            try db.execute(sql: "CREATE TEMP TABLE entries AS SELECT id, key, recency, value, \(read) FROM main.entries")
            return true
        }

        func read<T>(_ body: (Database) throws -> T) throws -> T {
            try queue.writeWithoutTransaction { db in
                let unpacked = try Self.unpack(db)
                defer { if unpacked { try? db.execute(sql: "DROP TABLE temp.entries") } }
                return try body(db)
            }
        }

        func write(_ body: (Database) throws -> Void) throws {
            try queue.write { db in
                let unpacked = try Self.unpack(db)
                try body(db)
                guard unpacked else { return }
                let pack = "entry_fields(" + EntryRowFields.names.joined(separator: ", ") + ")"
                try db.execute(sql: """
                    DELETE FROM main.entries;
                    INSERT INTO main.entries (id, key, recency, value, fields)
                        SELECT id, key, recency, value, \(pack) FROM temp.entries;
                    DROP TABLE temp.entries;
                    """)
            }
        }
    }

    /// Commands that reach every part of the state: namespaces, entries with tags, mutation logs
    /// and expiry overrides, requests in flight, queued mutations, scheduled commands, watches,
    /// the server's data, settings and log, statistics.
    static let script = Fixtures.everyPartOfTheState + """

        event patch feed:home {"live":1}
        """ + Fixtures.pendingWorkCompletes + """

        put feed:b 2
        put feed:c 3
        get feed:b
        evict other
        server delete page:1
        server log clear
        get profile:1 --force
        advance 1h
        stats
        """

    static func snapshotText(_ session: TestShell) async -> String { await session.snapshotText() }

    /// A new session opened on `store`.
    static func opened(_ store: SQLiteStore, groupSize: Int = 256) async throws -> TestShell {
        let session = await TestShell()
        try await session.run { session, cache in try session.open(store: store, groupSize: groupSize, on: cache) }
        return session
    }

    /// Runs `script` a line at a time on a new session over a new store, committing after each,
    /// and expects a session opened anew on the store after each line to hold exactly the
    /// writer's state. Returns a session opened on the store at the end, and a twin without a
    /// store restored from the writer's snapshot: the writer's state going on (two sessions
    /// adding rows to one store would give two rows one id).
    static func reopenedAfterEveryLine(_ script: String) async throws -> (reader: TestShell, twin: TestShell) {
        let store = try SQLiteStore()
        let writer = try await opened(store, groupSize: 1)
        for line in script.split(separator: "\n") {
            _ = await writer.typed(String(line))
            let reader = try await opened(store)
            #expect(await snapshotText(reader) == snapshotText(writer), "after \(line)")
        }
        let reader = try await opened(store)
        let written = await snapshotText(writer)
        let twin = await TestShell()
        try await twin.run { session, cache in try session.restore(snapshotText: written, on: cache) }
        #expect(await snapshotText(twin) == written)
        return (reader, twin)
    }

    /// A session reopened from the store after every command holds exactly the state of the session
    /// that wrote it, and continues with the same output.
    @Test(arguments: [1, 4])
    func reopenedSessionMatchesAfterEveryCommand(groupSize: Int) async throws {
        let store = try SQLiteStore()
        let writer = try await Self.opened(store, groupSize: groupSize)
        for line in Self.script.split(separator: "\n") {
            _ = await writer.typed(String(line))
            let reader = try await Self.opened(store)
            #expect(await Self.snapshotText(reader) == Self.snapshotText(writer), "after \(line)")
        }
        let reader = try await Self.opened(store)
        let more = "get feed:c\nget feed:a\nadvance 30m\nkeys\nserver log\nstats"
        #expect(await reader.typed(more) == writer.typed(more))
    }

    /// Each namespace's eviction order (FIFO's, SIEVE's marks and hand, LFU's counts) is in the
    /// store after every command: a session reopened from it holds the same state and evicts the
    /// same entries as the one that wrote it.
    @Test func evictionPoliciesSurviveReopeningAfterEveryCommand() async throws {
        let script = """
            server latency 0ms
            ns f max=2 policy=fifo
            ns s max=3 policy=sieve
            ns l max=2 policy=lfu
            put f:1 1
            put f:2 2
            get f:1
            put f:3 3
            put s:1 1
            put s:2 2
            put s:3 3
            get s:1
            put s:4 4
            get s:4
            put l:1 1
            get l:1
            put l:2 2
            put l:3 3
            get l:3
            get l:3
            ns s policy=lfu
            ns f policy=sieve
            get f:3
            evict l:3
            """
        let (reader, twin) = try await Self.reopenedAfterEveryLine(script)
        let more = "put f:4 4\nput f:5 5\nput s:5 5\nput s:6 6\nput l:4 4\nput l:5 5\nkeys\nns\nstats"
        let expected = await twin.typed(more)
        #expect(await reader.typed(more) == expected)
        #expect(expected.contains("policy"))
    }

    /// An entry's server version (SPEC §1.1 Versions), set by a versioned event or answer, is in
    /// the store after every command, on an entry with nothing else out of the ordinary: a
    /// session reopened from it holds the same state, and ignores an event older than the
    /// version as the session that wrote it does.
    @Test func versionsSurviveReopeningAfterEveryCommand() async throws {
        let script = """
            server latency 0ms
            put a:1 {"x":1}
            event patch a:1 {"x":2} version=5
            server set b:1 {"y":1} version=7
            get b:1
            put c:1 {"z":1}
            """
        let (reader, twin) = try await Self.reopenedAfterEveryLine(script)
        let more = "event patch a:1 {\"x\":3} version=4\nevent patch b:1 {\"y\":2} version=6\nget a:1\nget b:1\nexplain a:1"
        let expected = await twin.typed(more)
        #expect(await reader.typed(more) == expected)
        #expect(expected.contains("{\"x\":2}") && expected.contains("{\"y\":1}") && expected.contains("version:       5"))
    }

    /// A store on disk survives the process: a new store object on the same file reads it back.
    @Test func fileStoreRoundTrip() async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed(Self.script)
        try await writer.run { session, _ in try session.closeStore() }
        let reader = try await Self.opened(SQLiteStore(path: path))
        #expect(await Self.snapshotText(reader) == Self.snapshotText(writer))
        #expect(await reader.run { session, _ in session.baseSnapshot } == Self.snapshotText(writer) + "\n")
    }

    /// The rows the engine writes straight from its slots (`takeChanges`) are the bytes the
    /// general encoder (`StoredEntryRows(_:)`, `EntryRowFields.append`) writes for the same
    /// entries: keys, values, and fields with stale and expiry times, tags and extra.
    @Test func rowsWrittenFromTheSlotsAreTheGeneralEncoding() async throws {
        let shell = await TestShell()
        _ = await shell.typed(Self.script + "\nns st ttl=10m stale=1m\nput st:1 {\"id\":1} tags=a,b")
        let rows = await shell.run { _, cache in
            cache.startTrackingChanges(everything: true)
            return cache.takeChanges().rows
        }
        let entries = rows.entries
        #expect(entries.count > 5)
        #expect(entries.contains { $0.tags != nil } && entries.contains { $0.extra != nil }
                && entries.contains { $0.staleAt != nil } && entries.contains { $0.expiresAt != nil })
        let again = StoredEntryRows(entries)
        #expect(Array(again.bytes[0 ..< again.byteCount]) == Array(rows.bytes[0 ..< rows.byteCount]))
        #expect(again.ends == rows.ends && again.rowIDs == rows.rowIDs && again.recencies == rows.recencies)
    }

    /// One commit's rows mix every kind the engine writes (runs of plain rows, which
    /// `EntrySlots.appendPlainRows` writes in place, broken by a tagged row, an entry whose
    /// expiry was set by hand, rows of a SIEVE namespace and of an HTTP namespace, with a slot
    /// written and then freed in the same commit, which has no row, in the middle of a run):
    /// they are the general encoding of the entries they hold, and a store written with them
    /// reopens to the same cache as the session that wrote it.
    @Test func aCommitOfEveryKindOfRowReopensToTheSameCache() async throws {
        let head = """
            server latency 0ms
            ns plain ttl=10m
            ns lists ttl=10m max=3 policy=sieve
            ns staling ttl=10m stale=1m
            ns api http
            server set api:/feed {"n":1} headers={"ETag":"\\"v1\\"","Cache-Control":"max-age=60"}
            """
        let rest = """
            put plain:1 {"id":1,"text":"a value longer than the thirty-one bytes held in line"}
            put plain:2 2
            put plain:9 9
            put staling:1 {"id":1} tags=a,b
            put plain:3 "three"
            get api:/feed
            put staling:2 [1,2,3]
            put lists:1 1
            put plain:4 4
            put lists:2 2
            put lists:3 3
            get lists:1
            put lists:4 4
            put plain:5 5
            evict plain:5
            put plain:6 {"id":6}
            expire plain:6 in=2m
            put plain:7 7
            put plain:8 \"\(String(repeating: "x", count: 100))\"
            evict plain:9
            """
        // The rows of the commands' changes, taken at once after tracking began on the namespaces.
        let shell = await TestShell()
        _ = await shell.typed(head)
        await shell.run { _, cache in
            cache.startTrackingChanges(everything: true)
            _ = cache.takeChanges()
        }
        _ = await shell.typed(rest)
        let changes = await shell.run { _, cache in cache.takeChanges() }
        let rows = changes.rows
        // Every live entry, once; not the three removed (SIEVE's victim, `plain:5`, whose slot
        // was taken again, and `plain:9`, whose slot stays free between rows of the run).
        #expect(Set(rows.entries.map(\.key)) == ["plain:1", "plain:2", "staling:1", "plain:3", "api:/feed", "staling:2", "lists:1",
                                                 "plain:4", "lists:3", "lists:4", "plain:6", "plain:7", "plain:8"])
        #expect(rows.count == 13 && Set(changes.removedKeys) == ["lists:2", "plain:5", "plain:9"])
        // Plain rows on both sides of rows that are not (tags; extra: SIEVE's visited bit, the
        // expiry set by hand, the HTTP response), values held in line and apart.
        #expect(rows.entries.first.map { $0.tags == nil && $0.extra == nil && $0.value.utf8.count > 31 } == true)
        #expect(rows.entries.last.map { $0.tags == nil && $0.extra == nil && $0.value.utf8.count > 31 } == true)
        #expect(rows.entries.contains { $0.tags != nil } && rows.entries.filter { $0.extra != nil }.count >= 3)
        #expect(rows.entries.contains { $0.key == "api:/feed" && $0.extra?.contains("v1") == true })
        #expect(rows.entries.contains { $0.tags == nil && $0.extra == nil && $0.value.utf8.count <= 31 })
        let again = StoredEntryRows(rows.entries)
        #expect(Array(again.bytes[0 ..< again.byteCount]) == Array(rows.bytes[0 ..< rows.byteCount]))
        #expect(again.ends == rows.ends && again.rowIDs == rows.rowIDs && again.recencies == rows.recencies)

        // The same commands in one commit group after the first, written to a file and read back.
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed(head)
        _ = await writer.typed(rest)
        try await writer.run { session, _ in try session.closeStore() }
        let reader = try await Self.opened(SQLiteStore(path: path))
        #expect(await Self.snapshotText(reader) == Self.snapshotText(writer))
        let more = "keys\nput lists:5 5\nkeys\nget api:/feed\nadvance 3m\nkeys"
        #expect(await reader.typed(more) == writer.typed(more))
    }

    /// A value deeper than a document may be (`JSONValue.documentDepth`) holds no text of its
    /// own (the engine prints it when asked): its row, between plain ones, is written by the
    /// general path with the printed text, and the rows are the general encoding.
    @Test func aDeepValueBetweenPlainRowsIsWrittenPrinted() {
        let engine = CacheEngine(origin: SimulatedServer())
        engine.checksInvariants = true
        engine.startTrackingChanges(everything: true)
        _ = engine.takeChanges()
        var deep: JSONValue = 1
        for _ in 0 ..< JSONValue.documentDepth + 4 { deep = .array([deep]) }
        engine.put("a:1", 1)
        engine.put("a:2", deep)
        engine.put("a:3", .object(["id": 3]))
        let rows = engine.takeChanges().rows
        #expect(rows.entries.map(\.key) == ["a:1", "a:2", "a:3"])
        #expect(rows.entries.map(\.value) == ["1", deep.compactText, #"{"id":3}"#])
        let again = StoredEntryRows(rows.entries)
        #expect(Array(again.bytes[0 ..< again.byteCount]) == Array(rows.bytes[0 ..< rows.byteCount]))
    }

    /// A commit's rows written into the buffers of the last commit's (`takeChanges(reusing:)`,
    /// as the shell does between commits) are those written into new buffers, byte for byte,
    /// though the buffers still hold the longer rows they had; and they are written in place.
    @Test func rowsWrittenIntoTheLastCommitsBuffersAreThoseOfNewOnes() throws {
        func engine() -> CacheEngine {
            let engine = CacheEngine(origin: SimulatedServer())
            engine.checksInvariants = true
            for i in 0..<40 { engine.put("k:\(i)", .string(String(repeating: "long value \(i) ", count: 8))) }
            engine.startTrackingChanges(everything: true)
            return engine
        }
        func change(_ engine: CacheEngine) throws {
            engine.put("k:3", 3)
            engine.put("new:1", .object(["id": 1]), tags: ["a"])
            _ = engine.evict("k:7")
            _ = try engine.get("k:9")
        }
        let reusing = engine(), fresh = engine()
        var last = reusing.takeChanges()
        let expectedFirst = fresh.takeChanges()
        #expect(last.rows.count == 40 && last.rows.entries == expectedFirst.rows.entries)
        try change(reusing)
        try change(fresh)
        let rows = last.rows
        last = StoreChanges()
        let address = rows.bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
        let room = rows.bytes.count
        let changes = reusing.takeChanges(reusing: consume rows)
        let expected = fresh.takeChanges()
        #expect(changes.rows.entries.map(\.key) == ["k:3", "new:1"])
        #expect(changes.rows.entries == expected.rows.entries)
        #expect(Array(changes.rows.bytes[0 ..< changes.rows.byteCount]) == Array(expected.rows.bytes[0 ..< expected.rows.byteCount]))
        #expect(changes.rows.ends == expected.rows.ends && changes.rows.rowIDs == expected.rows.rowIDs
                && changes.rows.recencies == expected.rows.recencies)
        #expect(changes.removedKeys == ["k:7"] && changes.recencies.map(\.key) == ["k:9"])
        #expect(changes.rows.bytes.count == room)
        #expect(changes.rows.bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) } == address)
    }

    /// One command's commit writes the rows it changed, not the whole cache.
    @Test func commitsAreIncremental() {
        let engine = CacheEngine(origin: SimulatedServer())
        for i in 0..<100 { engine.put("k:\(i)", .int(Int64(i))) }
        engine.startTrackingChanges(everything: true)
        let first = engine.takeChanges()
        #expect(first.replacesAll && first.entries.count == 100)

        engine.put("k:5", 50)
        var changes = engine.takeChanges()
        #expect(!changes.replacesAll)
        #expect(changes.entries.map(\.key) == ["k:5"])
        #expect(changes.removedKeys.isEmpty && changes.server.isEmpty && changes.log.isEmpty)

        _ = engine.evict("k:7")
        _ = try? engine.get("k:6")
        changes = engine.takeChanges()
        #expect(changes.removedKeys == ["k:7"])
        // A read moves its entry in the recency order: only the stamp is rewritten, not the row.
        #expect(changes.entries.isEmpty)
        #expect(changes.recencies.map(\.key) == ["k:6"])
        #expect(changes.recencies[0].recency > first.entries.map(\.recency).max()!)

        // Read, then written: one row, no separate stamp.
        _ = try? engine.get("k:8")
        engine.put("k:8", 80)
        _ = try? engine.get("k:8")
        changes = engine.takeChanges()
        #expect(changes.entries.map(\.key) == ["k:8"] && changes.recencies.isEmpty)

        try? engine.advance(by: 1000)
        #expect(engine.takeChanges().entries.isEmpty)
    }

    /// Each entry's row has an id of its own: a new entry's is the next, given when its row is
    /// first taken; a removed entry's goes with it (a key put again is a new row, in the slot
    /// reused or not); a read moves the row by its id; an entry that came and went between two
    /// takes has no row to delete; after a failed commit, everything is written anew, numbered
    /// in recency order.
    @Test func rowIDsFollowTheEntries() throws {
        let engine = CacheEngine(origin: SimulatedServer())
        engine.checksInvariants = true
        _ = engine.put("k:0", 0)
        engine.startTrackingChanges(everything: true)
        var changes = engine.takeChanges()
        #expect(changes.replacesAll && changes.entries.map(\.rowID) == [1])
        _ = engine.put("k:1", 1)
        _ = engine.put("k:2", 2)
        changes = engine.takeChanges()
        #expect(changes.entries.map { "\($0.key)#\($0.rowID)" } == ["k:1#2", "k:2#3"])

        _ = engine.evict("k:1")
        _ = engine.put("k:1", 11)
        _ = engine.put("k:3", 3)
        _ = engine.put("k:4", 4)
        _ = engine.evict("k:4")
        _ = engine.put("k:2", 22)
        changes = engine.takeChanges()
        #expect(changes.removedKeys == ["k:1", "k:4"] && changes.removedRowIDs == [2, 0])
        #expect(changes.entries.map { "\($0.key)#\($0.rowID)" } == ["k:1#4", "k:3#5", "k:2#3"])

        _ = try engine.get("k:0")
        changes = engine.takeChanges()
        #expect(changes.entries.isEmpty && changes.recencies.map { "\($0.key)#\($0.rowID)" } == ["k:0#1"])

        _ = engine.put("k:5", 5)
        _ = engine.takeChanges()
        engine.changesNotCommitted()
        changes = engine.takeChanges()
        #expect(changes.replacesAll)
        #expect(changes.entries.map { "\($0.key)#\($0.rowID)" } == ["k:1#1", "k:3#2", "k:2#3", "k:0#4", "k:5#5"])
        _ = engine.put("k:6", 6)
        #expect(engine.takeChanges().entries.map(\.rowID) == [6])
    }

    /// An engine and a store on a file, through evictions, keys put again, a failed commit, a
    /// reopen and more commits: after each commit the store holds each live entry once, and an
    /// engine read back from it holds the same state as the one that wrote it.
    @Test func theStoreFollowsTheEngineThroughEvictionsFailuresAndReopening() throws {
        let path = Self.directory() + "/s.db"
        func readBack(_ store: SQLiteStore) throws -> CacheEngine {
            let engine = CacheEngine(origin: SimulatedServer())
            var snapshot = try Snapshot(stored: try #require(try store.load()))
            try store.loadEntries { row throws(StoreError) in
                do { try snapshot.append(row) } catch { throw StoreError("\(error)") }
            }
            try snapshot.finishStored()
            try engine.restore(snapshot, scheduleCommand: { _ in -1 })
            return engine
        }
        func rowKeys() throws -> [String] {
            try Self.editable(path).read { db in try String.fetchAll(db, sql: "SELECT CAST(key AS TEXT) FROM entries ORDER BY id") }
        }
        var store = try SQLiteStore(path: path)
        var engine = CacheEngine(origin: SimulatedServer())
        engine.checksInvariants = true
        _ = try engine.defineNamespace("f", PolicyChange(max: .some(3)))
        engine.startTrackingChanges(everything: true)
        try store.commit(engine.takeChanges())
        func step(_ body: (CacheEngine) throws -> Void) throws {
            try body(engine)
            try store.commit(engine.takeChanges())
            #expect(try readBack(store).makeSnapshot() == engine.makeSnapshot())
            #expect(try rowKeys().sorted() == engine.keys().map(\.key).sorted())
        }
        try step { e in for i in 0..<5 { _ = e.put("f:\(i)", .int(Int64(i))) } }
        try step { e in _ = e.put("f:0", 10); _ = try e.get("f:3"); _ = e.put("f:1", 11) }
        // A failed commit (the state row is refused), then the next commit writes everything anew.
        try Self.editable(path).write { try $0.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON state BEGIN SELECT RAISE(ABORT, 'refused'); END") }
        _ = engine.put("f:5", 5)
        _ = engine.evict("f:0")
        #expect(throws: StoreError.self) { try store.commit(engine.takeChanges()) }
        engine.changesNotCommitted()
        try Self.editable(path).write { try $0.execute(sql: "DROP TRIGGER refuse") }
        try step { e in _ = e.put("f:6", 6) }
        try store.close()
        store = try SQLiteStore(path: path)
        engine = try readBack(store)
        engine.checksInvariants = true
        engine.startTrackingChanges(everything: false)
        try store.commit(engine.takeChanges())
        try step { e in _ = e.put("f:7", 7); _ = e.put("f:1", 21); _ = e.evict("f:6"); _ = e.put("f:6", 26) }
        try step { e in _ = e.clear(); _ = e.put("f:8", 8) }
        try store.close()
    }

    /// A store whose rows carry ids cachesh never gives (the largest possible, or 0 or less, as a
    /// hand-edited file may) is read as it is; its first commit writes every row anew, numbered
    /// from 1, and later puts get the ids that follow (no id runs past the largest an id can be).
    @Test(arguments: [Int64.max, 0, -5])
    func rowsWithIDsCacheshNeverGivesAreRenumbered(id: Int64) async throws {
        let path = Self.directory() + "/s.db"
        func rows() throws -> [String] {
            try Self.editable(path).read { db in
                try Row.fetchAll(db, sql: "SELECT id, CAST(key AS TEXT) AS k FROM entries ORDER BY id").map { "\($0["id"] as Int64):\($0["k"] as String)" }
            }
        }
        var store = try SQLiteStore(path: path)
        _ = try await Self.opened(store).typed("put a:1 1\nput a:2 2")
        try store.close()
        try await Self.editable(path).write { db in try db.execute(sql: "UPDATE entries SET id = ? WHERE id = 2", arguments: [id]) }
        store = try SQLiteStore(path: path)
        let out = try await Self.opened(store).typed("put a:3 3\nput a:4 4\nkeys")
        #expect(!out.contains("error") && !out.contains("cannot"), "\(out)")
        #expect(out.hasSuffix("a:4  fresh  0\n"), "\(out)")
        try store.close()
        #expect(try rows() == ["1:a:1", "2:a:2", "3:a:3", "4:a:4"])
        store = try SQLiteStore(path: path)
        _ = try await Self.opened(store).typed("put a:5 5")
        try store.close()
        #expect(try rows() == ["1:a:1", "2:a:2", "3:a:3", "4:a:4", "5:a:5"])
    }

    /// Output is handed on only after the commit that covers it: a failed commit prints the error
    /// and not the output of the commands it would have made durable, and stops the session.
    @Test func failedCommitWithholdsOutput() async throws {
        final class FailingStore: PersistentStore {
            var commits = 0
            func load() throws(StoreError) -> StoredState? { nil }
            func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {}
            func commit(_ changes: StoreChanges) throws(StoreError) {
                commits += 1
                if commits > 1 { throw StoreError("disk full") }
            }
        }
        let session = await TestShell()
        let printed = try await session.run { session, cache in
            let sink = Printed()
            session.sink = { text, _ in sink.lines.append(text) }
            try session.open(store: FailingStore(), groupSize: 2, on: cache)
            session.run(SourceFile(name: "-c", text: "put a 1; put b 2; put c 3"), semicolonsSeparate: true, on: cache)
            return sink.lines
        }
        #expect(printed == ["cachesh: disk full\n"])
        #expect(await session.anyFailed)
        #expect(await session.quitRequested)
    }

    /// A batch writes each reply straight into its output buffer; with a store it stays there,
    /// unflushed however large the buffer grows, until the commit that covers it, and a failed
    /// commit takes back the replies it would have made durable. What is printed is what the same
    /// commands print without a store.
    @Test func directRepliesWaitForTheirCommit() async throws {
        final class CountingStore: PersistentStore {
            var commits = 0
            var flushedAtCommit: [Int] = []
            var flushed: () -> Int = { 0 }
            let failsAfter: Int
            init(failsAfter: Int) { self.failsAfter = failsAfter }
            func load() throws(StoreError) -> StoredState? { nil }
            func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {}
            func commit(_ changes: StoreChanges) throws(StoreError) {
                commits += 1
                flushedAtCommit.append(flushed())
                if commits > failsAfter { throw StoreError("disk full") }
            }
        }
        // Each `get` prints a value of 40 000 bytes: two of them pass the buffer's flush size.
        let big = "{\"text\":\"" + String(repeating: "x", count: 40_000) + "\"}"
        let firstGroup = "put k:1 \(big)\nget k:1\nget k:1\n"
        let script = firstGroup + "get k:1\nget k:1\nget k:1\n"
        func run(failingAfter commits: Int?, _ script: String) async throws -> (stdout: String, errors: [String], flushedAtCommit: [Int]) {
            let session = await TestShell()
            return try await session.run { session, cache in
                let errors = Printed()
                let stdout = Printed()
                session.keepsWholeHistory = false
                let buffer = session.writeRepliesDirectly(flushed: { stdout.lines.append(String(decoding: $0, as: UTF8.self)) },
                                                          error: { errors.lines.append($0) })
                var store: CountingStore?
                if let commits {
                    let opened = CountingStore(failsAfter: commits)
                    opened.flushed = { stdout.lines.joined().utf8.count }
                    try session.open(store: opened, groupSize: 3, on: cache)
                    store = opened
                }
                session.run(SourceFile(name: "s.cachesh", text: script), on: cache)
                buffer.flush()
                return (stdout.lines.joined(), errors.lines, store?.flushedAtCommit ?? [])
            }
        }
        let plain = try await run(failingAfter: nil, script)
        #expect(plain.stdout.utf8.count > 5 * 40_000 && plain.errors.isEmpty)
        let firstGroupOutput = try await run(failingAfter: nil, firstGroup).stdout

        // Commits: at the open, after 3 commands, after the last 3, at the end of the run. Nothing
        // is flushed before the commit of the group it belongs to.
        let stored = try await run(failingAfter: 10, script)
        #expect(stored.stdout == plain.stdout && stored.errors.isEmpty)
        #expect(stored.flushedAtCommit == [0, 0, firstGroupOutput.utf8.count, plain.stdout.utf8.count])

        // The second group's commit fails: only the first group's replies are printed.
        let failed = try await run(failingAfter: 2, script)
        #expect(failed.stdout == firstGroupOutput)
        #expect(failed.errors == ["cachesh: disk full\n"])
    }

    // MARK: Refusals

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func refusesAFileThatIsNotADatabase() {
        let path = Self.directory() + "/notes.txt"
        _ = FileManager.default.createFile(atPath: path, contents: Data(String(repeating: "not sqlite\n", count: 100).utf8))
        let before = Self.bytes(path)
        #expect(throws: StoreError.self) { try SQLiteStore(path: path) }
        #expect(Self.bytes(path) == before)
    }

    @Test func refusesAnotherApplicationsDatabase() throws {
        let path = Self.directory() + "/other.db"
        try Self.editable(path).write { try $0.execute(sql: "CREATE TABLE people (name TEXT)") }
        let before = Self.bytes(path)
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("opened another application's database")
        } catch {
            #expect(error.message == "\(path) is not a cachesh store (an SQLite database without cachesh's tables); refusing to change it")
        }
        #expect(Self.bytes(path) == before)
    }

    @Test func refusesAStoreOfANewerSchema() throws {
        let path = Self.directory() + "/s.db"
        _ = try SQLiteStore(path: path)
        let newer = SQLiteStore.schemaVersion + 1
        try Self.editable(path).write { try $0.execute(sql: "UPDATE meta SET value = '\(newer)' WHERE name = 'schema'") }
        let before = Self.bytes(path)
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("opened a newer store")
        } catch {
            #expect(error.message.contains("was written by a newer cachesh (store schema \(newer); this one reads up to \(SQLiteStore.schemaVersion))"))
        }
        #expect(Self.bytes(path) == before)
    }

    @Test func refusesAStoreWithAMigrationItDoesNotKnow() throws {
        let path = Self.directory() + "/s.db"
        _ = try SQLiteStore(path: path)
        try Self.editable(path).write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')") }
        #expect(throws: StoreError.self) { try SQLiteStore(path: path) }
    }

    /// The interactive shell records a session opened on a store from the state it began with:
    /// that state stays as it was at open however the cache changes after (the cache's entry
    /// table is shared with it until the first change, then copied).
    @Test func stateAtOpenStaysTheRecordingsStart() async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed(Self.script)
        try await writer.run { session, _ in try session.closeStore() }
        let atOpen = await Self.snapshotText(writer)
        let reader = try await Self.opened(SQLiteStore(path: path))
        _ = await reader.typed("put feed:new 1\nget feed:b\nevict feed:c\nadvance 1m")
        #expect(await Self.snapshotText(reader) != atOpen)
        #expect(await reader.run { session, _ in session.baseSnapshot } == atOpen + "\n")
    }

    /// A batch opened on a store keeps no state it began from (the rows go into the cache and
    /// nowhere else): its `record` starts with the state at that point.
    @Test func batchOnAStoreRecordsFromTheStateAtRecord() async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("put a 1\nput b 2")
        try await writer.run { session, _ in try session.closeStore() }
        let batch = await TestShell()
        try await batch.run { session, cache in
            session.keepsWholeHistory = false
            try session.open(store: SQLiteStore(path: path), on: cache)
        }
        #expect(await batch.run { session, _ in session.baseSnapshot } == nil)
        let transcript = Self.directory() + "/t.transcript"
        _ = await batch.typed("put c 3\nrecord \(transcript)\nget a\nrecord stop")
        let text = try String(contentsOfFile: transcript, encoding: .utf8)
        #expect(text.hasPrefix("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\ncachesh> restore {"))
        for key in ["\"a\"", "\"b\"", "\"c\""] { #expect(text.contains("\"key\":\(key)")) }
        #expect(text.contains("cachesh> get a\n"))
    }

    /// A namespace with more entries in the store than its `max` allows is a damaged store,
    /// refused as a snapshot with the same fault is.
    @Test func refusesAStoreOverANamespaceMax() async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("ns f max=2\nput f:1 1\nput f:2 2")
        try await writer.run { session, _ in try session.closeStore() }
        try await Self.editable(path).write { db in
            try db.execute(sql: """
                INSERT INTO entries (key, recency, value, stored_at, seq, stored_request, last_write, last_put)
                SELECT CAST('f:3' AS BLOB), recency + 1, value, stored_at, seq, stored_request, last_write, last_put
                FROM entries WHERE key = CAST('f:2' AS BLOB)
                """)
        }
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): namespaces.f.max: is 2, but the store holds 3 entries of f")
        #expect(await reader.run { _, cache in cache.count } == 0)
    }

    @Test func refusesADamagedState() async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("put a 1")
        try await writer.run { session, _ in try session.closeStore() }
        for (damage, message) in [
            ("value = '{\"n\": '", "entries: damaged entry a (value is not valid JSON: unexpected end of JSON, expected a value)"),
            ("tags = '{}'", "entries[0].tags: expected an array"),
            ("extra = '{\"key\": 1}'", "entries: damaged entry a (extra holds key)"),
            ("extra = '{\"colour\": 1}'", "entries[0].colour: unknown field"),
        ] {
            try await Self.editable(path).write { try $0.execute(sql: "UPDATE entries SET tags = NULL, extra = NULL, value = '1'; UPDATE entries SET \(damage)") }
            let (reader, refusal) = await Self.openRefused(path)
            #expect(refusal == "damaged store: \(path): " + message)
            #expect(await reader.run { _, cache in cache.count } == 0)
        }
    }

    /// Opening reads each value from the bytes SQLite keeps (`StoredEntry(valueUTF8:)`): a text
    /// that is not in canonical form (blanks, keys out of order, a number written otherwise),
    /// one that is not ASCII, one that is not even valid UTF-8 (repaired, as a string reads it),
    /// and one cut by a NUL (read up to it, as text is) all load as the same value the text
    /// parses to, printed in canonical form; a key stored as text (an older store's) reads as
    /// its bytes.
    @Test(arguments: [
        ("value = '{ \"b\" : 1.50, \"a\" : [ true , null ] }'", "{\"a\":[true,null],\"b\":1.5}"),
        ("value = '\"caf\u{e9} \u{1F600}\"'", "\"caf\u{e9} \u{1F600}\""),
        ("value = CAST(X'22FF22' AS TEXT)", "\"\u{FFFD}\""),
        ("value = CAST(X'3132003334' AS TEXT)", "12"),
        ("key = CAST(key AS TEXT)", "1"),
    ])
    func valuesLoadFromTheirBytesAsTheirTextParses(damage: String, printed: String) async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("put a 1")
        try await writer.run { session, _ in try session.closeStore() }
        try await Self.editable(path).write { try $0.execute(sql: "UPDATE entries SET \(damage)") }
        let reader = try await Self.opened(SQLiteStore(path: path))
        #expect(await reader.typed("get a").contains("value:         \(printed)\n"))
        try await reader.run { session, _ in try session.closeStore() }
    }

    /// A NULL in an integer column the schema says NOT NULL (a file edited by hand) is one error
    /// naming the row and the column, and the session stays empty.
    @Test func aNullIntegerInARowIsOneClearError() async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("put a 1\nput b 2")
        try await writer.run { session, _ in try session.closeStore() }
        let raw = try DatabaseQueue(path: path)
        try await raw.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = replace(sql, 'seq INTEGER NOT NULL', 'seq INTEGER') WHERE name = 'entries'")
        }
        try raw.close()
        try await Self.editable(path).write { try $0.execute(sql: "UPDATE entries SET seq = NULL WHERE key = CAST('b' AS BLOB)") }
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal == "cannot read store \(path): entry row 2 has no seq (NULL)")
        #expect(await reader.run { _, cache in cache.count } == 0)
    }

    /// A row is checked against the state as a snapshot's entry is: times after the store's
    /// `now` or out of order, an expiry that passed uncounted, sequence numbers past the state's,
    /// a mutation log waiting for no mutation, eviction fields its namespace's policy does not
    /// have (or lacks). Each is refused as a damaged store, the cache stays empty and the file
    /// keeps its rows as they were.
    @Test(arguments: [
        ("stored_at = stored_at + 20000 WHERE key = CAST('f:a' AS BLOB)",
         "entries[0].stored_at: is after now (2026-01-01T00:00:10.000Z)"),
        ("stale_at = stored_at - 1 WHERE key = CAST('f:a' AS BLOB)", "entries[0].stale_at: is before stored_at"),
        ("expires_at = stored_at - 1 WHERE key = CAST('f:a' AS BLOB)", "entries[0].expires_at: is before stored_at"),
        ("expires_at = stored_at + 5000 WHERE key = CAST('f:a' AS BLOB)",
         "entries[0].expiry_counted: is false, but expires_at is before now: the expiry passed uncounted"),
        ("seq = 99 WHERE key = CAST('f:a' AS BLOB)",
         "entries[0].seq: 99 is past the top-level seq 6 (seq must be at least every sequence number in use)"),
        ("last_put = 99 WHERE key = CAST('g:b' AS BLOB)",
         "entries[1].last_put: 99 is past the top-level seq 6 (seq must be at least every sequence number in use)"),
        ("extra = '{\"mutations\":{\"base\":1,\"base_seq\":1,\"pending\":[1],\"items\":[]}}' WHERE key = CAST('f:a' AS BLOB)",
         "entries[0].mutations.pending: mutation 1 is neither queued (pending.queued_mutations) nor in flight (pending.requests)"),
        ("extra = '{\"rank\":5}' WHERE key = CAST('f:a' AS BLOB)",
         "entries[0].rank: an entry of an lru namespace has no rank (its place is its recency)"),
        ("extra = NULL WHERE key = CAST('g:b' AS BLOB)", "entries[1].rank: missing"),
        ("extra = '{\"rank\":0,\"uses\":0}' WHERE key = CAST('g:b' AS BLOB)", "entries[1].uses: expected at least 1"),
        ("extra = '{\"rank\":0,\"uses\":1,\"visited\":true}' WHERE key = CAST('g:b' AS BLOB)",
         "entries[1].visited: only an entry of a sieve namespace is visited"),
    ])
    func refusesARowThatContradictsTheState(damage: String, message: String) async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("ns f ttl=1m stale=30s\nns g policy=lfu\nput f:a 1\nput g:b 2\nadvance 10s")
        try await writer.run { session, _ in try session.closeStore() }
        let rows = { () throws -> [[String]] in
            try Self.editable(path).read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM entries ORDER BY recency").map { row in row.databaseValues.map(\.description) }
            }
        }
        try await Self.editable(path).write { try $0.execute(sql: "UPDATE entries SET \(damage)") }
        let damaged = try rows()
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): " + message)
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try rows() == damaged)
    }

    /// A store written by schema 3 (each entry's snapshot JSON in one column, as the previous
    /// release wrote it) is upgraded in place when opened: the session continues from exactly the
    /// state that wrote it, and the rows are typed columns afterwards.
    @Test func upgradesAStoreOfSchema3InPlace() async throws {
        let path = Self.directory() + "/s.db"
        let writer = await TestShell()
        _ = await writer.typed(Self.script)
        let document = await writer.run { session, cache in session.makeSnapshot(on: cache) }
        guard case .object(var top) = document, case .array(let entries)? = top["entries"] else { throw StoreError("no entries") }
        top["entries"] = nil
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.prepare(old, name: path, wal: true, upTo: "v3")
        // The rows as schema 3 holds them: the state with the server's data and log apart.
        let rows = await writer.run { _, cache -> StoreChanges in
            cache.startTrackingChanges(everything: true)
            return cache.takeChanges()
        }
        let state = rows.state
        try await old.write { db in
            try db.execute(sql: "INSERT INTO state (id, body) VALUES (1, ?)", arguments: [state])
            for (i, entry) in entries.enumerated() {
                guard case .object(let f) = entry, case .string(let key)? = f["key"] else { continue }
                try db.execute(sql: "INSERT INTO entries (key, recency, body) VALUES (?, ?, ?)",
                               arguments: [Data(key.utf8), i * 3, entry.compactText])
            }
            for line in rows.log { try db.execute(sql: "INSERT INTO log (position, body) VALUES (?, ?)", arguments: [line.position, line.body]) }
            for key in rows.server {
                try db.execute(sql: "INSERT INTO server_data (key, value, modified_at) VALUES (?, ?, ?)",
                               arguments: [Data(key.key.utf8), key.value, key.modifiedAt])
            }
        }
        try old.close()

        let store = try SQLiteStore(path: path)
        #expect(try store.schema() == SQLiteStore.schemaVersion)
        let reader = try await Self.opened(store)
        #expect(await Self.snapshotText(reader) == Self.snapshotText(writer))
        let more = "get feed:c\nget feed:a\nadvance 30m\nkeys\nserver log\nstats"
        #expect(await reader.typed(more) == writer.typed(more))
        let columns = try await DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('entries') ORDER BY cid")
        }
        #expect(columns == ["id", "key", "recency", "value", "fields"])
    }

    /// A store of schema 4 as cachesh wrote it before schema 5 (`Tests/store-schema4`, made by the
    /// cachesh of that time) is upgraded in place when opened: every row is kept as it was, the
    /// recency order with it, the entries are one table keyed by a row id with no index, and a
    /// session on it prints what that cachesh printed (`expected.txt`: keys, stats, snapshot).
    @Test func upgradesAStoreOfSchema4WrittenByThePreviousRelease() async throws {
        let (path, expected) = try Self.copyOfFixture("store-schema4")
        let columns = Self.entryColumns
        func rows() throws -> [[DatabaseValue]] {
            try Self.editable(path).read { db in
                try Row.fetchAll(db, sql: "SELECT \(columns) FROM entries ORDER BY recency").map { Array($0.databaseValues) }
            }
        }
        #expect(try rows().count == 14)
        try await Self.expectUpgrade(path, from: 4, printing: expected, rows: rows)
    }

    /// The entry columns every schema since 4 has, in their order.
    static let entryColumns = "key, recency, value, stored_at, stale_at, expires_at, seq, stored_request, last_write, last_put, tags, extra"

    /// A copy, in a new directory, of the store of the fixture `Tests/NAME` (`store.db`), and what
    /// a session on it printed when the fixture was made (`expected.txt`).
    static func copyOfFixture(_ name: String) throws -> (path: String, expected: String) {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(name)
        let path = directory() + "/s.db"
        try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent("store.db").path, toPath: path)
        return (path, try String(contentsOf: fixtures.appendingPathComponent("expected.txt"), encoding: .utf8))
    }

    /// Opens the store at `path`, a fixture of schema `schema`: it is upgraded to the current
    /// schema, a session on it prints `expected` (`keys`, `stats`, `snapshot`), and once closed
    /// every row is as `rows` read it before (schema 8's `fields` read as schema 7's columns:
    /// `editable`) and the entries have the current layout.
    static func expectUpgrade<Rows: Equatable>(_ path: String, from schema: Int, printing expected: String,
                                               rows: () throws -> Rows) async throws {
        let before = try rows()
        #expect(try await Self.editable(path).read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE name = 'schema'") } == "\(schema)")
        let store = try SQLiteStore(path: path)
        #expect(try store.schema() == SQLiteStore.schemaVersion)
        let reader = try await Self.opened(store)
        #expect(await reader.typed("keys\nstats\nsnapshot") == expected)
        try store.close()
        #expect(try rows() == before)
        try Self.expectCurrentLayout(path)
    }

    /// Opens the store at `path` in a new session.
    /// - Returns: the session, and the message of the error that refused the store (nil: opened).
    static func openRefused(_ path: String) async -> (reader: TestShell, refusal: String?) {
        let reader = await TestShell()
        let refusal = await reader.run { session, cache in
            do throws(StoreError) { try session.open(store: SQLiteStore(path: path), on: cache) } catch { return Optional(error.message) }
            return nil
        }
        return (reader, refusal)
    }

    /// Runs `commands` in a session on the store at `path` (just upgraded), closes it, and
    /// expects a session opened on it again to have the state the first one ended in.
    /// - Returns: what the commands printed, and that state (`snapshot`).
    static func expectWritesReadBack(_ path: String, _ commands: String) async throws -> (said: String, after: String) {
        let writer = try await Self.opened(SQLiteStore(path: path))
        let said = await writer.typed(commands)
        let after = await Self.snapshotText(writer)
        try await writer.run { session, _ in try session.closeStore() }
        let again = try await Self.opened(SQLiteStore(path: path))
        #expect(await Self.snapshotText(again) == after)
        return (said, after)
    }

    /// The entries of schema 9: keyed by the row id, with no index at all, the times, sequence
    /// numbers, tags and extra in one BLOB (schema 8), no column NOT NULL (schema 9).
    static func expectCurrentLayout(_ path: String) throws {
        let layout = try DatabaseQueue(path: path).read { db in
            (try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'entries'") ?? "",
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries'"),
             try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'schema'"),
             try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"))
        }
        #expect(layout.0 == "CREATE TABLE entries (id INTEGER PRIMARY KEY, key BLOB, recency INTEGER, value TEXT, fields BLOB)")
        #expect(layout.1.isEmpty)
        #expect(layout.2 == "9")
        #expect(layout.3 == (1...9).map { "v\($0)" })
    }

    /// A store of schema 5 as the previous release wrote it (`Tests/store-schema5`) is upgraded in
    /// place when opened: every row is kept byte for byte (each column's type and bytes), and a
    /// session on it prints what that release printed (`keys`, `stats`, `snapshot`); puts, evictions
    /// and reads after the upgrade find the upgraded rows by their keys, and a reopen continues
    /// from them.
    @Test func upgradesAStoreOfSchema5WrittenByThePreviousRelease() async throws {
        let (path, expected) = try Self.copyOfFixture("store-schema5")
        let columns = Self.entryColumns
        // Each column as its SQLite type and the hex of its bytes.
        let typed = columns.split(separator: ", ").map { "typeof(\($0)) || ':' || hex(\($0))" }.joined(separator: ", ")
        func rows() throws -> [[String]] {
            try Self.editable(path).read { db in
                try Row.fetchAll(db, sql: "SELECT \(typed) FROM entries ORDER BY key").map { row in (0..<12).map { row[$0] as String } }
            }
        }
        #expect(try rows().count == 15)
        try await Self.expectUpgrade(path, from: 5, printing: expected, rows: rows)

        // The rows are found by key after the upgrade: a put replaces its row, an evict deletes
        // it, a new key adds one; the next open reads exactly that.
        let more = "put feed:d 5\nevict ff:2\nput new:1 1\nget lfu:1\nkeys"
        let writer = try await Self.opened(SQLiteStore(path: path))
        let said = await writer.typed(more)
        let after = await Self.snapshotText(writer)
        try await writer.run { session, _ in try session.closeStore() }
        let counts = try await Self.editable(path).read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM entries") ?? 0,
             try Int.fetchOne(db, sql: "SELECT count(DISTINCT key) FROM entries") ?? 0)
        }
        #expect(counts.0 == 15 && counts.1 == 15)
        let again = try await Self.opened(SQLiteStore(path: path))
        #expect(await Self.snapshotText(again) == after)
        #expect(said.contains("new:1"))
    }

    /// A store of schema 6 as the previous release wrote it (`Tests/store-schema6`, no HTTP
    /// namespace) is upgraded in place to schema 7 when opened: the server's rows get a `headers`
    /// column (NULL in each), every row of every table keeps its bytes, and a session on it prints
    /// exactly what that release printed (`keys`, `stats`, `snapshot`): the snapshot of a store
    /// without HTTP namespaces is byte for byte as before. HTTP responses written after the upgrade
    /// read back on the next open.
    @Test func upgradesAStoreOfSchema6WrittenByThePreviousRelease() async throws {
        let (path, expected) = try Self.copyOfFixture("store-schema6")
        let columns = Self.entryColumns
        let typed = columns.split(separator: ", ").map { "typeof(\($0)) || ':' || hex(\($0))" }.joined(separator: ", ")
        func rows() throws -> [[String]] {
            try Self.editable(path).read { db in
                try Row.fetchAll(db, sql: "SELECT \(typed) FROM entries ORDER BY id").map { row in (0..<12).map { row[$0] as String } }
                    + Row.fetchAll(db, sql: "SELECT hex(key), typeof(value) || hex(value), typeof(modified_at) || hex(modified_at) FROM server_data ORDER BY key")
                        .map { row in (0..<3).map { row[$0] as String } }
                    + Row.fetchAll(db, sql: "SELECT CAST(position AS TEXT), hex(body) FROM log ORDER BY position").map { row in [row[0] as String, row[1] as String] }
                    + Row.fetchAll(db, sql: "SELECT hex(body) FROM state").map { [$0[0] as String] }
            }
        }
        #expect(try rows().count > 15)
        try await Self.expectUpgrade(path, from: 6, printing: expected, rows: rows)
        let headers = try await Self.editable(path).read { db in
            try String.fetchAll(db, sql: "SELECT typeof(headers) FROM server_data")
        }
        #expect(!headers.isEmpty && headers.allSatisfy { $0 == "null" })

        // An HTTP namespace on the upgraded store: its responses and the server's fields are kept.
        let more = """
            server online
            ns api http
            server set api:/feed {"n":1} headers={"ETag":"\\"v1\\"","Cache-Control":"max-age=60","Vary":"Accept-Language"}
            get api:/feed headers={"Accept-Language":"en"}
            """
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed(more)
        let after = await Self.snapshotText(writer)
        try await writer.run { session, _ in try session.closeStore() }
        let again = try await Self.opened(SQLiteStore(path: path))
        #expect(await Self.snapshotText(again) == after)
        #expect(after.contains("\"accept-language\": \"en\""))
        let read = await again.typed("get api:/feed headers={\"Accept-Language\":\"en\"}")
        #expect(read.contains("cache_status: cachesh; hit; ttl="), "\(read)")
        let kept = try await Self.editable(path).read { db in
            try String.fetchOne(db, sql: "SELECT headers FROM server_data WHERE key = CAST('api:/feed' AS BLOB)")
        }
        #expect(kept == #"[["ETag","\"v1\""],["Cache-Control","max-age=60"],["Vary","Accept-Language"]]"#)
    }

    /// A store of schema 7 as the previous release wrote it (`Tests/store-schema7`, with an HTTP
    /// namespace) is upgraded in place (schema 8, then 9) when opened: each entry row keeps its id, key,
    /// recency and value as they were (type and bytes), its times, sequence numbers, tags and extra
    /// move into the `fields` BLOB and read back as the same integers (or NULL) and texts (the
    /// same bytes), every other table
    /// keeps its bytes, and a session on it prints exactly what that release printed (`keys`,
    /// `stats`, `snapshot`). Writes after the upgrade read back on the next open.
    @Test func upgradesAStoreOfSchema7WrittenByThePreviousRelease() async throws {
        let (path, expected) = try Self.copyOfFixture("store-schema7")
        let columns = "id, " + Self.entryColumns
        let typed = columns.split(separator: ", ").map { "typeof(\($0)) || ':' || hex(\($0))" }.joined(separator: ", ")
        func rows() throws -> [[String]] {
            try Self.editable(path).read { db in
                try Row.fetchAll(db, sql: "SELECT \(typed) FROM entries ORDER BY id").map { row in (0..<13).map { row[$0] as String } }
                    + Row.fetchAll(db, sql: "SELECT hex(key), typeof(value) || hex(value), typeof(modified_at) || hex(modified_at), typeof(headers) || hex(headers) FROM server_data ORDER BY key")
                        .map { row in (0..<4).map { row[$0] as String } }
                    + Row.fetchAll(db, sql: "SELECT CAST(position AS TEXT), hex(body) FROM log ORDER BY position").map { row in [row[0] as String, row[1] as String] }
                    + Row.fetchAll(db, sql: "SELECT hex(body) FROM state").map { [$0[0] as String] }
            }
        }
        let before = try rows()
        #expect(before.count > 17)
        #expect(before.contains { $0.contains { $0.hasPrefix("text:") && $0.contains(Self.hex("Cache-Control")) } })
        try await Self.expectUpgrade(path, from: 7, printing: expected, rows: rows)
        let types = try await DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT typeof(fields) FROM entries")
        }
        #expect(types == ["blob"])

        let more = "put feed:d 5\nevict ff:2\nput new:1 {\"id\":1} tags=t\nget lfu:1\nexpire sv:1 in=1m\nadvance 1s\nkeys"
        let (said, _) = try await Self.expectWritesReadBack(path, more)
        #expect(said.contains("new:1"))
    }

    /// A store of schema 8 as the previous release wrote it (`Tests/store-schema8`) is upgraded in
    /// place to schema 9 when opened: the entry table's columns lose NOT NULL (so SQLite keeps no
    /// statement journal for a step that replaces many rows), no row is rewritten (every row of
    /// every table keeps its type and bytes, and the table its pages), and a session on it prints
    /// exactly what that release printed (`keys`, `stats`, `snapshot`). Rows written over after
    /// the upgrade, many to a step, read back on the next open.
    @Test func upgradesAStoreOfSchema8WrittenByThePreviousRelease() async throws {
        let (path, expected) = try Self.copyOfFixture("store-schema8")
        func rows() throws -> [[String]] {
            try DatabaseQueue(path: path).read { db in
                try Row.fetchAll(db, sql: "SELECT typeof(id) || hex(id), typeof(key) || hex(key), typeof(recency) || hex(recency), "
                                 + "typeof(value) || hex(value), typeof(fields) || hex(fields) FROM entries ORDER BY id")
                    .map { row in (0..<5).map { row[$0] as String } }
                    + Row.fetchAll(db, sql: "SELECT hex(key), typeof(value) || hex(value), typeof(modified_at) || hex(modified_at), typeof(headers) || hex(headers) FROM server_data ORDER BY key")
                        .map { row in (0..<4).map { row[$0] as String } }
                    + Row.fetchAll(db, sql: "SELECT CAST(position AS TEXT), hex(body) FROM log ORDER BY position").map { row in [row[0] as String, row[1] as String] }
                    + Row.fetchAll(db, sql: "SELECT hex(body) FROM state").map { [$0[0] as String] }
            }
        }
        func entryPages() throws -> [Int] {
            try DatabaseQueue(path: path).read { db in
                try Int.fetchAll(db, sql: "SELECT pageno FROM dbstat WHERE name = 'entries' ORDER BY pageno")
            }
        }
        let before = try rows()
        #expect(before.count > 20)
        let pages = try entryPages()
        #expect(!pages.isEmpty)
        func declared() throws -> String {
            try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'entries'") } ?? ""
        }
        #expect(try declared().contains("key BLOB NOT NULL"))
        try await Self.expectUpgrade(path, from: 8, printing: expected, rows: rows)
        #expect(try entryPages() == pages)

        // Every key put again, many rows to one step of `INSERT OR REPLACE`, and a new one.
        let keys = try await DatabaseQueue(path: path).read { db in
            try Data.fetchAll(db, sql: "SELECT key FROM entries ORDER BY id").map { String(decoding: $0, as: UTF8.self) }
        }
        let more = keys.filter { !$0.hasPrefix("api:") }.enumerated().map { "put \($1) {\"n\":\($0)}" }.joined(separator: "\n")
            + "\nput new:1 {\"id\":1} tags=t\nkeys"
        let (said, after) = try await Self.expectWritesReadBack(path, more)
        #expect(said.contains("new:1") && after.contains("\"n\": 3"))
    }

    /// v9's upgrade where SQLite refuses to edit a table's declaration (a build whose connections
    /// are defensive answers `SQLITE_ERROR`, "table sqlite_master may not be modified"): the rows
    /// are copied into a table of schema 9's columns, each under its id with every column's type
    /// and bytes, and a store so upgraded opens with what it held. Any other error of the edit
    /// (a full disk) fails the upgrade, with nothing copied.
    @Test func anUpgradeWhoseEditSQLiteRefusesCopiesEveryRow() async throws {
        let (path, expected) = try Self.copyOfFixture("store-schema8")
        func rows() throws -> [String] {
            try DatabaseQueue(path: path).read { db in
                try String.fetchAll(db, sql: "SELECT typeof(id) || hex(id) || typeof(key) || hex(key) || typeof(recency) || hex(recency) "
                                    + "|| typeof(value) || hex(value) || typeof(fields) || hex(fields) FROM entries ORDER BY id")
            }
        }
        func columns() throws -> [String] {
            try DatabaseQueue(path: path).read { db in
                try String.fetchAll(db, sql: "SELECT name || ' ' || type || ' ' || \"notnull\" || ' ' || pk FROM pragma_table_info('entries') ORDER BY cid")
            }
        }
        let before = try rows()
        #expect(before.count > 15)
        #expect(try columns() == ["id INTEGER 0 1", "key BLOB 1 0", "recency INTEGER 1 0", "value TEXT 1 0", "fields BLOB 1 0"])

        let full = try await DatabaseQueue(path: path).writeWithoutTransaction { db -> ResultCode? in
            do {
                try db.inTransaction {
                    try SQLiteStore.dropEntryConstraints(db) { _ in throw DatabaseError(resultCode: .SQLITE_FULL) }
                    return .commit
                }
            } catch let error as DatabaseError { return error.resultCode }
            return nil
        }
        #expect(full == .SQLITE_FULL)
        #expect(try columns() == ["id INTEGER 0 1", "key BLOB 1 0", "recency INTEGER 1 0", "value TEXT 1 0", "fields BLOB 1 0"])

        try await DatabaseQueue(path: path).write { db in
            try SQLiteStore.dropEntryConstraints(db) { _ in
                throw DatabaseError(resultCode: .SQLITE_ERROR, message: "table sqlite_master may not be modified")
            }
            try db.execute(sql: "UPDATE meta SET value = '9' WHERE name = 'schema'; INSERT INTO grdb_migrations VALUES ('v9')")
        }
        #expect(try rows() == before)
        #expect(try columns() == ["id INTEGER 0 1", "key BLOB 0 0", "recency INTEGER 0 0", "value TEXT 0 0", "fields BLOB 0 0"])
        let store = try SQLiteStore(path: path)
        let reader = try await Self.opened(store)
        #expect(await reader.typed("keys\nstats\nsnapshot") == expected)
        try store.close()
    }

    /// A store of schema 8 whose entry table has schema 8's columns but not its declaration (an
    /// index added by hand) is refused by the upgrade, which would otherwise orphan or drop what
    /// it does not know, and is left as it was.
    @Test func aSchema8StoreWithAnIndexOnItsEntriesIsRefusedByTheUpgrade() async throws {
        let (path, _) = try Self.copyOfFixture("store-schema8")
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE INDEX entries_by_key ON entries (key)") }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): its entries table is not schema 8's (declared with other constraints, or with an index or trigger)",
                "\(refusal ?? "opened")")
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// A store of schema 8 whose entry table is not as schema 8 declares it (a column added by
    /// hand) is not upgraded by changing its declaration: opening refuses it as damaged and
    /// leaves it as it was, schema 8 and every row.
    @Test func aSchema8StoreWithAnotherEntryTableIsRefusedByTheUpgrade() async throws {
        let (path, _) = try Self.copyOfFixture("store-schema8")
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "ALTER TABLE entries ADD COLUMN note TEXT") }
        func everything() throws -> [String] {
            try Self.metaAndRows(path, "typeof(recency)")
                + DatabaseQueue(path: path).read { db in [try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'entries'") ?? ""] }
        }
        let before = try everything()
        #expect(before.contains("schema=8"))
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): its entries table is not schema 8's (columns: id INTEGER PRIMARY KEY, "
                + "key BLOB NOT NULL, recency INTEGER NOT NULL, value TEXT NOT NULL, fields BLOB NOT NULL, note TEXT)", "\(refusal ?? "opened")")
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try everything() == before)
    }

    /// A schema-7 row with a NULL where its column says NOT NULL (a file edited by hand) is
    /// carried into `fields` as the field absent, so the upgraded store is refused as schema 7's
    /// was, naming the row and the field, and the upgrade is rolled back: the file keeps schema 7
    /// and its rows.
    @Test func aNullInASchema7RowIsRefusedAsBeforeItsUpgrade() async throws {
        let (path, _) = try Self.copyOfFixture("store-schema7")
        let raw = try DatabaseQueue(path: path)
        try await raw.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = replace(sql, 'seq INTEGER NOT NULL', 'seq INTEGER') WHERE name = 'entries'")
        }
        try raw.close()
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE entries SET seq = NULL WHERE key = CAST('again' AS BLOB)") }
        func everything() throws -> [String] { try Self.metaAndRows(path, "ifnull(seq, 'NULL')") }
        let before = try everything()
        #expect(before.contains("schema=7") && before.contains { $0.hasSuffix(":NULL:32") })
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal?.hasPrefix("cannot read store \(path): entry row ") == true && refusal?.hasSuffix(" has no seq (NULL)") == true,
                "\(refusal ?? "opened")")
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try everything() == before)
    }

    /// An integer column of a schema-7 row that holds a text or a real (SQLite keeps what it is
    /// given) is damage: the upgrade refuses it, naming the row and the field, and leaves the
    /// store as it was, where it used to read `'12abc'` as 12 and `'x'` as 0.
    @Test(arguments: [("'12abc'", "text"), ("'x'", "text"), ("1.5", "a real number"), ("x'01'", "a BLOB")])
    func aTextInASchema7IntegerColumnIsRefusedByTheUpgrade(value: String, kind: String) async throws {
        let (path, _) = try Self.copyOfFixture("store-schema7")
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE entries SET stored_at = \(value) WHERE key = CAST('again' AS BLOB)") }
        func everything() throws -> [String] { try Self.metaAndRows(path, "typeof(stored_at)") }
        let before = try everything()
        #expect(before.contains("schema=7"))
        let (reader, refusal) = await Self.openRefused(path)
        let id = try await DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT id FROM entries WHERE key = CAST('again' AS BLOB)") }
        #expect(refusal == "damaged store: \(path): the entry row of id \(id ?? -1) has a stored_at that is not a whole number (\(kind))",
                "\(refusal ?? "opened")")
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try everything() == before)
    }

    /// A store's `meta`, its migrations and, for each entry row by id, its key, `column` (an SQL
    /// expression) and value: what an upgrade refused must leave as it was.
    static func metaAndRows(_ path: String, _ column: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name || '=' || value FROM meta ORDER BY name")
                + String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                + String.fetchAll(db, sql: "SELECT hex(key) || ':' || \(column) || ':' || hex(value) FROM entries ORDER BY id")
        }
    }

    /// The hex of a text's UTF-8 bytes, as SQLite's `hex()` prints it.
    static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02X", $0) }.joined() }

    /// `fields` that are not an entry's times, sequence numbers, tags and extra as cachesh writes
    /// them (cut short, bytes left over, a number past 64 bits, a mask bit no field has or a mask
    /// of two bytes whose second is 0, tags longer than the bytes left or of a negative length,
    /// empty, NULL, not a BLOB) are one clear error naming the row, and the session stays empty;
    /// a field every entry has that is absent reads as the NULL schema 7 would have held; a NULL
    /// in any column is named.
    @Test(arguments: [
        ("fields = substr(fields, 1, length(fields) - 1)", "entry row 2 has damaged fields"),
        ("fields = fields || x'00'", "entry row 2 has damaged fields"),
        ("fields = x'01ffffffffffffffffff02'", "entry row 2 has damaged fields"),
        ("fields = x'81' || substr(fields, 2)", "entry row 2 has damaged fields"),
        // (The row's own mask is 0x7d: stored_at, expires_at and the four sequence numbers.)
        ("fields = x'fd04' || substr(fields, 2)", "entry row 2 has damaged fields"),
        ("fields = x'fd00' || substr(fields, 2)", "entry row 2 has damaged fields"),
        ("fields = x'fd01' || substr(fields, 2) || x'05' || CAST('[]' AS BLOB)", "entry row 2 has damaged fields"),
        ("fields = x'fd01' || substr(fields, 2) || x'ffffffffffffffffff01'", "entry row 2 has damaged fields"),
        ("fields = x''", "entry row 2 has damaged fields"),
        ("fields = 7", "entry row 2 has damaged fields"),
        ("fields = x'00'", "entry row 2 has no stored_at (NULL)"),
        // An integer column holding a text or a real: not the number SQLite would read it as.
        ("recency = '12abc'", "entry row 2 has a recency that is not a whole number (text)"),
        ("recency = 'x'", "entry row 2 has a recency that is not a whole number (text)"),
        ("recency = 1.5", "entry row 2 has a recency that is not a whole number (a real number)"),
        // A NULL in any column (schema 9 declares none NOT NULL).
        ("key = NULL", "entry row 2 has no key (NULL)"),
        // (A NULL recency sorts first: the rows are read in recency order.)
        ("recency = NULL", "entry row 1 has no recency (NULL)"),
        ("value = NULL", "entry row 2 has no value (NULL)"),
        ("fields = NULL", "entry row 2 has no fields (NULL)"),
    ])
    func damagedFieldsAreOneClearError(damage: String, message: String) async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("put a 1\nput b 2")
        try await writer.run { session, _ in try session.closeStore() }
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE main.entries SET \(damage) WHERE key = CAST('b' AS BLOB)") }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal?.hasPrefix("cannot read store \(path): \(message)") == true, "\(refusal ?? "opened")")
        #expect(await reader.run { _, cache in cache.count } == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// Every integer a field can hold (negative ones too, as a damaged older store's may be)
    /// reads back as written, absent fields as nil, and tags and extra as their text (a NUL, a
    /// non-ASCII character, an empty text and one longer than 127 bytes included).
    @Test func entryFieldsReadBackAsWritten() {
        let samples: [[Int64?]] = [
            [0, nil, nil, 0, 0, 0, 0],
            [1_767_225_600_000, 1_767_225_900_000, nil, 127, 128, 16_383, 16_384],
            [.min, .max, -1, 1, nil, .max, .min],
            [nil, nil, nil, nil, nil, nil, nil],
        ]
        let texts: [(String?, String?)] = [(nil, nil), ("[\"a\"]", nil), (nil, "{\"invalidated\":true}"),
                                           ("", "a\u{0}\u{1F600}" + String(repeating: "x", count: 200))]
        for sample in samples {
            for (tags, extra) in texts {
                var bytes: [UInt8] = []
                EntryRowFields.append(sample, tags: tags, extra: extra, to: &bytes)
                let decoded = bytes.withUnsafeBytes { EntryRowFields.decode($0) }
                #expect(decoded?.integers == sample && decoded?.tags == tags && decoded?.extra == extra)
                if tags == nil && extra == nil { #expect(bytes.count <= 1 + 10 * 7) }
            }
        }
        // The engine's path writes the same bytes, its mask and integers in at most
        // `maxNumberBytes`: numbers of every length, 1 to 10 bytes, on each side of each
        // length's bound.
        let bounds: [Int64] = (1...9).flatMap { k in [(Int64(1) << (7 * k)) &- 1, Int64(1) << (7 * k)] }
        let lengths: [[Int64?]] = stride(from: 0, to: bounds.count, by: 6).map { start in
            let six = Array(bounds[start..<min(start + 6, bounds.count)])
            return [six[0], six.count > 1 ? six[1] : nil, six.count > 2 ? six[2] : nil, six.count > 3 ? six[3] : 1,
                    six.count > 4 ? six[4] : 2, six.count > 5 ? six[5] : 3, .max]
        }
        for sample: [Int64?] in [[5, nil, 9, 3, 0, 2, 2], [.min, .max, .min, .min, .min, .min, .min], [0, 7, nil, 1, 2, 3, 4],
                                 [1_767_225_600_000, 1_767_225_900_000, 1_767_228_300_000, 40_000, 39_999, 0, 0]] + lengths {
            for (tags, extra) in texts {
                var general: [UInt8] = []
                EntryRowFields.append(sample, tags: tags, extra: extra, to: &general)
                var fast = [UInt8](unsafeUninitializedCapacity: EntryRowFields.maxNumberBytes) { out, written in
                    written = EntryRowFields.writeNumbers(storedAt: sample[0]!, staleAt: sample[1], expiresAt: sample[2], seq: sample[3]!,
                                                          storedRequest: sample[4]!, lastWrite: sample[5]!, lastPut: sample[6]!,
                                                          tags: tags != nil, extra: extra != nil, into: out.baseAddress!)
                }
                #expect(fast.count <= EntryRowFields.maxNumberBytes)
                if let tags { EntryRowFields.appendText(tags, to: &fast) }
                if let extra { EntryRowFields.appendText(extra, to: &fast) }
                #expect(fast == general)
            }
        }
    }

    /// A store whose HTTP fields are hostile (a row's response with a bad status, the server's
    /// fields of a key with a control character) is refused as damaged, naming the field, and
    /// left byte for byte as it was.
    @Test(arguments: [
        ("UPDATE entries SET extra = replace(extra, '\"status\":200', '\"status\":1000')",
         "entries[0].http[0].status: expected an HTTP status code from 200 to 599, not 1000"),
        ("UPDATE server_data SET headers = '[[\"ETag\",\"a\\nb\"]]'",
         "server.headers.api:/feed[0]: the value of ETag holds a control character (a field value may not)"),
    ])
    func hostileHTTPRowsAreADamagedStore(damage: String, message: String) async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("""
            ns api http
            server set api:/feed "v1" headers={"ETag":"\\"v1\\"","Cache-Control":"max-age=60"}
            get api:/feed
            """)
        try await writer.run { session, _ in try session.closeStore() }
        try await Self.editable(path).write { try $0.execute(sql: damage) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (_, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): " + message)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// A damaged store of an older schema (here the previous release's schema 5, with a row the
    /// session's checks refuse) is refused before its upgrade commits: the file keeps its schema,
    /// its migrations and every byte of its rows, so the cachesh that wrote it still opens it.
    @Test(arguments: [
        ("stored_at = 9000000000000000 WHERE key = CAST('again' AS BLOB)", "entries[14].stored_at: is after now (2026-01-01T00:06:01.300Z)"),
        ("recency = -1 WHERE key = CAST('again' AS BLOB)", "entries[0].recency: -1 is not a recency stamp (0 to 4611686018427387903)"),
        ("seq = 1000 WHERE key = CAST('again' AS BLOB)", "entries[14].seq: 1000 is past the top-level seq 68 (seq must be at least every sequence number in use)"),
    ])
    func aDamagedOlderStoreIsRefusedBeforeItsUpgrade(damage: String, message: String) async throws {
        let (path, _) = try Self.copyOfFixture("store-schema5")
        try await Self.editable(path).write { try $0.execute(sql: "UPDATE entries SET \(damage)") }
        func everything() throws -> [String] {
            try Self.editable(path).read { db in
                try String.fetchAll(db, sql: "SELECT name || '=' || value FROM meta ORDER BY name")
                    + String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                    + String.fetchAll(db, sql: "SELECT hex(key) || hex(recency) || hex(value) || ifnull(stored_at, '') FROM entries ORDER BY key")
                    + String.fetchAll(db, sql: "SELECT ifnull(sql, name) FROM sqlite_master ORDER BY name")
            }
        }
        let before = try everything()
        #expect(before.contains("schema=5"))
        let (_, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): " + message)
        #expect(try everything() == before)
        // Undamaged, the same store upgrades.
        try await Self.editable(path).write { try $0.execute(sql: "UPDATE entries SET stored_at = 1767225961300, recency = 27, seq = 68 WHERE key = CAST('again' AS BLOB)") }
        let store = try SQLiteStore(path: path)
        _ = try await Self.opened(store)
        try store.close()
        #expect(try await Self.editable(path).read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE name = 'schema'") } == "\(SQLiteStore.schemaVersion)")
    }

    /// Rows without the state row they belong to are a damaged store, not a new one to write over
    /// (a store whose process was killed before its first commit holds no rows at all).
    @Test func rowsWithoutTheStateAreADamagedStore() async throws {
        let (path, _) = try Self.copyOfFixture("store-schema5")
        try await Self.editable(path).write { try $0.execute(sql: "DELETE FROM state") }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (_, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path) holds 24 rows but no state row (the session they belong to)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// SQLite quotes a damaged schema's SQL, from the file, in its message: the refusal stays
    /// on one line.
    @Test func aDamagedSchemasTextStaysOnOneLine() throws {
        let path = Self.directory() + "/s.db"
        try SQLiteStore(path: path).close()
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = 'CREATE TABLE entries (id INTEGER PRIMARY KEY, `key\nrecency' WHERE name = 'entries'")
        }
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("opened a store whose schema does not parse")
        } catch {
            #expect(error.message == "cannot open store \(path): malformed database schema (entries) - unrecognized token: \"`key\\nrecency\"")
        }
    }

    /// `meta` and the migrations table must agree on a schema this build reads: anything else is a
    /// damaged store, named as such (an extra migration row is not "a newer cachesh"), and the
    /// file is left as it was.
    @Test(arguments: [
        ("UPDATE meta SET value = '-1' WHERE name = 'schema'", "damaged cachesh store (its schema version is \"-1\", not a whole number from 1)"),
        ("UPDATE meta SET value = '0' WHERE name = 'schema'", "damaged cachesh store (its schema version is \"0\", not a whole number from 1)"),
        ("UPDATE meta SET value = 'six' WHERE name = 'schema'", "damaged cachesh store (its schema version is \"six\", not a whole number from 1)"),
        ("DELETE FROM meta WHERE name = 'schema'", "damaged cachesh store (no schema version)"),
        ("INSERT INTO grdb_migrations (identifier) VALUES ('v0')", "damaged cachesh store (its schema version is 9, but its migrations table also lists v0)"),
        ("DELETE FROM grdb_migrations WHERE identifier = 'v4'", "damaged cachesh store (its schema version is 9, but its migrations table lacks v4)"),
        ("UPDATE meta SET value = '4' WHERE name = 'schema'", "damaged cachesh store (its schema version is 4, but its migrations table also lists v5, v6, v7, v8, v9)"),
    ])
    func aSchemaTheMigrationsContradictIsRefused(damage: String, message: String) throws {
        let path = Self.directory() + "/s.db"
        try SQLiteStore(path: path).close()
        try Self.editable(path).write { try $0.execute(sql: damage) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("opened a damaged store")
        } catch {
            #expect(error.message == "\(path): \(message); refusing to change it")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// The integers only a store's rows carry are checked at open against what the engine does
    /// with them: recency stamps (in range, each after the one before), times whose age or time
    /// left is no number, log rows off their positions. Each is refused as a damaged store.
    @Test(arguments: [
        ("UPDATE entries SET recency = 4611686018427387904 WHERE key = CAST('f:a' AS BLOB)",
         "entries[2].recency: 4611686018427387904 is not a recency stamp (0 to 4611686018427387903)"),
        ("UPDATE entries SET recency = (SELECT recency FROM entries WHERE key = CAST('f:a' AS BLOB)) WHERE key = CAST('g:b' AS BLOB)",
         "entries[1].recency: 0 is not after the stamp of the row before (0): two rows share a place in the recency order"),
        ("UPDATE entries SET stored_at = -9223372036854775808, stale_at = NULL WHERE key = CAST('f:a' AS BLOB)",
         "entries[0].stored_at: -9223372036854775808 is so far from now that the entry's age is no number"),
        ("UPDATE log SET position = 5 WHERE position = 0",
         "server.log[0]: damaged log row: at position 5, not 0 (the positions are 0, 1, 2, ...)"),
    ])
    func aRowNumberTheEngineCannotTakeIsRefused(damage: String, message: String) async throws {
        let path = Self.directory() + "/s.db"
        let writer = try await Self.opened(SQLiteStore(path: path))
        _ = await writer.typed("ns f ttl=1m\nput f:a 1\nput g:b 2\nserver set s 1\nget s\nadvance 10s")
        try await writer.run { session, _ in try session.closeStore() }
        try await Self.editable(path).write { try $0.execute(sql: damage) }
        let (reader, refusal) = await Self.openRefused(path)
        #expect(refusal == "damaged store: \(path): " + message)
        #expect(await reader.run { _, cache in cache.count } == 0)
    }

    /// A schema-3 row that is not a snapshot entry fails the upgrade, which changes nothing.
    @Test func aDamagedSchema3RowFailsTheUpgrade() throws {
        let path = Self.directory() + "/s.db"
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.prepare(old, name: path, wal: true, upTo: "v3")
        try old.write { db in
            try db.execute(sql: "INSERT INTO state (id, body) VALUES (1, '{}')")
            try db.execute(sql: "INSERT INTO entries (key, recency, body) VALUES (?, 1, '{\"value\": 1')", arguments: [Data("a".utf8)])
        }
        try old.close()
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("upgraded a damaged store")
        } catch {
            #expect(error.message.hasPrefix("damaged store: \(path): damaged entry a (not valid JSON"))
        }
        #expect(try Self.editable(path).read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE name = 'schema'") } == "3")
    }

    @Test func migratesAnOlderStore() throws {
        let path = Self.directory() + "/s.db"
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.prepare(old, name: path, wal: true, upTo: "v1")
        try old.write { try $0.execute(sql: "INSERT INTO state (id, body) VALUES (1, 'x')") }
        #expect(try old.read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE name = 'schema'") } == "1")
        try old.close()
        let store = try SQLiteStore(path: path)
        #expect(try store.schema() == SQLiteStore.schemaVersion)
        #expect(try store.load()?.state == "x")
    }

    /// A new store is made in one step with the tables, columns, keys and recorded migrations a
    /// store upgraded from schema 1 has, its page size 16 KiB, its journal the WAL.
    @Test func aNewStoreIsTheSchemaTheUpgradesMake() async throws {
        func describe(_ path: String) throws -> [String] {
            try DatabaseQueue(path: path).read { db in
                var out = try String.fetchAll(db, sql: "SELECT type || ' ' || name FROM sqlite_master ORDER BY name")
                for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                    out += try String.fetchAll(db, sql: """
                        SELECT ? || '.' || name || ' ' || type || ' ' || "notnull" || ' ' || ifnull(dflt_value, '-') || ' ' || pk
                        FROM pragma_table_info(?) ORDER BY cid
                        """, arguments: [table, table])
                }
                out += try String.fetchAll(db, sql: "SELECT name || '=' || value FROM meta ORDER BY name")
                out += try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                out += try String.fetchAll(db, sql: "SELECT 'journal ' || journal_mode FROM pragma_journal_mode")
                return out
            }
        }
        let upgraded = Self.directory() + "/upgraded.db"
        let old = try DatabaseQueue(path: upgraded)
        try SQLiteStore.prepare(old, name: upgraded, wal: true, upTo: "v1")
        try old.close()
        // The upgrade is committed by the session's first commit, once the rows are checked.
        let store = try SQLiteStore(path: upgraded)
        _ = try await Self.opened(store)
        try store.close()
        let new = Self.directory() + "/new.db"
        try SQLiteStore(path: new).close()
        #expect(try describe(new) == describe(upgraded))
        #expect(try describe(new).contains("entries.id INTEGER 0 - 1"))
        #expect(try await DatabaseQueue(path: new).read { try Int.fetchOne($0, sql: "PRAGMA page_size") } == SQLiteStore.pageSize)
    }
}

/// Lines a sink collected.
private final class Printed {
    var lines: [String] = []
}
