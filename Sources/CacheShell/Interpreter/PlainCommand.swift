import CacheCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commonest commands of a batch, `put KEY VALUE` and `get KEY`, read straight from the
/// bytes (no lexer), then run in the one wrapper as every command is.
extension Session {
    /// The longest JSON value ``runPlainCommand(at:in:on:)`` takes: shorter than any value nested
    /// deeper than the lexer and the JSON reader allow (`Lexer.maxJSONDepth`, `JSONValue.maxDepth`;
    /// d levels take 2d bytes), so the two never disagree on one it runs.
    static let maxPlainValueBytes = 2 * min(Lexer.maxJSONDepth, JSONValue.maxDepth)

    /// Runs the command after `offset` when it is in the commonest form of a batch, read straight
    /// from the bytes instead of through the lexer: `put KEY VALUE` or `get KEY` on one line of
    /// its own ending in a line feed, one space between the words, KEY a valid ASCII key that is
    /// no option nor flag, VALUE a JSON object or array that is valid and holds no line feed.
    /// What it runs, prints and notes is what ``execute(_:in:on:)`` does for the command the lexer
    /// would make of that line; any other line, or one whose key or value is not valid (whose
    /// error the lexer and the command's handler word), is left to them.
    /// - Returns: where the command ends (at its line feed, where the lexer stops) and whether it
    ///   succeeded; nil when the line is left to the lexer.
    /// - Complexity: O(n) in the length of the line.
    func runPlainCommand(at offset: Int, in source: SourceFile, on cache: isolated Cache) -> (end: Int, ok: Bool)? {
        // `put` and `get` change a store: on a read-only one, `execute` refuses them.
        if store?.readOnlyState != nil { return nil }
        // A get of an HTTP namespace's key is decided by its own handler (`EntryCommands.httpGet`).
        let getsAllowed = !cache.hasHTTPNamespaces
        // The line read through one pointer: indexing the array checked each byte's index.
        guard let line = source.bytes.withUnsafeBufferPointer({ Self.plainLine($0, from: offset, getsAllowed: getsAllowed) })
        else { return nil }
        let start = line.start, keyStart = line.keyStart
        let parsed: (key: String, value: StoredValue?)? = source.bytes.withUnsafeBufferPointer { all in
            guard let key = Arguments.keyIfPlain(UnsafeBufferPointer(rebasing: all[keyStart..<line.keyEnd])) else { return nil }
            guard let valueRange = line.value else { return (key, nil) }
            guard let value = Arguments.storedJSON(UnsafeBufferPointer(rebasing: all[valueRange])) else { return nil }
            return (key, value)
        }
        guard let parsed else { return nil }

        // The one wrapper every command runs in (``perform``), as `execute` would call it, its
        // reply written straight from what the cache answered (``performPlain``).
        let ok: Bool
        if let value = parsed.value {
            ok = performPlain(start..<line.end, in: source, named: "put", on: cache) { _, cache throws(ShellError) in
                cache.put(parsed.key, value, tags: [])
            } write: { keys, mode, out in
                Reply.writeKeys(keys, command: "put", subcommand: nil, ok: true, mode: mode, into: &out)
            } reply: { keys in
                .keys(keys)
            }
        } else {
            let typedBare = !line.keyHasColon
            ok = performPlain(start..<line.end, in: source, named: "get", on: cache) { session, cache throws(ShellError) in
                // (`checkNotNamespace` looks at a key typed with a colon no further.)
                if typedBare { try Arguments.checkNotNamespace(parsed.key, at: keyStart, cache, command: "get", typedBare: true) }
                do throws(CacheError) {
                    return try cache.read(parsed.key, force: false, nowait: session.frames.inScheduled)
                } catch {
                    throw ShellError(error.message, at: start)
                }
            } write: { result, mode, out in
                mode == .json
                    ? Reply.readJSON(result, isGet: true, command: "get", subcommand: nil, ok: true, into: &out)
                    : Reply.readLines(result, isGet: true, colour: false, into: &out)
            } reply: { result in
                .read(result, isGet: true)
            }
        }
        return (line.end, ok)
    }

    /// Where the parts of a plain command are (``runPlainCommand(at:in:on:)``).
    private struct PlainLine {
        /// The command's first byte, its key's bounds, and the line feed that ends it.
        var start: Int
        var keyStart: Int
        var keyEnd: Int
        var end: Int
        /// A put's value; nil for a get.
        var value: Range<Int>?
        var keyHasColon: Bool
    }

    /// The parts of the command after `offset` when it is in the form ``runPlainCommand(at:in:on:)``
    /// runs (its key and value not checked yet); nil when the line is left to the lexer.
    /// - Complexity: O(n) in the length of the line.
    private static func plainLine(_ bytes: UnsafeBufferPointer<UInt8>, from offset: Int, getsAllowed: Bool) -> PlainLine? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var start = offset
        while start < count {
            let byte = base[start]
            guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
            else { break }
            start += 1
        }
        // `put ` or `get `, then a key that is a bare word: no quote, bracket, comment, option nor flag.
        guard start + 5 < count, base[start + 2] == UInt8(ascii: "t"), base[start + 3] == UInt8(ascii: " ") else { return nil }
        let isPut = base[start] == UInt8(ascii: "p") && base[start + 1] == UInt8(ascii: "u")
        guard isPut || (getsAllowed && base[start] == UInt8(ascii: "g") && base[start + 1] == UInt8(ascii: "e")) else { return nil }
        let keyStart = start + 4
        switch base[keyStart] {
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "#"), UInt8(ascii: "-"): return nil
        default: break
        }
        // The key runs to the next space (put) or the line feed (get); bytes a key may not hold
        // (blanks among them) send the line to the lexer through `plainKey`.
        var keyEnd = keyStart
        var keyHasColon = false
        // Eight bytes at a time while none of them is a space, a line feed or `=` (exact per-byte
        // masks: a word's colon is noted), then byte by byte from the word that holds one.
        let raw = UnsafeRawPointer(base)
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F, ones: UInt64 = 0x0101_0101_0101_0101
        /// 0x80 in each byte of `w` that is `byte` (no carry from byte to byte).
        @inline(__always) func equal(_ w: UInt64, _ byte: UInt8) -> UInt64 {
            let x = w ^ (ones &* UInt64(byte))
            return ~(((x & lows) &+ lows) | x | lows)
        }
        while keyEnd + 8 <= count {
            let w = raw.loadUnaligned(fromByteOffset: keyEnd, as: UInt64.self)
            if equal(w, UInt8(ascii: " ")) | equal(w, UInt8(ascii: "\n")) | equal(w, UInt8(ascii: "=")) != 0 { break }
            if equal(w, UInt8(ascii: ":")) != 0 { keyHasColon = true }
            keyEnd += 8
        }
        while keyEnd < count {
            let byte = base[keyEnd]
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: " ") { break }
            if byte == UInt8(ascii: "=") { return nil }
            if byte == UInt8(ascii: ":") { keyHasColon = true }
            keyEnd += 1
        }
        guard keyEnd < count else { return nil }
        if isPut {
            let valueStart = keyEnd + 1
            guard base[keyEnd] == UInt8(ascii: " "), valueStart < count,
                  base[valueStart] == UInt8(ascii: "{") || base[valueStart] == UInt8(ascii: "[") else { return nil }
            // The line feed ending the line, if the value is short enough to be taken here.
            let limit = min(count - valueStart, maxPlainValueBytes + 1)
            guard let found = memchr(base + valueStart, Int32(UInt8(ascii: "\n")), limit) else { return nil }
            let valueEnd = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            guard valueEnd - valueStart <= maxPlainValueBytes,
                  base[valueEnd - 1] == UInt8(ascii: "}") || base[valueEnd - 1] == UInt8(ascii: "]") else { return nil }
            return PlainLine(start: start, keyStart: keyStart, keyEnd: keyEnd, end: valueEnd, value: valueStart..<valueEnd,
                             keyHasColon: keyHasColon)
        }
        // `get a:1;`: the lexer drops the `;` that ends the line.
        guard base[keyEnd] == UInt8(ascii: "\n"), base[keyEnd - 1] != UInt8(ascii: ";") else { return nil }
        return PlainLine(start: start, keyStart: keyStart, keyEnd: keyEnd, end: keyEnd, value: nil, keyHasColon: keyHasColon)
    }
}
