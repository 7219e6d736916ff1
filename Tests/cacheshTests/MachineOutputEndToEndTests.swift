@testable import CacheShell
import Foundation
import Testing

/// Output read by scripts, from the built binary as a script runs it: every command's JSON object
/// says `ok`, every form of `server` says which in `subcommand` (SPEC §4), and an error of `-c`
/// names the column of its command, as `;` puts several commands on one line (SPEC §7).
@Suite struct MachineOutputEndToEndTests {
    /// Each line of `text` as the JSON object it must be.
    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// What every example needs: the man page's configuration, an entry, its value on the server,
    /// snapshots to read, a request in flight.
    static let prelude = """
        load config.json
        put feed:home [{"id":1,"likes":3}] tags=home
        server set profile:1 {"id":1,"likes":3}
        snapshot snapshot.json
        snapshot before.json
        server latency 1s
        get feed:home --force --nowait

        """

    /// One line for each form of a command with subcommands, by `COMMAND FORM`: the catalog's
    /// forms have no example of their own. A form added to the catalog without a line here fails
    /// ``everyCommandOfTheCatalogSaysOkAndEveryFormItsSubcommand()``.
    static let formLines: [String: String] = [
        "server set": "server set feed:home {\"id\":1}",
        "server patch": "server patch profile:1 {\"likes\":4}",
        "server delete": "server delete feed:home",
        "server show": "server show",
        "server latency": "server latency 10ms",
        "server fail": "server fail 1",
        "server offline": "server offline",
        "server online": "server online",
        "server log": "server log",
        "server next": "server next feed:home [1]",
        "server strict": "server strict on",
    ]

    /// Each command of the catalog, in JSON after the prelude: its example (each form's line for
    /// a command with subcommands) and, for each form, a line with too many words. Every line
    /// printed is one JSON object; each with a `command` has `ok` (true for the command's reply,
    /// false for the error), each other one is an `event`; a form's reply and error name it in
    /// `subcommand`, and no other command's object has one.
    @Test func everyCommandOfTheCatalogSaysOkAndEveryFormItsSubcommand() async throws {
        let forms = CommandCatalog.all.flatMap { spec in spec.subcommands.map { spec.name + " " + $0.name } }
        #expect(Set(forms) == Set(Self.formLines.keys), "a line for each form of the catalog")
        #expect(!forms.isEmpty)
        var runs: [(line: String, command: String, subcommand: String?, fails: Bool)] = []
        for spec in CommandCatalog.all {
            if spec.subcommands.isEmpty {
                // request sends to a key of an HTTP namespace, which the prelude has none of.
                runs.append(((spec.name == "request" ? "ns api http\n" : "") + spec.example, spec.name, nil, false))
            }
            for form in spec.subcommands {
                let line = try #require(Self.formLines[spec.name + " " + form.name])
                runs.append((line, spec.name, form.name, false))
                runs.append((line + " x:1 x:2 x:3 x:4 x:5", spec.name, form.name, true))
            }
        }
        for run in runs {
            let sandbox = try StoryEndToEndTests.exampleDirectory()
            try sandbox.write("example.cachesh", Self.prelude + run.line + "\n")
            let outcome = try await Cachesh.run(["--json", "example.cachesh"], in: sandbox.url)
            #expect(outcome.status == (run.fails ? 1 : 0) && outcome.stderr == "", "\(run.line)\n\(outcome)")
            let objects = try Self.objects(outcome.stdout)
            for object in objects {
                if object["command"] != nil {
                    #expect(object["ok"] is Bool, "\(run.line): no ok in \(object)")
                } else {
                    #expect(object["event"] is String, "\(run.line): neither a command nor an event: \(object)")
                }
                if object["command"] as? String != "server" { #expect(object["subcommand"] == nil, "\(run.line): \(object)") }
            }
            let last = try #require(objects.last { $0["command"] != nil }, "\(run.line)\n\(outcome)")
            #expect(last["command"] as? String == run.command, "\(run.line): \(last)")
            #expect(last["ok"] as? Bool == !run.fails, "\(run.line): \(last)")
            #expect(last["error"] == nil || run.fails, "\(run.line): \(last)")
            #expect(last["subcommand"] as? String == run.subcommand, "\(run.line): \(last)")
        }
    }

    /// Each `;`-separated command of a one-line `-c` was `-c:1:`; its error names its column now,
    /// in characters (`é` and `ü` count one), the line it starts on, and for a command `at`
    /// scheduled, where its text starts. A script keeps `FILE:LINE:`.
    @Test func anErrorOfDashCNamesTheColumnOfItsCommand() async throws {
        let cases: [(commands: String, stderr: String)] = [
            ("put a:1 1; bogus; get a:1", "-c:1:12: error: unknown command \"bogus\" (try help)\n"),
            ("put a:1 1; get a:1; get", "-c:1:21: error: get needs KEY [--force] [--nowait] [--async]\n"),
            ("put é:1 \"ü\";  ünknown x", "-c:1:15: error: unknown command \"ünknown\" (try help)\n"),
            ("now\nput a:1 1;  at 1s stats nope; advance 2s",
             "-c:2:19: error: (at 2026-01-01T00:00:01.000Z) stats: unknown namespace \"nope\" (known: a, default)\n"),
            // A command over two lines: where it starts.
            ("get a:1; put a:1 {\"x\":\n bad}", "-c:1:10: error: bad JSON: unexpected character 'b', expected a JSON value\n"),
        ]
        for (commands, stderr) in cases {
            let run = try await Cachesh.run(["-c", commands])
            #expect(run.status == 1 && run.stderr == stderr, "\(commands)\n\(run)")
        }
        let json = try await Cachesh.run(["--json", "-c", "put é:1 1; server next"])
        let error = try #require(try Self.objects(json.stdout).last)
        #expect(error["column"] as? Int == 12 && error["line"] as? Int == 1 && error["file"] as? String == "-c", "\(json)")
        #expect(error["ok"] as? Bool == false && error["command"] as? String == "server" && error["subcommand"] as? String == "next")

        let script = try await Cachesh.script("now\nbogus\n")
        #expect(script.stderr == "script.cachesh:2: error: unknown command \"bogus\" (try help)\n", "\(script)")
        let inJSON = try await Cachesh.script("bogus\n", options: ["--json"])
        let scriptError = try #require(try Self.objects(inJSON.stdout).last)
        #expect(scriptError["column"] is NSNull && scriptError["line"] as? Int == 1, "\(inJSON)")
    }
}
