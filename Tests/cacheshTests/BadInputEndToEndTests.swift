import Testing

/// SPEC §7: a bad command gets one line naming the problem and where it is, and the cache,
/// the server, the clock, the configuration and the pending work are as they were before it.
@Suite struct BadInputEndToEndTests {
    static let configuration = """
        {"namespaces": {"feed": {"ttl": "45m", "stale": "5m", "max": 10}, "profile": {"ttl": "1h"}},
         "push": {"friend-blocked": {"invalidate": ["profile:{user}"]}},
         "server": {"data": {"profile:42": {"id": 42, "name": "Ann", "likes": 1}}}}
        """

    /// Files beside the script: a configuration, one with a bad duration after a valid part,
    /// and one cut short.
    static let files = [
        "app.json": configuration,
        "bad.json": #"{"namespaces": {"feed": {"ttl": "1m"}, "page": {"ttl": "5x"}}}"#,
        "broken.json": #"{"namespaces": {"feed": {"ttl": "1m"}}"#,
        "policy.json": #"{"namespaces": {"feed": {"ttl": "1m", "policy": "lfu"}, "page": {"policy": "mru"}}}"#,
    ]

    /// Entries, an embedded entity, a pending mutation, a fetch in flight, a scheduled command
    /// and a watch: everything a bad command could disturb.
    static let setUp = """
        load app.json
        put feed:1 {"id":1,"likes":3,"by":{"id":42,"name":"Ann"}} tags=t
        get profile:42
        mutate profile:42 {"likes":{"$inc":1}}
        get feed:2 --nowait
        at 1m echo later
        watch feed:*
        """

    /// Everything a user can look at without changing it.
    static let inspection = "keys\npeek feed:1\npeek profile:42\nstats\nserver show\npending\nnow\nconfig\nns\nwatch\nsnapshot\n"

    /// (bad command, the message of its error line)
    static let cases: [(String, String)] = [
        ("load missing.json", "cannot read missing.json: No such file or directory"),
        ("load bad.json", #"bad.json: $.namespaces.page.ttl: bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"#),
        ("load broken.json", "broken.json: not valid JSON: unexpected end of JSON, expected '}' (byte 38)"),
        ("ns feed ttl=1m stale=5x", #"bad duration "5x": unknown unit "x" (use ms, s, m, h, d) (or none)"#),
        ("ns feed dedupe=bogus", #"bad duration "bogus": expected a number before "bogus" (or none)"#),
        ("ns feed timeout=1.5s", #"bad duration "1.5s": amounts must be whole numbers, like 1s500ms (or none)"#),
        ("ns feed ttl=soon", #"bad duration "soon": expected a number before "soon""#),
        ("ns feed colour=red", "ns has no option colour= (it takes backoff=, dedupe=, heuristic=, max=, naive=, origin=, policy=, retry=, stale-if-error=, stale=, timeout=, ttl=)"),
        ("ns feed max=3 policy=mru", #"policy must be lru, fifo, sieve or lfu, not "mru""#),
        ("load policy.json", #"policy.json: $.namespaces.page.policy: expected "lru", "fifo", "sieve" or "lfu""#),
        ("ns feed max=many", #"max must be a whole number or none, not "many""#),
        ("config --all", "config has no flag --all"),
        ("now later", #"now takes no arguments; unexpected "later""#),
        ("advance 5x", #"bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"#),
        ("advance", "advance needs D (a duration: 250ms, 30s, 5m, 1h30m, 2d)"),
        ("at 5x echo hi", #"bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"#),
        ("at 1s advance 1s", "advance cannot be scheduled with at"),
        ("at 1s frob", #"unknown command "frob" (try help)"#),
        // Each level of a nested `at` is checked when typed, not when it runs.
        ("at 1s at 1s advance 1s", "advance cannot be scheduled with at"),
        ("at 1s at 2s at 1s restore s.json", "restore cannot be scheduled with at"),
        ("at 1s at 5x echo hi", #"bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"#),
        ("at 1s at 1s frob", #"unknown command "frob" (try help)"#),
        ("at 1s at 1s", "at needs D COMMAND"),
        // The scheduled command's words too, as far as they alone decide.
        ("at 1s get", "get needs KEY [headers={...}] [--force] [--nowait] [--async]"),
        ("at 1s at 1s get feed:1 --fresh", "get has no flag --fresh (it takes --async, --force, --nowait)"),
        ("at 1s put feed:3 1 tags=a,,b", "put: empty tag in tags=a,,b"),
        (#"at 1s put feed:3 {"id": 3,}"#, "bad JSON: unexpected character '}', expected a string key"),
        ("at 1s expire feed:1 in=zz", #"bad duration "zz": expected a number before "zz""#),
        ("at 1s server frob", #"unknown server command "frob" (use set, patch, delete, show, latency, fail, offline, online, log, next, strict)"#),
        (#"at 1s server next feed:1 error="timed out" latency=zz"#, #"bad duration "zz": expected a number before "zz""#),
        (#"put feed:3 {"id": 3,}"#, "bad JSON: unexpected character '}', expected a string key"),
        ("put feed:3 1 tags=a,,b", "put: empty tag in tags=a,,b"),
        ("put feed:3", "put needs KEY VALUE [tags=a,b]"),
        ("get feed:1 --fresh", "get has no flag --fresh (it takes --async, --force, --nowait)"),
        ("get feed:*", #"bad key "feed:*": * is for patterns (keys, NS:*)"#),
        ("mget feed:1 feed:*", #"bad key "feed:*": * is for patterns (keys, NS:*)"#),
        ("mget", "mget needs KEY... [--nowait]"),
        ("peek", "peek needs KEY"),
        ("touch", "touch needs KEY"),
        ("touch feed:1 feed:2", #"touch takes KEY; unexpected "feed:2""#),
        ("touch feed:*", #"bad key "feed:*": * is for patterns (keys, NS:*)"#),
        ("touch feed", #"touch: "feed" is a namespace, and no key of that name is cached (did you mean a key feed:ID? keys feed:* lists them; default:feed names the key)"#),
        ("touch --x feed:1", "touch has no flag --x"),
        ("keys feed:* profile:*", #"keys takes [PATTERN]; unexpected "profile:*""#),
        ("expire feed:1 in=soon", #"bad duration "soon": expected a number before "soon""#),
        ("expire feed:1 at=1s", "expire has no option at= (it takes in=)"),
        ("invalidate tag:", #"bad target "tag:": tag:T needs a tag name"#),
        ("evict feed:1 feed:2", #"evict takes KEY; unexpected "feed:2""#),
        ("clear feed page", #"clear takes [NS|NS:*]; unexpected "page""#),
        ("memory-warning now", #"memory-warning takes no arguments; unexpected "now""#),
        (#"mutate feed:1 {"likes":{"$inc":"x"}}"#, "bad patch: $inc at likes needs a number, not a string"),
        (#"mutate feed:1 {"likes": 1]"#, #"mismatched "]" in JSON value: expected "}""#),
        // The first entry embedding 42 could take the patch; the second cannot: neither changes.
        (#"mutate entity 42 {"name":{"$inc":1}}"#, "cannot $inc at name: it is a string, not a number (in feed:1)"),
        (#"event patch feed:1 {"likes":{"$push":1}}"#, "cannot $push at likes: it is a number, not an array"),
        (#"event entity 42 {"name":{"$inc":1}}"#, "cannot $inc at name: it is a string, not a number (in the server's data)"),
        ("event feed:1", "event needs patch KEY PATCH or entity ID PATCH"),
        (#"event patch feed:1 {"likes":1} --mine"#, "event has no flag --mine (it takes --own)"),
        ("push friend-blocked", #"push "friend-blocked" needs user=VALUE"#),
        ("push unknown-type", #"no push rule for "unknown-type" (rules: friend-blocked)"#),
        ("validate --all", "validate has no flag --all (it takes --async, --items)"),
        ("pending --all", "pending has no flag --all"),
        (#"server set feed:9 {"x":}"#, "bad JSON: unexpected character '}', expected a JSON value"),
        ("server latency 5x", #"bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"#),
        ("server fail many", #"server fail: N must be a whole number, not "many""#),
        ("server frob", #"unknown server command "frob" (use set, patch, delete, show, latency, fail, offline, online, log, next, strict)"#),
        (#"server patch feed:404 {"a":1}"#, "the server has no feed:404"),
        (#"server patch profile:42 {"name":{"$inc":1}}"#, "cannot $inc at name: it is a string, not a number"),
        ("server log everything", "server log takes nothing or clear"),
        ("stats feed page", #"stats takes [NS] or reset; unexpected "page""#),
        ("watch tag:t", "watch takes KEY, NS:* or *"),
        ("timeline tag:t", "timeline takes KEY, NS:* or *"),
        ("unwatch feed:1 profile:42", #"unwatch takes [KEY|NS:*|*] [--keep-active]; unexpected "profile:42""#),
        ("source missing.cachesh", "cannot read missing.cachesh: No such file or directory"),
        ("output yaml", #"output takes human or json, not "yaml""#),
        ("quit now", #"quit takes no arguments; unexpected "now""#),
        ("gett feed:1", #"unknown command "gett" (did you mean get?)"#),
        (#"{"a": 1}"#, "a command starts with its name, not a JSON value"),
    ]

    /// The script: set-up, inspection, the bad command, inspection, each part after an `echo ---`.
    static func script(around bad: String) -> (text: String, badLine: Int) {
        let before = setUp + "\necho ---\n" + inspection + "echo ---\n"
        let line = before.split(separator: "\n", omittingEmptySubsequences: false).count
        return (before + bad + "\necho ---\n" + inspection, line)
    }

    @Test(arguments: cases)
    func badCommandPrintsOneErrorLineAndChangesNothing(_ bad: String, _ message: String) async throws {
        let (text, line) = Self.script(around: bad)
        let run = try await Cachesh.script(text, files: Self.files)
        #expect(run.stderr == "script.cachesh:\(line): error: \(message)\n")
        #expect(run.status == 1)
        let parts = run.stdout.components(separatedBy: "---\n")
        try #require(parts.count == 4, "\(run)")
        #expect(parts[2] == "", "the bad command printed something")
        #expect(parts[3] == parts[1], "state changed")
    }

    @Test(arguments: cases)
    func badCommandInJSONModeIsOneErrorObjectAndChangesNothing(_ bad: String, _ message: String) async throws {
        let (text, line) = Self.script(around: bad)
        let run = try await Cachesh.script(text, options: ["--json"], files: Self.files)
        #expect(run.stderr == "")
        #expect(run.status == 1)
        let parts = run.stdout.components(separatedBy: #"{"command":"echo","ok":true,"text":"---"}"# + "\n")
        try #require(parts.count == 4, "\(run)")
        // A command the lexer could not split has no name; a JSON word is its own first word.
        let first = bad.hasPrefix("{") ? bad : String(bad.prefix { $0 != " " })
        let name = bad.contains("1]") ? "null" : JSONText.string(first)
        let error = JSONText.string(message)
        // A form of `server` says which, once it names one.
        let words = bad.split(separator: " ")
        let subcommand = first == "server" && words[1] != "frob" ? #","subcommand":"\#(words[1])""# : ""
        #expect(parts[2] == #"{"column":null,"command":\#(name),"error":\#(error),"file":"script.cachesh","line":\#(line),"ok":false\#(subcommand)}"#
                + "\n")
        #expect(parts[3] == parts[1], "state changed")
    }

    @Test func errorInASourcedFileNamesThatFileAndLineAndFailsTheSource() async throws {
        let run = try await Cachesh.script("put a 1\nsource lib/inner.cachesh\nkeys\n", files: [
            "lib/inner.cachesh": "put b 2\n\nadvance 5x\nput c 3\n",
        ])
        #expect(run.stderr == #"lib/inner.cachesh:3: error: bad duration "5x": unknown unit "x" (use ms, s, m, h, d)"# + "\n")
        #expect(run.stdout == "keys: a\nkeys: b\nkey  state  age_ms\na    fresh  0\nb    fresh  0\n")
        #expect(run.status == 1)
    }

    @Test func errorOfACommandRunByAtPointsAtTheAtLineAndFailsTheRun() async throws {
        let run = try await Cachesh.script("now\nat 1s get feed:*\nadvance 2s\nkeys\n")
        #expect(run.stderr == #"script.cachesh:2: error: (at 2026-01-01T00:00:01.000Z) bad key "feed:*": * is for patterns (keys, NS:*)"# + "\n")
        #expect(run.stdout == """
            now:    2026-01-01T00:00:00.000Z
            now_ms: 0
            scheduled at 2026-01-01T00:00:01.000Z: get feed:*
            now:    2026-01-01T00:00:02.000Z
            now_ms: 2000 (2s)
            (no entries)

            """)
        #expect(run.status == 1)
    }

    @Test func anErrorQuotingAWordThatSpansLinesIsStillOneLine() async throws {
        let run = try await Cachesh.script("evict a {\"x\":\n  [1, 2]\n}\nnow\n")
        #expect(run.stderr == #"script.cachesh:1: error: evict takes KEY; unexpected "{"x":\n  [1, 2]\n}""# + "\n")
        #expect(run.stdout == "now:    2026-01-01T00:00:00.000Z\nnow_ms: 0\n")
    }

    @Test func dateOverflowInAtIsClampedNotACrash() async throws {
        let run = try await Cachesh.script("at 106751991167d echo never\npending\n")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "scheduled never (at the clock's end, which it never reaches): echo never\n"
                + "due    in     what  detail\nnever  never  at    echo never\n", "\(run)")
    }
}

/// JSON text for a string, as the shell prints it (quotes, backslashes and control characters escaped).
enum JSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
