import CacheCore
import Synchronization

/// A clock a test moves by hand, for live-mode caches: `sleep(untilMs:)` suspends until
/// `advance(to:)` reaches its time, so timers and timeouts fire exactly when the test says.
public final class SteppedClock: CacheClock {
    private struct State {
        var now: Int64
        var sleepers: [(until: Int64, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state: Mutex<State>

    public init(ms: Int64) { state = Mutex(State(now: ms)) }

    public func nowMs() -> Int64 { state.withLock { $0.now } }

    public func sleep(untilMs ms: Int64) async throws {
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
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Waits (by yielding, bounded) until `count` tasks sleep on the clock.
    /// - Returns: false if they never did.
    public func waitForSleepers(_ count: Int) async -> Bool {
        for _ in 0..<100_000 {
            if sleeping >= count { return true }
            await Task.yield()
        }
        return false
    }

    /// Moves the clock to `ms` and wakes every sleeper whose time has come.
    public func advance(to ms: Int64) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.now = ms
            let due = state.sleepers.filter { $0.until <= ms }
            state.sleepers.removeAll { $0.until <= ms }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }
}

/// Answers an app's fetches when the test says: each call waits until `answer(_:with:)` or
/// `fail(_:_:)` names one of its keys.
public final class AnswerGates: Sendable {
    private struct State {
        var waiting: [(keys: [String], continuation: CheckedContinuation<Result<[String: JSONValue], OriginFailure>, Never>)] = []
    }
    private let state = Mutex(State())

    public init() {}

    /// The fetch function of a live cache.
    public func fetch(_ keys: [String]) async throws -> [String: JSONValue] {
        let result = await withCheckedContinuation { continuation in
            state.withLock { $0.waiting.append((keys, continuation)) }
        }
        return try result.get()
    }

    /// How many calls are waiting.
    public var count: Int { state.withLock { $0.waiting.count } }

    /// Waits (yielding, bounded) until `n` calls wait. - Returns: false if they never did.
    public func waitFor(_ n: Int) async -> Bool {
        for _ in 0..<200_000 {
            if count >= n { return true }
            await Task.yield()
        }
        return false
    }

    /// Answers the first waiting call that asks for `key`, with `values`.
    @discardableResult
    public func answer(_ key: String, with values: [String: JSONValue]) -> Bool { resolve(key, .success(values)) }

    /// Fails the first waiting call that asks for `key`.
    @discardableResult
    public func fail(_ key: String, _ message: String) -> Bool { resolve(key, .failure(OriginFailure(message))) }

    private func resolve(_ key: String, _ result: Result<[String: JSONValue], OriginFailure>) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<Result<[String: JSONValue], OriginFailure>, Never>? in
            guard let i = state.waiting.firstIndex(where: { $0.keys.contains(key) }) else { return nil }
            return state.waiting.remove(at: i).continuation
        }
        continuation?.resume(returning: result)
        return continuation != nil
    }
}
