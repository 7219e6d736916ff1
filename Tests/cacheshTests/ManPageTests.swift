import CacheShell
import Foundation
import Testing

/// The man page, the SPEC and `cachesh --help` checked against the command catalog `help` uses,
/// so none of them can drift from what the shell runs.
@Suite struct ManPageTests {
    /// The package's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let manPath = root.appendingPathComponent("man/cachesh.1").path

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A roff line as it reads: font changes dropped, escapes resolved, macro names removed.
    static func plain(_ line: Substring) -> String {
        var text = String(line)
        if text.hasPrefix(".") { text = text.drop { $0 != " " }.trimmingCharacters(in: .whitespaces) }
        for (escape, character) in [("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", ""), ("\\-", "-"), ("\\&", ""),
                                    ("\\(aq", "'"), ("\\(dq", "\""), ("\\(lq", "\""), ("\\(rq", "\""), ("\\(ga", "`"),
                                    ("\\e", "\\")] {
            text = text.replacingOccurrences(of: escape, with: character)
        }
        return text
    }

    /// The lines of section `name` (`.SH name`), up to the next section.
    static func section(_ name: String, of page: String) -> [Substring] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == ".SH \(name)" || $0 == ".SH \"\(name)\"" }) else { return [] }
        let rest = lines[(start + 1)...]
        return Array(rest.prefix { !$0.hasPrefix(".SH ") })
    }

    /// The tags of the outermost `.TP` paragraphs of some lines, as they read.
    static func tags(_ lines: [Substring]) -> [String] {
        var depth = 0
        var result: [String] = []
        for (i, line) in lines.enumerated() {
            if line.hasPrefix(".RS") { depth += 1 }
            if line.hasPrefix(".RE") { depth -= 1 }
            if line == ".TP", depth == 0, i + 1 < lines.count { result.append(plain(lines[i + 1])) }
        }
        return result
    }

    @Test func manPageHasTheSectionsInOrder() throws {
        let page = try Self.read("man/cachesh.1")
        let headings = page.split(separator: "\n").filter { $0.hasPrefix(".SH ") }.map { Self.plain($0).replacingOccurrences(of: "\"", with: "") }
        #expect(headings == ["NAME", "SYNOPSIS", "DESCRIPTION", "RUNNING CACHESH", "COMMAND LINES", "THE VIRTUAL CLOCK",
                             "OUTPUT", "OPTIONS", "COMMANDS", "TRANSCRIPTS", "HTTP NAMESPACES", "CONFIGURATION", "EXIT STATUS", "ENVIRONMENT",
                             "FILES", "LIMITS AND EDGE CASES", "EXAMPLES", "SEE ALSO"])
        #expect(Self.tags(Self.section("ENVIRONMENT", of: page)) == ["NO_COLOR", "CACHESH_HISTORY", "CACHESH_HINTS", "CACHESH_SOCKET_DIR", "CACHESH_TOKEN", "CI", "EDITRC"])
        #expect(Self.tags(Self.section("EXIT STATUS", of: page)) == ["0", "1", "2"])
        #expect(Self.section("SEE ALSO", of: page).filter { !$0.isEmpty } == [".BR redis\\-cli (1),", ".BR sqlite3 (1)"])
    }

    @Test func manPageHasAnEntryForEveryCommandWithItsSynopsis() throws {
        let page = try Self.read("man/cachesh.1")
        let entries = Self.tags(Self.section("COMMANDS", of: page))
        #expect(entries == CommandCatalog.all.map(\.synopsis))
        for info in CommandCatalog.all {
            let example = "Example: \\fB" + info.example.replacingOccurrences(of: "\\", with: "\\e")
                .replacingOccurrences(of: "-", with: "\\-") + "\\fR"
            #expect(page.contains(example), "\(info.name): the man page has no line \(example)")
        }
    }

    /// Each subsection of COMMANDS is one family of the catalog, in the same order: a command is
    /// documented in the subsection named after the family it is declared in.
    @Test func commandSubsectionsAreTheCatalogsFamilies() throws {
        let page = try Self.read("man/cachesh.1")
        var subsections: [(title: String, lines: [Substring])] = []
        for line in Self.section("COMMANDS", of: page) {
            if line.hasPrefix(".SS ") {
                subsections.append((Self.plain(line).replacingOccurrences(of: "\"", with: ""), []))
            } else if !subsections.isEmpty {
                subsections[subsections.count - 1].lines.append(line)
            }
        }
        #expect(subsections.map(\.title) == CommandCatalog.families.map(\.title))
        for (subsection, family) in zip(subsections, CommandCatalog.families) {
            #expect(Self.tags(subsection.lines) == family.commands.map(\.synopsis), "\(family.title)")
        }
    }

    @Test func specCommandTableNamesExactlyTheCatalogsCommands() throws {
        let spec = try Self.read("docs/SPEC.md")
        let start = try #require(spec.range(of: "\n## 3. Commands"))
        let end = try #require(spec.range(of: "\n## 4.", range: start.upperBound..<spec.endIndex))
        var names: [String] = []
        for row in spec[start.upperBound..<end.lowerBound].split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.replacingOccurrences(of: "\\|", with: "\u{0}").split(separator: "|")
            let forms = cells[0].split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map(\.element)
            names += forms.compactMap { $0.split(separator: " ").first.map(String.init) }
        }
        #expect(Set(names) == Set(CommandCatalog.all.map(\.name)))
        #expect(Set(names).count == CommandCatalog.all.count)
    }

    // MARK: cachesh --help

    /// The built `cachesh` beside this test bundle, if any.
    static let executable: String? = {
        var directories = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        directories += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        return directories.map { $0.appendingPathComponent("cachesh").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs `program arguments...` to its end (see Child.swift: awaited, both outputs read as they come).
    static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil)
        async throws -> (status: Int32, output: String, errors: String) {
        let child = try await Child.start(program, arguments, environment: environment)
        let status = try await child.exitStatus(within: Cachesh.timeLimit)
        return (status, child.output?.value.text ?? "", child.errors?.value.text ?? "")
    }

    static func options(in line: String) -> [String] {
        line.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            .filter { $0.hasPrefix("-") && $0.count > 1 && $0.dropFirst().allSatisfy { $0.isLetter || $0 == "-" } }
    }

    @Test(.enabled(if: executable != nil, "cachesh is not built beside the tests"))
    func manPageDescribesEveryCommandLineOption() async throws {
        let help = try await Self.run(Self.executable!, ["--help"]).output
        let optionLines = help.split(separator: "\n").drop { $0 != "OPTIONS:" }.filter { $0.hasPrefix("  -") }
        let listed = optionLines.flatMap { Self.options(in: String($0.trimmingCharacters(in: .whitespaces).prefix { $0 != "<" }
            .components(separatedBy: "  ")[0])) }
        #expect(listed.count >= 10, "cannot read the options of cachesh --help: \(help)")
        let page = try Self.read("man/cachesh.1")
        let tags = Self.tags(Self.section("OPTIONS", of: page))
        let documented = Set(tags.flatMap { Self.options(in: $0) })
        for option in listed {
            #expect(documented.contains(option), "\(option) is not in the man page's OPTIONS")
        }
        #expect(Set(listed) == documented)
        #expect(tags.first == "FILE")
    }

    // MARK: Rendering

    static func program(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test(.enabled(if: program("man") != nil, "man is not installed: the page's rendering is not checked"))
    func manRendersThePageWithoutWarningsAndEverySynopsis() async throws {
        // Wide enough for the longest synopsis on one line (replay's, with its HAR options, 242).
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "MANWIDTH": "400",
                           "LC_ALL": "C", "HOME": NSTemporaryDirectory()]
        let (status, output, errors) = try await Self.run(Self.program("man")!, ["--warnings", "-l", Self.manPath], environment: environment)
        #expect(status == 0)
        #expect(errors == "")
        let lines = output.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        // A short tag (`quit`) shares its line with the start of its paragraph.
        func shown(_ text: String) -> Bool { lines.contains { $0 == text || $0.hasPrefix(text + " ") } }
        for info in CommandCatalog.all {
            #expect(shown(info.synopsis), "man shows no line \"\(info.synopsis)\"")
        }
        #expect(shown("cachesh --verify [--safe] [--update] [--junit REPORT] FILE..."))
        #expect(shown("cachesh --generate-completion-script bash|zsh|fish"))
    }

    /// The page at 80 columns (a terminal's width): no line, examples included, is wider.
    @Test(.enabled(if: program("man") != nil, "man is not installed: the page's rendering is not checked"))
    func everyLineFitsEightyColumns() async throws {
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "MANWIDTH": "80",
                           "LC_ALL": "C.UTF-8", "HOME": NSTemporaryDirectory()]
        let (status, output, _) = try await Self.run(Self.program("man")!, ["-l", Self.manPath], environment: environment)
        #expect(status == 0)
        let wide = output.split(separator: "\n").filter { $0.unicodeScalars.count > 80 }
        #expect(wide.isEmpty, "wider than 80 columns: \(wide)")
        #expect(output.split(separator: "\n").count > 1_000, "the page was rendered")
    }

    /// The page opens with what a newcomer needs: its DESCRIPTION, rendered at 80 columns, is short
    /// (what cachesh is, what it reproduces, a first session) and names no edge case; those come
    /// last, in LIMITS AND EDGE CASES, which still holds them.
    @Test(.enabled(if: program("man") != nil, "man is not installed: the page's rendering is not checked"))
    func theDescriptionIsShortAndTheEdgeCasesComeLast() async throws {
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "MANWIDTH": "80",
                           "LC_ALL": "C.UTF-8", "HOME": NSTemporaryDirectory()]
        let (status, output, _) = try await Self.run(Self.program("man")!, ["-l", Self.manPath], environment: environment)
        #expect(status == 0)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        /// The rendered lines of a section: from its heading (at the margin) to the next one.
        func rendered(_ name: String) -> [Substring] {
            guard let start = lines.firstIndex(of: Substring(name)) else { return [] }
            let rest = lines[(start + 1)...]
            return Array(rest.prefix { $0.isEmpty || $0.first == " " })
        }
        /// Words as a reader sees them: overstrikes and the spaces of justified lines undone.
        func words(_ lines: [Substring]) -> String {
            var text = ""
            for scalar in lines.joined(separator: " ").unicodeScalars {
                if scalar == "\u{8}" { text.unicodeScalars.removeLast() } else { text.unicodeScalars.append(scalar) }
            }
            return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let description = rendered("DESCRIPTION")
        #expect(!description.isEmpty && description.count < 40, "DESCRIPTION is \(description.count) lines")
        let text = words(description)
        for edge in ["NUL", "16 MiB", "UTF-8", "/dev/zero"] {
            #expect(!text.contains(edge), "DESCRIPTION names \(edge)")
        }
        #expect(text.contains("cachesh> get feed:home"), "a first session")
        let limits = words(rendered("LIMITS AND EDGE CASES"))
        for edge in ["NUL byte", "16 MiB", "not UTF-8"] {
            #expect(limits.contains(edge), "LIMITS AND EDGE CASES names \(edge)")
        }
        #expect(lines.firstIndex(of: "LIMITS AND EDGE CASES")! > lines.firstIndex(of: "COMMANDS")!)
    }

    /// `--generate-completion-script` (ArgumentParser's, hidden from the OPTIONS list) is named by
    /// `--help` and the man page, and prints a script.
    @Test(.enabled(if: executable != nil, "cachesh is not built beside the tests"))
    func theCompletionScriptOptionIsDocumented() async throws {
        let help = try await Self.run(Self.executable!, ["--help"]).output
        #expect(help.contains("cachesh --generate-completion-script bash|zsh|fish"), "\(help)")
        #expect(try Self.read("man/cachesh.1").contains(".B cachesh \\-\\-generate\\-completion\\-script\n.BR bash | zsh | fish"))
        for shell in ["bash", "zsh", "fish"] {
            let script = try await Self.run(Self.executable!, ["--generate-completion-script", shell])
            #expect(script.status == 0 && script.output.contains("--verify"), "\(shell): \(script.errors)")
        }
    }

    /// The live example's README verifies its committed recording with a command that works from
    /// the repository's root, as written.
    @Test(.enabled(if: executable != nil, "cachesh is not built beside the tests"))
    func theLiveExampleReadmesVerifyCommandWorksFromTheRoot() async throws {
        let readme = try Self.read("Examples/live-app/README.md")
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("cachesh --verify ") })
        let arguments = line.split(separator: "#")[0].split(separator: " ").dropFirst().map(String.init)
        let child = try await Child.start(Self.executable!, arguments, in: Self.root)
        #expect(try await child.exitStatus(within: Cachesh.timeLimit) == 0)
        #expect(child.output?.value.text == "1 passed, 0 failed\n")
    }

    @Test(.enabled(if: program("groff") != nil, "groff is not installed: the page's markup is not checked"))
    func groffFindsNoProblemInTheMarkup() async throws {
        let (status, _, errors) = try await Self.run(Self.program("groff")!, ["-man", "-ww", "-z", Self.manPath])
        #expect(status == 0)
        #expect(errors == "")
    }
}
