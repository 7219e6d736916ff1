#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory of the apps' default sockets (SPEC §9): the app's inspector makes and listens in
/// it, `cachesh attach` looks in it, both by this one rule, so they agree on where it is and on
/// when it is safe to use.
public enum SocketDirectory {
    /// Why the directory is not used.
    public enum Problem: Error, Equatable, Sendable {
        /// `CACHESH_SOCKET_DIR` is not an absolute path.
        case relative(String)
        /// There is none (`lstat` says `ENOENT`).
        case absent(String)
        /// `lstat` failed otherwise (the system's reason).
        case cannotInspect(String, reason: String)
        /// A file, or a symbolic link: someone else may have made it.
        case notDirectory(String)
        case otherOwner(String, uid: UInt32)
        /// Other users may enter it (its permission bits).
        case open(String, mode: UInt32)

        /// A directory that may not be this user's alone: a file or link there, another owner.
        public var isOwnership: Bool {
            switch self {
            case .notDirectory, .otherOwner: true
            default: false
            }
        }

        /// The one line that says why.
        public var message: String {
            switch self {
            case .relative(let path):
                "CACHESH_SOCKET_DIR is \(path): give an absolute path (the app and the shell run in directories of their own)"
            case .absent(let path): "there is no \(path)"
            case .cannotInspect(let path, let reason): "cannot look in \(path): \(reason)"
            case .notDirectory(let path): "\(path) is not a directory (a symbolic link or a file someone else made?)"
            case .otherOwner(let path, let uid): "\(path) belongs to user \(uid), not to this user (\(getuid()))"
            case .open(let path, let mode): "\(path) may be entered by other users (mode \(String(mode, radix: 8))); it must be 0700"
            }
        }
    }

    /// `/tmp/cachesh-$UID`, or `$CACHESH_SOCKET_DIR`: an absolute path, its trailing `/` left out
    /// (with it, `lstat` would follow a symbolic link).
    public static func path() -> Result<String, Problem> {
        guard let given = getenv("CACHESH_SOCKET_DIR"), given.pointee != 0 else { return .success("/tmp/cachesh-\(getuid())") }
        var path = String(cString: given)
        guard path.hasPrefix("/") else { return .failure(.relative(path)) }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return .success(path)
    }

    /// Checks the directory at `path` as the app checks it before it listens there: a directory
    /// (not a symbolic link) of this user's that no other user may enter; else its sockets could
    /// be anyone's. - Returns: nil when it is fit, else why not.
    public static func problem(at path: String) -> Problem? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return errno == ENOENT ? .absent(path) : .cannotInspect(path, reason: String(cString: strerror(errno)))
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return .notDirectory(path) }
        guard info.st_uid == getuid() else { return .otherOwner(path, uid: UInt32(info.st_uid)) }
        guard info.st_mode & 0o077 == 0 else { return .open(path, mode: UInt32(info.st_mode & 0o777)) }
        return nil
    }
}
