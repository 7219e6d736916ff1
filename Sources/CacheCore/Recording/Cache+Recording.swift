/// Recording: a cache notes every call, step of its clock, request, answer and observer event,
/// so what happened in a running app can be replayed on the virtual clock (CacheShell writes a
/// recording as a transcript: `RecordingTranscript`).
extension Cache {
    /// Starts recording in memory; `stopRecording()` returns what was recorded. Recording again
    /// while recording starts over.
    public func startRecording() {
        beginRecording(file: nil)
    }

    /// Starts recording to a file, one JSON line per record (`RecordingFormat`), written through a
    /// buffer; `cachesh --transcribe FILE` turns it into a transcript.
    /// - Throws: `CacheError` when the file cannot be created.
    public func startRecording(to path: String) throws(CacheError) {
        beginRecording(file: try RecordingFile(path: path))
    }

    /// Starts recording to `stream`: each record's line is handed to it as the recording goes
    /// (in batches, off the cache's executor), the header first, `end` last (SPEC §5.6), so a
    /// long session is never held in the cache's memory. A recording that replaces it (another
    /// `startRecording`) ends it first: the stream gets its `end`.
    public func startRecording(to stream: RecordingStream) {
        beginRecording(file: RecordingFile(stream: stream))
    }

    /// Whether the cache is recording.
    public var isRecording: Bool { recorder != nil }

    /// Whether the cache is recording to `stream`.
    public func isRecording(to stream: RecordingStream) -> Bool { recorder?.stream === stream }

    /// Stops recording at the clock's time.
    /// - Returns: the recording (no records when it went to a file).
    /// - Throws: `CacheError` when the file could not be written, or when the cache was not recording.
    @discardableResult
    public func stopRecording() throws(CacheError) -> CacheRecording {
        guard let recorder else { throw CacheError("not recording (startRecording() starts)") }
        sync()
        defer { finish() }
        self.recorder = nil
        return try recorder.finish(at: now).get()
    }

    private func beginRecording(file: RecordingFile?) {
        sync()
        defer { finish() }
        // A stream's reader waits for its end (a file or memory started over is dropped, as before).
        if let streaming = recorder, streaming.stream != nil { _ = streaming.finish(at: now) }
        recorder = CacheRecorder(begin: makeSnapshot(), live: asyncOrigin != nil, engine: engine, file: file)
    }

    // MARK: Noting calls

    /// Runs the engine operation of a call and, while recording, notes the call, the requests it
    /// sent and what it returned (after the events it caused, which were noted as they happened).
    @inline(__always)
    func noting<T>(_ call: @autoclosure () -> CacheCall, _ returned: (T) -> RecordedReturn, _ body: () -> T) -> T {
        guard let recorder else { return body() }
        let at = engine.now
        callMark = (at, lastStepSeq)
        let value = body()
        recorder.noteSent(engine)
        recorder.append(.call(call(), returned: returned(value), at: at, ended: engine.now))
        return value
    }

    /// `noting` for an operation that throws: an error is noted as what the call returned.
    @inline(__always)
    func tryNoting<T>(_ call: @autoclosure () -> CacheCall, _ returned: (T) -> RecordedReturn,
                      _ body: () throws(CacheError) -> T) throws(CacheError) -> T {
        guard let recorder else { return try body() }
        let at = engine.now
        callMark = (at, lastStepSeq)
        do {
            let value = try body()
            recorder.noteSent(engine)
            recorder.append(.call(call(), returned: returned(value), at: at, ended: engine.now))
            return value
        } catch {
            recorder.noteSent(engine)
            recorder.append(.call(call(), returned: .error(error.message), at: at, ended: engine.now))
            throw error
        }
    }
}
