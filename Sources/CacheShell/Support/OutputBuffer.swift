/// Bytes on their way to standard output, shared by the executable's terminal (which writes
/// them out) and a session (which writes replies straight into them).
public final class OutputBuffer {
    /// The bytes not written out yet.
    public var bytes: [UInt8] = []
    /// Writes `bytes` out and empties them; set by the owner of the file descriptor.
    public var flush: () -> Void = {}

    /// The size past which a writer calls ``flush``, so memory stays bounded.
    public static let flushSize = 1 << 16

    public init() {
        bytes.reserveCapacity(Self.flushSize + 4096)
    }
}
