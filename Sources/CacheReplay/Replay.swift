import Dispatch
import Synchronization

/// One row of a sweep: a combination and what it did.
public struct ReplayRow: Sendable, Equatable {
    public var configuration: ReplayConfiguration
    public var counters: ReplayCounters

    public init(configuration: ReplayConfiguration, counters: ReplayCounters) {
        self.configuration = configuration; self.counters = counters
    }
}

/// What a replay of one trace gave.
public struct ReplayResult: Sendable, Equatable {
    /// Requests in the trace.
    public var requests: Int
    /// Virtual time from the first request to the last (ms).
    public var duration: Int64
    /// One per configuration, in the order asked.
    public var rows: [ReplayRow]
}

/// Replays a trace through scratch caches, one per configuration, in one streaming pass: the
/// trace is read once, in batches, and every configuration's simulation takes each batch in turn.
///
/// LRU configurations without ttl or stale share one stack-distance pass when there are two or
/// more of them (their counters are the same as separate simulations', see `StackDistancePass`).
///
/// With `jobs` above 1 the passes of each batch run on that many threads (see `runInParallel`):
/// each pass still takes every batch in order, so its counters, and the rows, are those of one job.
public enum Replay {
    /// Requests per batch: big enough to amortize the calls, small enough to stay in cache.
    public static let batchSize = 4096
    /// Most jobs one replay runs at once (`jobs=`).
    public static let maxJobs = 64

    /// Replays the trace `reader` reads.
    /// - Parameters:
    ///   - stackDistance: share one Mattson pass among LRU sizes without ttl or stale.
    ///   - jobs: threads that run the passes (1 to `maxJobs`); the result is the same for any.
    ///   - interrupted: polled between batches; true stops the replay with an error.
    ///   - progress: called between batches, with the requests replayed so far (a progress line).
    /// - Throws: `ReplayError` for a bad trace (with its file and line), an unreadable file, an
    ///   interrupt, or `optimal` on a trace without next accesses.
    public static func run(_ reader: TraceReader, configurations: [ReplayConfiguration], stackDistance: Bool = true,
                           jobs: Int = 1, interrupted: () -> Bool = { false }, progress: (Int) -> Void = { _ in }) throws(ReplayError) -> ReplayResult {
        if configurations.contains(where: { $0.policy == .optimal }) && reader.options.format != .oracle {
            throw ReplayError("policy=optimal needs each request's next access: use a format=oracle trace")
        }
        var batch: [TraceRequest] = []
        batch.reserveCapacity(batchSize)
        return try drive(configurations, stackDistance: stackDistance, jobs: jobs, interrupted: interrupted, progress: progress) { () throws(ReplayError) -> [TraceRequest]? in
            try reader.next(into: &batch, count: batchSize) ? batch : nil
        } duration: { reader.lastTime }
    }

    /// Replays requests held in memory (for tests and small generated traces).
    public static func run(_ requests: [TraceRequest], configurations: [ReplayConfiguration],
                           stackDistance: Bool = true, jobs: Int = 1) -> ReplayResult {
        var offset = 0
        let result = try? drive(configurations, stackDistance: stackDistance, jobs: jobs, interrupted: { false }, progress: { _ in }) { () throws(ReplayError) -> [TraceRequest]? in
            guard offset < requests.count else { return nil }
            let end = Swift.min(requests.count, offset + batchSize)
            defer { offset = end }
            return Array(requests[offset..<end])
        } duration: { requests.last.map { $0.time - requests[0].time } ?? 0 }
        return result!
    }

    private static func drive(_ configurations: [ReplayConfiguration], stackDistance: Bool, jobs: Int, interrupted: () -> Bool,
                              progress: (Int) -> Void,
                              next: () throws(ReplayError) -> [TraceRequest]?,
                              duration: () -> Int64) throws(ReplayError) -> ReplayResult {
        let untimed = configurations.filter { $0.policy == .lru && $0.ttl == nil && $0.stale == nil }
        let shared = stackDistance && Set(untimed).count >= 2
        var passes: [any ReplayPass] = []
        if shared { passes.append(StackDistancePass(Array(Set(untimed)))) }
        var seen = Set<ReplayConfiguration>()
        for configuration in configurations where seen.insert(configuration).inserted {
            if shared && untimed.contains(configuration) { continue }
            passes.append(configuration.makePass())
        }
        var requests = 0
        if jobs > 1 && passes.count > 1 {
            requests = try runInParallel(passes, jobs: jobs, interrupted: interrupted, progress: progress, next: next)
        } else {
            while let batch = try next() {
                if interrupted() { throw interruption(after: requests) }
                requests += batch.count
                batch.withUnsafeBufferPointer { requests in
                    for pass in passes { pass.run(requests) }
                }
                progress(requests)
            }
        }
        var counters: [ReplayConfiguration: ReplayCounters] = [:]
        for pass in passes {
            for (configuration, c) in pass.finish() { counters[configuration] = c }
        }
        return ReplayResult(requests: requests, duration: duration(),
                            rows: configurations.map { ReplayRow(configuration: $0, counters: counters[$0]!) })
    }

    private static func interruption(after requests: Int) -> ReplayError {
        ReplayError("interrupted after \(requests) requests; nothing changed")
    }

    /// Replays the batches with `jobs` threads, a round per batch: the passes take the batch one
    /// at a time from a shared counter (so a thread that is done with a cheap pass takes the next
    /// one), and the first taker reads the following batch meanwhile, so reading overlaps the
    /// simulations. Every pass sees every batch, in order, as with one job; the rows are put in
    /// order afterwards from each pass's counters, so they are the same whatever `jobs` is.
    /// Memory is one job's (every pass's scratch is alive in both) and one more batch.
    ///
    /// Interrupts, progress and errors are as with one job: `interrupted` is polled before a
    /// batch runs, `progress` called after it, on the calling thread; a read error is thrown after
    /// the batch before it ran, as it would have been.
    private static func runInParallel(_ passes: [any ReplayPass], jobs: Int, interrupted: () -> Bool, progress: (Int) -> Void,
                                      next: () throws(ReplayError) -> [TraceRequest]?) throws(ReplayError) -> Int {
        // A thread more than the tasks of a round (the passes and the read) would have nothing to do.
        let threads = Swift.min(jobs, passes.count + 1)
        var requests = 0
        var current = try next()
        while let batch = current {
            if interrupted() { throw interruption(after: requests) }
            requests += batch.count
            let following = batch.withUnsafeBufferPointer { batch in
                withoutActuallyEscaping(next) { next in
                    let round = ParallelRound(passes, batch, next)
                    DispatchQueue.concurrentPerform(iterations: threads) { _ in round.work() }
                    return round.following
                }
            }
            progress(requests)
            current = try following.get()
        }
        return requests
    }
}

/// One round of `Replay.runInParallel`: a batch, the passes to run on it, and the reading of the
/// batch after it, taken as numbered tasks by the threads of `DispatchQueue.concurrentPerform`.
///
/// `@unchecked Sendable`, although the passes, `next` and `following` are not Sendable, because
/// no two threads ever touch one of them at once: each task number is taken once (`taken` is an
/// atomic counter), so one thread alone runs a given pass in the round, and one alone calls
/// `next` and writes `following`; `batch` is only read, and stays valid while the round runs
/// (`concurrentPerform` returns only when every thread has finished, inside the buffer's
/// closure). That return also orders everything a thread did in the round before what the
/// calling thread does next: reading `following`, the next round, the passes' counters.
private final class ParallelRound: @unchecked Sendable {
    let passes: [any ReplayPass]
    let batch: UnsafeBufferPointer<TraceRequest>
    let next: () throws(ReplayError) -> [TraceRequest]?
    var following: Result<[TraceRequest]?, ReplayError> = .success(nil)
    let taken = Atomic<Int>(0)

    init(_ passes: [any ReplayPass], _ batch: UnsafeBufferPointer<TraceRequest>, _ next: @escaping () throws(ReplayError) -> [TraceRequest]?) {
        self.passes = passes; self.batch = batch; self.next = next
    }

    /// Takes tasks until none is left: 0 reads the next batch (first, as it is the only one the
    /// next round waits for), 1... run the passes.
    func work() {
        while true {
            let task = taken.add(1, ordering: .relaxed).oldValue
            if task == 0 {
                following = Result { () throws(ReplayError) -> [TraceRequest]? in try next() }
            } else if task <= passes.count {
                passes[task - 1].run(batch)
            } else {
                return
            }
        }
    }
}
