@testable import CacheShell
import Foundation
import Synchronization
import Testing
import TestSupport

/// Counts the polls of an interruption hook and says yes from the `after`-th on.
final class InterruptAfter: Sendable {
    let polls = Atomic<Int>(0)
    let after: Int
    init(_ after: Int) { self.after = after }
    func poll() -> Bool { polls.add(1, ordering: .relaxed).newValue > after }
}

/// The scenario reader, the scheduler's choices and the times a schedule is given (SPEC §3.1).
@Suite struct ExploreScenarioTests {
    static func scenario(_ text: String) throws -> ExploreScenario {
        try ExploreScenario(name: "s.explore", text: text)
    }

    @Test func aStepLosesItsLatencyAndAnswerWordsAndKeepsTheRest() throws {
        let s = try Self.scenario("ns a ttl=1m\nconcurrent\n  mutate a:1 {\"n\": 1} latency=10ms..2s answer=ok,lost --idempotent\nand\n  put a:2 2\nend\nexpect peek a:1 value=1\n")
        #expect(s.setup.map(\.text) == ["ns a ttl=1m"])
        #expect(s.steps.map(\.command.text) == ["mutate a:1 {\"n\": 1} --idempotent", "put a:2 2"])
        #expect(s.steps[0].latency == 10...2000)
        #expect(s.steps[0].answers == [.ok, .lost])
        #expect(s.steps[0].key == "a:1")
        #expect(s.steps.map(\.section) == [0, 1])
        #expect(s.steps[1].latency == nil)
        #expect(s.expects.map(\.line) == [7])
    }

    @Test func aLatencyPastADayIsRefused() throws {
        #expect(throws: ExploreScenario.Problem(line: 2, message: "explore: latency=1ms..2d: at most 1d")) {
            try Self.scenario("concurrent\n  get a:1 --async latency=1ms..2d\nend\n")
        }
        #expect(try Self.scenario("concurrent\n  get a:1 --async latency=1ms..1d\nend\n").steps[0].latency == 1...86_400_000)
    }

    @Test func theWrittenOrderCostsNothingAndEachOtherChoiceOnePreemption() throws {
        let s = try Self.scenario("concurrent\n  get a:1 --async latency=1ms..1s\n  put b:1 1\nend\n")
        var state = ExploreSchedulerState(steps: s.steps, sections: s.sectionCount)
        #expect(state.choices().map(\.cost) == [0])
        state.take(state.choices()[0].choice)
        // The answer is first in written order; the put taken before it is one preemption.
        #expect(state.choices().map(\.choice.event) == [ExploreEvent(kind: .answer, step: 0), ExploreEvent(kind: .issue, step: 1)])
        #expect(state.choices().map(\.cost) == [0, 1])
    }

    @Test func timesAreTheEarliestThatKeepTheOrderAndTheRanges() throws {
        let s = try Self.scenario("concurrent\n  get a:1 --async latency=50ms..1s\n  get b:1 --async latency=10ms..20ms\nend\n")
        let issue0 = ExploreChoice(event: ExploreEvent(kind: .issue, step: 0), answer: 0)
        let answer0 = ExploreChoice(event: ExploreEvent(kind: .answer, step: 0), answer: 0)
        let issue1 = ExploreChoice(event: ExploreEvent(kind: .issue, step: 1), answer: 0)
        let answer1 = ExploreChoice(event: ExploreEvent(kind: .answer, step: 1), answer: 0)
        #expect(ExploreTiming.times(of: [issue0, answer0, issue1, answer1], steps: s.steps) == [0, 50, 51, 61])
        #expect(ExploreTiming.times(of: [issue0, issue1, answer1, answer0], steps: s.steps) == [0, 1, 11, 50])
        // The second answer comes at most 20ms after its request: it cannot follow one due 50ms
        // after a request sent 40ms later.
        let tight = try Self.scenario("concurrent\n  get a:1 --async latency=1ms..5ms\n  get b:1 --async latency=50ms\nend\n")
        #expect(ExploreTiming.times(of: [issue0, issue1, answer1, answer0], steps: tight.steps) == nil)
    }

    @Test func everyScheduleIsCountedOnceAtItsDepth() throws {
        let s = try Self.scenario("concurrent\n  get a:1 --async latency=1ms..1s\n  put b:1 1\nand\n  put c:1 1\nend\n")
        var all: Set<[ExploreChoice]> = []
        var total = 0
        for depth in 0...6 {
            ExploreEnumeration.each(steps: s.steps, sections: s.sectionCount, preemptions: depth) { schedule in
                #expect(ExploreSchedulerState.cost(of: schedule, steps: s.steps, sections: s.sectionCount, dropped: []) == depth)
                all.insert(schedule)
                total += 1
                return true
            }
        }
        // Section 0 is get a, then its answer and put b in either order (2 orders); put c goes in
        // any of the 4 places among them: 8 schedules, each once.
        #expect(total == all.count)
        #expect(total == 8)
    }

    @Test func anInterruptionStopsTheSearchWithWhatItFound() throws {
        let s = try Self.scenario("concurrent\n  put a:1 1\n  put a:2 2\nand\n  put b:1 1\n  put b:2 2\nend\n")
        let hook = InterruptAfter(4)
        var options = ExploreOptions()
        // Every order run: the puts of the two sections commute, so the reduction would run one.
        options.reduce = false
        options.interrupted = { hook.poll() }
        let report = Explorer(scenario: s, options: options).run()
        #expect(report.interrupted)
        #expect(report.schedules == 4)
        #expect(report.perDepth == [1, 2, 1])
        #expect(report.depthReached == 1)
        #expect(report.exitCode == 130)
        #expect(ExploreCommands.humanLines(report).last == "stopped (Ctrl-C) after 4 schedules: clean so far, to depth 1 whole")
    }

    static let examples: [String] = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/explore")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".explore") }.sorted().map { directory.appendingPathComponent($0).path }
    }()

    @Test func theExamplesAreFound() { #expect(Self.examples.count >= 10) }

    /// The fast path (each schedule restores a snapshot of the state after the setup) pinned to
    /// the slow one (the setup run again): the same schedules, states, failure and transcript.
    @Test(arguments: examples)
    func forkingFromTheStateAfterTheSetupFindsWhatRunningItAgainFinds(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let scenario = try ExploreScenario(name: "race.explore", text: text)
        for naiveOff in [false, true] {
            var options = ExploreOptions()
            options.naiveOff = naiveOff
            let forked = Explorer(scenario: scenario, options: options).run()
            options.fork = false
            let again = Explorer(scenario: scenario, options: options).run()
            // A setup a snapshot cannot hold (clients, a configuration loaded) runs again both ways.
            #expect(forked.forked == Explorer(scenario: scenario, options: options).forkable && !again.forked)
            #expect(forked.perDepth == again.perDepth)
            #expect(forked.distinctStates == again.distinctStates)
            #expect(forked.failure?.failure == again.failure?.failure)
            #expect(forked.failure?.schedule == again.failure?.schedule)
            #expect(forked.failure?.transcript == again.failure?.transcript)
            #expect(forked.failure?.verifies ?? true)
            #expect((forked.failure == nil) == naiveOff, "\(path): the naive run finds the race, the default is clean")
        }
    }

    @Test func aSetupASnapshotCannotHoldIsRunAgainForEachSchedule() throws {
        for setup in ["get a:1 --async", "client tab2", "persist"] {
            let scenario = try Self.scenario("\(setup)\nconcurrent\n  put b:1 1\nend\n")
            #expect(!Explorer(scenario: scenario, options: ExploreOptions()).forkable, "\(setup)")
        }
        let plain = try Self.scenario("ns a ttl=1m\nserver set a:1 1\nget a:1\nwatch a:1\nconcurrent\n  put b:1 1\nend\n")
        #expect(Explorer(scenario: plain, options: ExploreOptions()).forkable)
    }

    /// A setup that leaves a `dedupe=` window open forks (the snapshot keeps the window; before,
    /// it did not, and a fork sent the deduplicated read as a request); so does one that leaves a
    /// next page holding the earlier pages (`next-page-drops-writes`: the snapshot keeps them,
    /// `pending.held_pages`; before, that setup ran again for each schedule). Both find what
    /// running the setup again finds.
    @Test(arguments: [
        "ns a ttl=1m dedupe=10s\nserver set a:1 1\nget a:1\nconcurrent\n  get a:1 --force --async\nand\n  server set a:1 2\nend\nexpect peek a:1 value=1\n",
        "ns f naive=next-page-drops-writes\nserver set f:x@1 [1]\nserver set f:x@2 [2]\nget f:x@1\npages f:x --next --nowait\n"
            + "concurrent\n  put f:x@1 [9]\nand\n  server set f:x@2 [3]\nend\nexpect peek f:x@1 value=[9]\n",
    ])
    func aSetupThatLeavesPendingStateForksAndFindsWhatRunningItAgainFinds(text: String) throws {
        let scenario = try Self.scenario(text)
        var options = ExploreOptions()
        let forked = Explorer(scenario: scenario, options: options).run()
        options.fork = false
        let again = Explorer(scenario: scenario, options: options).run()
        #expect(forked.forked)
        #expect(forked.perDepth == again.perDepth)
        #expect(forked.failure?.failure == again.failure?.failure)
        #expect(forked.failure?.transcript == again.failure?.transcript)
    }

    /// The server state a snapshot now keeps (scripted answers, strict mode, versions, the
    /// idempotency keys applied) lets a setup that makes it fork, and forking finds what running
    /// the setup again for each schedule finds.
    @Test(arguments: [
        "server next a:1 latency=5ms\nserver next a:1 --fail",
        "server strict on\nserver next a:1 {\"n\":7}",
        "server set a:1 {\"n\":1} version=3\nget a:1",
        "server set a:1 {\"n\":1}\nget a:1\nserver next a:1 --lost-answer\nmutate a:1 {\"n\":{\"$inc\":1}} --idempotent\nadvance 1s",
    ])
    func aSetupOfServerStateASnapshotKeepsForks(setup: String) throws {
        let scenario = try Self.scenario("ns a ttl=1m retry=2 backoff=100ms\n\(setup)\nconcurrent\n  get a:1 --force --async\nand\n"
                                         + "  event patch a:1 {\"n\":5} version=4\n  server show a:1\nend\nexpect get a:1 state=fresh\n")
        #expect(Explorer(scenario: scenario, options: ExploreOptions()).forkable, "\(setup)")
        var options = ExploreOptions()
        let forked = Explorer(scenario: scenario, options: options).run()
        options.fork = false
        let again = Explorer(scenario: scenario, options: options).run()
        #expect(forked.problem == nil && again.problem == nil, "\(String(describing: forked.problem))")
        #expect(forked.forked && !again.forked)
        #expect(forked.schedules == again.schedules)
        #expect(forked.perDepth == again.perDepth)
        #expect(forked.distinctStates == again.distinctStates)
        #expect(forked.failure?.failure == again.failure?.failure)
        #expect(forked.failure?.schedule == again.failure?.schedule)
        #expect(forked.failure?.transcript == again.failure?.transcript)
    }

    @Test func theSearchStopsAtItsBoundOfSchedulesAndSaysSo() throws {
        let s = try Self.scenario("concurrent\n  put a:1 1\n  put a:2 2\nand\n  put b:1 1\n  put b:2 2\nend\n")
        var options = ExploreOptions()
        options.scheduleLimit = 4
        options.strategy = .exhaustive
        options.reduce = false
        options.randomSchedules = 10
        let report = Explorer(scenario: s, options: options).run()
        #expect(report.stoppedAtBound)
        #expect(report.schedules == 4)
        #expect(report.random == 0)
        #expect(report.exitCode == 0)
        #expect(ExploreCommands.humanLines(report).last == "clean to depth 1, 4 schedules (stopped at the bound of 4 schedules inside depth 2)")
    }

    /// Random small scenarios (reads, puts, server changes and mutations of one key, in one or
    /// two sections, under a naive switch or the default): whenever explore finds a failure, the
    /// shrunk schedule fails the same way, has no more commands than the one first found, no
    /// more preemptions, and its transcript verifies.
    @Test func theShrunkScheduleAlwaysFailsIsNeverLongerAndVerifies() throws {
        var generator = SeededGenerator(seed: 36)
        var failures = 0
        for _ in 0..<40 {
            let naive = generator.pick(["last-answer-wins", "answer-drops-mutations", "rollback-to-snapshot", "none"])
            var text = "ns k ttl=10m naive=\(naive)\nserver set k:1 {\"v\":0}\nget k:1\nconcurrent\n"
            let count = Int.random(in: 2...4, using: &generator)
            for i in 0..<count {
                if i > 0 && generator.chance(20) { text += "and\n" }
                text += "  " + generator.pick([
                    "get k:1 --force --async latency=10ms..1s",
                    "put k:1 {\"v\":\(i + 1)}",
                    "server set k:1 {\"v\":\(i + 10)}",
                    "mutate k:1 {\"m\":\(i)} latency=10ms..1s answer=ok,fail",
                ]) + "\n"
            }
            text += "end\n"
            let scenario = try ExploreScenario(name: "random.explore", text: text)
            var options = ExploreOptions()
            options.depth = 3
            let report = Explorer(scenario: scenario, options: options).run()
            #expect(report.problem == nil, "\(text)")
            // The default policy keeps every built-in property: no failure without an expect line.
            if naive == "none" { #expect(report.failure == nil, "\(text)\n\(report.failure?.transcript ?? "")") }
            guard let found = report.failure else { continue }
            failures += 1
            #expect(found.verifies, "\(text)\n\(found.transcript)")
            #expect(found.commands <= found.commandsBeforeShrinking, "\(text)")
            #expect(found.preemptions <= report.foundAtDepth ?? .max, "\(text)")
        }
        #expect(failures >= 3, "the random scenarios found too few failures to test the shrinker")
    }

    /// The shrinker leaves out setup commands the failure does not need (another key, another
    /// tab) and the `advance` lines between steps that no answer needs, but keeps the naive
    /// switch and what makes the failure the switch's: the same schedule with the switch off
    /// passes, so a command whose absence fails under the default policy too stays.
    @Test func theShrinkerDropsSetupAndAdvancesButKeepsTheSwitchsRace() throws {
        let text = """
            ns counter ttl=10m stale=5m naive=invalidate-drops-unwatched
            ns other ttl=1m
            server set counter:value {"n":1}
            server set other:x 1
            get other:x
            client tab2
            get counter:value
            client main
            activate counter:value
            get counter:value
            deactivate counter:value
            concurrent
              activate counter:value
              get counter:value --async latency=10ms..1s
            and
              server set counter:value {"n":2}
              invalidate counter:value
            end
            expect peek counter:value value={"n":2}
            """
        let report = Explorer(scenario: try Self.scenario(text), options: ExploreOptions()).run()
        let found = try #require(report.failure)
        #expect(found.verifies, "\(found.transcript)")
        let commands = found.transcript.split(separator: "\n").filter { $0.hasPrefix("cachesh> ") && !$0.hasPrefix("cachesh> #") }
            .map { String($0.dropFirst("cachesh> ".count)) }
        #expect(commands == [
            "ns counter ttl=10m stale=5m naive=invalidate-drops-unwatched",
            "server set counter:value {\"n\":1}",
            "get counter:value",
            "server set counter:value {\"n\":2}",
            "invalidate counter:value",
            "activate counter:value",
            "get counter:value --async",
            "expect peek counter:value value={\"n\":2}",
        ], "\(found.transcript)")
        #expect(found.commands == commands.count)
        #expect(found.commandsBeforeShrinking > found.commands)
    }
}
