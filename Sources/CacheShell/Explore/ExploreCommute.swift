import CacheCore

/// Which steps of a scenario commute (SPEC §3.1, Commuting steps): two steps whose footprints
/// share nothing may run in either order and leave the same state (values, entry states and
/// times, each key's observer sequence, pending work, and the recency of a namespace with
/// `max=`), so explore runs one order of each set of schedules that differ only by such swaps.
///
/// A footprint is the keys a step reads or changes, with a namespace taken whole where a key's
/// neighbours can see it: a namespace with `max=` (an entry stored there may evict another by
/// recency) and one an observer watches whole (`watch NS:*`, whose sequence of changes
/// interleaves its keys). A step explore cannot confine to named keys (a push, a focus, an
/// entity, a tag, the server's latency or state for every key, a client switch) touches
/// everything and commutes with nothing.
struct ExploreCommutation: Sendable {
    /// One unit a step touches: a key of a namespace, or the whole namespace (`key` nil).
    struct Unit: Hashable, Sendable {
        var namespace: String
        var key: String?
    }

    /// What a step touches.
    enum Footprint: Equatable, Sendable {
        case units(Set<Unit>)
        case everything

        func overlaps(_ other: Footprint) -> Bool {
            guard case .units(let mine) = self, case .units(let theirs) = other else { return true }
            for a in mine {
                for b in theirs where a.namespace == b.namespace && (a.key == nil || b.key == nil || a.key == b.key) { return true }
            }
            return false
        }
    }

    /// Each step's footprint.
    let footprints: [Footprint]
    /// `dependentSteps[a][b]`: the events of steps a and b keep their order in every schedule
    /// that reorders only commuting steps (the same step, the same section, or footprints that meet).
    private let dependentSteps: [[Bool]]

    /// - Parameter commute: false makes every two steps dependent (each schedule runs as written,
    ///   its events 1 ms apart): the plain enumeration the tests hold the reduction to.
    init(scenario: ExploreScenario, commute: Bool = true) {
        let footprints = Self.footprints(scenario)
        self.footprints = footprints
        let steps = scenario.steps
        dependentSteps = steps.indices.map { a in
            steps.indices.map { b in
                !commute || a == b || steps[a].section == steps[b].section || footprints[a].overlaps(footprints[b])
            }
        }
    }

    /// Whether two events keep their order: never swapped by the reduction, and the later at least
    /// 1 ms after the earlier.
    func dependent(_ a: ExploreEvent, _ b: ExploreEvent) -> Bool { dependentSteps[a.step][b.step] }

    /// Whether any two steps of different sections commute (else the reduction has nothing to skip).
    var anyCommute: Bool {
        dependentSteps.indices.contains { a in dependentSteps[a].indices.contains { !dependentSteps[a][$0] } }
    }

    // MARK: Footprints

    /// Every step's footprint, under what the setup configured.
    static func footprints(_ scenario: ExploreScenario) -> [Footprint] {
        var whole: Set<String> = []
        var everything = false
        for line in scenario.setup {
            let words = line.text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first else { continue }
            switch first {
            case "ns" where words.count > 1:
                // Recency decides what `max=` evicts: a namespace with a bound is one unit.
                if words.contains(where: { $0.hasPrefix("max=") }) { whole.insert(words[1]) }
            case "watch":
                // An observer of a whole namespace (or of everything) sees its keys' changes in order.
                guard words.count > 1, !words[1].hasPrefix("-") else { everything = true; continue }
                if words[1] == "*" { everything = true } else if words[1].hasSuffix(":*") { whole.insert(String(words[1].dropLast(2))) }
                else if words[1].contains("*") || words[1].contains("?") || words[1].contains("[") { everything = true }
            case "load", "client", "source", "restore", "hydrate":
                // A configuration, a client or a state explore does not read: nothing commutes.
                everything = true
            default:
                if words.contains(where: { $0 == "entity" || $0.hasPrefix("max=") }) { everything = true }
            }
        }
        return scenario.steps.map { step in
            if everything { return .everything }
            return footprint(step.command.text, whole: whole)
        }
    }

    /// The keys one step's command names, or everything when it may reach others.
    static func footprint(_ command: String, whole: Set<String>) -> Footprint {
        let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return .units([]) }
        // Words after the verb that name keys: no option (`x=`), no flag (`--x`).
        let operands = words.dropFirst().filter { !$0.hasPrefix("-") && !$0.contains("=") }
        func keys(_ names: some Sequence<String>) -> Footprint {
            var units: Set<Unit> = []
            for name in names {
                guard let unit = Self.unit(name, whole: whole) else { return .everything }
                units.insert(unit)
            }
            return .units(units)
        }
        switch verb {
        case "echo": return .units([])
        case "get", "put", "peek", "touch", "expire", "evict", "cancel", "explain", "pages":
            guard let key = operands.first else { return .everything }
            return keys([key])
        case "mutate":
            guard let key = operands.first, key != "entity" else { return .everything }
            return keys([key])
        case "mget":
            return operands.isEmpty ? .everything : keys(operands)
        case "invalidate", "activate", "deactivate", "poll", "unpoll":
            guard operands.count == 1 else { return .everything }
            return keys(operands)
        case "event":
            guard operands.first == "patch", operands.count > 1 else { return .everything }
            return keys([operands[1]])
        case "server":
            guard let form = operands.first else { return .everything }
            switch form {
            case "set", "patch", "delete", "next":
                return operands.count > 1 ? keys([operands[1]]) : .everything
            case "latency", "fail":
                // `server latency D KEY` shapes one key; without KEY, every key.
                return operands.count > 2 ? keys([operands[2]]) : .everything
            default: return .everything
            }
        case "expect":
            guard operands.first == "peek", operands.count > 1 else { return .everything }
            return keys([operands[1]])
        default: return .everything
        }
    }

    /// The unit a key names: its namespace and canonical key (a page `KEY@N` is its list's), or
    /// the namespace whole; nil for a pattern or a tag (which may name any key).
    static func unit(_ name: String, whole: Set<String>) -> Unit? {
        if name.contains("*") || name.contains("?") || name.hasPrefix("tag:") || name.contains("{") { return nil }
        var key = KeyName.canonical(name)
        if let at = key.lastIndex(of: "@"), key[key.index(after: at)...].allSatisfy(\.isNumber), at != key.startIndex {
            key = String(key[..<at])
        }
        let namespace = String(KeyName.namespace(of: key))
        return Unit(namespace: namespace, key: whole.contains(namespace) ? nil : key)
    }
}
