import CacheCore
import CacheServer
import CacheShell
import Testing
import TestSupport

/// A recording of a cache on the virtual clock, written as a transcript, replays byte for byte.
@Suite struct RecordingTranscriptTests {
    /// A server with a feed and two profiles.
    static func server() -> SimulatedServer {
        let server = SimulatedServer()
        server.set("feed:home", ["posts": [["id": 1, "likes": 3], ["id": 2, "likes": 0]]], at: TimeText.virtualEpochMs)
        server.set("profile:1", ["id": 1, "name": "ann", "likes": 3], at: TimeText.virtualEpochMs)
        server.set("profile:2", ["id": 2, "name": "bo"], at: TimeText.virtualEpochMs)
        server.latencies["profile:2"] = 250
        return server
    }

    @Test func aVirtualSessionReplaysItsOwnTranscript() async throws {
        let cache = Cache(origin: Self.server())
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000, stale: 10_000))
        await cache.watch(.all)
        await cache.startRecording()
        _ = try await cache.get("feed:home")
        _ = try await cache.startRead("profile:1")
        _ = try await cache.startRead("profile:2")
        try await cache.advance(by: 120)
        _ = try await cache.read("profile:2", nowait: true)
        try await cache.advance(by: 11_000)
        _ = try await cache.read("feed:home")
        _ = try await cache.mutate(entity: "1", patch: Patch(["likes": ["$inc": 1]]))
        _ = try await cache.event(entity: "2", patch: Patch(["likes": ["$inc": 5]]))
        _ = await cache.put("note:1", "a b {c}", tags: ["x"])
        _ = await cache.invalidate(.tag("x"))
        _ = try? await cache.mutate("absent:1", patch: Patch(["a": 1]))
        _ = try await cache.validate(items: true)
        _ = try await cache.validate(items: false, wait: false)
        try await cache.advance(by: 500)
        _ = await cache.keys()
        _ = await cache.clear()
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        let check = await TranscriptCheck.replay(name: "virtual.transcript", text: text, safe: true)
        #expect(check.passed, "\(check.report())\(check.refusal ?? "")\n\(text)")
    }

    /// Paged lists (SPEC §1.1 Pages): `pages` calls, plain, refetched and without waiting, with a
    /// write to a page during a refetch and a namespace with `pages-marked-fresh`, record as
    /// `pages` calls and replay their transcript byte for byte.
    @Test func aSessionWithPagedListsReplaysItsTranscript() async throws {
        let server = Self.server()
        for n in 1...3 { server.set("feed:list@\(n)", .array([.int(Int64(n))]), at: TimeText.virtualEpochMs) }
        for list in ["page:list", "trip:list"] {
            server.set("\(list)@1", ["a"], at: TimeText.virtualEpochMs)
            server.set("\(list)@2", ["b"], at: TimeText.virtualEpochMs)
        }
        let cache = Cache(origin: server)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000, stale: 10_000))
        try await cache.defineNamespace("page", PolicyChange(ttl: 60_000, stale: 10_000, naive: [.pagesMarkedFresh]))
        try await cache.defineNamespace("trip", PolicyChange(ttl: 60_000, stale: 10_000, naive: [.nextPageDropsWrites]))
        await cache.watch(.all)
        await cache.startRecording()
        for list in ["feed:list", "page:list", "trip:list"] {
            _ = try await cache.read("\(list)@1")
            _ = try await cache.nextPage(list, nowait: true)
            _ = await cache.put("\(list)@1", ["written"])
            try await cache.advance(by: 300)
            _ = try await cache.nextPage(list)
            _ = try await cache.pages(list)
            try await cache.advance(by: 11_000)
            _ = try await cache.pages(list)
            _ = try await cache.pages(list, refetch: true, nowait: true)
            _ = await cache.put("\(list)@2", ["local"])
            try await cache.advance(by: 200)
            _ = try await cache.pages(list, refetch: true)
        }
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        #expect(text.contains("cachesh> pages feed:list --refetch --nowait\n"), "\(text)")
        #expect(text.contains("cachesh> pages trip:list --next --nowait\n"), "\(text)")
        let check = await TranscriptCheck.replay(name: "pages.transcript", text: text, safe: true)
        #expect(check.passed, "\(check.report())\(check.refusal ?? "")\n\(text)")
    }

    /// An app's recording that starts while a next page is in flight under
    /// `next-page-drops-writes` starts from a snapshot holding the earlier pages that page
    /// writes back (`pending.held_pages`): its replay loses the write made meanwhile as the app did.
    @Test func aRecordingStartedWhileANextPageHoldsTheEarlierPagesReplaysTheirWriteBack() async throws {
        let server = Self.server()
        server.set("trip:list@1", ["a"], at: TimeText.virtualEpochMs)
        server.set("trip:list@2", ["b"], at: TimeText.virtualEpochMs)
        server.latencies["trip:list@2"] = 300
        let cache = Cache(origin: server)
        try await cache.defineNamespace("trip", PolicyChange(ttl: 60_000, naive: [.nextPageDropsWrites]))
        _ = try await cache.read("trip:list@1")
        _ = try await cache.nextPage("trip:list", nowait: true)
        await cache.startRecording()
        _ = await cache.put("trip:list@1", ["written"])
        try await cache.advance(by: 300)
        let afterAnswer = await cache.peek("trip:list@1")
        #expect(afterAnswer.value == ["a"], "the app itself wrote the held page back")
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        #expect(text.contains(#""held_pages":[{"pages":[{"key":"trip:list@1","value":["a"]}],"#), "\(text)")
        #expect(text.contains("cachesh> peek trip:list@1\n"), "\(text)")
        let check = await TranscriptCheck.replay(name: "held.transcript", text: text, safe: true)
        #expect(check.passed, "\(check.report())\(check.refusal ?? "")\n\(text)")
    }

    /// Random sessions (reads of every kind overlapping, writes, mutations that fail, events,
    /// pushes, validations, policy changes, observers) record and replay identically, in both
    /// output modes.
    @Test(arguments: 0..<24)
    func randomVirtualSessionsReplayTheirTranscripts(seed: Int) async throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 17)
        let keys = ["feed:home", "feed:2", "profile:1", "profile:2", "page:1", "page:2"]
        let server = Self.server()
        for key in keys { server.latencies[key] = Int64.random(in: 0...300, using: &random) }
        server.fail(next: Int.random(in: 0...2, using: &random), key: random.pick(keys))
        server.set("page:1", "text with \"quotes\" and {brackets} #hash ", at: TimeText.virtualEpochMs)
        let cache = Cache(origin: server)
        _ = try await cache.configure(CacheConfiguration(
            namespaces: ["feed": Policy(ttl: 2_000, stale: 500, max: 2), "profile": Policy(ttl: 3_000, timeout: 200),
                         "page": Policy(ttl: 1_000, staleIfError: 5_000, purgeable: true)],
            push: ["profile-updated": PushRule(invalidate: [], refresh: ["profile:{user}"], evict: []),
                   "logout": PushRule(invalidate: ["feed:*"], refresh: [], evict: ["tag:t"])]))
        await cache.watch(random.chance(50) ? .all : .namespace("feed"))
        _ = try await cache.get("profile:1")
        await cache.startRecording()
        for _ in 0..<70 {
            let key = random.pick(keys)
            switch Int.random(in: 0..<22, using: &random) {
            case 0, 1: _ = try await cache.get(key, force: random.chance(20))
            case 2, 3, 4: _ = try await cache.startRead(key, force: random.chance(20))
            case 5: _ = try await cache.read(key, nowait: true)
            case 6: _ = await cache.peek(key)
            case 7: _ = try await cache.mget([key, random.pick(keys)])
            case 8: _ = await cache.put(key, ["id": .int(Int64.random(in: 1...2, using: &random)), "n": 1], tags: random.chance(50) ? ["t"] : [])
            case 9: _ = await cache.expire(key, in: random.chance(50) ? nil : Int64.random(in: 0...500, using: &random))
            case 10: _ = await cache.invalidate(random.pick([.key(key), .namespace("feed"), .tag("t")]))
            case 11: _ = random.chance(50) ? await cache.evict(key) : await cache.clear(namespace: random.chance(50) ? "page" : nil)
            case 12: _ = try? await cache.mutate(entity: "\(Int.random(in: 1...2, using: &random))", patch: Patch(["likes": ["$inc": 1]]))
            case 13: _ = try? await cache.mutate(key, patch: Patch(["seen": true]))
            case 14: _ = try? await cache.event(entity: "1", patch: Patch(["likes": ["$inc": 2]]), own: random.chance(30))
            case 15: _ = try? await cache.event(key, patch: Patch(["x": ["$inc": 1]]))
            case 16: _ = try? await cache.push(random.pick(["profile-updated", "logout", "unknown"]), arguments: ["user": "2"])
            case 17: _ = try await cache.validate(items: random.chance(50), wait: random.chance(50))
            case 18:
                _ = try await cache.defineNamespace(random.pick(["feed", "page"]),
                                                    PolicyChange(ttl: Int64.random(in: 500...3_000, using: &random),
                                                                 stale: random.chance(50) ? .some(nil) : 200))
            case 19:
                if random.chance(50) { await cache.watch(.key(key)) } else { _ = await cache.unwatch(.key(key)) }
            case 20: _ = await cache.keys()
            default: try await cache.advance(by: Int64.random(in: 0...400, using: &random))
            }
        }
        try await cache.advance(by: 1_000)
        let recording = try await cache.stopRecording()
        // The recording survives its file format.
        let reread = try RecordingFormat.parse(RecordingFormat.text(of: recording))
        let differing = zip(reread.records, recording.records).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(reread.records.count == recording.records.count && differing == nil,
                "record \(differing?.offset ?? -1) reads back as \(String(describing: differing?.element.0)), was \(String(describing: differing?.element.1))")
        let mode: OutputMode = seed % 3 == 0 ? .json : .human
        let text = try RecordingTranscript.text(of: recording, mode: mode)
        let check = await TranscriptCheck.replay(name: "seed-\(seed).transcript", text: text, safe: true)
        #expect(check.passed, "seed \(seed):\n\(check.report())\(check.refusal ?? "")")
    }
}
