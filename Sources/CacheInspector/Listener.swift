import CacheShell
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an inspector listens (SPEC §9 Security).
public enum InspectorEndpoint: Sendable, Equatable {
    /// A Unix-domain socket: nil is `/tmp/cachesh-$UID/PID` (or `$CACHESH_SOCKET_DIR/PID`), in a
    /// directory of the user's own.
    case unixSocket(path: String? = nil)
    /// A loopback TCP port (0: one the system picks), guarded by a random token printed once.
    case tcp(port: UInt16 = 0)
}

/// Why an inspector could not start.
public struct InspectorError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The POSIX calls of the listener: a directory checked, a socket bound, connections accepted.
enum Listener {
    #if canImport(Glibc)
    static let streamSocket = Int32(SOCK_STREAM.rawValue)
    #else
    static let streamSocket = SOCK_STREAM
    #endif

    /// The most bytes of a Unix-domain socket's path (Darwin's `sun_path` holds 104, with its NUL).
    static let maxPathBytes = 103

    static func errnoText() -> String { String(cString: strerror(errno)) }

    /// `/tmp/cachesh-$UID` (or `$CACHESH_SOCKET_DIR`), made 0700 if missing, and checked: a
    /// directory (not a symbolic link) of this user, that nobody else may enter
    /// (`SocketDirectory`, the rule `cachesh attach` looks in it by).
    static func userDirectory() throws(InspectorError) -> String {
        let path: String
        switch SocketDirectory.path() {
        case .success(let found): path = found
        case .failure(let problem): throw InspectorError(problem.message)
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw InspectorError("cannot make \(path): \(errnoText())")
        }
        switch SocketDirectory.problem(at: path) {
        case nil: return path
        case let problem? where problem.isOwnership: throw InspectorError(problem.message + "; refusing to listen there")
        case let problem?: throw InspectorError(problem.message)
        }
    }

    /// A listening Unix-domain socket at `path` (a stale socket of this user's there is replaced).
    static func unixSocket(at path: String) throws(InspectorError) -> Int32 {
        guard path.utf8.count <= maxPathBytes else {
            throw InspectorError("socket path longer than \(maxPathBytes) bytes (\(path.utf8.count)): \(path)")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == getuid() else {
                throw InspectorError("\(path) exists and is not a socket of this user's; refusing to replace it")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, streamSocket, 0)
        guard fd >= 0 else { throw InspectorError("cannot make a socket: \(errnoText())") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let why = errnoText()
            close(fd)
            throw InspectorError("cannot listen on \(path): \(why)")
        }
        chmod(path, 0o600)
        guard listen(fd, 16) == 0 else {
            let why = errnoText()
            close(fd)
            unlink(path)
            throw InspectorError("cannot listen on \(path): \(why)")
        }
        return fd
    }

    /// A listening TCP socket on 127.0.0.1:`port`, and the port it got.
    static func loopback(port: UInt16) throws(InspectorError) -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw InspectorError("cannot make a socket: \(errnoText())") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let why = errnoText()
            close(fd)
            throw InspectorError("cannot listen on 127.0.0.1:\(port): \(why)")
        }
        var got = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &got) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: got.sin_port))
    }

    /// 32 random bytes as hex, from the system's secure generator.
    static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            text += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return text
    }

    /// Writes all of `bytes` to `fd` (retrying an interrupted or short write). - Returns: false on an error.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                #if canImport(Glibc)
                send(fd, raw.baseAddress! + done, raw.count - done, Int32(MSG_NOSIGNAL))
                #else
                write(fd, raw.baseAddress! + done, raw.count - done)
                #endif
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }
}
