import CacheCore
import CacheServer

/// What `explore` was asked for (SPEC §3.1).
public struct ExploreOptions: Sendable {
    /// Every schedule of at most this many preemptions is tried.
    public var depth = 4
    /// Random (PCT) schedules: past the exhaustive bound, or all of them under `strategy=pct`;
    /// nil: none after a whole exhaustive search, ``defaultRandomSchedules`` otherwise.
    public var randomSchedules: Int?
    /// How the schedules are chosen (`strategy=`, SPEC §3.1).
    public var strategy = ExploreStrategy.auto
    /// Partial-order reduction: one schedule of those that only reorder commuting steps (`por=off`
    /// runs each).
    public var reduce = true
    /// Whether steps with disjoint footprints commute at all; false makes every two events
    /// dependent (the plain enumeration, each schedule's events 1 ms apart, that the tests hold
    /// the reduction to).
    var commute = true
    /// Tests: go on past failures (each state then counted with its verdict), and compare states
    /// without their times (to hold the reduction's times to the plain enumeration's).
    var stopAtFailure = true
    var timedStates = true
    public var seed: UInt64 = 1
    /// `naive=none`: after the setup, every naive switch off (`ns NAME naive=none` for each
    /// namespace with one on), so one scenario runs under its switch and under the default.
    public var naiveOff = false
    /// `--safe`: the scenario's commands may not read or write files.
    public var safe = false
    /// Where the scenario's relative paths resolve (its directory).
    public var baseDirectory: String?
    /// Fork each schedule from a snapshot of the state after the setup where the setup allows it
    /// (``Explorer/forkable``); false runs the setup again for each (the slow path the tests pin
    /// the fork to).
    public var fork = true
    /// The directory the transcript is written to (`transcript=OUT`'s); nil: the scenario's. The
    /// files the setup reads are named relative to it there (``ExploreFiles``).
    public var transcriptDirectory: String?
    /// `perturb=D`: the file is a recording (a transcript or script) whose answer latencies are
    /// moved within D of the recorded ones (``ExplorePerturbation``); nil: it is a scenario.
    public var perturb: Int64?
    /// Polled before each schedule: true stops the search with what it found (Ctrl-C).
    public var interrupted: (@Sendable () -> Bool)?
    /// Where a line of progress goes on a terminal (after a second, SPEC §6); nil: none.
    public var progress: (@Sendable (String?) -> Void)?
    public init() {}

    /// The deepest `depth=` (SPEC §7.1).
    public static let maxDepth = 16
    /// Random schedules when the exhaustive search stops short of `depth=` or `strategy=pct`
    /// is given without `schedules=`.
    public static let defaultRandomSchedules = 1_000
    /// Most orders one explore enumerates, those skipped as reorderings of commuting steps
    /// counted (SPEC §7.1).
    public static let maxOrders = 2_000_000
    /// ``maxOrders``, lowered by tests of the bound.
    var orderLimit = maxOrders
    /// Most schedules one explore runs, exhaustive and random together (SPEC §7.1).
    public static let maxSchedules = 100_000
    /// ``maxSchedules``, lowered by tests of the bound.
    var scheduleLimit = maxSchedules
}

/// How `explore` chooses schedules (`strategy=`, SPEC §3.1).
public enum ExploreStrategy: String, Sendable, CaseIterable {
    /// Every schedule of each depth up to `depth=` while the depth fits the bound, then PCT.
    case auto
    /// Every schedule of each depth up to `depth=`, stopping at the bound; then `schedules=N` PCT ones.
    case exhaustive
    /// PCT alone: `schedules=N` random schedules with `depth=` change points.
    case pct
}

/// A property a schedule broke.
public struct ExploreFailure: Sendable, Equatable {
    /// `expect ... (line N)`, or the built-in property's name.
    public var property: String
    /// What was found (the expect's error line, or what B12 saw).
    public var message: String
}

/// What one run of a schedule gave.
struct ExploreRun: Sendable {
    /// The commands run, in order, as the transcript writes them (the settling `advance` one line).
    var commands: [String] = []
    /// The first setup or step command refused, with its line and error.
    var refused: (line: Int, message: String)?
    var failure: ExploreFailure?
    /// The state compared between schedules: each entry's key, state and value, and the work pending.
    var state = ""
    /// A step with `latency=` that sent no request in this schedule: the schedule is realized again
    /// without its answer.
    var silent: Int?
    /// Every such step of the schedule as it was run at last.
    var silentSteps: Set<Int> = []
    /// The events in the order they ran (by their times, SPEC §3.1).
    var realized: [ExploreChoice] = []
    /// An expect step that failed: its command's index in `commands`, and the step. The
    /// transcript ends there (what comes after shows nothing more).
    var failedAt: (command: Int, step: Int)?
}

/// What `explore` found.
public struct ExploreReport: Sendable {
    public var file: String
    /// Schedules run, exhaustive ones by preemptions (index = preemptions), and random ones.
    public var perDepth: [Int] = []
    public var random = 0
    /// Schedules the latency ranges forbid (no times fit their order): not run.
    public var infeasible = 0
    /// Orders not run because they only reorder commuting steps of an order already run (their
    /// trace's), exhaustive and random.
    public var reordered = 0
    /// Partial-order reduction was on.
    public var reduced = true
    /// The search's strategy as asked, and the seed and change points of its random schedules.
    public var strategy = ExploreStrategy.auto
    public var seed: UInt64 = 1
    public var changePoints = 0
    /// Under `strategy=auto`, the depth whose schedules were more than the bound, so random
    /// schedules were run instead of it; nil when none.
    public var sampledFromDepth: Int?
    /// The bound of orders enumerated (``ExploreOptions/maxOrders``) was reached.
    public var stoppedAtOrders = false
    public var distinctStates = 0
    /// The distinct states themselves (SPEC §3.1, ``ExploreState``).
    var states: Set<String> = []
    /// The most preemptions explored exhaustively (every schedule up to it was tried), or -1.
    public var depthReached = -1
    /// The largest number of preemptions among the schedules run.
    public var deepest = 0
    /// The preemptions of the first failing schedule, before shrinking.
    public var foundAtDepth: Int?
    /// The exhaustive search stopped at the bound of schedules before finishing a depth.
    public var stoppedAtBound = false
    /// That bound (``ExploreOptions/maxSchedules``).
    public var bound = ExploreOptions.maxSchedules
    /// Ctrl-C stopped the search (``ExploreOptions/interrupted``).
    public var interrupted = false
    /// Each schedule started from a snapshot of the state after the setup, not the setup run again.
    public var forked = false
    /// `fork=off` asked for the setup to run again for each schedule.
    public var forkOff = false
    /// `perturb=D`: the schedules were a recording's with its answer times moved within D.
    public var perturb: Int64?
    public var failure: Found?
    /// The scenario is wrong: a parse error or a command refused in the first schedule (exit 2):
    /// its line and what is wrong.
    public var problem: (line: Int, message: String)?

    /// The problem as a script's error names it: `FILE:LINE: error: MESSAGE`.
    public var problemLine: String? { problem.map { "\(file):\($0.line): error: \($0.message)" } }

    public struct Found: Sendable {
        public var failure: ExploreFailure
        /// The failing schedule after shrinking, each event as a phrase.
        public var schedule: [String]
        public var preemptions: Int
        /// The transcript of the shrunk schedule, and its commands, and those of the first failing one.
        public var transcript: String
        public var commands: Int
        public var commandsBeforeShrinking: Int
        /// `--verify` replays the transcript and it passes.
        public var verifies: Bool
    }

    public var schedules: Int { perDepth.reduce(0, +) + random }
    /// 0 clean, 1 a property fails, 2 the scenario is wrong, 130 stopped by Ctrl-C with nothing found.
    public var exitCode: Int32 { problem != nil ? 2 : failure != nil ? 1 : interrupted ? 130 : 0 }
}

/// Runs a scenario's schedules, each in a fresh session on a new cache: a snapshot of the state
/// after the setup restored (or the setup run again, where a snapshot cannot hold it), then the
/// schedule's choreography, then the settling and the checks (SPEC §3.1).
public struct Explorer: Sendable {
    public let scenario: ExploreScenario
    public let options: ExploreOptions
    /// The state after the setup (and `naive=none`), which each schedule restores instead of
    /// running the setup again; nil: each runs it.
    let postSetup: PostSetup?
    /// Which steps commute (SPEC §3.1), for the times of a schedule's events and the reduction.
    let commutation: ExploreCommutation

    /// A snapshot of the session after the setup, and the commands that made it.
    struct PostSetup: Sendable {
        /// The document, decoded for each schedule (no text written or parsed).
        var snapshot: JSONValue
        var commands: [String]
    }

    public init(scenario: ExploreScenario, options: ExploreOptions) {
        self.init(scenario: scenario, options: options, postSetup: nil)
    }

    init(scenario: ExploreScenario, options: ExploreOptions, postSetup: PostSetup?) {
        self.scenario = scenario
        self.options = options
        self.postSetup = postSetup
        commutation = ExploreCommutation(scenario: scenario, commute: options.commute)
    }

    /// Setup commands whose whole effect a snapshot keeps (SPEC §5.2: entries, clock, statistics,
    /// pending work, watches, active keys and polls, the server's data and settings, its scripted
    /// answers, strict mode, versions and the idempotency keys it applied), so a schedule may
    /// start from a restored snapshot rather than run them again. Not: clients and the persisted
    /// cache, reads still waiting (`--async`), HTTP fields, files.
    var forkable: Bool {
        let commands: Set<String> = ["ns", "put", "get", "mget", "pages", "advance", "invalidate", "expire", "evict", "clear",
                                     "touch", "activate", "deactivate", "poll", "unpoll", "mutate", "event", "push", "focus",
                                     "peek", "keys", "stats", "pending", "now", "config", "expect", "echo", "watch", "unwatch",
                                     "memory-warning", "explain", "timeline"]
        let serverForms: Set<String> = ["set", "patch", "delete", "latency", "fail", "offline", "online", "show", "log", "next",
                                         "strict"]
        return scenario.setup.allSatisfy { line in
            let words = line.text.split(separator: " ")
            guard let first = words.first.map(String.init) else { return true }
            if line.text.contains("--async") || line.text.contains("headers=") || line.text.contains("status=") { return false }
            if first == "server" { return words.count > 1 && serverForms.contains(String(words[1])) }
            return commands.contains(first)
        }
    }

    /// Runs the setup once and keeps the state it leaves; nil when a command of it was refused
    /// (the schedules then run it, and the first one reports it).
    func makePostSetup() -> PostSetup? {
        let scenario = self.scenario
        let options = self.options
        return Cache().withIsolation { cache -> PostSetup? in
            let session = Self.session(options, bytes: scenario.bytes, on: cache)
            var commands: [String] = []
            for line in scenario.setup {
                commands.append(line.text)
                guard Self.perform(line.text, in: session, on: cache).ok else { return nil }
            }
            commands += Self.naiveOff(options, session: session, on: cache)
            return PostSetup(snapshot: session.makeSnapshot(on: cache), commands: commands)
        }
    }

    /// With `naive=none`, `ns NAME naive=none` for each namespace with a switch on, in every
    /// client, run (``naiveOffEverywhere``).
    private static func naiveOff(_ options: ExploreOptions, session: Session, on cache: isolated Cache) -> [String] {
        naiveOffEverywhere(options, session: session, on: cache)
    }

    /// Reads and explores the scenario in `text`.
    public static func explore(name: String, text: String, options: ExploreOptions) -> ExploreReport {
        if let perturb = options.perturb { return ExplorePerturbation.explore(name: name, text: text, perturb: perturb, options: options) }
        let scenario: ExploreScenario
        do { scenario = try ExploreScenario(name: name, text: text) } catch {
            var report = ExploreReport(file: name)
            report.problem = (error.line, error.message)
            return report
        }
        return Explorer(scenario: scenario, options: options).run()
    }

    // MARK: Shrinking

    /// The shortest failing schedule the shrinker reaches from `schedule`: steps dropped while it
    /// still fails, then setup commands, then events moved back toward the written order and
    /// answers back to the written one, then the events at the earliest times their order allows
    /// (``ExploreTiming``'s `tight`, which leaves out the `advance` lines between steps that no
    /// answer needs). A candidate is kept only when it fails the same way, in no more commands,
    /// and, with a step or a setup command left out, when the smaller scenario still passes in its
    /// written order: the failure is the order's, not the missing command's. When the schedule
    /// found passes with every naive switch off, so must each candidate: the failure stays the
    /// switch's, not a behaviour the default policy has by design (an invalidated key made active
    /// is not fetched, say).
    func shrink(_ schedule: [ExploreChoice], _ run: ExploreRun) -> ExploreReport.Found {
        var best = (schedule: schedule, dropped: Set<Int>(), run: run)
        // The scenario without the setup commands dropped so far, and whether the times are tight.
        var explorer = self, tight = false
        let before = run.commands.count
        var budget = 2_000
        // The same scenario with every naive switch off after its setup (`naive=none`).
        func underDefault(_ explorer: Explorer) -> Explorer {
            var options = explorer.options
            options.naiveOff = true
            return Explorer(scenario: explorer.scenario, options: options, postSetup: nil)
        }
        let switchMatters = !options.naiveOff && underDefault(self).run(schedule)?.failure == nil
        func attempt(_ candidate: [ExploreChoice], _ dropped: Set<Int>, by other: Explorer? = nil, tight newTight: Bool? = nil) -> Bool {
            guard budget > 0 else { return false }
            budget -= 1
            let by = other ?? explorer, beTight = newTight ?? tight
            guard ExploreSchedulerState.cost(of: candidate, steps: scenario.steps, sections: scenario.sectionCount, dropped: dropped) != nil,
                  let run = by.run(candidate, dropped: dropped, tight: beTight), run.failure == best.run.failure,
                  run.refused == nil || (best.run.refused != nil && other == nil),
                  run.commands.count <= best.run.commands.count else { return false }
            if dropped != best.dropped || other != nil {
                let written = ExploreEnumeration.written(steps: scenario.steps, sections: scenario.sectionCount, dropped: dropped)
                guard let sequential = by.run(written, dropped: dropped, tight: beTight), sequential.failure == nil, sequential.refused == nil
                else { return false }
            }
            if switchMatters, underDefault(by).run(candidate, dropped: dropped, tight: beTight)?.failure != nil { return false }
            best = (candidate, dropped, run)
            explorer = by
            tight = beTight
            return true
        }
        _ = attempt(best.schedule, best.dropped, tight: true)
        var changed = true
        while changed {
            changed = false
            // Drop steps.
            for step in scenario.steps.indices.reversed() where !best.dropped.contains(step) {
                let candidate = best.schedule.filter { $0.event.step != step }
                if attempt(candidate, best.dropped.union([step])) { changed = true }
            }
            // Drop setup commands (run again for each schedule: the smaller setup has no snapshot).
            for line in explorer.scenario.setup.indices.reversed() {
                var smaller = explorer.scenario
                smaller.setup.remove(at: line)
                if attempt(best.schedule, best.dropped, by: Explorer(scenario: smaller, options: options, postSetup: nil)) { changed = true }
            }
        }
        // Back toward the written order: swap two neighbours written the other way round;
        // answers back to the written one.
        changed = true
        while changed {
            changed = false
            for i in best.schedule.indices.dropLast() {
                let a = best.schedule[i], b = best.schedule[i + 1]
                guard b.event.position < a.event.position else { continue }
                var candidate = best.schedule
                candidate.swapAt(i, i + 1)
                if attempt(candidate, best.dropped) { changed = true }
            }
            for i in best.schedule.indices where best.schedule[i].answer != 0 {
                var candidate = best.schedule
                candidate[i].answer = 0
                if attempt(candidate, best.dropped) { changed = true }
            }
        }
        if !tight { _ = attempt(best.schedule, best.dropped, tight: true) }
        let preemptions = ExploreSchedulerState.cost(of: best.schedule, steps: scenario.steps, sections: scenario.sectionCount,
                                                     dropped: best.dropped) ?? 0
        // A failing expect step ends the transcript and the schedule shown: nothing after it matters.
        var commands = best.run.commands, realized = best.run.realized
        if let (command, step) = best.run.failedAt {
            commands = Array(commands[...command])
            if let event = realized.firstIndex(where: { $0.event == ExploreEvent(kind: .issue, step: step) }) { realized = Array(realized[...event]) }
        }
        let transcript = explorer.transcript(commands, failure: best.run.failure!, preemptions: preemptions)
        // Verified as `--verify` reads it where it is written: its paths resolve in its directory.
        let checkName = options.transcriptDirectory.map { ExploreFiles.join($0, "explore.transcript") } ?? scenario.name
        let check = Cache().withIsolation { TranscriptCheck(name: checkName, text: transcript.text, safe: options.safe, on: $0) }
        return ExploreReport.Found(failure: best.run.failure!, schedule: describe(realized, silent: best.run.silentSteps), preemptions: preemptions,
                                   transcript: transcript.text, commands: commands.count,
                                   commandsBeforeShrinking: before, verifies: check.passed && transcript.failed)
    }

    /// The schedule in words, one phrase an event.
    func describe(_ schedule: [ExploreChoice], silent: Set<Int>) -> [String] {
        schedule.compactMap { choice in
            let step = scenario.steps[choice.event.step]
            switch choice.event.kind {
            case .issue:
                let answer = step.latency != nil && step.answers[choice.answer] != .ok ? " (its answer: \(step.answers[choice.answer].rawValue))" : ""
                if silent.contains(choice.event.step) { return "line \(step.command.line): \(step.command.text) (sends no request here)" }
                return "line \(step.command.line): \(step.command.text)" + answer
            case .answer:
                if silent.contains(choice.event.step) { return nil }
                return "line \(step.command.line): the answer to \(step.key ?? step.nextPageOf.map { "\($0)'s next page" } ?? "its request") arrives"
            }
        }
    }

    /// The transcript of `commands`: a comment saying what fails, then each command with what it
    /// prints, run in a fresh session as `--verify` will run it; `failed` says the run failed as
    /// the search found (an expect failed again).
    func transcript(_ commands: [String], failure: ExploreFailure, preemptions: Int) -> (text: String, failed: Bool) {
        let options = self.options
        let scenario = self.scenario
        let comment = "# explore \(scenario.name): \(failure.property) fails in this schedule (\(preemptions) preemption\(preemptions == 1 ? "" : "s"))"
        return Cache().withIsolation { cache in
            let session = Self.session(options, bytes: scenario.bytes, on: cache)
            if let directory = options.transcriptDirectory { session.baseDirectory = directory }
            var text = TranscriptSyntax.render(command: comment, output: session.runTyped(comment, on: cache))
            var failed = false
            for command in commands.map({ ExploreFiles.relocated($0, from: options.baseDirectory, to: options.transcriptDirectory ?? options.baseDirectory) }) {
                let (ok, output) = Self.perform(command, in: session, on: cache)
                if !ok && command.hasPrefix("expect") { failed = true }
                text += TranscriptSyntax.render(command: command, output: output)
            }
            // A built-in property breaks no command: the timeline the transcript ends with shows it.
            if !failure.property.hasPrefix("expect") { failed = true }
            return (text, failed)
        }
    }

    // MARK: One schedule

    /// Runs `schedule` (of the steps not `dropped`) in a fresh session; nil when no times fit it.
    /// `tight`: the events at the earliest times their order allows (``ExploreTiming``).
    func run(_ schedule: [ExploreChoice], dropped: Set<Int> = [], tight: Bool = false) -> ExploreRun? {
        var silent: Set<Int> = []
        // A step found silent is realized again without its answer: at most once each.
        for _ in 0...scenario.steps.count {
            let kept = schedule.filter { !(silent.contains($0.event.step) && $0.event.kind == .answer) }
            guard let (order, times) = ExploreTiming.realize(kept, steps: scenario.steps, commutation: commutation, tight: tight) else { return nil }
            var run = execute(order, times: times, silent: silent)
            run.silentSteps = silent
            run.realized = order
            guard let step = run.silent else { return run }
            silent.insert(step)
        }
        return nil
    }

    /// The schedule realized as ordinary commands and run: setup, then each event at its time
    /// (`advance`, `server next KEY latency=` before the step that sends the request, the step),
    /// then the settling `advance`, then the expect lines.
    private func execute(_ schedule: [ExploreChoice], times: [Int64], silent: Set<Int>) -> ExploreRun {
        let scenario = self.scenario
        let options = self.options
        let postSetup = self.postSetup
        return Cache().withIsolation { cache in
            var run = ExploreRun()
            let session = Self.session(options, bytes: scenario.bytes, on: cache)
            if let postSetup, let snapshot = try? Snapshot(postSetup.snapshot), (try? session.restore(snapshot, on: cache)) != nil {
                run.commands = postSetup.commands
            } else {
                for line in scenario.setup {
                    run.commands.append(line.text)
                    let (ok, output) = Self.perform(line.text, in: session, on: cache)
                    if !ok && run.refused == nil { run.refused = (line.line, Self.firstLine(output)) }
                }
                run.commands += Self.naiveOff(options, session: session, on: cache)
            }
            let start = cache.now
            // Steps without client= run in the client the setup ended in, as do the checks.
            let home = Self.currentClient(session)
            // What the server held, sampled after each command from here on (no invented value).
            var history = ServerHistory()
            history.sample(session.server)
            func sampled(_ command: String, in session: Session, on cache: isolated Cache) -> (ok: Bool, output: String) {
                let result = Self.perform(command, in: session, on: cache)
                history.sample(session.server)
                return result
            }
            var changesBefore: [String: Int] = [:]
            for name in session.clients.several ? session.clients.all.map(\.name) : [home] {
                changesBefore[name] = Self.timeline(of: name, session).count
            }
            // The mutations pending in the setup's client, where the steps run.
            let pendingBefore = Set(Self.onCurrentClient(session, cache) { $0.pendingWork() }.flatMap { item -> [String] in
                if case .request(.mutate, let keys) = item.kind { return keys.map(KeyName.canonical) }
                if case .queuedMutation(let keys) = item.kind { return keys.map(KeyName.canonical) }
                return []
            })
            // The answer times of the steps issued, by step.
            var answerAt: [Int: Int64] = [:]
            for (j, choice) in schedule.enumerated() where choice.event.kind == .answer { answerAt[choice.event.step] = start + times[j] }
            var issueAt: [Int: Int64] = [:]
            for (j, choice) in schedule.enumerated() {
                let step = scenario.steps[choice.event.step]
                let due = start + times[j]
                guard choice.event.kind == .issue else { continue }
                if due > cache.now {
                    let advance = "advance " + TimeText.formatDuration(due - cache.now)
                    run.commands.append(advance)
                    _ = sampled(advance, in: session, on: cache)
                }
                issueAt[choice.event.step] = cache.now
                let client = step.client ?? home
                if client != Self.currentClient(session) {
                    run.commands.append("client \(client)")
                    let (ok, output) = sampled("client \(client)", in: session, on: cache)
                    if !ok && run.refused == nil { run.refused = (step.command.line, Self.firstLine(output)) }
                }
                var queued = -1
                var restore: String?
                // The key of the request the step sends: as written, or the page `pages --next` asks for now.
                let requestKey = step.key ?? step.nextPageOf.map { Self.nextPageKey(of: $0, session, cache) }
                if let key = requestKey, !silent.contains(choice.event.step), let answer = answerAt[choice.event.step],
                   step.answers[choice.answer] == .ok, step.verb == "mutate" || step.verb == "request" {
                    // A scripted answer leaves the server's data alone; a mutation answered as the
                    // server answers one (applied) takes the key's latency instead, put back after.
                    let latency = "server latency " + TimeText.formatDuration(max(1, answer - cache.now)) + " " + key
                    let before = session.server.latencies[KeyName.canonical(key)] ?? session.server.latencies[key] ?? session.server.latency
                    restore = "server latency " + TimeText.formatDuration(before) + " " + key
                    run.commands.append(latency)
                    _ = sampled(latency, in: session, on: cache)
                } else if let key = requestKey, !silent.contains(choice.event.step), let answer = answerAt[choice.event.step] {
                    var next = "server next \(key) latency=" + TimeText.formatDuration(max(1, answer - cache.now))
                    switch step.answers[choice.answer] {
                    case .ok: break
                    case .fail: next += " --fail"
                    case .lost: next += " --lost-answer"
                    }
                    run.commands.append(next)
                    queued = Self.queuedAnswers(session.server)
                    _ = sampled(next, in: session, on: cache)
                }
                run.commands.append(step.command.text)
                let (ok, output) = sampled(step.command.text, in: session, on: cache)
                if !ok && step.command.text.hasPrefix("expect") && Self.isMismatch(output) {
                    // An expect step checks the state at its point of the schedule.
                    if run.failure == nil {
                        run.failure = ExploreFailure(property: "\(step.command.text) (line \(step.command.line))", message: Self.firstLine(output))
                        run.failedAt = (run.commands.count - 1, choice.event.step)
                    }
                } else if !ok && run.refused == nil {
                    run.refused = (step.command.line, Self.firstLine(output))
                }
                if let restore {
                    run.commands.append(restore)
                    _ = sampled(restore, in: session, on: cache)
                }
                if queued >= 0 && Self.queuedAnswers(session.server) > queued {
                    run.silent = choice.event.step
                    return run
                }
            }
            // Settle: the last answer, then whatever it and the steps started, until nothing is due
            // but polls (which never end); at most 64 rounds, each a day at most.
            var target = answerAt.values.max() ?? cache.now
            var settled = max(0, target - cache.now)
            if settled > 0 { _ = sampled("advance " + TimeText.formatDuration(settled), in: session, on: cache) }
            for _ in 0..<64 {
                let due = Self.pendingWorkOfEveryClient(session, cache).compactMap { item -> Int64? in
                    if case .poll = item.kind { return nil }
                    return item.dueAt
                }.filter { $0 - cache.now <= ExploreScenario.maxLatency }.max()
                guard let due, due >= cache.now else { break }
                target = due
                let step = max(target - cache.now, 0)
                settled += step
                _ = sampled("advance " + TimeText.formatDuration(step), in: session, on: cache)
                if step == 0 { break }
            }
            if settled > 0 { run.commands.append("advance " + TimeText.formatDuration(settled)) }
            // Back in the setup's client for the checks, unless their first line names one.
            if home != Self.currentClient(session), scenario.expects.first?.text.hasPrefix("client ") != true {
                run.commands.append("client \(home)")
                _ = sampled("client \(home)", in: session, on: cache)
            }
            for line in scenario.expects {
                run.commands.append(line.text)
                let (ok, output) = sampled(line.text, in: session, on: cache)
                if !ok && !Self.isMismatch(output) {
                    // A check that cannot run (a typo, a path its command has not) is the
                    // scenario's error, not a race.
                    if run.refused == nil { run.refused = (line.line, Self.firstLine(output)) }
                } else if !ok && run.failure == nil {
                    run.failure = ExploreFailure(property: "\(line.text) (line \(line.line))", message: Self.firstLine(output))
                }
            }
            var answers: [Int: ExploreScenario.Answer] = [:]
            for choice in schedule where choice.event.kind == .issue {
                answers[choice.event.step] = scenario.steps[choice.event.step].answers[choice.answer]
            }
            let evidence = Evidence(issueAt: issueAt, answerAt: answerAt, answers: answers, silent: silent, home: home, start: start,
                                    changesBefore: changesBefore, server: history, pendingBefore: pendingBefore)
            if run.failure == nil, let violation = Self.b12(scenario, schedule, issueAt: issueAt, answerAt: answerAt, home: home, session: session)
                .map({ ($0.failure, $0.key, $0.client) })
                ?? Self.rollback(scenario, issueAt: issueAt, answerAt: answerAt, home: home, session: session).map({ ($0.failure, $0.key, $0.client) })
                ?? Self.readAfterChange(scenario, evidence, session: session, on: cache)
                ?? Self.noInventedValue(scenario, evidence, session: session) {
                run.failure = violation.0
                // The timeline that shows it, in the client where it happened.
                if violation.2 != Self.currentClient(session) {
                    run.commands.append("client \(violation.2)")
                    _ = Self.perform("client \(violation.2)", in: session, on: cache)
                }
                run.commands.append("timeline " + violation.1)
            }
            // The current client's entries, pending work and timeline (the session's timeline is
            // the current client's), read from its cache, not from the first client's.
            let changes = session.timeline.filter { $0.at >= start }
            let timed = options.timedStates
            run.state = Self.onCurrentClient(session, cache) { current in
                ExploreState.fingerprint(cache: current, changes: changes, blockStart: start, times: timed)
            }
            // The other clients' entries too (client= steps).
            if session.clients.several { run.state += "\n" + Self.clientStates(session, cache) }
            return run
        }
    }

    /// B12 (SPEC §1.1) as the timeline shows it: a `get` step's answer, to a request sent before a
    /// `put` of its key, stored over that put (no `mutate` of the key is in the block before the
    /// answer, whose pending log rules instead).
    private static func b12(_ scenario: ExploreScenario, _ schedule: [ExploreChoice], issueAt: [Int: Int64], answerAt: [Int: Int64],
                            home: String, session: Session) -> (failure: ExploreFailure, key: String, client: String)? {
        func canonical(_ key: String) -> String { key.hasPrefix("default:") ? String(key.dropFirst("default:".count)) : key }
        func words(_ step: ExploreScenario.Step) -> [Substring] { step.command.text.split(separator: " ") }
        for (s, step) in scenario.steps.enumerated() where words(step).first == "get" {
            guard let key = step.key, let sent = issueAt[s], let answered = answerAt[s] else { continue }
            let client = step.client ?? home
            let mutated = scenario.steps.indices.contains { m in
                (scenario.steps[m].client ?? home) == client && words(scenario.steps[m]).first == "mutate" && words(scenario.steps[m]).dropFirst().first.map({ canonical(String($0)) }) == canonical(key)
                    && (issueAt[m] ?? .max) < answered
            }
            if mutated { continue }
            for (w, write) in scenario.steps.enumerated() where words(write).first == "put" {
                guard (write.client ?? home) == client, words(write).dropFirst().first.map({ canonical(String($0)) }) == canonical(key),
                      let written = issueAt[w], sent < written, written < answered else { continue }
                let stored = Self.timeline(of: client, session).filter {
                    $0.key == canonical(key) && $0.at == answered && ($0.cause == .fetched || $0.cause == .refreshed) && $0.source == .server
                }
                if !stored.isEmpty {
                    return (ExploreFailure(property: "B12",
                                           message: "the answer to line \(step.command.line) (\(step.command.text)), sent before the put of line \(write.command.line), was stored over it"),
                            canonical(key), client)
                }
            }
        }
        return nil
    }

    /// A fresh session for one schedule: under `--safe`, with the budget of scheduled work a
    /// stranger's script of the scenario's size has (SPEC §7.1), so no schedule runs unbounded.
    static func session(_ options: ExploreOptions, bytes: Int, on cache: isolated Cache) -> Session {
        var sessionOptions = SessionOptions(safe: options.safe, colour: false, mode: .human, bail: false)
        if options.safe { sessionOptions.scheduledBudget = .perInput }
        let session = Session(cache: cache, options: sessionOptions)
        session.noteInput(bytes: bytes, on: cache)
        session.baseDirectory = options.baseDirectory
        return session
    }

    /// Runs one command as typed; whether it succeeded, and what it printed.
    static func perform(_ command: String, in session: Session, on cache: isolated Cache) -> (ok: Bool, output: String) {
        let ok = session.run(SourceFile(name: nil, text: command), on: cache)
        return (ok, session.takeOutput().map(\.text).joined())
    }

    /// B11's rollback (SPEC §1.1) as the timeline shows it: when a `mutate KEY PATCH` step's
    /// mutation is rolled back while no other mutation of the key is pending and no event step
    /// of the key came since it was sent, the value it leaves is the value before with only that
    /// mutation's change removed: PATCH applied to it gives the value shown before the rollback.
    private static func rollback(_ scenario: ExploreScenario, issueAt: [Int: Int64], answerAt: [Int: Int64],
                                 home: String, session: Session) -> (failure: ExploreFailure, key: String, client: String)? {
        func canonical(_ key: String) -> String { key.hasPrefix("default:") ? String(key.dropFirst("default:".count)) : key }
        for (m, step) in scenario.steps.enumerated() {
            guard step.verb == "mutate", let patchText = step.patch, let key = step.argument.map(canonical),
                  let sent = issueAt[m], let answered = answerAt[m],
                  let document = try? JSONValue(parsing: patchText), let patch = try? Patch(document) else { continue }
            let client = step.client ?? home
            let alone = !scenario.steps.indices.contains { o in
                guard o != m, (scenario.steps[o].client ?? home) == client, scenario.steps[o].argument.map(canonical) == key,
                      let other = issueAt[o] else { return false }
                switch scenario.steps[o].verb {
                case "mutate": return other < answered && (answerAt[o] ?? .max) > answered
                case "event": return sent < other && other < answered
                default: return false
                }
            }
            guard alone else { continue }
            let changes = Self.timeline(of: client, session).filter { $0.key == key }
            guard let at = changes.firstIndex(where: { $0.cause == .rolledBack && $0.at == answered }), at > 0,
                  let after = changes[at].value, let before = changes[..<at].last(where: { $0.value != nil })?.value,
                  // A rollback that changed nothing removed nothing (an answer between had dropped
                  // the change already); otherwise PATCH on what it left gives what was shown.
                  after.compactText != before.compactText,
                  let redone = try? patch.apply(to: after), redone.compactText != before.compactText else { continue }
            return (ExploreFailure(property: "B11 rollback",
                                   message: "the rollback of line \(step.command.line) (\(step.command.text)) left \(after.compactText), "
                                       + "not \(before.compactText) without its change"),
                    key, client)
        }
        return nil
    }

    /// The answers `server next` queued and no request took yet.
    private static func queuedAnswers(_ server: SimulatedServer) -> Int {
        server.scripted.values.reduce(0) { $0 + $1.count }
    }

    /// Whether an `expect` failed because a value differs (`expect: PATH: expected X, found Y`),
    /// not because it could not run.
    static func isMismatch(_ output: String) -> Bool {
        let error = firstLine(output)
        return error.hasPrefix("expect: ") && error.contains(": expected ") && error.contains(", found ")
    }

    /// The error a command printed (without `error: `), else its last line.
    static func firstLine(_ output: String) -> String {
        let lines = output.split(separator: "\n")
        if let error = lines.first(where: { $0.hasPrefix("error: ") }) { return String(error.dropFirst("error: ".count)) }
        return String(lines.last ?? "")
    }
}
