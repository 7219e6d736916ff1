import CacheCore
import Synchronization
import Testing
import TestSupport

/// The app behaviours in live mode (`Cache(fetch:mutate:clock:)`): a retry, a poll and an active
/// refetch are scheduled items and requests like any other; a cancelled fetch's read resumes at once.
@Suite struct LiveBehaviourTests {
    static let start: Int64 = 1_000_000

    @Test func aFailedFetchIsRetriedAfterItsBackoffAndTheReadGetsTheLastAnswer() async throws {
        let clock = SteppedClock(ms: Self.start)
        let calls = Mutex(0)
        struct Down: Error, CustomStringConvertible { var description: String { "down" } }
        let cache = Cache(fetch: { keys in
            let n = calls.withLock { $0 += 1; return $0 }
            if n < 3 { throw Down() }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.int(Int64(n))) })
        }, clock: clock)
        try await cache.defineNamespace("feed", PolicyChange(retry: 2, backoff: 1_000))
        async let read = cache.get("feed:home")
        // Each failure must have come back (and scheduled its retry) before the clock moves on:
        // an answer that arrives after the clock moved counts from the later time.
        #expect(await Self.failures(in: cache, reach: 1))
        clock.advance(to: Self.start + 1_000)
        #expect(await Self.failures(in: cache, reach: 2))
        clock.advance(to: Self.start + 3_000)
        let result = try await read
        #expect(result.value == 3 && result.error == nil)
        #expect(await cache.requestLog.map(\.fate) == [.failed, .failed, .stored])
    }

    /// Waits (yielding, a bounded number of times) until the server log holds `n` failed lines.
    static func failures(in cache: Cache, reach n: Int) async -> Bool {
        for _ in 0..<1_000_000 {
            if await cache.requestLog.filter({ $0.fate == .failed }).count >= n { return true }
            await Task.yield()
        }
        return false
    }

    @Test func cancellingResumesTheWaitingReadWithWhatTheCacheHas() async throws {
        let clock = SteppedClock(ms: Self.start)
        let cache = Cache(fetch: { _ in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }   // never answers
            return [:]
        }, clock: clock, requestTimeout: 60_000)
        async let read = cache.get("feed:home")
        #expect(await clock.waitForSleepers(1))
        #expect(try await cache.cancel("feed:home") == ["feed:home"])
        let result = try await read
        #expect(result.error == "cancelled" && result.state == .absent)
        #expect(await cache.requestLog.map(\.fate) == [.cancelled])
    }

    @Test func aPollFetchesOnTheClockWithoutAnotherCall() async throws {
        let clock = SteppedClock(ms: Self.start)
        let calls = Mutex(0)
        let cache = Cache(fetch: { keys in
            calls.withLock { $0 += 1 }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.int(1)) })
        }, clock: clock)
        let events = await cache.changes(in: .all)
        try await cache.poll("feed:home", every: 1_000)
        #expect(await clock.waitForSleepers(1))
        clock.advance(to: Self.start + 1_000)
        for await event in events where event.cause == .fetched { break }
        #expect(calls.withLock { $0 } == 1)
        #expect(await cache.peek("feed:home").value == 1)
    }
}
