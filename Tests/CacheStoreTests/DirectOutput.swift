import CacheShell

extension Session {
    /// Has replies written straight into an output buffer, as `cachesh` runs a script (a batch's
    /// replies wait there, and for a store, for their commit): each flush hands the buffer's bytes
    /// to `flushed` and empties it; an error line first flushes what came before it, then goes to
    /// `error`. Returns the buffer, for the caller to flush at the end of the run.
    func writeRepliesDirectly(flushed: @escaping (UnsafeBufferPointer<UInt8>) -> Void,
                              error: @escaping (String) -> Void) -> OutputBuffer {
        let buffer = OutputBuffer()
        buffer.flush = {
            buffer.withBytes(flushed)
            buffer.removeAll()
        }
        directOutput = buffer
        sink = { text, isError in
            if isError {
                buffer.flush()
                error(text)
            } else {
                buffer.append(text)
            }
        }
        return buffer
    }
}
