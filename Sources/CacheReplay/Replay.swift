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
public enum Replay {
    /// Requests per batch: big enough to amortize the calls, small enough to stay in cache.
    public static let batchSize = 4096

    /// Replays the trace `reader` reads.
    /// - Parameters:
    ///   - stackDistance: share one Mattson pass among LRU sizes without ttl or stale.
    ///   - interrupted: polled between batches; true stops the replay with an error.
    ///   - progress: called between batches, with the requests replayed so far (a progress line).
    /// - Throws: `ReplayError` for a bad trace (with its file and line), an unreadable file, an
    ///   interrupt, or `optimal` on a trace without next accesses.
    public static func run(_ reader: TraceReader, configurations: [ReplayConfiguration], stackDistance: Bool = true,
                           interrupted: () -> Bool = { false }, progress: (Int) -> Void = { _ in }) throws(ReplayError) -> ReplayResult {
        if configurations.contains(where: { $0.policy == .optimal }) && reader.options.format != .oracle {
            throw ReplayError("policy=optimal needs each request's next access: use a format=oracle trace")
        }
        var batch: [TraceRequest] = []
        batch.reserveCapacity(batchSize)
        return try drive(configurations, stackDistance: stackDistance, interrupted: interrupted, progress: progress) { () throws(ReplayError) -> [TraceRequest]? in
            try reader.next(into: &batch, count: batchSize) ? batch : nil
        } duration: { reader.lastTime }
    }

    /// Replays requests held in memory (for tests and small generated traces).
    public static func run(_ requests: [TraceRequest], configurations: [ReplayConfiguration],
                           stackDistance: Bool = true) -> ReplayResult {
        var offset = 0
        let result = try? drive(configurations, stackDistance: stackDistance, interrupted: { false }, progress: { _ in }) { () throws(ReplayError) -> [TraceRequest]? in
            guard offset < requests.count else { return nil }
            let end = Swift.min(requests.count, offset + batchSize)
            defer { offset = end }
            return Array(requests[offset..<end])
        } duration: { requests.last.map { $0.time - requests[0].time } ?? 0 }
        return result!
    }

    private static func drive(_ configurations: [ReplayConfiguration], stackDistance: Bool, interrupted: () -> Bool,
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
        while let batch = try next() {
            if interrupted() { throw ReplayError("interrupted after \(requests) requests; nothing changed") }
            requests += batch.count
            batch.withUnsafeBufferPointer { requests in
                for pass in passes { pass.run(requests) }
            }
            progress(requests)
        }
        var counters: [ReplayConfiguration: ReplayCounters] = [:]
        for pass in passes {
            for (configuration, c) in pass.finish() { counters[configuration] = c }
        }
        return ReplayResult(requests: requests, duration: duration(),
                            rows: configurations.map { ReplayRow(configuration: $0, counters: counters[$0]!) })
    }
}
