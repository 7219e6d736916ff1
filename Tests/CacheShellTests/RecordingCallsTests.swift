import CacheCore
import CacheServer
import CacheShell
import Testing
import TestSupport

/// The app calls a recording used to refuse — cancel, active keys, focus, polls, mutations with
/// options, configure, restore — are recorded with their arguments, written as the shell commands
/// that do the same, and replay byte for byte; their JSON Lines read back equal.
@Suite struct RecordingCallsTests {
    static func server() -> SimulatedServer {
        let server = SimulatedServer()
        server.set("feed:home", ["posts": [["id": 1, "likes": 3]]], at: TimeText.virtualEpochMs)
        server.set("profile:1", ["id": 1, "name": "ann", "likes": 3], at: TimeText.virtualEpochMs)
        server.set("badge:n", 4, at: TimeText.virtualEpochMs)
        server.latencies["profile:1"] = 200
        return server
    }

    /// Records `session` on a cache over the simulated server (a feed namespace of 1 s, watching
    /// all unless `watchAll` is false), checks the recording's JSON Lines read back equal, writes
    /// it as a transcript in both output modes and replays each.
    /// - Returns: the human transcript.
    @discardableResult
    static func recordAndReplay(watchAll: Bool = true, _ session: (Cache) async throws -> Void) async throws -> String {
        let cache = Cache(origin: server())
        try await cache.defineNamespace("feed", PolicyChange(ttl: 1_000))
        if watchAll { await cache.watch(.all) }
        _ = try await cache.get("feed:home")
        await cache.startRecording()
        try await session(cache)
        try await cache.advance(by: 500)
        let recording = try await cache.stopRecording()
        let lines = RecordingFormat.text(of: recording)
        #expect(lines.hasPrefix(#"{"format":"cachesh-recording","version":2}"#))
        let reread = try RecordingFormat.parse(lines)
        #expect(reread == recording, "\(lines)")
        var human = ""
        for mode in [OutputMode.human, .json] {
            let text = try RecordingTranscript.text(of: recording, mode: mode)
            if mode == .human { human = text }
            let check = await TranscriptCheck.replay(name: "calls.transcript", text: text, safe: true)
            #expect(check.passed, "\(check.report())\(check.refusal ?? "")\n\(text)")
        }
        return human
    }

    /// The conversion's error for `session`'s recording.
    static func refusal(_ session: (Cache) async throws -> Void) async throws -> String {
        let cache = Cache(origin: server())
        await cache.startRecording()
        try await session(cache)
        let recording = try await cache.stopRecording()
        #expect(try RecordingFormat.parse(RecordingFormat.text(of: recording)) == recording)
        do {
            let text = try RecordingTranscript.text(of: recording)
            Issue.record("converted:\n\(text)")
            return ""
        } catch {
            return error.message
        }
    }

    @Test func focusRefetchesActiveKeysAndTheTranscriptSaysFocus() async throws {
        let text = try await Self.recordAndReplay(watchAll: false) { cache in
            await cache.setActive("feed:home", true)
            await cache.watch(.key("feed:home"))
            await cache.setActive("profile:1", true)
            await cache.watch(.key("profile:1"))
            #expect(await cache.focus() == ["profile:1"])
            try await cache.advance(by: 1_500)
            #expect(await cache.focus() == [])
            await cache.setActive("feed:home", false)
            await cache.setActive("profile:1", false)
            await cache.setActive("page:1", false)
            _ = await cache.evict("profile:1")
            try await cache.advance(by: 2_000)
            #expect(await cache.focus() == [])
        }
        #expect(text.contains("cachesh> activate feed:home\nfeed:home is active\ncachesh> watch feed:home\nwatching feed:home\n"))
        #expect(text.contains("cachesh> focus\nkeys: profile:1\n"))
        #expect(text.contains("cachesh> focus\nkeys: (none)\n"))
        #expect(text.contains("cachesh> deactivate feed:home\nfeed:home is no longer active\n"
                              + "cachesh> deactivate profile:1\nprofile:1 is no longer active\n"
                              + "cachesh> deactivate page:1\npage:1 was not active\n"))
        #expect(!text.contains("cachesh> unwatch"))
    }

    @Test func clearActiveKeepsWhatIsWatched() async throws {
        let text = try await Self.recordAndReplay { cache in
            await cache.watch(.key("profile:1"))
            await cache.setActive("profile:1", true)
            await cache.watch(.namespace("feed"))
            await cache.clearActive()
            try await cache.advance(by: 1_500)
            _ = await cache.focus()
            _ = try await cache.get("profile:1")
        }
        #expect(text.contains("cachesh> deactivate\nnothing is active\ncachesh> advance 1s500ms\n"))
        #expect(!text.contains("cachesh> unwatch"))
    }

    @Test func unwatchingAnActiveKeyThenMakingItInactiveConverts() async throws {
        try await Self.recordAndReplay(watchAll: false) { cache in
            await cache.setActive("feed:home", true)
            await cache.watch(.key("feed:home"))
            _ = await cache.unwatch(.key("feed:home"))
            await cache.setActive("feed:home", false)
            try await cache.advance(by: 1_500)
            _ = await cache.focus()
        }
    }

    @Test func pollsAndUnpollsReplay() async throws {
        let text = try await Self.recordAndReplay { cache in
            try await cache.poll("badge:n", every: 1_500)
            try await cache.advance(by: 3_200)
            #expect(await cache.unpoll("badge:n"))
            #expect(await cache.unpoll("badge:n") == false)
            try await cache.poll("badge:n", every: 700)
            try await cache.poll("feed:home", every: 60_000)
            try await cache.advance(by: 800)
            #expect(await cache.unpollAll() == ["badge:n", "feed:home"])
            await #expect(throws: CacheError.self) { try await cache.poll("badge:n", every: 0) }
        }
        #expect(text.contains("cachesh> poll badge:n every=1s500ms\npolling badge:n every 1s500ms\n"))
        #expect(text.contains("cachesh> unpoll badge:n\nstopped polling badge:n\ncachesh> unpoll badge:n\nwas not polling badge:n\n"))
        #expect(text.contains("cachesh> unpoll\npolling nothing\n"))
        #expect(text.contains("cachesh> poll badge:n every=0ms\nerror: "))
    }

    @Test func cancelReplaysWithItsKeysAndItsError() async throws {
        let text = try await Self.recordAndReplay { cache in
            _ = try await cache.startRead("profile:1")
            try await cache.advance(by: 50)
            #expect(try await cache.cancel("profile:1") == ["profile:1"])
            await #expect(throws: CacheError.self) { try await cache.cancel("profile:1") }
            try await cache.advance(by: 300)
        }
        #expect(text.contains("error:         cancelled\n* 2026-01-01T00:00:00.150Z cancelled profile:1 absent (cache)\nkeys: profile:1\n"
                              + "cachesh> cancel profile:1\nerror: no fetch of profile:1 in flight: nothing to cancel\n"))
    }

    /// `touch` is recorded with its key and what it touched, written as `touch KEY`, and the
    /// replay evicts what the app's cache evicted: page:2, not the touched page:1.
    @Test func touchReplaysAsAnAccessThatDecidesTheEviction() async throws {
        let text = try await Self.recordAndReplay(watchAll: false) { cache in
            _ = try await cache.defineNamespace("page", PolicyChange(max: .some(2)))
            _ = await cache.put("page:1", 1)
            _ = await cache.put("page:2", 2)
            try await cache.advance(by: 100)
            #expect(await cache.touch("page:1") == ["page:1"])
            #expect(await cache.put("page:3", 3) == ["page:3", "page:2"])
            #expect(await cache.touch("page:2") == [])
            _ = await cache.keys()
        }
        #expect(text.contains("cachesh> touch page:1\nkeys: page:1\ncachesh> put page:3 3\nkeys: page:3 page:2\n"))
        #expect(text.contains("cachesh> touch page:2\nkeys: (none)\n"))
    }

    @Test func mutationsWithOptionsReplayWithTheirFlags() async throws {
        let text = try await Self.recordAndReplay { cache in
            _ = try await cache.get("profile:1")
            _ = try await cache.mutate("profile:1", patch: Patch(["likes": ["$inc": 1]]), options: MutationOptions(pessimistic: true))
            try await cache.advance(by: 300)
            _ = try await cache.mutate("feed:home", patch: Patch(["seen": true]), options: MutationOptions(refetch: true))
            try await cache.advance(by: 300)
            _ = try await cache.mutate(entity: "1", patch: Patch(["likes": ["$inc": 2]]),
                                       options: MutationOptions(pessimistic: true, refetch: true))
            try await cache.advance(by: 300)
            _ = try await cache.mutate("profile:1", patch: Patch(["likes": ["$inc": 1]]), options: MutationOptions(idempotent: true))
            try await cache.advance(by: 300)
        }
        #expect(text.contains(#"cachesh> mutate profile:1 {"likes":{"$inc":1}} --idempotent"# + "\n"))
        #expect(text.contains(#"cachesh> mutate profile:1 {"likes":{"$inc":1}} --pessimistic"# + "\n"))
        #expect(text.contains(#"cachesh> mutate feed:home {"seen":true} --refetch"# + "\n"))
        #expect(text.contains(#"cachesh> mutate entity 1 {"likes":{"$inc":2}} --pessimistic --refetch"# + "\n"))
    }

    /// A mutation the client gave up on (its outcome unknown: SPEC §1.1) replays as an answer
    /// lost with the timeout's message, so the replay refetches the key as the session did.
    @Test func aTimedOutMutationReplaysAsALostAnswer() async throws {
        let text = try await Self.recordAndReplay { cache in
            _ = try await cache.defineNamespace("profile", PolicyChange(ttl: 60_000, timeout: .some(150)))
            _ = await cache.put("profile:1", ["id": 1, "likes": 3])
            _ = try await cache.mutate("profile:1", patch: Patch(["likes": ["$inc": 1]]))
            try await cache.advance(by: 400)
        }
        #expect(text.contains(#"cachesh> server next profile:1 latency=150ms --lost-answer error="timed out after 150ms""# + "\n"),
                "\(text)")
        #expect(text.contains(" invalidated profile:1 stale "), "\(text)")
        #expect(!text.contains("rolled-back"), "\(text)")
    }

    @Test func configureBecomesLoadOfTheConfigurationItself() async throws {
        let text = try await Self.recordAndReplay { cache in
            _ = try await cache.get("profile:1")
            _ = try await cache.configure(CacheConfiguration(
                namespaces: ["profile": Policy(ttl: 1_500, stale: 300, max: 3, staleIfError: 90_000, timeout: 250, purgeable: true,
                                               eviction: .sieve, naive: [.lastAnswerWins], dedupe: 2_000),
                             "feed": Policy(ttl: 60_000)],
                push: ["logout": PushRule(invalidate: ["feed:*"], evict: ["tag:t"]), "ping": PushRule()],
                idField: "uid"))
            try await cache.advance(by: 2_000)
            _ = try await cache.get("profile:1")
            _ = try await cache.push("logout", arguments: [:])
            await #expect(throws: CacheError.self) {
                try await cache.configure(CacheConfiguration(namespaces: ["feed": Policy(timeout: 0)]))
            }
        }
        #expect(text.contains("cachesh> load {\n"))
        #expect(text.contains(#""dedupe": "2s""#), "\(text)")
        #expect(text.contains("loaded configuration"))
        #expect(text.contains("\nerror: load: timeout must be positive\n"))
    }

    @Test func restoreMidRecordingBecomesAnInlineRestore() async throws {
        let other = Cache(origin: Self.server(), clockStart: TimeText.virtualEpochMs + 3_600_000)
        _ = await other.put("note:1", ["a": 1], tags: ["t"])
        await other.watch(.namespace("note"))
        await other.setActive("note:1", true)
        let document = await other.makeSnapshot()
        let text = try await Self.recordAndReplay { cache in
            _ = try await cache.get("profile:1")
            try await cache.restore(try Snapshot(document)) { _ in 0 }
            _ = await cache.put("note:2", 2)
            try await cache.advance(by: 100)
            _ = try await cache.get("profile:1")
            await cache.clearActive()
        }
        #expect(text.contains("restored (1 entry, now 2026-01-01T01:00:00.000Z)\ncachesh> server strict on\nserver: strict on\ncachesh> put note:2 2\n"))
        #expect(text.contains("cachesh> deactivate\nnothing is active\n"))
    }

    /// A restore brings the snapshot's request log with it: what the log held before is no
    /// request the recording sent. The recording notes none of it as `sent` (it did, when the
    /// restored log was longer than the one before), and replays.
    @Test func aRestoredRequestLogIsNoRequestSent() async throws {
        let other = Cache(origin: Self.server(), clockStart: TimeText.virtualEpochMs + 3_600_000)
        for key in ["feed:home", "profile:1", "badge:n"] {
            _ = try await other.get(key)
            try await other.advance(by: 300)
        }
        #expect(await other.requestLog.count == 3)
        let document = await other.makeSnapshot()
        let session: (Cache) async throws -> Void = { cache in
            try await cache.restore(try Snapshot(document)) { _ in 0 }
            // Past the restored entries' five minutes: the reads fetch again.
            try await cache.advance(by: 400_000)
            _ = try await cache.get("badge:n")
            _ = try await cache.get("profile:1")
        }
        let text = try await Self.recordAndReplay(session)
        let cache = Cache(origin: Self.server())
        _ = try await cache.get("feed:home")
        await cache.startRecording()
        try await session(cache)
        var sent: [[String]] = []
        for record in try await cache.stopRecording().records {
            if case .sent(_, _, let keys, _) = record { sent.append(keys) }
        }
        // Only the two reads after the restore sent requests.
        #expect(sent == [["badge:n"], ["profile:1"]])
        #expect(!text.contains("--no-answer"), "\(text)")
        #expect(text.contains("cachesh> server next badge:n latency=100ms value=4\n"), "\(text)")
    }

    /// An app that keeps a key fresh with `setActive` and no observer: `activate KEY`, and the
    /// refetches its invalidation and expiry send replay (the transcript used to be refused).
    @Test func anActiveKeyNotWatchedBecomesActivate() async throws {
        let text = try await Self.recordAndReplay(watchAll: false) { cache in
            await cache.setActive("default:badge", true)
            await cache.setActive("feed:home", true)
            _ = await cache.invalidate(.key("feed:home"))
            try await cache.advance(by: 1_500)
            _ = await cache.peek("feed:home")
            await cache.setActive("feed:home", false)
            try await cache.advance(by: 1_500)
            _ = await cache.peek("feed:home")
            _ = await cache.focus()
        }
        #expect(text.contains("cachesh> activate badge\nbadge is active\ncachesh> activate feed:home\nfeed:home is active\n"
                              + "cachesh> server next feed:home latency=100ms"))
        #expect(text.contains("cachesh> deactivate feed:home\nfeed:home is no longer active\n"))
        #expect(text.contains("cachesh> focus\nkeys: badge\n"))
        #expect(!text.contains("cachesh> watch") && !text.contains("cachesh> unwatch"))
    }

    /// The app's unwatch of an active key leaves it active, the shell's does not: `activate KEY`
    /// follows `unwatch KEY` (the transcript used to be refused), and its expiry refetches it on replay.
    @Test func unwatchOfAnActiveKeyIsFollowedByActivate() async throws {
        let text = try await Self.recordAndReplay(watchAll: false) { cache in
            await cache.watch(.key("feed:home"))
            await cache.setActive("feed:home", true)
            #expect(await cache.unwatch(.key("feed:home")))
            try await cache.advance(by: 1_500)
            _ = await cache.peek("feed:home")
        }
        #expect(text.contains("cachesh> unwatch feed:home\nstopped watching feed:home\ncachesh> activate feed:home\nfeed:home is active\n"))
        #expect(text.contains("cachesh> server next feed:home latency=100ms"))
    }

    /// The app's `unwatch()` with keys active: the shell's `unwatch --keep-active`, which leaves
    /// them active as the app's does (the transcript used to be refused, then had an `activate`
    /// line for each active key after each such call); `unwatch NS:*` and `unwatch *` make no key
    /// inactive, so nothing follows them either.
    @Test func unwatchOfEverythingKeepsTheActiveKeys() async throws {
        let text = try await Self.recordAndReplay { cache in
            await cache.watch(.namespace("feed"))
            await cache.watch(.key("profile:1"))
            await cache.setActive("profile:1", true)
            await cache.setActive("feed:home", true)
            await cache.setActive("badge:n", true)
            #expect(await cache.unwatch(.namespace("feed")))
            #expect(await cache.unwatch(.all))
            _ = await cache.unwatch(nil)
            try await cache.advance(by: 1_500)
            #expect(await cache.focus() == ["badge:n", "profile:1"])
        }
        #expect(text.contains("cachesh> unwatch feed:*\nstopped watching feed:*\ncachesh> unwatch *\nstopped watching *\n"
                              + "cachesh> unwatch --keep-active\nwatching nothing\ncachesh> server next feed:home "))
        #expect(text.contains("cachesh> focus\nkeys: badge:n profile:1\n"))
    }

    /// With no key active, the app's `unwatch()` is the shell's `unwatch`, as before; many calls
    /// with many keys active write one line each, not a line for each key after each call.
    @Test func unwatchOfEverythingGrowsWithTheCallsNotWithTheirProductWithTheKeys() async throws {
        let plain = try await Self.recordAndReplay { cache in
            await cache.watch(.key("a:1"))
            _ = await cache.unwatch(nil)
        }
        #expect(plain.contains("cachesh> unwatch\nwatching nothing\n"))
        let many = try await Self.recordAndReplay { cache in
            for i in 0..<200 { await cache.setActive("k:\(i)", true) }
            for _ in 0..<200 { _ = await cache.unwatch(nil) }
        }
        #expect(many.components(separatedBy: "cachesh> unwatch --keep-active\n").count == 201)
        #expect(many.components(separatedBy: "cachesh> activate k:").count == 201, "one activate a key, each where the app made it active")
        #expect(many.utf8.count < 100_000, "\(many.utf8.count) bytes")
    }

    @Test func whatTheShellCannotSayIsRefusedSayingWhatToDo() async throws {
        let scheduled = try await Self.refusal { cache in
            _ = await cache.schedule(after: 100, token: 7)
        }
        #expect(scheduled == "the recording holds a call to schedule(...), which a transcript cannot replay: its token names work of the app's own, which the shell has no command for (schedule it before startRecording() or after stopRecording())")
    }

    /// Random sessions mixing these calls with reads, writes and the clock record and replay
    /// identically, in both output modes.
    @Test(arguments: 0..<16)
    func randomSessionsWithLifecycleCallsReplay(seed: Int) async throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 104_729 &+ 3)
        let keys = ["feed:home", "profile:1", "badge:n", "page:1"]
        try await Self.recordAndReplay(watchAll: seed % 2 == 0) { cache in
            for _ in 0..<60 {
                let key = random.pick(keys)
                switch Int.random(in: 0..<14, using: &random) {
                case 0: _ = try await cache.startRead(key)
                case 1: _ = try await cache.get(key)
                case 2: _ = try? await cache.cancel(key)
                case 3:
                    await cache.setActive(key, true)
                    if random.chance(50) { await cache.watch(.key(key)) }
                case 4:
                    if random.chance(50) { await cache.setActive(key, false) } else { _ = await cache.unwatch(random.chance(80) ? .key(key) : nil) }
                case 5: if random.chance(20) { await cache.clearActive() }
                case 6: _ = await cache.focus()
                case 7: try? await cache.poll(key, every: Int64.random(in: 0...2_000, using: &random))
                case 8: _ = random.chance(70) ? [String(await cache.unpoll(key))] : await cache.unpollAll()
                case 9:
                    _ = try? await cache.mutate(key, patch: Patch(["n": ["$inc": 1]]),
                                                options: MutationOptions(pessimistic: random.chance(50), refetch: random.chance(50)))
                case 10: _ = await cache.invalidate(.key(key))
                case 11: _ = await cache.put(key, ["n": .int(Int64.random(in: 0...9, using: &random))])
                default: try await cache.advance(by: Int64.random(in: 0...900, using: &random))
                }
            }
        }
    }

    /// A version 1 file (written before these calls were recorded) reads as it did: a mutation
    /// line has no option fields and is the default options.
    @Test func aVersionOneRecordingStillReads() async throws {
        let snapshot = await Cache().makeSnapshot().compactText
        let text = #"{"format":"cachesh-recording","version":1}"# + "\n"
            + #"{"live":false,"record":"begin","snapshot":"# + snapshot + "}\n"
            + #"{"at":1767225600000,"call":{"key":"a:1","name":"mutate","patch":{"n":1}},"ended":1767225600000,"record":"call","returned":{"keys":["a:1"]}}"# + "\n"
            + #"{"at":1767225600000,"call":{"name":"unwatch","scope":"a:1"},"ended":1767225600000,"record":"call","returned":{"watched":false}}"# + "\n"
            + #"{"at":1767225600000,"record":"end"}"# + "\n"
        let recording = try RecordingFormat.parse(text)
        #expect(recording.records.count == 4)
        #expect(recording.records[1] == .call(.mutate(key: "a:1", patch: ["n": 1], options: MutationOptions()),
                                              returned: .keys(["a:1"]), at: 1_767_225_600_000, ended: 1_767_225_600_000))
        #expect(recording.records[2] == .call(.unwatch(.key("a:1")), returned: .watched(false), at: 1_767_225_600_000,
                                              ended: 1_767_225_600_000))
        // A line of version 1 is written the same today: a mutation without options has no new field.
        #expect(RecordingFormat.line(recording.records[1]) == text.split(separator: "\n")[2].description)
    }
}
