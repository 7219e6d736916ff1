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

    @Test func theGalleryHoldsAtLeastTwentyOneRacesEachListedInItsReadme() throws {
        #expect(Self.races.count >= 21)
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
        let switchLine = try #require(header.first { $0.hasPrefix("# Naive switch: ") })
        let naive = String(switchLine.dropFirst("# Naive switch: ".count).prefix { $0 != "." && $0 != " " })
        let on = try #require(lines.firstIndex { $0.contains("naive=\(naive)") }, "\(name): never switches \(naive) on")
        let off = try #require(lines.firstIndex { $0.contains("naive=none") }, "\(name): never goes back to the default")
        #expect(on < off)
        #expect(lines[on..<off].contains { $0.hasPrefix("expect ") }, "\(name): the naive run asserts nothing")
        #expect(lines[off...].contains { $0.hasPrefix("expect ") }, "\(name): the default run asserts nothing")
    }

    /// The naive run's last `expect` shows the bug, the default run's the fix: the same key, a
    /// different value. Ending both runs on the value the mutation's answer brings back later
    /// would assert nothing about the bug.
    @Test(arguments: races)
    func bothRunsEndWithAnExpectOnTheSameKeyWithDifferentValues(name: String) throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent("\(name).cachesh"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let off = try #require(lines.firstIndex { $0.contains("naive=none") })
        let naiveLast = try #require(lines[..<off].last { $0.hasPrefix("expect ") }).split(separator: " ")
        let defaultLast = try #require(lines[off...].last { $0.hasPrefix("expect ") }).split(separator: " ")
        #expect(naiveLast.prefix(3) == defaultLast.prefix(3), "\(name): the runs end with expects on different keys")
        let naiveValue = try #require(naiveLast.first { $0.hasPrefix("value=") }, "\(name): the naive run's last expect names no value")
        let defaultValue = try #require(defaultLast.first { $0.hasPrefix("value=") }, "\(name): the default run's last expect names no value")
        #expect(naiveValue != defaultValue, "\(name): both runs end with \(naiveValue), so the naive run's last expect does not show the bug")
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
