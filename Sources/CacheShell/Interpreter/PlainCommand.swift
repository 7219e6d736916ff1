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
        let bytes = source.bytes
        var start = offset
        while start < bytes.count {
            let byte = bytes[start]
            guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
            else { break }
            start += 1
        }
        // `put ` or `get `, then a key that is a bare word: no quote, bracket, comment, option nor flag.
        guard start + 5 < bytes.count, bytes[start + 2] == UInt8(ascii: "t"), bytes[start + 3] == UInt8(ascii: " ") else { return nil }
        let isPut = bytes[start] == UInt8(ascii: "p") && bytes[start + 1] == UInt8(ascii: "u")
        guard isPut || (bytes[start] == UInt8(ascii: "g") && bytes[start + 1] == UInt8(ascii: "e")) else { return nil }
        // A get of an HTTP namespace's key is decided by its own handler (`EntryCommands.httpGet`).
        if !isPut && cache.hasHTTPNamespaces { return nil }
        let keyStart = start + 4
        switch bytes[keyStart] {
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "#"), UInt8(ascii: "-"): return nil
        default: break
        }
        // The key runs to the next space (put) or the line feed (get); bytes a key may not hold
        // (blanks among them) send the line to the lexer through `plainKey`.
        var keyEnd = keyStart
        while keyEnd < bytes.count, bytes[keyEnd] != UInt8(ascii: "\n"), bytes[keyEnd] != UInt8(ascii: " ") {
            if bytes[keyEnd] == UInt8(ascii: "=") { return nil }
            keyEnd += 1
        }
        guard keyEnd < bytes.count else { return nil }
        let end: Int
        var valueRange = 0..<0
        if isPut {
            let valueStart = keyEnd + 1
            guard bytes[keyEnd] == UInt8(ascii: " "), valueStart < bytes.count,
                  bytes[valueStart] == UInt8(ascii: "{") || bytes[valueStart] == UInt8(ascii: "[") else { return nil }
            // The line feed ending the line, if the value is short enough to be taken here.
            let valueEnd = bytes.withUnsafeBufferPointer { all -> Int in
                let limit = min(all.count - valueStart, Self.maxPlainValueBytes + 1)
                guard let found = memchr(all.baseAddress! + valueStart, Int32(UInt8(ascii: "\n")), limit) else { return all.count }
                return UnsafeRawPointer(found) - UnsafeRawPointer(all.baseAddress!)
            }
            guard valueEnd < bytes.count, valueEnd - valueStart <= Self.maxPlainValueBytes,
                  bytes[valueEnd - 1] == UInt8(ascii: "}") || bytes[valueEnd - 1] == UInt8(ascii: "]") else { return nil }
            valueRange = valueStart..<valueEnd
            end = valueEnd
        } else {
            // `get a:1;`: the lexer drops the `;` that ends the line.
            guard bytes[keyEnd] == UInt8(ascii: "\n"), bytes[keyEnd - 1] != UInt8(ascii: ";") else { return nil }
            end = keyEnd
        }
        let parsed: (key: String, value: StoredValue?)? = bytes.withUnsafeBufferPointer { all in
            guard let key = Arguments.keyIfPlain(UnsafeBufferPointer(rebasing: all[keyStart..<keyEnd])) else { return nil }
            guard isPut else { return (key, nil) }
            guard let value = Arguments.storedJSON(UnsafeBufferPointer(rebasing: all[valueRange])) else { return nil }
            return (key, value)
        }
        guard let parsed else { return nil }

        // The one wrapper every command runs in (``perform``), as `execute` would call it.
        let ok = perform(start..<end, in: source, named: isPut ? "put" : "get", on: cache) { session, cache throws(ShellError) in
            if let value = parsed.value { return ("put", .keys(cache.put(parsed.key, value, tags: []))) }
            try Arguments.checkNotNamespace(parsed.key, at: keyStart, cache, command: "get",
                                            typedBare: !bytes[keyStart..<keyEnd].contains(UInt8(ascii: ":")))
            do throws(CacheError) {
                return ("get", .read(try cache.read(parsed.key, force: false, nowait: session.frames.inScheduled), isGet: true))
            } catch {
                throw ShellError(error.message, at: start)
            }
        }
        return (end, ok)
    }
}
