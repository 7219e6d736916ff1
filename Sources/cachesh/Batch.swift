import CacheCore
import CacheShell
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Batch input that is not a script: a transcript given as one, and standard input read as it
/// arrives (SPEC §6).
enum Batch {
    /// The longest command standard input may send, in bytes: past it the command is dropped
    /// with an error, so memory stays bounded whatever the stream holds.
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
        return "\(name):\(line + firstLine - 1): error: this is a transcript, not a script (the line starts with \"cachesh> \"): \(suggestion)"
    }

    /// The first line (from 1) of `text` that starts with `cachesh> ` or is `cachesh>`.
    static func promptLine(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        let prompt = Array("cachesh>".utf8)
        var line = 1
        var start = 0
        while start < text.count {
            var end = start
            while end < text.count && text[end] != UInt8(ascii: "\n") { end += 1 }
            if end - start >= prompt.count, (0..<prompt.count).allSatisfy({ text[start + $0] == prompt[$0] }) {
                let rest = end - start - prompt.count
                let after = rest > 0 ? text[start + prompt.count] : 0
                if rest == 0 || after == UInt8(ascii: " ") || (rest == 1 && after == UInt8(ascii: "\r")) { return line }
            }
            start = end + 1
            line += 1
        }
        return nil
    }

    // MARK: Standard input as it arrives

    /// Runs standard input command by command: whatever complete commands have arrived run before
    /// cachesh reads again, and their output is written out before it waits. A command is
    /// complete at a line feed outside any JSON value (`CommandScanner`); one longer than
    /// ``maxCommandBytes`` is reported and skipped. A line that starts with the prompt stops the
    /// run before it (exit 2).
    /// - Returns: the exit status.
    static func runStandardInput(_ session: Session, on cache: isolated Cache, terminal: Terminal) -> Int32 {
        var scanner = CommandScanner()
        /// Bytes read but not run yet: complete commands, then the start of the next one.
        var pending: [UInt8] = []
        /// The line number of `pending`'s first byte.
        var line = 1
        /// Set while the rest of an over-long command is being skipped.
        var skipping = false
        var chunk = [UInt8](repeating: 0, count: 1 << 16)

        /// Runs `pending[..<end]`; false when the run must stop (quit, --bail, a transcript).
        func runPending(upTo end: Int) -> Int32? {
            guard end > 0 else { return nil }
            let stop: Int32? = pending.withUnsafeBufferPointer { all in
                let piece = UnsafeBufferPointer(rebasing: all[..<end])
                if let error = transcriptError(name: "<stdin>", text: piece, firstLine: line, isFile: false) {
                    // Run what came before the prompt line, then stop.
                    let before = piece.prefix(upTo: lineStart(of: promptLine(piece)!, in: piece))
                    if !before.isEmpty {
                        session.run(SourceFile(name: "<stdin>", text: String(decoding: before, as: UTF8.self), firstLine: line), on: cache)
                    }
                    terminal.write(error + "\n", isError: true)
                    return 2
                }
                let source = SourceFile(name: "<stdin>", text: String(decoding: piece, as: UTF8.self), firstLine: line)
                let ok = session.run(source, on: cache)
                line += source.lineCount - 1
                if session.quitRequested || (!ok && session.options.bail) { return session.anyFailed ? 1 : 0 }
                return nil
            }
            pending.removeSubrange(..<end)
            return stop
        }

        while true {
            terminal.flush()
            let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                // End of input: what is left is the last command, complete or not.
                if !skipping, let status = runPending(upTo: pending.count) { return status }
                return session.anyFailed ? 1 : 0
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
                if skipping { continue }
            }
            let end = chunk.withUnsafeBufferPointer { scanner.scan(UnsafeBufferPointer(rebasing: $0[offset..<n])) }
            let runnable = end.map { pending.count + $0 } ?? 0
            pending.append(contentsOf: chunk[offset..<n])
            if let status = runPending(upTo: runnable) { return status }
            if pending.count > maxCommandBytes {
                terminal.write("<stdin>:\(line): error: command longer than \(maxCommandBytes >> 20) MiB "
                               + "(a { or [ never closed?): skipped to its end\n", isError: true)
                session.anyFailed = true
                line += pending.count { $0 == UInt8(ascii: "\n") }
                pending.removeAll()
                skipping = true
                if session.options.bail { return 1 }
            }
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
