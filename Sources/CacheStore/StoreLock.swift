#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CacheCore
import Synchronization

/// One writer per store (SPEC §5.3): an exclusive `flock` on a lock file beside the store,
/// `STORE-lock`, held from before the store is read until it is closed.
///
/// Why a lock file and not SQLite's `locking_mode=EXCLUSIVE`: the lock is taken before SQLite
/// reads or migrates anything; the holder writes its process id into the file, so the refusal
/// names it; waiting for it (`--wait`) is one blocking `flock` that Ctrl-C ends; and tools that
/// only read the database (`sqlite3`, a backup) are not locked out between commits, as they would
/// be by an exclusive SQLite lock. The kernel drops the lock when its process ends, however it
/// ends, so a crash never leaves a store locked.
///
/// The file exists only while a cachesh holds it: the holder removes it when it closes the
/// store. That is safe because a process that took the lock checks that the file it locked is
/// still the one at the path, and starts again if not (the holder removed it meanwhile).
final class StoreLock: Sendable {
    /// The lock file.
    let path: String
    /// The open lock file while the lock is held; -1 once released.
    private let descriptor: Mutex<Int32>

    /// Where the lock of the store at `storePath` lives: beside the file the path leads to (so
    /// two names of one store, a symbolic link and its target, share a lock).
    static func lockPath(forStore storePath: String) -> String {
        if let real = realPath(storePath) { return real + "-lock" }
        // A new store: its directory's real path and its name.
        let slash = storePath.lastIndex(of: "/")
        let directory = slash.map { String(storePath[..<$0]) } ?? "."
        let name = slash.map { String(storePath[storePath.index(after: $0)...]) } ?? storePath
        guard let real = realPath(directory.isEmpty ? "/" : directory) else { return storePath + "-lock" }
        return (real == "/" ? "" : real) + "/" + name + "-lock"
    }

    /// Takes the lock of the store at `storePath`.
    /// - Parameters:
    ///   - wait: when another process holds it, wait until it is released (else refuse).
    ///   - waiting: told, once, before a wait begins: what the wait is for, as a sentence.
    /// - Throws: `StoreError` when another process holds the lock (and `wait` is false), or the
    ///   lock file cannot be created.
    init(store storePath: String, wait: Bool, waiting: (String) -> Void) throws(StoreError) {
        path = Self.lockPath(forStore: storePath)
        var toldWaiting = false
        var locked: Int32 = -1
        while true {
            // Not through a symbolic link, and only a regular file: the lock file is truncated and
            // written, so a link planted at its name (in a shared directory) must not lead that
            // write to another file, and a FIFO or device must not stand in for it.
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            guard fd >= 0 else {
                let message = errno == ELOOP ? "is a symbolic link, not a regular file" : Self.lastError()
                throw StoreError("cannot open store \(storePath): cannot create its lock file \(path): \(message)")
            }
            var opened = stat()
            if fstat(fd, &opened) != 0 || Self.notRegular(opened) != nil {
                let message = Self.notRegular(opened) ?? Self.lastError()
                close(fd)
                throw StoreError("cannot open store \(storePath): cannot create its lock file \(path): \(message)")
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK else {
                    let message = Self.lastError()
                    close(fd)
                    throw StoreError("cannot open store \(storePath): cannot lock \(path): \(message)")
                }
                let holder = Self.holder(fd).map { " (process \($0))" } ?? ""
                guard wait else {
                    close(fd)
                    throw StoreError("\(storePath) is in use by another cachesh\(holder); one process at a time may open a store (--wait waits for it)")
                }
                if !toldWaiting {
                    waiting("waiting for \(storePath): in use by another cachesh\(holder)")
                    toldWaiting = true
                }
                while flock(fd, LOCK_EX) != 0 {
                    guard errno == EINTR else {
                        let message = Self.lastError()
                        close(fd)
                        throw StoreError("cannot open store \(storePath): cannot lock \(path): \(message)")
                    }
                }
            }
            // The holder before us may have removed the file after we opened it: then we hold
            // the lock of a file nobody else will look at, and must take the one at the path.
            var held = stat(), current = stat()
            if fstat(fd, &held) == 0 && stat(path, &current) == 0 && held.st_dev == current.st_dev && held.st_ino == current.st_ino {
                // Written (truncated, then removed at release) only if it is one: a file cachesh
                // made, which no other name leads to. The lock is held, so no cachesh is writing it.
                if let problem = Self.notALockFile(fd, held) {
                    close(fd)
                    throw StoreError("cannot open store \(storePath): \(path) \(problem); refusing to change it (remove it if it is not needed)")
                }
                locked = fd
                break
            }
            close(fd)
        }
        // Who holds it, for the message another process shows (best effort: the lock is what counts).
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(locked, 0)
        _ = pid.withUnsafeBytes { pwrite(locked, $0.baseAddress, $0.count, 0) }
        descriptor = Mutex(locked)
    }

    deinit { release() }

    /// Removes the lock file and releases the lock (idempotent). Only the file this lock holds is
    /// removed: another put at its name meanwhile stays.
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            var held = stat(), current = stat()
            if fstat(fd, &held) == 0 && lstat(path, &current) == 0 && held.st_dev == current.st_dev && held.st_ino == current.st_ino {
                unlink(path)
            }
            close(fd)
            fd = -1
        }
    }

    /// Why the file open at `fd` is not a lock file cachesh made (nil when it is one): it has
    /// another name (a hard link), or it holds something else than nothing or one process id.
    private static func notALockFile(_ fd: Int32, _ st: stat) -> String? {
        if st.st_nlink != 1 { return "has \(st.st_nlink) hard links, so it is not a lock file cachesh made" }
        if st.st_size == 0 { return nil }
        var buffer = [UInt8](repeating: 0, count: 33)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let text = n > 0 ? buffer[0..<n] : []
        let isPID = text.count >= 2 && text.count <= 32 && text.last == UInt8(ascii: "\n")
            && text.dropLast().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return isPID && n == Int(st.st_size) ? nil : "exists and is not a cachesh lock file (it holds something other than a process id)"
    }

    /// The process id written in a held lock file, if it holds one.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        return text.split(separator: "\n").first.flatMap { Int32($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// "is a FIFO, not a regular file", or nil for a regular file.
    static func notRegular(_ st: stat) -> String? { FileKind.notRegular(st) }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
