import CacheCore
import CacheReplay

/// What Tab offers for the word before the cursor.
public struct CompletionResult: Equatable, Sendable {
    /// The typed text the candidates replace: the end of the word before the cursor
    /// (all of it, or what follows `tag:`, `tags=`, a `,` or a directory's `/`).
    public var replaced: String
    /// Matching candidates, sorted, at most the limit asked for.
    public var candidates: [String]
    /// How many candidates match in all (more than `candidates.count` when limited).
    public var total: Int
    /// The longest text every match starts with.
    public var commonPrefix: String

    public init(replaced: String, candidates: [String], total: Int, commonPrefix: String) {
        self.replaced = replaced; self.candidates = candidates; self.total = total; self.commonPrefix = commonPrefix
    }

    /// What follows a unique match: a space, unless the match is only the start of a word
    /// (a namespace's `ns:`, `tag:`, an option's `=`, a directory's `/`).
    public static func terminator(after candidate: String) -> String {
        if let last = candidate.last, [":", "=", "/", ","].contains(last) { return "" }
        return " "
    }
}

/// Tab completion and argument hints for typed cachesh commands: pure functions of the text
/// before the cursor, a ``CompletionSnapshot`` and the command catalog.
public enum Completer {
    /// The candidates for the word before the cursor, or nil when nothing applies (inside a
    /// JSON value, after an unknown command, a comment).
    ///
    /// `before` is everything typed for the command up to the cursor (earlier continuation lines
    /// included). `listDirectory` lists a directory (`""` for the working one) as names, with
    /// a `/` after directories.
    /// - Complexity: O(log n) in the number of cached keys, plus the candidates returned.
    public static func complete(_ before: String, in snapshot: CompletionSnapshot, limit: Int = 200,
                                listDirectory: (String) -> [String] = { _ in [] }) -> CompletionResult? {
        guard let line = TypedLine(before), !line.insideValue else { return nil }
        return withoutActuallyEscaping(listDirectory) { listDirectory in
            var collector = Collector(fragment: line.current, snapshot: snapshot, limit: limit, listDirectory: listDirectory)
            collector.collect(words: line.words[...])
            return collector.result()
        }
    }

    /// The hint shown after the cursor at the end of a typed line: the rest of the command's
    /// synopsis (arguments already typed left out), or the state and time to expiry of the cached
    /// key just typed. Nil when there is nothing to show.
    /// - Complexity: O(log n) in the number of cached keys, plus the line's length.
    public static func hint(for text: String, in snapshot: CompletionSnapshot) -> String? {
        guard let line = TypedLine(text), !line.insideValue else { return nil }
        var words = line.words[...]
        if !line.current.isEmpty { words.append(line.current) }
        // `at D COMMAND`: the hint of the scheduled command.
        while let first = words.first, let index = CommandCatalog.info(first)?.commandLineIndex, words.count >= index + 2 {
            words = words.dropFirst(index + 1)
        }
        guard let name = words.first, let spec = CommandCatalog.info(name) else { return nil }
        if !line.current.isEmpty, words.count > 1, let summary = snapshot.summary(of: line.current) {
            return describe(summary)
        }
        let arguments = Array(words.dropFirst())
        let positional = arguments.filter { !CommandForm.isOptionWord($0) }
        let options = arguments.filter(CommandForm.isOptionWord)
        // Before any argument, the synopsis as shown (`server SUBCOMMAND ...`), then its forms.
        let variants = positional.isEmpty ? [CommandForm.synopsis(of: spec)] : CommandForm.forms(of: spec)
        for variant in variants {
            guard variant.slotAfter(positional) != nil else { continue }
            let rest = variant.remainder(filled: positional.count, typedOptions: options)
            return rest.isEmpty ? nil : rest
        }
        return nil
    }

    /// The values option `option` of `command` takes, when they are few and named (`policy=`,
    /// `naive=`, `format=`, `none` for a duration that may be unset); `list` when it takes
    /// several, comma-separated. Nil for an option whose values are open (a duration, a file).
    static func optionValues(command: String, option: String) -> (values: [String], list: Bool)? {
        switch (command, option) {
        case (_, "naive"): return (NaivePolicy.allCases.map(\.rawValue) + ["none"], true)
        case ("replay", "policy"): return (EvictionPolicy.allCases.map(\.rawValue), true)
        case (_, "policy"): return (Eviction.allCases.map(\.rawValue), false)
        case ("replay", "format"): return (["keys", "timed", "csv", "oracle"], false)
        case ("replay", "time-unit"): return (["s", "ms", "us"], false)
        case ("replay", "header"): return (["yes", "no"], false)
        case ("ns", "stale"), ("ns", "stale-if-error"), ("ns", "timeout"), ("ns", "max"), ("ns", "dedupe"): return (["none"], false)
        default: return nil
        }
    }

    /// `fresh, expires in 44m59s`, `expired 3s ago`.
    static func describe(_ summary: (state: EntryState, expiresInMs: Int64)) -> String {
        if summary.expiresInMs == .max { return "\(summary.state.rawValue), never expires" }
        if summary.expiresInMs > 0 {
            return "\(summary.state.rawValue), expires in \(TimeText.formatDuration(summary.expiresInMs))"
        }
        return "expired \(TimeText.formatDuration(-summary.expiresInMs)) ago"
    }
}

/// A typed command cut into words: the complete ones and the one the cursor is in. Spaces inside
/// JSON brackets or strings do not separate words.
struct TypedLine {
    var words: [String] = []
    var current = ""
    /// The text ends inside a JSON value or string.
    var insideValue = false

    /// Nil for a comment.
    init?(_ text: String) {
        if text.drop(while: \.isWhitespace).hasPrefix("#") { return nil }
        var depth = 0
        var inString = false
        var escaped = false
        for c in text {
            if inString {
                current.append(c)
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
                continue
            }
            if c.isWhitespace && depth == 0 {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            switch c {
            case "\"":
                inString = true
                current.append(c)
            case "{", "[":
                depth += 1
                current.append(c)
            case "}", "]":
                depth = max(0, depth - 1)
                current.append(c)
            default:
                current.append(c)
            }
        }
        insideValue = inString || depth > 0 || current.hasPrefix("\"") || current.hasPrefix("{") || current.hasPrefix("[")
    }
}

/// Gathers candidates from the sources that apply to one word.
private struct Collector {
    let fragment: String
    let snapshot: CompletionSnapshot
    let limit: Int
    let listDirectory: (String) -> [String]

    /// Candidates from small sources (commands, namespaces, options...).
    var small: Set<String> = []
    /// A range of cached keys that match.
    var keyRange: Range<Int>?
    /// Set when the candidates replace only the end of the word.
    var replaced: String?

    init(fragment: String, snapshot: CompletionSnapshot, limit: Int, listDirectory: @escaping (String) -> [String]) {
        self.fragment = fragment
        self.snapshot = snapshot
        self.limit = limit
        self.listDirectory = listDirectory
    }

    mutating func collect(words: ArraySlice<String>) {
        guard let name = words.first else {
            offer(CommandCatalog.all.map(\.name))
            return
        }
        guard let spec = CommandCatalog.info(name) else { return }
        if let index = spec.commandLineIndex {
            // `at D COMMAND`: complete the scheduled command.
            if words.count >= index + 1 { collect(words: words.dropFirst(index + 1)) }
            return
        }
        let arguments = Array(words.dropFirst())
        let positional = arguments.filter { !CommandForm.isOptionWord($0) }

        if fragment.hasPrefix("--") {
            offer(spec.optionNames.filter { $0.hasPrefix("--") })
            return
        }
        if let eq = fragment.firstIndex(of: "="), CommandForm.isOptionWord(fragment) {
            // A value after `name=`: tags after `tags=` (a comma-separated list), or one of the
            // values an option takes (`policy=lru`, `naive=join-refetch,serve-expired`).
            let option = String(fragment[..<eq])
            let value = fragment[fragment.index(after: eq)...]
            let last = value.lastIndex(of: ",").map { value[value.index(after: $0)...] } ?? value
            if CommandCatalog.optionKinds[option] == .tags {
                offerPart(snapshot.tags, replacing: String(last))
            } else if let choices = Completer.optionValues(command: name, option: option) {
                offerPart(choices.values, replacing: String(choices.list ? last : value))
            }
            return
        }

        var sawSlot = false
        var optionsAllowed = false
        for variant in CommandForm.forms(of: spec) {
            guard let (slot, index) = variant.slotAfter(positional) else { continue }
            sawSlot = true
            if let slot {
                offer(slot.literals)
                for kind in slot.kinds { offer(kind) }
                if slot.optional || slot.repeats && index < positional.count { optionsAllowed = true }
            } else {
                optionsAllowed = true
            }
        }
        if !sawSlot && fragment.contains(":") { offerKeys() }
        if optionsAllowed || !sawSlot {
            offer(spec.optionNames)
            // `push TYPE [name=value...]`: the parameters of the push type given.
            if spec.options.contains(where: { $0.kind == .pushParameters }), let type = positional.first,
               let rule = snapshot.pushTypes.first(where: { $0.name == type }) {
                offer(rule.parameters.map { $0 + "=" })
            }
        }
    }

    private mutating func offer(_ kind: CommandSpec.Argument.Kind) {
        switch kind {
        case .key, .pattern:
            offerKeys()
            if !fragment.contains(":") { offer(snapshot.namespaces.map { $0 + ":" }) }
        case .namespace:
            offer(snapshot.namespaces)
        case .namespaceScope:
            offer(snapshot.namespaces.map { $0 + ":*" })
        case .tag:
            if fragment.hasPrefix("tag:") {
                offerPart(snapshot.tags, replacing: String(fragment.dropFirst(4)))
            } else {
                offer(["tag:"])
            }
        case .file:
            let slash = fragment.lastIndex(of: "/")
            let directory = slash.map { String(fragment[...$0]) } ?? ""
            let base = slash.map { String(fragment[fragment.index(after: $0)...]) } ?? fragment
            let names = listDirectory(directory).filter { base.hasPrefix(".") || !$0.hasPrefix(".") }
            offerPart(names, replacing: base)
        case .pushType:
            offer(snapshot.pushTypes.map(\.name))
        case .command:
            offer(CommandCatalog.all.map(\.name))
        case .word, .value, .patch, .duration, .count, .id, .text:
            // A word with a colon is a key, whatever the argument is declared as.
            if fragment.contains(":") { offerKeys() }
        }
    }

    /// Candidates that replace the whole word.
    private mutating func offer(_ names: [String]) {
        guard replaced == nil else { return }
        for name in names where name.hasPrefix(fragment) {
            small.insert(name)
        }
    }

    private mutating func offerKeys() {
        guard replaced == nil else { return }
        keyRange = snapshot.keyRange(prefix: fragment)
    }

    /// Candidates that replace only the end of the word (after `tag:`, `/`, `,`): then the sole
    /// source of this completion.
    private mutating func offerPart(_ names: [String], replacing part: String) {
        if part == fragment {
            offer(names)
            return
        }
        replaced = part
        keyRange = nil
        small = Set(names.filter { $0.hasPrefix(part) })
    }

    func result() -> CompletionResult? {
        let keys = keyRange ?? 0..<0
        var candidates = small
        let taken = keys.prefix(limit)
        for i in taken { candidates.insert(snapshot.keys[i]) }
        guard !candidates.isEmpty else { return nil }
        var prefix: String?
        for candidate in small { prefix = prefix.map { Bytes.commonPrefix($0, candidate) } ?? candidate }
        if let first = keys.first, let last = keys.last {
            // The keys are sorted: what the first and last of the range share, all of it shares.
            prefix = Bytes.commonPrefix(prefix ?? snapshot.keys[first], snapshot.keys[first])
            prefix = Bytes.commonPrefix(prefix!, snapshot.keys[last])
        }
        return CompletionResult(replaced: replaced ?? fragment, candidates: Array(candidates.sorted().prefix(limit)),
                                total: candidates.count + keys.count - taken.count, commonPrefix: prefix ?? "")
    }
}
