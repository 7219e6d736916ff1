@_spi(Engine) import CacheCore
import Testing
import TestSupport

/// Random mixes of the app behaviours with the operations they race against: every invariant is
/// checked after each operation (the harness's engine checks them), every snapshot restores to
/// the same document, and the same seed gives the same server log (determinism).
@Suite struct AppBehaviourRandomTests {
    static let keys = ["feed:1", "feed:2", "post:1", "post:2"]

    static func run(seed: UInt64, steps: Int) throws -> (log: [RequestLogEntry], snapshot: JSONValue) {
        var g = SeededGenerator(seed: seed)
        let h = Harness(["feed": Policy(ttl: 2_000, stale: 500, max: 2, retry: 2, backoff: 200),
                         "post": Policy(ttl: 5_000, timeout: 250, retry: 1, backoff: 100)])
        h.engine.watch(.all)
        for key in keys { h.server(key, ["id": .int(Int64(key.count)), "likes": 0]) }
        for _ in 0..<steps {
            h.engine.beginUnitOfWork()
            let key = g.pick(keys)
            switch Int.random(in: 0..<17, using: &g) {
            case 0: _ = h.get(key, nowait: true)
            case 1: _ = try h.engine.mget([key, g.pick(keys)])
            case 2: _ = try? h.engine.cancel(key)
            case 3: h.engine.setActive(key, g.chance(70))
            case 4: h.engine.focus()
            case 5: try h.engine.poll(key, every: Int64.random(in: 50...400, using: &g))
            case 6: h.engine.unpoll(key)
            case 7: _ = try h.engine.mutate(key, patch: patch(#"{"likes": {"$inc": 1}}"#),
                                            options: MutationOptions(pessimistic: g.chance(30), refetch: g.chance(30)))
            case 8: h.engine.invalidate(.key(key))
            case 9: h.engine.evict(key)
            case 10: h.origin.fail(next: Int.random(in: 1...3, using: &g), key: key)
            case 11:
                h.origin.isOnline.toggle()
                if h.origin.isOnline { h.engine.originDidComeOnline() }
            case 12: h.engine.put(key, ["id": 9, "likes": 5])
            case 13: h.origin.latency = Int64.random(in: 0...300, using: &g)
            case 14: h.engine.clear(namespace: g.chance(50) ? "feed" : nil)
            case 15:
                let snapshot = h.engine.makeSnapshot()
                let other = Harness()
                try other.engine.restore(snapshot)
                #expect(other.engine.makeSnapshot() == snapshot, "seed \(seed)")
            default: try h.engine.advance(by: Int64.random(in: 1...700, using: &g))
            }
        }
        try h.engine.advance(by: 60_000)
        return (h.engine.requestLog, h.engine.makeSnapshot())
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomMixesKeepEveryInvariantAndRestoreExactly(seed: UInt64) throws {
        let first = try Self.run(seed: seed, steps: 400)
        let second = try Self.run(seed: seed, steps: 400)
        #expect(first.log == second.log)
        #expect(first.snapshot == second.snapshot)
        #expect(!first.log.isEmpty)
    }
}
