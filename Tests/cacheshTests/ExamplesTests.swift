import Foundation
import Testing

/// The scenarios of Examples/: each script runs with exit 0, says what it shows, and has a
/// transcript holding exactly its commands (so the verified transcript cannot drift from the script).
@Suite("Examples")
struct ExamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let scenarios = ["tour", "feed-and-profile", "optimistic-amen", "page-cache", "workout-store", "spawn-validation",
                            "app-lifecycle", "touch", "two-tabs"]

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["CACHESH_BIN"] { return path }
        return root.appendingPathComponent(".build/debug/cachesh").path
    }

    @Test("each scenario script runs in batch mode with exit 0 and nothing on stderr", arguments: scenarios)
    func scriptRuns(name: String) async throws {
        // In a copy: a script may write a snapshot beside it, and another test copies Examples/
        // meanwhile (a file written there atomically vanished under that copy).
        let sandbox = try Sandbox()
        let run = try await Cachesh.run(["\(name).cachesh"], in: try sandbox.copyExamples())
        #expect(run.status == 0, "\(name): \(run.stderr)")
        #expect(run.stderr.isEmpty)
        #expect(!run.stdout.isEmpty)
    }

    @Test("each scenario opens with a comment naming the behaviours it shows", arguments: scenarios)
    func scriptSaysWhatItShows(name: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Examples/\(name).cachesh"), encoding: .utf8)
        let header = text.split(separator: "\n").prefix { $0.hasPrefix("#") }.joined(separator: "\n")
        #expect(header.range(of: #"B\d+"#, options: .regularExpression) != nil, "\(name) header: \(header)")
    }

    @Test("each scenario's transcript holds exactly the script's commands, in order", arguments: scenarios)
    func transcriptMatchesScript(name: String) throws {
        let script = try String(contentsOf: Self.root.appendingPathComponent("Examples/\(name).cachesh"), encoding: .utf8)
        let transcript = try String(contentsOf: Self.root.appendingPathComponent("Examples/\(name).transcript"), encoding: .utf8)
        let commands = script.split(separator: "\n", omittingEmptySubsequences: true)
            .filter { !$0.hasPrefix("#!") && !$0.allSatisfy(\.isWhitespace) }
            .map(String.init)
        // A transcript holds the configuration the script loads from a file inline (`load {...}`),
        // so it replays alone, under --safe too.
        let replayed = transcript.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.hasPrefix("cachesh> ") }
            .map { String($0.dropFirst("cachesh> ".count)) }
        let loads = commands.filter { $0.hasPrefix("load ") }
        #expect(replayed == commands.map { $0.hasPrefix("load ") ? "load {" : $0 })
        #expect(transcript.components(separatedBy: "cachesh> load {\n").count == loads.count + 1)
        #expect(!transcript.contains("cachesh> load \(name).json"))
    }
}
