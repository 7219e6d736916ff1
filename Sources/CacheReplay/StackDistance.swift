/// Mattson's stack-distance pass: one pass over a trace gives LRU's hits at every size up to
/// `capacity` (without ttl or stale, where LRU's contents at size m are the m most recently used keys).
///
/// A request's stack distance is the number of distinct keys used since the key's last request,
/// plus one: LRU of size m hits exactly when it is at most m. The pass keeps the `capacity` most
/// recently used keys, each at a position in a window that grows with time, and a Fenwick tree
/// over the window counts the keys used later than a position in O(log capacity). When the window
/// is full, the live positions are renumbered from 0 (O(window), once per window/2 requests at
/// least). Memory is O(capacity) (O(distinct keys) without a capacity), never per request.
struct StackDistance: ~Copyable {
    private let configurations: [ReplayConfiguration]
    /// Keys further than this are forgotten; nil: none is.
    private let capacity: Int?
    private var table: IDTable
    /// The id at each position of the window, valid where `live`.
    private var idAt: [UInt64]
    private var live: [Bool]
    /// Fenwick tree over `live`.
    private var tree: [Int32]
    /// The next position to use.
    private var cursor = 0
    /// No live position lies below this one.
    private var oldest = 0
    private var liveCount = 0
    /// `hitsAt[d]`: requests of stack distance d (1-based; index 0 unused).
    private var hitsAt: [Int]
    private var requests = 0

    init(_ configurations: [ReplayConfiguration]) {
        self.configurations = configurations
        let sizes = configurations.map(\.max)
        capacity = sizes.contains(where: { $0 == nil }) ? nil : sizes.compactMap { $0 }.max()
        // Sized for the keys a trace is likely to hold, not for `capacity`: each part grows with
        // the keys the trace has (the window at `compact`, the table as ids come, `hitsAt` as
        // distances come), so memory follows the trace. (Sized for `capacity`, `max=4294967296,1`
        // asked for 64 GiB before the first request.)
        let start = Swift.min(capacity ?? Self.startingKeys, Self.startingKeys)
        let window = Swift.max(1024, 2 * start)
        table = IDTable(capacity: start)
        idAt = Array(repeating: 0, count: window)
        live = Array(repeating: false, count: window)
        tree = Array(repeating: 0, count: window + 1)
        hitsAt = Array(repeating: 0, count: Swift.min(capacity ?? 1024, 1024) + 1)
    }

    /// The keys the pass makes room for at its start (more as the trace brings them).
    static let startingKeys = 32_768

    @inline(__always)
    private func prefix(_ position: Int) -> Int {
        // Live positions in [0, position].
        var i = position + 1, sum = 0
        while i > 0 { sum += Int(tree[i]); i &= i - 1 }
        return sum
    }

    @inline(__always)
    private mutating func add(_ position: Int, _ delta: Int32) {
        var i = position + 1
        let n = tree.count
        while i < n { tree[i] += delta; i += i & -i }
    }

    /// Renumbers the live positions from 0, in order, into a window at least twice their number.
    private mutating func compact() {
        var window = idAt.count
        if liveCount * 2 > window { window *= 2 }
        var ids: [UInt64] = Array(repeating: 0, count: window)
        var n = 0
        for p in oldest..<cursor where live[p] {
            ids[n] = idAt[p]
            table.update(idAt[p], Int32(n))
            n += 1
        }
        idAt = ids
        live = Array(repeating: false, count: window)
        for p in 0..<n { live[p] = true }
        // A Fenwick tree of n ones, built in O(window).
        tree = Array(repeating: 0, count: window + 1)
        for i in 1...window {
            if i <= n { tree[i] += 1 }
            let parent = i + (i & -i)
            if parent <= window { tree[parent] += tree[i] }
        }
        cursor = n
        oldest = 0
    }

    mutating func run(_ batch: UnsafeBufferPointer<TraceRequest>) {
        for r in batch {
            requests += 1
            let found = table.find(r.id)
            if found >= 0 {
                let p = Int(found)
                let distance = liveCount - prefix(p) + 1
                if distance >= hitsAt.count { hitsAt.append(contentsOf: repeatElement(0, count: hitsAt.count)) }
                hitsAt[distance] += 1
                live[p] = false
                add(p, -1)
                liveCount -= 1
            }
            if cursor == idAt.count { compact() }
            let p = cursor
            cursor += 1
            idAt[p] = r.id
            live[p] = true
            add(p, 1)
            liveCount += 1
            if found >= 0 { table.update(r.id, Int32(p)) } else { table.insert(r.id, Int32(p)) }
            if let capacity, liveCount > capacity {
                while !live[oldest] { oldest += 1 }
                live[oldest] = false
                add(oldest, -1)
                table.remove(idAt[oldest])
                liveCount -= 1
            }
        }
    }

    func finish() -> [(ReplayConfiguration, ReplayCounters)] {
        // cumulative[d]: hits of LRU at size d.
        var cumulative = Array(repeating: 0, count: hitsAt.count)
        for d in 1..<hitsAt.count { cumulative[d] = cumulative[d - 1] + hitsAt[d] }
        return configurations.map { configuration in
            let size = configuration.max ?? .max
            let hits = cumulative[Swift.min(size, cumulative.count - 1)]
            let misses = requests - hits
            // The cache fills to min(size, distinct keys) and never shrinks (nothing expires);
            // for size <= capacity that is min(size, keys still tracked).
            let held = Swift.min(size, liveCount)
            return (configuration, ReplayCounters(requests: misses, hits: hits, staleHits: 0, misses: misses,
                                                  evictions: misses - held, expirations: 0))
        }
    }
}

/// A `StackDistance` as a pass of a sweep.
final class StackDistancePass: ReplayPass {
    private var state: StackDistance
    init(_ configurations: [ReplayConfiguration]) { state = StackDistance(configurations) }
    func run(_ batch: UnsafeBufferPointer<TraceRequest>) { state.run(batch) }
    func finish() -> [(ReplayConfiguration, ReplayCounters)] { state.finish() }
}
