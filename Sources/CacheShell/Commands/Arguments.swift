import CacheCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The words of one command after its name, sorted into positionals, `name=value` options and
/// `--flags` against what its ``CommandSpec`` declares; every problem is a `ShellError` at its word.
struct Arguments {
    let command: RawCommand
    let source: SourceFile
    /// The command's name as typed (with a subcommand's), for messages.
    var name: String {
        let skip = spec.parsing.skip
        return skip == 1 ? command.words[0].text : command.words.prefix(skip).map(\.text).joined(separator: " ")
    }
    /// The declaration the words were sorted against (its usage is quoted by arity errors).
    private let spec: CommandSpec
    private(set) var positional: [Word] = []
    private(set) var options: [String: Word] = [:]
    private(set) var flags: Set<String> = []

    /// Sorts the words of `command` (after its name, and a subcommand's) as `spec` declares them.
    init(_ command: RawCommand, _ source: SourceFile, for spec: CommandSpec) throws(ShellError) {
        self.command = command
        self.source = source
        self.spec = spec
        let skip = spec.parsing.skip, leading = spec.parsing.leading
        positional.reserveCapacity(command.words.count - skip)
        for word in command.words.dropFirst(skip) {
            if positional.count < leading || !word.isOptionOrFlag {
                positional.append(word)
            } else if let flag = word.flag {
                guard spec.parsing.flags.contains(String(flag)) else {
                    throw ShellError("\(name) has no flag --\(flag)" + Self.list(spec.parsing.flags.map { "--" + $0 }), at: word.offset)
                }
                // As an option given twice: a repeat is a typo or a pasted line, never meant.
                guard flags.insert(String(flag)).inserted else {
                    throw ShellError("\(name): flag --\(flag) given twice", at: word.offset)
                }
                // A flag and its negation (`--purgeable --no-purgeable`) contradict each other.
                let opposite = flag.hasPrefix("no-") ? String(flag.dropFirst(3)) : "no-" + flag
                if flags.contains(opposite) {
                    throw ShellError("\(name): --\(opposite) and --\(flag) do not go together", at: word.offset)
                }
            } else if let option = word.option, spec.parsing.options?.contains(String(option.name)) ?? true {
                if options[String(option.name)] != nil {
                    throw ShellError("\(name): option \(option.name)= given twice", at: word.offset)
                }
                options[String(option.name)] = word
            } else if let option = word.option, let accepted = spec.parsing.options, !accepted.isEmpty {
                throw ShellError("\(name) has no option \(option.name)=" + Self.list(accepted.map { $0 + "=" }), at: word.offset)
            } else {
                positional.append(word)
            }
        }
    }

    private static func list(_ names: [String]) -> String {
        names.isEmpty ? "" : " (it takes " + names.sorted().joined(separator: ", ") + ")"
    }

    var end: Int { command.end }

    /// Whether flag `--name` was given. A name the command's declaration lacks is a slip of the
    /// handler (a misspelled flag would read false forever): a debug build stops on it, so the
    /// tests that run the handler find it; a release build checks nothing.
    func flag(_ name: String) -> Bool {
        assert(spec.parsing.flags.contains(name), "\(self.name) reads flag --\(name), which its CommandSpec does not declare")
        return flags.contains(name)
    }

    /// The value of option `name`, as text. As for ``flag(_:)``, a debug build stops on a name the
    /// declaration lacks.
    func option(_ name: String) -> (value: Substring, word: Word)? {
        assert(spec.parsing.options?.contains(name) ?? true, "\(self.name) reads option \(name)=, which its CommandSpec does not declare")
        guard let word = options[name], let option = word.option else { return nil }
        return (option.value, word)
    }

    /// The `version=N` option (SPEC §1.1 Versions): a whole number from 0 to 2^53 (§7.1), or nil.
    func version() throws(ShellError) -> UInt64? {
        guard let (text, word) = option("version") else { return nil }
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let n = UInt64(text),
              n <= KeyAnswer.maxVersion else {
            throw ShellError("\(name): version= must be a whole number from 0 to \(KeyAnswer.maxVersion) (2^53), not \"\(text)\"",
                             at: word.offset + 8)
        }
        return n
    }

    /// Between `count.lowerBound` and `count.upperBound` positionals; the error otherwise quotes
    /// `usage`, by default what the command's declaration shows (`KEY [--force] [--nowait]`).
    func expect(_ count: ClosedRange<Int>, usage: String? = nil) throws(ShellError) {
        if positional.count < count.lowerBound {
            throw ShellError("\(name) needs \(usage ?? spec.usage)", at: command.words.last.map { $0.end } ?? command.offset)
        }
        if positional.count > count.upperBound {
            throw ShellError("\(name) takes \(usage ?? spec.usage); unexpected \"\(positional[count.upperBound].text)\"",
                             at: positional[count.upperBound].offset)
        }
    }

    // MARK: Typed values

    /// A key (`feed:home`, `home`), canonical.
    func key(_ i: Int) throws(ShellError) -> String {
        try Self.key(positional[i])
    }

    static func key(_ word: Word) throws(ShellError) -> String {
        if word.kind == .bare {
            switch word.withUTF8(plainKey) {
            case .plain: return word.text
            case .plainInDefault: return KeyName.canonical(word.text)
            case .other: break
            }
        }
        let text = word.text
        guard word.kind == .bare, !text.isEmpty else { throw ShellError("bad key \(describe(word)): keys are NAMESPACE:ID or ID", at: word.offset) }
        if let problem = KeyName.problem(withKey: text) {
            throw ShellError("bad key \(JSONValue.string(text).compactText): \(problem)", at: word.offset)
        }
        return KeyName.canonical(text)
    }

    private enum PlainKey { case plain, plainInDefault, other }

    /// ``key(_:)`` of a bare word given as its UTF-8 bytes, when it is a valid ASCII key (the
    /// common case); nil when it is not, for ``key(_:)`` to give its verdict.
    static func keyIfPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        switch plainKey(bytes) {
        case .plain: return string(ascii: bytes)
        case .plainInDefault: return KeyName.canonical(string(ascii: bytes))
        case .other: return nil
        }
    }

    /// The `String` of ASCII bytes, copied in: one of up to 15 bytes is made in place, with no
    /// UTF-8 check (`String(decoding:as:)` checked and could repair each key: about 170
    /// instructions a key of a batch); a longer one the standard library still checks.
    @inline(__always)
    private static func string(ascii bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return 0 }
            ByteCopy.copy(from: source, to: target, count: bytes.count)
            return bytes.count
        }
    }

    /// Whether `text` is a valid ASCII key, checked on its UTF-8 bytes: the common case, which
    /// skips the `Character` checks of `key(_:)` (for ASCII text, bytes and characters agree, as a
    /// bare word never holds a CR LF pair); `.plainInDefault` when it names namespace `default`
    /// (`default:x`, canonically `x`). `.other` sends the text through those checks, for their verdict.
    /// - Complexity: O(n) in the length of `text`.
    private static func plainKey(_ text: UnsafeBufferPointer<UInt8>) -> PlainKey {
        guard let base = text.baseAddress, !text.isEmpty else { return .other }
        let n = text.count
        // The namespace part, up to the first colon: name bytes only.
        var colon = 0
        while colon < n {
            let byte = base[colon]
            if byte == UInt8(ascii: ":") { break }
            if !isNameByte(byte) { break }
            colon += 1
        }
        // What follows (all of a key without a colon, or whose first part is no name): printable
        // ASCII but `*`.
        var i = colon
        while i < n {
            let byte = base[i]
            if byte >= 0x7F || byte < 0x21 || byte == UInt8(ascii: "*") { return .other }
            i += 1
        }
        guard colon < n, base[colon] == UInt8(ascii: ":") else {
            // No colon, or a first part that is no name: any later colon makes it `.other`.
            return UnsafeBufferPointer(rebasing: text[colon...]).contains(UInt8(ascii: ":")) ? .other : .plain
        }
        let namespace = UnsafeBufferPointer(start: base, count: colon)
        guard colon > 0 && colon < n - 1 && !equals(namespace, "tag") else { return .other }
        return equals(namespace, "default") ? .plainInDefault : .plain
    }

    /// Whether `bytes` spell `literal` (a namespace's name: compared in one go, not byte by byte
    /// through iterators).
    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress else { return true }
        return memcmp(base, literal.utf8Start, bytes.count) == 0
    }

    /// A name character that is ASCII: a letter, digit, -, _ or . (read from a 128-bit set:
    /// every byte of a key's namespace is looked up here).
    @inline(__always)
    static func isNameByte(_ byte: UInt8) -> Bool {
        // Bytes 0...63: - . 0-9; bytes 64...127: A-Z _ a-z.
        let low: UInt64 = 1 << 0x2D | 1 << 0x2E | 0x3FF << 0x30
        let high: UInt64 = 0x3FF_FFFF << (0x41 - 64) | 1 << (0x5F - 64) | 0x3FF_FFFF << (0x61 - 64)
        if byte < 64 { return low &>> UInt64(byte) & 1 != 0 }
        return byte < 128 && high &>> UInt64(byte &- 64) & 1 != 0
    }

    /// A namespace name.
    static func namespace(_ word: Word) throws(ShellError) -> String {
        let text = word.text
        guard word.kind == .bare, !text.isEmpty else {
            throw ShellError("bad namespace name \(describe(word)): use letters, digits, -, _ and .", at: word.offset)
        }
        guard let problem = KeyName.problem(withNamespace: text) else { return text }
        throw ShellError(text == "tag" ? problem : "bad namespace name \(describe(word)): \(problem)", at: word.offset)
    }

    /// A target: `KEY`, `NS:*` or `tag:T`.
    func target(_ i: Int) throws(ShellError) -> Target {
        let word = positional[i]
        if word.text.hasPrefix("tag:") {
            let tag = word.text.dropFirst(4)
            guard !tag.isEmpty else { throw ShellError("bad target \"\(word.text)\": tag:T needs a tag name", at: word.offset) }
            return .tag(String(tag))
        }
        if word.text.hasSuffix(":*") {
            let ns = word.text.dropLast(2)
            guard !ns.isEmpty, ns.allSatisfy(KeyName.isNameCharacter) else {
                throw ShellError("bad target \"\(word.text)\": use KEY, NS:* or tag:T", at: word.offset)
            }
            return .namespace(String(ns))
        }
        return .key(try key(i))
    }

    /// ``target(_:)``, with a key checked in `cache` as ``key(_:in:scopes:)`` does.
    func target(_ i: Int, in cache: isolated Cache) throws(ShellError) -> Target {
        let target = try target(i)
        if case .key(let key) = target {
            try Self.checkNotNamespace(key, at: positional[i].offset, cache, command: name, scopes: true,
                                       typedBare: !positional[i].text.contains(":"))
        }
        return target
    }

    /// A duration word (`250ms`, `1h30m`).
    static func duration(_ text: Substring, at offset: Int) throws(ShellError) -> Int64 {
        guard let ms = TimeText.parseDuration(text) else { throw ShellError(TimeText.durationError(text), at: offset) }
        return ms
    }

    /// A duration, or nil for `none` (an option whose limit may be unset: `stale=none`); an
    /// error says that `none` is taken too.
    static func durationOrNone(_ text: Substring, at offset: Int) throws(ShellError) -> Int64? {
        if text == "none" { return nil }
        guard let ms = TimeText.parseDuration(text) else { throw ShellError(TimeText.durationError(text) + " (or none)", at: offset) }
        return ms
    }

    func duration(_ i: Int) throws(ShellError) -> Int64 {
        try Self.duration(Substring(positional[i].text), at: positional[i].offset)
    }

    /// A JSON value: a JSON word, a quoted string, or a bare word (JSON if it parses, else a string).
    /// - Throws: also for a value larger than a value may be (`JSONValue.maxBytes`).
    static func value(_ word: Word) throws(ShellError) -> JSONValue {
        let value = try anyValue(word)
        if mayBeTooLarge(word), let problem = value.sizeProblem { throw ShellError(problem, at: word.offset) }
        return value
    }

    /// Whether a word is long enough to give a value larger than `JSONValue.maxBytes`. A value's
    /// canonical text is at most 6 times as long as the word that gives it (a DEL written as
    /// `\u007f`; a number such as `1e14` as `100000000000000.0`, 4.25 times), so a shorter
    /// word is not measured: the limit costs a typed `put` one comparison.
    @inline(__always)
    static func mayBeTooLarge(_ word: Word) -> Bool {
        word.byteCount > JSONValue.maxBytes / 8
    }

    /// `value(_:)` of any size.
    private static func anyValue(_ word: Word) throws(ShellError) -> JSONValue {
        switch word.kind {
        case .quoted:
            return .string(word.text)
        case .json:
            let parsed = word.withUTF8 { bytes in Result { () throws(JSONError) -> JSONValue in try JSONValue(parsing: bytes) } }
            switch parsed {
            case .success(let value): return value
            case .failure(let error): throw ShellError("bad JSON: \(error.message)", at: word.offset + error.offset)
            }
        case .bare:
            if let first = word.text.utf8.first,
               first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
                || word.text == "true" || word.text == "false" || word.text == "null",
               let parsed = try? JSONValue(parsing: word.text) {
                return parsed
            }
            // A bare word that is a JSON number but for its size is refused like `[1e400]`, not
            // stored as the string "1e400": one rule for numbers out of range.
            if let problem = Self.outOfRangeNumber(word.text) {
                let hint = "quote it to store the text"
                throw ShellError(problem.hasSuffix(")") ? "\(problem.dropLast()); \(hint))" : "\(problem) (\(hint))", at: word.offset)
            }
            return .string(word.text)
        }
    }

    func value(_ i: Int) throws(ShellError) -> JSONValue { try Self.value(positional[i]) }

    /// The tags of a `tags=a,b` option (`text`, the word `word`), in the order given; an empty
    /// one (`a,,b`, a trailing comma) is an error of `command`.
    static func tags(_ text: Substring, at word: Word, command: String, option: String) throws(ShellError) -> [String] {
        let tags = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if tags.contains(where: \.isEmpty) { throw ShellError("\(command): empty tag in \(option)=\(text)", at: word.offset) }
        return tags
    }

    /// ``value(_:)`` in the form the cache keeps it: a JSON word goes from its text to its stored
    /// form without a tree where it can (``storedJSON(_:)``).
    static func storedValue(_ word: Word) throws(ShellError) -> StoredValue {
        if word.kind == .json, let stored = word.withUTF8(storedJSON) {
            if mayBeTooLarge(word) && stored.utf8Count > JSONValue.maxBytes { throw ShellError(JSONValue.tooLarge, at: word.offset) }
            return stored
        }
        return StoredValue(try value(word))
    }

    /// The stored form of a JSON text (a JSON word's bytes), checked and canonicalised in one pass
    /// without a tree (``StoredValue/init(parsingJSON:maxDepth:)``, byte for byte what the tree
    /// gives); nil when it is not JSON, for ``value(_:)`` to say why.
    static func storedJSON(_ bytes: UnsafeBufferPointer<UInt8>) -> StoredValue? {
        try? StoredValue(parsingJSON: bytes)
    }

    /// Why `text`, which has the grammar of a JSON number (RFC 8259), is refused as one (the JSON
    /// reader's one rule for numbers: out of a 64-bit float's range, read as 0, or a whole number
    /// past 64 bits); nil when it is not such a number.
    static func outOfRangeNumber(_ text: String) -> String? {
        guard isNumberGrammar(text) else { return nil }
        do { _ = try JSONValue(parsing: text) } catch { return error.message }
        return nil
    }

    /// Whether `text` has the grammar of a JSON number (RFC 8259).
    static func isNumberGrammar(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var i = 0
        func digits() -> Int {
            let start = i
            while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
            return i - start
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        let intDigits = digits()
        guard intDigits > 0, intDigits == 1 || bytes[intStart] != UInt8(ascii: "0") else { return false }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == bytes.count
    }

    /// A patch: a JSON object (or any JSON value, which replaces the whole value per RFC 7396).
    func patch(_ i: Int) throws(ShellError) -> Patch {
        let document = try value(i)
        do { return try Patch(document) } catch { throw ShellError("bad patch: \(error)", at: positional[i].offset) }
    }

    /// A whole number from 0 to 2^31 - 1, the most a count may be (SPEC §7.1), so that a snapshot
    /// or a store holding it reads back.
    func count(_ i: Int, what: String) throws(ShellError) -> Int {
        guard let n = Int(positional[i].text), n >= 0 else {
            throw ShellError("\(name): \(what) must be a whole number, not \"\(positional[i].text)\"", at: positional[i].offset)
        }
        guard n <= Int(Int32.max) else {
            throw ShellError("\(name): \(what) must be at most \(Int32.max), not \(n)", at: positional[i].offset)
        }
        return n
    }

    static func describe(_ word: Word) -> String {
        word.kind == .bare ? "\"\(word.text)\"" : "(a JSON value)"
    }

    /// The source text from word `i` to the end of the command (`at D COMMAND`, `echo TEXT`).
    func rest(from i: Int) -> (text: String, offset: Int) {
        let words = command.words
        guard i < words.count else { return ("", command.end) }
        let start = words[i].offset
        return (String(decoding: source.bytes[start..<command.end], as: UTF8.self), start)
    }
}

// MARK: - Known namespaces

extension Arguments {
    /// The namespaces a command may name (SPEC §3): defined by `ns` or a configuration, or of a
    /// key the cache has held or been asked for.
    /// - Complexity: O(namespaces log namespaces).
    static func knownNamespaces(_ cache: isolated Cache) -> [String] {
        cache.knownNamespaces()
    }

    /// `name`, when it is a known namespace; else an error at `word` naming what is known, with
    /// the close one first.
    static func knownNamespace(_ name: String, at word: Word, _ cache: isolated Cache, command: String) throws(ShellError) -> String {
        let known = knownNamespaces(cache)
        if known.contains(name) { return name }
        throw ShellError("\(command): unknown namespace \(JSONValue.string(name).compactText)" + namespaceHint(name, known),
                         at: word.offset)
    }

    /// What the error of an unknown namespace adds: a close name, what is known, or how to define one.
    static func namespaceHint(_ name: String, _ known: [String]) -> String {
        if let near = Session.nearest(name, among: known) { return " (did you mean \(near)?)" }
        if known.isEmpty { return " (none is known yet: ns NAME, load or an entry defines one)" }
        let shown = known.prefix(8).joined(separator: ", ") + (known.count > 8 ? ", ..." : "")
        return " (known: \(shown))"
    }

    /// A key read by a command, checked in `cache`: word `i` as ``key(_:)`` gives it, unless it is a
    /// bare word without a colon that names a known namespace and no key the cache holds
    /// (`invalidate feed` for `feed:*`): a slip that would otherwise do nothing or ask the server
    /// for a key no one meant. `default:feed` still names that key.
    func key(_ i: Int, in cache: isolated Cache, scopes: Bool = false) throws(ShellError) -> String {
        let key = try key(i)
        try Self.checkNotNamespace(key, at: positional[i].offset, cache, command: name, scopes: scopes,
                                   typedBare: !positional[i].text.contains(":"))
        return key
    }

    /// The check of ``key(_:in:scopes:)`` for a key already read from the word at `offset`. `scopes` says that
    /// the command also takes `NS:*`, which the error then suggests; else it suggests a key of NS.
    /// `typedBare` says that the word had no colon (not `default:feed`, which names the key).
    static func checkNotNamespace(_ key: String, at offset: Int, _ cache: isolated Cache, command: String,
                                  scopes: Bool = false, typedBare: @autoclosure () -> Bool) throws(ShellError) {
        guard !hasColon(key), typedBare(), cache.isKnownNamespace(key),
              cache.peek(key).state == .absent else { return }
        let fix = scopes ? "did you mean \(key):*?" : "did you mean a key \(key):ID? keys \(key):* lists them"
        throw ShellError("\(command): \(JSONValue.string(key).compactText) is a namespace, and no key of that name is cached "
                         + "(\(fix); default:\(key) names the key)", at: offset)
    }

    /// Whether `text` holds a colon, its bytes scanned in place: every key a batch reads passes
    /// here, and a scan of the generic UTF-8 view cost about 220 instructions a key (+1.3% of a
    /// batch's instructions).
    private static func hasColon(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: ":")) } ?? text.utf8.contains(UInt8(ascii: ":"))
    }

    /// Checks that a `keys` pattern can match a known namespace: `NS:...` where NS (a glob too)
    /// matches a known one. A pattern without a colon is a key of namespace `default` (or a glob
    /// over every key); but a plain word that names a known namespace and no key (`keys feed`)
    /// asks for `feed:*`.
    static func checkPattern(_ pattern: String, at word: Word, _ cache: isolated Cache, command: String) throws(ShellError) {
        let known = knownNamespaces(cache)
        let isGlob: (Substring) -> Bool = { $0.contains { "*?[".contains($0) } }
        guard let colon = pattern.firstIndex(of: ":") else {
            if isGlob(pattern[...]) { return }
            if known.contains(pattern) && cache.peek(pattern).state == .absent {
                throw ShellError("\(command): \(JSONValue.string(pattern).compactText) is a namespace; a pattern is over keys "
                                 + "(did you mean \(pattern):*?)", at: word.offset)
            }
            return
        }
        let namespace = pattern[..<colon]
        if isGlob(namespace) {
            let glob = Glob(String(namespace))
            if known.contains(where: { glob.matches($0) }) || known.isEmpty && namespace == "*" { return }
            throw ShellError("\(command): \(JSONValue.string(String(namespace)).compactText) matches no namespace"
                             + namespaceHint(String(namespace), known), at: word.offset)
        }
        _ = try knownNamespace(String(namespace), at: word, cache, command: command)
    }
}
