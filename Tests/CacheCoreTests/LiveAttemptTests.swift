@testable @_spi(Engine) import CacheCore
import Testing

/// Live mode's attempts at the engine's level: a request's answers and timeouts as scheduled
/// items, in the order a replay on the virtual clock runs them.
@Suite struct LiveAttemptTests {
    /// Notes each request completion the engine reports, in order.
    final class Completions: CacheEngineDelegate {
        var reported: [(id: UInt64, retried: Bool)] = []
        func cacheEngine(_ engine: CacheEngine, observed event: CacheEvent) {}
        func cacheEngine(_ engine: CacheEngine, runScheduled token: Int) {}
        func cacheEngine(_ engine: CacheEngine, validated result: ValidationResult) {}
        func cacheEngine(_ engine: CacheEngine, completed request: RequestCompletion) { reported.append((request.id, request.retried)) }
    }

    /// A live engine (its requests deferred, timing out after 100 ms) whose `feed` namespace
    /// retries once after 20 ms.
    static func engine() throws -> (CacheEngine, Completions) {
        let origin = AsyncOrigin()
        origin.fetchFunction = { _ in [:] }
        let engine = CacheEngine(origin: origin, clockStart: 0)
        engine.liveTimeout = 100
        engine.checksInvariants = true
        let log = Completions()
        engine.delegate = log
        var feed = Policy()
        feed.retry = 1
        feed.backoff = 20
        try engine.configure(CacheConfiguration(namespaces: ["feed": feed]))
        return (engine, log)
    }

    /// The first attempt's timeout item (100 ms, its request's id) was superseded by its failure
    /// at 10 ms; the retry's answer comes at 100 ms too. It completes the request in the retry's
    /// place, after another request's timeout at 100 ms sent between the two attempts, as the
    /// replay runs them, not in the superseded item's place before it.
    @Test func aRetrysAnswerAtItsFirstAttemptsTimeoutRunsInTheRetrysPlace() throws {
        let (engine, log) = try Self.engine()
        _ = try engine.get("feed:1", force: false, nowait: true)
        _ = try engine.get("feed:2", force: false, nowait: true)
        let ids = engine.requestLog.map(\.id)
        try #require(ids.count == 2)
        let (a, b) = (ids[0], ids[1])
        try engine.advance(by: 10)
        #expect(engine.scheduleAnswer(a, .failure(OriginFailure("HTTP 503")), at: 10))
        try engine.advance(by: 20)
        #expect(engine.requestLog.map(\.id) == [a, b, a], "the retry is sent at 30 ms")
        #expect(engine.isInFlight(a, attempt: 1) && !engine.isInFlight(a, attempt: 0))
        #expect(engine.scheduleAnswer(a, .success([.value("fresh")]), at: 100))
        try engine.advance(by: 70)
        #expect(log.reported.map(\.id) == [a, b, a])
        // (feed:2's attempt fails too, and is retried.)
        #expect(log.reported.map(\.retried) == [true, true, false])
        #expect(engine.peek("feed:1").value == "fresh")
    }

    /// A request's timeout, and its retry's, run where their sending puts them, even when the
    /// engine moves past both in one step (a live cache catching up with its clock): the poll's
    /// fetch sent at 1 s times out at 1.1 s, its retry sent at 1.12 s times out at 1.22 s.
    @Test func timeoutsRunAtTheirTimesInsideALongStep() throws {
        let (engine, log) = try Self.engine()
        try engine.poll("feed:1", every: 1_000)
        try engine.advance(by: 1_250)
        #expect(engine.requestLog.map(\.atMs) == [1_000, 1_120])
        #expect(engine.requestLog.map(\.fate) == [.failed, .failed])
        #expect(log.reported.map(\.retried) == [true, false])
    }
}
