#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A source of time for the cache, in milliseconds since the Unix epoch.
///
/// The engine never reads the wall: it keeps its own `now`, which moves only
/// through `advance(to:)`. An app that embeds the cache with real time asks a
/// `CacheClock` for the time and advances the engine to it before each call.
public protocol CacheClock: Sendable {
    /// The current time in milliseconds since the Unix epoch.
    func nowMs() -> Int64
    /// Suspends until `nowMs()` reaches `ms` (live mode's timer). Throws when the task is cancelled.
    func sleep(untilMs ms: Int64) async throws
}

extension CacheClock {
    /// Sleeps on the system's monotonic clock for the time left until `ms`.
    public func sleep(untilMs ms: Int64) async throws {
        let left = ms - nowMs()
        if left > 0 { try await Task.sleep(nanoseconds: UInt64(left) * 1_000_000) }
    }
}

/// The wall clock, for apps. The only place in CacheCore that reads real time.
public struct SystemClock: CacheClock {
    public init() {}
    public func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A clock that reads a fixed value, moved by hand; for tests of adapters.
public struct FixedClock: CacheClock {
    public var ms: Int64
    public init(ms: Int64) { self.ms = ms }
    public func nowMs() -> Int64 { ms }
}
