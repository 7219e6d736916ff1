import CacheCore

/// Commands declared together: one subsection of the man page's COMMANDS, in its order, and
/// (mostly) one file of `Commands/`.
public struct CommandFamily: Sendable {
    /// The man page's subsection title (`Reading and writing`).
    public let title: String
    /// Its commands, in the order `help` and the man page list them.
    public let commands: [CommandSpec]
}

/// Every command of the shell, in the order of SPEC §3 and the man page: the source of `help`, the
/// handler table, tab completion, argument hints and the man page's command list.
public enum CommandCatalog {
    /// The families, in the order of the man page's COMMANDS subsections.
    public static let families: [CommandFamily] = [
        ConfigCommands.family,
        ClockCommands.family,
        EntryCommands.family,
        RealtimeCommands.family,
        LifecycleCommands.family,
        ServerCommands.family,
        ObserveCommands.family,
        SessionCommands.family,
    ]

    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = families.flatMap(\.commands)

    /// The command named `name`, or nil.
    /// - Complexity: O(1).
    public static func info(_ name: String) -> CommandSpec? {
        byName[name].map { all[$0] }
    }

    private static let byName: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })

    /// Every command's index in ``all`` by its name.
    static let names = NameTable(all.enumerated().map { ($1.name, $0) })
    /// ``names`` and the aliases (``Session/aliases``), which a bare word may name.
    static let namesAndAliases = NameTable(all.enumerated().map { ($1.name, $0) }
        + Session.aliases.map { alias, name in (alias, all.firstIndex { $0.name == name }!) })

    /// The form a command's second word names (`next` in `server next a:1`), when the command
    /// named `name` has subcommands and `bytes`, the command's text, names one: the `subcommand`
    /// field of its error's JSON (SPEC §4). Looked at only when a command failed.
    static func subcommand(of name: String, in bytes: ArraySlice<UInt8>) -> String? {
        guard let spec = info(name), !spec.subcommands.isEmpty else { return nil }
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let words = bytes.split(maxSplits: 2, omittingEmptySubsequences: true, whereSeparator: blank)
        guard words.count >= 2 else { return nil }
        return spec.subcommands.first { $0.name.utf8.elementsEqual(words[1]) }?.name
    }

    /// The command that writes a recorded call of `kind` (``CallForm``), or nil (`unsupported`).
    /// Built when a recording is first written, not at start-up.
    static func callForm(_ kind: CacheCall.Kind) -> (spec: CommandSpec, form: CallForm)? { callForms[kind] }

    static let callForms: [CacheCall.Kind: (spec: CommandSpec, form: CallForm)] = {
        var forms: [CacheCall.Kind: (spec: CommandSpec, form: CallForm)] = [:]
        for spec in all + all.flatMap(\.subcommands) {
            guard let form = spec.writes else { continue }
            for kind in form.kinds { forms[kind] = (spec, form) }
        }
        return forms
    }()

    /// What the value of each option name is. An option name means one thing in every command
    /// (`tags=` is always a list of tags), so a value completes the same wherever it is typed.
    static let optionKinds: [String: CommandSpec.Option.Kind] = {
        var kinds: [String: CommandSpec.Option.Kind] = [:]
        for spec in all + all.flatMap(\.subcommands) {
            for option in spec.options where option.kind != .pushParameters { kinds[option.name] = option.kind }
        }
        return kinds
    }()
}

// MARK: - Where a JSON value may span lines

/// What the lexer knows of a word already read in the command it is lexing: enough to find the
/// command's declaration and count its arguments (``CommandCatalog/mayContinueJSON(after:)``).
struct PrecedingWord: Sendable {
    /// A bare word's first ``PrecedingWord/inlineBytes`` bytes, held inline (no allocation per
    /// word): enough for any command or subcommand name.
    private var head: (UInt64, UInt64) = (0, 0)
    /// How many bytes of `head` hold the word; ``longWord`` when the word is longer (it names no command).
    private var length: UInt8 = 0
    var isBare: Bool
    /// A bare `name=value` option or `--name` flag, judged on the word's first ``maxBytes`` bytes.
    var isOptionOrFlag = false

    /// Bytes of a word looked at: more than any command name.
    static let maxBytes = 64
    /// Words of a command kept: more than any declaration has before a JSON argument, with `at`
    /// nested as deep as it may be (16 levels, 32 words, then `diff {SNAPSHOT} {SNAPSHOT2}`). A
    /// bracket after more words may span lines.
    static let maxWords = 40
    private static let inlineBytes = 16
    private static let longWord: UInt8 = .max

    /// A quoted word or a JSON value.
    static let notBare = PrecedingWord(isBare: false)

    private init(isBare: Bool) { self.isBare = isBare }

    /// A bare word, from its UTF-8 text (of which the first ``maxBytes`` bytes count).
    init(bare text: UnsafeBufferPointer<UInt8>) {
        isBare = true
        let text = UnsafeBufferPointer(rebasing: text.prefix(Self.maxBytes))
        isOptionOrFlag = Self.isOptionOrFlag(text)
        if text.count > Self.inlineBytes {
            length = Self.longWord
        } else {
            length = UInt8(text.count)
            withUnsafeMutableBytes(of: &head) { head in
                for (i, byte) in text.enumerated() { head[i] = byte }
            }
        }
    }

    /// Calls `body` with the word's bytes when it may be a name (empty for a long word or one not bare).
    func withName<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let count = length == Self.longWord ? 0 : Int(length)
        return withUnsafeBytes(of: head) { raw in
            body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
        }
    }

    /// Whether `text` is `name=value` or `--name`, the name matching `[a-z][a-z0-9-]*`.
    static func isOptionOrFlag(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        func isName(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            guard let first = name.first, first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") else { return false }
            return name.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-") }
        }
        if let equals = text.firstIndex(of: UInt8(ascii: "=")), isName(text[..<equals]) { return true }
        return text.count > 2 && text[0] == UInt8(ascii: "-") && text[1] == UInt8(ascii: "-") && isName(text[2...])
    }
}

/// Names looked up by their UTF-8 bytes, without building a `String` or hashing: buckets by
/// length and first byte, each a short list compared byte by byte.
struct NameTable<Value: Sendable>: Sendable {
    private var buckets: [[(name: [UInt8], value: Value)]] = Array(repeating: [], count: 512)

    init(_ pairs: [(String, Value)]) {
        for (name, value) in pairs {
            let bytes = Array(name.utf8)
            buckets[Self.bucket(bytes.count, bytes.first ?? 0)].append((bytes, value))
        }
    }

    @inline(__always)
    private static func bucket(_ count: Int, _ first: UInt8) -> Int { (count & 15) << 5 | Int(first & 31) }

    /// The value named by `bytes`, or nil.
    /// - Complexity: O(length of the name) for a table of distinct names.
    func lookup(_ bytes: UnsafeBufferPointer<UInt8>) -> Value? {
        guard let first = bytes.first else { return nil }
        for entry in buckets[Self.bucket(bytes.count, first)] where entry.name.count == bytes.count {
            if entry.name.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) { return entry.value }
        }
        return nil
    }
}

extension CommandCatalog {
    /// Whether a JSON object or array that starts after `preceding` is a snapshot document
    /// (`restore {SNAPSHOT}`, `diff {SNAPSHOT} {SNAPSHOT2}`), which may nest its own levels around values as
    /// deep as any (SPEC §7: read as a snapshot file is).
    /// A command `at` schedules (`at 1s diff {SNAPSHOT}`) is looked at as typed alone.
    static func takesDocument(after preceding: [PrecedingWord]) -> Bool {
        var words = preceding[...]
        while words.count > 2, let first = words.first, first.isBare, first.withName({ $0.elementsEqual("at".utf8) }) {
            words = words.dropFirst(2)
        }
        guard let first = words.first, first.isBare, words.count <= 2 else { return false }
        return first.withName { name in
            (name.elementsEqual("restore".utf8) && words.count == 1) || name.elementsEqual("diff".utf8)
        }
    }

    /// Whether a JSON object or array that starts after `preceding` (the words of its command read
    /// so far) may go on past the end of its line: yes where the command's declaration takes a
    /// JSON value (`put KEY VALUE`, `event patch KEY PATCH`, `restore {SNAPSHOT}`, a FILE, which may
    /// be given inline), and wherever it declares nothing (an unknown command, an extra word: the
    /// command reports those). No where it takes a key, a pattern, a name, a duration or text
    /// (`keys [fg]*`, `echo step [1 of 3`): there the brackets must balance on their line, and a
    /// word that balances and goes on (`[fg]*`) is one word.
    ///
    /// The lexer and ``CommandScanner`` both ask this, with the same words, so they agree on where
    /// a command ends.
    /// - Complexity: O(words) for up to ``PrecedingWord/maxWords`` words.
    static func mayContinueJSON(after preceding: [PrecedingWord]) -> Bool {
        guard preceding.count < PrecedingWord.maxWords else { return true }
        var words = preceding[...]
        // Nested command lines (`at 5s put k {`): each round looks at one command's declaration.
        for _ in 0..<PrecedingWord.maxWords {
            guard let first = words.first, first.isBare else { return true }
            guard let found = first.withName({ namesAndAliases.lookup($0) }) else { return true }
            words = words.dropFirst()
            if let shape = plainShapes[found] {
                // The common case (`put KEY {`): the answer by the positional's index alone.
                var index = 0
                for word in words where !(index >= shape.leading && word.isBare && word.isOptionOrFlag) { index += 1 }
                return shape.takesJSON[min(index, shape.takesJSON.count - 1)]
            }
            var spec = all[found]
            if !spec.subcommands.isEmpty {
                guard let second = words.first, second.isBare,
                      let sub = second.withName({ name in spec.subcommands.first(where: { $0.name.utf8.elementsEqual(name) }) })
                else { return true }
                spec = sub
                words = words.dropFirst()
            }
            // The positional this word is: options and flags after the leading ones do not count.
            var index = 0
            var position = words.startIndex
            var restStart: Int?
            while position < words.endIndex {
                if index < spec.arguments.count, spec.arguments[index].takesRest {
                    restStart = position
                    break
                }
                let word = words[position]
                if !(index >= spec.parsing.leading && word.isBare && word.isOptionOrFlag) { index += 1 }
                position += 1
            }
            if let restStart {
                // Inside the rest of the line: a command line to look into, or text.
                guard spec.arguments[index].alternatives.contains(where: { $0.kind == .command }) else { return false }
                words = words[restStart...]
                continue
            }
            let argument: CommandSpec.Argument?
            if index < spec.arguments.count {
                argument = spec.arguments[index]
            } else if let last = spec.arguments.last, last.repeats {
                argument = last
            } else {
                argument = nil
            }
            guard let argument else { return true }
            return takesJSON(argument)
        }
        return true
    }

    /// Whether a JSON value written as `argument` may span lines.
    private static func takesJSON(_ argument: CommandSpec.Argument) -> Bool {
        argument.alternatives.contains { alternative in
            switch alternative.kind {
            case .value, .patch, .file: true
            // The first word of a command line: a bracket there is no command, which the command reports.
            case .command: argument.takesRest
            case .text: argument.takesRest ? false : alternative.text.hasPrefix("{") || alternative.text.hasPrefix("[")
            default: false
            }
        }
    }

    /// A command with neither subcommands nor an argument that takes the rest of the line: what
    /// ``mayContinueJSON(after:)`` answers depends only on the index of the positional.
    private struct PlainShape {
        /// Words before options and flags count as positionals.
        let leading: Int
        /// The answer for each positional index; the last one for every index from there on.
        let takesJSON: [Bool]
    }

    /// ``PlainShape`` of each command of ``all``, by index; nil for the others.
    private static let plainShapes: [PlainShape?] = all.map { spec in
        guard spec.subcommands.isEmpty, !spec.arguments.contains(where: \.takesRest) else { return nil }
        var answers = spec.arguments.map(takesJSON)
        // Past the declared arguments: the last one again if it repeats, else anything (the command reports it).
        answers.append(spec.arguments.last.map { $0.repeats ? takesJSON($0) : true } ?? true)
        return PlainShape(leading: spec.parsing.leading, takesJSON: answers)
    }

}
