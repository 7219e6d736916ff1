import Foundation
import Testing

/// SPEC §2: the clock is virtual, so the same script run twice prints the same bytes.
@Suite struct DeterminismEndToEndTests {
    /// Races of every kind: concurrent reads, refreshes against writes, mutations with failures,
    /// offline queues, scheduled commands, evictions, observers.
    static let busyScript = """
        ns feed ttl=1m stale=10s max=3
        ns profile ttl=5m --purgeable
        watch *
        server set feed:1 [{"id":1,"likes":0}]
        server set feed:2 {"id":2}
        server set profile:1 {"id":1,"likes":0}
        server latency 30ms feed:2
        get feed:1 --nowait
        get feed:1 --nowait
        mget feed:1 feed:2 profile:1 feed:3
        at 5ms put feed:4 4
        at 5ms event entity 1 {"likes":{"$inc":1}}
        mutate entity 1 {"likes":{"$inc":5}}
        server fail 1
        mutate profile:1 {"seen":true}
        advance 15s
        get feed:1
        put feed:1 [] tags=x
        advance 100ms
        server offline
        mutate feed:2 {"n":1}
        mutate feed:2 {"n":2}
        pending
        server online
        advance 1s
        validate --items
        invalidate tag:x
        memory-warning
        advance 2m
        keys
        stats
        server log
        """

    @Test(arguments: [[], ["--json"]])
    func sameScriptTwiceGivesIdenticalOutput(_ options: [String]) async throws {
        let first = try await Cachesh.script(Self.busyScript, options: options)
        let second = try await Cachesh.script(Self.busyScript, options: options)
        #expect(first.stdout.split(separator: "\n").count > 50)
        #expect(first.status == 0, "\(first)")
        #expect(first == second)
    }

    /// Every example script, each run twice in its own copy of the examples (they may write snapshots).
    /// An `ns` with several bad options names the first one written, in every process: the
    /// options were checked in their dictionary's order, which Swift seeds per process, so the
    /// error changed from run to run and an `--echo` transcript of it did not verify (found by
    /// fuzzing).
    @Test func aCommandWithSeveralBadOptionsNamesTheFirstEveryRun() async throws {
        var errors: Set<String> = []
        for _ in 0..<12 {
            let out = try await Cachesh.run(["-c", "ns x max=1e400 policy=bogus stale=1us ttl=x"])
            #expect(out.status == 1, "\(out)")
            errors.insert(out.stderr)
        }
        #expect(errors == [#"-c:1:1: error: max must be a whole number or none, not "1e400""# + "\n"], "\(errors)")
    }

    /// A snapshot whose server settings hold several bad keys names the first, sorted, every run:
    /// the maps were read in their dictionary's order, which varies by process.
    @Test(arguments: ["latencies_ms", "fail_keys", "modified_at", "bodies"])
    func aSnapshotWithSeveralBadKeysNamesTheFirstEveryRun(field: String) async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["-c", "server set a:1 1\nsnapshot s.json"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        let text = try String(contentsOf: sandbox.url.appendingPathComponent("s.json"), encoding: .utf8)
        var top = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var server = try #require(top["server"] as? [String: Any])
        let bad: Any = field == "bodies" ? "text" : -1
        server[field] = Dictionary(uniqueKeysWithValues: (1...8).map { ("k:\($0)", bad) })
        top["server"] = server
        try JSONSerialization.data(withJSONObject: top).write(to: sandbox.url.appendingPathComponent("bad.json"))
        var errors: Set<String> = []
        for _ in 0..<8 {
            let out = try await Cachesh.run(["-c", "restore bad.json"], in: sandbox.url)
            #expect(out.status == 1, "\(out)")
            errors.insert(out.stderr)
        }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.contains("server.\(field).k:1: ") == true, "\(errors)")
    }

    @Test func everyExampleTwiceGivesIdenticalOutput() async throws {
        let examples = Cachesh.packageRoot.appendingPathComponent("Examples")
        let names = try FileManager.default.contentsOfDirectory(atPath: examples.path)
            .filter { $0.hasSuffix(".cachesh") }.sorted()
        try #require(!names.isEmpty)
        for name in names {
            var outcomes: [Outcome] = []
            for _ in 0..<2 {
                let sandbox = try Sandbox()
                outcomes.append(try await Cachesh.run([name], in: try sandbox.copyExamples()))
            }
            #expect(outcomes[0] == outcomes[1], "\(name)")
            #expect(!outcomes[0].stdout.isEmpty, "\(name)")
        }
    }
}
