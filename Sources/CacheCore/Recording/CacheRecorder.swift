#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Notes what happens on a `Cache` while it records, in order, as `CacheRecord`s: in memory, or
/// to a file. It lives in the cache's isolation and is only touched from there; a file's records
/// are handed over in batches and encoded on the file's own queue, off the cache's.
final class CacheRecorder {
    private var records: [CacheRecord] = []
    private let file: RecordingFile?
    /// How many lines of the engine's request log have been noted as `sent`.
    private var logSeen: Int
    /// Records are handed to a file this many at a time.
    private static let batch = 256

    init(begin snapshot: JSONValue, live: Bool, engine: CacheEngine, file: RecordingFile?) {
        self.file = file
        logSeen = engine.requestLogDropped + engine.requestLog.count
        append(.begin(snapshot: snapshot, live: live))
    }

    /// The stream the records go to, if they go to one.
    var stream: RecordingStream? { file?.stream }

    func append(_ record: CacheRecord) {
        records.append(record)
        if let file, records.count >= Self.batch {
            file.write(records)
            records.removeAll(keepingCapacity: true)
        }
    }

    /// Notes the requests the engine has sent since the last call (its log's new lines).
    /// - Complexity: O(1) when none was sent.
    func noteSent(_ engine: CacheEngine) {
        // Counted from the log's start, lines it dropped to stay bounded included.
        let dropped = engine.requestLogDropped
        let count = dropped + engine.requestLog.count
        if count < logSeen { logSeen = count }   // the log was cleared
        guard count > logSeen else { return }
        for entry in engine.requestLog[max(logSeen - dropped, 0)...] {
            append(.sent(id: entry.id, kind: entry.kind, keys: entry.keys, at: entry.atMs &+ engine.clockStart))
        }
        logSeen = count
    }

    /// Takes the engine's request log as seen: after a `restore`, whose log is the snapshot's
    /// (requests of another session, or of this one before), which the recording sent none of.
    func skipSent(_ engine: CacheEngine) {
        logSeen = engine.requestLogDropped + engine.requestLog.count
    }

    /// Ends the recording at `at`. - Returns: the records (none for a file), or the file's write error.
    func finish(at: Int64) -> Result<CacheRecording, CacheError> {
        records.append(.end(at: at))
        guard let file else { return .success(CacheRecording(records: records)) }
        file.write(records)
        records = []
        if let failure = file.close() { return .failure(CacheError("the recording could not be written: \(failure)")) }
        return .success(CacheRecording(records: []))
    }
}

/// Where a recording's lines go as it runs, one at a time and in order, off the cache's executor:
/// the header line (`{"format":"cachesh-recording","version":2}`), then one line per record, the
/// last one `end` (SPEC §5.6). An inspector streams a recording to an attached shell this way
/// (`Cache.startRecording(to:)`); the lines are those a recording's file holds.
public final class RecordingStream: Sendable {
    let deliver: @Sendable (String) -> Void

    /// - Parameter deliver: called with each line (no line feed): the header inside
    ///   `startRecording(to:)`, each record on a queue of the recording's own, never inside
    ///   another call of the app's; it must not call the cache and wait for it.
    public init(_ deliver: @escaping @Sendable (String) -> Void) {
        self.deliver = deliver
    }
}

/// A recording's file, or its stream: the header, then batches of records, each encoded as JSON
/// lines on a serial queue of its own (in the order handed over); a file is written through a
/// 64 KB buffer, and its first write error is kept and reported when it is closed.
final class RecordingFile: Sendable {
    private struct State {
        var fd: Int32
        var buffer: [UInt8] = []
        var failure: String?
    }
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "cachesh.recording")
    /// The stream the lines go to instead of a file (`fd` is then -1).
    let stream: RecordingStream?

    /// Creates (or truncates) the file at `path` and writes the header.
    init(path: String) throws(CacheError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CacheError("cannot write \(path): \(String(cString: strerror(errno)))") }
        var initial = State(fd: fd)
        initial.buffer.reserveCapacity(1 << 16)
        initial.buffer.append(contentsOf: RecordingFormat.header.utf8)
        initial.buffer.append(UInt8(ascii: "\n"))
        state = Mutex(initial)
        stream = nil
    }

    /// Hands the header to `stream` now, then each record's line as batches come.
    init(stream: RecordingStream) {
        state = Mutex(State(fd: -1))
        self.stream = stream
        stream.deliver(RecordingFormat.header)
    }

    /// No batch can be pending here: each holds the file until it has run.
    deinit { _ = closeNow() }

    /// Encodes and writes `records` after those handed over before, on the file's queue.
    func write(_ records: [CacheRecord]) {
        if let stream {
            queue.async {
                for record in records { stream.deliver(RecordingFormat.line(record)) }
            }
            return
        }
        queue.async { [self] in
            var bytes: [UInt8] = []
            for record in records {
                bytes.append(contentsOf: RecordingFormat.line(record).utf8)
                bytes.append(UInt8(ascii: "\n"))
            }
            state.withLock { state in
                state.buffer.append(contentsOf: bytes)
                if state.buffer.count >= 1 << 16 { Self.flush(&state) }
            }
        }
    }

    private static func flush(_ state: inout State) {
        var offset = 0
        while offset < state.buffer.count, state.fd >= 0, state.failure == nil {
            let n = state.buffer[offset...].withUnsafeBytes { systemWrite(state.fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                state.failure = String(cString: strerror(errno))
            } else {
                offset += n
            }
        }
        state.buffer.removeAll(keepingCapacity: true)
    }

    /// Waits for the batches handed over, writes what is buffered and closes the file.
    /// - Returns: the first write error, if any.
    func close() -> String? {
        queue.sync {}
        return closeNow()
    }

    private func closeNow() -> String? {
        state.withLock { state in
            guard state.fd >= 0 else { return state.failure }
            Self.flush(&state)
            if systemClose(state.fd) != 0 && state.failure == nil { state.failure = String(cString: strerror(errno)) }
            state.fd = -1
            return state.failure
        }
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
