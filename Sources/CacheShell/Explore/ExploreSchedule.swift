import CacheCore

/// One event of a scenario's block: a step issued, or the answer to the request it sent.
public struct ExploreEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case issue, answer }
    public var kind: Kind
    /// The step, an index into the scenario's steps.
    public var step: Int

    /// Where the event is in the written order: each step issued, then answered, in the order written.
    var position: Int { step * 2 + (kind == .answer ? 1 : 0) }
}

/// One scheduling choice: an event, and for an issue the answer its request gets (an index into
/// the step's answers; 0 is the written one).
public struct ExploreChoice: Sendable, Hashable {
    public var event: ExploreEvent
    public var answer: Int
}

/// Which events may come next, and what a choice costs in preemptions (SPEC §3.1): the written
/// order is the default, and each choice of another enabled event, or of an answer other than
/// the first one written, is one preemption.
struct ExploreSchedulerState {
    let steps: [ExploreScenario.Step]
    /// Steps left out (the shrinker drops steps).
    let dropped: Set<Int>
    private(set) var issued: [Bool]
    private(set) var answered: [Bool]
    /// The next step each section issues (an index into `order[section]`).
    private var next: [Int]
    /// Each section's steps, in order, without the dropped ones.
    private let order: [[Int]]

    init(steps: [ExploreScenario.Step], sections: Int, dropped: Set<Int> = []) {
        self.steps = steps
        self.dropped = dropped
        issued = Array(repeating: false, count: steps.count)
        answered = Array(repeating: false, count: steps.count)
        var order = Array(repeating: [Int](), count: sections)
        for (i, step) in steps.enumerated() where !dropped.contains(i) { order[step.section].append(i) }
        self.order = order
        next = Array(repeating: 0, count: sections)
    }

    /// The events that may come next, in written order (the first is the default).
    func enabled() -> [ExploreEvent] {
        var events: [ExploreEvent] = []
        for (section, steps) in order.enumerated() where next[section] < steps.count {
            events.append(ExploreEvent(kind: .issue, step: steps[next[section]]))
        }
        for (i, step) in steps.enumerated() where issued[i] && !answered[i] && step.latency != nil {
            events.append(ExploreEvent(kind: .answer, step: i))
        }
        return events.sorted { $0.position < $1.position }
    }

    /// Every choice that may come next, with its cost in preemptions.
    func choices() -> [(choice: ExploreChoice, cost: Int)] {
        let events = enabled()
        var all: [(ExploreChoice, Int)] = []
        for (rank, event) in events.enumerated() {
            let answers = event.kind == .issue && steps[event.step].latency != nil ? steps[event.step].answers.count : 1
            for answer in 0..<answers {
                all.append((ExploreChoice(event: event, answer: answer), (rank == 0 ? 0 : 1) + (answer == 0 ? 0 : 1)))
            }
        }
        return all
    }

    var isDone: Bool { enabled().isEmpty }

    mutating func take(_ choice: ExploreChoice) {
        let step = choice.event.step
        switch choice.event.kind {
        case .issue:
            issued[step] = true
            next[steps[step].section] += 1
        case .answer:
            answered[step] = true
        }
    }

    /// Whether `schedule` is a complete schedule of these steps, and its preemptions; nil if not.
    static func cost(of schedule: [ExploreChoice], steps: [ExploreScenario.Step], sections: Int, dropped: Set<Int>) -> Int? {
        var state = ExploreSchedulerState(steps: steps, sections: sections, dropped: dropped)
        var total = 0
        for choice in schedule {
            guard let found = state.choices().first(where: { $0.choice == choice }) else { return nil }
            total += found.cost
            state.take(choice)
        }
        return state.isDone ? total : nil
    }
}

/// Enumerates schedules depth first.
enum ExploreEnumeration {
    /// Calls `visit` with every complete schedule of exactly `preemptions` preemptions, in depth-first
    /// order (the default choice first), until `visit` returns false.
    /// - Returns: false when `visit` stopped it.
    @discardableResult
    static func each(steps: [ExploreScenario.Step], sections: Int, preemptions: Int, dropped: Set<Int> = [],
                     _ visit: ([ExploreChoice]) -> Bool) -> Bool {
        var prefix: [ExploreChoice] = []
        func walk(_ state: ExploreSchedulerState, _ spent: Int) -> Bool {
            let choices = state.choices()
            if choices.isEmpty { return spent == preemptions ? visit(prefix) : true }
            for (choice, cost) in choices where spent + cost <= preemptions {
                var after = state
                after.take(choice)
                prefix.append(choice)
                let go = walk(after, spent + cost)
                prefix.removeLast()
                if !go { return false }
            }
            return true
        }
        return walk(ExploreSchedulerState(steps: steps, sections: sections, dropped: dropped), 0)
    }

    /// The written order of the steps not `dropped`: every choice the default one.
    static func written(steps: [ExploreScenario.Step], sections: Int, dropped: Set<Int> = []) -> [ExploreChoice] {
        var state = ExploreSchedulerState(steps: steps, sections: sections, dropped: dropped)
        var schedule: [ExploreChoice] = []
        while let first = state.choices().first {
            state.take(first.choice)
            schedule.append(first.choice)
        }
        return schedule
    }
}

/// The times of a schedule's events: the earliest, each at least 1 ms after every earlier event
/// it depends on (all of them, without a ``ExploreCommutation``: the events of a schedule 1 ms
/// apart in its order), and each answer within its step's latency range after its issue
/// (difference constraints, solved as longest paths); nil when no times fit (the ranges forbid
/// that order). Events that commute get times from the events they depend on alone, so every
/// schedule that only reorders commuting events gets the same times (SPEC §3.1).
///
/// `tight` (the shrinker's last pass) lets a step come at the same time as the earlier events it
/// depends on: commands at one instant run in the order they are typed, and an `advance` to an
/// instant runs the work due at it first, so only an answer needs a later time than the events
/// before it. The transcript then needs an `advance` only where an answer must arrive between two
/// steps.
enum ExploreTiming {
    static func times(of schedule: [ExploreChoice], steps: [ExploreScenario.Step], commutation: ExploreCommutation? = nil,
                      tight: Bool = false) -> [Int64]? {
        let count = schedule.count
        guard count > 0 else { return [] }
        // Edges u -> v with weight w: t[v] >= t[u] + w.
        func gap(_ v: Int) -> Int64 { tight && schedule[v].event.kind == .issue ? 0 : 1 }
        var edges: [(Int, Int, Int64)] = []
        if let commutation {
            for v in 1..<count {
                for u in 0..<v where commutation.dependent(schedule[u].event, schedule[v].event) { edges.append((u, v, gap(v))) }
            }
        } else {
            for j in 1..<count { edges.append((j - 1, j, gap(j))) }
        }
        var issueAt: [Int: Int] = [:]
        for (j, choice) in schedule.enumerated() {
            let step = choice.event.step
            switch choice.event.kind {
            case .issue: issueAt[step] = j
            case .answer:
                guard let i = issueAt[step], let range = steps[step].latency else { return nil }
                edges.append((i, j, max(1, range.lowerBound)))
                edges.append((j, i, -range.upperBound))
            }
        }
        var t = Array(repeating: Int64(0), count: count)
        for round in 0...count {
            var changed = false
            for (u, v, w) in edges where t[u] + w > t[v] {
                t[v] = t[u] + w
                changed = true
            }
            if !changed { return t }
            if round == count { return nil }
        }
        return nil
    }

    /// The schedule as it runs: its events in the order of their times, events at the same time
    /// (which commute) in written order, with their times; nil when no times fit. Every schedule
    /// that only reorders commuting events runs the same way (the same commands, the same state).
    /// `tight`: events at the same time in the schedule's order (some of them depend on others).
    static func realize(_ schedule: [ExploreChoice], steps: [ExploreScenario.Step],
                        commutation: ExploreCommutation?, tight: Bool = false) -> (schedule: [ExploreChoice], times: [Int64])? {
        guard let times = times(of: schedule, steps: steps, commutation: commutation, tight: tight) else { return nil }
        guard commutation != nil else { return (schedule, times) }
        let order = schedule.indices.sorted {
            tight ? (times[$0], $0) < (times[$1], $1) : (times[$0], schedule[$0].event.position) < (times[$1], schedule[$1].event.position)
        }
        return (order.map { schedule[$0] }, order.map { times[$0] })
    }
}

/// Partial-order reduction (SPEC §3.1): a schedule's *trace*, the same for every schedule that
/// only reorders commuting events, as its lexicographically least order (each event the first
/// in written order whose dependencies, the earlier events of the schedule it does not commute
/// with, have all come); explore runs one schedule of each trace, the first it meets.
enum ExploreTrace {
    /// The trace's key: its least order, each event as its place in the written order and its answer.
    static func key(of schedule: [ExploreChoice], commutation: ExploreCommutation) -> [UInt16] {
        let count = schedule.count
        // waiting[v]: the earlier events v depends on that have not come yet.
        var waiting = Array(repeating: 0, count: count)
        var after = Array(repeating: [Int](), count: count)
        for v in 0..<count {
            for u in 0..<v where commutation.dependent(schedule[u].event, schedule[v].event) {
                waiting[v] += 1
                after[u].append(v)
            }
        }
        var ready = (0..<count).filter { waiting[$0] == 0 }
        var key: [UInt16] = []
        key.reserveCapacity(count)
        while !ready.isEmpty {
            var best = 0
            for i in ready.indices.dropFirst() where schedule[ready[i]].event.position < schedule[ready[best]].event.position { best = i }
            let u = ready.remove(at: best)
            key.append(UInt16(schedule[u].event.position) << 4 | UInt16(min(schedule[u].answer, 15)))
            for v in after[u] {
                waiting[v] -= 1
                if waiting[v] == 0 { ready.append(v) }
            }
        }
        return key
    }
}

/// PCT (probabilistic concurrency testing, Burckhardt et al., ASPLOS 2010), as explore's random
/// strategy (SPEC §3.1): each section, and each step's answer, is a thread with a random priority;
/// at each point the enabled thread of highest priority goes next, except at change points
/// chosen at random among the schedule's events, where the thread that goes next drops below
/// every other. Each schedule draws its number of change points uniformly from 0 to
/// `changePoints`: a fixed d − 1 as large as the events are few would drop nearly every thread
/// at nearly every point, and miss the shallow bugs. A bug that needs d ordering constraints,
/// d − 1 ≤ changePoints, is found by one schedule with a probability of at least
/// 1/((changePoints+1)·n·k^(d−1)), n threads and k events. An answer is chosen uniformly among
/// those its step lists.
enum ExplorePCT {
    static func schedule(steps: [ExploreScenario.Step], sections: Int, changePoints: Int,
                         using generator: inout SplitMix64) -> ([ExploreChoice], Int) {
        func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(generator.next() % UInt64(n)) }
        // Threads: sections 0..<sections, then one per step with latency (its answer).
        var threads = sections
        var answerThread: [Int: Int] = [:]
        for (i, step) in steps.enumerated() where step.latency != nil {
            answerThread[i] = threads
            threads += 1
        }
        let events = steps.count + answerThread.count
        // Priorities: a random order of changePoints+1 ... changePoints+threads (high goes first);
        // the i-th change point gives its thread priority changePoints−i, below them all.
        var priority = Array(changePoints + 1...changePoints + threads)
        for i in stride(from: priority.count - 1, to: 0, by: -1) { priority.swapAt(i, below(i + 1)) }
        // Distinct change points: the first ones of a random order of the events (a partial shuffle).
        let drawn = below(changePoints + 1)
        var places = Array(0..<events)
        var points: [Int: Int] = [:]
        for i in 0..<min(drawn, events) {
            places.swapAt(i, i + below(events - i))
            points[places[i]] = drawn - i
        }
        var state = ExploreSchedulerState(steps: steps, sections: sections)
        var schedule: [ExploreChoice] = []
        var spent = 0
        while true {
            let choices = state.choices()
            if choices.isEmpty { break }
            func thread(_ event: ExploreEvent) -> Int { event.kind == .issue ? steps[event.step].section : answerThread[event.step]! }
            var event = choices[0].choice.event
            for choice in choices.dropFirst() where priority[thread(choice.choice.event)] > priority[thread(event)] { event = choice.choice.event }
            if let drop = points[schedule.count] { priority[thread(event)] = drop }
            let options = choices.filter { $0.choice.event == event }
            let pick = options[below(options.count)]
            spent += pick.cost
            state.take(pick.choice)
            schedule.append(pick.choice)
        }
        return (schedule, spent)
    }
}
