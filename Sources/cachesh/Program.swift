import ArgumentParser
import CacheCore
import CacheShell
import CacheStore
import CMalloc
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The command line of `cachesh` (SPEC §6). A new argument also needs its field in `Invocation`
/// and, to skip ArgumentParser at start-up, its spelling in `Invocation(plain:)`.
struct Cachesh: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cachesh",
        abstract: "A scriptable shell for exploring how a client-side cache behaves.",
        discussion: """
            With no FILE and a terminal on stdin and stdout, cachesh is interactive. Otherwise it runs \
            FILE, the -c commands, or stdin as a script. `cachesh --verify FILE...` replays transcripts.
            `cachesh proxy --upstream http[s]://HOST[:PORT]` runs a caching reverse proxy (`cachesh proxy --help`).
            `cachesh --generate-completion-script bash|zsh|fish` prints a completion script for that shell.
            `cachesh attach [PID|PATH|HOST:PORT]` runs commands on a running app's cache (`cachesh attach --help`).
            Exit status: 0 every command was accepted; 1 a command was rejected or a transcript differed; \
            2 bad usage, an unreadable file, or a transcript given as a script.
            """,
        version: "cachesh 0.1.0"
    )

    @Argument(help: "A .cachesh script to run, or with --verify the transcripts to replay.")
    var files: [String] = []

    @Option(name: .customShort("c"), help: ArgumentHelp("Run these commands (separated by ; or newlines) and exit.", valueName: "commands"))
    var commands: String?

    @Flag(help: "Print one JSON object per command.")
    var json = false

    @Flag(help: "Stop at the first failing command.")
    var bail = false

    @Option(help: "Load this configuration (JSON) before anything else.")
    var config: String?

    @Option(help: "Keep the whole session in this SQLite store.")
    var store: String?

    @Flag(help: "With --store: wait while another cachesh has the store open, instead of refusing (Ctrl-C ends the wait).")
    var wait = false

    @Flag(help: "Refuse every command that would read or write a file (interactively: no history file, no file-name completion).")
    var safe = false

    @Flag(help: "Print each command after the prompt before its output: the output is a transcript.")
    var echo = false

    @Flag(help: "Interactively, print help whole instead of through a pager (less -FRX, or $PAGER).")
    var noPager = false

    @Flag(help: "Replay each FILE as a transcript and show how it differs.")
    var verify = false

    @Flag(help: "Explore each FILE, a scenario (then depth=N schedules=N seed=S strategy=S por=on|off fork=on|off transcript=OUT): exit 0 clean, 1 a property fails, 2 a scenario is wrong.")
    var explore = false

    @Flag(help: "With --verify: rewrite the expected output of failing transcripts.")
    var update = false

    @Option(help: ArgumentHelp("With --verify or --explore: also write a JUnit XML report here, one test case per transcript, or per scenario's property.", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Print the transcript of an app's recording (Cache.startRecording(to:)), or of a HAR network log (FILE.har).", valueName: "recording"))
    var transcribe: String?

    @Flag(help: "With --transcribe FILE.har: bodies as their size and digest, the values of cookies, Authorization and Set-Cookie dropped.")
    var redact = false

    /// Text, checked in `runMain` as the hand reading's is: one error for `--max-scheduled many`
    /// and `--max-scheduled=many`.
    @Option(help: ArgumentHelp("With --safe or --verify: let the input run this many scheduled items in all (default 100000 and 16 per byte of input).", valueName: "N"))
    var maxScheduled: String?
}

/// What the command line asks for: the fields of `Cachesh`.
struct Invocation: Equatable {
    var files: [String] = []
    var commands: String?
    var json = false
    var bail = false
    var config: String?
    var store: String?
    var wait = false
    var safe = false
    var echo = false
    var noPager = false
    var verify = false
    var explore = false
    var update = false
    var junit: String?
    var transcribe: String?
    var redact = false
    /// `--max-scheduled N`, kept as typed (checked in `runMain`).
    var maxScheduled: String?

    init(_ parsed: Cachesh) {
        files = parsed.files
        commands = parsed.commands
        json = parsed.json
        bail = parsed.bail
        config = parsed.config
        store = parsed.store
        wait = parsed.wait
        safe = parsed.safe
        echo = parsed.echo
        noPager = parsed.noPager
        verify = parsed.verify
        explore = parsed.explore
        update = parsed.update
        junit = parsed.junit
        transcribe = parsed.transcribe
        redact = parsed.redact
        maxScheduled = parsed.maxScheduled
    }

    /// What reading a command line gives.
    enum Reading: Equatable {
        case run(Invocation)
        /// `--help`, `--version`: print this and exit 0.
        case print(String)
        /// Bad usage: this message (after `cachesh: `), exit 2.
        case usage(String)
    }

    /// Reads `arguments`: by hand when the line is plain (``init(plain:)``), else with
    /// ArgumentParser, whose messages the errors are. `byHand: false` reads every line with
    /// ArgumentParser (the tests hold both readings to the same result).
    static func read(_ arguments: [String], byHand: Bool = true) -> Reading {
        if byHand, let plain = Invocation(plain: arguments) { return .run(plain) }
        let parsed: Cachesh
        do { parsed = try Cachesh.parse(arguments) } catch {
            let message = Cachesh.fullMessage(for: error)
            if Cachesh.exitCode(for: error) == .success {
                // `--help` and `--version` win over the rest of the line, but not over a word no
                // reading knows: `cachesh --bogus --help` is refused as `cachesh --bogus` is.
                let rest = withoutHelp(arguments)
                if rest.count < arguments.count, let unknown = unknownOption(in: rest) { return .usage(unknown) }
                return .print(message)
            }
            // ArgumentParser's message starts "Error: " and already points at --help.
            return .usage(message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message)
        }
        // ArgumentParser lets the last of a repeated flag or option win: refused instead, as a
        // shell command's flag or option given twice is (the plain reading leaves a repeat to this).
        if let repeated = repeated(in: arguments) { return .usage(repeated) }
        return .run(Invocation(parsed))
    }

    /// ArgumentParser's message for an unknown option in `arguments` (read without `--help`
    /// and `--version`), or nil when it names none.
    static func unknownOption(in arguments: [String]) -> String? {
        do { _ = try Cachesh.parse(arguments) } catch {
            let message = Cachesh.fullMessage(for: error)
            let why = message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message
            if Cachesh.exitCode(for: error) != .success && why.hasPrefix("Unknown option") { return why }
        }
        return nil
    }

    /// `arguments` without `--help`, `-h` and `--version` (before `--`).
    static func withoutHelp(_ arguments: [String]) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        return arguments[..<end].filter { !["--help", "-h", "--version"].contains($0) } + arguments[end...]
    }

    /// The names that take a value (`--store FILE`, `--store=FILE`, `-c TEXT`).
    static let valueNames: Set<String> = ["-c", "--config", "--store", "--transcribe", "--junit", "--max-scheduled"]

    /// The error for the first flag or option given twice (`--json --json`, `--store a
    /// --store=b`), or nil when none is; read on a line ArgumentParser accepted, so each value
    /// follows its name. Nothing after `--` is a flag.
    /// - Complexity: O(n) in the number of arguments.
    static func repeated(in arguments: [String]) -> String? {
        var seen: Set<String> = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--" { return nil }
            guard argument.hasPrefix("-"), argument.utf8.count > 1 else { continue }
            let name = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? argument
            let takesValue = valueNames.contains(name)
            if takesValue && name == argument { i += 1 }
            if !seen.insert(name).inserted {
                return takesValue ? "option \(name) given twice" : "flag \(name) given twice"
            }
        }
        return nil
    }

    /// Reads a plain command line by hand: each flag and option at most once, spelled `--name` or
    /// `-c` with its value as the next argument, and files; the values and files neither empty nor
    /// starting with `-`. ArgumentParser reads such a line the same way but costs about a
    /// millisecond of start-up; anything else (`--help`, `--version`, `--name=value`, `--`, a
    /// repeat, an unknown name) is nil and left to it, with its messages.
    /// - Complexity: O(n) in the number of arguments.
    init?(plain arguments: [String]) {
        var seen: [String] = []  // a handful at most: a linear search is cheaper than a set's set-up
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            guard let first = argument.utf8.first else { return nil }
            guard first == UInt8(ascii: "-") else {
                files.append(argument)
                continue
            }
            guard !seen.contains(argument) else { return nil }
            seen.append(argument)
            switch argument {
            case "--json": json = true
            case "--bail": bail = true
            case "--safe": safe = true
            case "--echo": echo = true
            case "--no-pager": noPager = true
            case "--verify": verify = true
            case "--explore": explore = true
            case "--update": update = true
            case "--wait": wait = true
            case "--redact": redact = true
            case "-c", "--config", "--store", "--transcribe", "--junit", "--max-scheduled":
                guard i < arguments.count, let valueFirst = arguments[i].utf8.first, valueFirst != UInt8(ascii: "-") else {
                    return nil
                }
                let value = arguments[i]
                i += 1
                switch argument {
                case "-c": commands = value
                case "--config": config = value
                case "--transcribe": transcribe = value
                case "--junit": junit = value
                case "--max-scheduled": maxScheduled = value
                default: store = value
                }
            default:
                return nil
            }
        }
    }
}

/// Buffered standard output; error lines flush it first so the two streams keep their order.
final class Terminal {
    /// Standard output not written yet; a batch's session writes replies straight into it.
    let output = OutputBuffer()
    /// Polled between pieces of a long output (the interactive shell's Ctrl-C): true drops the rest.
    var interrupted: (() -> Bool)?

    init() {
        output.flush = { [unowned self] in self.flush() }
    }

    /// The width of the terminal standard output (or `fd`) is (one ioctl), nil when it is none, or one
    /// that says no width: what a reply's tables fit there (SPEC §4). `COLUMNS` is not read: an
    /// exported one goes stale when the window is resized, and the output of a pipe must not
    /// depend on the environment.
    static func columns(of fd: Int32 = 1) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    func write(_ text: String, isError: Bool) {
        if isError {
            flush()
            // An error line may name a file given on the command line: no control character
            // of it reaches the terminal raw (SPEC §4); a session's own lines are escaped already.
            var text = VisibleText.of(text)
            text.withUTF8 { writeAll(2, $0) }
        } else {
            output.append(text)
            if output.count >= OutputBuffer.flushSize { flush() }
        }
    }

    func flush() {
        guard output.count > 0 else { return }
        output.withBytes { writeAll(1, $0) }
        output.removeAll()
    }

    private func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        let descriptor = FileDescriptor(rawValue: fd)
        var offset = 0
        while offset < bytes.count {
            if let interrupted, interrupted() {
                _ = try? descriptor.writeAll("\n(output cut: Ctrl-C)\n".utf8)
                return
            }
            // Pieces of 64 KiB at most, so Ctrl-C stops a long output within one piece; a write it
            // interrupts is not retried before that check (the interactive shell's SIGINT handler
            // does not restart calls).
            let end = interrupted == nil ? bytes.count : min(bytes.count, offset + (1 << 16))
            do {
                offset += try descriptor.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset..<end])),
                                               retryOnInterrupt: false)
            } catch let error as Errno where error == .interrupted {
                continue
            } catch {
                return
            }
        }
    }
}

func fail(usage message: String) -> Never {
    _ = try? FileDescriptor.standardError.writeAll(VisibleText.of("cachesh: \(message)\n").utf8)
    exit(2)
}

func runMain() -> Int32 {
    // An argument that is not UTF-8 (-c text, a file name in Latin-1) would reach cachesh
    // repaired, each bad byte a U+FFFD: refused instead, as input that is not UTF-8 is.
    for i in 1..<Int(CommandLine.argc) {
        guard let raw = CommandLine.unsafeArgv[i] else { continue }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
        if let bad = FileIO.firstInvalidUTF8(bytes) {
            fail(usage: "argument \(i) is not UTF-8 text (byte \(FileIO.hexByte(bytes[bad]))): cachesh reads UTF-8")
        }
    }
    if CommandLine.argc > 1, CommandLine.arguments[1] == "proxy" { runProxy(Array(CommandLine.arguments.dropFirst(2))) }
    // `cachesh attach ...`: the shell on a running app's cache (SPEC §9), its own command line.
    if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "attach" {
        return Attach.main(Array(CommandLine.arguments.dropFirst(2)))
    }
    let command: Invocation
    switch Invocation.read(Array(CommandLine.arguments.dropFirst())) {
    case .run(let invocation):
        command = invocation
    case .print(let text):
        print(text)
        return 0
    case .usage(let message):
        fail(usage: message)
    }
    let stdoutIsTerminal = isatty(1) == 1
    let stdinIsTerminal = isatty(0) == 1
    let environment = ProcessEnvironment()
    var options = SessionOptions()
    options.mode = command.json ? .json : .human
    options.bail = command.bail
    options.safe = command.safe
    // Long work that sees a Ctrl-C stops and takes it, so it does not also cut the output that reports it.
    options.interrupted = { interruptSignalled.exchange(false, ordering: .relaxed) }
    options.colour = stdoutIsTerminal && environment["NO_COLOR"].map(\.isEmpty) ?? true && environment["TERM"] != "dumb"
    // Long work (a replay) shows its progress on standard error when that is a terminal that can
    // erase a line: never in standard output, a pipe, a file or a transcript.
    if isatty(2) == 1 && environment["TERM"].map({ !$0.isEmpty && $0 != "dumb" }) ?? false {
        options.progress = { line in
            // Cut to one row of the terminal, so that `\r` goes back to its start and erases it all.
            let text = line.map { "\r" + DisplayWidth.prefix($0, fitting: (Terminal.columns(of: 2) ?? 80) - 1) + "\u{1b}[K" }
            _ = try? FileDescriptor.standardError.writeAll((text ?? "\r\u{1b}[K").utf8)
        }
    }

    if command.update && !command.verify { fail(usage: "--update goes with --verify") }
    if command.junit != nil && !command.verify && !command.explore { fail(usage: "--junit goes with --verify or --explore") }
    if command.echo && command.verify { fail(usage: "--echo goes with a script, -c or stdin, not --verify") }
    if command.wait && command.store == nil { fail(usage: "--wait goes with --store") }
    var budget: ScheduledBudget?
    if let text = command.maxScheduled {
        guard command.safe || command.verify else { fail(usage: "--max-scheduled goes with --safe or --verify") }
        guard let items = Int(text), items >= 0 else { fail(usage: "--max-scheduled \(text): use a whole number of scheduled items, 0 or more") }
        budget = .fixed(items)
    } else if command.safe || command.verify {
        budget = .perInput
    }
    if command.redact && !(command.transcribe?.lowercased().hasSuffix(".har") ?? false) {
        fail(usage: "--redact goes with --transcribe FILE.har")
    }
    if let recording = command.transcribe {
        if recording.lowercased().hasSuffix(".har") { return transcribeHAR(recording, command, mode: options.mode) }
        return transcribe(recording, command, mode: options.mode)
    }
    if command.explore {
        if command.verify || command.commands != nil || command.store != nil || command.echo || command.config != nil || command.bail {
            fail(usage: "--explore takes scenario FILEs and their options alone (with --json, --safe or --junit REPORT)")
        }
        return ExploreMain.run(command.files, json: command.json, safe: command.safe, junit: command.junit, progress: options.progress)
    }
    if command.verify {
        return Verify.run(files: command.files, update: command.update, safe: command.safe, junit: command.junit,
                          budget: budget, environment: environment)
    }
    if command.files.count > 1 { fail(usage: "give one script FILE (or use --verify for transcripts)") }
    if command.commands != nil && !command.files.isEmpty { fail(usage: "give either -c COMMANDS or a FILE, not both") }

    let interactive = command.files.isEmpty && command.commands == nil && stdinIsTerminal && stdoutIsTerminal
    options.echo = command.echo && !interactive
    // A stranger's script under --safe is bounded; the interactive shell's typing is not.
    if !interactive { options.scheduledBudget = budget }
    return Cache().withIsolation { cache in
        runSession(command, options: options, interactive: interactive, environment: environment, on: cache)
    }
}

/// Runs the session of a script, `-c`, stdin or the interactive shell: all of it isolated to the
/// cache, entered once, with the session living in the cache's isolation.
func runSession(_ command: Invocation, options: SessionOptions, interactive: Bool, environment: ProcessEnvironment,
                on cache: isolated Cache) -> Int32 {
    // The interactive shell shows its prompts itself (options.echo is off for it).
    let terminal = Terminal()
    let session = Session(cache: cache, options: options)
    // A batch keeps no history (memory stays flat however long it runs): `record --from-start`
    // is refused there. The interactive shell keeps it, so that one writes the whole session.
    session.keepsWholeHistory = interactive
    if options.echo && options.mode == .json {
        // As a recording does: the replay, which starts in human mode, must switch first.
        terminal.write(TranscriptSyntax.render(command: "output json", output: "{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\n"),
                       isError: false)
    }
    session.sink = { text, isError in terminal.write(text, isError: isError) }
    if !interactive { session.directOutput = terminal.output }
    // On a terminal a table fits its width (read once here; the interactive shell reads it
    // again before each command); a pipe, a file and `--echo` keep 80 columns.
    if !options.echo, let columns = Terminal.columns() { session.terminalWidth = columns }
    defer { terminal.flush() }

    if let path = command.store {
        StoreOpener.open(path, wait: command.wait, pipelined: !interactive, session: session, terminal: terminal, on: cache)
        if options.echo {
            // The echo replays from a fresh session: it starts with the state the store held.
            let start = session.echoStart(on: cache)
            if let problem = start.problem {
                terminal.write("cachesh: --echo: the state \(path) holds cannot start a transcript: \(problem)\n", isError: true)
                finish(session, terminal, status: 2)
            }
            terminal.write(start.text, isError: false)
        }
    }
    if let config = command.config {
        guard session.loadInitialConfiguration(path: config, on: cache) else { finish(session, terminal, status: 2) }
    }
    if let file = command.files.first {
        // The script streams as standard input does (memory does not grow with its length),
        // after a first pass that refuses a transcript before anything runs.
        let fd: Int32
        do { fd = try FileIO.openRegular(file) } catch {
            terminal.write("cachesh: cannot read \(file): \(error)\n", isError: true)
            finish(session, terminal, status: 2)
        }
        if let error = Batch.transcriptError(name: file, fd: fd) {
            terminal.write(error + "\n", isError: true)
            finish(session, terminal, status: 2)
        }
        // A script that cannot read the timeline keeps none (nothing it prints changes).
        session.keepTimeline(onlyIf: TimelineUse.mayRead(fd: fd), on: cache)
        let status = Batch.run(session, on: cache, terminal: terminal, from: fd, name: file, isFile: true)
        close(fd)
        finish(session, terminal, status: status)
    } else if let commands = command.commands {
        session.noteInput(bytes: commands.utf8.count, on: cache)
        session.keepTimeline(onlyIf: TimelineUse.mayRead(commands), on: cache)
        session.run(SourceFile(name: "-c", text: commands, firstColumn: 1), semicolonsSeparate: true, on: cache)
    } else if interactive {
        terminal.flush()
        finish(session, terminal, status: Interactive.run(session: session, on: cache, terminal: terminal, environment: environment,
                                                              pager: !command.noPager))
    } else {
        session.keepTimeline(onlyIf: TimelineUse.mayReadStandardInput(), on: cache)
        finish(session, terminal, status: Batch.run(session, on: cache, terminal: terminal, from: 0, name: "<stdin>", isFile: false))
    }
    finish(session, terminal, status: session.anyFailed ? 1 : 0)
}

/// `--transcribe RECORDING`: the transcript of a recording on stdout; a damaged, truncated or
/// newer recording is refused with one line naming its line, exit 2.
func transcribe(_ path: String, _ command: Invocation, mode: OutputMode) -> Int32 {
    if command.verify || command.echo || command.wait || command.store != nil || command.config != nil || command.commands != nil || !command.files.isEmpty {
        fail(usage: "--transcribe RECORDING goes alone (with --json for a JSON transcript)")
    }
    let text: String
    do { text = try FileIO.read(path) } catch { fail(usage: "cannot read \(path): \(error)") }
    let terminal = Terminal()
    switch RecordingTranscript.text(ofFile: path, text, mode: mode) {
    case .success(let transcript):
        terminal.write(transcript, isError: false)
        terminal.flush()
        return 0
    case .failure(let error):
        terminal.write(error.message + "\n", isError: true)
        return 2
    }
}

/// `cachesh proxy ...` (SPEC §6, §8 Proxy): replaces this process (`exec`: the same process id,
/// descriptors and environment) with `cachesh-proxy`, the executable installed beside this one,
/// given the arguments after `proxy`. The proxy (SwiftNIO, swift-nio-ssl, BoringSSL) is an
/// executable of its own so that every other start of `cachesh` does not map and relocate it
/// (Benchmarks/README.md, "Start-up of the shipped build"). Beside means in the folder of this
/// executable's real path, links resolved: a link to `cachesh` on the PATH finds it too.
func runProxy(_ arguments: [String]) -> Never {
    guard let folder = ownFolder() else {
        fail(usage: "proxy: cannot find the folder of this cachesh executable, where cachesh-proxy is installed")
    }
    let helper = folder + "/cachesh-proxy"
    let argv = ([helper] + arguments).map { strdup($0) } + [nil]
    execv(helper, argv)
    // Only when it did not start: missing, not executable.
    let reason = String(cString: strerror(errno))
    fail(usage: "proxy: cannot run \(helper): \(reason) (cachesh proxy runs the cachesh-proxy installed beside cachesh)")
}

/// The folder of the running executable's real path (links resolved), or nil when the system does
/// not say.
func ownFolder() -> String? {
    #if os(Linux)
    guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
    #elseif canImport(Darwin)
    var size: UInt32 = 0
    _ = _NSGetExecutablePath(nil, &size)
    var path = [CChar](repeating: 0, count: Int(size) + 1)
    guard _NSGetExecutablePath(&path, &size) == 0, let resolved = realpath(path, nil) else { return nil }
    #else
    let resolved: UnsafeMutablePointer<CChar>? = nil
    guard let resolved else { return nil }
    #endif
    defer { free(resolved) }
    let path = String(cString: resolved)
    guard let slash = path.lastIndex(of: "/") else { return nil }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// `--transcribe FILE.har [--redact]`: the transcript of a HAR log (docs/SPEC.md §5.5): its
/// script (`HARTranscript`) run on a new session with each command echoed, after a `restore` that
/// starts the clock at the log's first entry. A log that cannot be read is one line, exit 2.
func transcribeHAR(_ path: String, _ command: Invocation, mode: OutputMode) -> Int32 {
    if command.verify || command.echo || command.wait || command.store != nil || command.config != nil || command.commands != nil || !command.files.isEmpty {
        fail(usage: "--transcribe FILE.har goes alone (with --redact, --json)")
    }
    let script: (clockStart: Int64, lines: [String])
    do { script = try HARTranscript.commands(path: path, name: path, redact: command.redact) } catch {
        let terminal = Terminal()
        terminal.write("cachesh: \(path): \(error.message)\n", isError: true)
        terminal.flush()
        return 2
    }
    // An empty cache whose clock starts at the log's first entry, as one restore.
    let restore = Cache(clockStart: script.clockStart).withIsolation { cache in
        _ = Session(cache: cache)
        return "restore " + cache.snapshotText(pretty: false)
    }
    var options = SessionOptions()
    options.mode = mode
    options.echo = true
    return Cache().withIsolation { cache in
        let terminal = Terminal()
        let session = Session(cache: cache, options: options)
        if mode == .json {
            terminal.write(TranscriptSyntax.render(command: "output json", output: "{\"command\":\"output\",\"mode\":\"json\",\"ok\":true}\n"),
                           isError: false)
        }
        session.sink = { text, isError in terminal.write(text, isError: isError) }
        session.directOutput = terminal.output
        defer { terminal.flush() }
        let text = ([restore] + script.lines).joined(separator: "\n") + "\n"
        session.run(SourceFile(name: path, text: text, firstColumn: 1), semicolonsSeparate: false, on: cache)
        return 0
    }
}

/// The process environment as a dictionary.
struct ProcessEnvironment {
    /// The variable `name`, read when asked: building a table of the whole environment at start-up
    /// cost more than the few names the shell ever looks up.
    subscript(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

/// The program's entry point. Not `Cachesh`'s: ArgumentParser's `main` would read every command
/// line, where `Invocation.read` reads a plain one by hand.
@main
enum Program {
    static func main() {
        // Freed large blocks go back to the system (the tables' old copies after each growth):
        // peak memory of 1 M puts some 25 bytes an entry less (Benchmarks/README.md, Memory per entry).
        cachesh_malloc_return_large_blocks()
        exit(runMain())
    }
}
