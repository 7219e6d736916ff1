import CacheCore
import Foundation
import Synchronization
import Testing
import TestSupport

/// Live mode finishes its own work: due items run at their time on the clock, and a call that
/// throws or never answers is a failure with a message, never a hang.
@Suite struct LiveModeTests {
    static let start: Int64 = 1_000_000

    @Test func aFetchThatNeverAnswersFailsAtItsTimeout() async throws {
        let clock = SteppedClock(ms: Self.start)
        let cache = Cache(fetch: { _ in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }   // never answers
            return [:]
        }, clock: clock, requestTimeout: 5_000)
        async let read = cache.get("feed:home")
        // The timeout task and the cache's timer sleep on the clock once the request is sent.
        #expect(await clock.waitForSleepers(1))
        clock.advance(to: Self.start + 5_000)
        let result = try await read
        #expect(result.error == "timed out after 5s")
        #expect(result.value == nil)
        #expect(await cache.requestLog.map(\.fate) == [.failed])
    }

    @Test func aNamespaceTimeoutWinsOverTheDefault() async throws {
        let clock = SteppedClock(ms: Self.start)
        let cache = Cache(fetch: { _ in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            return [:]
        }, clock: clock, requestTimeout: 60_000)
        try await cache.defineNamespace("feed", PolicyChange(timeout: 2_000))
        async let read = cache.get("feed:home")
        #expect(await clock.waitForSleepers(1))
        clock.advance(to: Self.start + 2_000)
        #expect(try await read.error == "timed out after 2s")
    }

    @Test func aFetchThatThrowsIsAFailureWithItsMessage() async throws {
        struct Offline: Error, CustomStringConvertible { var description: String { "the network is offline" } }
        let cache = Cache(fetch: { _ in throw Offline() }, clock: SteppedClock(ms: Self.start))
        let result = try await cache.get("feed:home")
        #expect(result.error == "the network is offline")
        #expect(result.state == .absent)
    }

    @Test func expiriesReachObserversWithoutAnotherCall() async throws {
        let clock = SteppedClock(ms: Self.start)
        let cache = Cache(fetch: { keys in Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.int(1)) }) },
                          clock: clock)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000))
        let events = await cache.changes(in: .all)
        await cache.put("feed:home", 1)
        #expect(await clock.waitForSleepers(1), "the cache sleeps until the entry expires")
        clock.advance(to: Self.start + 60_000)
        var seen: [String] = []
        for await event in events {
            seen.append("\(event.cause.rawValue) \(event.key)")
            if event.cause == .expired { break }
        }
        #expect(seen == ["stored feed:home", "expired feed:home"])
    }

    /// One run on the real clock: an answer that arrives after 50 ms is delivered without the app
    /// calling again, and the awaited read sees it. No upper bound on the time but the test's
    /// limit: other suites running beside it can hold the machine for minutes (the request's
    /// timeout is as long, so that only a hang fails the test).
    @Test(.timeLimit(.minutes(20)))
    func aRealClockDeliversTheAnswerToTheWaitingRead() async throws {
        let cache = Cache(fetch: { keys in
            // The server's latency: the answer arrives 50 ms later on a Dispatch timer.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { done.resume() }
            }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.string("late")) })
        }, requestTimeout: 20 * 60_000)
        let started = ContinuousClock.now
        let result = try await cache.get("feed:home")
        let elapsed = ContinuousClock.now - started
        #expect(result.value == "late" && result.source == .server)
        #expect(elapsed >= .milliseconds(45), "the read waited for the answer")
    }
}
