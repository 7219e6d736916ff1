import CacheCore
import CacheServer
import Synchronization
import Testing

/// Caches made with `Cache.makeClient()` share one virtual clock (SPEC §2 Clients): their
/// scheduled work runs in (due time, the order the caches were made in, sequence) order,
/// whichever cache moves the clock, and every clock reads the same time after.
@Suite struct ClockGroupTests {
    /// Notes each scheduled token as `NAME TOKEN@ELAPSED` in a log the caches share.
    final class Recorder: CacheDelegate, Sendable {
        let name: String
        let log: Mutex<[String]>
        init(_ name: String) {
            self.name = name
            log = Mutex([])
        }
        /// The log the scheduled work of every cache goes to (the first recorder's).
        let sharedWith = Mutex<Recorder?>(nil)
        func cache(_ cache: isolated Cache, observed event: CacheEvent) {}
        func cache(_ cache: isolated Cache, validated result: ValidationResult) {}
        func cache(_ cache: isolated Cache, runScheduled token: Int) {
            let line = "\(name) \(token)@\(cache.now - cache.clockStart)"
            let target = sharedWith.withLock { $0 } ?? self
            target.log.withLock { $0.append(line) }
        }
    }

    @Test func itemsRunByTimeThenByTheOrderTheCachesWereMadeWhoeverAdvances() {
        let a = Cache()
        let first = Recorder("a"), second = Recorder("b"), third = Recorder("c")
        second.sharedWith.withLock { $0 = first }
        third.sharedWith.withLock { $0 = first }
        let clocks = a.withIsolation { a in
            a.setDelegate(first)
            let b = a.makeClient()
            let c = a.makeClient()
            a.withClient(b) { $0.setDelegate(second) }
            a.withClient(c) { $0.setDelegate(third) }
            a.withClient(c) { c in c.schedule(after: 10, token: 1); c.schedule(after: 5, token: 2) }
            a.withClient(b) { b in b.schedule(after: 10, token: 3) }
            a.schedule(after: 10, token: 4)
            a.schedule(after: 20, token: 5)
            // c moves the clock: a's and b's items run in their places too.
            a.withClient(c) { c in try! c.advance(by: 30) }
            return [a.now, a.withClient(b) { $0.now }, a.withClient(c) { $0.now }].map { $0 - a.clockStart }
        }
        #expect(clocks == [30, 30, 30])
        #expect(first.log.withLock { $0 } == ["c 2@5", "a 4@10", "b 3@10", "c 1@10", "a 5@20"])
    }

    @Test func aCacheAloneIsUnchanged() {
        let a = Cache()
        let recorder = Recorder("a")
        a.withIsolation { a in
            a.setDelegate(recorder)
            a.schedule(after: 10, token: 1)
            a.schedule(after: 5, token: 2)
            try! a.advance(by: 10)
        }
        #expect(recorder.log.withLock { $0 } == ["a 2@5", "a 1@10"])
    }

    /// A cache held only weakly.
    struct Weak: ~Copyable {
        weak var cache: Cache?
    }

    /// Holds a client (the only strong reference to it) and lets it go from its own delegate
    /// on the first change it hears; notes each change heard, and whether the client was still
    /// there then.
    final class Dropper: CacheDelegate, Sendable {
        let held = Mutex<Cache?>(nil)
        let watched = Mutex(Weak())
        let log = Mutex<[String]>([])
        func cache(_ cache: isolated Cache, observed event: CacheEvent) {}
        func cache(_ cache: isolated Cache, validated result: ValidationResult) {}
        func cache(_ cache: isolated Cache, runScheduled token: Int) {}
        func cache(_ cache: isolated Cache, noted event: CacheEvent) {
            held.withLock { $0 = nil }
            let stillThere = watched.withLock { $0.cache != nil }
            // Read only when it is still there: else `cache` would be a cache that has gone.
            log.withLock { $0.append(stillThere ? "\(event.cause.rawValue) \(event.key)@\(cache.now - cache.clockStart)" : "gone") }
        }
    }

    /// A client let go (its last reference but the group's dropped) while another cache's
    /// `advance` runs the client's item stays until that item has run, then goes: its engine
    /// never runs on reporting to a cache that is gone, whichever thread lets it go.
    @Test func aClientLetGoWhileTheGroupRunsItsItemGoesOnlyAfterTheItem() {
        let a = Cache()
        let dropper = Dropper()
        let clocks = a.withIsolation { a in
            dropper.held.withLock { $0 = a.makeClient() }
            dropper.watched.withLock { $0.cache = dropper.held.withLock { $0 } }
            a.withClient(dropper.held.withLock { $0! }) { b in
                let server = SimulatedServer()
                server.latency = 10
                server.set("n:1", .int(1), at: b.now)
                server.set("n:2", .int(2), at: b.now)
                b.useOrigin(server)
                b.setDelegate(dropper)
                b.reportsAllChanges = true
                _ = try! b.mget(["n:1", "n:2"], nowait: true)
            }
            // One item of b's, its fetch's answer, stores both keys; its first change lets b go.
            try! a.advance(by: 20)
            // The group goes on without it: a client made after runs in its place.
            let c = a.makeClient()
            let recorder = Recorder("c")
            a.withClient(c) { c in c.setDelegate(recorder); c.schedule(after: 5, token: 3) }
            try! a.advance(by: 10)
            return (a.now - a.clockStart, a.withClient(c) { $0.now - $0.clockStart }, recorder.log.withLock { $0 })
        }
        #expect(dropper.log.withLock { $0 } == ["fetched n:1@10", "fetched n:2@10"])
        #expect(dropper.watched.withLock { $0.cache == nil })
        #expect(clocks.0 == 30 && clocks.1 == 30 && clocks.2 == ["c 3@25"])
    }
}
