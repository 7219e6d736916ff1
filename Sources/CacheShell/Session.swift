import CacheCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CacheServer

/// One cachesh session: a client of a `Cache` actor over a simulated server, and the state of
/// the session (options, frames being run, schedule, timeline, store link). Commands run in the
/// interpreter (Interpreter/), which makes an outcome of each; the renderers (Output/) print it.
///
/// A session lives inside its cache's isolation: it is made by `Session(cache:options:)` from code
/// isolated to the cache, and every method that runs commands takes that `isolated Cache`, so a
/// whole script or typed line runs in one hop onto the actor (`Session.with(options:_:)`).
public final class Session {
    /// The simulated server the cache fetches from (`server ...` commands shape it).
    public let server: SimulatedServer
    /// ``options``. (Internal, as the fields below: the compiler sees every access to them and can
    /// leave out the run-time exclusivity checks a public stored property of a class costs.)
    private(set) var settings: SessionOptions
    // Unchecked exclusivity (here and on `outcome`, `terminal`, `history`, `timeline`): each access to
    // these is a read, an assignment or a mutating call of a value that calls back into no code
    // of this session (the frames, an outcome, a renderer or the history only change their own
    // fields and hand text to the sink, which is the executable's terminal), so no access to one can
    // begin while another is under way; checked, each access of every command paid a run-time
    // check (about 80 instructions).
    /// The sources being run, and whether `quit` ran.
    @exclusivity(unchecked) var frames = FrameStack()
    /// The outcome of the top-level command running now.
    @exclusivity(unchecked) var outcome = Outcome()
    /// The user's copy of each outcome, and the commit gate of a store.
    @exclusivity(unchecked) var terminal = TerminalRenderer()
    /// The session's own copy (for `record`, `--echo`), and an open recording.
    @exclusivity(unchecked) var history = HistoryRenderer()
    /// Commands scheduled by `at`, by token.
    var schedule = ScheduledCommands()
    /// The scheduled items the input read so far allows each client (``ScheduledBudget``): what a
    /// client made now starts with.
    var scheduledItemsAllowed = ScheduledBudget.base
    /// Every change to an entry this session, watched or not, for `timeline` and `explain`.
    @exclusivity(unchecked) var timeline = Timeline()
    /// The timeline before a recording from here on started, set aside while it runs: its replay
    /// starts from a `restore` and knows nothing earlier, so `timeline` and `explain` look back
    /// no further than the recording's start (SPEC §6); `record stop` joins the two again.
    var timelineBeforeRecording: Timeline?
    /// ``store``.
    private(set) var openStore: StoreLink?
    /// The session's store held one when it was opened (`--echo` writes that state first).
    public internal(set) var storeHeldASession = false
    /// The state this session began from (a restore, a store opened), for a recording from the start.
    var base = BaseState()
    /// What a `--verify` of this session's input reads after each step.
    private(set) var findings = Findings()
    /// The clients besides the first (SPEC §3 Clients): empty until `client NAME` makes a second.
    var clients = ClientTable()
    /// The cache the clients persist to and hydrate from (`persist`, `hydrate`).
    var persisted = PersistedCopy()
    /// The client whose cache is reporting now, while there are several (its output lines carry
    /// its name); nil otherwise.
    var speaker: String?
    /// The directory relative paths of typed commands resolve against (a transcript's own directory);
    /// nil means the working directory.
    public var baseDirectory: String?
    typealias ScheduledEntry = ScheduledCommands.Entry

    /// How deep `source` may nest.
    public static let maxSourceDepth = 16

    /// A session with a simulated server of its own that is no cache's origin yet.
    init(settings: SessionOptions) {
        server = SimulatedServer()
        self.settings = settings
    }

    /// A session on `cache`, which gets a new simulated server as its origin and this session as
    /// its delegate.
    public convenience init(cache: isolated Cache, options: SessionOptions = SessionOptions()) {
        self.init(settings: options)
        cache.useOrigin(server)
        cache.setDelegate(self)
        cache.reportsAllChanges = true
        if let budget = options.scheduledBudget { cache.setScheduledBudget(budget.initial, reason: budget.reason) }
    }

    /// Runs `body` with a new session on a new cache, in one hop onto the cache.
    public static func with<T: Sendable>(options: SessionOptions = SessionOptions(),
                                         _ body: @Sendable (Session, isolated Cache) throws -> T) async rethrows -> T {
        try await run(on: Cache(), options: options, body)
    }

    private static func run<T: Sendable>(on cache: isolated Cache, options: SessionOptions,
                                         _ body: @Sendable (Session, isolated Cache) throws -> T) rethrows -> T {
        let session = Session(cache: cache, options: options)
        return try body(session, cache)
    }

    // MARK: The session's setup

    public var options: SessionOptions {
        get { settings }
        set {
            settings = newValue
            updateStraightWrites()
        }
    }
    /// Receives output after each top-level command when set (the executable's terminal);
    /// otherwise output collects until `takeOutput()`.
    public var sink: ((_ text: String, _ isError: Bool) -> Void)? {
        get { terminal.sink }
        set { terminal.sink = newValue }
    }
    /// The buffer the sink writes standard output into, when set with it (a batch): a top-level
    /// command whose reply is all it prints writes it straight there, in order with what the
    /// sink is handed.
    public var directOutput: OutputBuffer? {
        get { terminal.buffer }
        set {
            terminal.buffer = newValue
            updateStraightWrites()
        }
    }
    /// The width of the terminal the session's output is shown on, which a table in a reply
    /// fits before it is shown as records (SPEC §4); nil (no terminal): 80 columns. The history,
    /// and so `record` and `--echo`, keeps 80 whatever this says.
    public var terminalWidth: Int? {
        get { terminal.width == Render.width ? nil : terminal.width }
        set { terminal.width = newValue ?? Render.width }
    }
    /// Keep the history (off for benchmarks of huge batches that never record).
    public var keepsHistory: Bool {
        get { history.enabled }
        set { history.enabled = newValue }
    }
    /// Whether the session keeps a timeline (`timeline`, `explain`) and its cache reports every
    /// change to it; off only by ``stopKeepingTimeline(on:)``.
    public private(set) var keepsTimeline = true

    /// Keeps no timeline from here on, for a batch whose script cannot read it (``TimelineUse``):
    /// its cache, and every client's made later, reports no change, which every change otherwise
    /// pays for. Before the first command: `timeline` and `explain` would miss what came before.
    public func stopKeepingTimeline(on cache: isolated Cache) {
        keepsTimeline = false
        cache.reportsAllChanges = false
    }

    /// ``stopKeepingTimeline(on:)`` unless the script about to run may read the timeline
    /// (`scriptMayRead`, ``TimelineUse``) or a command already scheduled may (one a store held).
    public func keepTimeline(onlyIf scriptMayRead: Bool, on cache: isolated Cache) {
        guard !scriptMayRead, !schedule.texts.contains(where: TimelineUse.mayRead) else { return }
        stopKeepingTimeline(on: cache)
    }

    /// Keep every command of the session for `record --from-start` (the interactive shell); when
    /// false (a batch: script, `-c`, standard input) only the last is kept, so memory does not
    /// grow with the length of the run, and `record --from-start` is refused.
    public var keepsWholeHistory: Bool {
        get { history.entries.retainsAll }
        set {
            history.entries.retainsAll = newValue
            updateStraightWrites()
        }
    }
    /// An open `record FILE`.
    var recording: Recording? {
        get { history.recording }
        set {
            history.recording = newValue
            updateStraightWrites()
        }
    }
    /// The link to the persistent store (`--store`): each top-level command's changes are
    /// committed to it before its output is handed on (`commitOrHold`); set by `open(store:)`.
    public internal(set) var store: StoreLink? {
        get { openStore }
        set {
            openStore = newValue
            updateStraightWrites()
        }
    }

    /// A reply may go straight into the batch's buffer: a batch that keeps only its last history
    /// entry, with no recording, `--echo` nor colour.
    private func updateStraightWrites() {
        terminal.writesStraight = terminal.buffer != nil && !history.entries.retainsAll && history.recording == nil
            && !settings.echo && !settings.colour
    }

    // MARK: What the session tells its runner

    /// A command was rejected (exit status 1).
    public var anyFailed: Bool {
        get { findings.anyFailed }
        set { findings.anyFailed = newValue }
    }
    /// `quit` was run.
    public internal(set) var quitRequested: Bool {
        get { frames.quitting }
        set { frames.quitting = newValue }
    }
    /// The file commands `--safe` has refused so far, the last one's message: `--verify` stops a
    /// transcript's replay at the first.
    public var safeRefusals: Int { findings.safeRefusals }
    public var lastSafeRefusal: String? { findings.lastSafeRefusal }
    /// The first request `server strict on` found nothing queued for, as the error line says it:
    /// `--verify` stops a transcript's replay there.
    public internal(set) var divergence: String? {
        get { findings.divergence }
        set { findings.divergence = newValue }
    }
    /// The pretty snapshot this session's state began from (set by `restore` and by opening a
    /// store, which also clear the history): a recording `--from-start` starts with it, inline.
    public var baseSnapshot: String? {
        get { base.text }
        set { base = BaseState(text: newValue) }
    }

    /// Takes the output produced and not handed to a sink.
    public func takeOutput() -> [(text: String, isError: Bool)] { terminal.take() }

    /// Ends an open `record FILE` as the session ends: the transcript replaces its file.
    /// - Returns: the error line when it could not be written (the file is then as it was), or nil.
    public func endRecording() -> String? {
        guard let open = recording else { return nil }
        recording = nil
        return open.stop().map { "record: could not write \(open.name): \($0)" }
    }

    /// What is wrong with the session's parts; empty when nothing is.
    func invariantViolations() -> [String] {
        frames.invariantViolations() + outcome.invariantViolations() + terminal.invariantViolations()
            + history.invariantViolations() + schedule.invariantViolations() + clients.invariantViolations()
    }

    // MARK: Helpers of the commands

    /// The error a file command fails with under `--safe` (`verb` is read or write), counted.
    func refusedBySafe(_ verb: String, _ what: String, at offset: Int) -> ShellError {
        let message = "--safe: commands may not \(verb) files (\(what))"
        findings.safeRefusals += 1
        findings.lastSafeRefusal = message
        return ShellError(message, at: offset)
    }

    /// The file a path in `source` names: relative paths resolve against the source's directory.
    func resolvePath(_ path: String, relativeTo source: SourceFile) -> String {
        if path == "~" || path.hasPrefix("~/") {
            // `~` is the home directory, as a shell would expand it (the word is never quoted here).
            if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty {
                return home + path.dropFirst()
            }
        }
        if path.hasPrefix("/") { return path }
        if source.name == nil, let base = baseDirectory { return base + "/" + path }
        guard let name = source.name, name.contains("/"), !name.hasPrefix("<"), name != "-c" else { return path }
        let directory = name[..<name.lastIndex(of: "/")!]
        return directory + "/" + path
    }
}

/// What a runner reads of a session after each step: failures, `--safe` refusals, a divergence.
struct Findings {
    var anyFailed = false
    var safeRefusals = 0
    var lastSafeRefusal: String?
    var divergence: String?
}

// MARK: - Engine callbacks: each one an item of the running command's outcome

extension Session: CacheDelegate {
    public func cache(_ cache: isolated Cache, observed event: CacheEvent) {
        add(.event(event, clockStart: cache.clockStart, mode: settings.mode))
    }

    public func cache(_ cache: isolated Cache, noted event: consuming CacheEvent) {
        // A benchmark's huge batch keeps no history, nor a timeline.
        if history.enabled { timeline.append(event) }
    }

    public func cache(_ cache: isolated Cache, runScheduled token: Int) {
        guard let entry = schedule.take(token) else { return }
        runScheduledCommand(entry, on: cache)
    }

    public func cache(_ cache: isolated Cache, validated result: ValidationResult) {
        add(.validated(result, at: cache.now, mode: settings.mode))
    }

    public func cache(_ cache: isolated Cache, finishedRead result: ReadResult) {
        add(.finishedRead(result, at: cache.now, clockStart: cache.clockStart, mode: settings.mode))
    }
}
