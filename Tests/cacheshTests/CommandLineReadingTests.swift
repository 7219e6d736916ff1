@testable import cachesh
import Testing
import TestSupport

/// cachesh reads a plain command line by hand (`Invocation(plain:)`, about a millisecond of
/// start-up less) and leaves the rest to ArgumentParser. The hand reading must never differ from
/// ArgumentParser's: on each command line, generated and chosen, reading it as cachesh does gives
/// the same options, or the same message, as reading it with ArgumentParser alone.
@Suite struct CommandLineReadingTests {
    static let names = ["--json", "--bail", "--safe", "--echo", "--no-pager", "--verify", "--update", "--wait",
                        "-c", "--config", "--store", "--transcribe", "--junit", "--max-scheduled"]
    /// Words ArgumentParser reads and the hand reading leaves to it, or that neither knows.
    static let others = ["--help", "-h", "--version", "--", "--bogus", "-x", "-", "--json=1", "--store=s.db", "-c=now",
                         "--max-scheduled=5", "--max-scheduled=many", "--Json", "---json", "--no-json", "help", "-cjson"]
    /// Values and files: ordinary, empty, dash-led, numbers good and bad, spaces, non-ASCII.
    static let values = ["a.cachesh", "now", "put a 1; get a", "", "-", "-1", "5", "007", "+5", "many",
                         "99999999999999999999", "x y", "--json", "é", "a=b", "\u{1B}[31m", "s.db"]

    static let chosen: [[String]] = [
        [], ["--json"], ["-c"], ["-c", ""], ["-c", "-"], ["-c", "now"], ["--store"], ["a", "b"], ["--json", "--json"],
        ["--store", "a", "--store=b"], ["--", "-c"], ["--max-scheduled", "many", "--safe"], ["--max-scheduled=many", "--safe"],
        ["--max-scheduled", "-1"], ["--max-scheduled", "007", "--verify", "t"], ["--version"], ["-h"], ["--help"],
        ["--no-pager", "--wait", "x"], ["x", "--json", "y", "--bail"], ["--junit", "r.xml", "--verify", "--update", "a", "b"],
        ["--transcribe", "rec.jsonl", "--json"], ["--config", "c.json", "--store", "s.db", "--wait", "-c", "get a"],
    ]

    /// Command lines of up to six words, each a name, another word or a value.
    static func generated(count: Int, seed: UInt64) -> [[String]] {
        var g = SeededGenerator(seed: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...6, using: &g)).map { _ in
                switch Int.random(in: 0..<20, using: &g) {
                case 0..<9: g.pick(names)
                case 9..<12: g.pick(others)
                default: g.pick(values)
                }
            }
        }
    }

    /// A line the hand reading declines goes to ArgumentParser either way: the lines it takes are
    /// the ones to compare.
    @Test func theHandReadingAgreesWithArgumentParser() {
        let lines = Self.chosen + Self.generated(count: 1_500, seed: 7)
        var readByHand = 0
        for arguments in lines {
            guard let plain = Invocation(plain: arguments) else { continue }
            readByHand += 1
            #expect(Invocation.read(arguments) == .run(plain))
            #expect(Invocation.read(arguments, byHand: false) == .run(plain), "\(arguments)")
        }
        // Both readings are exercised: plain lines, and lines left to ArgumentParser.
        #expect(readByHand > lines.count / 10 && readByHand < lines.count * 9 / 10, "\(readByHand) of \(lines.count) read by hand")
    }

    /// What cachesh says of the lines it leaves to ArgumentParser: its messages (after `Error: `),
    /// with a repeat refused as in a shell command.
    @Test func aLineLeftToArgumentParserGetsItsMessage() {
        #expect(Invocation.read(["--json", "--json"]) == .usage("flag --json given twice"))
        #expect(Invocation.read(["--store", "a", "--store=b"]) == .usage("option --store given twice"))
        guard case .usage(let unknown) = Invocation.read(["--bogus"]) else { Issue.record("--bogus was read"); return }
        #expect(unknown.hasPrefix("Unknown option '--bogus'"), "\(unknown)")
        // An unknown option is refused with --help or --version beside it, before or after it.
        for line in [["--bogus", "--help"], ["--help", "--bogus"], ["-x", "--version"], ["--json", "-h", "--bogus", "a"]] {
            guard case .usage(let why) = Invocation.read(line) else { Issue.record("\(line) was not refused"); continue }
            #expect(why.hasPrefix("Unknown option '\(line.first { $0 == "--bogus" || $0 == "-x" }!)'"), "\(why)")
        }
        // ... but not a file named like one after `--`, nor a value.
        for line in [["--help", "--", "--bogus"], ["-c", "now", "--help"], ["--store", "s.db", "--version"],
                     ["--generate-completion-script", "bash"], ["--generate-completion-script", "zsh", "--help"]] {
            guard case .print = Invocation.read(line) else { Issue.record("\(line) was not printed"); continue }
        }
        guard case .print(let version) = Invocation.read(["--version"]) else { Issue.record("--version was not printed"); return }
        #expect(version == "cachesh 0.1.0")
        #expect(Invocation.read(["--max-scheduled=many", "--safe"]) == Invocation.read(["--max-scheduled", "many", "--safe"]))
    }

    @Test func theHandReadingTakesWhatItShould() {
        var expected = Invocation(plain: [])!
        expected.commands = "get a"
        expected.store = "s.db"
        expected.json = true
        #expect(Invocation(plain: ["--store", "s.db", "-c", "get a", "--json"]) == expected)
        #expect(Invocation(plain: ["--max-scheduled", "007", "--safe"])?.maxScheduled == "007")
        // Left to ArgumentParser: its spellings, and a value that looks like a flag.
        for line in [["--store=s.db"], ["--"], ["-c", "-"], ["-c", ""], ["--json", "--json"], ["--help"]] {
            #expect(Invocation(plain: line) == nil, "\(line)")
        }
    }
}
