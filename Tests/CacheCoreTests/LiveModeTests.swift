import CacheCore
import Foundation
import Synchronization
import Testing

/// A clock moved by the test: `sleep(untilMs:)` suspends until `advance(to:)` passes its time.
final class ManualClock: CacheClock {
    private struct State {
        var now: Int64
        var sleepers: [(until: Int64, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state: Mutex<State>

    init(ms: Int64) { state = Mutex(State(now: ms)) }

    func nowMs() -> Int64 { state.withLock { $0.now } }

    func sleep(untilMs ms: Int64) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.now >= ms { return true }
                state.sleepers.append((ms, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// The number of tasks sleeping on this clock.
    var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Moves the clock and wakes every sleeper whose time has come.
    func advance(to ms: Int64) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.now = ms
            let due = state.sleepers.filter { $0.until <= ms }
            state.sleepers.removeAll { $0.until <= ms }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits (by yielding, bounded) until `count` tasks sleep on the clock.
    func waitForSleepers(_ count: Int) async -> Bool {
        for _ in 0..<100_000 {
            if sleeping >= count { return true }
            await Task.yield()
        }
        return false
    }
}

/// Live mode finishes its own work: due items run at their time on the clock, and a call that
/// throws or never answers is a failure with a message, never a hang.
@Suite struct LiveModeTests {
    static let start: Int64 = 1_000_000

    @Test func aFetchThatNeverAnswersFailsAtItsTimeout() async throws {
        let clock = ManualClock(ms: Self.start)
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
        let clock = ManualClock(ms: Self.start)
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
        let cache = Cache(fetch: { _ in throw Offline() }, clock: ManualClock(ms: Self.start))
        let result = try await cache.get("feed:home")
        #expect(result.error == "the network is offline")
        #expect(result.state == .absent)
    }

    @Test func expiriesReachObserversWithoutAnotherCall() async throws {
        let clock = ManualClock(ms: Self.start)
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
    /// limit: other suites running beside it can hold the machine for tens of seconds.
    @Test(.timeLimit(.minutes(5)))
    func aRealClockDeliversTheAnswerToTheWaitingRead() async throws {
        let cache = Cache(fetch: { keys in
            // The server's latency: the answer arrives 50 ms later on a Dispatch timer.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { done.resume() }
            }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.string("late")) })
        }, requestTimeout: 60_000)
        let started = ContinuousClock.now
        let result = try await cache.get("feed:home")
        let elapsed = ContinuousClock.now - started
        #expect(result.value == "late" && result.source == .server)
        #expect(elapsed >= .milliseconds(45), "the read waited for the answer")
    }
}
