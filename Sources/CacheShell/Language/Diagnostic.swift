/// A problem with a user's input, and the byte where it is.
///
/// Diagnostics are values: whoever holds the ``SourceFile`` turns one into the
/// line a user reads with ``SourceFile/render(_:)``.
public struct Diagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// One sentence naming the problem, without location or `error:` prefix.
    public var message: String
    /// Byte offset into the source text of the problem.
    public var offset: Int

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { message }
}
