import CacheCore
import CacheShell
import Foundation
import Synchronization
import Testing
import TestSupport

/// A live cache's recording, written as a transcript, replays on the virtual clock: answers in
/// the order they arrived (also when one arrives in a millisecond the cache had already moved
/// through since sending it), timeouts at their time, awaited reads overlapping.
@Suite struct LiveRecordingTests {
    static let start: Int64 = 1_780_000_000_000

    /// Waits (yielding, bounded) until `done` holds.
    static func settle(_ done: () async -> Bool) async -> Bool {
        for _ in 0..<20_000 {
            if await done() { return true }
            await Task.yield()
        }
        return false
    }

    static func fates(_ cache: Cache) async -> [RequestLogEntry.Fate] { await cache.requestLog.map(\.fate) }

    /// The `server next` commands of a transcript, in order.
    static func answers(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.hasPrefix("cachesh> server next") }
    }

    /// Replays `text` on the virtual clock `times` times, expecting each replay to match it byte
    /// for byte; one that does not is reported, and the transcript kept in the temporary
    /// directory as `name`, for a look.
    static func expectReplays(_ text: String, name: String, times: Int = 1,
                              sourceLocation: SourceLocation = #_sourceLocation) async {
        for run in 1...times {
            let check = await TranscriptCheck.replay(name: name, text: text, safe: true)
            #expect(check.passed, "replay \(run):\n\(check.report())\(check.refusal ?? "")\n\(text)", sourceLocation: sourceLocation)
            if !check.passed {
                try? text.write(toFile: FileManager.default.temporaryDirectory.appendingPathComponent(name).path,
                                atomically: true, encoding: .utf8)
                return
            }
        }
    }

    @Test func answersInTheOrderTheyArrivedReplayExactly() async throws {
        let clock = SteppedClock(ms: Self.start)
        let gates = AnswerGates()
        let likes = Mutex(0)
        let cache = Cache(fetch: { try await gates.fetch($0) }, mutate: { request in
            likes.withLock { $0 += 1 }
            throw OriginFailure("HTTP 500")
        }, clock: clock, requestTimeout: 5_000)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000, stale: 20))
        let events = await cache.changes(in: .all)
        let seen = Task { var n = 0; for await _ in events { n += 1 }; return n }
        await cache.startRecording()

        // Two reads awaited together; the profile answers first.
        async let feed = cache.get("feed:home")
        async let profile = cache.get("profile:1")
        #expect(await gates.waitFor(2))
        clock.advance(to: Self.start + 30)
        gates.answer("profile:1", with: ["profile:1": ["id": 1, "likes": 3]])
        #expect(try await profile.source == .server)
        clock.advance(to: Self.start + 80)
        gates.answer("feed:home", with: ["feed:home": ["posts": [["id": 1, "likes": 3]]]])
        #expect(try await feed.value == ["posts": [["id": 1, "likes": 3]]])

        // Two requests; at their answers' millisecond the cache serves a call before they arrive:
        // a replay would run them before that call, so they take effect a millisecond later (in
        // request order, as a replay runs them), and the transcript says so.
        clock.advance(to: Self.start + 200)
        async let x = cache.get("page:1")
        async let y = cache.get("page:2")
        #expect(await gates.waitFor(2))
        clock.advance(to: Self.start + 210)
        #expect(await cache.peek("page:1").state == .absent)
        gates.answer("page:2", with: [:])
        // Delivered: its completion is now due at the next millisecond, not at its timeout.
        #expect(await Self.settle { await cache.pendingWork().contains { $0.dueAt == Self.start + 211 } })
        gates.answer("page:1", with: ["page:1": "one"])
        #expect(await Self.settle { await cache.pendingWork().filter { $0.dueAt == Self.start + 211 }.count == 2 })
        clock.advance(to: Self.start + 211)
        #expect(try await x.value == "one")
        #expect(try await y.error == "not found")

        // The feed is stale: served, refreshed in the background; a like fails and rolls back; a
        // read that never gets an answer times out.
        clock.advance(to: Self.start + 400)
        #expect(try await cache.get("feed:home").state == .stale)
        _ = try await cache.mutate(entity: "1", patch: Patch(["likes": ["$inc": 1]]))
        #expect(await Self.settle {
            let fates = await Self.fates(cache)
            return fates.count == 6 && fates[5] == .failed
        })
        async let lost = cache.get("page:3")
        #expect(await gates.waitFor(2))
        clock.advance(to: Self.start + 450)
        gates.answer("feed:home", with: ["feed:home": ["posts": [["id": 1, "likes": 4]]]])
        #expect(await Self.settle {
            let fates = await Self.fates(cache)
            return fates[4] == .stored
        })
        _ = try await cache.event(entity: "1", patch: Patch(["likes": ["$inc": 1]]))
        clock.advance(to: Self.start + 5_400)
        #expect(try await lost.error == "timed out after 5s")
        _ = await cache.clear()
        clock.advance(to: Self.start + 5_500)
        let recording = try await cache.stopRecording()
        seen.cancel()

        #expect(likes.withLock { $0 } == 1)
        let text = try RecordingTranscript.text(of: recording)
        #expect(text.contains("server next page:2 latency=11ms --not-found"), "\(text)")
        #expect(text.contains("server next page:1 latency=11ms value=\"one\""), "\(text)")
        #expect(text.contains("server next page:3 latency=5s error=\"timed out after 5s\""), "\(text)")
        await Self.expectReplays(text, name: "live.transcript")
    }

    /// The cache's timer wakes late (a busy machine, an app back from the background) and it
    /// catches up: a poll due on the way sends its fetch at its own time, and that fetch times
    /// out where its sending time says, inside the catch-up, as on the virtual clock (the app's
    /// fetch is not called for it: it was over before the call could start). A read right after
    /// sends a fetch of its own, as in the replay, instead of joining one the replay has already
    /// failed.
    @Test func aRequestSentWhileTheCacheCatchesUpTimesOutAtItsTime() async throws {
        let clock = SteppedClock(ms: Self.start)
        let gates = AnswerGates()
        let cache = Cache(fetch: { try await gates.fetch($0) }, clock: clock, requestTimeout: 100)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000))
        await cache.startRecording()
        try await cache.poll("feed:1", every: 1_000)
        #expect(await clock.waitForSleepers(1))
        // Due at 1 s, run at 1.25 s: the poll's fetch was sent at 1 s and timed out at 1.1 s.
        clock.advance(to: Self.start + 1_250)
        #expect(await Self.settle { await Self.fates(cache) == [.failed] })
        #expect(gates.count == 0)
        async let read = cache.get("feed:1")
        #expect(await gates.waitFor(1))
        clock.advance(to: Self.start + 1_300)
        #expect(gates.answer("feed:1", with: ["feed:1": "fresh"]))
        let result = try await read
        #expect(result.value == "fresh" && result.source == .server)
        let recording = try await cache.stopRecording()

        let text = try RecordingTranscript.text(of: recording)
        #expect(text.contains("server next feed:1 latency=100ms error=\"timed out after 100ms\"\nserver: queued an answer for feed:1\ncachesh> advance 1s250ms"), "\(text)")
        await Self.expectReplays(text, name: "catch-up.transcript")
    }

    /// A fetch that fails is retried (`retry=2`): each attempt is a request of its own in the
    /// transcript, with its own answer and latency; each times out from its own start; the late
    /// answer of an attempt that timed out is not taken for the next attempt's.
    @Test func retriedRequestsReplayAttemptByAttempt() async throws {
        let clock = SteppedClock(ms: Self.start)
        let gates = AnswerGates()
        let cache = Cache(fetch: { try await gates.fetch($0) }, clock: clock, requestTimeout: 100)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000, retry: 2, backoff: 200))
        await cache.startRecording()
        async let read = cache.get("feed:1")
        #expect(await gates.waitFor(1))
        // The first attempt times out at 100 ms; its retry is due 200 ms later.
        clock.advance(to: Self.start + 100)
        #expect(await Self.settle { await cache.pendingWork().contains { $0.dueAt == Self.start + 300 } })
        clock.advance(to: Self.start + 300)
        #expect(await gates.waitFor(2))
        // At 340 ms the first attempt's answer comes at last, and the second attempt fails.
        clock.advance(to: Self.start + 340)
        #expect(gates.answer("feed:1", with: ["feed:1": "late"]))
        #expect(gates.fail("feed:1", "HTTP 502"))
        #expect(await Self.settle { await cache.pendingWork().contains { $0.dueAt == Self.start + 740 } })
        clock.advance(to: Self.start + 740)
        #expect(await gates.waitFor(1))
        clock.advance(to: Self.start + 760)
        #expect(gates.answer("feed:1", with: ["feed:1": "third time"]))
        let result = try await read
        #expect(result.value == "third time")
        #expect(await Self.fates(cache) == [.failed, .failed, .stored])
        let recording = try await cache.stopRecording()

        let text = try RecordingTranscript.text(of: recording)
        #expect(Self.answers(text) == ["cachesh> server next feed:1 latency=100ms error=\"timed out after 100ms\"",
                            "cachesh> server next feed:1 latency=40ms error=\"HTTP 502\"",
                            "cachesh> server next feed:1 latency=20ms value=\"third time\""], "\(text)")
        await Self.expectReplays(text, name: "retries.transcript")
    }

    /// A recording that starts while a request waits out its backoff: the snapshot holds it, and
    /// its retry, sent during the recording, is transcribed with its own answer.
    @Test func aRetryWaitingWhenTheRecordingStartsIsTranscribedWithItsAnswer() async throws {
        let clock = SteppedClock(ms: Self.start)
        let gates = AnswerGates()
        let cache = Cache(fetch: { try await gates.fetch($0) }, clock: clock, requestTimeout: 100)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60_000, retry: 1, backoff: 200))
        try await cache.poll("feed:1", every: 10_000)
        #expect(await clock.waitForSleepers(1))
        clock.advance(to: Self.start + 10_000)
        #expect(await gates.waitFor(1))
        clock.advance(to: Self.start + 10_030)
        #expect(gates.fail("feed:1", "HTTP 503"))
        #expect(await Self.settle { await cache.pendingWork().contains { $0.dueAt == Self.start + 10_230 } })
        await cache.startRecording()
        clock.advance(to: Self.start + 10_230)
        #expect(await gates.waitFor(1))
        clock.advance(to: Self.start + 10_250)
        #expect(gates.answer("feed:1", with: ["feed:1": "second"]))
        #expect(await Self.settle { await Self.fates(cache) == [.failed, .stored] })
        #expect(await cache.peek("feed:1").value == "second")
        _ = await cache.unpollAll()
        let recording = try await cache.stopRecording()

        let text = try RecordingTranscript.text(of: recording)
        #expect(Self.answers(text) == ["cachesh> server next feed:1 latency=20ms value=\"second\""], "\(text)")
        await Self.expectReplays(text, name: "waiting-retry.transcript")
    }

    /// Ten tasks use one cache at once on the real clock for a while: awaited reads, reads that
    /// do not wait, writes, events, mutations that fail at random, invalidations; the fetches
    /// answer after random real latencies, some fail, some time out. The recording replays, ten
    /// times, byte for byte. The time limit only catches a hang: with every test sharing the test
    /// pool's threads, this one's wall time on a busy two-core machine is much of the suite's.
    @Test(.timeLimit(.minutes(20)))
    func aConcurrentSessionWithRealLatenciesReplaysIdenticallyTenTimes() async throws {
        let dice = Dice(seed: 20_260_101)
        let roll = dice.roll
        let cache = Cache(fetch: { keys in
            // The server's real latency, which the issue asks this test to have: nothing is
            // asserted about time; the replay must match whatever order the answers took.
            try await Task.sleep(for: .milliseconds(roll(0...24)))
            if roll(0...9) == 0 { throw OriginFailure("HTTP 503") }
            var values: [String: JSONValue] = [:]
            for key in keys where !key.hasSuffix(":9") { values[key] = ["id": .int(Int64(roll(1...3))), "v": .int(Int64(roll(0...99)))] }
            return values
        }, mutate: { request in
            try await Task.sleep(for: .milliseconds(roll(0...15)))
            if roll(0...2) == 0 { throw OriginFailure("HTTP 500") }
            return Dictionary(uniqueKeysWithValues: request.keys.map { ($0, ["id": 1, "v": .int(Int64(roll(0...99)))]) })
        }, requestTimeout: 20)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 60, stale: 15, max: 4))
        try await cache.defineNamespace("page", PolicyChange(ttl: 80, timeout: 12, retry: 1, backoff: 5))
        let events = await cache.changes(in: .all)
        let watcher = Task { for await _ in events {} }
        await cache.startRecording()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    for _ in 0..<50 {
                        let key = ["feed:1", "feed:2", "feed:3", "feed:9", "page:1", "page:2", "profile:1"][roll(0...6)]
                        switch roll(0...9) {
                        case 0, 1, 2: _ = try? await cache.get(key, force: roll(0...5) == 0)
                        case 3: _ = try? await cache.read(key)
                        case 4: _ = await cache.put(key, ["id": 2, "v": 0])
                        case 5: _ = try? await cache.event(entity: "\(roll(1...3))", patch: Patch(["v": ["$inc": 1]]))
                        case 6: _ = try? await cache.mutate(entity: "1", patch: Patch(["liked": true]))
                        case 7: _ = await cache.invalidate(roll(0...1) == 0 ? .key(key) : .namespace("feed"))
                        default: try? await Task.sleep(for: .milliseconds(roll(0...6)))
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(60))
        let recording = try await cache.stopRecording()
        watcher.cancel()

        let text = try RecordingTranscript.text(of: recording)
        let requests = recording.records.filter { if case .sent = $0 { true } else { false } }.count
        #expect(requests >= 30, "only \(requests) requests")
        let waiting = recording.records.filter { if case .call(_, .waiting, _, _) = $0 { true } else { false } }.count
        #expect(waiting >= 10, "only \(waiting) reads waited for their request")
        await Self.expectReplays(text, name: "concurrent.transcript", times: 10)
    }

    /// As the ten-task test, with the app behaviours whose requests come back on their own: every
    /// fetch and idempotent mutation retried after a short backoff, polls, cancels, focus and
    /// keys made active, and a timeout shorter than many latencies, so that attempts time out,
    /// are retried, and answer late. Ten replays, byte for byte.
    @Test(.timeLimit(.minutes(20)))
    func retriesPollsAndCancelsOfAConcurrentSessionReplayIdentically() async throws {
        let dice = Dice(seed: 20_261_206)
        let roll = dice.roll
        let cache = Cache(fetch: { keys in
            try await Task.sleep(for: .milliseconds(roll(0...20)))
            if roll(0...4) == 0 { throw OriginFailure("HTTP 503") }
            var values: [String: JSONValue] = [:]
            for key in keys { values[key] = ["id": .int(Int64(roll(1...2))), "v": .int(Int64(roll(0...99)))] }
            return values
        }, mutate: { request in
            try await Task.sleep(for: .milliseconds(roll(0...20)))
            if roll(0...3) == 0 { throw OriginFailure("HTTP 500") }
            return Dictionary(uniqueKeysWithValues: request.keys.map { ($0, ["id": 1, "v": .int(Int64(roll(0...99)))]) })
        }, requestTimeout: 12)
        try await cache.defineNamespace("feed", PolicyChange(ttl: 50, stale: 10, max: 3, retry: 2, backoff: 3))
        try await cache.defineNamespace("page", PolicyChange(ttl: 40, timeout: 9, retry: 1, backoff: 2))
        let events = await cache.changes(in: .all)
        let watcher = Task { for await _ in events {} }
        await cache.startRecording()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<40 {
                        let key = ["feed:1", "feed:2", "feed:3", "page:1", "page:2"][roll(0...4)]
                        switch roll(0...11) {
                        case 0, 1, 2: _ = try? await cache.get(key, force: roll(0...5) == 0)
                        case 3: _ = await cache.put(key, ["id": 2, "v": 0])
                        case 4: _ = try? await cache.event(entity: "\(roll(1...2))", patch: Patch(["v": ["$inc": 1]]))
                        case 5: _ = try? await cache.mutate(entity: "1", patch: Patch(["liked": true]), options: MutationOptions(idempotent: true))
                        case 6: _ = try? await cache.poll(key, every: Int64(roll(5...30)))
                        case 7: _ = await cache.unpoll(key)
                        case 8: _ = try? await cache.cancel(key)
                        case 9: await cache.setActive(key, roll(0...1) == 0); _ = await cache.focus()
                        default: try? await Task.sleep(for: .milliseconds(roll(0...8)))
                        }
                    }
                }
            }
        }
        _ = await cache.unpollAll()
        try await Task.sleep(for: .milliseconds(80))
        let recording = try await cache.stopRecording()
        watcher.cancel()

        let text = try RecordingTranscript.text(of: recording)
        let retried = recording.records.filter { if case .completed(_, .keys(.failure)?, _, _) = $0 { true } else { false } }.count
        #expect(retried >= 10, "only \(retried) failed attempts")
        await Self.expectReplays(text, name: "concurrent-retries.transcript", times: 10)
    }

    /// A restore replaces the requests in flight with the snapshot's, whose ids may be those of
    /// requests sent before it: the app's call for an earlier request is not the restored one's,
    /// and its answer is not used (it stored one key's value under the restored request's key);
    /// a read awaiting an earlier request ends at the restore, as one whose request is gone
    /// (it waited for the restored request). The restored request times out at its time, as the
    /// replay's does.
    @Test(arguments: [false, true])
    func anAnswerToARequestSentBeforeARestoreIsNotUsed(awaited: Bool) async throws {
        let other = SteppedClock(ms: Self.start)
        let otherGates = AnswerGates()
        let snapshotting = Cache(fetch: { try await otherGates.fetch($0) }, clock: other, requestTimeout: 500)
        _ = try await snapshotting.mget(["feed:b"], nowait: true)
        #expect(await otherGates.waitFor(1))
        let document = await snapshotting.makeSnapshot()

        let clock = SteppedClock(ms: Self.start)
        let gates = AnswerGates()
        let cache = Cache(fetch: { try await gates.fetch($0) }, clock: clock, requestTimeout: 500)
        await cache.startRecording()
        // (The result is taken when it comes, and waited for with a bound: a read that never
        // ends fails the test rather than hanging it.)
        let got = Mutex<ReadResult?>(nil)
        let read = Task { if awaited { let result = try await cache.get("feed:a"); got.withLock { $0 = result } } }
        defer { read.cancel() }
        if !awaited { _ = try await cache.mget(["feed:a"], nowait: true) }
        #expect(await gates.waitFor(1))
        // The same request id, in flight for another key.
        let ids = await snapshotting.requestLog.map(\.id)
        #expect(await cache.requestLog.map(\.id) == ids)
        clock.advance(to: Self.start + 10)
        try await cache.restore(try Snapshot(document)) { _ in 0 }
        if awaited {
            #expect(await Self.settle { got.withLock { $0 } != nil }, "the read ended at the restore")
            let result = got.withLock { $0 }
            #expect(result?.state == .absent)
            #expect(result?.error == nil)
        }
        clock.advance(to: Self.start + 20)
        gates.answer("feed:a", with: ["feed:a": "a's value"])
        #expect(await Self.settle { await cache.now >= Self.start + 20 })
        clock.advance(to: Self.start + 30)
        #expect(await cache.peek("feed:b").state == .absent)
        clock.advance(to: Self.start + 600)
        #expect(await cache.peek("feed:b").state == .absent)
        #expect(await Self.fates(cache) == [.failed])
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        #expect(!text.contains("a's value"), "\(text)")
        await Self.expectReplays(text, name: "restore-in-flight.transcript")
    }

    /// The same for an HTTP read: awaiting a request sent before a restore, it ends at the
    /// restore with no answer (504), and the late answer is stored under no key.
    @Test func anHTTPAnswerToARequestSentBeforeARestoreIsNotUsed() async throws {
        let calls = Mutex<[(key: String, done: CheckedContinuation<HTTPAnswer, Never>)]>([])
        let send: @Sendable (HTTPRequest) async throws -> HTTPAnswer = { request in
            await withCheckedContinuation { done in calls.withLock { $0.append((request.key, done)) } }
        }
        func waitForCall(_ n: Int) async -> Bool { await Self.settle { calls.withLock { $0.count } >= n } }
        let answer = HTTPAnswer(status: 200, fields: HTTPFields(["Cache-Control": "max-age=60"]), body: .json(.string("x's body")))

        let snapshotting = Cache(fetch: { _ in [:] }, clock: SteppedClock(ms: Self.start), requestTimeout: 500, http: send)
        _ = try await snapshotting.defineNamespace("api", PolicyChange(http: HTTPNamespace()))
        let other = Task { try await snapshotting.httpGet("api:/y") }
        #expect(await waitForCall(1))
        let document = await snapshotting.makeSnapshot()

        let clock = SteppedClock(ms: Self.start)
        let cache = Cache(fetch: { _ in [:] }, clock: clock, requestTimeout: 500, http: send)
        _ = try await cache.defineNamespace("api", PolicyChange(http: HTTPNamespace()))
        await cache.startRecording()
        let got = Mutex<HTTPReadResult?>(nil)
        let read = Task { let result = try await cache.httpGet("api:/x"); got.withLock { $0 = result } }
        defer { read.cancel() }
        #expect(await waitForCall(2))
        let ids = await snapshotting.requestLog.map(\.id)
        #expect(await cache.requestLog.map(\.id) == ids)
        clock.advance(to: Self.start + 10)
        try await cache.restore(try Snapshot(document)) { _ in 0 }
        #expect(await Self.settle { got.withLock { $0 } != nil }, "the read ended at the restore")
        let result = got.withLock { $0 }
        #expect(result?.status == 504 && result?.cacheStatus.detail == "no answer")
        clock.advance(to: Self.start + 20)
        for call in calls.withLock({ $0 }) where call.key == "api:/x" { call.done.resume(returning: answer) }
        #expect(await Self.settle { await cache.now >= Self.start + 20 })
        clock.advance(to: Self.start + 600)
        #expect(await cache.peek("api:/y").state == .absent)
        #expect(await cache.peek("api:/x").state == .absent)
        let recording = try await cache.stopRecording()
        let text = try RecordingTranscript.text(of: recording)
        #expect(!text.contains("x's body"), "\(text)")
        await Self.expectReplays(text, name: "restore-http-in-flight.transcript")
        for call in calls.withLock({ $0 }) where call.key == "api:/y" { call.done.resume(returning: answer) }
        _ = try? await other.value
    }
}

/// Random numbers shared by concurrent tasks.
private final class Dice: Sendable {
    private let generator: Mutex<SeededGenerator>
    init(seed: UInt64) { generator = Mutex(SeededGenerator(seed: seed)) }
    @Sendable func roll(_ range: ClosedRange<Int>) -> Int { generator.withLock { Int.random(in: range, using: &$0) } }
}
