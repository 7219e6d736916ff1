@testable import CacheShell
import Testing
import TestSupport

/// The built-in properties (SPEC §3.1) hold under the default policy: random small scenarios of
/// reads, writes, server changes, mutations with any answer, invalidations, events and a second
/// client are explored, and no schedule fails without an expect line. A property that claimed a
/// race the default policy cannot have would fail here.
@Suite struct ExplorePropertyTests {
    @Test func theDefaultPolicyKeepsEveryBuiltInProperty() throws {
        var generator = SeededGenerator(seed: 3607)
        var schedules = 0
        for _ in 0..<30 {
            var text = "ns k ttl=10m stale=1m\nserver set k:1 {\"v\":0}\nget k:1\nactivate k:1\n"
            let tabs = generator.chance(30)
            if tabs { text += "client tab2\nget k:1\nclient main\n" }
            text += "concurrent\n"
            let count = Int.random(in: 2...4, using: &generator)
            for i in 0..<count {
                if i > 0 && generator.chance(25) { text += "and\n" }
                text += "  " + generator.pick([
                    "get k:1 --force --async latency=10ms..1s",
                    "get k:1 --async latency=10ms..1s",
                    "put k:1 {\"v\":\(i + 1)}",
                    "server set k:1 {\"v\":\(i + 10)}",
                    "server patch k:1 {\"s\":\(i)}",
                    "mutate k:1 {\"m\":\(i)} latency=10ms..1s answer=ok,fail,lost",
                    "mutate k:1 {\"l\":{\"$push\":\(i)}} latency=10ms..1s answer=ok,fail",
                    "invalidate k:1",
                    "event patch k:1 {\"e\":\(i)}",
                    "focus sends=k:1 latency=10ms..1s",
                ]) + (tabs && generator.chance(40) ? " client=tab2" : "") + "\n"
            }
            text += "end\n"
            let scenario = try ExploreScenario(name: "random.explore", text: text)
            var options = ExploreOptions()
            options.depth = 2
            let report = Explorer(scenario: scenario, options: options).run()
            #expect(report.problem == nil, "\(text)")
            #expect(report.failure == nil, "\(text)\n\(report.failure?.failure.property ?? ""): \(report.failure?.failure.message ?? "")\n\(report.failure?.transcript ?? "")")
            schedules += report.schedules
        }
        #expect(schedules >= 300, "the random scenarios ran too few schedules to say much")
    }
}
