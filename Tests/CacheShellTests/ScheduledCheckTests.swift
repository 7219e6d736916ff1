@testable import CacheShell
import CacheCore
import Testing

/// What `at D COMMAND` checks of COMMAND's words when it schedules it (`ScheduledCheck`): never
/// more than the command's own parse, so that no command that runs is refused when scheduled.
@Suite struct ScheduledCheckTests {
    /// The words of `text` checked as `at` checks them; nil when they pass, else the error's
    /// message and the byte offset it points at.
    static func check(_ text: String) -> (message: String, offset: Int)? {
        let source = SourceFile(name: nil, text: text)
        var lexer = Lexer(source, semicolonSeparates: false)
        guard case .success(let command)? = lexer.next() else { return ("does not lex", -1) }
        guard let spec = CommandCatalog.info(command.words[0].text) else { return ("no such command", -1) }
        do throws(ShellError) {
            try ScheduledCheck.check(command, source, spec)
            return nil
        } catch {
            return (error.message, error.offset)
        }
    }

    /// Every command's example runs as it stands, so it must pass when scheduled too (the
    /// commands `at` cannot schedule aside).
    @Test func everyCommandsExamplePasses() {
        for spec in CommandCatalog.all where !ClockCommands.unschedulable.contains(spec.name) {
            let failure = Self.check(spec.example)
            #expect(failure == nil, "\(spec.example): \(failure?.message ?? "")")
        }
    }

    /// Forms a command takes that its example does not show: optional arguments left out or
    /// given, repeated ones, options of each kind, `none` where a limit may be unset, a value that
    /// looks like an option, a subcommand's form.
    @Test(arguments: [
        "get feed:1", "get feed:1 --force --nowait", "mget feed:1 feed:2 feed:3", "keys", "keys feed:*",
        "put feed:1 1", "put feed:1 {\"a\":[1,2]} tags=a,b", "put feed:1 not-json", "put feed:1 \"a=b\"",
        "put feed:1 --nowait", "ns feed ttl=1m stale=none max=none", "ns feed max=10 retry=3",
        "expire feed:1", "expire feed:1 in=30s", "echo a b=c --d",
        "server set feed:1 {\"id\":1}", "server show", "stats", "stats feed",
        // A choice of one word or two (`KEY|entity ID`), and a count option that takes a list.
        "mutate feed:1 {\"likes\":1}", "mutate entity 5 {\"likes\":1}", "replay t.csv policy=lru,fifo max=50,500 ttl=none,1h",
        "echo",
        // A JSON option whose value holds blanks, joined as the command joins it.
        "server set api:/feed \"v1\" headers={\"Cache-Control\":\"max-age=10, stale-while-revalidate=300\"}",
        "server next feed:1 error=\"timed out\" latency=5ms", "server next feed:1 value={\"a\": [1, 2]} --commit",
        "get api:/feed headers={\"Cache-Control\":\"no-cache, max-age=0\"} --nowait",
        "request POST api:/feed headers={\"X-A\":\"a b\"} {\"text\":\"hi there\"} --nowait",
        "server next --validate value=[1, 2] error=\"a b\"",
        // Too many words, or too few past the first, are left to the command when it runs.
        "put feed:1", "get feed:1 feed:2",
    ])
    func formsThatRunPass(_ text: String) {
        let failure = Self.check(text)
        #expect(failure == nil, "\(text): \(failure?.message ?? "")")
    }

    /// What the words alone refuse, at the word at fault (the end of the command for a missing
    /// argument), worded as the declaration words it.
    @Test(arguments: [
        ("get", "get needs KEY [headers={...}] [--force] [--nowait] [--async]", 3),
        ("get feed:1 --fresh", "get has no flag --fresh (it takes --async, --force, --nowait)", 11),
        ("get feed:1 --force --force", "get: flag --force given twice", 19),
        ("put", "put needs KEY VALUE [tags=a,b]", 3),
        ("put feed:1 1 tags=a,,b", "put: empty tag in tags=a,,b", 13),
        ("put feed:1 1 colour=red", "put has no option colour= (it takes tags=)", 13),
        ("put feed:1 {\"id\": 1,}", "bad JSON: unexpected character '}', expected a string key", 20),
        ("expire feed:1 in=zz", "bad duration \"zz\": expected a number before \"zz\"", 17),
        ("server latency zz", "bad duration \"zz\": expected a number before \"zz\"", 15),
        ("ns feed ttl=soon", "bad duration \"soon\": expected a number before \"soon\"", 12),
        ("server", "server needs one of: set, patch, delete, show, latency, fail, offline, online, log, next, strict", 6),
        // Past a JSON option's value that spans words: joined first, as the command joins it.
        ("server set api:/feed 1 headers={\"A\":\"a, b\"} bogus=1",
         "server set has no option bogus= (it takes binary=, headers=, text=, version=)", 44),
        ("server next feed:1 error=\"timed out\" latency=zz", "bad duration \"zz\": expected a number before \"zz\"", 45),
        ("get api:/feed headers={\"A\":\"a b\"} --fresh", "get has no flag --fresh (it takes --async, --force, --nowait)", 34),
        ("get api:/feed headers={\"A\":\"a b\"", "headers=: the JSON value does not end on this line", 22),
        ("server next feed:1 value={\"a\": } latency=5ms", "bad JSON: unexpected character '}', expected a JSON value", 31),
        ("server next feed:1 error=\"a\\q\"", "bad JSON: invalid escape \\q in a string", 27),
        ("request POST api:/x headers={\"A\":\"a b\"} {\"t\": 1} --nope", "request has no flag --nope (it takes --nowait)", 49),
        ("server frob", "unknown server command \"frob\" (use set, patch, delete, show, latency, fail, offline, online, log, next, strict)", 7),
    ])
    func wordsThatCannotRunAreRefused(_ text: String, _ message: String, _ offset: Int) {
        let failure = Self.check(text)
        #expect(failure?.message == message)
        #expect(failure?.offset == offset)
    }
}
