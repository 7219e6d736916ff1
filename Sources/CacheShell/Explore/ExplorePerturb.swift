import CacheCore

/// `explore FILE perturb=D` (SPEC §3.1, "Around a recording"): a transcript or script, run as
/// recorded and then with the latencies of its answers moved within D of the recorded ones, so a
/// race the recorded timing hid shows. Each `server next ... latency=L` line is one answer, and
/// each `server latency L [KEY]` line the latency of the requests it covers; a schedule moves
/// some of them (its depth: how many) to latencies where an answer crosses another command or
/// answer. The file's `expect` lines are checked after each; the shortest failing set of moves is
/// printed as a transcript that `--verify` replays.
struct ExplorePerturbation {
    /// One latency the recording gives: its command, the value written, the latencies tried.
    struct Answer {
        var command: Int
        var recorded: Int64
        var candidates: [Int64] = []
    }

    let name: String
    let commands: [ExploreScenario.Line]
    let answers: [Answer]
    let perturb: Int64
    let options: ExploreOptions
    let bytes: Int

    /// The most latencies tried for one answer besides the recorded one (SPEC §7.1).
    static let maxCandidates = 16

    /// The commands of a transcript (`.transcript`, Markdown) or of a script, with their lines.
    static func commands(name: String, text: String) throws(ExploreScenario.Problem) -> [ExploreScenario.Line] {
        if name.hasSuffix(".transcript") || Transcript.isMarkdown(path: name) {
            return Transcript(text: text, markdown: Transcript.isMarkdown(path: name)).steps.map { .init(text: $0.command, line: $0.line + 1) }
        }
        let source = SourceFile(name: name, text: text)
        var lexer = Lexer(source, semicolonSeparates: false)
        let bytes = Array(text.utf8)
        var lines: [ExploreScenario.Line] = []
        while let next = lexer.next() {
            switch next {
            case .failure(let diagnostic):
                throw .init(line: source.location(ofOffset: diagnostic.offset).line, message: diagnostic.message)
            case .success(let raw):
                lines.append(.init(text: String(decoding: SourceScan.readAlone(bytes[raw.offset..<raw.end]), as: UTF8.self), line: source.location(ofOffset: raw.offset).line))
            }
        }
        return lines
    }

    /// The latency a command gives, when it is one a recording's answers take: `server next ...
    /// latency=L` (the word's index), or `server latency L [KEY]`.
    static func latency(of command: String) -> (word: Int, value: Int64, key: String?, next: Bool)? {
        let words = command.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count >= 3, words[0] == "server" else { return nil }
        if words[1] == "next" {
            for (i, word) in words.enumerated() where word.hasPrefix("latency=") {
                guard let ms = TimeText.parseDuration(word.dropFirst("latency=".count)) else { return nil }
                return (i, ms, String(words[2]), true)
            }
            return nil
        }
        if words[1] == "latency", let ms = TimeText.parseDuration(words[2]) {
            return (2, ms, words.count > 3 ? String(words[3]) : nil, false)
        }
        return nil
    }

    /// `command` with its latency written as `value`.
    static func rewritten(_ command: String, to value: Int64) -> String {
        guard let found = latency(of: command) else { return command }
        var words = command.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        words[found.word] = (found.next ? "latency=" : "") + TimeText.formatDuration(value)
        return words.joined(separator: " ")
    }

    static func explore(name: String, text: String, perturb: Int64, options: ExploreOptions) -> ExploreReport {
        var report = ExploreReport(file: name)
        report.perturb = perturb
        report.bound = options.scheduleLimit
        let commands: [ExploreScenario.Line]
        do { commands = try Self.commands(name: name, text: text) } catch {
            report.problem = (error.line, error.message)
            return report
        }
        if let block = commands.first(where: { $0.text == "concurrent" }) {
            report.problem = (block.line, "explore: perturb= moves a recording's answer times; this is a scenario, whose steps explore orders "
                              + "itself (latency= ranges): leave perturb= out")
            return report
        }
        var answers = commands.indices.compactMap { c in latency(of: commands[c].text).map { Answer(command: c, recorded: $0.value) } }
        let exploration = ExplorePerturbation(name: name, commands: commands, answers: answers, perturb: perturb, options: options,
                                              bytes: text.utf8.count)
        // The recording as written: its times, and the requests each latency covered.
        let recorded = exploration.run([:], observe: true)
        if let refused = recorded.run.refused {
            report.problem = (refused.line, "explore: refused as recorded, so the recording is wrong: \(refused.message)")
            return report
        }
        answers = exploration.candidates(answers, recorded.times, recorded.end, recorded.requests)
        let search = ExplorePerturbation(name: name, commands: commands, answers: answers, perturb: perturb, options: options, bytes: text.utf8.count)
        return search.search(report, first: recorded.run)
    }

    /// The latencies worth trying for each answer: those where it arrives at another command's
    /// time or just after, or just around another answer's recorded arrival, within `perturb` of
    /// the recorded one and by the end of the recording; the farthest ones in range too.
    private func candidates(_ answers: [Answer], _ times: [Int64], _ end: Int64, _ requests: [(at: Int64, keys: [String])]) -> [Answer] {
        // Which requests each latency covered: a `server next KEY` line the first request of KEY
        // sent from its time on, in order; a `server latency` line the others until the next one
        // (at most `maxSends` of them). Each key's requests in send order, as indices.
        var byKey: [String: [Int]] = [:]
        for (r, request) in requests.enumerated() {
            for key in Set(request.keys.map(KeyName.canonical)) { byKey[key, default: []].append(r) }
        }
        let found = answers.map { Self.latency(of: commands[$0.command].text) }
        var sends: [[Int64]] = Array(repeating: [], count: answers.count)
        var taken = Set<Int>()
        var cursor: [String: Int] = [:]
        for a in answers.indices {
            guard let f = found[a], f.next, let key = f.key else { continue }
            let k = KeyName.canonical(key)
            let list = byKey[k] ?? []
            var i = cursor[k] ?? 0
            while i < list.count && requests[list[i]].at < times[answers[a].command] { i += 1 }
            if i < list.count {
                taken.insert(list[i])
                sends[a] = [requests[list[i]].at]
                i += 1
            }
            cursor[k] = i
        }
        // Until when each `server latency` line holds: the next one of its key, or a global one.
        var until: [Int64] = Array(repeating: .max, count: answers.count)
        var nextKeyed: [String: Int64] = [:]
        var nextGlobal = Int64.max
        for a in answers.indices.reversed() {
            guard let f = found[a], !f.next else { continue }
            let at = times[answers[a].command]
            if let key = f.key.map(KeyName.canonical) {
                until[a] = min(nextKeyed[key] ?? .max, nextGlobal)
                nextKeyed[key] = at
            } else {
                until[a] = nextGlobal
                nextGlobal = at
            }
        }
        let all = Array(requests.indices)
        for a in answers.indices {
            guard let f = found[a], !f.next else { continue }
            let list = f.key.map { byKey[KeyName.canonical($0)] ?? [] } ?? all
            let from = times[answers[a].command]
            var i = Self.lowerBound(list.count) { requests[list[$0]].at >= from }
            while i < list.count && requests[list[i]].at < until[a] && sends[a].count < Self.maxSends {
                if !taken.contains(list[i]) { sends[a].append(requests[list[i]].at) }
                i += 1
            }
        }
        var arrivals: [Int64] = []
        for (a, answer) in answers.enumerated() { arrivals += sends[a].map { $0 + answer.recorded } }
        let points = Array(Set(times + [end] + arrivals)).sorted()
        return answers.enumerated().map { a, answer in
            var answer = answer
            guard let last = sends[a].max() else { return answer }
            var values = Set<Int64>()
            for s in sends[a] {
                // The points nearest the recorded arrival first, out to `perturb` either side.
                let target = s + answer.recorded
                var right = Self.lowerBound(points.count) { points[$0] >= target }
                var left = right - 1
                var seen = 0
                while seen < 3 * Self.maxCandidates + 3 {
                    let l = left >= 0 && target - points[left] <= perturb + 1 ? points[left] : nil
                    let r = right < points.count && points[right] - target <= perturb + 1 ? points[right] : nil
                    guard l != nil || r != nil else { break }
                    let p: Int64
                    if let l, r == nil || target - l <= r! - target { p = l; left -= 1 } else { p = r!; right += 1 }
                    for arrival in [p - 1, p, p + 1] { values.insert(arrival - s) }
                    seen += 1
                }
            }
            values.insert(answer.recorded - perturb)
            values.insert(answer.recorded + perturb)
            let kept = values.filter { $0 >= 1 && $0 != answer.recorded && abs($0 - answer.recorded) <= perturb && last + $0 <= end }
            answer.candidates = Array(kept.sorted { (abs($0 - answer.recorded), $0) < (abs($1 - answer.recorded), $1) }.prefix(Self.maxCandidates))
            return answer
        }
    }

    /// The requests a `server latency` line's candidates are worked out from, at most.
    static let maxSends = 64

    /// The first index in 0..<count where `isAtOrPast` holds (it holds from there on).
    static func lowerBound(_ count: Int, _ isAtOrPast: (Int) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if isAtOrPast(mid) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Every set of `depth` answers moved, each to each of its candidates, for depth 0, 1, ...;
    /// stops at the first failure, which it shrinks.
    private func search(_ start: ExploreReport, first: ExploreRun) -> ExploreReport {
        var report = start
        var states: Set<String> = []
        var found: ([Int: Int64], ExploreRun)?
        let movable = answers.indices.filter { !answers[$0].candidates.isEmpty }
        var progress = options.progress.map { ProgressLine(show: $0) }
        defer { progress?.end() }
        depths: for depth in 0...min(options.depth, movable.count) {
            report.perDepth.append(0)
            var stopped = false
            var chosen: [Int: Int64] = [:]
            func visit(_ from: Int, _ left: Int) -> Bool {
                if left == 0 {
                    if report.schedules >= options.scheduleLimit {
                        report.stoppedAtBound = true
                        return false
                    }
                    if options.interrupted?() == true {
                        report.interrupted = true
                        return false
                    }
                    progress?.update("explore: \(name): \(depth) answers moved, \(report.schedules) schedules")
                    let run = chosen.isEmpty ? first : self.run(chosen, observe: false).run
                    report.perDepth[depth] += 1
                    report.deepest = max(report.deepest, depth)
                    states.insert(run.state)
                    if run.failure != nil {
                        found = (chosen, run)
                        report.foundAtDepth = depth
                        return false
                    }
                    return true
                }
                guard from < movable.count else { return true }
                for i in from..<movable.count {
                    let a = movable[i]
                    for value in answers[a].candidates {
                        chosen[a] = value
                        let go = visit(i + 1, left - 1)
                        chosen[a] = nil
                        if !go { return false }
                    }
                }
                return true
            }
            stopped = !visit(0, depth)
            if !stopped { report.depthReached = depth }
            if stopped { break depths }
        }
        report.distinctStates = states.count
        if let (moves, run) = found { report.failure = shrink(moves, run) }
        return report
    }

    /// Moves taken back toward the recording while it still fails the same way: each answer to
    /// its recorded latency, else to the candidate nearest it that still fails.
    private func shrink(_ moves: [Int: Int64], _ run: ExploreRun) -> ExploreReport.Found {
        var best = (moves: moves, run: run)
        for a in moves.keys.sorted() {
            var without = best.moves
            without[a] = nil
            let back = self.run(without, observe: false).run
            if back.failure == best.run.failure {
                best = (without, back)
                continue
            }
            let current = best.moves[a]!
            for value in answers[a].candidates where abs(value - answers[a].recorded) < abs(current - answers[a].recorded) {
                var nearer = best.moves
                nearer[a] = value
                let tried = self.run(nearer, observe: false).run
                if tried.failure == best.run.failure {
                    best = (nearer, tried)
                    break
                }
            }
        }
        let failure = best.run.failure!
        let comment = "# explore \(name) perturb=\(TimeText.formatDuration(perturb)): \(failure.property) fails with "
            + "\(best.moves.count) answer time\(best.moves.count == 1 ? "" : "s") moved"
        let transcript = render(comment, best.run.commands)
        let checkName = options.transcriptDirectory.map { ExploreFiles.join($0, "explore.transcript") } ?? name
        let check = Cache().withIsolation { TranscriptCheck(name: checkName, text: transcript, safe: options.safe, on: $0) }
        let schedule = best.moves.keys.sorted().map { a in
            let command = commands[answers[a].command]
            return "line \(command.line): \(Self.rewritten(command.text, to: best.moves[a]!)) (recorded: \(TimeText.formatDuration(answers[a].recorded)))"
        }
        return ExploreReport.Found(failure: failure, schedule: schedule, preemptions: best.moves.count, transcript: transcript,
                                   commands: best.run.commands.count, commandsBeforeShrinking: run.commands.count,
                                   verifies: check.passed)
    }

    /// The transcript of `commands` run in a fresh session: the comment, then each command with
    /// what it prints (files named relative to where the transcript goes).
    private func render(_ comment: String, _ commands: [String]) -> String {
        let options = self.options
        let bytes = self.bytes
        return Cache().withIsolation { cache in
            let session = Explorer.session(options, bytes: bytes, on: cache)
            if let directory = options.transcriptDirectory { session.baseDirectory = directory }
            var text = TranscriptSyntax.render(command: comment, output: session.runTyped(comment, on: cache))
            for command in commands {
                let moved = ExploreFiles.relocated(command, from: options.baseDirectory, to: options.transcriptDirectory ?? options.baseDirectory)
                text += TranscriptSyntax.render(command: moved, output: session.runTyped(moved, on: cache))
            }
            return text
        }
    }

    /// The recording with the answers of `moves` at their new latencies, in a fresh session: what
    /// it ran, the first expect that failed, the first command refused; with `observe`, the time
    /// before each command, the time at the end and every request sent (each client's).
    private func run(_ moves: [Int: Int64], observe: Bool) -> (run: ExploreRun, times: [Int64], end: Int64, requests: [(at: Int64, keys: [String])]) {
        var texts = commands.map(\.text)
        for (a, value) in moves { texts[answers[a].command] = Self.rewritten(texts[answers[a].command], to: value) }
        let commands = self.commands
        let options = self.options
        let bytes = self.bytes
        return Cache().withIsolation { cache in
            var run = ExploreRun()
            var times: [Int64] = []
            let session = Explorer.session(options, bytes: bytes, on: cache)
            // The server log's times count from the clock's start, which is the time now.
            let origin = cache.now
            for (c, text) in texts.enumerated() {
                times.append(cache.now)
                run.commands.append(text)
                let (ok, output) = Explorer.perform(text, in: session, on: cache)
                guard !ok else { continue }
                if text.hasPrefix("expect") && Explorer.isMismatch(output) {
                    if run.failure == nil {
                        run.failure = ExploreFailure(property: "\(commands[c].text) (line \(commands[c].line))", message: Explorer.firstLine(output))
                    }
                } else if run.refused == nil && !text.hasPrefix("#") {
                    run.refused = (commands[c].line, Explorer.firstLine(output))
                }
            }
            run.state = Explorer.clientStates(session, cache) + "\npending \(Explorer.pendingWorkOfEveryClient(session, cache).count)"
            var requests: [(at: Int64, keys: [String])] = []
            if observe {
                try? session.forEachClient(cache, only: nil) { other, _ in
                    requests += other.requestLog.map { ($0.atMs + origin, $0.keys) }
                }
                requests.sort { $0.at < $1.at }
            }
            return (run, times, cache.now, requests)
        }
    }
}
