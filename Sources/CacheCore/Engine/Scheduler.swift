import HeapModule

/// One piece of work due at a time; items run in (time, seq) order.
struct ScheduledItem: Comparable {
    enum Work {
        case completion(UInt64)
        case expiryScan(ns: Int32, epoch: UInt32)
        /// An `expire in=` override of the entry in `slot`, while its store is the one of `storedSeq`.
        case expiryOverride(slot: Int32, storedSeq: UInt64)
        case external(UInt64)
        /// A poll's refetch (`AppBehaviours.polls`), by the poll's current id.
        case poll(UInt64)
        /// A failed fetch sent again (`Policy.retry`), by request id.
        case retry(UInt64)
    }
    var time: Int64
    var seq: UInt64
    var work: Work

    static func < (a: ScheduledItem, b: ScheduledItem) -> Bool { (a.time, a.seq) < (b.time, b.seq) }
    static func == (a: ScheduledItem, b: ScheduledItem) -> Bool { a.time == b.time && a.seq == b.seq }
}

/// External work scheduled by `schedule(after:token:)` (the shell's `at`).
struct ScheduledCommand {
    var token: Int
    var due: Int64
}

/// Work in time: a priority queue of scheduled items (request completions, expiry scans and
/// overrides, `at` commands), the `at` commands not yet run, and how many items the current
/// command has run (the runaway limit, SPEC §7).
///
/// Invariants (`invariantViolations()`):
/// - every `at` command waiting has one item in the queue, due at its time with its id;
/// - the items run by the current command stay within `CacheEngine.runawayLimit`.
struct Scheduler {
    /// Items in (time, seq) order; an `at` item whose command was cancelled stays until it comes up.
    private(set) var heap = Heap<ScheduledItem>()
    /// The `at` commands waiting, by id.
    private(set) var commands: [UInt64: ScheduledCommand] = [:]
    /// Items other than expiries run since the current command began.
    private(set) var itemsRun = 0
    /// Items other than expiries that may still run, in all commands from now on (the budget of
    /// a stranger's input, SPEC §7.1); `Int.max`: no budget.
    private(set) var budgetLeft = Int.max
    /// The items the budget has allowed so far, and why, for the error once it is spent.
    private(set) var budgetGranted = 0
    private(set) var budgetReason = ""
    /// The largest (time, sequence) of an item taken so far (live answers are placed after it).
    private(set) var maxRunKey: (time: Int64, seq: UInt64) = (.min, 0)
    /// Request id → its completion items that a live answer or a cancel superseded (a timeout's,
    /// SPEC §2), by time and, when known, sequence number: they stay in the queue, and are
    /// skipped when they come up (``tookSuperseded``).
    private(set) var superseded: [UInt64: [(time: Int64, seq: UInt64?)]] = [:]
    /// The item ``next(upTo:)`` took last is a superseded completion: it must not run. (A later
    /// attempt's answer may fall at its very time: run there, it would complete the request in
    /// the superseded item's place among the items of that millisecond.)
    private(set) var tookSuperseded = false

    init() {}

    /// Starts a unit of work: the runaway limit counts items per unit.
    /// - Complexity: O(1).
    mutating func beginUnitOfWork() { itemsRun = 0 }

    /// Lets at most `items` more items other than expiries run, in all commands; past that, a
    /// command that would run another fails, naming `reason`, as a runaway one does.
    mutating func setBudget(_ items: Int, reason: String) {
        budgetLeft = max(0, items)
        budgetGranted = budgetLeft
        budgetReason = reason
    }

    /// Lets `items` more run (more input was read). - Complexity: O(1).
    mutating func growBudget(by items: Int) {
        guard budgetLeft != .max else { return }
        budgetLeft = budgetLeft.addingReportingOverflow(max(0, items)).overflow ? .max - 1 : budgetLeft + max(0, items)
        budgetGranted = budgetGranted.addingReportingOverflow(max(0, items)).overflow ? .max : budgetGranted + max(0, items)
    }

    /// Adds an item.
    /// - Complexity: O(log h) for h items.
    @inline(__always)
    mutating func insert(_ item: ScheduledItem) { heap.insert(item) }

    /// Schedules an `at` command with id `id`, due at `due`.
    /// - Complexity: O(log h).
    mutating func schedule(_ command: ScheduledCommand, id: UInt64) {
        commands[id] = command
        heap.insert(ScheduledItem(time: command.due, seq: id, work: .external(id)))
    }

    /// Takes the earliest item due at or before `limit`, counting it against the runaway limit
    /// unless it is an expiry.
    /// - Returns: nil when no item is due by then.
    /// - Throws: `CacheError` when the current command has run `runawayLimit` items; the item stays.
    /// - Complexity: O(log h).
    mutating func next(upTo limit: Int64) throws(CacheError) -> ScheduledItem? {
        guard let top = heap.min, top.time <= limit else { return nil }
        switch top.work {
        case .expiryScan, .expiryOverride: break
        default:
            if itemsRun >= CacheEngine.runawayLimit {
                throw CacheError("stopped after running \(CacheEngine.runawayLimit) scheduled items in one command (runaway schedule?)")
            }
            if budgetLeft <= 0 {
                throw CacheError("stopped after running \(budgetGranted) scheduled items in all (\(budgetReason))")
            }
            itemsRun += 1
            budgetLeft -= 1
        }
        heap.removeMin()
        if (top.time, top.seq) > maxRunKey { maxRunKey = (top.time, top.seq) }
        tookSuperseded = false
        if case .completion(let id) = top.work, !superseded.isEmpty, var items = superseded[id],
           let i = items.firstIndex(where: { $0.time == top.time && ($0.seq ?? top.seq) == top.seq }) {
            items.remove(at: i)
            superseded[id] = items.isEmpty ? nil : items
            tookSuperseded = true
        }
        return top
    }

    /// Notes that request `id`'s completion item at `time` (with sequence number `seq`, when
    /// known: nil takes the first of its items at `time`) is superseded by an earlier one.
    /// - Complexity: O(1).
    mutating func supersede(completion id: UInt64, at time: Int64, seq: UInt64? = nil) {
        superseded[id, default: []].append((time, seq))
    }

    /// Takes the `at` command `id` out of the waiting ones (nil when it was cancelled).
    /// - Complexity: O(1).
    mutating func takeCommand(_ id: UInt64) -> ScheduledCommand? {
        commands.removeValue(forKey: id)
    }

    /// Cancels every waiting `at` command (their items are skipped when they come up).
    /// - Complexity: O(c) for c commands waiting.
    mutating func cancelCommands() { commands.removeAll() }

    /// Replaces every item and command (`restore`); the count of items run goes on.
    /// - Complexity: O(h).
    mutating func replaceAll(items: [ScheduledItem], commands: [UInt64: ScheduledCommand]) {
        heap = Heap(items)
        self.commands = commands
        superseded = [:]
    }
}

// MARK: - Invariants

extension Scheduler {
    /// What is wrong with the scheduler, one message per broken rule (see the type's invariants);
    /// empty when it is sound.
    /// - Complexity: O(h) for h items.
    func invariantViolations() -> [String] {
        var v: [String] = []
        if itemsRun < 0 || itemsRun > CacheEngine.runawayLimit {
            v.append("scheduler: \(itemsRun) items run in this command, outside 0...\(CacheEngine.runawayLimit)")
        }
        var queued: [UInt64: [Int64]] = [:]
        for item in heap.unordered {
            if case .external(let id) = item.work { queued[id, default: []].append(item.time) }
        }
        var completions: [UInt64: [Int64]] = [:]
        for item in heap.unordered {
            if case .completion(let id) = item.work { completions[id, default: []].append(item.time) }
        }
        for (id, items) in superseded {
            var queued = completions[id] ?? []
            for time in items.map(\.time) {
                guard let i = queued.firstIndex(of: time) else {
                    v.append("scheduler: superseded completion of request \(id) at \(time) has no item")
                    continue
                }
                queued.remove(at: i)
            }
        }
        for (id, command) in commands {
            let times = queued[id] ?? []
            if times != [command.due] {
                v.append("scheduler: at command \(id) due at \(command.due) has items at \(times)")
            }
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "Scheduler invariants broken:\n" + violations.joined(separator: "\n"))
    }
}
