import CacheCore
import CacheShell
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh attach [PID|PATH|HOST:PORT [FILE...]] [--read-only] [--json] [--token-file FILE] [-c
/// COMMANDS]`, `cachesh attach --list [--json]` (SPEC §9): the shell on a running app's cache, through the app's CacheInspector. The commands
/// run in the app; what comes back is untrusted and shown with its control and bidirectional
/// characters escaped, each line bounded.
enum Attach {
    /// The protocol version this shell speaks (SPEC §9 Protocol).
    static let protocolVersion = 1
    /// The longest line the shell reads from the app (SPEC §7.1).
    static let maxLineBytes = 65 << 20

    static let usage = """
        usage: cachesh attach [PID|PATH|HOST:PORT [FILE...]] [--read-only] [--json] [--token-file FILE] [-c COMMANDS]
               cachesh attach --list [--json]
        The shell on a running app's cache (the app started CacheInspector). PID: the app's process
        (all digits, no leading zero), on its default socket (/tmp/cachesh-$UID/PID, or $CACHESH_SOCKET_DIR/PID);
        none: the one app of yours listening there (--list lists them); PATH: its Unix-domain
        socket (./1234 for a file named by digits); HOST:PORT: its loopback TCP port, with the token
        the app printed in CACHESH_TOKEN or in --token-file FILE (never on the command line). A
        script FILE comes after the app.
        """

    static let help = """
        Over an attachment the commands run on the app's own cache, on its real clock:
          read:   keys [PATTERN], peek KEY, explain KEY, stats [NS], pending, config, snapshot, now,
                  timeline KEY|NS:*|* (the changes since this shell attached)
          watch:  watch [KEY|NS:*|*] (changes stream here, with their cause), unwatch [KEY|NS:*|*]
          record: record FILE (the app's session from here on, as a transcript --verify replays;
                  written at record stop, the shell's end or Ctrl-C), record stop
          change: invalidate, evict, clear, event, push, memory-warning, expire (not with --read-only)
        advance, at and server ... are refused: the app's clock is real and its origin its own.
        help, quit. On a terminal: line editing and history as in cachesh, Tab completing the app's
        keys and the commands above; Ctrl-C drops the line, on an empty line it ends the
        attachment (a recording is written); Ctrl-D ends the input.

        """

    struct Options {
        var target: String?
        var readOnly = false
        var json = false
        var tokenFile: String?
        var commands: String?
        var files: [String] = []
        var list = false
    }

    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        var i = 0
        func value(_ name: String) -> String {
            i += 1
            guard i < arguments.count else { failAttach("\(name) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            let argument = arguments[i]
            switch argument {
            case "--read-only": options.readOnly = true
            case "--json": options.json = true
            case "--token-file": options.tokenFile = value(argument)
            case "-c": options.commands = value(argument)
            case "--list": options.list = true
            case "-h", "--help":
                write(usage + "\n", to: .standardOutput)
                return 0
            default:
                if argument.hasPrefix("--token-file=") {
                    options.tokenFile = String(argument.dropFirst("--token-file=".count))
                } else if argument.hasPrefix("--token") {
                    failAttach("the token is not taken on the command line, where ps shows it: put it in CACHESH_TOKEN or in a file for --token-file FILE")
                } else if argument.hasPrefix("-") && argument != "-" {
                    failAttach("unknown option \(argument)\n" + usage)
                } else if options.target == nil {
                    options.target = argument
                } else {
                    options.files.append(argument)
                }
            }
            i += 1
        }
        if options.list {
            guard options.target == nil && options.commands == nil && !options.readOnly && options.tokenFile == nil else {
                failAttach("--list lists the apps listening; it takes only --json")
            }
            return list(json: options.json)
        }
        if options.commands != nil && !options.files.isEmpty { failAttach("-c and a script FILE: give one of them") }
        let target: String
        if let given = options.target, AttachDiscovery.isPID(given) {
            switch AttachDiscovery.socket(ofPID: given) {
            case .success(let socket): target = socket
            case .failure(let error): failAttach(error.message)
            }
        } else {
            target = options.target ?? onlyApp()
        }

        let fd = connect(to: target)
        var client = Client(fd: fd, json: options.json)
        let tcp = !isUnixPath(target)
        var hello: [String: JSONValue] = ["id": .int(0), "op": .string("hello"), "protocol": .int(Int64(protocolVersion))]
        if options.readOnly { hello["read_only"] = .bool(true) }
        if tcp, let token = token(options) { hello["token"] = .string(token) }
        // An app that refused the connection at once (16 open) may have closed it before the
        // hello went out: its one line is read all the same.
        _ = client.trySend(line: JSONValue.object(hello).compactText)
        guard let answer = client.response(to: 0) else { failAttach("\(target): the app closed the connection before it answered") }
        if case .int(let theirs)? = answer["protocol"], theirs != Int64(protocolVersion) {
            failAttach("\(target): the app speaks protocol version \(theirs), this cachesh version \(protocolVersion)")
        }
        guard answer["ok"] == .bool(true) else {
            // The app's refusal, its own `attach: ` left out (this line has one).
            if case .string(let error)? = answer["error"] { failAttach(error.hasPrefix("attach: ") ? String(error.dropFirst(8)) : error) }
            failAttach("\(target): the app refused the attachment")
        }

        // The commands: -c, the script files, or standard input (a prompt on a terminal).
        let signalSources = AttachSignals.install()
        defer { withExtendedLifetime(signalSources) {} }
        var stop = false
        func run(_ command: String) {
            let trimmed = command.trimmingBlanks()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
            if ["quit", "exit", "q", "\\q", ".quit", ".exit"].contains(trimmed) {
                stop = true
                return
            }
            if trimmed == "help" || trimmed == "?" {
                write(help, to: .standardOutput)
                return
            }
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if words[0] == "record" {
                if !record(words, &client) { client.failed = true }
                return
            }
            if !client.run(trimmed) { client.failed = true }
        }
        if let commands = options.commands {
            for command in Lexer.inlineCommands(commands) where !stop && !AttachSignals.interrupted { run(command) }
        } else if !options.files.isEmpty {
            for file in options.files where !stop {
                let text: String
                do { text = try FileIO.read(file) } catch { failAttach("cannot read \(file): \(error.description)") }
                var joiner = CommandJoiner()
                // Split at each line feed (a `Character` split keeps `\r\n` whole: a CRLF script
                // was one line).
                for line in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
                where !stop && !AttachSignals.interrupted {
                    if let command = joiner.add(Substring(line)) { run(command) }
                }
                if let rest = joiner.finish(), !stop && !AttachSignals.interrupted { run(rest) }
            }
        } else {
            /// Reads and prints what the app sent. - Returns: false when it ended the attachment.
            func pump() -> Bool {
                // At the end of the connection, what came before it is printed all the same (a
                // Tab's wait may hold some).
                let open = client.readAvailable()
                client.handleBuffered()
                return open
            }
            /// Tab: the app's candidates; what it streamed while Tab waited is printed above the line.
            func complete(_ text: String, _ editor: OpaquePointer) -> CompletionResult? {
                let result = client.complete(text)
                if client.holdsMessages { TerminalInput.printAbove(editor) { client.handleBuffered() } }
                return result
            }
            if isatty(0) == 1 && isatty(1) == 1, let editor = Self.lineEditor() {
                if !readEdited(editor, socket: fd, stopped: { stop }, pump: pump, complete: complete, run: run) { client.endedByApp() }
            } else {
                readInput(socket: fd, prompting: isatty(0) == 1 && isatty(1) == 1, stopped: { stop },
                          pump: { if !pump() { client.endedByApp() } }, run: run)
            }
        }
        // Watching: the changes stream until the app ends the connection or the shell is
        // interrupted; a recording is then stopped and written (at once when nothing is watched).
        var appEnded = false
        if !stop && !AttachSignals.interrupted && client.watching > 0 {
            appEnded = !client.streamEvents()
        }
        if appEnded {
            if client.recording != nil { client.endedByApp() }
            write("cachesh: attach: the app ended the attachment\n", to: .standardError)
        } else if client.recording != nil {
            _ = client.stopRecording()
        }
        return client.failed ? 1 : 0
    }

    /// `cachesh attach --list`: the apps of this user listening on their default socket, one a
    /// line (`PID  NAME  SOCKET`, aligned, NAME left out where no name can be told; a JSON object
    /// each with `--json`). - Returns: 0, or 1 when none listens (said on standard error).
    static func list(json: Bool) -> Int32 {
        let apps: [AttachDiscovery.App]
        switch AttachDiscovery.listening() {
        case .failure(let error): failAttach(error.message)
        case .success(let found): apps = found
        }
        guard !apps.isEmpty else {
            write("cachesh: attach: no app of yours listens in \(directoryName())\n", to: .standardError)
            return 1
        }
        func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        let pidWidth = apps.map { String($0.pid).count }.max() ?? 0
        let nameWidth = apps.map(\.name.count).max() ?? 0
        for app in apps {
            if json {
                write(JSONValue.object(["pid": .int(Int64(app.pid)), "name": .string(app.name), "socket": .string(app.socket)]).compactText + "\n",
                      to: .standardOutput)
            } else {
                let name = nameWidth == 0 ? "" : padded(app.name, nameWidth) + "  "
                show(padded(String(app.pid), pidWidth) + "  " + name + app.socket + "\n", to: .standardOutput)
            }
        }
        return 0
    }

    /// The directory of the default sockets, as named in a message.
    static func directoryName() -> String {
        (try? AttachDiscovery.directory().get()) ?? "CACHESH_SOCKET_DIR"
    }

    /// No app named: the one app of this user listening on its default socket.
    static func onlyApp() -> String {
        switch AttachDiscovery.listening() {
        case .failure(let error):
            failAttach("no app named, and \(error.message); name the app's PATH or HOST:PORT")
        case .success(let apps):
            if apps.count == 1 { return apps[0].socket }
            if apps.isEmpty {
                failAttach("no app to attach to: none of yours listens in \(directoryName()) (an app listens once it calls CacheInspector.start); or name its PATH or HOST:PORT (cachesh attach --help)")
            }
            failAttach("\(apps.count) apps listen in \(directoryName()); name one: cachesh attach PID, of \(apps.map(\.label).joined(separator: ", "))")
        }
    }

    /// `record FILE`, `record stop`: the app records and streams its lines here; the shell writes
    /// the transcript (SPEC §9). - Returns: whether it succeeded.
    static func record(_ words: [String], _ client: inout Client) -> Bool {
        if words.count == 2 && words[1] == "stop" { return client.stopRecording() }
        if words.contains("--from-start") {
            client.showError("record --from-start: an attachment has no history of the app from before it attached; record FILE records from here on")
            return false
        }
        guard words.count == 2, !words[1].hasPrefix("-") else {
            client.showError("record: expected record FILE or record stop")
            return false
        }
        return client.startRecording(name: words[1])
    }

    /// The line editor of an interactive attachment: the shell's (history in the same file,
    /// `CACHESH_HISTORY` or `~/.cachesh_history`; the user's `~/.editrc`), with the prompt
    /// `attach> `, Tab completing from the app (`readEdited`) and no argument hints (a hint is
    /// drawn at each key: a round trip to the app each). Nil when libedit cannot be set up.
    static func lineEditor() -> LineEditor? {
        Interactive.useUTF8Locale()
        let environment = ProcessEnvironment()
        guard let editor = LineEditor(historyPath: Interactive.historyPath(environment), hints: false, completesFiles: false,
                                      ansi: environment["TERM"] != "dumb", prompt: "attach> ") else { return nil }
        if let problem = editor.historyProblem { write("cachesh: \(problem)\n", to: .standardError) }
        return editor
    }

    /// Standard input on a terminal, edited (libedit): a command a line, with history, while the
    /// changes streamed meanwhile are printed above the line being typed, which is drawn again
    /// below them. Ctrl-C drops the line typed; on an empty line it ends the attachment as the
    /// signal does (a recording is written); Ctrl-D on an empty line ends the input.
    /// - Returns: false when the app ended the attachment.
    static func readEdited(_ editor: LineEditor, socket: Int32, stopped: () -> Bool, pump: @escaping () -> Bool,
                           complete: @escaping (String, OpaquePointer) -> CompletionResult?, run: (String) -> Void) -> Bool {
        var open = true
        LineEditor.completeRemotely(complete)
        defer { LineEditor.completeRemotely(nil) }
        // The connection, and the pipe a signal writes to (SIGINT or SIGTERM while a recording
        // is under way: the edit ends, and the recording is written).
        TerminalInput.watch([socket, AttachSignals.pipe.read]) { fd in
            guard fd == socket else { return false }
            open = pump()
            return open
        }
        AttachSignals.keepTerminal()
        defer { AttachSignals.forgetTerminal() }
        defer { TerminalInput.stopWatching() }
        var joiner = CommandJoiner()
        while !stopped() && !AttachSignals.interrupted {
            switch editor.readLine(pending: joiner.pending) {
            case .endOfInput:
                writeOut("\n")
                // A value still open is sent as it is, as at the end of a script (the app refuses it).
                if open, let rest = joiner.finish() { run(rest) }
                return open
            case .interrupted:
                _ = interruptSignalled.exchange(false, ordering: .relaxed)
                // A first line is dropped from the screen; on a continuation the lines already
                // accepted stay, and the interrupted one says ^C.
                writeOut(joiner.pending.isEmpty ? "\r\u{1b}[K" : "^C\n")
                joiner = CommandJoiner()
                if editor.interruptedOnEmptyLine { AttachSignals.interruptFromKeyboard() }
            case .notUTF8(let byte):
                writeOut("\n")
                joiner = CommandJoiner()
                write(Interactive.notUTF8Error(byte) + "\n", to: .standardError)
            case .line(let line):
                writeOut("\n")
                guard let command = joiner.add(Substring(line)) else { continue }
                editor.remember(command)
                run(command)
            }
        }
        return open
    }

    /// Standard input, a command a line, while the changes streamed meanwhile are printed as they
    /// come (not only when the next command is typed).
    static func readInput(socket: Int32, prompting: Bool, stopped: () -> Bool, pump: () -> Void, run: (String) -> Void) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var joiner = CommandJoiner()
        if prompting { write("attach> ", to: .standardOutput) }
        while !stopped() {
            guard let ready = AttachSignals.wait(for: [0, socket]) else { return }
            if ready == socket {
                pump()
                continue
            }
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                if !pending.isEmpty, let command = joiner.add(Substring(decoding: pending, as: UTF8.self)) { run(command) }
                if let rest = joiner.finish(), !stopped() { run(rest) }
                return
            }
            // The bytes kept from before hold no line feed: only the new ones are searched, and
            // the lines are taken from `start` on, the rest kept once (a search of everything
            // kept, or the rest moved down after each line, made a long line or many short
            // ones quadratic).
            var searched = pending.count
            pending += chunk[..<count]
            var start = 0
            while let newline = pending[searched...].firstIndex(of: UInt8(ascii: "\n")), !stopped() && !AttachSignals.interrupted {
                let command = joiner.add(Substring(decoding: pending[start..<newline], as: UTF8.self))
                start = newline + 1
                searched = start
                // Checked before the command is sent (the app reads 1 MiB a line at most).
                if (command?.utf8.count ?? joiner.held) > Attach.maxLineBytes {
                    failAttach("a command of standard input longer than 65 MiB")
                }
                if let command { run(command) }
                if prompting && !stopped() { write(joiner.pending.isEmpty ? "attach> " : "...> ", to: .standardOutput) }
            }
            pending.removeSubrange(..<start)
            if pending.count > Attach.maxLineBytes { failAttach("a line of standard input longer than 65 MiB") }
        }
    }

    // MARK: Connecting

    static func isUnixPath(_ target: String) -> Bool {
        target.contains("/") || !target.contains(":")
    }

    static func connect(to target: String) -> Int32 {
        if isUnixPath(target) { return connectUnix(target) }
        let colon = target.lastIndex(of: ":")!
        var host = String(target[..<colon])
        guard let port = UInt16(target[target.index(after: colon)...]), port > 0 else {
            failAttach("\(target): expected PATH (a socket) or HOST:PORT with a port from 1 to 65535")
        }
        if host == "localhost" { host = "127.0.0.1" }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            failAttach("\(target): HOST is an IPv4 address (the app listens on 127.0.0.1)")
        }
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { failAttach("cannot make a socket: \(String(cString: strerror(errno)))") }
        noSignalOnWrite(fd)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { failAttach("\(target): cannot connect: \(String(cString: strerror(errno))) (is the app running, with CacheInspector started?)") }
        return fd
    }

    /// Darwin: a write to a socket the app closed fails instead of raising SIGPIPE (Linux's
    /// `send` is given `MSG_NOSIGNAL`, `Client.send(line:)`).
    static func noSignalOnWrite(_ fd: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    static func connectUnix(_ path: String) -> Int32 {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            failAttach("\(path): no such socket (is the app running, with CacheInspector started?)")
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { failAttach("\(path): not a socket") }
        guard path.utf8.count <= 103 else { failAttach("\(path): a socket path is at most 103 bytes") }
        let fd = socket(AF_UNIX, streamSocket, 0)
        guard fd >= 0 else { failAttach("cannot make a socket: \(String(cString: strerror(errno)))") }
        noSignalOnWrite(fd)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            failAttach("\(path): cannot connect: \(String(cString: strerror(errno))) (the app that listened there has ended?)")
        }
        return fd
    }

    static func token(_ options: Options) -> String? {
        if let file = options.tokenFile {
            do {
                return try FileIO.read(file, limit: 4096).trimmingCharactersOfLine()
            } catch {
                failAttach("cannot read the token file \(file): \(error.description)")
            }
        }
        guard let raw = getenv("CACHESH_TOKEN") else { return nil }
        return String(cString: raw).trimmingCharactersOfLine()
    }

    // MARK: Output

    static func write(_ text: String, to descriptor: FileDescriptor) {
        _ = try? descriptor.writeAll(text.utf8)
    }

    /// Untrusted text from the app, with its control and bidirectional characters escaped.
    static func show(_ text: String, to descriptor: FileDescriptor) {
        write(VisibleText.of(text), to: descriptor)
    }
}

#if canImport(Glibc)
let systemConnect = Glibc.connect
let streamSocket = Int32(SOCK_STREAM.rawValue)
#else
let systemConnect = Darwin.connect
let streamSocket = SOCK_STREAM
#endif

func failAttach(_ message: String) -> Never {
    AttachSignals.restoreTerminal()
    // From inside a line's edit (a Tab's answer, a change streamed): the line goes, and the
    // message takes its place (not after its text).
    if let editor = OpaquePointer(bitPattern: lineBeingEdited.load(ordering: .relaxed)) { TerminalInput.takeLineOff(editor) }
    _ = try? FileDescriptor.standardError.writeAll(VisibleText.of("cachesh: attach: \(message)\n").utf8)
    exit(2)
}

extension String {
    func trimmingBlanks() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" { s.removeLast() }
        return String(s)
    }

    func trimmingCharactersOfLine() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

/// Joins the lines of a script or of standard input into commands, each sent on one line, as a
/// cachesh script's are read (SPEC §3): by the shell lexer's rule (`CommandScanner`), a line
/// that ends inside an open JSON value where a command takes one goes on with the next lines;
/// a bracket elsewhere (`echo step [1 of 3`), a `#` comment or a mismatched bracket ends its
/// line, and the app reports it. The command is kept as it is sent: its lines joined by a space,
/// the blanks starting each continuation left out (a JSON value means the same on one line; an
/// app takes one command a line, SPEC §9). O(1) a byte.
struct CommandJoiner {
    /// The command held so far, as it will be sent.
    private var text = ""
    private var lines = 0
    private var scanner = CommandScanner()

    /// The bytes of the command held so far.
    var held: Int { text.utf8.count }

    /// What the line editor is told is pending (its `...> ` prompt): empty when no command is held.
    var pending: String { lines == 0 ? "" : text + "\n" }

    /// Adds a line (a carriage return ending it left out). - Returns: the command it ends, if any.
    mutating func add(_ line: Substring) -> String? {
        let line = line.hasSuffix("\r") ? line.dropLast() : line
        if lines == 0 {
            text = String(line)
        } else {
            let rest = line.drop(while: { $0 == " " || $0 == "\t" })
            if !rest.isEmpty { text += " " + rest }
        }
        lines += 1
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBufferPointer { scanner.scan($0) }
        return scanner.insideJSON ? nil : take()
    }

    /// The command left unfinished at the end of the input, if any (sent as it is: the app
    /// reports its open value).
    mutating func finish() -> String? {
        guard lines > 0 else { return nil }
        scanner = CommandScanner()
        return take()
    }

    private mutating func take() -> String {
        defer {
            text = ""
            lines = 0
        }
        return text
    }
}
