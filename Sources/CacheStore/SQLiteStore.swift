import CacheCore
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// A `PersistentStore` in an SQLite database (SPEC §5.3), through GRDB: WAL journal with
/// `synchronous=NORMAL`, so a commit survives a crash of the process without an fsync of its own.
///
/// One process at a time has a store open (`StoreLock`, a lock file beside it). `close()`
/// checkpoints the WAL into the database file, so after a clean close the file alone holds the
/// whole store.
///
/// Tables: `meta` (the store's format and schema version), `state` (one row: the state document),
/// `entries` (key, recency stamp, value as compact JSON, and in one BLOB (`EntryRowFields`,
/// schema 8) the times in ms, sequence numbers, tags and the rarely set fields as one JSON
/// object; see `StoredEntry`; one B-tree keyed
/// by a row id the engine gives in increasing order (`StoredEntry.rowID`), with no index on the
/// key or the recency, so writing a row touches one tree and a new key's row goes at its right
/// edge: the engine keeps each entry's row id beside it, loaded from the rows, and keeps keys
/// unique; loading sorts the rows by recency), `log`
/// (request-log lines by position) and
/// `server_data` (the simulated server's keys, with the header fields of an HTTP namespace's key). Keys are stored as BLOBs of their UTF-8 bytes, so
/// every key, a NUL in it included, reads back byte for byte (SQLite's C text interface, which
/// GRDB binds strings through, stops at a NUL); the JSON bodies are text, in which JSON escapes
/// every control character. The schema is versioned by GRDB's migrator and by `meta.schema`: an
/// older store is migrated when opened; a newer one, or a database that is not a cachesh store,
/// is refused and left as it was.
public final class SQLiteStore: PersistentStore, Sendable {
    /// The `meta.format` of every cachesh store.
    public static let format = "cachesh-store"
    /// The schema version this build writes (and the newest it reads).
    public static let schemaVersion = 9

    private let queue: DatabaseQueue
    /// Held from open to close (`StoreLock.release`); nil for a store in memory.
    private let lock: StoreLock?
    /// Set by the first `close()`.
    private let closed = Atomic<Bool>(false)
    /// An older schema's upgrade ran at open in a transaction still open (`upgrade`): the first
    /// `commit` commits it (the session checked the rows by then); a close before that rolls it
    /// back, so a store refused as damaged is left as its own version wrote it.
    private let upgradeOpen = Atomic<Bool>(false)
    /// The file, for messages.
    public let path: String
    /// SQLite opened the file read-only (no write permission): nothing is written to it, not
    /// even at open or close; `commit` refuses.
    public let isReadOnly: Bool
    /// SQLite's `-wal` and `-shm` files of the store that did not exist before it was opened:
    /// on a read-only store SQLite makes them (read-only, as the file) and leaves them at close,
    /// where they would make the next open that may write fail; so they are removed then.
    private let sidecarsMade: [String]
    /// Copies the log into the file in the background as the session writes (nil for a
    /// read-only store and one in memory).
    private let checkpointer: WALCheckpointer?

    /// Opens (or creates) the store at `path`, locked for this process; an older schema is
    /// migrated.
    /// - Parameters:
    ///   - wait: when another process has the store open, wait until it closes it instead of
    ///     refusing (the wait ends only then, or with the process).
    ///   - waiting: told, once, before such a wait begins: what it waits for, as a sentence.
    /// - Throws: `StoreError` when another process has the store open (without `wait`), or the
    ///   file cannot be opened, is not a cachesh store, or was written by a newer version; the
    ///   file is then unchanged.
    public init(path: String, wait: Bool = false, waiting: (String) -> Void = { _ in }) throws(StoreError) {
        self.path = path
        try Self.requireRegularFiles(path)
        let lock = try StoreLock(store: path, wait: wait, waiting: waiting)
        // Beside the file a link leads to, where SQLite keeps them.
        let base = StoreLock.realPath(path) ?? path
        var absent: [String] = []
        for file in [base + "-wal", base + "-shm"] {
            var st = stat()
            if stat(file, &st) != 0 { absent.append(file) }
        }
        // Checked once the lock is held: a file another cachesh is making is not looked at.
        var st = stat()
        let exists = stat(path, &st) == 0
        if exists && st.st_size == 0 {
            throw StoreError("cannot open store \(path): it is an empty file (0 bytes), not a cachesh store; "
                             + "refusing to take it for a new one (remove it to start a new store)")
        }
        // Read-only by its permission bits, not only by what the kernel lets this process do:
        // root may write a file of mode 0444, which is read-only all the same.
        let modeReadOnly = exists && FileKind.permissionBitsForbidWriting(st)
        do {
            var configuration = Configuration()
            configuration.readonly = modeReadOnly
            // An upgrade's transaction stays open from `prepare` to the first `commit` (`upgradeOpen`).
            configuration.allowsUnsafeTransactions = true
            // SQLite's own default, whatever the linked build chose (Debian's zeroes every byte a
            // row leaves, a `memset` in each rewrite of a row: 5% of a `--store` batch's commit
            // instructions). SPEC §5.3 says what a file then keeps.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = OFF") }
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StoreError("cannot open store \(path): \(Self.describe(error))")
        }
        self.lock = lock
        // SQLite opens a file it may not write read-only, without an error: asked here, so that
        // opening writes nothing to it (no journal mode, no upgrade) and a session on it commits nothing.
        isReadOnly = modeReadOnly || queue.inDatabase { db in sqlite3_db_readonly(db.sqliteConnection, "main") == 1 }
        sidecarsMade = isReadOnly ? absent : []
        checkpointer = isReadOnly ? nil : WALCheckpointer(path: path)
        let upgrading = try Self.prepare(queue, name: path, wal: true, readOnly: isReadOnly)
        upgradeOpen.store(upgrading, ordering: .releasing)
        if let checkpointer {
            queue.inDatabase { db in
                guard let connection = db.sqliteConnection else { return }
                let pageSize = (try? Int.fetchOne(db, sql: "PRAGMA page_size")) ?? 4096
                let limit = (try? Int32.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")) ?? 1000
                checkpointer.install(on: connection, pageSize: pageSize, limit: limit)
            }
        }
    }

    /// Refuses a store that is not a regular file (or a link to one), before anything is locked,
    /// created or read: SQLite would open a FIFO, a device or a directory as it does a file and
    /// fail later with a message that does not say why ("disk I/O error"), or write its pages to a
    /// device. Its `-wal` and `-shm` files, when there are some, must be regular files too. A
    /// missing store is fine: it is created.
    /// - Throws: `StoreError`: `cannot open store PATH: is a FIFO, not a regular file`, or
    ///   `... PATH-wal is a FIFO, not a regular file`.
    static func requireRegularFiles(_ path: String) throws(StoreError) {
        var st = stat()
        let exists = stat(path, &st) == 0
        if exists, let problem = StoreLock.notRegular(st) { throw StoreError("cannot open store \(path): \(problem)") }
        // One name per store: each name of a file has its own lock file and SQLite its own
        // `-wal` beside it, so two processes on two hard links would both write the store, and a
        // log left under one name would later be played over what the other wrote.
        if exists && st.st_nlink > 1 {
            throw StoreError("cannot open store \(path): the file has \(st.st_nlink) hard links; a store must have one name "
                             + "(each name would get its own lock and write-ahead log; a symbolic link is fine)")
        }
        // SQLite keeps its files beside the file a link leads to.
        let base = exists ? (StoreLock.realPath(path) ?? path) : path
        for sidecar in [base + "-wal", base + "-shm"] where stat(sidecar, &st) == 0 {
            if let problem = StoreLock.notRegular(st) { throw StoreError("cannot open store \(path): \(sidecar) \(problem)") }
        }
    }

    deinit {
        // The database is closed before the lock goes, so no other process opens it meanwhile.
        if !closed.load(ordering: .acquiring) {
            stopCheckpoints()
            rollBackUpgrade()
            try? queue.close()
            removeSidecarsMade()
        }
        lock?.release()
    }

    /// Ends the background checkpoints (`checkpointer`): the store's connection stops reporting
    /// to it, and its own connection is closed once its last checkpoint ends.
    private func stopCheckpoints() {
        guard let checkpointer else { return }
        queue.inDatabase { db in if let connection = db.sqliteConnection { checkpointer.uninstall(from: connection) } }
        checkpointer.finish()
    }

    /// Waits until the background checkpoints asked for so far have ended, for tests.
    func settleCheckpoints() {
        checkpointer?.settle()
    }

    /// Rolls back an upgrade no commit followed (`upgradeOpen`): the session refused the store.
    private func rollBackUpgrade() {
        guard upgradeOpen.exchange(false, ordering: .acquiringAndReleasing) else { return }
        try? queue.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
    }

    /// Removes the `-wal` and `-shm` files SQLite made for a read-only store (`sidecarsMade`),
    /// once the database is closed and while the lock is still held; a `-wal` holding anything
    /// stays (nothing is written to a read-only store, so it never does).
    private func removeSidecarsMade() {
        for file in sidecarsMade {
            var st = stat()
            guard stat(file, &st) == 0, !file.hasSuffix("-wal") || st.st_size == 0 else { continue }
            unlink(file)
        }
    }

    /// Checkpoints the WAL into the database file (emptying it), closes the database and
    /// releases the lock. Later commits fail; a second close does nothing.
    /// - Throws: `StoreError` when the checkpoint fails; the store is closed all the same, and
    ///   what was committed is in the WAL, where the next open finds it.
    public func close() throws(StoreError) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        defer { lock?.release() }
        stopCheckpoints()
        rollBackUpgrade()
        do {
            if lock != nil && !isReadOnly {
                try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            }
        } catch {
            try? queue.close()
            throw StoreError("cannot close store \(path): \(Self.describe(error))")
        }
        do { try queue.close() } catch {
            throw StoreError("cannot close store \(path): \(Self.describe(error))")
        }
        removeSidecarsMade()
    }

    /// A store in memory, for tests: the same schema, nothing on disk.
    public init() throws(StoreError) {
        path = ":memory:"
        lock = nil
        isReadOnly = false
        sidecarsMade = []
        checkpointer = nil
        do { queue = try DatabaseQueue() } catch { throw StoreError("cannot open an in-memory store: \(Self.describe(error))") }
        try Self.prepare(queue, name: path, wal: false)
    }

    /// The migrator of `migrations`, which tells which ones a store has applied (and which tests
    /// use to make stores of an older schema).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (identifier, body) in migrations { migrator.registerMigration(identifier, migrate: body) }
        return migrator
    }

    /// The migrations, oldest first, by identifier; each ends by recording its schema version in
    /// `meta`. Opening a store runs those it lacks in one transaction of its own (`upgrade`), not
    /// through the migrator, so that the rows are checked before it commits.
    static let migrations: [(String, @Sendable (Database) throws -> Void)] = [
        ("v1", { db in
            try db.execute(sql: """
                CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                INSERT INTO meta (name, value) VALUES ('format', '\(format)'), ('schema', '1');
                CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL);
                CREATE TABLE entries (key TEXT PRIMARY KEY NOT NULL, recency INTEGER NOT NULL, body TEXT NOT NULL);
                CREATE TABLE log (position INTEGER PRIMARY KEY, body TEXT NOT NULL);
                CREATE TABLE server_data (key TEXT PRIMARY KEY NOT NULL, value TEXT, modified_at INTEGER);
                """)
        }),
        ("v2", { db in
            // Loading reads entries in recency order.
            try db.execute(sql: """
                CREATE INDEX entries_by_recency ON entries (recency);
                UPDATE meta SET value = '2' WHERE name = 'schema';
                """)
        }),
        ("v3", { db in
            // Keys as BLOBs: bound as text, a key was cut at its first NUL. (The keys of an older
            // store were written as text and were cut already; they are kept as they are.)
            try db.execute(sql: """
                CREATE TABLE entries_v3 (key BLOB PRIMARY KEY NOT NULL, recency INTEGER NOT NULL, body TEXT NOT NULL);
                INSERT INTO entries_v3 (key, recency, body) SELECT CAST(key AS BLOB), recency, body FROM entries;
                DROP TABLE entries;
                ALTER TABLE entries_v3 RENAME TO entries;
                CREATE INDEX entries_by_recency ON entries (recency);
                CREATE TABLE server_data_v3 (key BLOB PRIMARY KEY NOT NULL, value TEXT, modified_at INTEGER);
                INSERT INTO server_data_v3 (key, value, modified_at) SELECT CAST(key AS BLOB), value, modified_at FROM server_data;
                DROP TABLE server_data;
                ALTER TABLE server_data_v3 RENAME TO server_data;
                UPDATE meta SET value = '3' WHERE name = 'schema';
                """)
        }),
        ("v4", { db in
            // Typed columns: a value is its compact text, times are integers, and a row whose
            // entry only moved in the recency order rewrites just its stamp. Each schema-3 row's
            // snapshot JSON is converted in place (a damaged one fails the upgrade, which then
            // changes nothing).
            try db.execute(sql: """
                CREATE TABLE entries_v4 (key BLOB PRIMARY KEY NOT NULL, recency INTEGER NOT NULL, value TEXT NOT NULL,
                    stored_at INTEGER NOT NULL, stale_at INTEGER, expires_at INTEGER, seq INTEGER NOT NULL,
                    stored_request INTEGER NOT NULL, last_write INTEGER NOT NULL, last_put INTEGER NOT NULL,
                    tags TEXT, extra TEXT);
                """)
            let insert = try db.makeStatement(sql: insertEntrySQL(table: "entries_v4"))
            let rows = try Row.fetchCursor(db, sql: "SELECT key, recency, body FROM entries")
            while let row = try rows.next() {
                let key = SQLiteStore.key(try row.decode(atIndex: 0))
                let entry: StoredEntry
                do {
                    entry = try StoredEntry(key: key, recency: try row.decode(atIndex: 1), snapshotJSON: try row.decode(atIndex: 2))
                } catch {
                    throw DamagedRow(why: error)
                }
                try insert.execute(arguments: entryArguments(entry))
            }
            try db.execute(sql: """
                DROP TABLE entries;
                ALTER TABLE entries_v4 RENAME TO entries;
                CREATE INDEX entries_by_recency ON entries (recency);
                UPDATE meta SET value = '4' WHERE name = 'schema';
                """)
        }),
        ("v5", { db in
            // One B-tree per row written: the entries keyed by their key (`WITHOUT ROWID`: no
            // rowid table beside the key's index) and no index on the recency, which a put had
            // to update too; loading sorts the rows by recency instead. The rows are copied as
            // they are, in key order.
            try db.execute(sql: """
                CREATE TABLE entries_v5 (\(entryColumnsSQL)) WITHOUT ROWID;
                INSERT INTO entries_v5 (\(entryColumns)) SELECT \(entryColumns) FROM entries ORDER BY key;
                DROP TABLE entries;
                ALTER TABLE entries_v5 RENAME TO entries;
                UPDATE meta SET value = '5' WHERE name = 'schema';
                """)
        }),
        ("v6", { db in
            // The entries keyed by a row id the store gives in increasing order, with no index on
            // the key (keys are unique by the engine, and the store finds a key's row through
            // its map of ids): a new row goes at the right edge of the one B-tree, so a commit of
            // new keys changes a few neighbouring pages, not pages all over the table. The rows
            // are copied as they are, in key order (ids 1, 2, ...).
            try db.execute(sql: """
                CREATE TABLE entries_v6 (\(entryColumnsSQL6));
                INSERT INTO entries_v6 (\(entryColumns)) SELECT \(entryColumns) FROM entries ORDER BY key;
                DROP TABLE entries;
                ALTER TABLE entries_v6 RENAME TO entries;
                UPDATE meta SET value = '6' WHERE name = 'schema';
                """)
        }),
        ("v7", { db in
            // The header fields the simulated server serves a key of an HTTP namespace with, in
            // the key's row (NULL for none, as every row an older store holds: adding the column
            // rewrites no row). An older cachesh refuses a store that may hold HTTP namespaces
            // as written by a newer one, not as damaged.
            try db.execute(sql: """
                ALTER TABLE server_data ADD COLUMN headers TEXT;
                UPDATE meta SET value = '7' WHERE name = 'schema';
                """)
        }),
        ("v8", { db in
            // An entry's times, sequence numbers, tags and extra in one BLOB (`EntryRowFields`):
            // a row of five columns, not thirteen, so SQLite's per-column work on every row
            // written and read shrinks with it. Each row is copied under its id, each integer as
            // it reads (a NULL where schema 7 says NOT NULL, in a damaged file, is kept absent:
            // opening then names it as before), tags and extra as their text read (up to a NUL,
            // as opening read them; NULL absent).
            try db.execute(sql: "CREATE TABLE entries_v8 (\(entryColumnsSQL8))")
            let insert = try RowWriter(db, "INSERT INTO entries_v8 (id, \(entryColumns8)) VALUES (?, ?, ?, ?, ?)")
            let integers = EntryRowFields.names.prefix(7).joined(separator: ", ")
            let rows = try db.makeStatement(sql: "SELECT id, key, recency, value, tags, extra, \(integers) FROM entries ORDER BY id")
            let s = rows.sqliteStatement
            defer { sqlite3_reset(s) }
            var fields: [UInt8] = []
            while true {
                let code = sqlite3_step(s)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                // id, key, recency and value as they are (their types too).
                for c in Int32(0)..<4 { _ = sqlite3_bind_value(insert.statement, c + 1, sqlite3_column_value(s, c)) }
                fields.removeAll(keepingCapacity: true)
                var values = [Int64?](repeating: nil, count: 7)
                for i in values.indices {
                    let type = sqlite3_column_type(s, Int32(6 + i))
                    if type == SQLITE_NULL { continue }
                    // A text or a real there is damage, not the number SQLite would read it as.
                    guard type == SQLITE_INTEGER else {
                        throw DamagedRow(why: StoreError("the entry row of id \(sqlite3_column_int64(s, 0)) "
                                                         + notAnInteger(EntryRowFields.names[i], type: type)))
                    }
                    values[i] = sqlite3_column_int64(s, Int32(6 + i))
                }
                func text(_ column: Int32) -> String? {
                    guard sqlite3_column_type(s, column) != SQLITE_NULL, let t = sqlite3_column_text(s, column) else { return nil }
                    return String(cString: t)
                }
                EntryRowFields.append(values, tags: text(4), extra: text(5), to: &fields)
                fields.withUnsafeBufferPointer { b in _ = sqlite3_bind_blob(insert.statement, 5, b.baseAddress, Int32(b.count), sqliteTransient) }
                try insert.run()
            }
            try db.execute(sql: """
                DROP TABLE entries;
                ALTER TABLE entries_v8 RENAME TO entries;
                UPDATE meta SET value = '8' WHERE name = 'schema';
                """)
        }),
        ("v9", { db in
            try dropEntryConstraints(db)
            try db.execute(sql: "UPDATE meta SET value = '9' WHERE name = 'schema'")
        }),
    ]

    /// v9: the entry table's columns without NOT NULL (`entryColumnsSQL9`): a step that replaces
    /// many rows may then never stop half-way on a constraint, so SQLite keeps no statement
    /// journal for it (a copy of every page the step changes, spilled to a temporary file). The
    /// rows are read as before, a NULL in any column refused (schema 8's constraints are the
    /// reader's checks now).
    ///
    /// Only a table declared as schema 8 declares it (`entryColumnsSQL8`, as a new store or v8's
    /// renamed table has it) with no index or trigger is changed; any other is refused as damage.
    /// Its declaration is replaced (`editEntryDeclaration`), no row rewritten; where SQLite
    /// refuses that edit (`SQLITE_ERROR` with the transaction still open: a build whose
    /// connections are `SQLITE_DBCONFIG_DEFENSIVE`), the rows are copied into a new table instead
    /// (`copyEntriesToSchema9`). Any other error fails the upgrade.
    /// - Parameter edit: the in-place edit (for tests: one that SQLite refuses).
    static func dropEntryConstraints(_ db: Database, edit: (Database) throws -> Void = editEntryDeclaration) throws {
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(entries)").map { row -> String in
            let name: String = row["name"], type: String = row["type"]
            let notNull: Int = row["notnull"], key: Int = row["pk"]
            return "\(name) \(type)\(key == 1 ? " PRIMARY KEY" : "")\(notNull == 1 ? " NOT NULL" : "")"
        }
        guard columns == ["id INTEGER PRIMARY KEY", "key BLOB NOT NULL", "recency INTEGER NOT NULL", "value TEXT NOT NULL",
                          "fields BLOB NOT NULL"] else {
            throw DamagedRow(why: StoreError("its entries table is not schema 8's (columns: \(columns.joined(separator: ", ")))"))
        }
        let declared = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'entries'")
        let others = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'entries' AND type != 'table'") ?? 0
        let schema8 = ["CREATE TABLE entries (\(entryColumnsSQL8))", "CREATE TABLE \"entries\" (\(entryColumnsSQL8))"]
        guard let declared, schema8.contains(declared), others == 0 else {
            throw DamagedRow(why: StoreError("its entries table is not schema 8's (declared with other constraints, or with an index or trigger)"))
        }
        do {
            try edit(db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR && db.isInsideTransaction {
            try copyEntriesToSchema9(db)
        }
    }

    /// Replaces the entry table's declaration by schema 9's and moves the schema cookie on, as
    /// SQLite documents for removing NOT NULL constraints (ALTER TABLE, "making other kinds of
    /// table schema changes"): the layout of the rows does not change. Throws `SQLITE_ERROR`,
    /// the declaration as it was, where SQLite refuses to change `sqlite_master`.
    static func editEntryDeclaration(_ db: Database) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        try db.execute(sql: "PRAGMA writable_schema = ON")
        do {
            try db.execute(sql: "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'entries'",
                           arguments: ["CREATE TABLE entries (\(entryColumnsSQL9))"])
            try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
        } catch {
            try? db.execute(sql: "PRAGMA writable_schema = OFF")
            throw error
        }
        try db.execute(sql: "PRAGMA writable_schema = OFF")
        db.clearSchemaCache()
    }

    /// v9's upgrade where the table's declaration cannot be edited in place: every entry row
    /// copied, under its id and byte for byte, into a table of schema 9's columns that takes the
    /// place of the old one.
    static func copyEntriesToSchema9(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE entries_v9 (\(entryColumnsSQL9));
            INSERT INTO entries_v9 (id, \(entryColumns8)) SELECT id, \(entryColumns8) FROM entries ORDER BY id;
            DROP TABLE entries;
            ALTER TABLE entries_v9 RENAME TO entries;
            """)
    }

    /// A new store's tables as the migrations up to v9 leave them, the migrations recorded as
    /// applied (as GRDB's migrator records them): a new file is written once, not through nine
    /// upgrades of tables that hold nothing (a sixteenth of the log a new store wrote before).
    static func createSchema(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
            INSERT INTO meta (name, value) VALUES ('format', '\(format)'), ('schema', '\(schemaVersion)');
            CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL);
            CREATE TABLE entries (\(entryColumnsSQL9));
            CREATE TABLE log (position INTEGER PRIMARY KEY, body TEXT NOT NULL);
            CREATE TABLE server_data (key BLOB PRIMARY KEY NOT NULL, value TEXT, modified_at INTEGER, headers TEXT);
            CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations (identifier) VALUES ('v1'), ('v2'), ('v3'), ('v4'), ('v5'), ('v6'), ('v7'), ('v8'), ('v9');
            """)
    }

    /// The entry columns, in the order every statement here names them.
    static let entryColumns = "key, recency, value, stored_at, stale_at, expires_at, seq, stored_request, last_write, last_put, tags, extra"

    /// The entry table's columns and key, as schema 5 declares them.
    static let entryColumnsSQL = """
        key BLOB PRIMARY KEY NOT NULL, recency INTEGER NOT NULL, value TEXT NOT NULL,
        stored_at INTEGER NOT NULL, stale_at INTEGER, expires_at INTEGER, seq INTEGER NOT NULL,
        stored_request INTEGER NOT NULL, last_write INTEGER NOT NULL, last_put INTEGER NOT NULL,
        tags TEXT, extra TEXT
        """

    /// The entry table's columns as schema 6 declares them: the row id, then schema 5's columns
    /// with no key constraint but NOT NULL.
    static let entryColumnsSQL6 = """
        id INTEGER PRIMARY KEY, key BLOB NOT NULL, recency INTEGER NOT NULL, value TEXT NOT NULL,
        stored_at INTEGER NOT NULL, stale_at INTEGER, expires_at INTEGER, seq INTEGER NOT NULL,
        stored_request INTEGER NOT NULL, last_write INTEGER NOT NULL, last_put INTEGER NOT NULL,
        tags TEXT, extra TEXT
        """

    /// The entry columns of schema 8 (after the row id), in the order every statement that writes
    /// or reads them names them.
    static let entryColumns8 = "key, recency, value, fields"

    /// The entry table's columns as schema 8 declares them: schema 6's, with the times, sequence
    /// numbers, tags and extra in one BLOB (`EntryRowFields`).
    static let entryColumnsSQL8 = """
        id INTEGER PRIMARY KEY, key BLOB NOT NULL, recency INTEGER NOT NULL, value TEXT NOT NULL,
        fields BLOB NOT NULL
        """

    /// The entry table's columns as schema 9 declares them: schema 8's without NOT NULL (v9 says
    /// why). A row with a NULL in any of them is refused when read, as schema 8's constraints
    /// refused it when written.
    static let entryColumnsSQL9 = "id INTEGER PRIMARY KEY, key BLOB, recency INTEGER, value TEXT, fields BLOB"

    /// An upsert's update of a row that is there: every column of `entryColumns` but the key takes
    /// the new row's value.
    static let updateEveryColumnButTheKey = "recency = excluded.recency, value = excluded.value, "
        + "stored_at = excluded.stored_at, stale_at = excluded.stale_at, expires_at = excluded.expires_at, "
        + "seq = excluded.seq, stored_request = excluded.stored_request, last_write = excluded.last_write, "
        + "last_put = excluded.last_put, tags = excluded.tags, extra = excluded.extra"

    /// Writes `rows` entry rows of schema 8 (5 arguments each: the row id, then the columns in
    /// `entryColumns8`' order); a row of the same id is written over in place. `OR REPLACE`,
    /// not an upsert (`ON CONFLICT (id) DO UPDATE`): the table has no index but its ids and no
    /// trigger, so SQLite writes the new row where the old one is, with no delete, and skips the
    /// upsert's second path (the old row read again, then updated): 8% fewer instructions for
    /// the commit of 300,000 puts of 150,000 keys (Benchmarks/README.md). Every column is
    /// given, so the row holds the same as the upsert left (the key of an id never changes).
    static func writeEntrySQL(rows: Int) -> String {
        let row = "(?, ?, ?, ?, ?)"
        return "INSERT OR REPLACE INTO entries (id, \(entryColumns8)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Inserts `rows` new entry rows of schema 8 (5 arguments each, as `writeEntrySQL`'s). `OR
    /// FAIL`: a statement that fails keeps what it wrote before, so SQLite keeps no statement
    /// journal for it (a copy of every page a step changes, to undo the step alone), which
    /// `commit` does not need: a failed step fails the whole transaction, which is rolled back.
    /// A row whose id is taken fails the statement (the engine gives each new row an id of its
    /// own).
    static func insertNewEntrySQL(rows: Int) -> String {
        let row = "(?, ?, ?, ?, ?)"
        return "INSERT OR FAIL INTO entries (id, \(entryColumns8)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// `insertNewEntrySQL` without the id (4 arguments a row): SQLite gives each row one more
    /// than the largest id in the table, which `writeEntries` uses when that is the row's id.
    /// SQLite then finds the place of each row at the table's right edge at once, where an id
    /// given is looked up from the root.
    static func appendEntrySQL(rows: Int) -> String {
        let row = "(?, ?, ?, ?)"
        return "INSERT OR FAIL INTO entries (\(entryColumns8)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Entry rows written by one step of `commit`'s batched statements: rows that may be in the
    /// table already (a replace) and new rows (at the right edge of the table). 128 replaced
    /// rows, not 32: with schema 8's NOT NULL columns a replace kept a statement journal, which
    /// spilled to a file past four pages of 16 KiB either way, and a larger step journaled each
    /// page it changed once for more rows (3.7% fewer commit instructions for rows rewritten in
    /// id order, Benchmarks/README.md). Schema 9's columns have no constraint a step could fail
    /// half-way on, so neither kind of step keeps a journal; 128 is still the best of 32, 128
    /// and 512 (823 M writer instructions for 300,000 puts of 150,000 keys, against 841 M and
    /// 831 M). New rows go 128 to a step too.
    static let rowsPerStatement = 128

    /// The three ways `writeEntries` writes entry rows.
    enum EntryWrite: Int, CaseIterable {
        /// Rows that may be in the table already (`writeEntrySQL`).
        case replace
        /// New rows with the ids given them (`insertNewEntrySQL`).
        case insert
        /// New rows numbered by SQLite (`appendEntrySQL`): no id argument.
        case append

        /// The rows of a step of each of its statements, largest first: the rows left are
        /// written by the largest that they fill, so at most `fewRows - 1` go one to a step.
        static let stepSizes = [rowsPerStatement, fewRows, 1]

        /// Its statement for `rows` rows.
        func sql(rows: Int) -> String {
            switch self {
            case .replace: writeEntrySQL(rows: rows)
            case .insert: insertNewEntrySQL(rows: rows)
            case .append: appendEntrySQL(rows: rows)
            }
        }

        /// The index in `entrySQL` of its statement of `stepSizes[size]` rows.
        func index(size: Int) -> Int { rawValue * Self.stepSizes.count + size }
    }

    /// The rows of a step of the middle statement of each `EntryWrite`, for the rows a step of
    /// many leaves (a commit of 100 rewritten rows is six steps, not 100).
    static let fewRows = 16

    /// The statements `writeEntries` steps, built once: for each `EntryWrite`, its statement for
    /// each of its `stepSizes`.
    static let entrySQL = EntryWrite.allCases.flatMap { kind in EntryWrite.stepSizes.map { kind.sql(rows: $0) } }

    /// Writes `rows` entry rows (12 arguments each, the columns in `entryColumns`' order); a row of
    /// the same key is updated in place (its key stays as it is), not deleted and inserted again.
    /// - Parameter key: the SQL of the key argument (`keyParameter` for arguments bound by GRDB).
    static func insertEntrySQL(table: String, key: String = keyParameter, rows: Int = 1) -> String {
        let row = "(\(key), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        return "INSERT INTO \(table) (\(entryColumns)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ") + " "
            + "ON CONFLICT (key) DO UPDATE SET \(updateEveryColumnButTheKey)"
    }

    static func entryArguments(_ e: StoredEntry) -> StatementArguments {
        [blob(e.key), e.recency, e.value, e.storedAt, e.staleAt, e.expiresAt, e.seq, e.storedRequest, e.lastWrite, e.lastPut,
         e.tags, e.extra]
    }

    /// The page size of a new store's file (an existing file keeps its own).
    static let pageSize = 16384

    /// Checks that the database is new or a cachesh store this build reads, turns on the WAL
    /// journal, and makes a new store's tables or upgrades an older one. Nothing is written
    /// before the checks pass.
    /// - Parameter migration: for tests: migrate a new database up to this one, committed.
    /// - Returns: whether an upgrade ran in a transaction left open (`upgrade`), which the
    ///   caller commits once the rows are checked, or rolls back.
    @discardableResult
    static func prepare(_ queue: DatabaseQueue, name: String, wal: Bool, upTo migration: String? = nil,
                        readOnly: Bool = false) throws(StoreError) -> Bool {
        do {
            // A new file is made whole before the session's first commit, with no sync of its own
            // (a killed process leaves it empty or whole; it holds nothing yet), in one
            // transaction of the current schema (`createSchema`) rather than the nine upgrades.
            let isNew = try queue.read { db in try check(db, name: name) } && migration == nil
            if readOnly {
                // Read as it is: nothing to make, nothing to upgrade.
                if isNew { throw StoreError("cannot open store \(name): it is read-only and holds no store yet") }
                let current = try queue.read { db in try migrator.hasCompletedMigrations(db) }
                if !current {
                    let schema = try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'schema'") } ?? "?"
                    throw StoreError("cannot open store \(name): it is read-only, and its schema \(schema) needs an upgrade "
                                     + "to schema \(schemaVersion), which would write it")
                }
                return false
            }
            if wal {
                try queue.writeWithoutTransaction { db in
                    // The sync level first: turning a new, empty file into a WAL database is a
                    // rollback-journal transaction (it writes the first page), and its tables are
                    // one more; neither is synced (OFF until they are made, NORMAL after): the
                    // file holds nothing yet, and a killed process leaves it empty or whole.
                    try db.execute(sql: isNew ? "PRAGMA synchronous = OFF" : "PRAGMA synchronous = NORMAL")
                    try db.execute(sql: "PRAGMA page_size = \(pageSize)")
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                    // A checkpoint on the committing thread at 64 MiB of log (4096 pages of 16
                    // KiB) rather than SQLite's 1000 pages, kept by the WAL hook of a writable
                    // store (`WALCheckpointer`), whose background checkpoints copy the log a MiB
                    // at a time before then. The log on disk stays near that (its index in memory,
                    // 8 bytes a page: 128 KiB), a commit over it while a background checkpoint
                    // holds the checkpoint lock trying again; `close` empties it. (What a commit
                    // makes durable does not depend on checkpoints.)
                    let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                    try db.execute(sql: "PRAGMA wal_autocheckpoint = \(64 << 20 / max(size, 512))")
                }
            }
            if isNew { try queue.write { db in try createSchema(db) } }
            if let migration { try migrator.migrate(queue, upTo: migration) }
            if wal && isNew { try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") } }
            return isNew || migration != nil ? false : try upgrade(queue)
        } catch let error as StoreError {
            throw error
        } catch let error as DamagedRow {
            throw .damagedStore(name, error.why)
        } catch {
            throw StoreError("cannot open store \(name): \(describe(error))")
        }
    }

    /// A row an upgrade cannot read (`why`), thrown where the file's name is not known;
    /// `prepare` names the file (`damaged store: FILE: WHY`).
    struct DamagedRow: Error {
        let why: any Error
    }

    /// Runs the migrations a store lacks, in order, in one transaction that it leaves open: the
    /// session reads and checks the rows inside it, then `commit` commits it, or `close` rolls it
    /// back. A store refused as damaged (by a migration or by those checks) is so left as the
    /// older cachesh that wrote it can still open it.
    /// - Returns: whether it began a transaction (some migration ran).
    private static func upgrade(_ queue: DatabaseQueue) throws -> Bool {
        let applied = try queue.read { db in try migrator.appliedIdentifiers(db) }
        let missing = migrations.filter { !applied.contains($0.0) }
        if missing.isEmpty { return false }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            do {
                for (identifier, body) in missing {
                    try body(db)
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
                }
            } catch {
                try? db.execute(sql: "ROLLBACK")
                throw error
            }
        }
        return true
    }

    /// Checks `meta`: the format, then a schema version this build reads, which the migrations
    /// table agrees with (it lists v1 to that version, nothing else).
    /// - Returns: whether the database is new (holds no table).
    @discardableResult
    private static func check(_ db: Database, name: String) throws(StoreError) -> Bool {
        do {
            let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
            if tables == 0 { return true }
            guard try db.tableExists("meta"),
                  try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'format'") == format else {
                throw StoreError("\(name) is not a cachesh store (an SQLite database without cachesh's tables); refusing to change it")
            }
            guard let text = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'schema'") else {
                throw StoreError("\(name): damaged cachesh store (no schema version); refusing to change it")
            }
            guard let schema = Int(text), schema >= 1 else {
                throw StoreError("\(name): damaged cachesh store (its schema version is \"\(text)\", not a whole number from 1); refusing to change it")
            }
            if schema > schemaVersion {
                throw StoreError("\(name) was written by a newer cachesh (store schema \(schema); this one reads up to \(schemaVersion)); refusing to change it")
            }
            let applied = try migrator.appliedIdentifiers(db)
            let expected = Set(migrations.prefix(schema).map(\.0))
            if applied != expected {
                let extra = applied.subtracting(expected).sorted(), lacking = expected.subtracting(applied).sorted()
                let problem = extra.isEmpty ? "lacks \(lacking.joined(separator: ", "))" : "also lists \(extra.joined(separator: ", "))"
                throw StoreError("\(name): damaged cachesh store (its schema version is \(schema), but its migrations table \(problem)); refusing to change it")
            }
            return false
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot read store \(name): \(describe(error))")
        }
    }

    /// The schema version recorded in the store.
    public func schema() throws(StoreError) -> Int {
        do {
            return try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'schema'").flatMap { Int($0) } ?? 0 }
        } catch {
            throw StoreError("cannot read store \(path): \(Self.describe(error))")
        }
    }

    public func load() throws(StoreError) -> StoredState? {
        do {
            return try queue.read { db -> StoredState? in
                guard let state = try String.fetchOne(db, sql: "SELECT body FROM state WHERE id = 1") else {
                    // No session yet (a store made, then its process killed before the first
                    // commit) holds no rows either: rows without the state are a damaged store,
                    // not a new one to write over.
                    let rows = try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM entries) + (SELECT count(*) FROM log) + (SELECT count(*) FROM server_data)") ?? 0
                    if rows > 0 { throw StoreError("damaged store: \(path) holds \(rows) rows but no state row (the session they belong to)") }
                    return nil
                }
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM entries") ?? 0
                var log: [StoredLogLine] = []
                let lines = try Row.fetchCursor(db, sql: "SELECT position, body FROM log ORDER BY position")
                // `decode` throws on a NULL or a wrong type (a damaged file): one clear error, not a crash.
                while let row = try lines.next() {
                    log.append(StoredLogLine(position: try row.decode(atIndex: 0), body: try row.decode(atIndex: 1)))
                }
                var server: [StoredServerKey] = []
                let keys = try Row.fetchCursor(db, sql: "SELECT key, value, modified_at, headers FROM server_data")
                while let row = try keys.next() {
                    server.append(StoredServerKey(key: Self.key(try row.decode(atIndex: 0)), value: try row.decode(atIndex: 1),
                                                  modifiedAt: try row.decode(atIndex: 2), headers: try row.decode(atIndex: 3)))
                }
                return StoredState(state: state, log: log, server: server, entryCount: count)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot read store \(path): \(Self.describe(error))")
        }
    }

    /// Streams the entry rows, least recent first, one at a time, each with its row id; none is
    /// kept here.
    ///
    /// The statement is stepped and its columns read through SQLite's C interface, where SQLite
    /// keeps them (no row, argument or `DatabaseValue` is built per row): the key is made from
    /// the column's bytes, the value parsed from them (`StoredEntry(valueUTF8:)`). Each column
    /// reads as GRDB decoded it before: a key that is neither a BLOB nor text is the empty key;
    /// a text column ends at its first NUL (as a C string); a NULL in any column (which schema 9
    /// declares without NOT NULL; schema 8 could hold one only in a damaged file), a field absent from `fields` that every entry has, or `fields` that are
    /// not `EntryRowFields`' bytes, is one error naming the row and column, never a crash. Tags
    /// and extra read from `fields` as their bytes (no longer cut at a NUL, which cachesh never
    /// writes there).
    public func loadEntries(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
        // No index orders the rows by recency: SQLite sorts them, in bounded memory (spilling
        // to temporary files), and hands them on one at a time.
        try loadEntries(sql: "SELECT key, recency, value, fields, id FROM entries ORDER BY recency", each)
    }

    /// The entry rows in the table's own order, by row id, with no sort: new rows get the next
    /// ids (`StoreChanges.firstNewRowID`), so rows written and not read since come in recency
    /// order, and a reader that orders rows itself (`Snapshot.takeRowsInAnyOrder`) spares
    /// SQLite's sort of whole rows (more than a third of `sqlite3`'s own time reading them in
    /// order, its sorter writing runs to temporary files past a few MB).
    public func loadEntriesInStoredOrder(_ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
        try loadEntries(sql: "SELECT key, recency, value, fields, id FROM entries", smallPageCache: true, each)
    }

    /// `loadEntries` of the rows `sql` selects (key, recency, value, fields, id, in this order),
    /// read on a second thread while the caller takes them: SQLite's steps and each row's
    /// decoding (its key, fields and value parsed, `StoredEntry(valueUTF8:)`) overlap the
    /// caller's work on the rows before (an open checks each row and files it in the cache's
    /// tables). The rows reach `each` on the caller's thread, in the order read, in batches of
    /// `RowHandOver.batchSize` handed over whole, at most `RowHandOver.depth` waiting (bounded
    /// memory); what `each` is given and what is thrown are as when one thread reads and takes
    /// them: the rows before a damaged one, then its error. When `each` throws, the reader stops
    /// at its next batch, and this returns only once it has stopped, so the database is idle
    /// again for what follows (a second reading, a commit). `each` must not use this store: the
    /// reader holds its connection until the last row is read.
    private func loadEntries(sql: String, smallPageCache: Bool = false, _ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
        let handOver = RowHandOver()
        let stopped = DispatchSemaphore(value: 0)
        // The reader holds the store only until its last batch is handed over, never after
        // `stopped`: the caller's references are then the only ones, so the store is freed (an
        // open upgrade rolled back, `deinit`) on the caller's thread when it lets go, not on this
        // one while a process that was refused the store exits.
        DispatchQueue.global(qos: .userInitiated).async { [weak self] in
            var batch: [StoredEntry] = []
            batch.reserveCapacity(RowHandOver.batchSize)
            do throws(StoreError) {
                guard let store = self else { throw RowHandOver.cancelled }
                try store.scanEntries(sql: sql, smallPageCache: smallPageCache) { entry throws(StoreError) in
                    batch.append(entry)
                    guard batch.count == RowHandOver.batchSize else { return }
                    guard handOver.put(batch) else { throw RowHandOver.cancelled }
                    batch = []
                    batch.reserveCapacity(RowHandOver.batchSize)
                }
                if !batch.isEmpty { _ = handOver.put(batch) }
                handOver.finish(nil)
            } catch {
                handOver.finish(error)
            }
            stopped.signal()
        }
        defer { stopped.wait() }
        do throws(StoreError) {
            while let batch = try handOver.take() {
                for entry in batch { try each(entry) }
            }
        } catch {
            handOver.cancel()
            throw error
        }
    }

    /// Reads the rows `sql` selects on the calling thread, giving each to `each` (see `loadEntries`).
    /// - Parameter smallPageCache: the scan reads each page once, so SQLite's page cache (2 MB by
    ///   default, full while the cache's tables grow beside it) is kept to 256 KiB for it.
    private func scanEntries(sql: String, smallPageCache: Bool, _ each: (StoredEntry) throws(StoreError) -> Void) throws(StoreError) {
        var failure: StoreError?
        do {
            try queue.read { db in
                var pageCache: Int?
                if smallPageCache {
                    pageCache = try Int.fetchOne(db, sql: "PRAGMA cache_size")
                    try db.execute(sql: "PRAGMA cache_size = -256")
                }
                defer { if let pageCache { try? db.execute(sql: "PRAGMA cache_size = \(pageCache)") } }
                let statement = try db.makeStatement(sql: sql)
                let s = statement.sqliteStatement
                defer { sqlite3_reset(s) }
                var row = 0
                // An integer column holds an integer: SQLite would read a text as the number it
                // starts with (`'12abc'` as 12, `'abc'` as 0) and a real cut to a whole number.
                func integer(_ column: Int32, _ name: String) throws -> Int64 {
                    let type = sqlite3_column_type(s, column)
                    guard type == SQLITE_INTEGER else {
                        throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "entry row \(row + 1) "
                                            + Self.notAnInteger(name, type: type))
                    }
                    return sqlite3_column_int64(s, column)
                }
                /// A text column's bytes up to its first NUL (nil for NULL), lent for the call.
                func text<R>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>?) throws -> R) rethrows -> R {
                    guard sqlite3_column_type(s, column) != SQLITE_NULL, let start = sqlite3_column_text(s, column) else {
                        return try body(nil)
                    }
                    let count = Int(sqlite3_column_bytes(s, column))
                    let end = memchr(start, 0, count).map { UnsafeRawPointer($0) - UnsafeRawPointer(start) } ?? count
                    return try body(UnsafeBufferPointer(start: start, count: end))
                }
                func optionalText(_ column: Int32) -> String? {
                    text(column) { $0.map { String(decoding: $0, as: UTF8.self) } }
                }
                while true {
                    let code = sqlite3_step(s)
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else {
                        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                    // The key: a BLOB of its UTF-8 bytes (a text key, from an older store, read as its bytes).
                    var key = ""
                    switch sqlite3_column_type(s, 0) {
                    case SQLITE_BLOB:
                        if let bytes = sqlite3_column_blob(s, 0) {
                            key = String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(s, 0))), as: UTF8.self)
                        }
                    case SQLITE_TEXT: key = optionalText(0) ?? ""
                    case SQLITE_NULL:
                        throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "entry row \(row + 1) has no key (NULL)")
                    default: break
                    }
                    let recency = try integer(1, "recency")
                    // The times, sequence numbers, tags and extra (`EntryRowFields`): a BLOB (text,
                    // from a file edited by hand, is read as its bytes too).
                    guard sqlite3_column_type(s, 3) != SQLITE_NULL else {
                        throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "entry row \(row + 1) has no fields (NULL)")
                    }
                    let fieldBytes = UnsafeRawBufferPointer(start: sqlite3_column_blob(s, 3), count: Int(sqlite3_column_bytes(s, 3)))
                    var f = EntryRowFields.Decoded()
                    guard EntryRowFields.decode(fieldBytes, into: &f) else {
                        throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "entry row \(row + 1) has damaged fields "
                                            + "(not the times, sequence numbers, tags and extra of an entry as cachesh writes them)")
                    }
                    func required(_ n: Int64?, _ name: String) throws -> Int64 {
                        guard let n else {
                            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "entry row \(row + 1) has no \(name) (NULL)")
                        }
                        return n
                    }
                    // The value's bytes up to a NUL (as a C string), where SQLite keeps them.
                    guard sqlite3_column_type(s, 2) != SQLITE_NULL, let valueStart = sqlite3_column_text(s, 2) else {
                        throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "entry row \(row + 1) has no value (NULL)")
                    }
                    let valueBytes = Int(sqlite3_column_bytes(s, 2))
                    let valueCount = memchr(valueStart, 0, valueBytes).map { UnsafeRawPointer($0) - UnsafeRawPointer(valueStart) } ?? valueBytes
                    let entry = StoredEntry(key: key, recency: recency, valueUTF8: UnsafeBufferPointer(start: valueStart, count: valueCount),
                                            storedAt: try required(f.storedAt, "stored_at"),
                                            staleAt: f.staleAt, expiresAt: f.expiresAt, seq: try required(f.seq, "seq"),
                                            storedRequest: try required(f.storedRequest, "stored_request"),
                                            lastWrite: try required(f.lastWrite, "last_write"),
                                            lastPut: try required(f.lastPut, "last_put"), tags: f.tags, extra: f.extra,
                                            rowID: try integer(4, "id"))
                    row += 1
                    do { try each(entry) } catch {
                        failure = error as? StoreError ?? StoreError("\(error)")
                        return
                    }
                }
            }
        } catch {
            throw StoreError("cannot read store \(path): \(Self.describe(error))")
        }
        if let failure { throw failure }
    }

    /// Writes the changes in one transaction. The rows are bound straight through SQLite's C
    /// interface on statements prepared once per store (GRDB's statement cache), entry rows many
    /// to a step of one statement (`writeEntries`): a commit of a group of puts spends its time in
    /// SQLite, not in building argument lists. Entry rows are written, moved and deleted by the
    /// row ids the engine gives them (`StoredEntry.rowID`): no key is looked up. The store keeps
    /// nothing of a commit in memory, so a failed one (rolled back) leaves nothing to undo.
    /// - Throws: `StoreError` when the transaction fails, or an entry row has no id (0 or less).
    public func commit(_ changes: StoreChanges) throws(StoreError) {
        if isReadOnly { throw StoreError("cannot write store \(path): it is read-only") }
        if let bad = changes.rows.rowIDs.firstIndex(where: { $0 <= 0 }) {
            throw StoreError("cannot write store \(path): the entry row of \(changes.rows.key(bad)) has no row id")
        }
        do {
            if upgradeOpen.exchange(false, ordering: .acquiringAndReleasing) {
                try queue.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
            }
            try queue.write { db in
                if changes.replacesAll {
                    try db.execute(sql: "DELETE FROM entries; DELETE FROM log; DELETE FROM server_data")
                } else if changes.logCleared {
                    try db.execute(sql: "DELETE FROM log")
                }
                if !changes.replacesAll && changes.removedRowIDs.contains(where: { $0 > 0 }) {
                    let delete = try RowWriter(db, "DELETE FROM entries WHERE id = ?")
                    for id in changes.removedRowIDs where id > 0 {
                        delete.bind(1, id)
                        try delete.run()
                    }
                }
                if !changes.rows.isEmpty { try Self.writeEntries(changes.rows, firstNew: changes.firstNewRowID, db) }
                if !changes.recencies.isEmpty && !changes.replacesAll {
                    let update = try RowWriter(db, "UPDATE entries SET recency = ? WHERE id = ?")
                    for r in changes.recencies where r.rowID > 0 {
                        update.bind(1, r.recency)
                        update.bind(2, r.rowID)
                        try update.run()
                    }
                }
                if !changes.log.isEmpty {
                    let upsert = try RowWriter(db, "INSERT OR REPLACE INTO log (position, body) VALUES (?, ?)")
                    for line in changes.log {
                        upsert.bind(1, line.position)
                        upsert.bind(2, line.body)
                        try upsert.run()
                    }
                }
                if !changes.server.isEmpty {
                    let upsert = try RowWriter(db, "INSERT OR REPLACE INTO server_data (key, value, modified_at, headers) VALUES (?, ?, ?, ?)")
                    let delete = try RowWriter(db, "DELETE FROM server_data WHERE key = ?")
                    for row in changes.server {
                        if row.value == nil && row.modifiedAt == nil {
                            delete.bind(1, blob: row.key)
                            try delete.run()
                        } else {
                            upsert.bind(1, blob: row.key)
                            upsert.bind(2, row.value)
                            upsert.bind(3, row.modifiedAt)
                            upsert.bind(4, row.headers)
                            try upsert.run()
                        }
                    }
                }
                let state = try RowWriter(db, "INSERT OR REPLACE INTO state (id, body) VALUES (1, ?)")
                state.bind(1, changes.state)
                try state.run()
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot write store \(path): \(Self.describe(error))")
        }
    }

    /// Writes entry rows many to a step of one statement (the rest 16 or one to a step, `stepSizes`), in the order
    /// of their row ids: the rows of ids below `firstNew`, which may be in the table, by an
    /// `INSERT OR REPLACE` `rowsPerStatement` to a step; the new rows, whose ids are the largest, by a plain
    /// insert `rowsPerStatement` to a step, at the right edge of the table, a step's rows on
    /// a few neighbouring pages. When the new rows' ids follow the largest id in the table one by
    /// one (as they do unless the newest rows were deleted), SQLite gives them those ids itself
    /// (`appendEntrySQL`), and each step checks that the last id it gave is the one expected (a
    /// mismatch fails the commit, never writes a row under another id).
    ///
    /// A step's fixed cost (starting, opening the table, finishing) is paid once per batch, not
    /// once per row. Neither kind of step keeps a statement journal (a copy of every page the
    /// step changes, to undo it alone): the insert is `OR FAIL`, and schema 9's columns have no
    /// constraint a replace could fail half-way on (with schema 8's NOT NULL, each step of a
    /// replace of many rows copied its pages there, spilled to a temporary file past 64 KiB).
    ///
    /// The keys, values and `fields` (`EntryRowFields`) are bound where `rows` keeps them (the
    /// engine wrote them there from its slots), which SQLite reads in place (`SQLITE_STATIC`)
    /// during the steps; every argument is bound anew for each step (the two integers of a row,
    /// its id and recency stamp, differ from row to row), and all are cleared once the rows are
    /// written (or fail), so no later use of the statements can find the buffers bound.
    private static func writeEntries(_ rows: StoredEntryRows, firstNew: Int64, _ db: Database) throws {
        // Prepared (found in the connection's cache) when first used.
        var writers = [BatchWriter?](repeating: nil, count: entrySQL.count)
        defer { for w in writers { if let w { sqlite3_clear_bindings(w.writer.statement) } } }
        /// The writer of the largest statement of `kind` that `left` rows fill.
        func writer(_ kind: EntryWrite, left: Int) throws -> Int {
            let sizes = EntryWrite.stepSizes
            let size = sizes.firstIndex { $0 <= left } ?? sizes.count - 1
            let k = kind.index(size: size)
            if writers[k] == nil {
                writers[k] = try BatchWriter(db, entrySQL[k], rows: sizes[size])
            }
            return k
        }
        let count = rows.count
        try rows.rowIDs.withUnsafeBufferPointer { ids in
            // The rows in the order of their ids (often already so: a group of new keys).
            var order = Array(0..<Int32(count))
            var sorted = true
            for i in 1..<max(count, 1) where ids[i - 1] > ids[i] {
                sorted = false
                break
            }
            if !sorted { order.sort { ids[Int($0)] < ids[Int($1)] } }
            // The new rows follow the others in that order.
            var split = count
            while split > 0 && ids[Int(order[split - 1])] >= firstNew { split -= 1 }
            // Whether SQLite gives the new rows their ids: they follow the table's largest one
            // by one (read after the deletes; the rows replaced are in the table already).
            var appending = false
            if split < count {
                var next = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM entries")) ?? 0
                appending = true
                for k in split..<count {
                    next += 1
                    if ids[Int(order[k])] != next {
                        appending = false
                        break
                    }
                }
            }
            try rows.recencies.withUnsafeBufferPointer { recencies in
            try rows.bytes.withUnsafeBufferPointer { bytes in
            try rows.ends.withUnsafeBufferPointer { ends in
                var start = 0
                while start < count {
                    let new = start >= split
                    let end = new ? count : split
                    let kind: EntryWrite = new ? (appending ? .append : .insert) : .replace
                    let current = writers[try writer(kind, left: end - start)]!
                    let stepRows = current.rows
                    let statement = current.writer.statement
                    let width: Int32 = kind == .append ? 4 : 5
                    for r in 0..<stepRows {
                        let i = Int(order[start + r])
                        // Parameter `base + c` holds column c of `entryColumns8` (0: the key).
                        let base = Int32(r) * width + (width - 3)
                        if width == 5 { _ = sqlite3_bind_int64(statement, base - 1, ids[i]) }
                        // The key, value and fields follow one another (`StoredEntryRows`).
                        let keyStart = i == 0 ? 0 : ends[3 * i - 1], valueStart = ends[3 * i], fieldStart = ends[3 * i + 1]
                        let keyCount = valueStart - keyStart, valueCount = fieldStart - valueStart
                        if keyCount > 0 {
                            _ = sqlite3_bind_blob(statement, base, bytes.baseAddress! + keyStart, Int32(keyCount), sqliteStatic)
                        } else {
                            _ = sqlite3_bind_zeroblob(statement, base, 0)
                        }
                        _ = sqlite3_bind_int64(statement, base + 1, recencies[i])
                        if valueCount > 0 {
                            UnsafeRawPointer(bytes.baseAddress! + valueStart).withMemoryRebound(to: CChar.self, capacity: valueCount) { text in
                                _ = sqlite3_bind_text(statement, base + 2, text, Int32(valueCount), sqliteStatic)
                            }
                        } else {
                            _ = sqlite3_bind_text(statement, base + 2, "", 0, sqliteTransient)
                        }
                        _ = sqlite3_bind_blob(statement, base + 3, bytes.baseAddress! + fieldStart,
                                              Int32(ends[3 * i + 2] - fieldStart), sqliteStatic)
                    }
                    try current.writer.run()
                    if width == 4 {
                        let expected = ids[Int(order[start + stepRows - 1])]
                        let given = sqlite3_last_insert_rowid(db.sqliteConnection)
                        guard given == expected else {
                            throw DatabaseError(resultCode: .SQLITE_INTERNAL,
                                                message: "the new rows were given ids up to \(given), not \(expected)")
                        }
                    }
                    start += stepRows
                }
            }
            }
            }
        }
    }

    /// One of `writeEntries`' statements and the rows a step of it writes.
    private struct BatchWriter {
        let writer: RowWriter
        /// Entry rows a step writes.
        let rows: Int

        init(_ db: Database, _ sql: String, rows: Int) throws {
            writer = try RowWriter(db, sql)
            self.rows = rows
        }
    }

    /// One write of a row: a statement from GRDB's cache of the connection, bound and stepped
    /// through SQLite's C interface (no argument list is built). A key is bound as a BLOB (an
    /// empty one as an empty BLOB, never NULL), so the statements take a plain `?` for it. Values
    /// bound by `bind` are copied by SQLite. `run` steps the statement once and resets it for the
    /// next row.
    private struct RowWriter {
        let db: Database
        let statement: SQLiteStatement

        init(_ db: Database, _ sql: String) throws {
            self.db = db
            statement = try db.cachedStatement(sql: sql).sqliteStatement
        }

        /// A key as a BLOB of its UTF-8 bytes (an empty one as an empty BLOB, not NULL).
        func bind(_ index: Int32, blob key: String) {
            var key = key
            key.withUTF8 { bytes in
                if bytes.isEmpty {
                    _ = sqlite3_bind_zeroblob(statement, index, 0)
                } else {
                    _ = sqlite3_bind_blob(statement, index, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
                }
            }
        }

        /// Text (JSON text never holds a NUL), or NULL for nil.
        func bind(_ index: Int32, _ text: String?) {
            guard var text else {
                _ = sqlite3_bind_null(statement, index)
                return
            }
            text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    if let start = chars.baseAddress {
                        _ = sqlite3_bind_text(statement, index, start, Int32(chars.count), sqliteTransient)
                    } else {
                        _ = sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
                    }
                }
            }
        }

        /// An integer, or NULL for nil.
        func bind(_ index: Int32, _ n: Int64?) {
            if let n { _ = sqlite3_bind_int64(statement, index, n) } else { _ = sqlite3_bind_null(statement, index) }
        }

        /// Steps the statement once (a write returns no row) and resets it.
        /// - Throws: `DatabaseError` with SQLite's code and message when the step fails.
        func run() throws {
            let code = sqlite3_step(statement)
            if code != SQLITE_DONE {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                sqlite3_reset(statement)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
            }
            sqlite3_reset(statement)
        }
    }

    /// A key as its column holds it: the BLOB of its UTF-8 bytes.
    static func blob(_ key: String) -> Data { Data(key.utf8) }

    /// The SQL for a key argument: an empty BLOB may be bound as NULL, which is the empty key.
    static let keyParameter = "coalesce(?, zeroblob(0))"

    /// A key column's value as the key.
    static func key(_ value: DatabaseValue) -> String {
        String(decoding: Data.fromDatabaseValue(value) ?? Data(), as: UTF8.self)
    }

    /// A database error as one sentence (SQLite's message, without GRDB's SQL echo).
    /// On one line: SQLite quotes text of the file in some messages (a damaged schema's SQL),
    /// whose line breaks are written `\n`.
    /// What is wrong with an integer column of SQLite type `type` (not `SQLITE_INTEGER`), after
    /// "entry row N ".
    static func notAnInteger(_ name: String, type: Int32) -> String {
        switch type {
        case SQLITE_NULL: "has no \(name) (NULL)"
        case SQLITE_FLOAT: "has a \(name) that is not a whole number (a real number)"
        case SQLITE_TEXT: "has a \(name) that is not a whole number (text)"
        default: "has a \(name) that is not a whole number (a BLOB)"
        }
    }

    static func describe(_ error: any Error) -> String {
        let text = (error as? DatabaseError).map { $0.message ?? "\($0.resultCode)" } ?? "\(error)"
        return text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }
}

/// SQLite's `SQLITE_TRANSIENT`: it copies a bound value before the bind returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// SQLite's `SQLITE_STATIC`: it reads a bound value where it is, until the value is bound again
/// (the caller keeps the bytes alive and unchanged until then).
private let sqliteStatic: sqlite3_destructor_type? = nil

/// Batches of entry rows handed from the thread that reads them to the one that takes them
/// (`SQLiteStore.loadEntries`): at most `depth` batches wait, so the reader stays a few thousand
/// rows ahead and no more; the reader's end, or its error, comes after its last batch.
final class RowHandOver: Sendable {
    static let batchSize = 1024
    static let depth = 2
    /// What a reader throws to stop when the taker has gone (never seen by a caller).
    static let cancelled = StoreError("the rows' reader was stopped")

    private struct State {
        var batches: [[StoredEntry]] = []
        var finished = false
        var error: StoreError?
        var cancelled = false
    }
    private let state = Mutex(State())
    /// Room for a batch: signalled `depth` times at the start, once per batch taken. (Made with
    /// value 0 and signalled, not made with `depth`: a semaphore freed below the value it was
    /// made with stops the process, as one may be when the taker stops early.)
    private let room = DispatchSemaphore(value: 0)
    /// A batch, or the end, to take: signalled once per batch put and once at the end.
    private let ready = DispatchSemaphore(value: 0)

    init() {
        for _ in 0..<Self.depth { room.signal() }
    }

    /// The reader hands over a batch, once there is room for it.
    /// - Returns: false when the taker has stopped (the reader stops too).
    func put(_ batch: [StoredEntry]) -> Bool {
        room.wait()
        let taken = state.withLock { state in
            if state.cancelled { return false }
            state.batches.append(batch)
            return true
        }
        if taken { ready.signal() }
        return taken
    }

    /// The reader's end: all its rows were put, or it failed with `error`.
    func finish(_ error: StoreError?) {
        state.withLock { state in
            state.finished = true
            state.error = error
        }
        ready.signal()
    }

    /// The next batch, waiting for it; nil at the reader's end.
    /// - Throws: the reader's error, once every batch it put before it was taken.
    func take() throws(StoreError) -> [StoredEntry]? {
        ready.wait()
        let next: [StoredEntry]? = state.withLock { state in state.batches.isEmpty ? nil : state.batches.removeFirst() }
        if let next {
            room.signal()
            return next
        }
        if let error = state.withLock({ $0.error }) { throw error }
        return nil
    }

    /// The taker stops: a reader waiting for room, or putting its next batch, stops there.
    func cancel() {
        state.withLock { $0.cancelled = true }
        room.signal()
    }
}
