import CacheCore
import CacheShell
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Batch input read as a stream: a script FILE and standard input, command by command as they
/// arrive, and a transcript given as either refused (SPEC §6).
enum Batch {
    /// The longest command a script or standard input may hold, in bytes: past it the command is
    /// dropped with an error, so memory stays bounded whatever the stream holds.
    static let maxCommandBytes = 16 << 20

    // MARK: A transcript is not a script

    /// Where `text` (a script named `name`, or standard input when nil) shows it is a transcript:
    /// its name ends in `.transcript`, `.md` or `.markdown`, or one of its lines starts with
    /// `cachesh> ` or is `cachesh>` (no script holds such a line: `cachesh>` is no command).
    /// - Returns: the line (from 1) and the error line to print, or nil for a script.
    /// - Complexity: O(n) in the length of `text`.
    static func transcriptError(name: String, text: UnsafeBufferPointer<UInt8>, firstLine: Int = 1, isFile: Bool) -> String? {
        let suggestion = isFile ? "check it with cachesh --verify \(name)" : "save it to a file and check it with cachesh --verify FILE"
        if isFile, let kind = [".transcript", ".md", ".markdown"].first(where: { name.hasSuffix($0) }) {
            return "\(name):1: error: this is a transcript, not a script (its name ends in \(kind)): \(suggestion)"
        }
        guard let line = promptLine(text) else { return nil }
        return promptError(name: name, line: line + firstLine - 1, isFile: isFile)
    }

    /// ``transcriptError(name:text:firstLine:isFile:)`` for the script `name` open at `fd`, read
    /// in a first pass that leaves `fd` at its start again, so nothing of a transcript runs.
    static func transcriptError(name: String, fd: Int32) -> String? {
        if let error = transcriptError(name: name, text: UnsafeBufferPointer(start: nil, count: 0), isFile: true) { return error }
        defer { _ = lseek(fd, 0, SEEK_SET) }
        return promptLine(fd: fd).map { promptError(name: name, line: $0, isFile: true) }
    }

    /// The error line for a prompt line (`line`, from 1) in a script named `name` or standard input.
    static func promptError(name: String, line: Int, isFile: Bool) -> String {
        let suggestion = isFile ? "check it with cachesh --verify \(name)" : "save it to a file and check it with cachesh --verify FILE"
        return "\(name):\(line): error: this is a transcript, not a script (the line starts with \"cachesh> \"): \(suggestion)"
    }

    /// The first line (from 1) of `text` that starts with `cachesh> ` or is `cachesh>`.
    ///
    /// Each `>` is found by `memchr` (a script holds few) and the line around it looked at only
    /// when the seven bytes before it are `cachesh` at a line's start; lines are counted once
    /// such a line is found. A batch on standard input passes every piece it reads through here:
    /// a byte-at-a-time scan was some 200 instructions a command, one `memchr` a line some 50.
    /// - Complexity: O(n) in the length of `text`.
    static func promptLine(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = text.baseAddress else { return nil }
        let count = text.count
        // "cachesh>" as a little- or big-endian word, as `loadUnaligned` reads it.
        let prompt = UInt64(littleEndian: 0x3E68_7365_6863_6163)
        var from = 0
        while from < count, let found = memchr(base + from, Int32(UInt8(ascii: ">")), count - from) {
            let q = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            from = q + 1
            let start = q - 7
            guard start >= 0, start == 0 || base[start - 1] == UInt8(ascii: "\n"),
                  UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self) == prompt else { continue }
            // Then the line's end, a space, or a carriage return that ends the line.
            let after = q + 1
            let isPrompt = after == count || base[after] == UInt8(ascii: " ") || base[after] == UInt8(ascii: "\n")
                || (base[after] == UInt8(ascii: "\r") && (after + 1 == count || base[after + 1] == UInt8(ascii: "\n")))
            if isPrompt { return 1 + UnsafeBufferPointer(rebasing: text[..<start]).count { $0 == UInt8(ascii: "\n") } }
        }
        return nil
    }

    /// ``promptLine(_:)`` over the rest of the file open at `fd`, read in 64 KiB chunks: memory
    /// stays bounded whatever the file's size. A read error ends the search (the run then reports it).
    ///
    /// Each `>` is found with `memchr` and the eight bytes before it compared with `\ncachesh` as
    /// one word (the file's start counts as a line feed); lines are counted only once a prompt
    /// line is found, reading the file again up to it. A line at a time, with a call of `memchr`
    /// each, this pass was some 80 instructions a command of a script.
    /// - Complexity: O(n) in the length of the file.
    static func promptLine(fd: Int32) -> Int? {
        let size = 1 << 16
        /// Bytes kept from one chunk for the next: a match that starts in them may need up to
        /// two bytes more to be decided (`cachesh>\r`, then a line feed or not).
        let keep = 10
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: keep + size)
        defer { buffer.deallocate() }
        // "\ncachesh" as a little- or big-endian word, as `loadUnaligned` reads it.
        let head = UInt64(littleEndian: 0x6873_6568_6361_630A)
        // Where the search starts (the file's start, for a script just opened) counts as a line
        // start: a line feed that is not in the file, just before it.
        let start = max(0, Int(lseek(fd, 0, SEEK_CUR)))
        buffer[0] = UInt8(ascii: "\n")
        var carried = 1
        /// The file's offset of `buffer[0]`.
        var bufferOffset = start - 1
        while true {
            let n = (try? FileDescriptor(rawValue: fd).read(into: UnsafeMutableRawBufferPointer(start: buffer + carried, count: size))) ?? 0
            let end = carried + n
            let atEnd = n == 0
            var from = 0
            // Each `>` (rare in a script), then the eight bytes before it.
            while from < end, let found = memchr(buffer + from, Int32(UInt8(ascii: ">")), end - from) {
                let q = UnsafeMutableRawPointer(found).assumingMemoryBound(to: UInt8.self) - buffer
                from = q + 1
                // (A `>` in the first eight bytes kept from a chunk was decided with that chunk.)
                guard q >= 8, UnsafeRawPointer(buffer + q - 8).loadUnaligned(as: UInt64.self) == head else { continue }
                let after = q + 1
                // Undecided until two more bytes are read: found again among the bytes kept.
                if !atEnd && after + 2 > end { break }
                let isPrompt: Bool
                if after == end {
                    isPrompt = true
                } else {
                    switch buffer[after] {
                    case UInt8(ascii: " "), UInt8(ascii: "\n"): isPrompt = true
                    case UInt8(ascii: "\r"): isPrompt = after + 1 == end || buffer[after + 1] == UInt8(ascii: "\n")
                    default: isPrompt = false
                    }
                }
                if isPrompt { return lineNumber(atOffset: bufferOffset + q - 7, from: start, in: fd) }
            }
            if atEnd { return nil }
            let dropped = max(0, end - keep)
            memmove(buffer, buffer + dropped, end - dropped)
            bufferOffset += dropped
            carried = end - dropped
        }
    }

    /// The line (from 1, the line at `start`) of the byte at `offset` of the file open at `fd` (a
    /// regular file: read with `pread`, which leaves its offset as it is). A file that cannot be
    /// read again up to `offset` (cut short since the first read) gives the line it was read up
    /// to: the prompt line is refused all the same, its line number then a guess.
    /// - Complexity: O(offset - start).
    private static func lineNumber(atOffset offset: Int, from start: Int, in fd: Int32) -> Int {
        let size = 1 << 16
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { chunk.deallocate() }
        var line = 1
        var done = start
        while done < offset {
            let n = pread(fd, chunk, min(size, offset - done), off_t(done))
            guard n > 0 else { return line }
            var at = 0
            while at < n, let found = memchr(chunk + at, Int32(UInt8(ascii: "\n")), n - at) {
                line += 1
                at = UnsafeMutableRawPointer(found).assumingMemoryBound(to: UInt8.self) - chunk + 1
            }
            done += n
        }
        return line
    }

    // MARK: A stream, command by command

    /// Runs a script or standard input (`name` in error lines: the script's path, or `<stdin>`)
    /// from `fd` command by command: whatever complete commands have arrived run before cachesh
    /// reads again, so memory does not grow with the input. Standard input's output is written
    /// out before each read, so another program can wait on it; a script's stays buffered. A
    /// command is complete at a line feed outside any JSON value (`CommandScanner`); one longer
    /// than ``maxCommandBytes`` is reported and skipped. A line that starts with the prompt stops
    /// the run before it (exit 2); a script is checked for one before anything runs.
    /// - Returns: the exit status.
    static func run(_ session: Session, on cache: isolated Cache, terminal: Terminal, from fd: Int32, name: String,
                    isFile: Bool) -> Int32 {
        let status = runStream(session, on: cache, terminal: terminal, from: fd, name: name, isFile: isFile)
        // A script's pieces do not end commit groups (`Session.runPiece`): the commands since the
        // last commit are committed now, and a commit that fails fails the run.
        if isFile && !session.commitHeld(on: cache) && status == 0 { return 1 }
        return status
    }

    private static func runStream(_ session: Session, on cache: isolated Cache, terminal: Terminal, from fd: Int32,
                                  name: String, isFile: Bool) -> Int32 {
        /// Bytes read but not run yet: the start of a command still arriving.
        var pending: [UInt8] = []
        /// The line number of `pending`'s first byte.
        var line = 1
        /// Set while the rest of an over-long command is being skipped; `scanner` then finds its end.
        var skipping = false
        /// Set while `pending` holds a command whose JSON value spans lines: `scanner` has seen all
        /// of `pending` and finds where that command ends, so the bytes are not lexed again and again.
        var scanning = false
        var scanner = CommandScanner()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        pending.reserveCapacity(chunk.count * 2)

        /// Runs the commands of `pending[..<end]`; with `holding`, a last command whose JSON value
        /// is still open stays in `pending`. - Returns: the exit status when the run must stop
        /// (quit, --bail, a transcript), else nil.
        func runPending(upTo end: Int, holding: Bool) -> Int32? {
            guard end > 0 else { return nil }
            var consumed = end
            let stop: Int32? = pending.withUnsafeBufferPointer { all in
                let piece = UnsafeBufferPointer(rebasing: all[..<end])
                // A script was looked through before anything ran (`transcriptError(name:fd:)`).
                if !isFile, let error = transcriptError(name: name, text: piece, firstLine: line, isFile: isFile) {
                    // Run what came before the prompt line, then stop.
                    let before = piece.prefix(upTo: lineStart(of: promptLine(piece)!, in: piece))
                    if !before.isEmpty {
                        session.run(SourceFile(name: name, bytes: UnsafeBufferPointer(rebasing: before), firstLine: line), on: cache)
                    }
                    terminal.write(error + "\n", isError: true)
                    return 2
                }
                // Text that is not UTF-8 is not a script: as with a NUL byte, the whole lines
                // before it run, then the run stops (a repair would make different keys one).
                if let bad = FileIO.firstInvalidUTF8(piece) {
                    let badLine = line + piece[..<bad].count { $0 == UInt8(ascii: "\n") }
                    let before = piece.prefix(upTo: lineStart(of: badLine - line + 1, in: piece))
                    if !before.isEmpty {
                        // A command still open there (a JSON value spanning lines) stops with it, unrun.
                        _ = session.runPiece(SourceFile(name: name, bytes: UnsafeBufferPointer(rebasing: before), firstLine: line),
                                             on: cache)
                    }
                    _ = session.commitHeld(on: cache)
                    terminal.write("\(name):\(badLine): error: not UTF-8 text (byte \(FileIO.hexByte(piece[bad]))): "
                                   + "cachesh reads UTF-8; stopped reading\n", isError: true)
                    return 2
                }
                let source = SourceFile(name: name, validUTF8: piece, firstLine: line)
                // A piece of a script ends no commit group: reading the next piece does not wait.
                // One of standard input does, as reading on may wait for the next line.
                let (ok, heldFrom) = holding ? session.runPiece(source, endsCommitGroup: !isFile, on: cache)
                    : (session.run(source, on: cache), nil)
                if let heldFrom {
                    consumed = heldFrom
                    line = source.location(ofOffset: heldFrom).line
                } else {
                    line += source.lineCount - 1
                }
                if session.quitRequested || (!ok && session.options.bail) { return session.anyFailed ? 1 : 0 }
                return nil
            }
            pending.removeSubrange(..<consumed)
            return stop
        }

        while true {
            if !isFile { terminal.flush() }
            var n: Int
            do {
                n = try chunk.withUnsafeMutableBytes { try FileDescriptor(rawValue: fd).read(into: $0) }
            } catch {
                if isFile {
                    // What ran before is committed (and its output written) before this line.
                    _ = session.commitHeld(on: cache)
                    terminal.write("cachesh: cannot read \(name): \(FileIO.message(error))\n", isError: true)
                    return 2
                }
                n = 0
            }
            if n == 0 {
                // End of input: what is left is the last command, complete or not.
                if !skipping, let status = runPending(upTo: pending.count, holding: false) { return status }
                return session.anyFailed ? 1 : 0
            }
            // Under --safe the input is a stranger's: each piece read lets more scheduled work run.
            session.noteInput(bytes: n, on: cache)
            // A NUL byte is not text: the input is binary (`cachesh < /dev/zero`, which has no end
            // and no line feed to end an over-long command at). The whole lines before it run;
            // then the run stops at its line.
            var stopsAtNUL = false
            let nulAt = chunk.withUnsafeBufferPointer { bytes -> Int? in
                memchr(bytes.baseAddress!, 0, n).map { UnsafeRawPointer($0) - UnsafeRawPointer(bytes.baseAddress!) }
            }
            if let at = nulAt {
                n = chunk[..<at].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
                stopsAtNUL = true
            }
            func stopAtNUL() -> Int32 {
                _ = session.commitHeld(on: cache)
                // A command still open before it (a JSON value spanning lines) is dropped with it.
                let nulLine = line + pending.count { $0 == UInt8(ascii: "\n") }
                terminal.write("\(name):\(nulLine): error: a NUL byte: this is not text (binary input?); stopped reading\n",
                               isError: true)
                return 2
            }
            var offset = 0
            if skipping {
                // Drop the over-long command line by line, up to the line that ends it.
                while skipping, offset < n {
                    var lineEnd = offset
                    while lineEnd < n && chunk[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                    if lineEnd < n { lineEnd += 1; line += 1 }
                    let ended = chunk.withUnsafeBufferPointer { scanner.scan(UnsafeBufferPointer(rebasing: $0[offset..<lineEnd])) } != nil
                    offset = lineEnd
                    if ended { skipping = false }
                }
                if skipping {
                    if stopsAtNUL { return stopAtNUL() }
                    continue
                }
            }
            let before = pending.count
            // Copied once, from the chunk's memory: appending the `ArraySlice` made a temporary
            // array of it first (two copies of the whole input, some 70 instructions a command).
            chunk.withUnsafeBufferPointer { pending.append(contentsOf: UnsafeBufferPointer(rebasing: $0[offset..<n])) }
            if scanning {
                // A command whose JSON value spans lines is arriving: the scanner, which has seen
                // all of `pending`, finds where it ends without reading it again.
                let end = chunk.withUnsafeBufferPointer { scanner.scan(UnsafeBufferPointer(rebasing: $0[offset..<n])) }
                if let end, let status = runPending(upTo: before + end, holding: true) { return status }
                // Once nothing is left over, the next bytes start a command: back to the lexer alone.
                if pending.isEmpty { scanning = false }
            } else {
                // Every command up to the last line feed read runs now, but one whose JSON value
                // is still open (the lexer finds it: no second pass over the bytes).
                let lastLineFeed = chunk.withUnsafeBufferPointer {
                    UnsafeBufferPointer(rebasing: $0[offset..<n]).lastIndex(of: UInt8(ascii: "\n"))
                }
                if let lastLineFeed {
                    let end = before + lastLineFeed + 1
                    if let status = runPending(upTo: end, holding: true) { return status }
                    if pending.count > n - offset - lastLineFeed - 1 {
                        // A command was held: from here the scanner follows it to its end.
                        scanning = true
                        scanner = CommandScanner()
                        _ = pending.withUnsafeBufferPointer { scanner.scan($0) }
                    }
                }
            }
            if pending.count > maxCommandBytes {
                _ = session.commitHeld(on: cache)
                terminal.write("\(name):\(line): error: command longer than \(maxCommandBytes >> 20) MiB "
                               + "(a { or [ never closed?): skipped to its end\n", isError: true)
                session.anyFailed = true
                // Where the rest of it ends: scan it from its start.
                scanner = CommandScanner()
                _ = pending.withUnsafeBufferPointer { scanner.scan($0) }
                line += pending.count { $0 == UInt8(ascii: "\n") }
                pending.removeAll()
                skipping = true
                scanning = false
                if session.options.bail { return 1 }
            }
            if stopsAtNUL { return stopAtNUL() }
        }
    }

    /// The offset where line `number` (from 1) of `text` starts.
    private static func lineStart(of number: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
        var line = 1
        var offset = 0
        while line < number, offset < text.count {
            if text[offset] == UInt8(ascii: "\n") { line += 1 }
            offset += 1
        }
        return offset
    }
}
