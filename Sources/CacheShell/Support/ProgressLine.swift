#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A line of progress for long work on a terminal (SPEC §6, `replay`): nothing for the first
/// second of wall time, then the line, redrawn at most four times a second, and erased when the
/// work ends (``end()``), whether it finished, failed or was interrupted. Where it goes is the
/// session's `progress` option, set by the executable only when standard error is a terminal:
/// it is never part of a command's output, of a pipe's, a recording's or a transcript's.
struct ProgressLine {
    /// Shows a line (replacing the one shown), or erases it (nil).
    let show: @Sendable (String?) -> Void
    /// A monotonic clock, in nanoseconds.
    let now: () -> UInt64
    private let start: UInt64
    private var drawn: UInt64?

    static let delay: UInt64 = 1_000_000_000
    static let interval: UInt64 = 250_000_000

    init(show: @escaping @Sendable (String?) -> Void, now: @escaping () -> UInt64 = ProgressLine.monotonic) {
        self.show = show
        self.now = now
        start = now()
    }

    /// Shows `text` if a second has passed since the start and a quarter of one since the last
    /// line; `text` is only made then.
    mutating func update(_ text: @autoclosure () -> String) {
        let t = now()
        guard t &- start >= Self.delay else { return }
        if let drawn, t &- drawn < Self.interval { return }
        drawn = t
        show(text())
    }

    /// Erases the line, if one was shown.
    mutating func end() {
        if drawn != nil { show(nil) }
        drawn = nil
    }

    static func monotonic() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
