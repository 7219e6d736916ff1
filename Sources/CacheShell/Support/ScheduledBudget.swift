import CacheCore

/// How much scheduled work a stranger's input may make cachesh do (SPEC §7.1): the runaway
/// limit bounds one command, this bounds a whole script or transcript run under `--safe` or
/// `--verify`, where the input is somebody else's. Counted in scheduled items (requests'
/// completions, polls, retries, `at` commands; not expiries), as the runaway limit is: a few
/// hundred bytes of `poll KEY every=1ms` and `advance 16m` otherwise ran for many seconds, and a
/// file of the size cachesh reads for weeks. Interactive use, replay and benchmarks have none.
public enum ScheduledBudget: Sendable, Equatable {
    /// `base` items, and `perByte` more for each byte of input read (the default).
    case perInput
    /// This many items in all, whatever the input's size (`--max-scheduled N`).
    case fixed(Int)

    /// Items any input may run, however short (a tenth of the runaway limit of one command; the
    /// transcripts of the examples run fewer than 100 each).
    public static let base = 100_000
    /// Items each byte of input adds.
    public static let perByte = 16

    /// What the error names once the budget is spent.
    var reason: String {
        switch self {
        case .perInput:
            "the budget of --safe and --verify: \(Self.base) and \(Self.perByte) per byte of input; raise it with --max-scheduled N"
        case .fixed:
            "the budget set by --max-scheduled"
        }
    }

    /// The items first allowed, before any input is read.
    var initial: Int {
        switch self {
        case .perInput: Self.base
        case .fixed(let items): items
        }
    }
}

extension Session {
    /// Notes `bytes` more of the input read: under `ScheduledBudget.perInput`, that many times
    /// `perByte` more scheduled items may run. Called once per piece read, not per command.
    /// - Complexity: O(1).
    public func noteInput(bytes: Int, on cache: isolated Cache) {
        guard options.scheduledBudget == .perInput else { return }
        let (items, overflow) = bytes.multipliedReportingOverflow(by: ScheduledBudget.perByte)
        let more = overflow ? Int.max : items
        scheduledItemsAllowed = scheduledItemsAllowed.addingReportingOverflow(more).overflow ? .max : scheduledItemsAllowed + more
        try? forEachClient(cache) { $0.growScheduledBudget(by: more) }
    }

    /// The items a client made now may run (SPEC §7.1: for each client): all the input read so
    /// far allows, as the clients made before it got, or the fixed number.
    func scheduledItemsForANewClient(_ budget: ScheduledBudget) -> Int {
        budget == .perInput ? scheduledItemsAllowed : budget.initial
    }
}
