import Dispatch

/// The engines of several caches on one virtual clock (the shell's clients, SPEC §2 Clients):
/// their scheduled items run in one order, (due time, the engine's place in the group, its own
/// sequence), whichever engine's command runs the clock; and every engine's clock reads the same
/// time once a command ends.
///
/// Each engine runs its own items (`runNext`); before it runs one, it asks the group to run the
/// other engines' items that come before it in that order (``runOthers(before:place:of:)``),
/// and when it sets its clock at the end of an `advance` or a wait, the others follow
/// (``follow(_:)``). An engine alone (no group) pays one nil check per scheduled item.
///
// Unchecked Sendable: a group is made and used only by caches made with
// `Cache.makeClient()`, which share one serial executor (`CacheExecutor`): every access to
// its fields happens on that executor's queue, from code isolated to one of those caches, so no
// two accesses ever overlap (`checkIsolated` asserts the queue in debug builds).
final class ClockGroup: @unchecked Sendable {
    /// An engine of the group, held weakly: its cache owns it (and it owns the group), so a
    /// group never keeps an engine alive after its cache is gone.
    private struct Member {
        weak var engine: CacheEngine?
    }

    /// The engines in the order they joined: an engine's index is its place.
    private var members: [Member] = []
    /// The engines still alive, in the order they joined.
    var engines: [CacheEngine] { members.compactMap(\.engine) }
    /// The queue every engine of the group runs on.
    let queue: DispatchQueue
    /// The group is running other engines' items for one of them: those run with no group
    /// hook of their own (the order is already the group's).
    private var draining = false

    init(queue: DispatchQueue) { self.queue = queue }

    /// Adds `engine` last; returns its place.
    func join(_ engine: CacheEngine) -> Int {
        checkIsolated()
        members.append(Member(engine: engine))
        return members.count - 1
    }

    private func checkIsolated() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// Runs, in the group's order, every item of the engines other than `engine` that comes
    /// before an item of `engine`'s at `time` (`place`: `engine`'s place; `Int.max` takes every
    /// item due at or before `time`), then brings their clocks up to `time`.
    /// - Throws: what an item run throws (the runaway limit, a budget), its engine's clock at it.
    /// - Complexity: O(k · n) for k items run over n engines.
    func runOthers(before time: Int64, place: Int, of engine: CacheEngine) throws(CacheError) {
        guard !draining else { return }
        checkIsolated()
        draining = true
        defer { draining = false }
        while true {
            var best: (engine: CacheEngine, time: Int64)?
            for (index, member) in members.enumerated() {
                guard let other = member.engine, other !== engine, let due = other.nextDueTime,
                      (due, index) < (time, place) else { continue }
                if best == nil || due < best!.time { best = (other, due) }
            }
            guard let (next, due) = best else { break }
            try next.runNext(upTo: due)
        }
        for other in engines where other !== engine && other.now < time { other.now = time }
    }

    /// Brings every other engine's clock up to `engine`'s (a wait for an answer ended there).
    func follow(_ engine: CacheEngine) {
        guard !draining else { return }
        checkIsolated()
        for other in engines where other !== engine && other.now < engine.now { other.now = engine.now }
    }
}
