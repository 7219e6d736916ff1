#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The apps of this user that listen on their default socket (`/tmp/cachesh-$UID/PID`, or
/// `$CACHESH_SOCKET_DIR/PID`; SPEC §9): what `cachesh attach` with no target, `cachesh attach
/// PID` and `cachesh attach --list` find.
enum AttachDiscovery {
    /// An app found listening.
    struct App: Equatable {
        let pid: Int32
        /// Its program's name (Linux: `/proc/PID/comm`); empty when it cannot be told.
        let name: String
        let socket: String

        /// `1234 (MyApp)`, or `1234` without a name.
        var label: String { name.isEmpty ? "\(pid)" : "\(pid) (\(name))" }
    }

    /// The most entries of the directory looked at (it holds one socket an app of this user).
    static let maxEntries = 4096

    /// The directory of the default sockets, as `CacheInspector.start` makes it.
    static func directory() -> String {
        if let given = getenv("CACHESH_SOCKET_DIR"), given.pointee != 0 { return String(cString: given) }
        return "/tmp/cachesh-\(getuid())"
    }

    /// The socket of the app with process id `pid`, given as `cachesh attach PID`.
    static func socket(ofPID pid: String) -> String { directory() + "/" + pid }

    /// Whether `target` names an app by its process id (all digits).
    static func isPID(_ target: String) -> Bool {
        !target.isEmpty && target.utf8.count <= 10 && target.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The apps listening in `directory()`, by process id: sockets of this user named by the id
    /// of a process still running. A directory that is not this user's alone (a symbolic link,
    /// another owner, a mode other users may enter) is refused, as `CacheInspector.start`
    /// refuses it: its sockets could be anyone's.
    /// - Returns: the apps, or why the directory is refused. No directory: no app.
    static func listening() -> Result<[App], AttachDiscoveryError> {
        let path = directory()
        var info = stat()
        guard lstat(path, &info) == 0 else { return .success([]) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            return .failure(AttachDiscoveryError("\(path) is not a directory (a symbolic link or a file someone else made?)"))
        }
        guard info.st_uid == getuid() else {
            return .failure(AttachDiscoveryError("\(path) belongs to user \(info.st_uid), not to this user (\(getuid()))"))
        }
        guard info.st_mode & 0o077 == 0 else {
            return .failure(AttachDiscoveryError("\(path) may be entered by other users (mode \(String(info.st_mode & 0o777, radix: 8))); it must be 0700"))
        }
        guard let stream = opendir(path) else {
            return .failure(AttachDiscoveryError("cannot read \(path): \(String(cString: strerror(errno)))"))
        }
        defer { closedir(stream) }
        var apps: [App] = []
        var seen = 0
        while seen < maxEntries, let entry = readdir(stream) {
            seen += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard isPID(name), let pid = Int32(name), pid > 0 else { continue }
            let socket = path + "/" + name
            var socketInfo = stat()
            guard lstat(socket, &socketInfo) == 0, (socketInfo.st_mode & S_IFMT) == S_IFSOCK, socketInfo.st_uid == getuid() else { continue }
            // A socket left by an app that ended without stopping its inspector (a crash).
            guard kill(pid, 0) == 0 || errno == EPERM else { continue }
            apps.append(App(pid: pid, name: programName(pid), socket: socket))
        }
        return .success(apps.sorted { $0.pid < $1.pid })
    }

    /// The name of process `pid`'s program, at most 64 bytes of it, control characters left
    /// out; empty where it cannot be told.
    static func programName(_ pid: Int32) -> String {
        #if os(Linux)
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: bytes[..<count].filter { $0 >= 0x20 && $0 != 0x7F }, as: UTF8.self)
        #else
        return ""
        #endif
    }
}

/// Why the directory of the default sockets is not looked in.
struct AttachDiscoveryError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
