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
    /// A cache of the group and its engine. The cache is held weakly, so that a group never
    /// keeps a cache alive; while the group works on an engine it holds that engine's cache
    /// strongly (``live(_:)``), so that a cache let go meanwhile (by a delegate called from the
    /// item run, or by another thread) goes only when the group is done with it, never while its
    /// engine runs an item and reports to it. A weak load is atomic: on any thread, it gives
    /// either the cache, held, or nil once the cache has begun to go.
    private struct Member {
        weak var cache: Cache?
        /// The cache's engine: a `let` of the cache, so alive whenever the cache is.
        /// Unowned and unsafe: read only while the cache is held (``live(_:)``), which proves it
        /// alive; a strong reference here would keep an engine past its cache, and an `unowned`
        /// one costs a reference count check on each load.
        unowned(unsafe) let engine: CacheEngine
    }

    /// A member's cache, held, and its engine; nil once the cache has begun to go.
    private func live(_ member: Member) -> (cache: Cache, engine: CacheEngine)? {
        guard let cache = member.cache else { return nil }
        return (cache, member.engine)
    }

    /// The members in the order they joined: a member's index is its engine's place.
    private var members: [Member] = []
    /// The queue every engine of the group runs on.
    let queue: DispatchQueue
    /// The group is running other engines' items for one of them: those run with no group
    /// hook of their own (the order is already the group's).
    private var draining = false

    init(queue: DispatchQueue) { self.queue = queue }

    /// Adds `cache`, whose engine is `engine`, last; returns the engine's place.
    func join(_ cache: Cache, engine: CacheEngine) -> Int {
        checkIsolated()
        members.append(Member(cache: cache, engine: engine))
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
            var best: (cache: Cache, engine: CacheEngine, time: Int64)?
            for (index, member) in members.enumerated() {
                guard let (cache, other) = live(member), other !== engine, let due = other.nextDueTime,
                      (due, index) < (time, place) else { continue }
                if best == nil || due < best!.time { best = (cache, other, due) }
            }
            guard let next = best else { break }
            // `next.cache` is held until the item has run (see `Member`).
            _ = try withExtendedLifetime(next.cache) { () throws(CacheError) in try next.engine.runNext(upTo: next.time) }
        }
        bringUp(to: time, except: engine)
    }

    /// Brings every other engine's clock up to `engine`'s (a wait for an answer ended there).
    func follow(_ engine: CacheEngine) {
        guard !draining else { return }
        checkIsolated()
        bringUp(to: engine.now, except: engine)
    }

    /// Sets the clock of every engine but `engine` that reads less than `time` to `time`.
    private func bringUp(to time: Int64, except engine: CacheEngine) {
        for member in members {
            guard let (cache, other) = live(member), other !== engine, other.now < time else { continue }
            withExtendedLifetime(cache) { other.now = time }
        }
    }
}
