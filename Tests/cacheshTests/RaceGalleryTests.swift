import Foundation
import Testing

/// Examples/races/: each public race runs twice, its naive switch on, then the default, and says
/// where it comes from; each transcript verifies under `--safe` (self-contained, inline data).
@Suite("Race gallery")
struct RaceGalleryTests {
    static let directory = ExamplesTests.root.appendingPathComponent("Examples/races")

    static let races: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".cachesh") }.map { String($0.dropLast(".cachesh".count)) }.sorted()
    }()

    @Test func theGalleryHoldsAtLeastTwentyFourRacesEachListedInItsReadme() throws {
        #expect(Self.races.count >= 24)
        let readme = try String(contentsOf: Self.directory.appendingPathComponent("README.md"), encoding: .utf8)
        for name in Self.races { #expect(readme.contains("(\(name).cachesh)"), "README.md does not list \(name)") }
    }

    @Test(arguments: races)
    func headerLinksTheThreadAndNamesTheSwitchBothRunsUse(name: String) throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent("\(name).cachesh"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let header = lines.prefix { $0.hasPrefix("#") }
        #expect(header.count >= 4, "a title, a link and a two-line summary")
        #expect(header.contains { $0.hasPrefix("# https://github.com/") }, "\(name): no link to the thread")
        // A switch (`naive=NAME`, then `naive=none`) or an option with its value (`dedupe=D`, then
        // `dedupe=none`).
        let switchLine = try #require(header.first { $0.hasPrefix("# Naive switch: ") || $0.hasPrefix("# Naive option: ") })
        let isOption = switchLine.hasPrefix("# Naive option: ")
        let naive = String(switchLine.split(separator: ":", maxSplits: 1)[1].dropFirst().prefix { $0 != " " && $0 != "," })
            .replacingOccurrences(of: #"\.$"#, with: "", options: .regularExpression)
        let onText = isOption ? naive : "naive=\(naive)"
        let offText = isOption ? String(naive.prefix { $0 != "=" }) + "=none" : "naive=none"
        let on = try #require(lines.firstIndex { !$0.hasPrefix("#") && $0.contains(onText) }, "\(name): never switches \(naive) on")
        let off = try #require(lines.firstIndex { !$0.hasPrefix("#") && $0.contains(offText) }, "\(name): never goes back to the default")
        #expect(on < off)
        #expect(lines[on..<off].contains { $0.hasPrefix("expect ") }, "\(name): the naive run asserts nothing")
        #expect(lines[off...].contains { $0.hasPrefix("expect ") }, "\(name): the default run asserts nothing")
        // Each run ends with an `expect` of the same command and path with different values: the
        // bug, then the fix (an expect both runs share asserts nothing about the bug).
        let bug = try #require(lines[on..<off].last { $0.hasPrefix("expect ") }.map(Self.assertion))
        let fix = try #require(lines[off...].last { $0.hasPrefix("expect ") }.map(Self.assertion))
        #expect(bug.command == fix.command && bug.path == fix.path, "\(name): the runs end with expects of different things")
        #expect(bug.value != fix.value, "\(name): both runs end expecting \(bug.path)=\(bug.value)")
    }

    /// An `expect` line as its command, the path of its first assertion, and the rest of the line
    /// from that assertion's value on.
    static func assertion(_ line: String) -> (command: String, path: String, value: String) {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        let first = words.indices.dropFirst(2).first { words[$0].contains("=") } ?? words.endIndex - 1
        let path = words[first].prefix { $0 != "=" }
        let value = words[first...].joined(separator: " ").dropFirst(path.count + 1)
        return (words[..<first].joined(separator: " "), String(path), String(value))
    }

    @Test(arguments: races)
    func scriptRunsUnderSafeWithEveryExpectationMet(name: String) async throws {
        let run = try await Cachesh.run(["--safe", "\(name).cachesh"], in: Self.directory)
        #expect(run.status == 0, "\(name): \(run.stderr)")
        #expect(run.stderr.isEmpty)
        let expects = try String(contentsOf: Self.directory.appendingPathComponent("\(name).cachesh"), encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("expect ") }.count
        #expect(run.stdout.components(separatedBy: "expect: ok\n").count - 1 == expects)
    }

    @Test(arguments: races)
    func transcriptHoldsTheScriptsCommandsAndVerifiesUnderSafe(name: String) async throws {
        let script = try String(contentsOf: Self.directory.appendingPathComponent("\(name).cachesh"), encoding: .utf8)
        let transcript = try String(contentsOf: Self.directory.appendingPathComponent("\(name).transcript"), encoding: .utf8)
        let commands = script.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }.map(String.init)
        let replayed = transcript.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.hasPrefix("cachesh> ") }.map { String($0.dropFirst("cachesh> ".count)) }
        #expect(replayed == commands)
        let run = try await Cachesh.run(["--verify", "--safe", "\(name).transcript"], in: Self.directory)
        #expect(run.status == 0, "\(name): \(run.stdout)\(run.stderr)")
    }
}

/// The naive switches outlive the process in a store, like every other part of a policy.
@Test func naivePoliciesSurviveTheStore() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-naive-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("s.db").path
    let first = try await Cachesh.run(["--store", store, "-c", "ns feed naive=serve-expired,join-refetch; ns page ttl=1m"])
    #expect(first.status == 0, "\(first.stderr)")
    let second = try await Cachesh.run(["--store", store, "-c", "config"])
    #expect(second.stdout.hasPrefix("ns feed ttl=5m naive=join-refetch,serve-expired\nns page ttl=1m\n"))
}

/// `dedupe=` (SPEC §1.2) is a policy option like the others: `ns` shows it only when set, a
/// configuration, a snapshot and a store keep it, and a negative one is refused where it comes in.
@Test func aDedupeWindowIsKeptLikeEveryPartOfAPolicy() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-dedupe-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("s.db").path
    let first = try await Cachesh.run(["--store", store, "-c", #"load {"namespaces": {"feed": {"dedupe": "2s"}}}; ns page ttl=1m"#])
    #expect(first.status == 0, "\(first.stderr)")
    let second = try await Cachesh.run(["--store", store, "-c", "config"])
    #expect(second.stdout.hasPrefix("ns feed ttl=5m dedupe=2s\nns page ttl=1m\n"), "\(second.stdout)")
    let snapshot = directory.appendingPathComponent("s.json").path
    let third = try await Cachesh.run(["-c", "ns feed dedupe=250ms; snapshot \(snapshot); ns feed dedupe=none; restore \(snapshot); ns feed"])
    #expect(third.stdout.hasSuffix("ns feed ttl=5m dedupe=250ms\n"), "\(third)")
    #expect(try String(contentsOfFile: snapshot, encoding: .utf8).contains(#""dedupe_ms": 250,"#))
    let refused = try await Cachesh.run(["-c", #"load {"namespaces": {"feed": {"dedupe": "-1s"}}}"#])
    #expect(refused.status == 1 && refused.stderr.contains("dedupe"), "\(refused)")
    let negative = try String(contentsOfFile: snapshot, encoding: .utf8).replacingOccurrences(of: #""dedupe_ms": 250"#, with: #""dedupe_ms": -250"#)
    try negative.write(toFile: snapshot, atomically: true, encoding: .utf8)
    let restored = try await Cachesh.run(["-c", "ns feed dedupe=1s; restore \(snapshot); ns feed"])
    #expect(restored.status == 1 && restored.stderr.contains("dedupe_ms: must not be negative"), "\(restored)")
    #expect(restored.stdout.hasSuffix("ns feed ttl=5m dedupe=1s\n"), "the cache is as it was: \(restored)")
}
