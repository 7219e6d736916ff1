import CacheCore
import CacheShell

/// `cachesh --explore FILE [depth=N] [schedules=N] [seed=S] [transcript=OUT]` (SPEC §3.1, §6):
/// the report on standard output; exit 0 when the bound was explored clean, 1 when a property
/// fails, 2 when the scenario is wrong (a parse error, a command refused in the written order),
/// cannot be read, or the options are bad.
enum ExploreMain {
    static func run(_ arguments: [String], json: Bool, safe: Bool, progress: (@Sendable (String?) -> Void)?) -> Int32 {
        let terminal = Terminal()
        defer { terminal.flush() }
        guard let file = arguments.first else { fail(usage: "--explore needs a scenario FILE") }
        var options = ExploreOptions()
        options.safe = safe
        var output: String?
        for argument in arguments.dropFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { fail(usage: "--explore FILE takes depth=N, schedules=N, seed=S, naive=none, perturb=D and transcript=OUT after it, not \(argument)") }
            let value = String(parts[1])
            switch parts[0] {
            case "depth":
                guard let n = Int(value), (0...ExploreOptions.maxDepth).contains(n) else {
                    fail(usage: "--explore: depth=\(value): use a whole number of preemptions from 0 to \(ExploreOptions.maxDepth)")
                }
                options.depth = n
            case "schedules":
                guard let n = Int(value), (0...ExploreOptions.maxSchedules).contains(n) else {
                    fail(usage: "--explore: schedules=\(value): use a whole number of random schedules from 0 to \(ExploreOptions.maxSchedules)")
                }
                options.randomSchedules = n
            case "seed":
                guard let n = UInt64(value) else { fail(usage: "--explore: seed=\(value): use a whole number from 0 to \(UInt64.max)") }
                options.seed = n
            case "naive":
                guard value == "none" else { fail(usage: "--explore: naive=\(value): only naive=none (every switch off after the setup)") }
                options.naiveOff = true
            case "perturb":
                guard let ms = TimeText.parseDuration(Substring(value)), ms >= 1, ms <= ExploreScenario.maxLatency else {
                    fail(usage: "--explore: perturb=\(value): use a duration from 1ms to \(TimeText.formatDuration(ExploreScenario.maxLatency)), like perturb=200ms")
                }
                options.perturb = ms
            case "transcript":
                if safe { fail(usage: "--explore: --safe writes no file (transcript=\(value))") }
                output = value
            default:
                fail(usage: "--explore FILE takes depth=N, schedules=N, seed=S, naive=none, perturb=D and transcript=OUT after it, not \(argument)")
            }
        }
        if options.perturb != nil && options.naiveOff {
            fail(usage: "--explore: naive=none turns off a scenario's switches after its setup; a recording (perturb=) has no setup apart: edit its ns line")
        }
        let text: String
        do { text = try FileIO.read(file) } catch {
            terminal.write("cachesh: cannot read \(file): \(error)\n", isError: true)
            return 2
        }
        if let slash = file.lastIndex(of: "/") { options.baseDirectory = slash == file.startIndex ? "/" : String(file[..<slash]) }
        if let output {
            // The transcript names the files the scenario reads relative to where it is written.
            options.transcriptDirectory = output.lastIndex(of: "/").map { $0 == output.startIndex ? "/" : String(output[..<$0]) } ?? "."
        }
        // Ctrl-C stops the search with what it found, rather than the process.
        Interactive.installInterruptHandler()
        options.interrupted = { interruptSignalled.exchange(false, ordering: .relaxed) }
        options.progress = progress
        let report = Explorer.explore(name: file, text: text, options: options)
        if let problem = report.problemLine {
            terminal.write(problem + "\n", isError: true)
            return 2
        }
        if let output, let found = report.failure {
            do { try FileIO.writeAtomically(output, found.transcript) } catch {
                terminal.write("cachesh: cannot write \(output): \(error)\n", isError: true)
                return 2
            }
        }
        if json {
            var fields = ExploreCommands.fields(report)
            fields["command"] = .string("explore")
            terminal.write(JSONValue.object(fields).compactText + "\n", isError: false)
        } else {
            terminal.write(VisibleText.of(ExploreCommands.humanLines(report).joined(separator: "\n") + "\n"), isError: false)
        }
        return report.exitCode
    }
}
