import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shows a long `help` through a pager, as `git` and `psql` do: `$PAGER`, else `less -FRX` (which
/// prints text that fits the screen directly, keeps colour, and leaves the text on the screen).
enum Pager {
    /// Pages `text` when it is taller than the terminal. Returns false when it did not (it fits,
    /// the terminal's size is unknown, or no pager could start): the caller prints it itself.
    static func show(_ text: String, environment: ProcessEnvironment) -> Bool {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return false }
        let rows = text.utf8.lazy.filter { $0 == UInt8(ascii: "\n") }.count
        // The prompt line below the output must fit too.
        guard rows >= Int(size.ws_row) else { return false }
        let command = environment["PAGER"].flatMap { $0.isEmpty ? nil : $0 } ?? "less -FRX"
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return false }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        let arguments = ["/bin/sh", "-c", command]
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &cArguments, environ)
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            return false
        }
        // A pager quit early closes the pipe: the write then fails (EPIPE) instead of killing us.
        let previous = signal(SIGPIPE, SIG_IGN)
        _ = try? FileDescriptor(rawValue: writeEnd).writeAll(text.utf8)
        close(writeEnd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        signal(SIGPIPE, previous)
        // The shell could not run the pager (127: not found): the text was not shown.
        return !(status & 0x7F == 0 && (status >> 8) & 0xFF == 127)
    }
}
