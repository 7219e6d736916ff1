#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CacheCore
import SystemPackage

/// The files cachesh reads and writes, through two helpers (SPEC §5.4):
///
/// - `read` reads only a regular file, and at most a documented size: a FIFO, a device, a socket
///   or a directory is refused before it is opened (so `source /dev/zero` cannot fill memory and
///   a FIFO with no writer cannot block), and so is a file over the limit.
/// - `writeAtomically` replaces only a regular file (or creates one), keeping its permissions:
///   it writes a temporary file beside it, syncs it, renames it over the target and syncs the
///   directory, so a crash or a full disk leaves the old file or the new one, never half of one.
///   A symbolic link is followed and the file it points to is replaced (the link stays a link).
public enum FileIO {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// The most `read` takes from a script, configuration or transcript: 64 MiB.
    public static let readLimit = 64 << 20
    /// The most `read` takes from a snapshot (`restore`), which grows with the cache: 1 GiB.
    public static let snapshotReadLimit = 1 << 30

    // MARK: Reading

    /// The whole file as UTF-8 text (invalid bytes repaired).
    /// - Parameter limit: the most bytes the file may hold (``readLimit`` unless given).
    /// - Throws: `Failure` (its text follows "cannot read FILE: ") when the file is missing, not
    ///   a regular file, larger than `limit`, or cannot be read; nothing is read from a FIFO or
    ///   device.
    /// - Complexity: O(n) in the file's size.
    public static func read(_ path: String, limit: Int = readLimit) throws(Failure) -> String {
        let fd = try openRegular(path)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Failure(description: lastError()) }
        if Int(st.st_size) > limit { throw tooLarge(limit) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(st.st_size) + 1)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            // At most one byte over the limit, to tell a file that grew past it.
            let want = min(buffer.count, limit + 1 - bytes.count)
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: fd).read(into: .init(rebasing: $0[..<want])) }
            } catch {
                throw Failure(description: message(error))
            }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
            if bytes.count > limit { throw tooLarge(limit) }
        }
        if let bad = bytes.withUnsafeBufferPointer({ firstInvalidUTF8($0) }) {
            throw Failure(description: bytes.withUnsafeBufferPointer { notUTF8($0, at: bad) })
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The offset of the first byte of `bytes` that is not part of valid UTF-8, or nil when all
    /// of it is UTF-8 text. Text that is not UTF-8 (Latin-1, random bytes) is refused rather than
    /// repaired: a repair turns each bad byte into U+FFFD, so two different keys (`a:\xFF`,
    /// `a:\xFE`) would silently become one.
    /// - Complexity: O(n) in the number of bytes; ASCII 32 bytes at a time.
    public static func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var i = 0
        while i < bytes.count {
            // 32 bytes at a time while they are ASCII (a script's usual text), then 8, then one.
            if i + 32 <= bytes.count {
                let raw = UnsafeRawPointer(base + i)
                let any = raw.loadUnaligned(as: UInt64.self) | raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                if any & 0x8080_8080_8080_8080 == 0 {
                    i += 32
                    continue
                }
            }
            if i + 8 <= bytes.count,
               UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            if bytes[i] < 0x80 {
                i += 1
                continue
            }
            var parser = Unicode.UTF8.ForwardParser()
            var rest = UnsafeBufferPointer(rebasing: bytes[i...]).makeIterator()
            switch parser.parseScalar(from: &rest) {
            case .valid(let scalar): i += scalar.count
            case .error, .emptyInput: return i
            }
        }
        return nil
    }

    /// `not UTF-8 text (byte 0xFF on line 3)` for the bad byte at `offset` of `bytes`.
    public static func notUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> String {
        let line = 1 + bytes[..<offset].count { $0 == UInt8(ascii: "\n") }
        return "not UTF-8 text (byte \(hexByte(bytes[offset])) on line \(line))"
    }

    /// `0xFF`.
    public static func hexByte(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        return "0x" + (hex.count == 1 ? "0" : "") + hex
    }

    /// Opens a regular file for reading, refusing anything else before opening it (so a FIFO
    /// cannot block); the caller reads it (a script streams it) and closes the descriptor.
    /// - Throws: `Failure` (its text follows "cannot read FILE: ") when the file is missing, not
    ///   a regular file, or cannot be opened.
    public static func openRegular(_ path: String) throws(Failure) -> Int32 {
        // Look before opening: opening a FIFO for reading blocks until a writer comes.
        var before = stat()
        guard stat(path, &before) == 0 else { throw Failure(description: lastError()) }
        try requireRegular(before)
        // O_NONBLOCK in case a FIFO took the file's place since: its open returns at once.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: lastError()) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = Failure(description: lastError())
            close(fd)
            throw error
        }
        if let problem = notRegular(st) {
            close(fd)
            throw Failure(description: problem)
        }
        return fd
    }

    /// Checks, without opening it, that `read` would take the file at `path`: a regular file (or
    /// a link to one) of at most `limit` bytes.
    /// - Returns: false when there is no such file.
    /// - Throws: `Failure` when it is not a regular file or is larger than `limit`.
    public static func check(_ path: String, limit: Int = readLimit) throws(Failure) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT { return false }
            throw Failure(description: lastError())
        }
        try requireRegular(st)
        if Int(st.st_size) > limit { throw tooLarge(limit) }
        return true
    }

    /// "is a FIFO, not a regular file", or nil for a regular file.
    static func notRegular(_ st: stat) -> String? { FileKind.notRegular(st) }

    private static func requireRegular(_ st: stat) throws(Failure) {
        if let problem = notRegular(st) { throw Failure(description: problem) }
    }

    private static func tooLarge(_ limit: Int) -> Failure {
        Failure(description: "larger than \(sizeText(limit)), the most cachesh reads from such a file")
    }

    /// `64 MiB`, `1 GiB`.
    static func sizeText(_ bytes: Int) -> String {
        if bytes >= 1 << 30 && bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        return "\(bytes) bytes"
    }

    // MARK: Writing

    /// Replaces the file at `path` with `text`, or creates it (see ``FileIO``).
    /// - Throws: `Failure` (its text follows "cannot write FILE: ") when the target is not a
    ///   regular file, or the new file cannot be written in full; then the old file is unchanged.
    public static func writeAtomically(_ path: String, _ text: String) throws(Failure) {
        let fd = try replace(path, with: text)
        close(fd)
    }

    /// ``writeAtomically(_:_:)`` with what `body` writes to the new file's descriptor.
    /// - Parameter newFileMode: the mode of a new file, less the umask (an old file's is kept).
    public static func writeAtomically(_ path: String, newFileMode: mode_t = 0o666,
                                       writing body: (Int32) throws(Failure) -> Void) throws(Failure) {
        let fd = try replace(path, newFileMode: newFileMode, writing: body)
        close(fd)
    }

    /// ``writeAtomically(_:_:)``, returning the new file open for writing at its end; the
    /// caller closes it.
    /// - Complexity: O(n) in the size of `text`.
    static func replace(_ path: String, with text: String) throws(Failure) -> Int32 {
        try replace(path) { fd throws(Failure) in try write(fd, text) }
    }

    /// Writes all of `text` at the file's offset.
    static func write(_ fd: Int32, _ text: String) throws(Failure) {
        do { _ = try FileDescriptor(rawValue: fd).writeAll(text.utf8) } catch { throw Failure(description: message(error)) }
    }

    /// Checks, without writing anything, what ``writeAtomically(_:_:)`` would refuse at once: a
    /// target that is not a regular file or is read-only, a directory that is missing or
    /// read-only. A command that writes several files checks them all first, so one that cannot
    /// be written leaves the others unwritten.
    /// - Throws: `Failure` (its text follows "cannot write FILE: ").
    public static func checkWritable(_ path: String) throws(Failure) {
        let (target, existing) = try resolve(path)
        if let existing {
            if let problem = notRegular(existing) { throw Failure(description: problem) }
            guard access(target, W_OK) == 0 else { throw Failure(description: lastError()) }
            if FileKind.permissionBitsForbidWriting(existing) { throw Failure(description: String(cString: strerror(EACCES))) }
        }
        guard access(split(target).directory, W_OK) == 0 else { throw Failure(description: lastError()) }
    }

    /// The one writer: the steps of ``FileIO``, with `body` writing the new file's content.
    static func replace(_ path: String, newFileMode: mode_t = 0o666,
                        writing body: (Int32) throws(Failure) -> Void) throws(Failure) -> Int32 {
        let pending = try Replacement(path, newFileMode: newFileMode)
        do { try body(pending.descriptor) } catch {
            pending.abandon()
            throw error
        }
        return try pending.commit()
    }

    /// A file being written to replace another (or to be made): a temporary file beside the
    /// target, which `commit` renames over it once it is whole and on disk, or `abandon`
    /// removes, leaving the target as it was. `record` writes its transcript into one for as
    /// long as it records, so the target is the whole recording or the old file, never part.
    struct Replacement {
        /// The temporary file, open for writing.
        let descriptor: Int32
        let temporary: String
        /// The file replaced (where the path's links lead), and its status before, if it was there.
        let target: String
        let existing: stat?

        /// Checks the target (a regular file, writable by its permission bits too, or none yet)
        /// and makes the temporary file.
        /// - Throws: `Failure` (its text follows "cannot write FILE: ").
        init(_ path: String, newFileMode: mode_t = 0o666) throws(Failure) {
            let (target, existing) = try resolve(path)
            if let existing {
                if let problem = notRegular(existing) { throw Failure(description: problem) }
                // A file its owner made read-only stays as it is, though the directory would let a
                // rename replace it.
                guard access(target, W_OK) == 0 else { throw Failure(description: lastError()) }
                if FileKind.permissionBitsForbidWriting(existing) { throw Failure(description: String(cString: strerror(EACCES))) }
            }
            // A new file gets `newFileMode` less the umask (applied by open); until an old file's
            // mode is copied the copy is private, so it never shows what the old one hid.
            (descriptor, temporary) = try createTemporary(in: split(target).directory, for: split(target).name,
                                                          mode: existing == nil ? newFileMode : 0o600)
            self.target = target
            self.existing = existing
        }

        /// Removes the temporary file: the target stays as it was.
        func abandon() {
            close(descriptor)
            unlink(temporary)
        }

        /// Gives the new file the old one's mode (and owner), syncs it, renames it over the target
        /// and syncs the directory.
        /// - Returns: the new file, still open, at its end.
        /// - Throws: `Failure`, the temporary file removed and the target as it was (but when
        ///   only the directory's sync failed: then the new file is in place).
        func commit() throws(Failure) -> Int32 {
            func fail(_ message: String) -> Failure {
                abandon()
                return Failure(description: message)
            }
            let directory = split(target).directory
            if let existing {
                guard fchmod(descriptor, existing.st_mode & 0o7777) == 0 else { throw fail(lastError()) }
                // The owner and group too, where the system allows it (root, or a group of ours);
                // otherwise the new file is ours, as any rewrite by this user would make it.
                if existing.st_uid != geteuid() || existing.st_gid != getegid() {
                    _ = fchown(descriptor, existing.st_uid, existing.st_gid)
                    _ = fchmod(descriptor, existing.st_mode & 0o7777)
                }
            }
            guard syncFile(descriptor) else { throw fail(lastError()) }
            guard rename(temporary, target) == 0 else { throw fail(lastError()) }
            // The rename itself is durable only once the directory is synced.
            let directoryFD = open(directory, O_RDONLY | O_CLOEXEC)
            if directoryFD >= 0 {
                let synced = fsync(directoryFD) == 0 || errno == EINVAL || errno == ENOTSUP
                let problem = lastError()
                close(directoryFD)
                if !synced {
                    close(descriptor)
                    throw Failure(description: "replaced, but its directory \(directory) could not be synced: \(problem)")
                }
            }
            return descriptor
        }
    }

    /// The file a write to `path` replaces: `path` itself, or where its symbolic links lead; with
    /// its status, or nil when nothing is there yet (a new file, or a link to a missing one).
    public static func resolve(_ path: String) throws(Failure) -> (path: String, status: stat?) {
        var target = path
        for _ in 0..<40 {
            var st = stat()
            if lstat(target, &st) != 0 {
                if errno == ENOENT { return (target, nil) }
                throw Failure(description: lastError())
            }
            guard st.st_mode & S_IFMT == S_IFLNK else { return (target, st) }
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = buffer.withUnsafeMutableBytes { raw in
                readlink(target, raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count - 1)
            }
            guard n >= 0 else { throw Failure(description: lastError()) }
            let link = String(decoding: buffer[0..<n], as: UTF8.self)
            target = link.hasPrefix("/") ? link : split(target).directory + "/" + link
        }
        throw Failure(description: String(cString: strerror(ELOOP)))
    }

    /// A path's directory (`.` for a bare name) and file name.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    /// Whether two paths lead to one file: the same existing file, or, for a file not made yet,
    /// the same name in the same existing folder (`a.svg` and `./a.svg`).
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        guard let x = identity(a), let y = identity(b) else { return false }
        return x == y
    }

    /// What names a file whatever the spelling of its path: its device and inode when it exists,
    /// else its folder's device and inode and its own name; nil when neither can be read.
    static func identity(_ path: String) -> (dev: UInt64, ino: UInt64, name: String)? {
        var info = stat()
        if stat(path, &info) == 0 { return (UInt64(info.st_dev), UInt64(info.st_ino), "") }
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, stat(folder, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino), name)
    }

    /// The longest a file name may be (bytes), as Linux and macOS file systems allow.
    static let nameMax = 255

    /// A new file `DIRECTORY/.NAME.XXXXXX` (random letters), open for writing; NAME is cut (at a
    /// character) so that the temporary name fits in `nameMax` bytes whatever the target's length.
    private static func createTemporary(in directory: String, for name: String, mode: mode_t) throws(Failure) -> (Int32, String) {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var random = SystemRandomNumberGenerator()
        let stem = temporaryStem(name)
        for _ in 0..<100 {
            let suffix = String((0..<6).map { _ in letters[Int(random.next(upperBound: UInt32(letters.count)))] })
            let temporary = "\(directory)/.\(stem).\(suffix)"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 { return (fd, temporary) }
            if errno != EEXIST { throw Failure(description: lastError()) }
        }
        throw Failure(description: String(cString: strerror(EEXIST)))
    }

    /// The part of a target's name its temporary name keeps: all of it, or as many of its first
    /// characters as leave room for `.` and `.XXXXXX` within `nameMax` bytes.
    static func temporaryStem(_ name: String) -> Substring {
        let room = nameMax - 8
        var bytes = 0
        var end = name.startIndex
        for c in name {
            bytes += c.utf8.count
            if bytes > room { break }
            end = name.index(after: end)
        }
        return name[..<end]
    }

    /// Flushes a file's data to the disk (on Darwin, past the drive's cache too).
    static func syncFile(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return true }
        #endif
        return fsync(fd) == 0
    }

    // MARK: System calls

    static func lastError() -> String { String(cString: strerror(errno)) }

    /// The C library's text of a failed `FileDescriptor` call's error (`No space left on device`),
    /// as ``lastError()`` gives it for a call that sets `errno`.
    public static func message(_ error: any Error) -> String {
        String(cString: strerror((error as? Errno)?.rawValue ?? errno))
    }
}
