#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Notes what happens on a `Cache` while it records, in order, as `CacheRecord`s: in memory, or
/// line by line to a file. It lives in the cache's isolation and is only touched from there.
final class CacheRecorder {
    private var records: [CacheRecord] = []
    private let file: RecordingFile?
    /// How many lines of the engine's request log have been noted as `sent`.
    private var logSeen: Int

    init(begin snapshot: JSONValue, live: Bool, engine: CacheEngine, file: RecordingFile?) {
        self.file = file
        logSeen = engine.requestLog.count
        append(.begin(snapshot: snapshot, live: live))
    }

    func append(_ record: CacheRecord) {
        if let file { file.write(RecordingFormat.line(record)) } else { records.append(record) }
    }

    /// Notes the requests the engine has sent since the last call (its log's new lines).
    /// - Complexity: O(1) when none was sent.
    func noteSent(_ engine: CacheEngine) {
        let count = engine.requestLog.count
        if count < logSeen { logSeen = count }   // the log was cleared
        guard count > logSeen else { return }
        for entry in engine.requestLog[logSeen...] {
            append(.sent(id: entry.id, kind: entry.kind, keys: entry.keys, at: entry.atMs &+ engine.clockStart))
        }
        logSeen = count
    }

    /// Ends the recording at `at`. - Returns: the records (empty for a file), or the file's write error.
    func finish(at: Int64) -> Result<CacheRecording, CacheError> {
        append(.end(at: at))
        if let file {
            if let failure = file.close() { return .failure(CacheError("the recording could not be written: \(failure)")) }
            return .success(CacheRecording(records: []))
        }
        return .success(CacheRecording(records: records))
    }
}

/// A recording's file: its header, then records appended through a 64 KB buffer (written when it
/// fills and when the recording stops). The first write error is kept and reported at the end.
final class RecordingFile {
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var failure: String?

    /// Creates (or truncates) the file at `path` and writes the header.
    init(path: String) throws(CacheError) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CacheError("cannot write \(path): \(String(cString: strerror(errno)))") }
        buffer.reserveCapacity(1 << 16)
        write(RecordingFormat.header)
    }

    deinit { _ = close() }

    func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 16 { flush() }
    }

    private func flush() {
        var offset = 0
        while offset < buffer.count, fd >= 0, failure == nil {
            let n = buffer[offset...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
            } else {
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and closes the file. - Returns: the first write error, if any.
    func close() -> String? {
        guard fd >= 0 else { return failure }
        flush()
        if systemClose(fd) != 0 && failure == nil { failure = String(cString: strerror(errno)) }
        fd = -1
        return failure
    }
}

/// The C library's `write` and `close`, named apart from the methods of `RecordingFile`.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}

private func systemClose(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(fd)
    #else
    Darwin.close(fd)
    #endif
}
