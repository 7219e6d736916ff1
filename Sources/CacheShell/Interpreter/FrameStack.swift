/// Where the commands running now come from: one frame per source being run, outermost first.
/// The top frame is what the user gave (a script, `-c`, standard input, a typed line); a `source`
/// runs its file in a frame of its own, and a command `at` scheduled runs in a frame when it is
/// due (from inside the `advance` that reached its time).
///
/// Only the commands of the top frame enter the history and commit to a store; the others'
/// output belongs to the top-level command that ran them.
struct FrameStack {
    enum Kind {
        case top, source, scheduled
    }

    /// The frames, outermost first.
    private(set) var kinds: [Kind] = []
    /// How many `source` frames are open (bounded by ``Session/maxSourceDepth``).
    private(set) var sources = 0
    /// How many scheduled frames are open: while any is, reads never block.
    private(set) var scheduled = 0
    /// The text of each scheduled frame's command, when it ran, and whether it was scheduled
    /// typed (``ScheduledCommands/Entry/typed``), innermost last.
    private var runs: [(text: String, time: String, typed: Bool)] = []
    /// `quit` ran: every frame stops before its next command.
    var quitting = false
    /// Run the commonest commands of a batch without the lexer (``Session/runPlainCommand(at:in:on:)``);
    /// off in tests that check it changes nothing, and once a session has several clients
    /// (the path knows only the session's first cache).
    var readsPlainCommands = true

    /// No source is being run: the session waits for input.
    var isIdle: Bool { kinds.isEmpty }
    /// The commands running now are top-level ones: the user's own.
    var runsTopLevel: Bool { kinds.count == 1 }
    /// A command `at` scheduled is running (or a source it ran).
    var inScheduled: Bool { scheduled > 0 }

    mutating func push(_ kind: Kind) {
        kinds.append(kind)
        switch kind {
        case .top: break
        case .source: sources += 1
        case .scheduled: scheduled += 1
        }
    }

    /// Opens the frame of a command `at` scheduled (`text`), which runs at `time`.
    mutating func pushScheduled(text: String, time: String, typed: Bool) {
        push(.scheduled)
        runs.append((text, time, typed))
    }

    /// Whether a command running now is one the history holds as typed: a top-level one, or one
    /// a typed `at` scheduled (``ScheduledCommands/Entry/typed``).
    var runsTyped: Bool {
        switch kinds.last {
        case .top?: true
        case .scheduled?: runs.last?.typed ?? false
        default: false
        }
    }

    mutating func pop() {
        switch kinds.removeLast() {
        case .top: break
        case .source: sources -= 1
        case .scheduled:
            scheduled -= 1
            runs.removeLast()
        }
    }

    /// When the innermost frame is a scheduled command's: its text and time, which its reply and
    /// its error print (`at TIME: COMMAND`, `(at TIME) ...`).
    var scheduledRun: (text: String, time: String)? {
        guard scheduled > 0, case .scheduled? = kinds.last else { return nil }
        return runs.last.map { ($0.text, $0.time) }
    }

    /// What is wrong with the stack; empty when nothing is.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if kinds.dropFirst().contains(where: { if case .top = $0 { true } else { false } }) { problems.append("a top frame inside another") }
        if sources != kinds.filter({ if case .source = $0 { true } else { false } }).count { problems.append("source frames miscounted") }
        if scheduled != kinds.filter({ if case .scheduled = $0 { true } else { false } }).count || runs.count != scheduled {
            problems.append("scheduled frames miscounted")
        }
        return problems
    }
}
