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

    /// One schedule chosen at random, each choice uniformly among those enabled, and its preemptions.
    static func random(steps: [ExploreScenario.Step], sections: Int, using generator: inout SplitMix64) -> ([ExploreChoice], Int) {
        var state = ExploreSchedulerState(steps: steps, sections: sections)
        var schedule: [ExploreChoice] = []
        var spent = 0
        while true {
            let choices = state.choices()
            if choices.isEmpty { break }
            let pick = choices[Int(generator.next() % UInt64(choices.count))]
            spent += pick.cost
            state.take(pick.choice)
            schedule.append(pick.choice)
        }
        return (schedule, spent)
    }
}

/// The times of a schedule's events: the earliest, each at least 1 ms after the one before, and
/// each answer within its step's latency range after its issue (difference constraints, solved
/// as longest paths); nil when no times fit (the ranges forbid that order).
enum ExploreTiming {
    static func times(of schedule: [ExploreChoice], steps: [ExploreScenario.Step]) -> [Int64]? {
        let count = schedule.count
        guard count > 0 else { return [] }
        // Edges u -> v with weight w: t[v] >= t[u] + w.
        var edges: [(Int, Int, Int64)] = []
        for j in 1..<count { edges.append((j - 1, j, 1)) }
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
}
