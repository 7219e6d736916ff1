#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Timing helpers: wall-clock nanoseconds per operation, best of several rounds.
enum Timing {
    static let clock = ContinuousClock()
    /// The rounds `interleaved` alternates by default (`--rounds`).
    // nonisolated(unsafe): written once by main.swift's argument parsing, before any benchmark
    // runs, and only read after, all on the main thread (the benchmarks start no tasks or threads
    // that read it), so no two accesses can race.
    nonisolated(unsafe) static var alternatingRounds = 7

    /// Runs `body` (which performs `ops` operations and returns a checksum) `rounds` times and
    /// returns the best time per operation in nanoseconds; the checksum is consumed so the work
    /// cannot be optimised away.
    static func nsPerOp(ops: Int, rounds: Int = 3, _ body: () -> Int) -> Double {
        var best = Double.infinity
        for _ in 0..<rounds {
            var checksum = 0
            let elapsed = clock.measure { checksum = body() }
            consume(checksum)
            best = min(best, nanoseconds(elapsed) / Double(ops))
        }
        return best
    }

    /// Alternates rounds of `baseline` and `body` (each performs `ops` operations), so that both see
    /// the same load on a shared machine, and returns the best of each in ns per operation of the
    /// thread's CPU time (time spent descheduled by other jobs is not counted).
    static func interleaved(ops: Int, rounds: Int = alternatingRounds, baseline: () -> Int, _ body: () -> Int) -> (baseline: Double, body: Double) {
        var best = (baseline: Double.infinity, body: Double.infinity)
        for _ in 0..<rounds {
            var checksum = 0
            let b = cpuNanoseconds { checksum = baseline() }
            consume(checksum)
            let e = cpuNanoseconds { checksum = body() }
            consume(checksum)
            best = (min(best.baseline, b / Double(ops)), min(best.body, e / Double(ops)))
        }
        return best
    }

    /// `nsPerOp` in the thread's CPU time.
    static func cpuNsPerOp(ops: Int, rounds: Int = 3, _ body: () -> Int) -> Double {
        var best = Double.infinity
        for _ in 0..<rounds {
            var checksum = 0
            let elapsed = cpuNanoseconds { checksum = body() }
            consume(checksum)
            best = min(best, elapsed / Double(ops))
        }
        return best
    }

    /// The calling thread's CPU time spent in `body`, in nanoseconds.
    static func cpuNanoseconds(_ body: () -> Void) -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        body()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) * 1e9 + Double(end.tv_nsec - start.tv_nsec)
    }

    static func nanoseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
    }

    /// Keeps a value alive in the optimiser's eyes.
    @inline(never)
    static func consume(_ value: Int) {
        if value == 0x5EED_5EED { print("") }
    }
}

/// Prints aligned result lines.
enum Report {
    static func section(_ title: String) {
        print("\n== \(title)")
    }

    static func line(_ name: String, _ value: String, _ note: String = "") {
        let padded = name.count < 52 ? name + String(repeating: " ", count: 52 - name.count) : name
        let valuePadded = value.count < 14 ? String(repeating: " ", count: 14 - value.count) + value : value
        print("\(padded)\(valuePadded)  \(note)")
    }

    static func ns(_ value: Double) -> String {
        value >= 100 ? "\(Int(value.rounded())) ns" : "\((value * 10).rounded() / 10) ns"
    }

    static func ratio(_ value: Double) -> String { "\((value * 100).rounded() / 100)x" }
}
