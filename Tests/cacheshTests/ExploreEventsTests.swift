import Foundation
import Testing

/// `explore` on every namespace kind and its whole-schedule properties (SPEC §3.1): steps in
/// several clients, the built-in properties *read after change* and *no invented value* found
/// without an expect line under a naive switch and clean under the default. Counts, never times.
@Suite("Explore events")
struct ExploreEventsTests {
    /// The failure `cachesh --json --explore` reports for `text`, and the run under `naive=none`.
    static func failure(_ text: String) async throws -> (failure: [String: Any], clean: Outcome) {
        let (run, object) = try await ExploreEndToEndTests.explore(text)
        #expect(run.status == 1, "\(run)")
        let failure = try #require(object["failure"] as? [String: Any], "\(run)")
        #expect(failure["verifies"] as? Bool == true)
        let (clean, _) = try await ExploreEndToEndTests.explore(text, ["naive=none"])
        return (failure, clean)
    }

    @Test func aRefetchThatGetsTheAnswerFromBeforeTheChangeBreaksReadAfterChange() async throws {
        let (failure, clean) = try await Self.failure("""
            ns items ttl=10m naive=join-refetch
            server set items:list ["a"]
            concurrent
              get items:list --async latency=10ms..1s
              server set items:list ["a","b"]
              get items:list --force --async latency=10ms..1s
            end
            """)
        #expect(failure["property"] as? String == "read after change")
        #expect(failure["message"] as? String == "the read of line 6 (get items:list --force --async) came after the server's last change "
                + "of items:list, yet once all was answered the entry holds [\"a\"], not [\"a\",\"b\"]")
        #expect((failure["transcript"] as? String)?.hasSuffix("cachesh> timeline items:list\n") == false)
        #expect((failure["transcript"] as? String)?.contains("cachesh> timeline items:list\n") == true)
        #expect(clean.status == 0, "\(clean)")
        #expect(clean.stdout.contains("\"clean\":true"))
    }

    @Test func aFailedMutationWhoseChangeStaysBreaksNoInventedValue() async throws {
        // Merge patches redo to the same value, so B11's rollback check cannot see it: the value
        // after the rollback is one no one held.
        let (failure, clean) = try await Self.failure("""
            ns prefs ttl=10m naive=confirm-commits-all
            server set prefs:me {}
            get prefs:me
            concurrent
              mutate prefs:me {"a":true} latency=10ms..1s
              mutate prefs:me {"b":true} latency=10ms..1s answer=fail
            end
            """)
        #expect(failure["property"] as? String == "no invented value")
        #expect(failure["message"] as? String == "prefs:me showed {\"a\":true,\"b\":true} (rolled-back), which neither the server's data, "
                + "a scripted answer nor a local write held (not even with the changes of line 5)")
        #expect(failure["preemptions"] as? Int == 1)
        #expect(clean.status == 0, "\(clean)")
    }

    /// A value a step wrote or an event brought is no invention; nor is the pending mutations'
    /// change on any value held: the default policy's optimistic values pass.
    @Test func optimisticValuesAndWritesAreNotInventions() async throws {
        let (run, _) = try await ExploreEndToEndTests.explore("""
            ns todos ttl=10m
            server set todos:list {"items":[]}
            get todos:list
            concurrent
              mutate todos:list {"items":{"$push":"a"}} latency=10ms..1s answer=ok,fail
              mutate todos:list {"items":{"$push":"b"}} latency=10ms..1s answer=ok,fail
              get todos:list --force --async latency=10ms..1s
            and
              event patch todos:list {"title":"list"}
            end
            """, ["depth=3"])
        #expect(run.status == 0, "\(run)")
    }

    /// Two tabs: each step runs in its client, the transcript switches with `client NAME`, and
    /// B12 looks at the tab whose read and write they are (a put in another tab is no local write).
    @Test func stepsRunInTheirClientAndPropertiesStayInIt() async throws {
        let text = """
            ns reviews ttl=10m naive=last-answer-wins
            server set reviews:list ["R","S"]
            get reviews:list
            client tab2
            get reviews:list
            client main
            concurrent
              get reviews:list --force --async latency=10ms..1s
            and
              put reviews:list ["S"] client=tab2
            end
            """
        let (run, object) = try await ExploreEndToEndTests.explore(text)
        #expect(run.status == 0, "a put in tab2 is not main's write: \(run)")
        #expect(object["clean"] as? Bool == true)
        let (same, sameObject) = try await ExploreEndToEndTests.explore(text.replacingOccurrences(of: " client=tab2", with: ""))
        #expect(same.status == 1, "\(same)")
        let failure = try #require(sameObject["failure"] as? [String: Any])
        #expect(failure["property"] as? String == "B12")
        // With both steps in main, the other tab is no part of the failure: the shrinker leaves it out.
        let transcript = try #require(failure["transcript"] as? String)
        #expect(transcript.contains("cachesh> put reviews:list [\"S\"]\n"))
        #expect(!transcript.contains("client tab2"), "\(transcript)")
    }

    /// `pages --next` asks for the page after the last cached one, and `focus sends=KEY` names the
    /// request its refetch sends: both answers are events (three orders, not two), queued for
    /// the right keys.
    @Test func aNextPageAndAFocusRefetchAreEvents() async throws {
        let text = """
            ns t ttl=10m stale=1m
            server set t:list@1 [1]
            server set t:list@2 [2]
            pages t:list --next
            activate t:list@1
            advance 5m
            concurrent
              pages t:list --next --nowait latency=10ms..20ms
              focus sends=t:list@1 latency=10ms..20ms
            end
            expect peek t:list@2 value=[2]
            """
        let (run, object) = try await ExploreEndToEndTests.explore(text)
        #expect(run.status == 0, "\(run)")
        #expect(object["per_depth"] as? [Int] == [1, 1, 1, 0, 0])
        let (plain, plainObject) = try await ExploreEndToEndTests.explore(text.replacingOccurrences(of: " sends=t:list@1 latency=10ms..20ms", with: ""))
        #expect(plain.status == 0)
        #expect(plainObject["per_depth"] as? [Int] == [1, 1, 0, 0, 0])
        let (failing, failingObject) = try await ExploreEndToEndTests.explore(text.replacingOccurrences(of: "value=[2]", with: "value=[3]"))
        #expect(failing.status == 1)
        let transcript = try #require((failingObject["failure"] as? [String: Any])?["transcript"] as? String)
        #expect(transcript.contains("cachesh> server next t:list@2 latency=10ms\n"))
        #expect(transcript.contains("cachesh> server next t:list@1 latency=10ms\n"))
    }

    /// An HTTP read (its validation), an HTTP PUT and another client's next page in one block,
    /// each with failed and lost answers: every choice is a schedule (8 at depth 1 after the
    /// reduction, not the 3 of the same block answered ok only), and the default policy keeps
    /// every property.
    @Test func httpReadsAndRequestsAndAnotherClientsPageTakeEveryAnswer() async throws {
        let text = """
            ns img http origin=https://cdn.example.com
            ns t ttl=10m
            server set img:/a "cat" headers={"ETag":"\\"1\\"","Cache-Control":"max-age=60"}
            server set t:list@1 [1]
            server set t:list@2 [2]
            get img:/a
            pages t:list --next
            advance 2m
            concurrent
              get img:/a --nowait latency=10ms..1s answer=ok,fail,lost
              request PUT img:/a "dog" --nowait latency=10ms..1s answer=ok,fail,lost
            and
              pages t:list --next --nowait latency=10ms..1s answer=ok,fail client=tab2
            end
            """
        let (run, object) = try await ExploreEndToEndTests.explore(text, ["depth=2"])
        #expect(run.status == 0, "\(run)")
        #expect(object["per_depth"] as? [Int] == [1, 8, 29])
        #expect(object["distinct_states"] as? Int == 17)
        let plain = text.replacingOccurrences(of: " answer=ok,fail,lost", with: "").replacingOccurrences(of: " answer=ok,fail", with: "")
        let (okOnly, okObject) = try await ExploreEndToEndTests.explore(plain, ["depth=2"])
        #expect(okOnly.status == 0)
        #expect(okObject["per_depth"] as? [Int] == [1, 3, 6])
    }

    // MARK: Files the setup reads

    /// `load FILE` and `restore FILE` in the setup stay file references in the shrunk transcript,
    /// named relative to where it is written (the scenario's directory by default), and
    /// `--verify` replays it there byte for byte; a quoted path (a name with a space) stays quoted.
    @Test(arguments: ["load", "restore", "load quoted"])
    func aFileTheSetupReadsStaysAReferenceRelativeToTheTranscript(form: String) async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("scen"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: sandbox.url.appendingPathComponent("out"), withIntermediateDirectories: true)
        let command = String(form.prefix { $0 != " " })
        let file: String
        if command == "load" {
            file = form == "load" ? "conf.json" : "my conf.json"
            _ = try sandbox.write("scen/\(file)", #"{"namespaces": {"feed": {"ttl": "10m", "naive": ["last-answer-wins"]}}}"#)
        } else {
            file = "start.snapshot"
            let made = try await Cachesh.run(["-c", "ns feed ttl=10m naive=last-answer-wins\nsnapshot scen/start.snapshot"], in: sandbox.url)
            #expect(made.status == 0, "\(made)")
        }
        func written(_ path: String) -> String { form == "load quoted" ? "\"\(path)\"" : path }
        _ = try sandbox.write("scen/s.explore", """
            \(command) \(written(file))
            server set feed:home "v1"
            concurrent
              get feed:home --async latency=10ms..1s
              server set feed:home "v2"
              get feed:home --force --async latency=10ms..1s
            end
            expect peek feed:home value=v2
            """)
        let elsewhere = try await Cachesh.run(["--explore", "scen/s.explore", "transcript=out/found.transcript"], in: sandbox.url)
        #expect(elsewhere.status == 1, "\(elsewhere)")
        #expect(elsewhere.stdout.contains("; the transcript verifies:"))
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("out/found.transcript"), encoding: .utf8)
        #expect(transcript.contains("cachesh> \(command) \(written("../scen/" + file))\n"), "\(transcript)")
        #expect(!transcript.contains("\"namespaces\""), "the file is referenced, not inlined")
        let verify = try await Cachesh.run(["--verify", "out/found.transcript"], in: sandbox.url)
        #expect(verify.stdout == "1 passed, 0 failed\n", "\(verify)")
        // Beside the scenario (the default), the path is the scenario's own.
        let beside = try await Cachesh.run(["--json", "--explore", "s.explore"], in: sandbox.url.appendingPathComponent("scen"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(beside.stdout.utf8)) as? [String: Any])
        let failure = try #require(object["failure"] as? [String: Any])
        #expect(failure["verifies"] as? Bool == true)
        #expect((failure["transcript"] as? String)?.contains("cachesh> \(command) \(written(file))\n") == true)
    }

    // MARK: Around a recording

    /// A recording in which the first answer came back fast, so the newer one landed last: as
    /// recorded it passes; with its answer times moved by up to 200 ms, the older answer lands
    /// last under last-answer-wins, and under the default policy it never wins.
    static func recording(naive: String) -> String {
        """
        ns feed ttl=10m naive=\(naive)
        server set feed:home "v1"
        server next feed:home latency=100ms
        get feed:home --async
        advance 10ms
        server set feed:home "v2"
        server next feed:home latency=200ms
        get feed:home --force --async
        advance 1s
        expect peek feed:home value=v2
        """
    }

    @Test func aRaceTheRecordedTimingHidIsFoundByMovingItsAnswerTimes() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("rec.cachesh", Self.recording(naive: "last-answer-wins"))
        let recorded = try await Cachesh.run(["rec.cachesh"], in: sandbox.url)
        #expect(recorded.status == 0, "as recorded it passes: \(recorded)")
        let run = try await Cachesh.run(["--json", "--explore", "rec.cachesh", "perturb=200ms", "transcript=found.transcript"], in: sandbox.url)
        #expect(run.status == 1, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(object["perturb_ms"] as? Int == 200)
        #expect(object["per_depth"] as? [Int] == [1, 9])
        let failure = try #require(object["failure"] as? [String: Any])
        #expect(failure["property"] as? String == "expect peek feed:home value=v2 (line 10)")
        #expect(failure["schedule"] as? [String] == ["line 3: server next feed:home latency=211ms (recorded: 100ms)"])
        #expect(failure["commands"] as? Int == 10)
        #expect(failure["verifies"] as? Bool == true)
        let verify = try await Cachesh.run(["--verify", "found.transcript"], in: sandbox.url)
        #expect(verify.stdout == "1 passed, 0 failed\n", "\(verify)")
        // Moved by less than it takes to cross, it is clean; under the default, clean at any move.
        let near = try await Cachesh.run(["--explore", "rec.cachesh", "perturb=50ms"], in: sandbox.url)
        #expect(near.status == 0, "\(near)")
        #expect(near.stdout.hasSuffix("clean to depth 2, 25 schedules\n"), "both answers moved, each to its 4 candidates: \(near)")
        _ = try sandbox.write("default.cachesh", Self.recording(naive: "none"))
        let clean = try await Cachesh.run(["--explore", "default.cachesh", "perturb=200ms", "depth=2"], in: sandbox.url)
        #expect(clean.status == 0, "\(clean)")
        #expect(clean.stdout.contains("each schedule is the recording with some answer times moved by up to 200ms"))
    }

    /// A transcript (here a recording `record FILE` wrote, which starts with a restore) is read
    /// for its commands; a scenario given perturb= is an error, as is naive=none with it.
    @Test func aTranscriptIsARecordingTooAndAScenarioIsNot() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("make.cachesh", "record rec.transcript\n" + Self.recording(naive: "last-answer-wins") + "\n")
        let made = try await Cachesh.run(["make.cachesh"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let run = try await Cachesh.run(["--json", "--explore", "rec.transcript", "perturb=200ms"], in: sandbox.url)
        #expect(run.status == 1, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect((object["failure"] as? [String: Any])?["verifies"] as? Bool == true)
        _ = try sandbox.write("s.explore", "concurrent\n  put a:1 1\nend\n")
        let scenario = try await Cachesh.run(["--explore", "s.explore", "perturb=200ms"], in: sandbox.url)
        #expect(scenario.status == 2)
        #expect(scenario.stderr == "s.explore:1: error: explore: perturb= moves a recording's answer times; this is a scenario, whose steps "
                + "explore orders itself (latency= ranges): leave perturb= out\n")
        let both = try await Cachesh.run(["--explore", "rec.transcript", "perturb=200ms", "naive=none"], in: sandbox.url)
        #expect(both.status == 2)
        let refused = try await Cachesh.run(["--explore", "rec.transcript", "perturb=2d"], in: sandbox.url)
        #expect(refused.status == 2)
        #expect(refused.stderr == "cachesh: --explore: perturb=2d: use a duration from 1ms to 1d, like perturb=200ms\n")
        _ = try sandbox.write("typo.cachesh", "server next a:1 latency=10ms\nbogus\n")
        let typo = try await Cachesh.run(["--explore", "typo.cachesh", "perturb=10ms"], in: sandbox.url)
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("typo.cachesh:2: error: explore: refused as recorded, so the recording is wrong: unknown command"))
    }

    // MARK: Bounds

    /// *No invented value* combines at most 10 changes for one value shown (SPEC §7.1): with 8 or
    /// 9 events and the confirmed mutation before the rollback it finds the failed mutation's
    /// change that stayed; with 10 events (11 changes) the value is not checked.
    @Test(arguments: [(8, 1), (9, 1), (10, 0)])
    func noInventedValueCombinesAtMostTenChanges(events: Int, status: Int32) async throws {
        let patches = (1...events).map { "  event patch prefs:me {\"e\($0)\":1}" }.joined(separator: "\n")
        let (run, object) = try await ExploreEndToEndTests.explore("""
            ns prefs ttl=10m naive=confirm-commits-all
            server set prefs:me {}
            get prefs:me
            concurrent
            \(patches)
              mutate prefs:me {"a":true} latency=10ms..1s
              mutate prefs:me {"b":true} latency=10ms..1s answer=fail
            end
            """, ["depth=1"])
        #expect(run.status == status, "\(run)")
        if status == 1 { #expect((object["failure"] as? [String: Any])?["property"] as? String == "no invented value") }
    }

    /// At most 16 latencies are tried for one answer (SPEC §7.1), the nearest the recorded first.
    @Test func aRecordingsAnswerIsTriedAtSixteenLatenciesAtMost() async throws {
        let sandbox = try Sandbox()
        let steps = Array(repeating: "advance 5ms", count: 40).joined(separator: "\n")
        _ = try sandbox.write("rec.cachesh", "server set a:1 1\nserver next a:1 latency=100ms\nget a:1 --async\n\(steps)\nexpect peek a:1 value=1\n")
        let run = try await Cachesh.run(["--json", "--explore", "rec.cachesh", "perturb=100ms", "depth=1"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(object["per_depth"] as? [Int] == [1, 16])
    }
}
