#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain POSIX file reading, with errors a user can read.
public enum FileIO {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The whole file as UTF-8 text (invalid bytes repaired).
    public static func read(_ path: String) throws(Failure) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { throw Failure(description: "is a directory") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces the file at `path` with `text` atomically: a temporary file in the same directory
    /// is written, flushed to disk and renamed over the target, so a crash leaves the old file or the
    /// new one, never half of one.
    public static func writeAtomically(_ path: String, _ text: String) throws(Failure) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(directory.isEmpty ? "/" : directory)/.\(name).XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        func fail() -> Failure {
            let failure = Failure(description: String(cString: strerror(errno)))
            close(fd)
            unlink(temporary)
            return failure
        }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail()
            }
            offset += n
        }
        guard fchmod(fd, 0o644) == 0, fsync(fd) == 0 else { throw fail() }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let failure = Failure(description: String(cString: strerror(errno)))
            unlink(temporary)
            throw failure
        }
    }
}
