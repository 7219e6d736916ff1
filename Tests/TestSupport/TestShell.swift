import CacheCore
import CacheShell

/// A shell session on a cache of its own, for tests: each call is one hop onto the cache, where
/// the session lives.
///
/// Safety of `@unchecked Sendable`: `session` is written once, inside `make`, before `init` returns,
/// and read only inside `enter`; both run isolated to `cache`, so every access to the session is
/// serialized by the cache actor. Nothing else is mutable.
public final class TestShell: @unchecked Sendable {
    public let cache: Cache
    private var session: Session?

    public init(options: SessionOptions = SessionOptions()) async {
        cache = Cache()
        await Self.make(cache, self, options)
    }

    private static func make(_ cache: isolated Cache, _ shell: TestShell, _ options: SessionOptions) {
        shell.session = Session(cache: cache, options: options)
    }

    /// Runs `body` with the session, isolated to its cache.
    public func run<T: Sendable>(_ body: @Sendable (Session, isolated Cache) throws -> T) async rethrows -> T {
        try await Self.enter(cache, self, body)
    }

    private static func enter<T: Sendable>(_ cache: isolated Cache, _ shell: TestShell,
                                           _ body: @Sendable (Session, isolated Cache) throws -> T) rethrows -> T {
        try body(shell.session!, cache)
    }

    /// Runs typed commands (errors print as `error: ...`) and returns everything they printed.
    public func typed(_ text: String) async -> String {
        await run { session, cache in session.runTyped(text, on: cache) }
    }

    /// The whole session as a pretty snapshot document.
    public func snapshotText() async -> String {
        await run { session, cache in session.makeSnapshot(on: cache).prettyText() }
    }
}

extension TestShell {
    /// A command was rejected (the exit status would be 1).
    public var anyFailed: Bool { get async { await run { session, _ in session.anyFailed } } }

    /// `quit` ran, or a failure stopped the session.
    public var quitRequested: Bool { get async { await run { session, _ in session.quitRequested } } }

    /// Runs a source as a script does (errors name the file and line) and returns what it printed,
    /// in order, with whether each piece is an error.
    public func script(_ source: SourceFile, semicolonsSeparate: Bool = false) async -> [(text: String, isError: Bool)] {
        let pieces = await run { session, cache in
            session.run(source, semicolonsSeparate: semicolonsSeparate, on: cache)
            return session.takeOutput().map { Piece(text: $0.text, isError: $0.isError) }
        }
        return pieces.map { ($0.text, $0.isError) }
    }

    /// Everything a script printed, as one text.
    public func scriptText(_ source: SourceFile, semicolonsSeparate: Bool = false) async -> String {
        await script(source, semicolonsSeparate: semicolonsSeparate).map(\.text).joined()
    }

    private struct Piece: Sendable {
        var text: String
        var isError: Bool
    }
}
