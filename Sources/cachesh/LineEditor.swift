import CLibedit
import CacheShell
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The line editor of the interactive shell, on libedit's native API (<histedit.h>): prompts,
// history, Tab completion and argument hints. libedit calls the functions below synchronously
// from inside `el_gets` on the thread that reads lines; what they need from the session lives
// in `completionIndex` and `editorState`, which the reading loop updates between lines.

/// What the cache looks like to completion: updated after each command.
let completionIndex = CompletionIndex()

/// What libedit's callbacks read and write while a line is edited.
struct EditorState {
    /// The earlier lines of an unfinished command (a JSON value still open), each ending in `\n`.
    var pending = ""
    /// Show argument hints after the text.
    var hintsEnabled = false
    /// Tab completes file names (not under `--safe`, where no command may name a file).
    var completesFiles = true
    /// Enter or Ctrl-C was pressed: draw no hint, the line is about to be accepted.
    var accepting = false
    /// Ctrl-C dropped the line.
    var interrupted = false
    /// The text and cursor of the last Tab that could not complete further (a second one lists).
    var lastTab: String?
    /// Counts calls of `hintText`: two per redraw.
    var hintCalls = 0
    /// The hint text handed to libedit, kept alive until the next call (an address: 0 if none).
    var hintStorage: UInt = 0
    /// The prompt of a command's first line (`cachesh> `; `attach> ` over an attachment).
    var prompt: StaticString = "cachesh> "
    /// Ctrl-C dropped a line that held nothing typed.
    var interruptedEmpty = false
}

let editorState = Mutex(EditorState())

/// Tab over an attachment (SPEC §9): the candidates come from the app (its keys), asked with the
/// text typed up to the cursor; nil when nothing applies. Set by `LineEditor.completeRemotely`.
///
/// Safe without isolation as `sideInput` is: set only on the thread that reads lines, outside
/// `el_gets`, and read only by the Tab callback, which libedit calls synchronously from inside
/// `el_gets` on that same thread; no two accesses can overlap, and the closure never leaves
/// that thread.
nonisolated(unsafe) private var remoteCompletion: ((String, OpaquePointer) -> CompletionResult?)?

/// Set by SIGINT outside line editing, so that Ctrl-C while a command runs does not end the shell.
let interruptSignalled = Atomic<Bool>(false)

/// The editor (its address; 0: none) while `el_gets` edits a line on the screen: a message that
/// ends the shell from inside the edit (`failAttach`: a Tab's answer, a change streamed) takes
/// the line off the screen first, as a change printed above it does, and takes its place.
let lineBeingEdited = Atomic<UInt>(0)

/// How one attempt to read a line ended.
enum LineRead {
    case line(String)
    /// A line holding a byte that is not UTF-8 (the first such byte): it is not run.
    case notUTF8(UInt8)
    /// Ctrl-C: the line (and any unfinished command) is dropped.
    case interrupted
    /// Ctrl-D on an empty line, or the terminal went away.
    case endOfInput
}

/// One libedit editor with its history.
final class LineEditor {
    private let editor: OpaquePointer
    private let history: OpaquePointer
    private let historyPath: String?
    /// Why the history file named is not used, if it is not.
    let historyProblem: String?

    /// - Parameters:
    ///   - historyPath: the history file, or nil to keep history for this session only. It is read
    ///     and written as any file cachesh reads or writes (`FileIO`): one that is not a regular
    ///     file, or is larger than the limit, is neither read nor written (`historyProblem` says why).
    ///   - hints: show argument hints (dim text after the line).
    ///   - completesFiles: Tab completes file names, listing directories.
    ///   - ansi: the terminal moves its cursor on ANSI sequences (not `TERM=dumb`): a change of
    ///     the window's size redraws the line at once (`TerminalInput`).
    ///   - readsEditrc: read the user's `~/.editrc` or `$EDITRC` (not under `--safe`, which reads
    ///     no file the user did not name, and whose key bindings a stranger's setup could change).
    ///   - prompt: the prompt of a command's first line.
    init?(historyPath: String?, hints: Bool, completesFiles: Bool = true, ansi: Bool = true, readsEditrc: Bool = true,
          prompt: StaticString = "cachesh> ") {
        guard let input = fdopen(0, "r"), let output = fdopen(1, "w"), let errors = fdopen(2, "w"),
              let editor = el_init("cachesh", input, output, errors) else { return nil }
        guard let history = history_init() else { return nil }
        self.editor = editor
        self.history = history
        TerminalInput.setUp(editor, ansi: ansi)
        var usable = historyPath
        var problem: String?
        var load: String?
        if let path = historyPath {
            // Not opened unless it is a regular file: libedit's own read of a FIFO would block.
            do {
                if try FileIO.check(path) { load = path }
            } catch {
                problem = "not using the history file \(path): \(error)"
                usable = nil
            }
        }
        self.historyPath = usable
        self.historyProblem = problem
        editorState.withLock {
            $0.hintsEnabled = hints
            $0.completesFiles = completesFiles
            $0.prompt = prompt
        }

        _ = cachesh_history_set_size(history, 1000)
        _ = cachesh_history_set_unique(history, 1)
        if let load { _ = cachesh_history_load(history, load) }

        _ = cachesh_el_set_editor(editor, "emacs")
        // Off: libedit's handlers pass each signal on to the whole process group (kill(0, ...)),
        // ending or stopping the script that ran cachesh; `TerminalInput.watchSignals` instead.
        _ = cachesh_el_set_signal(editor, 0)
        _ = cachesh_el_set_history(editor, history)
        _ = cachesh_el_set_prompt(editor, promptText)
        // The right prompt is also how Tab learns that the line changed since the last Tab.
        _ = cachesh_el_set_rprompt(editor, hintText, 1)
        if hints {
            // Redraw by writing characters, never by inserting or deleting them on the terminal:
            // shifting cells would carry the hint's invisible sequences to the wrong places.
            for capability in ["im", "ic", "IC", "dc", "DC"] { _ = cachesh_el_settc(editor, capability, "") }
        }
        // Home and End as every common terminal sends them, whatever TERM says (a TERM that does
        // not match the terminal otherwise leaves their sequences' last byte, `~`, in the line).
        // Before the user's ~/.editrc, which may bind them otherwise.
        for home in ["\\e[H", "\\eOH", "\\e[1~", "\\e[7~"] { _ = cachesh_el_bind(editor, home, "ed-move-to-beg") }
        for end in ["\\e[F", "\\eOF", "\\e[4~", "\\e[8~"] { _ = cachesh_el_bind(editor, end, "ed-move-to-end") }
        // The user's ~/.editrc (or $EDITRC) first, so that the bindings below stay in force.
        if readsEditrc { _ = el_source(editor, nil) }
        // Ctrl-C reaches the editor as a key (not SIGINT) while a line is edited.
        _ = cachesh_el_setty_edit(editor, "-isig")
        _ = cachesh_el_add_function(editor, "cachesh-complete", "Complete the word before the cursor", completeKey)
        _ = cachesh_el_add_function(editor, "cachesh-accept", "Accept the line, erasing the hint", acceptKey)
        _ = cachesh_el_add_function(editor, "cachesh-interrupt", "Drop the line", interruptKey)
        _ = cachesh_el_add_function(editor, "cachesh-suspend", "Suspend the shell", suspendKey)
        _ = cachesh_el_bind(editor, "^I", "cachesh-complete")
        _ = cachesh_el_bind(editor, "^M", "cachesh-accept")
        _ = cachesh_el_bind(editor, "^J", "cachesh-accept")
        _ = cachesh_el_bind(editor, "^C", "cachesh-interrupt")
        _ = cachesh_el_bind(editor, "^Z", "cachesh-suspend")
    }

    deinit {
        TerminalInput.tearDown()
        el_end(editor)
        history_end(history)
    }

    /// The terminal's width.
    var columns: Int { Int(cachesh_el_columns(editor)) }

    /// Whether the last `.interrupted` came from Ctrl-C on an empty first line (nothing typed).
    var interruptedOnEmptyLine: Bool { editorState.withLock { $0.interruptedEmpty } }

    /// Reads one line with the prompt for `pending` (the earlier lines of an unfinished command).
    func readLine(pending: String) -> LineRead {
        editorState.withLock {
            $0.pending = pending
            $0.accepting = false
            $0.interrupted = false
            $0.interruptedEmpty = false
            $0.lastTab = nil
        }
        var count: Int32 = 0
        TerminalInput.startLine()
        TerminalInput.editAgain(editor)
        // First: a signal that ends the shell puts back the settings of the moment, not silenced.
        let signals = TerminalInput.watchSignals()
        let quiet = TypeAhead.silence()
        let resize = TerminalInput.watchResize(columns: columns)
        lineBeingEdited.store(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(editor))), ordering: .relaxed)
        let line = el_gets(editor, &count)
        lineBeingEdited.store(0, ordering: .relaxed)
        TerminalInput.stopWatchingResize(resize)
        TypeAhead.restore(quiet)
        TerminalInput.stopWatchingSignals(signals)
        let interrupted = editorState.withLock { $0.interrupted }
        if interrupted || (line == nil && count < 0 && interruptSignalled.exchange(false, ordering: .relaxed)) {
            return .interrupted
        }
        guard let line else { return .endOfInput }
        // libedit dropped the bytes that are not UTF-8: what is left is not what was typed.
        if let bad = TerminalInput.takeInvalidByte() { return .notUTF8(bad) }
        // `count` bytes: the buffer need not end there (a line accepted by `acceptKey` is not
        // terminated like one accepted by libedit's own newline).
        let length = min(max(0, Int(count)), strlen(line))
        var text = String(decoding: UnsafeRawBufferPointer(start: line, count: length), as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return .line(text)
    }

    /// Tab asks `complete` for its candidates (with the text typed up to the cursor, and this
    /// editor to print above), instead of the session's own index: an attachment's keys are the
    /// app's. Set before lines are read; `nil` goes back to the session's index.
    static func completeRemotely(_ complete: ((String, OpaquePointer) -> CompletionResult?)?) {
        remoteCompletion = complete
    }

    /// Adds a command to the history and to the history file: the file as it is now, read again
    /// (another shell on the same file, an attachment or a second terminal, may have added to
    /// it since; one cleared or removed holds nothing), with the command after its last entry
    /// (a file libedit cannot read: this shell's history), saved as `snapshot FILE` writes (a
    /// complete copy renamed over it, its mode kept; `FileIO.writeAtomically`). So shells at
    /// once keep each other's commands (the whole history of this one written over the file lost
    /// them), each shell's Up going over its own. The read and the write are made holding
    /// `HistoryLock`, so that two shells pressing Enter at once do not both read the file before
    /// either writes it (the second write lost the first's command). A command that starts with a
    /// space is not kept. A history that cannot be saved is not an error.
    func remember(_ command: String) {
        guard let first = command.first, first != " ", !command.allSatisfy(\.isWhitespace) else { return }
        _ = cachesh_history_enter(history, command)
        guard let historyPath, let merged = history_init() else { return }
        defer { history_end(merged) }
        let lock = HistoryLock(for: historyPath)
        defer { lock?.release() }
        _ = cachesh_history_set_size(merged, 1000)
        _ = cachesh_history_set_unique(merged, 1)
        // Read only as at the start: a regular file within the limit (libedit's own read of a
        // FIFO would block). A file that is not there, or is empty (the user cleared it), holds
        // no command; one that libedit cannot read (not of its format, grown past the limit) gets
        // this shell's whole history, as before.
        var info = stat()
        let loaded: Bool
        if stat(historyPath, &info) != 0 && errno == ENOENT {
            loaded = true
        } else if (try? FileIO.check(historyPath)) == true {
            loaded = info.st_size == 0 || cachesh_history_load(merged, historyPath) >= 0
        } else {
            loaded = false
        }
        let saving = loaded ? merged : history
        if loaded { _ = cachesh_history_enter(merged, command) }
        // A new history file is private (0600), as libedit makes the files it saves.
        try? FileIO.writeAtomically(historyPath, newFileMode: 0o600) { fd throws(FileIO.Failure) in
            let copy = dup(fd)
            guard copy >= 0, let file = fdopen(copy, "w") else {
                if copy >= 0 { close(copy) }
                throw FileIO.Failure(description: "cannot write the history")
            }
            let saved = cachesh_history_save_fp(saving, file)
            guard fclose(file) == 0, saved >= 0 else { throw FileIO.Failure(description: "cannot write the history") }
        }
    }
}

/// `FILE.lock` beside a history file (the file a symbolic link names, as the history is written
/// there), locked (`flock`) while a shell reads the history, adds its command and writes it back
/// (`LineEditor.remember`): shells at once on one file take turns. The holder unlinks it before
/// unlocking, so that no lock file stays behind; a shell that locked a file since unlinked takes
/// the new one. A shell that cannot have it within `maxWait` (another shell stopped while
/// holding it), or at all (a directory it cannot create the file in, a file system without
/// `flock`) goes on without it, as before the lock: a lost command, never a prompt that does
/// not come back. (The interactive shell's Ctrl-C ends the wait sooner; as any Ctrl-C after
/// Enter, it also cuts the command's output.)
struct HistoryLock {
    private let fd: Int32
    private let path: String
    static let maxWait = Duration.seconds(3)

    init?(for historyPath: String) {
        let path = ((try? FileIO.resolve(historyPath).path) ?? historyPath) + ".lock"
        let deadline = ContinuousClock.now.advanced(by: Self.maxWait)
        var pause: useconds_t = 1_000
        while ContinuousClock.now < deadline && !interruptSignalled.load(ordering: .relaxed) {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { return nil }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let held = errno == EWOULDBLOCK || errno == EINTR
                // No lock to be had here (ENOLCK, ENOSYS...). The file is left as it is: another
                // shell, whose `flock` works, may hold it.
                close(fd)
                guard held else { return nil }
                // Another shell writes the history: a few milliseconds.
                usleep(pause)
                pause = min(pause * 2, 50_000)
                continue
            }
            // Still the file of that name? (Its holder unlinks it before letting it go.)
            var held = stat(), named = stat()
            if fstat(fd, &held) == 0, lstat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                self.fd = fd
                self.path = path
                return
            }
            close(fd)
        }
        return nil
    }

    func release() {
        unlink(path)
        close(fd)
    }
}

/// Keys typed while the prompt is being drawn. libedit prints the prompt before it puts the
/// terminal in its raw mode, so a key that arrives in between (typed ahead, pasted, or just fast
/// on a busy machine) is echoed by the terminal and then drawn again by libedit: the line shows it
/// twice, and a copy of the session is no longer its transcript.
enum TypeAhead {
    /// Turns the terminal's own echo and line editing off before `el_gets`, keeping what it was.
    /// libedit restores its cooked mode when the line is read, and takes a mode without `ICANON`
    /// for one of its own, not for the cooked mode to restore.
    /// - Returns: the settings to put back if libedit does not (nil: nothing was changed).
    static func silence() -> termios? {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0, saved.c_lflag & tcflag_t(ICANON) != 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ICANON | ECHO)
        return tcsetattr(0, TCSANOW, &quiet) == 0 ? saved : nil
    }

    /// After `el_gets`: puts the saved settings back if the terminal is still without `ICANON`
    /// (libedit returned before it took the terminal over, so it restored nothing).
    static func restore(_ saved: termios?) {
        // (Not from the background: SIGTTOU would stop the shell.)
        guard var saved, inTerminalForeground() else { return }
        var now = termios()
        if tcgetattr(0, &now) == 0 && now.c_lflag & tcflag_t(ICANON) == 0 { _ = tcsetattr(0, TCSANOW, &saved) }
    }
}

// MARK: - libedit callbacks

/// The prompt of the line being read: `cachesh> ` (or the attachment's), or `...> ` while a JSON
/// value is open.
func currentPrompt() -> StaticString {
    let (continuing, first) = editorState.withLock { (!$0.pending.isEmpty, $0.prompt) }
    return continuing ? "...> " : first
}

/// libedit's prompt function: `currentPrompt()`.
private func promptText(_ editor: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    UnsafeMutableRawPointer(mutating: currentPrompt().utf8Start).assumingMemoryBound(to: CChar.self)
}

/// The typed line: everything, and the part before the cursor.
func lineText(_ editor: OpaquePointer) -> (all: String, beforeCursor: String, afterCursor: String) {
    guard let info = el_line(editor)?.pointee, let buffer = info.buffer else { return ("", "", "") }
    func text(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> String {
        String(decoding: UnsafeRawBufferPointer(start: from, count: max(0, to - from)), as: UTF8.self)
    }
    return (text(buffer, info.lastchar), text(buffer, info.cursor), text(info.cursor, info.lastchar))
}

/// The argument hint, as libedit's right prompt: dim text two columns after the typed text (a gap
/// libedit requires, then a blank cell of ours), or nothing when it would not fit on the line.
///
/// How it stays correct with libedit's redrawing:
/// - Padding it to the edge of the terminal keeps libedit from its fast path for typed
///   characters (which skips the right prompt), so the hint follows every key.
/// - libedit redraws only the cells that changed, so an escape that starts dim text could be
///   written without the one that ends it. Each hint character is therefore its own
///   invisible-sequence cell, `ESC[2m c ESC[22m`, complete in itself. libedit draws such a cell
///   as the character after the sequence (the `m` that ends it: one column).
/// - libedit tells those cells apart by their order among the invisible sequences, not their
///   text; the blank cell before the hint is itself such a sequence on every other redraw,
///   so no hint cell looks unchanged from one redraw to the next and every change is drawn —
///   provided libedit never shifts cells on the terminal (see `init`).
///   (libedit calls this function twice per redraw, once to measure: hence the pairs of calls.)
private func hintText(_ editor: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    guard let editor else { return nil }
    let line = lineText(editor)
    let (pending, accepting, enabled, calls, prompt) = editorState.withLock { state in
        state.hintCalls &+= 1
        // A redraw of another line than the one the last Tab saw: the next Tab is a first one.
        if state.lastTab != state.pending + line.beforeCursor + "\u{0}" + line.afterCursor { state.lastTab = nil }
        return (state.pending, state.accepting, state.hintsEnabled, state.hintCalls, state.prompt)
    }
    var text = ""
    if enabled && !accepting {
        let columns = Int(cachesh_el_columns(editor))
        let promptWidth = pending.isEmpty ? prompt.utf8CodeUnitCount : 5
        let end = promptWidth + DisplayWidth.of(line.all, startingAt: promptWidth)
        // libedit's gap, our blank cell, the hint and padding, the last column left free.
        let room = columns - end - 3
        if room > 0 {
            let hint = Completer.hint(for: pending + line.all, in: completionIndex.snapshot) ?? ""
            let shown = DisplayWidth.prefix(hint, fitting: room)
            text = (calls / 2 % 2 == 0 ? "\u{1}\u{1} " : " ")
            for scalar in shown.unicodeScalars {
                if scalar.isASCII && scalar.value >= 0x20 && scalar.value < 0x7f {
                    text += "\u{1}\u{1b}[2m\(scalar)\u{1b}[22\u{1}m"
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
            text += String(repeating: " ", count: room - DisplayWidth.of(shown, startingAt: 0))
        }
    }
    return editorState.withLock { state in
        if state.hintStorage != 0 { free(UnsafeMutableRawPointer(bitPattern: state.hintStorage)) }
        state.hintStorage = UInt(bitPattern: strdup(text))
        return UnsafeMutablePointer(bitPattern: state.hintStorage)
    }
}

/// Tab: completes the word before the cursor; a second Tab that cannot complete further lists
/// the candidates.
private func completeKey(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
    guard let editor else { return UInt8(CC_ERROR) }
    let line = lineText(editor)
    let (pending, completesFiles) = editorState.withLock { ($0.pending, $0.completesFiles) }
    let found = if let remote = remoteCompletion {
        remote(pending + line.beforeCursor, editor)
    } else {
        Completer.complete(pending + line.beforeCursor, in: completionIndex.snapshot,
                           listDirectory: completesFiles ? listDirectory : { _ in [] })
    }
    guard let result = found else { return UInt8(CC_REFRESH_BEEP) }
    if result.total == 1, let only = result.candidates.first {
        insert(String(only.dropFirst(result.replaced.count)) + CompletionResult.terminator(after: only), editor)
        return UInt8(CC_REFRESH)
    }
    if result.commonPrefix.count > result.replaced.count && result.commonPrefix.hasPrefix(result.replaced) {
        insert(String(result.commonPrefix.dropFirst(result.replaced.count)), editor)
        return UInt8(CC_REFRESH)
    }
    let here = pending + line.beforeCursor + "\u{0}" + line.afterCursor
    let second = editorState.withLock { state in
        defer { state.lastTab = here }
        return state.lastTab == here
    }
    guard second else { return UInt8(CC_REFRESH_BEEP) }
    writeOut("\n" + CandidateList.render(result, columns: Int(cachesh_el_columns(editor))))
    return UInt8(CC_REDISPLAY)
}

private func insert(_ text: String, _ editor: OpaquePointer) {
    guard !text.isEmpty else { return }
    _ = el_insertstr(editor, text)
}

/// Enter: first redraws the line without its hint (so a copied session stays a transcript),
/// then accepts it.
private func acceptKey(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
    guard let editor else { return UInt8(CC_ERROR) }
    let secondPass = editorState.withLock { state in
        defer { state.accepting = true }
        return state.accepting
    }
    if secondPass { return UInt8(CC_NEWLINE) }
    moveToEnd(editor)
    el_push(editor, "\r")
    return UInt8(CC_REFRESH)
}

/// Ctrl-C: empties the line, then ends the read as interrupted.
private func interruptKey(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
    guard let editor else { return UInt8(CC_ERROR) }
    editorState.withLock {
        $0.interrupted = true
        $0.accepting = true
    }
    moveToEnd(editor)
    let typed = lineText(editor).all.unicodeScalars.count
    if typed == 0 { editorState.withLock { $0.interruptedEmpty = $0.pending.isEmpty } }
    if typed > 0 { el_deletestr(editor, Int32(typed)) }
    el_push(editor, "\r")
    return UInt8(CC_REFRESH)
}

/// Ctrl-Z: suspends the shell with the terminal as it was before editing, and takes it back for
/// editing once continued. SIGTSTP goes to the whole foreground job, as the terminal's own
/// suspend key sends it (a script that ran cachesh stops with it, and its shell gets the
/// terminal back). Where SIGTSTP is `TerminalInput`'s, its handler gives the terminal back
/// and the read takes it back and draws the line again; else (SIGTSTP left to someone else)
/// that is done here.
private func suspendKey(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
    if TerminalInput.handlesSuspend {
        kill(0, SIGTSTP)
        return UInt8(CC_NORM)
    }
    if let editor { _ = cachesh_el_prepare_terminal(editor, 0) }
    kill(0, SIGTSTP)
    if let editor { _ = cachesh_el_prepare_terminal(editor, 1) }
    return UInt8(CC_REDISPLAY)
}

private func moveToEnd(_ editor: OpaquePointer) {
    let after = lineText(editor).afterCursor.unicodeScalars.count
    if after > 0 { _ = el_cursor(editor, Int32(after)) }
}

/// Writes straight to standard output (libedit has flushed its own output by now).
func writeOut(_ text: String) {
    _ = try? FileDescriptor.standardOutput.writeAll(text.utf8)
}

/// The names in a directory (`""`: the working one), directories with a `/` after them.
/// - Complexity: O(entries), at most 10,000 read.
func listDirectory(_ path: String) -> [String] {
    let directory = path.isEmpty ? "." : path
    guard let handle = opendir(directory) else { return [] }
    defer { closedir(handle) }
    var names: [String] = []
    while names.count < 10_000, let entry = readdir(handle) {
        var entry = entry.pointee
        let name = withUnsafeBytes(of: &entry.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        var isDirectory = entry.d_type == UInt8(DT_DIR)
        if entry.d_type == UInt8(DT_UNKNOWN) || entry.d_type == UInt8(DT_LNK) {
            var info = stat()
            isDirectory = stat(directory + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        }
        names.append(isDirectory ? name + "/" : name)
    }
    return names
}

// MARK: - Layout

/// How many terminal columns text takes, as libedit draws it.
enum DisplayWidth {
    /// The columns `text` takes when it starts at column `start` (tabs go to the next multiple of 8).
    static func of(_ text: String, startingAt start: Int) -> Int {
        var column = start
        for scalar in text.unicodeScalars { column += width(scalar, at: column) }
        return column - start
    }

    /// The longest start of `text` that fits in `columns`.
    static func prefix(_ text: String, fitting columns: Int) -> String {
        var used = 0
        var result = ""
        for scalar in text.unicodeScalars {
            let w = width(scalar, at: used)
            if used + w > columns { break }
            used += w
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    private static func width(_ scalar: Unicode.Scalar, at column: Int) -> Int {
        if scalar == "\t" { return 8 - column % 8 }
        if scalar.value < 0x20 || scalar.value == 0x7f { return 2 }
        if scalar.isASCII { return 1 }
        return max(0, Int(cachesh_wcwidth(scalar.value)))
    }
}

/// Completion candidates laid out in columns, sorted down each column (as `ls` does).
enum CandidateList {
    static func render(_ result: CompletionResult, columns: Int) -> String {
        let names = result.candidates
        let widest = names.map { DisplayWidth.of($0, startingAt: 0) }.max() ?? 0
        let cell = widest + 2
        let perRow = max(1, (columns - 1) / cell)
        let rows = (names.count + perRow - 1) / perRow
        var out = ""
        for row in 0..<rows {
            var line = ""
            for column in 0..<perRow {
                let i = column * rows + row
                guard i < names.count else { break }
                let name = names[i]
                line += name
                if (column + 1) * rows + row < names.count {
                    line += String(repeating: " ", count: cell - DisplayWidth.of(name, startingAt: 0))
                }
            }
            out += line + "\n"
        }
        if result.total > names.count {
            out += "(\(result.total - names.count) more)\n"
        }
        return out
    }
}
