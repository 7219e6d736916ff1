@testable import CacheShell
import Foundation
import Testing

/// The README's "language at a glance" against the command catalog: a hand-written summary
/// drifts (it once lacked `expect`, `replay` and `config` and showed one line twice).
@Suite struct ReadmeSummaryTests {
    /// The lines of the summary: the text block after the heading.
    static func summaryLines() throws -> [String] {
        let readme = try String(contentsOf: DeclaredNamesTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let after = try #require(readme.components(separatedBy: "## The language at a glance\n\n```text\n").dropFirst().first)
        let block = try #require(after.components(separatedBy: "\n```").first)
        return block.split(separator: "\n").map(String.init)
    }

    /// The forms a line shows: the runs of text between two or more spaces (`get KEY [--force]`).
    static func forms(_ line: String) -> [String] {
        line.split(separator: /\s{2,}/).map { String($0) }
    }

    /// The `--flag` and `name=` names a form shows (`[--fail|error=TEXT]` gives `--fail`, `error=`).
    static func names(in form: String) -> [String] {
        form.split(separator: " ").flatMap { word in
            word.trimmingCharacters(in: CharacterSet(charactersIn: "[].")).split(separator: "|").compactMap { part -> String? in
                if part.hasPrefix("--") { return String(part) }
                guard !part.hasPrefix("{"), let equals = part.firstIndex(of: "=") else { return nil }
                return String(part[..<equals]) + "="
            }
        }
    }

    /// What is wrong with `lines` as a summary of the catalog, one text a problem.
    static func problems(_ lines: [String]) -> [String] {
        var problems: [String] = []
        var seen: Set<String> = []
        for line in lines where !seen.insert(line).inserted { problems.append("line shown twice: \(line)") }
        var named: Set<String> = []
        for form in lines.flatMap(forms) {
            let name = String(form.prefix { $0 != " " })
            guard let spec = CommandCatalog.info(name) else {
                problems.append("\(form): no command \(name)")
                continue
            }
            named.insert(name)
            // What the command or one of its forms accepts (`server next`'s flags are its form's).
            let accepted = Set(([spec] + spec.subcommands).flatMap(\.optionNames))
            let takesAny = spec.parsing.options == nil
            for shown in names(in: form) where !accepted.contains(shown) && !(takesAny && shown.hasSuffix("=")) {
                problems.append("\(form): \(name) has no \(shown)")
            }
        }
        for spec in CommandCatalog.all where !named.contains(spec.name) { problems.append("\(spec.name) is not shown") }
        return problems
    }

    @Test func theSummaryShowsEveryCommandOnceEachLineAndOnlyDeclaredOptions() throws {
        #expect(Self.problems(try Self.summaryLines()) == [])
    }

    @Test func aSummaryThatDriftedIsCaught() throws {
        var lines = try Self.summaryLines()
        let replay = try #require(lines.firstIndex { $0.hasPrefix("replay ") })
        lines.remove(at: replay)
        lines.append(lines[0])
        lines.append("get KEY [--froce]   frob KEY")
        #expect(Self.problems(lines) == [
            "line shown twice: \(lines[0])", "get KEY [--froce]: get has no --froce", "frob KEY: no command frob", "replay is not shown",
        ])
    }
}
