/// One pass of a trace through a scratch cache: a configuration's counters, request by request.
protocol ReplayPass: AnyObject {
    /// Replays a batch of requests, in order, after every earlier batch.
    func run(_ batch: UnsafeBufferPointer<TraceRequest>)
    /// The counters per configuration this pass computes, once the trace has ended.
    func finish() -> [(ReplayConfiguration, ReplayCounters)]
}

/// The engine's read path (SPEC B3, B4, B6) for `get` on a server that answers at once (the
/// engine driven by `advance` to each request's time, then `get`), on a cache that holds one
/// namespace, with `Order` choosing the victim:
///
/// - fresh → hit; stale → stale hit and a refresh request, answered at once: the entry is
///   restamped at the read's time (so the next read at the same instant is fresh unless
///   `stale` is 0);
/// - expired or absent → miss: fetched and stored (an expired entry in place); a new entry first
///   evicts one when the namespace holds `max`;
/// - an entry expires (once per store) when the clock reaches its expiry while it is cached: it
///   is counted when it is refetched, evicted, or at the end of the trace, which is the count the
///   engine's expiry scan reaches by then.
///
/// Memory is O(max) (O(distinct keys) without one): a few arrays by slot and an id table, each a
/// `SlotArray` (no copy-on-write check on a write), so the simulation is noncopyable.
struct Simulation<Order: EvictionOrder & ~Copyable>: ~Copyable {
    let configuration: ReplayConfiguration
    private let limit: Int
    private let ttl: Int64?
    private let stale: Int64?
    private var table: IDTable
    private var ids: SlotArray<UInt64>
    private var staleAt: SlotArray<Int64>
    private var expiresAt: SlotArray<Int64>
    private var order = Order()
    private(set) var counters = ReplayCounters()
    private var now: Int64 = 0

    init(_ configuration: ReplayConfiguration) {
        self.configuration = configuration
        limit = configuration.max ?? .max
        ttl = configuration.ttl
        stale = configuration.stale
        let reserve = Swift.min(limit, 1 << 16)
        table = IDTable(capacity: reserve)
        ids = SlotArray(capacity: reserve)
        // The configuration's, not `self.ttl`: `||` takes its right side as a closure, and one that
        // captured `self` before every noncopyable property was set freed memory never allocated.
        let timed = configuration.ttl != nil || configuration.stale != nil
        staleAt = SlotArray(capacity: timed ? reserve : 1)
        expiresAt = SlotArray(capacity: timed ? reserve : 1)
    }

    /// `time + duration`, stopping at `Int64.max` as the engine's times do (a ttl of 100000d).
    @inline(__always)
    static func after(_ time: Int64, _ duration: Int64) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(duration)
        return overflow ? .max : sum
    }

    /// Sets an entry's stored time to `now`: its stale and expiry times follow (as `Entry.applyTimes`).
    @inline(__always)
    private mutating func stamp(_ i: Int) {
        staleAt[i] = stale.map { Self.after(now, $0) } ?? .max
        expiresAt[i] = ttl.map { Self.after(now, $0) } ?? .max
    }

    @inline(__always)
    mutating func run(_ batch: UnsafeBufferPointer<TraceRequest>) {
        if ttl == nil && stale == nil { runUntimed(batch) } else { runTimed(batch) }
    }

    /// Without ttl or stale every entry stays fresh until it is evicted: a read is a hit or a
    /// miss, and no stale or expiry time is kept (`staleAt` and `expiresAt` stay empty).
    @inline(__always)
    private mutating func runUntimed(_ batch: UnsafeBufferPointer<TraceRequest>) {
        for r in batch {
            if r.time > now { now = r.time }
            let found = table.find(r.id)
            if found >= 0 {
                order.accessed(found, next: r.nextAccess)
                counters.hits += 1
                continue
            }
            counters.misses += 1
            counters.requests += 1
            let slot: Int32
            if ids.count >= limit {
                slot = order.evict()
                let v = Int(slot)
                table.remove(ids[v])
                counters.evictions += 1
                ids[v] = r.id
            } else {
                slot = Int32(ids.count)
                ids.append(r.id)
            }
            table.insert(r.id, slot)
            order.inserted(slot, next: r.nextAccess)
        }
    }

    @inline(__always)
    private mutating func runTimed(_ batch: UnsafeBufferPointer<TraceRequest>) {
        for r in batch {
            if r.time > now { now = r.time }
            let found = table.find(r.id)
            if found >= 0 {
                let i = Int(found)
                order.accessed(found, next: r.nextAccess)
                if now >= expiresAt[i] {
                    counters.misses += 1
                    counters.requests += 1
                    counters.expirations += 1
                    stamp(i)
                } else if now >= staleAt[i] {
                    counters.staleHits += 1
                    counters.requests += 1
                    stamp(i)
                } else {
                    counters.hits += 1
                }
                continue
            }
            counters.misses += 1
            counters.requests += 1
            let slot: Int32
            if ids.count >= limit {
                slot = order.evict()
                let v = Int(slot)
                if expiresAt[v] <= now { counters.expirations += 1 }
                table.remove(ids[v])
                counters.evictions += 1
                ids[v] = r.id
            } else {
                slot = Int32(ids.count)
                ids.append(r.id)
                staleAt.append(0)
                expiresAt.append(0)
            }
            table.insert(r.id, slot)
            order.inserted(slot, next: r.nextAccess)
            stamp(Int(slot))
        }
    }

    /// Ends the trace: entries already expired are counted.
    mutating func finish() -> ReplayCounters {
        for i in 0..<expiresAt.count where expiresAt[i] <= now { counters.expirations += 1 }
        // Counted once: a second call finds nothing more to count.
        for i in 0..<expiresAt.count where expiresAt[i] <= now { expiresAt[i] = .max }
        return counters
    }
}

// A `Simulation` as a pass of a sweep: one concrete class per policy, so each simulation's loop
// is compiled for its order (a generic class's methods would reach the order through its
// witness table, a call per request).

final class LRUPass: ReplayPass {
    private var simulation: Simulation<LRUOrder>
    init(_ configuration: ReplayConfiguration) { simulation = Simulation(configuration) }
    func run(_ batch: UnsafeBufferPointer<TraceRequest>) { simulation.run(batch) }
    func finish() -> [(ReplayConfiguration, ReplayCounters)] { [(simulation.configuration, simulation.finish())] }
}

final class FIFOPass: ReplayPass {
    private var simulation: Simulation<FIFOOrder>
    init(_ configuration: ReplayConfiguration) { simulation = Simulation(configuration) }
    func run(_ batch: UnsafeBufferPointer<TraceRequest>) { simulation.run(batch) }
    func finish() -> [(ReplayConfiguration, ReplayCounters)] { [(simulation.configuration, simulation.finish())] }
}

final class SievePass: ReplayPass {
    private var simulation: Simulation<SieveOrder>
    init(_ configuration: ReplayConfiguration) { simulation = Simulation(configuration) }
    func run(_ batch: UnsafeBufferPointer<TraceRequest>) { simulation.run(batch) }
    func finish() -> [(ReplayConfiguration, ReplayCounters)] { [(simulation.configuration, simulation.finish())] }
}

final class LFUPass: ReplayPass {
    private var simulation: Simulation<LFUOrder>
    init(_ configuration: ReplayConfiguration) { simulation = Simulation(configuration) }
    func run(_ batch: UnsafeBufferPointer<TraceRequest>) { simulation.run(batch) }
    func finish() -> [(ReplayConfiguration, ReplayCounters)] { [(simulation.configuration, simulation.finish())] }
}

final class OptimalPass: ReplayPass {
    private var simulation: Simulation<OptimalOrder>
    init(_ configuration: ReplayConfiguration) { simulation = Simulation(configuration) }
    func run(_ batch: UnsafeBufferPointer<TraceRequest>) { simulation.run(batch) }
    func finish() -> [(ReplayConfiguration, ReplayCounters)] { [(simulation.configuration, simulation.finish())] }
}

extension ReplayConfiguration {
    /// The pass that replays this configuration alone.
    func makePass() -> any ReplayPass {
        switch policy {
        case .lru: LRUPass(self)
        case .fifo: FIFOPass(self)
        case .sieve: SievePass(self)
        case .lfu: LFUPass(self)
        case .optimal: OptimalPass(self)
        }
    }
}
