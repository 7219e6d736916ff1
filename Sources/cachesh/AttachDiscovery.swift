import CacheShell
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

    /// The most entries of the directory read (it holds a socket an app of this user).
    static let maxEntries = 65_536

    /// The directory of the default sockets, as `CacheInspector.start` makes it (`SocketDirectory`).
    static func directory() -> Result<String, AttachDiscoveryError> {
        SocketDirectory.path().mapError { AttachDiscoveryError($0.message) }
    }

    /// Whether `target` names an app by its process id: all digits.
    static func isPID(_ target: String) -> Bool {
        !target.isEmpty && target.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The process id `text` writes, written as the system writes one (no leading zero, 1 up to
    /// `Int32.max`); nil otherwise.
    static func pid(_ text: String) -> Int32? {
        guard let pid = Int32(text), pid > 0, String(pid) == text else { return nil }
        return pid
    }

    /// The directory, checked as `CacheInspector.start` checks it (`SocketDirectory`): its sockets
    /// could be anyone's otherwise. - Returns: its path, nil when there is none, or why it is refused.
    static func checkedDirectory() -> Result<String?, AttachDiscoveryError> {
        let path: String
        switch directory() {
        case .failure(let error): return .failure(error)
        case .success(let found): path = found
        }
        switch SocketDirectory.problem(at: path) {
        case nil: return .success(path)
        case .absent?: return .success(nil)
        case let problem?: return .failure(AttachDiscoveryError(problem.message))
        }
    }

    /// The socket of the app with process id `text` (`cachesh attach PID`), in the checked
    /// directory, a socket of this user's.
    static func socket(ofPID text: String) -> Result<String, AttachDiscoveryError> {
        guard pid(text) != nil else {
            return .failure(AttachDiscoveryError("\(text): not a process id (a socket file of that name: ./\(text))"))
        }
        let directory: String
        switch checkedDirectory() {
        case .failure(let error): return .failure(error)
        case .success(nil):
            return .failure(AttachDiscoveryError("no app of yours listens as process \(text): there is no \((try? Self.directory().get()) ?? "directory") (is CACHESH_SOCKET_DIR the app's?)"))
        case .success(let found?): directory = found
        }
        let socket = directory + "/" + text
        var info = stat()
        guard lstat(socket, &info) == 0 else {
            return .failure(AttachDiscoveryError("no app of yours listens as process \(text): no socket \(socket) (is the app running, with CacheInspector started, and CACHESH_SOCKET_DIR the app's?)"))
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == getuid() else {
            return .failure(AttachDiscoveryError("\(socket) is not a socket of this user's"))
        }
        return .success(socket)
    }

    /// The apps listening in the directory, by process id: sockets of this user named by the id
    /// of a running process that accept a connection (one an app left when it crashed refuses
    /// it, whatever process has its id now).
    /// - Returns: the apps, or why the directory is not looked in. No directory: no app.
    static func listening() -> Result<[App], AttachDiscoveryError> {
        let path: String
        switch checkedDirectory() {
        case .failure(let error): return .failure(error)
        case .success(nil): return .success([])
        case .success(let found?): path = found
        }
        guard let stream = opendir(path) else {
            return .failure(AttachDiscoveryError("cannot read \(path): \(String(cString: strerror(errno)))"))
        }
        defer { closedir(stream) }
        var apps: [App] = []
        var read = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            read += 1
            guard read <= maxEntries else {
                return .failure(AttachDiscoveryError("\(path) holds more than \(maxEntries) entries, the most looked at"))
            }
            guard let pid = pid(name) else { continue }
            let socket = path + "/" + name
            var info = stat()
            guard lstat(socket, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == getuid(),
                  kill(pid, 0) == 0 || errno == EPERM, accepts(socket) else { continue }
            apps.append(App(pid: pid, name: programName(pid), socket: socket))
        }
        return .success(apps.sorted { $0.pid < $1.pid })
    }

    /// Whether something listens on the socket at `path`: a connection made and closed at once
    /// (the app reads no request from it). A socket its app left behind refuses it. The attempt
    /// does not wait: on Linux an app whose queue of connections is full (stopped in a debugger,
    /// say) answers `EAGAIN` at once, and is an app; Darwin refuses such a connection, so there
    /// a stopped app with a full queue looks like none.
    static func accepts(_ path: String) -> Bool {
        let fd = makeSocket(AF_UNIX, streamSocket, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0 || errno == EAGAIN || errno == EINPROGRESS
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

#if canImport(Glibc)
private let makeSocket = Glibc.socket
#else
private let makeSocket = Darwin.socket
#endif

/// Why no app is found in the directory of the default sockets.
struct AttachDiscoveryError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
