@testable import CacheShell
import CacheCore
import Foundation
import Testing
import TestSupport

/// A handler reads only the flags and options its command declares: `args.flag("froce")` would
/// read false forever, as if the user never typed it. Two checks: the names written in the
/// shell's sources against the catalog's declarations, and each command run with each of its
/// flags (a debug build's `Arguments` stops on a name the command's declaration lacks).
@Suite struct DeclaredNamesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Swift file under `folder` of the package, with its path from the package's root.
    static func sources(under folder: String) throws -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { (String($0.path.dropFirst(root.path.count + 1)), try String(contentsOf: $0, encoding: .utf8)) }
            .sorted { $0.path < $1.path }
    }

    /// The names `text` reads: `.flag("NAME")` and `.option("NAME")` with nothing after the name (a
    /// declaration, `.flag("force", meaning: ...)`, has more), and an option name handed to a helper
    /// with the arguments (`list(args, "ttl", ...)`).
    static func reads(in text: String) -> [(flag: Bool, name: String)] {
        var found: [(flag: Bool, name: String)] = []
        for match in text.matches(of: /\.(flag|option)\("([^"\\]+)"\)/) {
            found.append((match.output.1 == "flag", String(match.output.2)))
        }
        for match in text.matches(of: /\(args, "([^"\\]+)"/) {
            found.append((false, String(match.output.1)))
        }
        return found
    }

    static let specs = CommandCatalog.all + CommandCatalog.all.flatMap(\.subcommands)
    static let declaredFlags = Set(specs.flatMap(\.parsing.flags))
    static let declaredOptions = Set(specs.flatMap { $0.parsing.options ?? [] })

    /// The names read in `text` that no command declares, as `--flag` and `option=`.
    static func undeclared(in text: String) -> [String] {
        reads(in: text).compactMap { read in
            read.flag ? (declaredFlags.contains(read.name) ? nil : "--" + read.name)
                      : (declaredOptions.contains(read.name) ? nil : read.name + "=")
        }
    }

    @Test func everyNameTheShellReadsIsDeclaredByACommand() throws {
        var reads = 0
        for file in try Self.sources(under: "Sources/CacheShell") + Self.sources(under: "Sources/cachesh") {
            reads += Self.reads(in: file.text).count
            #expect(Self.undeclared(in: file.text).isEmpty, "\(file.path) reads \(Self.undeclared(in: file.text)), declared by no command")
        }
        // The scan finds the reads it is meant to check (a pattern gone stale would check nothing).
        #expect(reads > 40)
    }

    @Test func aMisspelledNameIsFound() {
        let handler = """
            if args.flag("froce") { return .ok() }
            let every = args.option("evry")
            try list(args, "tll", default: []) { _, _ in nil }
            if args.flag("force") || args.option("ttl") != nil { return .ok() }
            """
        #expect(Self.undeclared(in: handler) == ["--froce", "evry=", "tll="])
    }

    /// Each command's example with each of its flags added, in a fresh `--safe` session: a handler
    /// that reads a flag or option its command does not declare stops the debug build here (the
    /// assertion in `Arguments`), on whichever path the flag sends it down.
    @Test(arguments: CommandCatalog.all.filter { !$0.example.isEmpty && !$0.parsing.flags.isEmpty }.map(\.name))
    func eachFlagRunsThroughItsHandler(name: String) async throws {
        let spec = try #require(CommandCatalog.info(name))
        for flag in spec.parsing.flags {
            let session = await TestShell(options: SessionOptions(safe: true))
            let line = spec.example.contains("--\(flag)") ? spec.example : spec.example + " --" + flag
            let output = await session.typed(line)
            #expect(!output.contains("has no flag"), "\(line): \(output)")
        }
    }
}
