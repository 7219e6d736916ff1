/// The one error value of cachesh: a sentence naming a problem with a user's input or a cache
/// operation, and where it is. Nothing was changed by the operation that threw it (SPEC §7).
///
/// Whoever holds the input renders it: the shell prints `FILE:LINE: error: MESSAGE` (or the
/// JSON form) at its output sink from `offset`; a snapshot or configuration names `path`.
/// `CacheError`, `JSONError`, `PatchError`, `StoreError`, `SnapshotError` and the shell's
/// `ShellError` are this type under the name each layer documents.
public struct Diagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// One sentence naming the problem, without location or `error:` prefix.
    public var message: String
    /// The byte of the input the problem is at (0 when the input as a whole is at fault).
    public var offset: Int
    /// The JSON path of a bad field (`entries[3].stored_at`); empty when there is none.
    public var path: String

    public init(message: String, offset: Int = 0, path: String = "") {
        self.message = message
        self.offset = offset
        self.path = path
    }

    /// A problem with no position (a cache operation, a store).
    public init(_ message: String) { self.init(message: message) }

    /// A problem at byte `offset` of the input.
    public init(_ message: String, at offset: Int) { self.init(message: message, offset: offset) }

    /// A problem at a JSON path of a document.
    public init(path: String, _ message: String) { self.init(message: message, path: path) }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// A store whose rows or state cannot be read back (SPEC §5.3): `damaged store: FILE: WHY`,
    /// `why` naming the row or field (`entries[2].key: ...`).
    public static func damagedStore(_ file: String, _ why: any Error) -> Diagnostic {
        Diagnostic("damaged store: \(file): \(why)")
    }
}

/// A refused cache operation (`Cache`, `CacheEngine`).
public typealias CacheError = Diagnostic
/// A refused JSON text, with the byte offset it points at.
public typealias JSONError = Diagnostic
/// A refused or inapplicable patch; the message names the field.
public typealias PatchError = Diagnostic
/// A store that cannot be opened, read or written.
public typealias StoreError = Diagnostic
/// A refused snapshot, with the JSON path of the first problem.
public typealias SnapshotError = Diagnostic
