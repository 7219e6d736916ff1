import CacheCore

/// The search (SPEC §3.1): which schedules run, in which order, and when it stops.
extension Explorer {
    /// The names the built-in properties fail with (``ExploreFailure/property``), in the order
    /// they are checked.
    public static let builtInProperties = ["B12", "B11 rollback", "read after change", "no invented value"]

    /// Every property a scenario's schedules are checked against, as a failure names it: each
    /// `expect` step, each `expect` line after the block, then the built-in ones.
    public static func properties(of scenario: ExploreScenario) -> [String] {
        scenario.steps.filter { $0.verb == "expect" }.map { "\($0.command.text) (line \($0.command.line))" }
            + scenario.expects.filter { $0.text.hasPrefix("expect") }.map { "\($0.text) (line \($0.line))" } + builtInProperties
    }

    /// Tries every schedule of 0, 1, ... `depth` preemptions (one of each trace, with the
    /// reduction), then random (PCT) ones; stops at the first failure, which it shrinks.
    ///
    /// Under `strategy=auto` each depth is planned before it runs (its new traces counted, without
    /// running any); a depth with more than the bound left is not run, and random schedules are
    /// run in its place. Under `strategy=exhaustive` the depths run until the bound stops them;
    /// under `strategy=pct` only random schedules run.
    public func run() -> ExploreReport {
        if postSetup == nil && options.fork && forkable, let post = makePostSetup() {
            var report = Explorer(scenario: scenario, options: options, postSetup: post).run()
            report.forked = true
            return report
        }
        var search = Search(explorer: self)
        search.run()
        var report = search.report
        report.distinctStates = search.states.count
        report.states = search.states
        report.forkOff = !options.fork
        if let found = search.found, report.problem == nil { report.failure = shrink(found.schedule, found.run) }
        return report
    }

    /// One search's bookkeeping.
    private struct Search {
        let explorer: Explorer
        var report: ExploreReport
        var states: Set<String> = []
        var found: (schedule: [ExploreChoice], run: ExploreRun)?
        /// The traces run (or found infeasible): the reduction runs each once.
        var traces: Set<[UInt16]> = []
        var orders = 0
        var first = true
        var progress: ProgressLine?

        init(explorer: Explorer) {
            self.explorer = explorer
            report = ExploreReport(file: explorer.scenario.name)
            report.bound = explorer.options.scheduleLimit
            report.reduced = explorer.options.reduce
            report.strategy = explorer.options.strategy
            report.seed = explorer.options.seed
            report.changePoints = explorer.options.depth
            progress = explorer.options.progress.map { ProgressLine(show: $0) }
        }

        var scenario: ExploreScenario { explorer.scenario }
        var options: ExploreOptions { explorer.options }
        /// Whether to go on: no problem, failure, bound or interruption yet.
        var going: Bool { report.problem == nil && found == nil && !report.stoppedAtBound && !report.stoppedAtOrders && !report.interrupted }
        var room: Int { max(0, options.scheduleLimit - report.schedules - report.infeasible) }

        mutating func run() {
            defer { progress?.end() }
            var sample = options.strategy == .pct
            if options.strategy != .pct {
                for depth in 0...options.depth where going {
                    if options.strategy == .auto && !fits(depth) {
                        if going {
                            report.sampledFromDepth = depth
                            sample = true
                        }
                        break
                    }
                    report.perDepth.append(0)
                    let finished = exhaust(depth)
                    if finished && going { report.depthReached = depth }
                }
            }
            let count = options.randomSchedules ?? (sample ? ExploreOptions.defaultRandomSchedules : 0)
            if going && count > 0 { random(count) }
        }

        /// The trace of `schedule`, when the reduction is on.
        func trace(_ schedule: [ExploreChoice]) -> [UInt16]? {
            options.reduce ? ExploreTrace.key(of: schedule, commutation: explorer.commutation) : nil
        }

        /// Whether the new traces of `depth` fit in the bound left (counted without running any).
        mutating func fits(_ depth: Int) -> Bool {
            var planned: Set<[UInt16]> = []
            var count = 0
            let room = self.room
            var visited = orders
            let limit = options.orderLimit
            let traces = self.traces
            let explorer = self.explorer
            let reduce = options.reduce
            let complete = ExploreEnumeration.each(steps: scenario.steps, sections: scenario.sectionCount, preemptions: depth) { schedule in
                visited += 1
                if visited > limit { return false }
                if reduce {
                    let key = ExploreTrace.key(of: schedule, commutation: explorer.commutation)
                    guard !traces.contains(key), planned.insert(key).inserted else { return true }
                }
                count += 1
                return count <= room
            }
            // The planning pass is not counted in `orders`: the run of a depth that fits visits
            // the same orders again, within the bound.
            return complete
        }

        /// Runs every new trace of `depth`; false when stopped before the end.
        mutating func exhaust(_ depth: Int) -> Bool {
            var search = self
            let finished = ExploreEnumeration.each(steps: scenario.steps, sections: scenario.sectionCount, preemptions: depth) { schedule in
                search.visit(schedule, depth: depth)
            }
            self = search
            return finished
        }

        /// One enumerated order of `depth`: skipped when its trace ran, else run and checked.
        mutating func visit(_ schedule: [ExploreChoice], depth: Int) -> Bool {
            orders += 1
            if orders > options.orderLimit {
                report.stoppedAtOrders = true
                return false
            }
            let key = trace(schedule)
            if let key, traces.contains(key) {
                report.reordered += 1
                return true
            }
            // Infeasible orders count too: the bound is on the enumeration's work.
            if room == 0 {
                report.stoppedAtBound = true
                return false
            }
            if options.interrupted?() == true {
                report.interrupted = true
                return false
            }
            let line = "explore: \(scenario.name): depth \(depth), \(report.schedules) schedules"
            progress?.update(line)
            if let key { traces.insert(key) }
            guard let run = explorer.run(schedule) else {
                report.infeasible += 1
                return true
            }
            report.perDepth[depth] += 1
            report.deepest = max(report.deepest, depth)
            return check(schedule, run, preemptions: depth)
        }

        /// Records a run; false when the search stops (a failure, or the scenario is wrong).
        mutating func check(_ schedule: [ExploreChoice], _ run: ExploreRun, preemptions: Int) -> Bool {
            states.insert(options.stopAtFailure ? run.state : run.state + "\nverdict: " + (run.failure?.property ?? "none"))
            if first, let refused = run.refused {
                report.problem = (refused.line, "explore: refused in the written order, so the scenario is wrong: \(refused.message)")
                return false
            }
            first = false
            if run.failure != nil && options.stopAtFailure {
                found = (schedule, run)
                report.foundAtDepth = preemptions
                return false
            }
            return true
        }

        /// `count` PCT schedules (at most the bound left), seeded by `seed=`; a schedule whose
        /// trace already ran is counted and not run again.
        mutating func random(_ count: Int) {
            var generator = SplitMix64(seed: options.seed)
            // The written order first, when nothing ran: a wrong scenario is told apart from a race.
            if first {
                let written = ExploreEnumeration.written(steps: scenario.steps, sections: scenario.sectionCount)
                if let key = trace(written) { traces.insert(key) }
                if let run = explorer.run(written) {
                    report.random += 1
                    guard check(written, run, preemptions: 0) else { return }
                } else {
                    report.infeasible += 1
                }
            }
            while report.random < count && going {
                if room == 0 {
                    report.stoppedAtBound = report.random < count
                    return
                }
                if options.interrupted?() == true {
                    report.interrupted = true
                    return
                }
                let line = "explore: \(scenario.name): \(report.random) random schedules"
                progress?.update(line)
                let (schedule, preemptions) = ExplorePCT.schedule(steps: scenario.steps, sections: scenario.sectionCount,
                                                                 changePoints: options.depth, using: &generator)
                report.deepest = max(report.deepest, preemptions)
                if let key = trace(schedule) {
                    guard traces.insert(key).inserted else {
                        report.random += 1
                        report.reordered += 1
                        continue
                    }
                }
                guard let run = explorer.run(schedule) else {
                    report.infeasible += 1
                    continue
                }
                report.random += 1
                guard check(schedule, run, preemptions: preemptions) else { return }
            }
        }
    }
}
