@testable import CacheShell
import CacheCore
import Testing
import TestSupport


/// Words a script is made of: every command, subcommand, literal word, option and flag the command
/// catalog declares (so a new command is fuzzed the day it is declared), keys, targets, durations
/// (small ones mostly, so no input runs long), values and broken JSON.
private enum Vocabulary {
    static let specs = CommandCatalog.all + CommandCatalog.all.flatMap(\.subcommands)
    /// Every command, and two that are not.
    static let commands = CommandCatalog.all.map(\.name) + ["gett", "frob"]
    /// A few values of each kind of option, a bad one among them.
    static let optionValues: [CommandSpec.Option.Kind: [String]] = [
        .duration: ["0ms", "50ms", "1s", "5m", "none", "x", ""],
        .count: ["0", "1", "3", "-1", "x"],
        .tags: ["t", "t,u", ","],
        .text: ["a", "1", "lru", "csv", "yes", "x.csv", ""],
    ]
    /// Subcommands, literal words of the arguments (`reset`, `entity`, `stop`), flags, and options
    /// with values.
    static let declared: [String] = {
        var words: Set<String> = []
        for spec in specs {
            if spec.example.isEmpty { words.insert(spec.name) }
            for alternative in spec.arguments.flatMap(\.alternatives) where alternative.kind == .word { words.insert(alternative.text) }
            for flag in spec.parsing.flags { words.insert("--" + flag) }
            for option in spec.options {
                for value in optionValues[option.kind] ?? [] { words.insert(option.name + "=" + value) }
            }
        }
        return words.sorted()
    }()
    static let words: [String] = declared + [
        // keys and targets
        "a", "b", "feed:1", "feed:home", "profile:42", "page:1", "default:a", "feed:*", "page:*", "tag:t",
        "tag:", "*", ":", "x:", ":y", "tag:x", "a*b", "feed",
        // push parameters, names no command declares, a lone --
        "name=1", "user=42", "color=red", "--bogus", "--",
        // durations and counts
        "0ms", "1ms", "100ms", "1s", "30s", "5m", "1h30m", "2d", "5x", "-1s", "1.5s", "s", "1m1h",
        "106751991167d", "9223372036854775807ms", "0", "1", "2", "-3", "99999999999999999999",
        // values
        "1", "true", "null", "-0", "1e400", "\"str\"", "\"two words\"", "\"\\u0000\"", "[1,2]", "[]", "{}",
        "{\"id\":1,\"likes\":3}", "{\"id\":\"1\",\"name\":\"x\"}", "[{\"id\":1,\"likes\":0},{\"id\":2}]",
        "{\"a\":{\"id\":1,\"n\":\"s\"}}", "{\"$inc\":1}", "{\"likes\":{\"$inc\":1}}", "{\"likes\":{\"$inc\":\"x\"}}",
        "{\"tags\":{\"$push\":2}}", "{\"tags\":{\"$pull\":2}}", "{\"$bogus\":1}", "{\"a\":null}",
        // broken JSON
        "{", "}", "[", "]", "{\"a\":", "\"unterminated", "[1,", "{\"a\" 1}", "[1]]", "{]", "\"\\q\"", "\\",
    ]
    static let separators = [" ", " ", " ", "  ", "\t"]
}

/// Small valid scripts, the seeds that mutations start from.
private let seedScripts = [
    "put feed:1 {\"id\":1,\"likes\":3} tags=t\nadvance 5m\nget feed:1\n",
    "server set a {\"id\":1}\nget a\nmutate a {\"likes\":{\"$inc\":1}}\npending\n",
    "ns feed ttl=1s stale=0ms max=1\nput feed:1 1\nput feed:2 2\nstats feed\n",
    "watch *\nput a [1]\nevent patch a {\"$push\":2}\nevent entity 1 {\"n\":1} --own\n",
    "server fail 1\nserver latency 50ms a\nget a --force\nserver log\n",
    "server offline\nget a --nowait\nmutate a {\"x\":1}\nserver online\n",
    "at 1s get a\nat 0ms put a 1\nadvance 2s\nkeys\n",
    "put a 1\ninvalidate tag:t\nexpire a in=1s\nevict a\nclear\n",
    "server set p:1 {\"id\":1}\nmget p:1 p:2 a\nvalidate --items\nmemory-warning\n",
    "output json\nput a {\"x\":\n  [1, 2]\n}\npeek a\nnow\n",
    "ns\nconfig\nmutate entity 1 {\"n\":2}\npush nothing user=1\n",
    "server show a\necho hi # comment\nstats reset\nunwatch\n",
    // A fetch that makes a key's namespace while another namespace deduplicates (it trapped).
    "ns k dedupe=1s\npoll f:e every=1s\nadvance 1s\nactivate g:1\nfocus\n",
]

/// Runs one input through a fresh session and checks what a user would see:
/// every error names the input and a line inside it.
///
/// - Returns: a description of the first problem, or nil.
private func problem(running text: String, semicolons: Bool, json: Bool) async -> String? {
    var options = SessionOptions(safe: true, mode: json ? .json : .human)
    // As --safe bounds a stranger's script (`poll a every=50ms` then `advance 106751991167d`), a
    // budget far above what a short input needs, so no input runs for seconds.
    options.scheduledBudget = .fixed(10_000)
    let session = await TestShell(options: options)
    await session.run { session, _ in session.keepsHistory = false }
    let printed = await session.script(SourceFile(name: "fuzz", text: text), semicolonsSeparate: semicolons)
    let lines = 1 + text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    for (output, isError) in printed {
        if isError {
            guard let line = errorLine(output), (1...lines).contains(line) else {
                return "error without a position: \(output.debugDescription)"
            }
        } else if output.hasPrefix("{"), case .object(let fields)? = try? JSONValue(parsing: output), fields["ok"] == false,
                  fields["error"] != nil, fields["key"] == nil, fields["request"] == nil {
            // A command's error (`ok: false`), not a read's or a validation's `error` field.
            guard fields["file"] == .string("fuzz"), case .int(let line)? = fields["line"], (1...Int64(lines)).contains(line) else {
                return "JSON error without a position: \(output.debugDescription)"
            }
        }
    }
    return nil
}

/// The line number of `fuzz:LINE: error: MESSAGE\n`, or nil when the text is not such a line.
private func errorLine(_ text: String) -> Int? {
    guard text.hasPrefix("fuzz:"), text.hasSuffix("\n"), text.utf8.filter({ $0 == UInt8(ascii: "\n") }).count == 1 else {
        return nil
    }
    let rest = text.dropFirst(5)
    guard let colon = rest.firstIndex(of: ":"), let line = Int(rest[..<colon]),
          rest[colon...].hasPrefix(": error: "), rest[colon...].count > ": error: \n".count else { return nil }
    return line
}

private func randomBytes(_ g: inout SeededGenerator, maxCount: Int) -> [UInt8] {
    let interesting: [UInt8] = Array("{}[]\":;#\\= \n\t\r-*,".utf8) + [0, 0x80, 0xC3, 0xFF]
    return (0..<Int.random(in: 0...maxCount, using: &g)).map { _ in
        g.chance(50) ? g.pick(interesting) : UInt8.random(in: 0x20...0x7E, using: &g)
    }
}

private func tokenSoup(_ g: inout SeededGenerator) -> String {
    var text = ""
    for _ in 0..<Int.random(in: 1...4, using: &g) {
        text += g.chance(90) ? g.pick(Vocabulary.commands) : g.pick(Vocabulary.words)
        if let last = text.split(whereSeparator: \.isWhitespace).last, let spec = CommandCatalog.info(String(last)),
           !spec.subcommands.isEmpty, g.chance(80) {
            text += " " + g.pick(spec.subcommands.map(\.name))
        }
        for _ in 0..<Int.random(in: 0...4, using: &g) {
            text += g.pick(Vocabulary.separators) + g.pick(Vocabulary.words)
        }
        text += g.pick(["\n", "\n", "; ", "\r\n", " # note\n"])
    }
    return text
}

/// One to three byte flips, insertions (of a byte or a word), deletions or splices of a seed.
private func mutatedScript(_ g: inout SeededGenerator) -> String {
    var bytes = Array(g.pick(seedScripts).utf8)
    for _ in 0..<Int.random(in: 1...3, using: &g) {
        let at = Int.random(in: 0...bytes.count, using: &g)
        switch Int.random(in: 0..<5, using: &g) {
        case 0 where at < bytes.count:
            bytes[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &g)
        case 1:
            bytes.insert(contentsOf: randomBytes(&g, maxCount: 3), at: at)
        case 2:
            bytes.insert(contentsOf: Array((" " + g.pick(Vocabulary.words + Vocabulary.commands)).utf8), at: at)
        case 3:
            let end = min(bytes.count, at + Int.random(in: 1...12, using: &g))
            bytes.removeSubrange(at..<end)
        default:
            let other = Array(g.pick(seedScripts).utf8)
            let from = Int.random(in: 0...other.count, using: &g)
            bytes = Array(bytes[..<at]) + other[from...]
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// A random JSON value, at most `depth` levels deep.
private func randomJSON(_ g: inout SeededGenerator, depth: Int) -> JSONValue {
    switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &g) {
    case 0: return .null
    case 1: return .bool(g.chance(50))
    case 2: return .int(g.chance(70) ? Int64.random(in: -1000...1000, using: &g) : Int64.random(in: .min ... .max, using: &g))
    case 3: return .double(g.pick([0.5, -1.25e-7, 1e300, 3.0, -0.0, 123456789.125, .ulpOfOne, .greatestFiniteMagnitude]))
    case 4, 5:
        let scalars = (0..<Int.random(in: 0...6, using: &g)).map { _ in
            g.pick(["a", "\"", "\\", "\n", "\u{0}", "\u{1F}", "é", "😀", "\u{7F}", "/", " "])
        }
        return .string(scalars.joined())
    case 6:
        return .array((0..<Int.random(in: 0...3, using: &g)).map { _ in randomJSON(&g, depth: depth - 1) })
    default:
        var object: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &g) {
            object[g.pick(["id", "a", "", "$inc", "é", "k\"q"])] = randomJSON(&g, depth: depth - 1)
        }
        return .object(object)
    }
}

private let jsonSeeds = [
    "{\"id\":1,\"likes\":[1,2,{\"x\":null}],\"s\":\"a\\u00e9\\n\\ud83d\\ude00\"}",
    "[true,false,null,-0,0.5e-3,1E+2,12345678901234567890]",
    "  \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"  ",
    "{\"a\":{\"b\":{\"c\":[[],{}]}}}",
    "-9223372036854775808",
]

/// A JSON text to parse: random bytes, a mutated seed, a random value printed (and maybe mutated),
/// or nesting near the depth limit.
private func jsonInput(_ g: inout SeededGenerator, index: Int) -> [UInt8] {
    switch index % 10 {
    case 0, 1, 2:
        return randomBytes(&g, maxCount: 24)
    case 3 where index % 100 == 3:
        let depth = Int.random(in: 500...530, using: &g)
        let open = g.chance(50) ? "[" : "{\"k\":"
        let close = open == "[" ? "]" : "}"
        return Array((String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)).utf8)
    default:
        var bytes = index % 10 < 6
            ? Array(g.pick(jsonSeeds).utf8)
            : Array((g.chance(50) ? randomJSON(&g, depth: 3).compactText : randomJSON(&g, depth: 3).prettyText()).utf8)
        for _ in 0..<Int.random(in: 0...2, using: &g) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &g)
            switch Int.random(in: 0..<3, using: &g) {
            case 0: bytes[at] = g.pick(Array("{}[]\",:\\0e-. ".utf8) + [0x80, 0xFF])
            case 1: bytes.remove(at: at)
            default: bytes.insert(g.pick(Array("{}[]\",:\\0e-.u".utf8)), at: at)
            }
        }
        return bytes
    }
}

/// Each test takes seconds alone; its time limit is long because with every test of the package
/// sharing the test pool's threads (two on a small machine) its wall time is the suite's, which on
/// a machine busy with other work can be ten minutes or more. The limit is there to catch a hang.
@Suite struct FuzzTests {
    static let inputsPerKind = 34_000

    /// Runs `count` generated scripts, each in a fresh session; fails on the first few problems.
    private func fuzz(seed: UInt64, count: Int, sourceLocation: SourceLocation = #_sourceLocation,
                      _ make: (inout SeededGenerator) -> String) async {
        var g = SeededGenerator(seed: seed)
        var failures = 0
        for i in 0..<count {
            let text = make(&g)
            if let problem = await problem(running: text, semicolons: i % 3 == 0, json: i % 4 == 0) {
                Issue.record("input \(i) \(text.debugDescription): \(problem)", sourceLocation: sourceLocation)
                failures += 1
                if failures == 5 { return }
            }
            // Gives the other tests their turn on the test pool's threads now and then.
            if i % 100 == 99 { await Task.yield() }
        }
    }

    @Test(.timeLimit(.minutes(20)))
    func randomBytesNeverCrashAndEveryErrorHasAPosition() async {
        await fuzz(seed: 1, count: Self.inputsPerKind) { g in String(decoding: randomBytes(&g, maxCount: 40), as: UTF8.self) }
    }

    @Test(.timeLimit(.minutes(20)))
    func tokenSoupNeverCrashesAndEveryErrorHasAPosition() async {
        await fuzz(seed: 2, count: Self.inputsPerKind) { g in tokenSoup(&g) }
    }

    @Test(.timeLimit(.minutes(20)))
    func mutatedScriptsNeverCrashAndEveryErrorHasAPosition() async {
        await fuzz(seed: 3, count: Self.inputsPerKind) { g in mutatedScript(&g) }
    }

    @Test(.timeLimit(.minutes(20)))
    func jsonReaderRefusesWithAnOffsetOrRoundTrips() async {
        var g = SeededGenerator(seed: 4)
        var accepted = 0
        var failures = 0
        for i in 0..<100_000 where failures < 5 {
            let bytes = jsonInput(&g, index: i)
            do {
                let value = try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in try JSONValue(parsing: buffer) }
                accepted += 1
                let compact = value.compactText
                let again = try? JSONValue(parsing: compact)
                if again != value || again?.compactText != compact {
                    Issue.record("\(String(decoding: bytes, as: UTF8.self).debugDescription) does not round-trip: \(compact)")
                    failures += 1
                }
            } catch {
                if !(0...bytes.count).contains(error.offset) || error.message.isEmpty {
                    Issue.record("\(String(decoding: bytes, as: UTF8.self).debugDescription): error at \(error.offset): \(error.message)")
                    failures += 1
                }
            }
        }
        // Both outcomes are exercised, not only one.
        #expect(accepted > 10_000 && accepted < 90_000, "accepted \(accepted) of 100000")
    }
}
