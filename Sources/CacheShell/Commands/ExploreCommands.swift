import CacheCore

/// `explore FILE`: a scenario's schedules tried in scratch sessions, the shortest failing one
/// printed as a transcript (SPEC §3.1); the session's cache is not touched.
public enum ExploreCommands {
    static let explore = CommandSpec(
        name: "explore",
        summary: "try the orders a scenario's steps may happen in; print the shortest failing one as a transcript",
        arguments: [.file(meaning: "a scenario: setup commands; then concurrent, the steps that may interleave (and starts another "
                          + "section, whose steps interleave with the first's), end; then lines run once all settled, whose expect "
                          + "lines check. A step that sends a request (get --async or --nowait, mutate KEY, pages KEY --next --nowait, "
                          + "request ... --nowait, or any step with sends=KEY: focus sends=todos:list) may take latency=LO..HI, the "
                          + "range its answer arrives in, and answer=ok,fail,lost, the answers tried; client=NAME runs a step in "
                          + "another client (SPEC 3.1). With perturb=, a recording (a transcript or script) instead")],
        options: [
            .count("depth", meaning: "try every schedule with at most N preemptions (choices of an event out of its written order; default 4, at most 16); "
                   + "random schedules take N priority change points"),
            .count("schedules", meaning: "N random (PCT) schedules: past the exhaustive bound, or after a whole exhaustive search, or all of them "
                   + "with strategy=pct (default 1000 where the search needs them, else 0)"),
            .count("seed", meaning: "the random schedules' seed (default 1): the same seed, the same schedules"),
            .text("strategy", placeholder: "auto|exhaustive|pct", meaning: "auto (default): each depth exhaustively while its schedules fit "
                  + "the bound of 100000, then random ones; exhaustive: every depth until the bound stops it; pct: random schedules alone"),
            .text("por", placeholder: "on|off", meaning: "partial-order reduction (default on): one schedule of those that only reorder "
                  + "commuting steps; off runs each"),
            .text("fork", placeholder: "on|off", meaning: "on (default): each schedule starts from a snapshot of the state after the setup; "
                  + "off: runs the setup again for each (what forking saves, measured)"),
            .text("naive", placeholder: "none", meaning: "naive=none: every naive switch the setup turns on is turned off after it (the default policy)"),
            .text("transcript", placeholder: "FILE", meaning: "also write the shortest failing schedule's transcript to FILE"),
            .duration("perturb", meaning: "FILE is a recording (a transcript or script): run it with the latencies of its answers (server next ... latency=, server latency) moved by up to D"),
        ],
        example: "explore Examples/explore/swr-173-older-answer-wins.explore naive=none", run: explore)

    static func explore(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: Self.explore)
        try args.expect(1...1, usage: "FILE")
        let word = args.positional[0]
        let path = session.resolvePath(word.text, relativeTo: source)
        try session.touchFile("read", path, at: word.offset)
        var options = try readOptions(args)
        var output: String?
        if let (text, word) = args.option("transcript") {
            output = session.resolvePath(String(text), relativeTo: source)
            if FileIO.sameFile(output!, path) {
                throw ShellError("explore: transcript=\(text) names the scenario itself; write the transcript elsewhere", at: word.offset)
            }
            if let problem = session.storeFileProblem(output!) {
                throw ShellError("explore: cannot write \(output!): \(problem)", at: word.offset)
            }
        }
        let text: String
        do { text = try FileIO.read(path) } catch {
            throw ShellError("explore: cannot read \(word.text): \(error)", at: word.offset)
        }
        options.baseDirectory = directory(of: path)
        if let output { options.transcriptDirectory = directory(of: output) ?? "." }
        options.interrupted = session.options.interrupted
        options.progress = session.options.progress
        let report = Explorer.explore(name: word.text, text: text, options: options)
        if let problem = report.problem {
            let message = problem.message.hasPrefix("explore: ") ? String(problem.message.dropFirst("explore: ".count)) : problem.message
            throw ShellError("explore: \(word.text):\(problem.line): \(message)", at: word.offset)
        }
        if let output, let found = report.failure {
            do { try FileIO.writeAtomically(output, found.transcript) } catch {
                throw ShellError("explore: cannot write \(output): \(error)", at: command.offset)
            }
        }
        var reply = Reply(fields(report), human: humanLines(report))
        if let found = report.failure {
            reply.ok = false
            session.add(.reply(reply, name: "explore", mode: session.options.mode))
            throw ShellError("explore: \(found.failure.property) fails (exit 1 under cachesh --explore)", at: command.offset)
        }
        return reply
    }

    /// `depth=`, `schedules=`, `seed=`, checked against their bounds (SPEC §7.1).
    static func readOptions(_ args: Arguments) throws(ShellError) -> ExploreOptions {
        var options = ExploreOptions()
        if let (text, word) = args.option("depth") {
            guard let n = Int(text), (0...ExploreOptions.maxDepth).contains(n) else {
                throw ShellError("explore: depth=\(text): use a whole number of preemptions from 0 to \(ExploreOptions.maxDepth)", at: word.offset)
            }
            options.depth = n
        }
        if let (text, word) = args.option("schedules") {
            guard let n = Int(text), (0...ExploreOptions.maxSchedules).contains(n) else {
                throw ShellError("explore: schedules=\(text): use a whole number of random schedules from 0 to \(ExploreOptions.maxSchedules)", at: word.offset)
            }
            options.randomSchedules = n
        }
        if let (text, word) = args.option("strategy") {
            guard let strategy = ExploreStrategy(rawValue: String(text)) else {
                throw ShellError("explore: strategy=\(text): use auto, exhaustive or pct", at: word.offset)
            }
            options.strategy = strategy
        }
        if let (text, word) = args.option("por") {
            guard text == "on" || text == "off" else { throw ShellError("explore: por=\(text): use on or off", at: word.offset) }
            options.reduce = text == "on"
        }
        if let (text, word) = args.option("fork") {
            guard text == "on" || text == "off" else { throw ShellError("explore: fork=\(text): use on or off", at: word.offset) }
            options.fork = text == "on"
        }
        if let (text, word) = args.option("naive") {
            guard text == "none" else { throw ShellError("explore: naive=\(text): only naive=none (every switch off after the setup)", at: word.offset) }
            options.naiveOff = true
        }
        if let (text, word) = args.option("perturb") {
            guard let ms = TimeText.parseDuration(text), ms >= 1, ms <= ExploreScenario.maxLatency else {
                throw ShellError("explore: perturb=\(text): use a duration from 1ms to \(TimeText.formatDuration(ExploreScenario.maxLatency)), like perturb=200ms", at: word.offset)
            }
            options.perturb = ms
        }
        if options.perturb != nil && options.naiveOff, let (_, word) = args.option("naive") {
            throw ShellError("explore: naive=none turns off a scenario's switches after its setup; a recording (perturb=) has no setup apart: edit its ns line", at: word.offset)
        }
        if let (text, word) = args.option("seed") {
            guard let n = UInt64(text) else {
                throw ShellError("explore: seed=\(text): use a whole number from 0 to \(UInt64.max)", at: word.offset)
            }
            options.seed = n
        }
        return options
    }

    static func directory(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// The report's JSON fields (SPEC §4).
    public static func fields(_ report: ExploreReport) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "ok": .bool(report.failure == nil),
            "file": .string(report.file),
            "schedules": .int(Int64(report.schedules)),
            "per_depth": .array(report.perDepth.map { .int(Int64($0)) }),
            "random_schedules": .int(Int64(report.random)),
            "infeasible": .int(Int64(report.infeasible)),
            "reordered": .int(Int64(report.reordered)),
            "por": .bool(report.reduced),
            "strategy": .string(report.strategy.rawValue),
            "distinct_states": .int(Int64(report.distinctStates)),
            "depth": .int(Int64(report.depthReached)),
            "deepest": .int(Int64(report.deepest)),
            "clean": .bool(report.failure == nil),
        ]
        if report.stoppedAtBound { fields["stopped_at_bound"] = .bool(true) }
        if report.stoppedAtOrders { fields["stopped_at_orders"] = .bool(true) }
        if report.random > 0 {
            fields["seed"] = .int(Int64(bitPattern: report.seed))
            fields["change_points"] = .int(Int64(report.changePoints))
        }
        if let depth = report.sampledFromDepth { fields["sampled_from_depth"] = .int(Int64(depth)) }
        if report.interrupted { fields["interrupted"] = .bool(true) }
        fields["forked"] = .bool(report.forked)
        if let perturb = report.perturb { fields["perturb_ms"] = .int(perturb) }
        if let found = report.failure {
            fields["failure"] = .object([
                "property": .string(found.failure.property),
                "message": .string(found.failure.message),
                "schedule": .array(found.schedule.map(JSONValue.string)),
                "preemptions": .int(Int64(found.preemptions)),
                "found_at_depth": .int(Int64(report.foundAtDepth ?? found.preemptions)),
                "commands": .int(Int64(found.commands)),
                "commands_before_shrinking": .int(Int64(found.commandsBeforeShrinking)),
                "verifies": .bool(found.verifies),
                "transcript": .string(found.transcript),
            ])
        }
        return fields
    }

    /// The report as lines: the counts, then the verdict; on a failure the property, the
    /// schedule and the transcript.
    public static func humanLines(_ report: ExploreReport) -> [String] {
        let perDepth = report.perDepth.enumerated().map { "depth \($0.offset): \($0.element)" }.joined(separator: ", ")
        var lines = ["schedules: \(report.schedules) (\(perDepth)" + (report.random > 0 ? ", random: \(report.random)" : "") + ")"]
        if report.reordered > 0 {
            lines.append("reordered: \(report.reordered) (orders of commuting steps of a schedule run, not run again)")
        }
        if report.infeasible > 0 { lines.append("infeasible: \(report.infeasible) (orders the latency ranges forbid, not run)") }
        lines.append("distinct states: \(report.distinctStates)")
        lines.append("depth reached: " + (report.depthReached >= 0 ? "\(report.depthReached) (every schedule of at most \(Self.count(report.depthReached, "preemption")))" : "none whole")
                     + (report.deepest > report.depthReached ? ", deepest schedule \(report.deepest)" : ""))
        if let perturb = report.perturb {
            lines.append("each schedule is the recording with some answer times moved by up to \(TimeText.formatDuration(perturb)) (depth: how many)")
        } else {
            lines.append(report.forked ? "each schedule forked from the state after the setup"
                                       : "the setup run again for each schedule ("
                                        + (report.forkOff ? "fork=off" : "it holds what a snapshot does not keep") + ")")
        }
        guard let found = report.failure else {
            if report.interrupted {
                return lines + ["stopped (Ctrl-C) after \(Self.count(report.schedules, "schedule")): clean so far"
                                + (report.depthReached >= 0 ? ", to depth \(report.depthReached) whole" : "")]
            }
            let sampled = "\(report.random) random schedule\(report.random == 1 ? "" : "s") (PCT, at most \(report.changePoints) change point\(report.changePoints == 1 ? "" : "s"), seed \(report.seed))"
            var verdict: String
            if report.depthReached >= 0 {
                verdict = "clean to depth \(report.depthReached), " + Self.count(report.perDepth.reduce(0, +), "schedule")
                if report.random > 0 { verdict += ", and " + sampled }
            } else {
                verdict = "clean: " + sampled
            }
            if let depth = report.sampledFromDepth {
                verdict += " (depth \(depth) does not fit in the bound of \(report.bound) schedules)"
            }
            if report.stoppedAtBound {
                verdict += report.random > 0 || report.strategy == .pct ? " (stopped at the bound of \(report.bound) schedules)"
                    : " (stopped at the bound of \(report.bound) schedules inside depth \(report.depthReached + 1))"
            }
            if report.stoppedAtOrders {
                verdict += " (stopped at the bound of \(ExploreOptions.maxOrders) orders inside depth \(report.depthReached + 1))"
            }
            return lines + [verdict]
        }
        lines.append("failed: \(found.failure.property)")
        lines.append("  \(found.failure.message)")
        let first = report.foundAtDepth.map { $0 == found.preemptions ? "" : ", first found with \($0)" } ?? ""
        if report.perturb != nil {
            lines.append("answer times moved (\(found.preemptions)\(report.foundAtDepth.map { $0 == found.preemptions ? "" : ", first found with \($0)" } ?? "")):")
        } else {
            lines.append("schedule (\(found.preemptions) preemption\(found.preemptions == 1 ? "" : "s")\(first)):")
        }
        lines += found.schedule.map { "  " + $0 }
        lines.append("shrunk to \(Self.count(found.commands, "command")) (from \(found.commandsBeforeShrinking))"
                     + (found.verifies ? "; the transcript verifies:" : "; the transcript does NOT verify:"))
        lines += TranscriptSyntax.lines(found.transcript).dropLast().map(String.init)
        return lines
    }

    /// `1 schedule`, `2 schedules`.
    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
