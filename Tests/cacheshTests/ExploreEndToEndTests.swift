import Foundation
import Testing

/// `cachesh --explore FILE` and the `explore` command (SPEC §3.1): schedules counted, races of the
/// gallery found under their naive switch and clean under the default, the failing schedule
/// shrunk to a transcript that verifies, a wrong scenario told apart from a race (exit 2).
/// Every figure asserted is a count of schedules or commands, never a time.
@Suite("Explore")
struct ExploreEndToEndTests {
    static let directory = ExamplesTests.root.appendingPathComponent("Examples/explore")

    static let scenarios: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".explore") }.map { String($0.dropLast(".explore".count)) }.sorted()
    }()

    /// `cachesh --json --explore FILE ARGS...` in a sandbox holding FILE as `scenario.explore`.
    static func explore(_ text: String, _ arguments: [String] = [], sandbox: Sandbox? = nil) async throws -> (Outcome, [String: Any]) {
        let sandbox = try sandbox ?? Sandbox()
        try sandbox.write("scenario.explore", text)
        let run = try await Cachesh.run(["--json", "--explore", "scenario.explore"] + arguments, in: sandbox.url)
        let object = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
        return (run, object)
    }

    @Test func theDirectoryHoldsAtLeastFourRacesEachListedInItsReadme() throws {
        #expect(Self.scenarios.count >= 4)
        let readme = try String(contentsOf: Self.directory.appendingPathComponent("README.md"), encoding: .utf8)
        for name in Self.scenarios { #expect(readme.contains("(\(name).explore)"), "README.md does not list \(name)") }
    }

    @Test(arguments: scenarios)
    func underItsNaiveSwitchExploreFindsTheRaceAndTheShrunkTranscriptVerifies(name: String) async throws {
        let sandbox = try Sandbox()
        let scenario = Self.directory.appendingPathComponent("\(name).explore").path
        let out = sandbox.url.appendingPathComponent("found.transcript").path
        let run = try await Cachesh.run(["--safe", "--json", "--explore", scenario], in: sandbox.url)
        #expect(run.status == 1, "\(name): \(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let failure = try #require(object["failure"] as? [String: Any], "\(name): \(run.stdout)")
        let commands = try #require(failure["commands"] as? Int)
        let before = try #require(failure["commands_before_shrinking"] as? Int)
        #expect(commands <= before, "\(name): the shrunk transcript is longer than the first failing one")
        #expect(commands <= 12, "\(name): issue 36's goal is at most 12 commands")
        #expect(failure["verifies"] as? Bool == true)
        // Written out, the transcript fails as found (its failing expect prints its error) and
        // `--verify` replays it byte for byte, under --safe (no file is read).
        let written = try await Cachesh.run(["--explore", scenario, "transcript=\(out)"], in: sandbox.url)
        #expect(written.status == 1)
        let transcript = try String(contentsOfFile: out, encoding: .utf8)
        #expect(transcript == failure["transcript"] as? String)
        #expect(transcript.components(separatedBy: "\ncachesh> ").count - 1 == commands, "\(name): one comment line, then the commands")
        let verify = try await Cachesh.run(["--verify", "--safe", out], in: sandbox.url)
        #expect(verify.status == 0, "\(name): \(verify)")
        #expect(verify.stdout == "1 passed, 0 failed\n")
        // The race stays the switch's: the same commands with every switch off (and time for
        // the answers the default policy's refetches wait for) pass their expect lines.
        let script = transcript.split(separator: "\n").filter { $0.hasPrefix("cachesh> ") }.map { line in
            let command = line.dropFirst("cachesh> ".count).replacing(/naive=[a-z0-9,-]+/, with: "naive=none")
            return command.hasPrefix("expect ") ? "advance 5s\n" + command : String(command)
        }.joined(separator: "\n") + "\n"
        try sandbox.write("default.cachesh", script)
        let underDefault = try await Cachesh.run(["--safe", "default.cachesh"], in: sandbox.url)
        #expect(underDefault.status == 0, "\(name): with the switch off the shrunk schedule fails too: \(underDefault)\n\(script)")
    }

    @Test(arguments: scenarios)
    func underTheDefaultPolicyTheSameScenarioIsCleanToDepthFour(name: String) async throws {
        let scenario = Self.directory.appendingPathComponent("\(name).explore").path
        let run = try await Cachesh.run(["--safe", "--explore", scenario, "naive=none"])
        #expect(run.status == 0, "\(name): \(run)")
        let verdict = try #require(run.stdout.split(separator: "\n").last)
        #expect(verdict.hasPrefix("clean to depth 4, "), "\(name): \(run.stdout)")
    }

    // MARK: Counts

    /// Two sections of two puts: the six interleavings, counted by preemptions (each choice of
    /// the second section's next put while the first still has one is a preemption).
    static let twoByTwo = """
        concurrent
          put a:1 1
          put a:2 2
        and
          put b:1 1
          put b:2 2
        end
        expect peek a:1 value=1
        """

    @Test func schedulesAreCountedByPreemptionsExactly() async throws {
        let (run, object) = try await Self.explore(Self.twoByTwo, ["depth=2", "por=off"])
        #expect(run.status == 0, "\(run)")
        #expect(object["per_depth"] as? [Int] == [1, 2, 3])
        #expect(object["schedules"] as? Int == 6)
        #expect(object["depth"] as? Int == 2)
        #expect(object["distinct_states"] as? Int == 1)
        #expect(run.stdout.contains("\"clean\":true"))
        let (shallow, shallowObject) = try await Self.explore(Self.twoByTwo, ["depth=1", "por=off"])
        #expect(shallow.status == 0)
        #expect(shallowObject["per_depth"] as? [Int] == [1, 2])
        let sandbox = try Sandbox()
        try sandbox.write("scenario.explore", Self.twoByTwo)
        let human = try await Cachesh.run(["--explore", "scenario.explore", "depth=2", "por=off"], in: sandbox.url)
        #expect(human.stdout.hasSuffix("clean to depth 2, 6 schedules\n"), "\(human)")
        #expect(human.stdout.contains("\ndistinct states: 1\ndepth reached: 2 (every schedule of at most 2 preemptions)\n"), "\(human)")
        #expect(human.stdout.contains("\ntime: "), "\(human)")
        #expect(human.stdout.contains("\neach schedule forked from the state after the setup\n"), "\(human)")
        // fork=off runs the setup again by choice, not for what a snapshot does not keep.
        let unforked = try await Cachesh.run(["--explore", "scenario.explore", "depth=2", "por=off", "fork=off"], in: sandbox.url)
        #expect(unforked.stdout.contains("\nthe setup run again for each schedule (fork=off)\n"), "\(unforked)")
        #expect(unforked.stdout.hasSuffix("clean to depth 2, 6 schedules\n"), "\(unforked)")
        // The puts of the two sections touch different keys: with the reduction, one schedule of
        // the six runs, the other five are its reorderings.
        let (reduced, reducedObject) = try await Self.explore(Self.twoByTwo, ["depth=2"])
        #expect(reduced.status == 0)
        #expect(reducedObject["per_depth"] as? [Int] == [1, 0, 0])
        #expect(reducedObject["reordered"] as? Int == 5)
        #expect(reducedObject["distinct_states"] as? Int == 1)
        #expect(reducedObject["por"] as? Bool == true)
    }

    /// The state a schedule ends in is the client's the steps ran in: with the setup ending in
    /// `client tab2`, two orders of two reads in an LRU namespace of three end in two recency
    /// orders, as they do in `main` (the entries were read from the first client's cache, the
    /// changes from tab2's, and the two orders counted as one state).
    @Test(arguments: ["", "client main\n"])
    func distinctStatesAreTheStatesOfTheClientTheStepsRanIn(back: String) async throws {
        let scenario = """
            ns feed max=3
            client tab2
            \(back)put feed:a 1
            put feed:b 2
            concurrent
              get feed:a --async
            and
              get feed:b --async
            end
            """
        let (run, object) = try await Self.explore(scenario, [])
        #expect(run.status == 0, "\(run)")
        #expect(object["schedules"] as? Int == 2, "\(run)")
        #expect(object["distinct_states"] as? Int == 2, "\(run)")
    }

    /// `--junit REPORT` over two scenarios, one clean and one failing: a suite each, a case per
    /// property, the broken one failing with the shrunk transcript and the rest skipped.
    @Test func junitHasACasePerPropertyAndTheFailureCarriesTheTranscript() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("clean.explore", Self.twoByTwo)
        try sandbox.write("race.explore", try String(contentsOf: Self.directory.appendingPathComponent("swr-173-older-answer-wins.explore"),
                                                     encoding: .utf8))
        let run = try await Cachesh.run(["--explore", "clean.explore", "race.explore", "--junit", "report.xml"], in: sandbox.url)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.hasPrefix("explore clean.explore:\n"))
        #expect(run.stdout.contains("\n\nexplore race.explore:\n"))
        let xml = try String(contentsOf: sandbox.url.appendingPathComponent("report.xml"), encoding: .utf8)
        #expect(xml.contains("<testsuites name=\"cachesh --explore\" tests=\"10\" failures=\"1\" errors=\"0\">"), "\(xml)")
        #expect(xml.contains("<testcase classname=\"clean.explore\" name=\"expect peek a:1 value=1 (line 8)\">"), "\(xml)")
        #expect(xml.contains("<testcase classname=\"clean.explore\" name=\"B12\">"))
        #expect(xml.contains("<testcase classname=\"race.explore\" name=\"expect peek feed:home value=v2 (line 14)\">\n      <failure message="), "\(xml)")
        #expect(xml.contains("cachesh&gt; expect peek feed:home value=v2"))
        #expect(xml.contains("<skipped message=\"the search stopped at the first failure before it was checked to the bound\"/>"))
        // The same run writes the same bytes.
        _ = try await Cachesh.run(["--explore", "clean.explore", "race.explore", "--junit", "again.xml"], in: sandbox.url)
        #expect(try String(contentsOf: sandbox.url.appendingPathComponent("again.xml"), encoding: .utf8) == xml)
        // A wrong scenario is a case in error, and the run exits 2.
        try sandbox.write("wrong.explore", "concurrent\n  put a:1\nend\n")
        let wrong = try await Cachesh.run(["--explore", "clean.explore", "wrong.explore", "--junit", "wrong.xml"], in: sandbox.url)
        #expect(wrong.status == 2, "\(wrong)")
        let wrongXML = try String(contentsOf: sandbox.url.appendingPathComponent("wrong.xml"), encoding: .utf8)
        #expect(wrongXML.contains("<testcase classname=\"wrong.explore\" name=\"scenario\">\n      <error message=\"the scenario is wrong\">wrong.explore:2: error: "), "\(wrongXML)")
    }

    /// `strategy=pct` runs random schedules alone, the first the written order; the same seed,
    /// the same report.
    @Test func pctRunsRandomSchedulesAloneAndSaysSo() async throws {
        let race = try String(contentsOf: Self.directory.appendingPathComponent("swr-173-older-answer-wins.explore"), encoding: .utf8)
        let (clean, object) = try await Self.explore(race, ["strategy=pct", "schedules=40", "naive=none", "seed=3"])
        #expect(clean.status == 0, "\(clean)")
        #expect(object["per_depth"] as? [Int] == [])
        #expect(object["random_schedules"] as? Int == 40)
        #expect(object["strategy"] as? String == "pct")
        #expect(object["seed"] as? Int == 3)
        let sandbox = try Sandbox()
        try sandbox.write("race.explore", race)
        let human = try await Cachesh.run(["--explore", "race.explore", "strategy=pct", "schedules=40", "naive=none", "seed=3"], in: sandbox.url)
        #expect(human.stdout.hasSuffix("\nclean: 40 random schedules (PCT, at most 4 change points, seed 3)\n"), "\(human)")
        let (found, foundObject) = try await Self.explore(race, ["strategy=pct", "schedules=200", "seed=3"])
        #expect(found.status == 1, "\(found)")
        #expect((foundObject["failure"] as? [String: Any])?["verifies"] as? Bool == true)
    }

    /// Answers of fixed latencies: the order where the slow one comes first while the fast one
    /// was sent before it arrived is one no times fit; it is counted, not run.
    @Test func ordersTheLatencyRangesForbidAreCountedAndNotRun() async throws {
        let text = "concurrent\n  get a:1 --async latency=100ms\n  get b:1 --async latency=1ms\nend\n"
        let (run, object) = try await Self.explore(text)
        #expect(run.status == 0, "\(run)")
        #expect(object["per_depth"] as? [Int] == [1, 0, 1, 0, 0])
        #expect(object["infeasible"] as? Int == 1)
        #expect(object["schedules"] as? Int == 2)
    }

    @Test func randomSchedulesPastTheBoundAreCountedAndTheSameForTheSameSeed() async throws {
        let (run, object) = try await Self.explore(Self.twoByTwo, ["depth=0", "schedules=25", "seed=7"])
        #expect(run.status == 0)
        #expect(object["random_schedules"] as? Int == 25)
        #expect(object["schedules"] as? Int == 26)
        let (again, againObject) = try await Self.explore(Self.twoByTwo, ["depth=0", "schedules=25", "seed=7"])
        // The same but the time it took.
        #expect(NSDictionary(dictionary: againObject.filter { $0.key != "seconds" }) == NSDictionary(dictionary: object.filter { $0.key != "seconds" }))
        #expect(again.status == 0)
    }

    /// A planted bug that needs exactly `n` preemptions: the answer to a read sent before `n`
    /// events must arrive after the last of them (each step past it is one choice out of order).
    static func planted(_ n: Int) -> String {
        var text = """
            ns p ttl=10m naive=last-answer-wins
            server set p:k {"v":"server"}
            get p:k
            concurrent
              get p:k --force --async latency=1ms..10s

            """
        for i in 1...n { text += "  event patch p:k {\"v\":\"e\(i)\"}\n" }
        text += "end\nexpect peek p:k value.v=e\(n)\n"
        return text
    }

    @Test(arguments: [1, 2, 3])
    func theExhaustiveSearchFindsAPlantedBugAtItsDepthAndNotBelow(n: Int) async throws {
        let (below, belowObject) = try await Self.explore(Self.planted(n), ["depth=\(n - 1)"])
        #expect(below.status == 0, "\(below)")
        #expect(belowObject["depth"] as? Int == n - 1)
        let (at, atObject) = try await Self.explore(Self.planted(n), ["depth=\(n)"])
        #expect(at.status == 1, "\(at)")
        let failure = try #require(atObject["failure"] as? [String: Any])
        #expect(failure["found_at_depth"] as? Int == n)
        #expect((atObject["per_depth"] as? [Int])?.count == n + 1)
        // Shrinking may drop the events the answer need not pass: never more preemptions.
        #expect(try #require(failure["preemptions"] as? Int) <= n)
        #expect(failure["verifies"] as? Bool == true)
    }

    @Test func theShrinkerDropsStepsTheFailureDoesNotNeed() async throws {
        let text = """
            ns reviews ttl=10m naive=last-answer-wins
            server set reviews:list ["R","S"]
            get reviews:list
            concurrent
              put other:1 1
              get reviews:list --force --async latency=10ms..1s
              put other:2 2
              put reviews:list ["S"]
              put other:3 3
            end
            expect peek reviews:list value=["S"]
            """
        let (run, object) = try await Self.explore(text)
        #expect(run.status == 1, "\(run)")
        let failure = try #require(object["failure"] as? [String: Any])
        let transcript = try #require(failure["transcript"] as? String)
        #expect(!transcript.contains("other:"), "\(transcript)")
        #expect(try #require(failure["commands"] as? Int) < (try #require(failure["commands_before_shrinking"] as? Int)))
        #expect(failure["verifies"] as? Bool == true)
    }

    @Test func b12IsCheckedWithoutAnExpectLine() async throws {
        let text = """
            ns reviews ttl=10m naive=last-answer-wins
            server set reviews:list ["R","S"]
            get reviews:list
            concurrent
              get reviews:list --force --async latency=10ms..1s
              put reviews:list ["S"]
            end
            """
        let (run, object) = try await Self.explore(text)
        #expect(run.status == 1, "\(run)")
        let failure = try #require(object["failure"] as? [String: Any])
        #expect(failure["property"] as? String == "B12")
        #expect((failure["transcript"] as? String)?.contains("cachesh> timeline reviews:list\n") == true)
        let (clean, _) = try await Self.explore(text.replacingOccurrences(of: " naive=last-answer-wins", with: ""))
        #expect(clean.status == 0, "\(clean)")
    }

    @Test func aRollbackThatRemovesMoreThanItsOwnChangeIsFoundWithoutAnExpectLine() async throws {
        let text = """
            ns todos ttl=10m naive=rollback-to-snapshot
            server set todos:list {"items":[]}
            get todos:list
            concurrent
              mutate todos:list {"items":{"$push":"a"}} latency=10ms..1s answer=fail
              mutate todos:list {"items":{"$push":"b"}} latency=10ms..1s answer=fail
            end
            """
        let (run, object) = try await Self.explore(text)
        #expect(run.status == 1, "\(run)")
        let failure = try #require(object["failure"] as? [String: Any])
        #expect(failure["property"] as? String == "B11 rollback")
        #expect(failure["message"] as? String
                == "the rollback of line 6 (mutate todos:list {\"items\":{\"$push\":\"b\"}}) left {\"items\":[\"a\"]}, not {\"items\":[]} without its change")
        #expect(failure["verifies"] as? Bool == true)
        let (clean, _) = try await Self.explore(text, ["naive=none"])
        #expect(clean.status == 0, "\(clean)")
    }

    // MARK: A wrong scenario is not a race

    @Test(arguments: [
        ("ns a ttl=1m\nconcurrent\n  get a:1 --async latency=1ms..2ms\n  bogus\nend\n",
         "scenario.explore:4: error: explore: refused in the written order, so the scenario is wrong: unknown command \"bogus\" (try help)"),
        ("ns a ttl=1m\nconcurrent\n  get a:1 --async\n", "scenario.explore:2: error: explore: concurrent is never closed with end"),
        ("put a:1 1\n", "scenario.explore:2: error: explore: no concurrent block: write the steps that may interleave between concurrent and end"),
        ("concurrent\n  get a:1 latency=1ms\nend\n",
         "scenario.explore:2: error: explore: a get step waits for its answer, which would fix the order; write get KEY --async (or --nowait)"),
        ("concurrent\n  put a:1 1 latency=1ms\nend\n",
         "scenario.explore:2: error: explore: latency= goes on a step that sends a request: get, mutate KEY, pages KEY --next, request METHOD KEY, or any step with sends=KEY naming the key it sends for (focus sends=todos:list)"),
        ("concurrent\n  focus sends=a:1\nend\n", "scenario.explore:2: error: explore: sends= needs latency= (the range its answer arrives in, latency=10ms..1s)"),
        ("concurrent\n  put a:1 1 client=Tab\nend\n",
         "scenario.explore:2: error: explore: client=Tab: a client name is a lowercase letter, then lowercase letters, digits or - (like tab2 or widget)"),
        ("concurrent\n  pages a:list --next latency=1ms\nend\n",
         "scenario.explore:2: error: explore: a pages step with latency= waits for its answer, which would fix the order; add --nowait"),
        ("concurrent\n  get a:1 --async latency=2s..1s\nend\n", "scenario.explore:2: error: explore: latency=2s..1s: the low end is above the high end"),
        ("concurrent\n  get a:1 --async latency=1ms answer=maybe\nend\n",
         "scenario.explore:2: error: explore: answer=maybe: a list of ok, fail and lost (answer=ok,lost)"),
        ("concurrent\n  put a:1 1\nend\nconcurrent\n", "scenario.explore:4: error: explore: concurrent after end (a scenario has one block)"),
        ("concurrent\n  put a:1 1\n  advance 1s\nend\n",
         "scenario.explore:3: error: explore: advance as a step would move the clock under the schedule, which sets the times; put it in the setup, or give the step's answer a latency= range"),
        ("concurrent\n  put a:1 1\nend\nexpect peek a:1\n",
         "scenario.explore:4: error: explore: refused in the written order, so the scenario is wrong: expect needs at least one PATH=VALUE after the command"),
        ("concurrent\n  put a:1 1\n  expect peke a:1 value=1\nend\n",
         "scenario.explore:3: error: explore: refused in the written order, so the scenario is wrong: expect runs peek, keys, stats, pending, server show, server log, now, config or get, not \"peke\""),
        ("put a:1 {\"x\":\nconcurrent\n  put a:1 1\nend\n", "scenario.explore:1: error: unterminated JSON value: \"{\" opened here is never closed"),
    ])
    func aWrongScenarioExitsTwoWithItsLine(text: String, error: String) async throws {
        let (run, _) = try await Self.explore(text)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr == error + "\n")
        #expect(run.stdout.isEmpty)
    }

    @Test func underSafeEachScheduleHasAStrangersBudgetOfScheduledWork() async throws {
        let (run, _) = try await Self.explore("poll a:1 every=1ms\nadvance 1d\nconcurrent\n  put b:1 1\nend\n", ["--safe"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.hasPrefix("scenario.explore:2: error: explore: refused in the written order, so the scenario is wrong: stopped after running "))
        #expect(run.stderr.contains("scheduled items in all (the budget of --safe and --verify: "))
    }

    @Test func aScenarioRunAsAScriptSaysToExploreIt() async throws {
        let scenario = Self.directory.appendingPathComponent("swr-420-response-after-local-delete.explore").path
        let run = try await Cachesh.run(["--safe", "--bail", scenario])
        #expect(run.status == 1)
        #expect(run.stderr == "\(scenario):8: error: unknown command \"concurrent\": this reads as an explore scenario, not a script; "
                + "run cachesh --explore FILE (or explore FILE)\n")
    }

    @Test func aBlockHasAtMostThirtyTwoSteps() async throws {
        let steps = (1...33).map { "  put a:\($0) \($0)" }.joined(separator: "\n")
        let (run, _) = try await Self.explore("concurrent\n\(steps)\nend\n")
        #expect(run.status == 2)
        #expect(run.stderr == "scenario.explore:34: error: explore: more than 32 steps in a block; at most 32\n")
        let (atLimit, _) = try await Self.explore("concurrent\n" + (1...32).map { "  put a:\($0) \($0)" }.joined(separator: "\n") + "\nend\n", ["depth=0"])
        #expect(atLimit.status == 0, "\(atLimit)")
    }

    @Test(arguments: [
        (["depth=17"], "cachesh: --explore: depth=17: use a whole number of preemptions from 0 to 16"),
        (["schedules=100001"], "cachesh: --explore: schedules=100001: use a whole number of random schedules from 0 to 100000"),
        (["naive=all"], "cachesh: --explore: naive=all: only naive=none (every switch off after the setup)"),
        (["--bail"], "cachesh: --explore takes scenario FILEs and their options alone (with --json, --safe or --junit REPORT)"),
        (["strategy=random"], "cachesh: --explore: strategy=random: use auto, exhaustive or pct"),
        (["por=no"], "cachesh: --explore: por=no: use on or off"),
        (["--safe", "--junit", "report.xml"], "cachesh: --explore: --safe writes no file (--junit report.xml)"),
        (["scenario.explore", "transcript=found.transcript"], "cachesh: --explore: transcript=OUT goes with one scenario FILE"),
        (["--safe", "transcript=found.transcript"], "cachesh: --explore: --safe writes no file (transcript=found.transcript)"),
        (["deep=3"], "cachesh: --explore FILE... takes depth=N, schedules=N, seed=S, strategy=S, por=on|off, fork=on|off, naive=none, perturb=D and transcript=OUT after it, not deep=3"),
    ])
    func badOptionsAreUsageErrors(arguments: [String], error: String) async throws {
        let (run, _) = try await Self.explore(Self.twoByTwo, arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr == error + "\n")
    }

    @Test func theExploreCommandReportsInAScriptAndFailsItsLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("race.explore", try String(contentsOf: Self.directory.appendingPathComponent("swr-420-response-after-local-delete.explore"),
                                                     encoding: .utf8))
        let clean = try await Cachesh.run(["-c", "explore race.explore naive=none"], in: sandbox.url)
        #expect(clean.status == 0, "\(clean)")
        #expect(clean.stdout.hasSuffix("clean to depth 4, 3 schedules\n"))
        let found = try await Cachesh.run(["-c", "explore race.explore depth=2"], in: sandbox.url)
        #expect(found.status == 1)
        #expect(found.stdout.contains("failed: expect peek reviews:list value=[\"S\"] (line 13)\n"))
        #expect(found.stderr == "-c:1:1: error: explore: expect peek reviews:list value=[\"S\"] (line 13) fails (exit 1 under cachesh --explore)\n")
        let safe = try await Cachesh.run(["--safe", "-c", "explore race.explore"], in: sandbox.url)
        #expect(safe.status == 1)
        #expect(safe.stderr.contains("error: --safe: commands may not read files ("))
        let wrong = try await Cachesh.run(["-c", "explore missing.explore"], in: sandbox.url)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.hasPrefix("-c:1:1: error: explore: cannot read missing.explore: "))
    }
}
