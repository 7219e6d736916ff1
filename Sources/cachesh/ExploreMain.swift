import CacheCore
import CacheShell

/// `cachesh --explore FILE... [depth=N] [schedules=N] [seed=S] [strategy=S] [por=on|off] [fork=on|off]
/// [naive=none] [transcript=OUT] [perturb=D] [--junit REPORT]` (SPEC §3.1, §6): each scenario's report on
/// standard output, with the time it took; exit 0 when every bound was explored clean, 1 when a
/// property fails, 2 when a scenario is wrong (a parse error, a command refused in the written
/// order), cannot be read, or the options are bad.
enum ExploreMain {
    static let optionNames = ["depth", "schedules", "seed", "naive", "transcript", "strategy", "por", "fork", "perturb"]

    static func run(_ arguments: [String], json: Bool, safe: Bool, junit: String?, progress: (@Sendable (String?) -> Void)?) -> Int32 {
        let terminal = Terminal()
        defer { terminal.flush() }
        var options = ExploreOptions()
        options.safe = safe
        var output: String?
        var files: [String] = []
        let usage = "--explore FILE... takes depth=N, schedules=N, seed=S, strategy=S, por=on|off, fork=on|off, naive=none, perturb=D and transcript=OUT after it"
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, optionNames.contains(String(parts[0])) else {
                if parts.count == 2 && !argument.contains("/") && !argument.hasSuffix(".explore") { fail(usage: "\(usage), not \(argument)") }
                files.append(argument)
                continue
            }
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
            case "strategy":
                guard let strategy = ExploreStrategy(rawValue: value) else { fail(usage: "--explore: strategy=\(value): use auto, exhaustive or pct") }
                options.strategy = strategy
            case "por":
                guard value == "on" || value == "off" else { fail(usage: "--explore: por=\(value): use on or off") }
                options.reduce = value == "on"
            case "fork":
                guard value == "on" || value == "off" else { fail(usage: "--explore: fork=\(value): use on or off") }
                options.fork = value == "on"
            case "naive":
                guard value == "none" else { fail(usage: "--explore: naive=\(value): only naive=none (every switch off after the setup)") }
                options.naiveOff = true
            case "perturb":
                guard let ms = TimeText.parseDuration(Substring(value)), ms >= 1, ms <= ExploreScenario.maxLatency else {
                    fail(usage: "--explore: perturb=\(value): use a duration from 1ms to \(TimeText.formatDuration(ExploreScenario.maxLatency)), like perturb=200ms")
                }
                options.perturb = ms
            default:
                if safe { fail(usage: "--explore: --safe writes no file (transcript=\(value))") }
                output = value
            }
        }
        guard !files.isEmpty else { fail(usage: "--explore needs a scenario FILE") }
        if options.perturb != nil && options.naiveOff {
            fail(usage: "--explore: naive=none turns off a scenario's switches after its setup; a recording (perturb=) has no setup apart: edit its ns line")
        }
        if output != nil && files.count > 1 { fail(usage: "--explore: transcript=OUT goes with one scenario FILE") }
        if let junit {
            if safe { fail(usage: "--explore: --safe writes no file (--junit \(junit))") }
            if let file = files.first(where: { FileIO.sameFile(junit, $0) }) {
                terminal.write("cachesh: --junit \(junit) names the scenario \(file) being explored; write the report elsewhere\n", isError: true)
                return 2
            }
        }
        // Ctrl-C stops the search with what it found, rather than the process.
        Interactive.installInterruptHandler()
        options.interrupted = { interruptSignalled.exchange(false, ordering: .relaxed) }
        options.progress = progress
        var status: Int32 = 0
        var cases: [ExploreJUnit.Scenario] = []
        for (index, file) in files.enumerated() {
            let code = explore(file, options: options, output: output, json: json, header: files.count > 1, first: index == 0,
                               terminal: terminal, cases: &cases)
            status = code == 2 || status == 2 ? 2 : max(status, code == 130 ? status : code)
            if code == 130 {
                status = status == 0 ? 130 : status
                break
            }
        }
        if let junit {
            do { try FileIO.writeAtomically(junit, ExploreJUnit.text(cases)) } catch {
                terminal.write("cachesh: cannot write \(junit): \(error)\n", isError: true)
                return 2
            }
        }
        return status
    }

    /// Explores one scenario and prints its report; its exit status.
    private static func explore(_ file: String, options: ExploreOptions, output: String?, json: Bool, header: Bool, first: Bool,
                                terminal: Terminal, cases: inout [ExploreJUnit.Scenario]) -> Int32 {
        var options = options
        let text: String
        do { text = try FileIO.read(file) } catch {
            terminal.write("cachesh: cannot read \(file): \(error)\n", isError: true)
            cases.append(ExploreJUnit.Scenario(file: file, properties: [], report: nil, error: "cannot read \(file): \(error)"))
            return 2
        }
        options.baseDirectory = nil
        if let slash = file.lastIndex(of: "/") { options.baseDirectory = slash == file.startIndex ? "/" : String(file[..<slash]) }
        if let output {
            // The transcript names the files the scenario reads relative to where it is written.
            options.transcriptDirectory = output.lastIndex(of: "/").map { $0 == output.startIndex ? "/" : String(output[..<$0]) } ?? "."
        }
        let clock = ContinuousClock()
        let started = clock.now
        let report = Explorer.explore(name: file, text: text, options: options)
        let elapsed = clock.now - started
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        let seconds = Double(milliseconds) / 1000
        let properties = (try? ExploreScenario(name: file, text: text)).map(Explorer.properties(of:)) ?? []
        if let problem = report.problemLine {
            terminal.write(problem + "\n", isError: true)
            cases.append(ExploreJUnit.Scenario(file: file, properties: properties, report: nil, error: problem))
            return 2
        }
        cases.append(ExploreJUnit.Scenario(file: file, properties: properties, report: report, error: nil))
        if let output, let found = report.failure {
            do { try FileIO.writeAtomically(output, found.transcript) } catch {
                terminal.write("cachesh: cannot write \(output): \(error)\n", isError: true)
                return 2
            }
        }
        if json {
            var fields = ExploreCommands.fields(report)
            fields["command"] = .string("explore")
            fields["seconds"] = .double(seconds)
            terminal.write(JSONValue.object(fields).compactText + "\n", isError: false)
        } else {
            var lines = ExploreCommands.humanLines(report)
            let rate = seconds > 0 ? Int((Double(report.schedules) / seconds).rounded()) : 0
            let hundredths = (milliseconds + 5) / 10
            let fraction = hundredths % 100 < 10 ? "0\(hundredths % 100)" : "\(hundredths % 100)"
            let time = "time: \(hundredths / 100).\(fraction) s (\(rate) schedules a second)"
            // After the counts, before the verdict or the failure.
            if let at = lines.firstIndex(where: { $0.hasPrefix("depth reached: ") }) { lines.insert(time, at: min(lines.count, at + 2)) }
            if header { lines.insert((first ? "" : "\n") + "explore \(file):", at: 0) }
            terminal.write(VisibleText.of(lines.joined(separator: "\n") + "\n"), isError: false)
        }
        return report.exitCode
    }
}
