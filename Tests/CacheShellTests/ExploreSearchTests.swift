@testable import CacheShell
import CacheCore
import Testing
import TestSupport

/// The search (SPEC §3.1): partial-order reduction held to plain enumeration, PCT's seeded
/// schedules, the switch from exhaustive to random past the bound, a planted bug found at its
/// depth. Every figure asserted is a count of schedules, never a time.
@Suite struct ExploreSearchTests {
    static func scenario(_ text: String) throws -> ExploreScenario {
        try ExploreScenario(name: "s.explore", text: text)
    }

    static func run(_ text: String, _ configure: (inout ExploreOptions) -> Void = { _ in }) throws -> ExploreReport {
        var options = ExploreOptions()
        configure(&options)
        return Explorer(scenario: try scenario(text), options: options).run()
    }

    // MARK: Commute rules

    @Test(arguments: [
        ("put a:1 1", "put a:2 2", false),
        ("put a:1 1", "get a:1 --async", true),
        ("get a:1 --async", "server set b:1 2", false),
        ("server set a:1 2", "mutate a:1 {\"n\":1}", true),
        ("put a:1 1", "expect peek a:1 value=1", true),
        ("put a:1 1", "expect peek a:2 value=1", false),
        ("put a:1 1", "invalidate a:*", true),
        ("put a:1 1", "invalidate b:*", true),
        ("put a:1 1", "focus", true),
        ("put a:1 1", "push refresh", true),
        ("put a:1 1", "mutate entity 7 {\"n\":1}", true),
        ("put a:1 1", "server latency 5ms", true),
        ("put a:1 1", "server latency 5ms b:1", false),
        ("put a:1 1", "echo hello", false),
        ("pages l:feed --next", "put l:feed@2 [1]", true),
        ("put default:x 1", "put x 2", true),
    ])
    func stepsCommuteWhenTheirFootprintsShareNoKey(a: String, b: String, dependent: Bool) {
        let first = ExploreCommutation.footprint(a, whole: []), second = ExploreCommutation.footprint(b, whole: [])
        #expect(first.overlaps(second) == dependent, "\(a) / \(b)")
        #expect(second.overlaps(first) == dependent, "\(b) / \(a)")
    }

    @Test func aNamespaceWithMaxOrWatchedWholeIsOneUnitAndAWatchOfEverythingCommutesNothing() throws {
        let text = "concurrent\n  put a:1 1\nand\n  put a:2 2\nand\n  put b:1 1\nend\n"
        #expect(ExploreCommutation(scenario: try Self.scenario(text)).anyCommute)
        for setup in ["ns a ttl=1m max=1", "watch a:*"] {
            let commutation = ExploreCommutation(scenario: try Self.scenario(setup + "\n" + text))
            let a1 = ExploreEvent(kind: .issue, step: 0), a2 = ExploreEvent(kind: .issue, step: 1), b1 = ExploreEvent(kind: .issue, step: 2)
            #expect(commutation.dependent(a1, a2), "\(setup)")
            #expect(!commutation.dependent(a1, b1), "\(setup)")
        }
        for setup in ["watch *", "load config.json", "client tab2"] {
            #expect(!ExploreCommutation(scenario: try Self.scenario(setup + "\n" + text)).anyCommute, "\(setup)")
        }
    }

    @Test func schedulesThatOnlyReorderCommutingStepsShareATraceAndTheirTimes() throws {
        let s = try Self.scenario("concurrent\n  get a:1 --async latency=10ms..1s\nand\n  put b:1 1\nend\n")
        let commutation = ExploreCommutation(scenario: s)
        let issueA = ExploreChoice(event: ExploreEvent(kind: .issue, step: 0), answer: 0)
        let answerA = ExploreChoice(event: ExploreEvent(kind: .answer, step: 0), answer: 0)
        let putB = ExploreChoice(event: ExploreEvent(kind: .issue, step: 1), answer: 0)
        let orders = [[issueA, answerA, putB], [issueA, putB, answerA], [putB, issueA, answerA]]
        let keys = Set(orders.map { ExploreTrace.key(of: $0, commutation: commutation) })
        #expect(keys.count == 1)
        let realized = orders.map { ExploreTiming.realize($0, steps: s.steps, commutation: commutation)! }
        // The put needs wait for nothing: at 0 with the read, whose answer comes 10ms later.
        for r in realized {
            #expect(r.schedule == [issueA, putB, answerA])
            #expect(r.times == [0, 0, 10])
        }
    }

    // MARK: Partial-order reduction against plain enumeration

    /// A random scenario of two or three sections over two keys (puts, reads, the server's
    /// changes, mutations, expect steps), under a naive switch or the default.
    static func randomScenario(_ generator: inout SeededGenerator) -> String {
        let naive = generator.pick(["last-answer-wins", "answer-drops-mutations", "rollback-to-snapshot", "join-refetch", "none"])
        var text = "ns k ttl=10m naive=\(naive)\nserver set k:1 {\"v\":0}\nserver set k:2 {\"v\":0}\nget k:1\nconcurrent\n"
        let sections = Int.random(in: 2...3, using: &generator)
        for section in 0..<sections {
            if section > 0 { text += "and\n" }
            for i in 0..<Int.random(in: 1...2, using: &generator) {
                let key = generator.pick(["k:1", "k:2"])
                let n = section * 10 + i
                text += "  " + generator.pick([
                    "get \(key) --force --async latency=10ms..1s",
                    "put \(key) {\"v\":\(n)}",
                    "server set \(key) {\"v\":\(n + 100)}",
                    "mutate \(key) {\"m\":\(n)} latency=10ms..1s answer=ok,fail",
                    "expect peek \(key) value.v=0",
                ]) + "\n"
            }
        }
        return text + "end\n"
    }

    /// Every state (with its verdict) plain enumeration reaches, the reduction reaches, in fewer
    /// schedules where some steps commute; and with times left out, the same states as schedules
    /// run as written, each event 1 ms after the one before (so no step was wrongly taken to commute).
    @Test func theReductionReachesEveryStateAndVerdictPlainEnumerationReaches() throws {
        var generator = SeededGenerator(seed: 3601)
        var fewer = 0
        for _ in 0..<30 {
            let text = Self.randomScenario(&generator)
            let reduced = try Self.run(text) { $0.depth = 3; $0.stopAtFailure = false; $0.strategy = .exhaustive }
            let plain = try Self.run(text) { $0.depth = 3; $0.stopAtFailure = false; $0.strategy = .exhaustive; $0.reduce = false }
            #expect(reduced.problem == nil && plain.problem == nil, "\(text)")
            #expect(reduced.states == plain.states, "\(text)")
            #expect(reduced.schedules <= plain.schedules, "\(text)")
            #expect(reduced.schedules + reduced.reordered == plain.schedules, "\(text)")
            if reduced.schedules < plain.schedules { fewer += 1 }
            let untimed = try Self.run(text) { $0.depth = 3; $0.stopAtFailure = false; $0.strategy = .exhaustive; $0.timedStates = false }
            let written = try Self.run(text) {
                $0.depth = 3; $0.stopAtFailure = false; $0.strategy = .exhaustive; $0.timedStates = false; $0.commute = false
            }
            #expect(untimed.states == written.states, "\(text)")
        }
        #expect(fewer >= 10, "too few random scenarios had steps that commute to test the reduction")
    }

    /// The shrinker over scenarios whose steps commute (their events run by their times, not in
    /// the order enumerated): whenever a failure is found, the shrunk schedule fails the same way,
    /// has no more commands than the first failing one, and its transcript verifies.
    @Test func theShrunkScheduleOfCommutingStepsAlwaysFailsIsNeverLongerAndVerifies() throws {
        var generator = SeededGenerator(seed: 3602)
        var failures = 0
        for _ in 0..<30 {
            let text = Self.randomScenario(&generator)
            let report = try Self.run(text) { $0.depth = 3 }
            #expect(report.problem == nil, "\(text)")
            guard let found = report.failure else { continue }
            failures += 1
            #expect(found.verifies, "\(text)\n\(found.transcript)")
            #expect(found.commands <= found.commandsBeforeShrinking, "\(text)")
            #expect(found.transcript.components(separatedBy: "\ncachesh> ").count - 1 == found.commands, "\(text)")
        }
        #expect(failures >= 5, "the random scenarios found too few failures to test the shrinker")
    }

    @Test func twoSectionsOfDisjointKeysAreOneSchedule() throws {
        let text = "concurrent\n  put a:1 1\n  put a:2 2\nand\n  put b:1 1\n  put b:2 2\nend\nexpect peek a:1 value=1\n"
        let reduced = try Self.run(text) { $0.depth = 4 }
        #expect(reduced.perDepth == [1, 0, 0, 0, 0])
        #expect(reduced.reordered == 5)
        let plain = try Self.run(text) { $0.depth = 4; $0.reduce = false }
        #expect(plain.perDepth == [1, 2, 3, 0, 0])
        #expect(plain.distinctStates == 1 && reduced.distinctStates == 1)
    }

    // MARK: Planted bugs

    /// A bug that needs exactly `n` preemptions (the answer to a read sent before `n` events of
    /// its key must arrive after the last of them), beside a section of `noise` puts of other keys
    /// that commute with it.
    static func planted(_ n: Int, noise: Int = 0) -> String {
        var text = "ns p ttl=10m naive=last-answer-wins\nserver set p:k {\"v\":\"server\"}\nget p:k\nconcurrent\n"
        text += "  get p:k --force --async latency=1ms..10s\n"
        for i in 1...n { text += "  event patch p:k {\"v\":\"e\(i)\"}\n" }
        if noise > 0 {
            text += "and\n"
            for i in 1...noise { text += "  put q:\(i) \(i)\n" }
        }
        return text + "end\nexpect peek p:k value.v=e\(n)\n"
    }

    /// Up to the deepest `depth=` allowed (16).
    @Test(arguments: [1, 4, 6, ExploreOptions.maxDepth])
    func theExhaustiveSearchFindsAPlantedBugAtTheDeepestDepthAndNotBelow(n: Int) throws {
        for noise in [0, 2] {
            let below = try Self.run(Self.planted(n, noise: noise)) { $0.depth = n - 1; $0.strategy = .exhaustive }
            #expect(below.failure == nil && below.depthReached == n - 1, "n \(n), noise \(noise)")
            let at = try Self.run(Self.planted(n, noise: noise)) { $0.depth = n; $0.strategy = .exhaustive }
            #expect(at.foundAtDepth == n, "n \(n), noise \(noise)")
            #expect(at.failure?.verifies == true)
            if noise > 0 && n <= 6 {
                let plain = try Self.run(Self.planted(n, noise: noise)) { $0.depth = n; $0.strategy = .exhaustive; $0.reduce = false }
                #expect(plain.foundAtDepth == n)
                #expect(at.schedules < plain.schedules, "the reduction runs fewer schedules to the same failure")
            }
        }
    }

    // MARK: PCT

    @Test func pctGivesTheSameSchedulesForTheSameSeedAndOthersForAnother() throws {
        let s = try Self.scenario(Self.planted(3, noise: 3))
        func sequence(_ seed: UInt64) -> [[ExploreChoice]] {
            var generator = SplitMix64(seed: seed)
            return (0..<20).map { _ in ExplorePCT.schedule(steps: s.steps, sections: s.sectionCount, changePoints: 3, using: &generator).0 }
        }
        #expect(sequence(5) == sequence(5))
        #expect(sequence(5) != sequence(6))
        // Each is a complete schedule of the scenario.
        for schedule in sequence(5) {
            #expect(ExploreSchedulerState.cost(of: schedule, steps: s.steps, sections: s.sectionCount, dropped: []) != nil)
        }
    }

    @Test func pctFindsAPlantedBugWithinAHundredSchedulesForMostSeeds() throws {
        var found = 0
        for seed in 1...10 {
            let report = try Self.run(Self.planted(3, noise: 3)) { $0.strategy = .pct; $0.randomSchedules = 100; $0.seed = UInt64(seed); $0.depth = 3 }
            #expect(report.perDepth.isEmpty)
            if let failure = report.failure {
                found += 1
                #expect(failure.verifies)
                #expect(report.random <= 100)
            }
            let again = try Self.run(Self.planted(3, noise: 3)) { $0.strategy = .pct; $0.randomSchedules = 100; $0.seed = UInt64(seed); $0.depth = 3 }
            #expect(again.random == report.random && again.failure?.transcript == report.failure?.transcript)
        }
        #expect(found >= 5, "PCT found the planted bug for \(found) seeds of 10")
    }

    @Test func pastTheBoundAutoRunsRandomSchedulesInsteadOfTheDepthThatDoesNotFit() throws {
        let text = "concurrent\n  put a:1 1\n  put a:2 2\nand\n  put a:3 1\n  put a:4 2\nand\n  put a:5 1\n  put a:6 2\nend\n"
        let report = try Self.run(text) { $0.depth = 4; $0.scheduleLimit = 40; $0.randomSchedules = 5; $0.reduce = false }
        #expect(report.sampledFromDepth != nil)
        let reached = try #require(report.depthReached >= 0 ? report.depthReached : nil)
        #expect(report.sampledFromDepth == reached + 1)
        #expect(report.random == 5)
        #expect(report.exitCode == 0)
        #expect(ExploreCommands.humanLines(report).last
                == "clean to depth \(reached), \(report.perDepth.reduce(0, +)) schedules, and 5 random schedules (PCT, at most 4 change points, seed 1)"
                   + " (depth \(reached + 1) does not fit in the bound of 40 schedules)")
        // Exhaustive stops at the bound inside the depth instead.
        let exhaustive = try Self.run(text) { $0.depth = 4; $0.scheduleLimit = 40; $0.reduce = false; $0.strategy = .exhaustive }
        #expect(exhaustive.stoppedAtBound && exhaustive.schedules == 40 && exhaustive.random == 0)
    }

    @Test func theBoundOfOrdersStopsTheEnumeration() throws {
        let text = "concurrent\n  put a:1 1\n  put a:2 2\nand\n  put b:1 1\n  put b:2 2\nend\n"
        let report = try Self.run(text) { $0.depth = 4; $0.orderLimit = 3; $0.strategy = .exhaustive }
        #expect(report.stoppedAtOrders)
        #expect(report.schedules + report.reordered == 3)
    }
}
