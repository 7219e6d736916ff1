import CacheCore
import CacheShell
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The interactive shell (SPEC §6): reads commands with libedit and runs each in the session.
///
/// Environment: `CACHESH_HISTORY` names the history file (default `~/.cachesh_history`;
/// `/dev/null` or empty: no file); `CACHESH_HINTS=0` turns argument hints off (they are off
/// anyway without colour: `NO_COLOR`, `TERM=dumb`). Under `--safe` the shell touches no file
/// either: no history file is read or written, Tab does not complete file names, no `~/.editrc` or
/// `$EDITRC` is read, and help is printed whole, never through a pager (`$PAGER` runs through
/// `/bin/sh`, and `less` itself runs commands: `!cmd`, `v`, `:e FILE`).
enum Interactive {
    static func run(session: Session, on cache: isolated Cache, terminal: Terminal, environment: ProcessEnvironment,
                    pager: Bool = true) -> Int32 {
        useUTF8Locale()
        installInterruptHandler()
        session.sink = nil
        terminal.interrupted = { interruptSignalled.load(ordering: .relaxed) }
        let hints = session.options.colour && !["0", "off", "no", "false"].contains(environment["CACHESH_HINTS"] ?? "")
        let safe = session.options.safe
        let ansi = environment["TERM"] != "dumb"
        guard let editor = LineEditor(historyPath: safe ? nil : historyPath(environment), hints: hints,
                                      completesFiles: !safe, ansi: ansi, readsEditrc: !safe) else {
            terminal.write("cachesh: cannot set up line editing\n", isError: true)
            return 2
        }
        if let problem = editor.historyProblem {
            terminal.write("cachesh: \(problem)\n", isError: true)
            terminal.flush()
        }
        writeOut(banner + "\n")
        completionIndex.update(from: cache)
        var lines: [String] = []
        while true {
            let pending = lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
            switch editor.readLine(pending: pending) {
            case .endOfInput:
                writeOut("\n")
                return 0
            case .interrupted:
                // A first line is dropped from the screen; on a continuation the lines already
                // accepted stay, and the interrupted one says ^C.
                writeOut(ansi && lines.isEmpty ? erase(lines, columns: editor.columns) : "^C\n")
                lines.removeAll()
                _ = interruptSignalled.exchange(false, ordering: .relaxed)
            case .notUTF8(let byte):
                // As batch input refuses such a byte, but the session goes on: one error line,
                // and the command this line belongs to (its earlier lines too) is not run.
                writeOut("\n")
                lines.removeAll()
                terminal.write(Self.notUTF8Error(byte) + "\n", isError: false)
                terminal.flush()
            case .line(let line):
                writeOut("\n")
                lines.append(line)
                let text = lines.joined(separator: "\n")
                if Lexer.needsContinuation(text) { continue }
                lines.removeAll()
                editor.remember(historyEntry(text))
                guard !text.allSatisfy(\.isWhitespace) else { continue }
                // No flag is cleared here: a Ctrl-C typed after Enter (the terminal is back in
                // its cooked mode once el_gets returns) is meant for this command. A stale one,
                // typed before the editor took the terminal, was dropped as keys were read
                // (`TerminalInput.readCharacter`).
                // The window may have been resized since the last command.
                session.terminalWidth = Terminal.columns()
                let output = session.runTyped(text, on: cache)
                if !(pager && !safe && isHelp(text) && Pager.show(output, environment: environment)) {
                    terminal.write(output, isError: false)
                }
                terminal.flush()
                _ = interruptSignalled.exchange(false, ordering: .relaxed)
                session.withCurrentClient(cache) { completionIndex.update(from: $0) }
                if session.quitRequested { return 0 }
            }
        }
    }

    /// The error line for a typed line holding `byte`, which is not UTF-8.
    static func notUTF8Error(_ byte: UInt8) -> String {
        "error: not UTF-8 text (byte \(FileIO.hexByte(byte))): cachesh reads UTF-8; the command was not run"
    }

    /// Whether a typed line asks for help (`help ...`, `? ...`): the one output that is paged.
    static func isHelp(_ text: String) -> Bool {
        let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first
        return first == "help" || first == "?"
    }

    /// The line an interactive start prints first: the version and how to go on.
    static let banner = "\(Cachesh.configuration.version): type help for the commands, quit to leave"

    /// A command of several lines is one history entry: its lines joined by spaces (a JSON
    /// value means the same on one line).
    static func historyEntry(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 1 else { return text }
        return ([lines[0]] + lines.dropFirst().map { $0.drop(while: \.isWhitespace) })
            .filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The escape sequence that removes the prompt line just emptied by Ctrl-C and the earlier
    /// lines of the dropped command, leaving the cursor where the next prompt goes.
    static func erase(_ lines: [String], columns: Int) -> String {
        var rows = 0
        for (i, line) in lines.enumerated() {
            let width = (i == 0 ? 9 : 5) + DisplayWidth.of(line, startingAt: i == 0 ? 9 : 5)
            rows += max(1, (width + columns - 1) / max(1, columns))
        }
        return rows == 0 ? "\r\u{1b}[K" : "\r\u{1b}[\(rows)A\u{1b}[J"
    }

    /// `CACHESH_HISTORY`, else `~/.cachesh_history`; nil (no file) for `/dev/null` or empty.
    static func historyPath(_ environment: ProcessEnvironment) -> String? {
        if let path = environment["CACHESH_HISTORY"] {
            return path.isEmpty || path == "/dev/null" ? nil : path
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.cachesh_history"
    }

    /// libedit reads multibyte input through the C library: without a UTF-8 character type it
    /// drops `é`. The user's locale when it is UTF-8, else C.UTF-8.
    static func useUTF8Locale() {
        setlocale(LC_CTYPE, "")
        if let codeset = nl_langinfo(nl_item(CODESET)), String(cString: codeset) == "UTF-8" { return }
        setlocale(LC_CTYPE, "C.UTF-8")
    }

    /// Ctrl-C while a command runs only sets a flag: it must not end the shell. (While a line is
    /// edited, Ctrl-C is a key; a SIGINT from another process then also wakes the read, which
    /// takes it as Ctrl-C.)
    static func installInterruptHandler() {
        TerminalInput.prepareForSignals()
        setAction(SIGINT) { _ in
            interruptSignalled.store(true, ordering: .relaxed)
            wakeTheRead()
        }
    }
}
