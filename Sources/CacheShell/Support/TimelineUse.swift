#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// Whether a script may ever read the session's timeline (`timeline`, `explain`), judged from its
/// text before it runs: a batch whose script cannot read it keeps no timeline, and its cache
/// reports no change to the session (`Session.stopKeepingTimeline(on:)`), which every change of
/// a long batch otherwise paid for (building the change's report, and noting it in the timeline:
/// some 300 instructions a `put`). Nothing a user sees changes: only `timeline` and `explain`
/// read it.
///
/// The judgement is by bytes and errs towards keeping it: a script may read the timeline if any
/// of ``words`` appears anywhere in it, in a key or a value too. They are the commands that read
/// it, the commands that run commands the script does not hold (`source FILE`, a `restore`d
/// snapshot's scheduled commands), and `\u`, with which a quoted command name can spell any
/// letter of them (`"time\u006cine" *`). A command `at` schedules is in the script's text too.
public enum TimelineUse {
    /// The byte strings whose presence means a script may read the timeline.
    static let words: [StaticString] = ["timeline", "explain", "source", "restore", "\\u"]
    /// The longest of ``words``, less one: the bytes a chunked search keeps from one chunk for the next.
    static let overlap = words.map(\.utf8CodeUnitCount).max()! - 1

    /// Whether `text` holds one of ``words``.
    ///
    /// Three passes of `memchr`, each for a byte that several words hold and scripts hold few of
    /// (a batch of puts and gets holds none): `n` (`timeline`, `explain`), `o` (`source`,
    /// `restore`) and `\`; each byte found is looked at with the words around it. `memmem`, a
    /// pass for each word, cost some 570 instructions a command of a batch, more than the
    /// timeline it spares.
    /// - Complexity: O(n) in the length of `text`.
    public static func mayRead(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let base = text.baseAddress?.assumingMemoryBound(to: UInt8.self), !text.isEmpty else { return false }
        let count = text.count
        /// Whether `word` starts at `start` (which may be out of the text).
        func holds(_ word: StaticString, at start: Int) -> Bool {
            let length = word.utf8CodeUnitCount
            guard start >= 0, start + length <= count else { return false }
            return memcmp(base + start, word.utf8Start, length) == 0
        }
        /// Each `byte` in the text, until `found` says a word is there.
        func search(_ byte: UInt8, _ found: (Int) -> Bool) -> Bool {
            var from = 0
            while from < count, let hit = memchr(base + from, Int32(byte), count - from) {
                let at = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
                if found(at) { return true }
                from = at + 1
            }
            return false
        }
        return search(UInt8(ascii: "n")) { holds("timeline", at: $0 - 6) || holds("explain", at: $0 - 6) }
            || search(UInt8(ascii: "o")) { holds("source", at: $0 - 1) || holds("restore", at: $0 - 4) }
            || search(UInt8(ascii: "\\")) { $0 + 1 < count && base[$0 + 1] == UInt8(ascii: "u") }
    }

    /// Whether `text` holds one of ``words``.
    public static func mayRead(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { mayRead(UnsafeRawBufferPointer($0)) }
    }

    /// ``mayRead(fd:)`` of standard input when it is a regular file (`cachesh < script.cachesh`),
    /// which can be read twice; true for a pipe or a terminal, whose bytes are read once, as they come.
    public static func mayReadStandardInput() -> Bool {
        var st = stat()
        guard fstat(0, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return true }
        return mayRead(fd: 0)
    }

    /// Whether the rest of the file open at `fd` holds one of ``words``, read in 64 KiB chunks
    /// (memory stays bounded whatever its size); `fd` is left where it was. A file that cannot be
    /// read is judged as one that may read it.
    /// - Complexity: O(n) in the length of the file.
    public static func mayRead(fd: Int32) -> Bool {
        let start = lseek(fd, 0, SEEK_CUR)
        guard start >= 0 else { return true }
        defer { _ = lseek(fd, start, SEEK_SET) }
        let size = 1 << 16
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: overlap + size, alignment: 1)
        defer { buffer.deallocate() }
        var carried = 0
        while true {
            let n: Int
            do {
                n = try FileDescriptor(rawValue: fd).read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[carried..<(carried + size)]))
            } catch {
                return true
            }
            if n == 0 { return false }
            let end = carried + n
            if mayRead(UnsafeRawBufferPointer(rebasing: buffer[..<end])) { return true }
            // A word that starts in the last bytes may end in the next chunk.
            let kept = min(overlap, end)
            memmove(buffer.baseAddress!, buffer.baseAddress! + end - kept, kept)
            carried = kept
        }
    }
}
