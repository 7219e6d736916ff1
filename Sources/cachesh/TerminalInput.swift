import CLibedit
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// How the line editor reads the terminal: libedit's read-character function (`EL_GETCFN`),
// replaced so that a change of the window's size redraws the line at once.
//
// libedit on its own (with `EL_SIGNAL`) only takes the new size when SIGWINCH arrives and draws
// nothing until the next key; that draw starts from where the cursor was at the old width. A line
// that wrapped is then left on the screen cut at the new width, with its rows out of place.
// Here a SIGWINCH handler writes a byte to a pipe (nothing else: write(2) is async-signal-safe),
// the read waits with poll(2) on the terminal and on that pipe, and on a resize the line is
// erased from its first row and drawn again before reading goes on.

/// The end of the wake-up pipe that the SIGWINCH handler writes to (-1: none).
///
/// Read in the signal handler: an atomic load of a global that is initialised (by
/// `TerminalInput.setUp`) before the handler is installed, so the handler runs no initialiser.
private let resizeWakeWriter = Atomic<Int32>(-1)

/// SIGWINCH: one byte to the pipe.
private func resizeHandler(_ signal: Int32) { wakeTheRead() }

/// One byte to the wake-up pipe, from a signal's handler (on whichever thread the signal came to):
/// only async-signal-safe work, an atomic load and write(2), errno kept as it was.
func wakeTheRead() {
    let fd = resizeWakeWriter.load(ordering: .relaxed)
    guard fd >= 0 else { return }
    let saved = errno
    var byte: UInt8 = 1
    _ = write(fd, &byte, 1)
    errno = saved
}

// MARK: - Signals while a line is edited
//
// libedit's own signal handling (`EL_SIGNAL`) is off: its handler put the terminal back, then
// passed the signal on with kill(0, signal), to the whole process group, so a script that ran
// cachesh was ended (or stopped) with it. Instead, while `el_gets` edits a line
// (`TerminalInput.watchSignals`):
//
// - SIGTERM, SIGHUP, SIGQUIT and SIGINT, where nothing else takes them (their action is the
//   default), put the terminal back as it was before the edit, end the line on the screen, and
//   end this process alone, by the same signal. (The interactive shell's SIGINT sets a flag, which
//   the read takes as Ctrl-C; an attachment's SIGINT and SIGTERM are `AttachSignals`'.)
// - SIGTSTP (from another process, or from Ctrl-Z, a key while a line is edited: `suspendKey`
//   sends it to the foreground job, as the terminal's own suspend key does) puts the terminal back
//   and stops this process.
// - SIGCONT (after SIGTSTP or SIGSTOP) has the read take the terminal back for editing and draw
//   the line again.
//
// The terminal is touched only while this process is in its foreground: a stopped or background
// shell that did (tcsetattr) would be stopped again by SIGTTOU, and a SIGTERM sent to a stopped
// job (`kill %1`) would not end it. The handlers do only async-signal-safe work: atomic loads
// and stores, tcgetpgrp(3), getpgrp(2), tcsetattr(3), write(2), sigaction(2), pthread_sigmask(3)
// and raise(3), errno kept as it was. The globals they read are initialised (`prepareForSignals`)
// before any of them is installed, so no handler runs an initialiser.

/// The terminal's settings before the edit: the address of a `termios` allocated once (0: none
/// yet). Written (`watchSignals`) only while no handler that reads it is installed.
private let settingsBeforeEdit = Atomic<UInt>(0)

/// Set by SIGCONT while a line is edited: the read takes the terminal back and redraws the line.
private let continuedWhileEditing = Atomic<Bool>(false)

/// The signals that end the shell, handled while a line is edited when their action is the default.
private let endingSignals = [SIGTERM, SIGHUP, SIGQUIT, SIGINT]

/// Whether SIGTSTP is `suspendWhileEditing` in the line being edited (false once the edit ends,
/// so that a handler still running then does not put itself back).
private let suspendHandled = Atomic<Bool>(false)

/// Whether this process is in the terminal's foreground (may change its settings and read it):
/// true too when standard input is not a terminal (nothing to keep from another process group).
func inTerminalForeground() -> Bool {
    let foreground = tcgetpgrp(0)
    return foreground < 0 || foreground == getpgrp()
}

/// Puts the terminal's settings from before the edit back, in the foreground only.
/// - Returns: whether it did.
private func restoreSettingsBeforeEdit() -> Bool {
    let address = settingsBeforeEdit.load(ordering: .relaxed)
    guard let settings = UnsafePointer<termios>(bitPattern: address), inTerminalForeground() else { return false }
    return tcsetattr(0, TCSANOW, settings) == 0
}

/// Sets `signal`'s action: `handler` (nil: the default) with `flags`, no other signal blocked
/// while it runs. Async-signal-safe (sigaction(2)).
/// - Returns: the action it replaced.
@discardableResult
func setAction(_ signal: Int32, _ handler: (@convention(c) (Int32) -> Void)?, flags: Int32 = 0) -> sigaction {
    var action = sigaction()
    #if canImport(Glibc)
    action.__sigaction_handler.sa_handler = handler
    #else
    action.__sigaction_u.__sa_handler = handler
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = flags
    var previous = sigaction()
    sigaction(signal, &action, &previous)
    return previous
}

/// SIGTERM, SIGHUP, SIGQUIT or SIGINT while a line is edited: the terminal as before the edit,
/// the line ended (what comes next, the calling shell's prompt, starts on a line of its own), and
/// the signal raised again with its default action, which ends the process once this returns
/// (the signal is blocked until then).
private func endWhileEditing(_ signal: Int32) {
    if restoreSettingsBeforeEdit() {
        var newline = UInt8(ascii: "\n")
        _ = write(1, &newline, 1)
    }
    setAction(signal, nil)
    _ = raise(signal)
}

/// SIGTSTP while a line is edited: the terminal as before the edit, then this process stopped
/// (the default action, the signal unblocked here). Once continued, SIGCONT's handler has the
/// read take the terminal back and draw the line again; where the system did not stop it (a
/// process group with no job-control shell above it: no SIGCONT came), the editor's settings
/// are put back here and nothing is drawn (nothing was written over the line).
private func suspendWhileEditing(_ signal: Int32) {
    let saved = errno
    var editing = termios()
    let hadEditing = tcgetattr(0, &editing) == 0
    continuedWhileEditing.store(false, ordering: .relaxed)
    _ = restoreSettingsBeforeEdit()
    setAction(SIGTSTP, nil)
    _ = raise(SIGTSTP)
    var stop = sigset_t()
    sigemptyset(&stop)
    sigaddset(&stop, SIGTSTP)
    _ = pthread_sigmask(SIG_UNBLOCK, &stop, nil)
    if suspendHandled.load(ordering: .relaxed) { setAction(SIGTSTP, suspendWhileEditing, flags: Int32(SA_RESTART)) }
    if !continuedWhileEditing.load(ordering: .relaxed) && hadEditing && inTerminalForeground() {
        _ = tcsetattr(0, TCSANOW, &editing)
    }
    errno = saved
}

/// SIGCONT while a line is edited: a byte to the wake-up pipe, so that the read takes the
/// terminal back and draws the line again. (Installed without `SA_RESTART`: a read of the
/// terminal it interrupts must return, not wait on.)
private func continueWhileEditing(_ signal: Int32) {
    continuedWhileEditing.store(true, ordering: .relaxed)
    wakeTheRead()
}

/// What the read function keeps between calls; used only on the thread that reads lines.
private struct InputState {
    /// The end of the wake-up pipe that poll(2) watches (-1: none).
    var wakeReader: Int32 = -1
    /// Bytes read from the terminal while waiting for its answer to a cursor report, not yet
    /// handed to libedit (keys typed meanwhile).
    var pending: [UInt8] = []
    var pendingStart = 0
    /// The width the line on the screen was laid out for.
    var drawnColumns = 0
    /// The terminal understands ANSI cursor movement (not `TERM=dumb`).
    var ansi = true
    /// The first byte of the line being read that starts no UTF-8 character (nil: none so far);
    /// libedit drops such bytes, so the line it returns no longer shows them.
    var invalidByte: UInt8?
    /// No key has been waited for yet in this line (`startLine`).
    var firstWait = true
    /// This line's SIGTSTP is `suspendWhileEditing` (`watchSignals`).
    var handlesSuspend = false
    /// Editing is off since a read ended in the background (`leaveTerminalAlone`).
    var editingOff = false
}

private let inputState = Mutex(InputState())

/// Other inputs watched while a line is edited (an attachment's connection and its signal pipe,
/// SPEC §9): when one can be read, the line is taken off the screen, `handle` runs with it (it
/// prints what came, whole lines) and the line is drawn again below, as typed; `handle` returns
/// false to end the edit as at the end of input (that input ended, or a signal asks to stop).
///
/// Safe without isolation: it is set and cleared (`TerminalInput.watch`) only on the thread that
/// reads lines, outside `el_gets`, and read only by libedit's read function, which libedit calls
/// synchronously from inside `el_gets` on that same thread; no two accesses can overlap, and
/// the closure never leaves that thread.
nonisolated(unsafe) private var sideInput: (fds: [Int32], handle: (Int32) -> Bool)?

/// libedit's read-character function (`EL_GETCFN`): 1 and the character, 0 at the end of input,
/// -1 on an error.
private func readCharacterForLibedit(_ editor: OpaquePointer?, _ character: UnsafeMutablePointer<wchar_t>?) -> Int32 {
    guard let editor, let character else { return -1 }
    return TerminalInput.readCharacter(editor, into: character)
}

enum TerminalInput {
    /// Makes the wake-up pipe and has libedit read through `readCharacter`.
    static func setUp(_ editor: OpaquePointer, ansi: Bool) {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        inputState.withLock {
            $0.wakeReader = ends[0]
            $0.ansi = ansi
        }
        resizeWakeWriter.store(ends[1], ordering: .relaxed)
        _ = cachesh_el_set_read_function(editor, readCharacterForLibedit)
    }

    static func tearDown() {
        let writer = resizeWakeWriter.exchange(-1, ordering: .relaxed)
        let reader = inputState.withLock { state in
            defer { state.wakeReader = -1 }
            return state.wakeReader
        }
        if writer >= 0 { close(writer) }
        if reader >= 0 { close(reader) }
    }

    /// Around each `el_gets`: SIGWINCH wakes the read while a line is edited, and is ignored
    /// again while a command runs (the next edit starts at the size of the moment).
    /// - Returns: the action to put back with `stopWatchingResize`.
    static func watchResize(columns: Int) -> sigaction {
        inputState.withLock { state in
            state.drawnColumns = columns
            drain(state.wakeReader)
        }
        // A SIGCONT before the edit (its byte just drained) needs nothing: el_gets takes the
        // terminal and draws the line itself.
        continuedWhileEditing.store(false, ordering: .relaxed)
        return setAction(SIGWINCH, resizeHandler, flags: Int32(SA_RESTART))
    }

    static func stopWatchingResize(_ previous: sigaction) {
        var previous = previous
        sigaction(SIGWINCH, &previous, nil)
    }

    /// Around each `el_gets`, before the terminal is silenced (`TypeAhead`): the handlers of the
    /// signals that end, stop or continue the shell while a line is edited (see "Signals while a
    /// line is edited"), each only where the signal's action is the default.
    /// - Returns: the signals handled, to give back with `stopWatchingSignals`.
    static func watchSignals() -> [Int32] {
        prepareForSignals()
        var settings = settingsBeforeEdit.load(ordering: .relaxed)
        if settings == 0 {
            settings = UInt(bitPattern: UnsafeMutablePointer<termios>.allocate(capacity: 1))
            settingsBeforeEdit.store(settings, ordering: .relaxed)
        }
        // No handler that reads them is installed now (`stopWatchingSignals` took them off).
        guard let pointer = UnsafeMutablePointer<termios>(bitPattern: settings),
              tcgetattr(0, pointer) == 0 else { return [] }
        var handled: [Int32] = []
        let handlers: [(Int32, @convention(c) (Int32) -> Void, Int32)] =
            endingSignals.map { ($0, endWhileEditing, Int32(SA_RESTART)) }
            + [(SIGTSTP, suspendWhileEditing, Int32(SA_RESTART)), (SIGCONT, continueWhileEditing, 0)]
        suspendHandled.store(isDefault(SIGTSTP), ordering: .relaxed)
        for (signal, handler, flags) in handlers where isDefault(signal) {
            setAction(signal, handler, flags: flags)
            handled.append(signal)
        }
        inputState.withLock { $0.handlesSuspend = handled.contains(SIGTSTP) }
        return handled
    }

    /// After `el_gets`: the default action back for each signal `watchSignals` handled.
    static func stopWatchingSignals(_ handled: [Int32]) {
        suspendHandled.store(false, ordering: .relaxed)
        for signal in handled { setAction(signal, nil) }
        inputState.withLock { $0.handlesSuspend = false }
    }

    /// Whether SIGTSTP is `suspendWhileEditing` in the line being edited: it then gives the
    /// terminal back before the stop, and the read takes it back after (`suspendKey`).
    static var handlesSuspend: Bool { inputState.withLock { $0.handlesSuspend } }

    /// Initialises the globals that signal handlers read (Swift initialises a global on its first
    /// use, which a handler must not be): before any such handler is installed.
    static func prepareForSignals() {
        _ = interruptSignalled.load(ordering: .relaxed)
        _ = resizeWakeWriter.load(ordering: .relaxed)
        _ = settingsBeforeEdit.load(ordering: .relaxed)
        _ = continuedWhileEditing.load(ordering: .relaxed)
        _ = suspendHandled.load(ordering: .relaxed)
    }

    /// Whether `signal`'s action is the default (not ignored, not another handler).
    private static func isDefault(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0, current.sa_flags & Int32(SA_SIGINFO) == 0 else { return false }
        #if canImport(Glibc)
        return current.__sigaction_handler.sa_handler == nil
        #else
        return current.__sigaction_u.__sa_handler == nil
        #endif
    }

    /// Empties the non-blocking wake-up pipe (at most 64 reads of 64 bytes: it never holds more
    /// than a burst of resizes), stopping at the first read that finds it empty.
    private static func drain(_ fd: Int32) {
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 64)
        for _ in 0..<64 {
            guard read(fd, &buffer, buffer.count) > 0 else { return }
        }
    }

    /// Editing off for the read that ends now, in the background: libedit then leaves the
    /// terminal's settings as they are. Put back on by `editAgain` before the next read.
    private static func leaveTerminalAlone(_ editor: OpaquePointer) {
        _ = cachesh_el_set_editmode(editor, 0)
        inputState.withLock { $0.editingOff = true }
    }

    /// Before a read: editing on again if `leaveTerminalAlone` turned it off (libedit still takes
    /// the terminal to be in its editing mode: put back first, in the foreground now). Today no
    /// read follows such an end (the attachment ends); kept so that one would edit as before.
    static func editAgain(_ editor: OpaquePointer) {
        guard inputState.withLock({ state in defer { state.editingOff = false }; return state.editingOff }) else { return }
        _ = cachesh_el_set_editmode(editor, 1)
        _ = cachesh_el_prepare_terminal(editor, 0)
    }

    // MARK: - Reading

    private enum Input {
        case byte(UInt8)
        case end
        case failed(Int32)
    }

    /// The next byte typed: first any kept while waiting for a cursor report, else from the
    /// terminal, redrawing the line whenever the window changed size first.
    private static func nextByte(_ editor: OpaquePointer) -> Input {
        while true {
            let (kept, wakeReader, firstWait) = inputState.withLock { state -> (UInt8?, Int32, Bool) in
                guard state.pendingStart < state.pending.count else {
                    defer { state.firstWait = false }
                    return (nil, state.wakeReader, state.firstWait)
                }
                let byte = state.pending[state.pendingStart]
                state.pendingStart += 1
                if state.pendingStart == state.pending.count {
                    state.pending.removeAll(keepingCapacity: true)
                    state.pendingStart = 0
                }
                return (byte, state.wakeReader, false)
            }
            if let kept { return .byte(kept) }
            // A Ctrl-C that reached us as a signal before the editor took the terminal (typed
            // while a busy machine drew the prompt) was meant for the prompt, which the terminal
            // already flushed: it must not cut the command this line starts. The editor turns
            // ISIG off before it reads, so from the first wait until el_gets returns a SIGINT
            // comes from another process (taken as Ctrl-C below); one after Enter (once el_gets
            // restored the cooked mode) stays set for the command. Cleared once, before the
            // line's first wait for a key (not before each: one that came while a key was being
            // handled would be lost).
            if firstWait { _ = interruptSignalled.exchange(false, ordering: .relaxed) }
            // The terminal is read only in the foreground: a background shell (`bg`) that read
            // it would be stopped by SIGTTIN at each key typed to the shell above. `fg` of a job
            // that runs sends no signal, so a background wait looks again every 200 ms, and
            // takes the terminal back once it is in the foreground.
            let foreground = inTerminalForeground()
            // SIGINT from another process while the line is edited (the interactive shell's
            // handler set the flag and woke the read): what Ctrl-C does, once in the foreground
            // (the line's end changes and writes the terminal). Looked at before each wait too:
            // its wake-up byte may have been drained with another's.
            if foreground && interruptSignalled.exchange(false, ordering: .relaxed) { return .byte(0x03) }
            var watched = [pollfd(fd: foreground ? 0 : -1, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
            let side = sideInput
            for fd in side?.fds ?? [] { watched.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&watched, nfds_t(watched.count), foreground ? -1 : 200)
            if !foreground && inTerminalForeground() {
                // (A SIGCONT that came meanwhile asks for nothing more.)
                continuedWhileEditing.store(false, ordering: .relaxed)
                takeTerminalBack(editor)
                continue
            }
            if foreground && interruptSignalled.exchange(false, ordering: .relaxed) { return .byte(0x03) }
            if ready < 0 {
                guard errno == EINTR else { return .failed(errno) }
                continue
            }
            if watched[1].revents & Int16(POLLIN) != 0 {
                drain(wakeReader)
                if continuedWhileEditing.exchange(false, ordering: .relaxed) {
                    takeTerminalBack(editor)
                } else {
                    redrawAfterResize(editor)
                }
                continue
            }
            if let side, let ready = watched.dropFirst(2).first(where: { $0.revents != 0 }) {
                if !handleSideInput(editor, { side.handle(ready.fd) }) {
                    // Ending in the background (a signal to a stopped or `bg` attachment): editing
                    // off, so that libedit does not set the terminal as the read ends (SIGTTOU
                    // would stop the shell instead of letting it end).
                    if !inTerminalForeground() { leaveTerminalAlone(editor) }
                    return .end
                }
                continue
            }
            guard watched[0].revents != 0 else { continue }
            var byte: UInt8 = 0
            do {
                // Not retried here: an interrupted read goes round the loop, as a wake-up does.
                let count = try withUnsafeMutableBytes(of: &byte) { try FileDescriptor.standardInput.read(into: $0, retryOnInterrupt: false) }
                return count == 1 ? .byte(byte) : .end
            } catch let error as Errno where error == .interrupted || error == .resourceTemporarilyUnavailable {
                continue
            } catch {
                return .failed((error as? Errno)?.rawValue ?? errno)
            }
        }
    }

    /// Watches `fds` while lines are edited (see `sideInput`), until `stopWatching()`.
    static func watch(_ fds: [Int32], handle: @escaping (Int32) -> Bool) { sideInput = (fds, handle) }

    static func stopWatching() { sideInput = nil }

    /// The other input can be read: the line off the screen (back to its first row, erased to
    /// the end of the screen), what came printed, the line drawn again.
    /// - Returns: false when that input ended.
    private static func handleSideInput(_ editor: OpaquePointer, _ handle: () -> Bool) -> Bool {
        printAbove(editor, handle)
    }

    /// Takes the line being edited off the screen (back to its first row, erased to the end of
    /// the screen), runs `print`, and draws the line again below what it printed, as typed.
    @discardableResult
    static func printAbove<T>(_ editor: OpaquePointer, _ print: () -> T) -> T {
        // In the background (stopped, or `bg`) the line is not on the screen to move: what
        // comes is printed as it is, and the line drawn again when the shell is back (`fg`).
        guard inTerminalForeground() else { return print() }
        takeLineOff(editor)
        // The line is off the screen while `print` runs: a message that ends the shell from
        // there (`failAttach`) takes the line's place as it is.
        let edited = lineBeingEdited.exchange(0, ordering: .relaxed)
        let result = print()
        lineBeingEdited.store(edited, ordering: .relaxed)
        _ = cachesh_el_refresh(editor)
        return result
    }

    /// Takes the line being edited off the screen: back to its first row, erased to the end of
    /// the screen (on a terminal that does not move its cursor, `TERM=dumb`, a line feed: the
    /// line stays, and what comes goes below it).
    static func takeLineOff(_ editor: OpaquePointer) {
        let columns = Int(cachesh_el_columns(editor))
        let prompt = currentPrompt().description
        if inputState.withLock({ $0.ansi }) {
            let row = LineLayout.cursor(after: prompt + lineText(editor).beforeCursor, columns: max(1, columns)).row
            writeOut("\r" + (row > 0 ? "\u{1b}[\(row)A" : "") + "\u{1b}[J")
        } else {
            writeOut("\n")
        }
    }

    /// Forgets the invalid byte of the last line (`takeInvalidByte`): a new line starts.
    static func startLine() {
        inputState.withLock {
            $0.invalidByte = nil
            $0.firstWait = true
        }
    }

    /// The first byte of the line just read that was not UTF-8 (nil: none), forgotten once taken.
    static func takeInvalidByte() -> UInt8? {
        inputState.withLock { state in
            defer { state.invalidByte = nil }
            return state.invalidByte
        }
    }

    /// One character for libedit, decoded as libedit's own reader does: an invalid sequence is
    /// dropped but for its last byte, which may start the next (its first byte is kept for
    /// `takeInvalidByte`: the line is not UTF-8, so it is not run); one longer than any character
    /// is an error.
    static func readCharacter(_ editor: OpaquePointer, into character: UnsafeMutablePointer<wchar_t>) -> Int32 {
        var bytes: [CChar] = []
        var needsByte = true
        while true {
            if needsByte {
                switch nextByte(editor) {
                case .byte(let byte): bytes.append(CChar(bitPattern: byte))
                case .end:
                    character.pointee = 0
                    return 0
                case .failed(let code):
                    character.pointee = 0
                    errno = code
                    return -1
                }
            }
            var shift = mbstate_t()
            var wide: wchar_t = 0
            let used = bytes.withUnsafeBufferPointer { mbrtowc(&wide, $0.baseAddress, $0.count, &shift) }
            switch used {
            case -1:
                let bad = UInt8(bitPattern: bytes[0])
                inputState.withLock { state in
                    if state.invalidByte == nil { state.invalidByte = bad }
                }
                needsByte = bytes.count == 1
                bytes = needsByte ? [] : [bytes[bytes.count - 1]]
            case -2:
                guard bytes.count < Int(MB_LEN_MAX) else {
                    character.pointee = 0
                    errno = EILSEQ
                    return -1
                }
                needsByte = true
            default:
                character.pointee = wide
                return 1
            }
        }
    }

    // MARK: - Redrawing

    /// Continued after a stop: the terminal in the editor's mode again (the calling shell may have
    /// changed it meanwhile) and the line drawn again where it was, as after Ctrl-Z (`suspendKey`).
    private static func takeTerminalBack(_ editor: OpaquePointer) {
        // Not in the foreground (continued by `bg`): left as it is; the next SIGCONT (`fg`)
        // comes back here.
        guard inTerminalForeground() else { return }
        _ = cachesh_el_prepare_terminal(editor, 0)
        _ = cachesh_el_prepare_terminal(editor, 1)
        el_resize(editor)
        let columns = Int(cachesh_el_columns(editor))
        let ansi = inputState.withLock { state in
            state.drawnColumns = columns
            return state.ansi
        }
        guard ansi else {
            // (A terminal that does not move its cursor: over the row the cursor is on.)
            writeOut("\r")
            _ = cachesh_el_refresh(editor)
            return
        }
        // Where is the cursor? Where the line left it (nothing was written meanwhile: a stop
        // and a continue with no job-control shell, a stray SIGCONT): the line is drawn again
        // from its first row. At the start of a row (a job-control shell wrote below the line:
        // `fg` leaves the cursor on a row of its own), or unknown: drawn there, erasing nothing
        // above (a line that fills its rows exactly, its cursor at a row's start, is then drawn
        // twice: never erasing what another program wrote comes first). Anywhere else: on the
        // next row.
        let prompt = currentPrompt().description
        let left = LineLayout.cursor(after: prompt + lineText(editor).beforeCursor, columns: max(1, columns)).column
        switch askCursorColumn() {
        case let column? where column == left && column != 0: takeLineOff(editor)
        case let column? where column != 0: writeOut("\r\n\u{1b}[J")
        default: writeOut("\r\u{1b}[J")
        }
        _ = cachesh_el_refresh(editor)
    }

    /// Takes the new size and draws the line again: back to the line's first row, erase to the
    /// end of the screen, draw prompt and line at the new width. Where that first row now is
    /// depends on the terminal: most keep each row as it was (xterm, the Linux console), some
    /// re-wrap the text at the new width (tmux, VTE). When the two disagree the terminal is asked
    /// where its cursor is; without an answer the line is drawn from the lower of the two rows,
    /// which never erases what was printed above the prompt.
    private static func redrawAfterResize(_ editor: OpaquePointer) {
        // In the background the line is not the terminal's: left until `fg`, when
        // `takeTerminalBack` takes the size and draws it again.
        guard inTerminalForeground() else { return }
        el_resize(editor)
        let columns = Int(cachesh_el_columns(editor))
        let (old, ansi) = inputState.withLock { state in
            defer { state.drawnColumns = columns }
            return (state.drawnColumns, state.ansi)
        }
        guard ansi, old > 0, columns != old else { return }
        let line = lineText(editor)
        let prompt = currentPrompt().description
        let kept = LineLayout.cursor(after: prompt + line.beforeCursor, columns: old)
        let rewrapped = LineLayout.cursor(after: prompt + line.beforeCursor, columns: columns)
        var row = min(kept.row, rewrapped.row)
        if kept.row != rewrapped.row, let column = askCursorColumn().map({ min($0, columns - 1) }) {
            let keptColumn = min(kept.column, columns - 1)
            if column == rewrapped.column && column != keptColumn {
                row = rewrapped.row
            } else if column == keptColumn && column != rewrapped.column {
                row = kept.row
            }
        }
        writeOut("\r" + (row > 0 ? "\u{1b}[\(row)A" : "") + "\u{1b}[J")
        _ = cachesh_el_refresh(editor)
    }

    /// Asks the terminal for the cursor's position (`ESC[6n`) and waits up to a second for the
    /// answer (`ESC[row;columnR`): its column, counted from 0. Keys that arrive meanwhile are kept
    /// for reading; at most 4 KiB is read.
    private static func askCursorColumn() -> Int? {
        writeOut("\u{1b}[6n")
        let deadline = ContinuousClock.now.advanced(by: .seconds(1))
        var received: [UInt8] = []
        var column: Int?
        while column == nil && received.count < 4096 {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { break }
            let milliseconds = Int32(min(1000, max(1, (left / .milliseconds(1)).rounded(.up))))
            var watched = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try FileDescriptor.standardInput.read(into: $0, retryOnInterrupt: false) }
            } catch let error as Errno where error == .interrupted || error == .resourceTemporarilyUnavailable {
                continue
            } catch {
                break
            }
            guard count > 0 else { break }
            received += buffer[..<count]
            if let (range, found) = cursorReport(in: received) {
                received.removeSubrange(range)
                column = found
            }
        }
        inputState.withLock { state in
            state.pending.append(contentsOf: received)
        }
        return column
    }

    /// The first `ESC [ digits ; digits R` in `bytes`: where it is, and its column counted from 0.
    static func cursorReport(in bytes: [UInt8]) -> (Range<Int>, Int)? {
        var start = 0
        while let escape = bytes[start...].firstIndex(of: 0x1b) {
            var i = escape + 1
            start = escape + 1
            guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else { continue }
            i += 1
            func number() -> Int? {
                var value = 0
                let first = i
                while i < bytes.count, i - first < 6, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                    value = value * 10 + Int(bytes[i] - 0x30)
                    i += 1
                }
                return i > first ? value : nil
            }
            guard number() != nil, i < bytes.count, bytes[i] == UInt8(ascii: ";") else { continue }
            i += 1
            guard let column = number(), i < bytes.count, bytes[i] == UInt8(ascii: "R") else { continue }
            return (escape..<(i + 1), max(0, column - 1))
        }
        return nil
    }
}

/// Where libedit puts the cursor after some text at a given width: each character in the row it
/// fits in (a wide one that would cross the edge goes to the next row), tabs to the next multiple
/// of 8 in the row, and a row filled to the edge moves the cursor to the start of the next.
enum LineLayout {
    static func cursor(after text: String, columns: Int) -> (row: Int, column: Int) {
        guard columns > 0 else { return (0, 0) }
        var row = 0
        var column = 0
        for scalar in text.unicodeScalars {
            let width = scalar == "\t" ? 8 - column % 8 : DisplayWidth.of(String(scalar), startingAt: column)
            if column + width > columns {
                row += 1
                column = 0
            }
            column += scalar == "\t" ? min(width, columns - column) : width
            if column >= columns {
                row += 1
                column = 0
            }
        }
        return (row, column)
    }
}
