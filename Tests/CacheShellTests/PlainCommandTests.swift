@testable import CacheCore
@testable import CacheShell
import Testing

/// `put KEY VALUE` and `get KEY` in their commonest form run without the lexer
/// (`Session.runPlainCommand`): every line must print, fail and be noted exactly as through the
/// lexer and the commands' handlers, near misses of that form included.
struct PlainCommandTests {
    static let lines: [String] = [
        #"put feed:1 {"id":1,"likes":2,"title":"item 1"}"#,
        #"get feed:1"#,
        #"put feed:2 [1,2,{"b":1,"a":[]}]"#,
        #"put feed:3 { "z" : 1 , "a" : "x # y" }"#,
        #"put default:k {"a":1}"#,
        #"get default:k"#,
        #"get k"#,
        #"get nothing:here"#,
        #"put feed:4 {"a":1} {"b":2}"#,
        #"put feed:4 {"a":1}}"#,
        #"put feed:4 {"a":1]"#,
        #"put feed:4 {"a":01}"#,
        #"put feed:4 {"a":1e400}"#,
        "put feed:4 {\"a\":\"tab\tinside\"}",
        #"put feed:4 {"a":1} tags=x"#,
        #"put feed:4 {"a":1} # a note"#,
        #"put feed:4 {"a":1} "#,
        #"put feed:4  {"a":1}"#,
        "put feed:4\t{\"a\":1}",
        #"put feed:4 {"a":"é \u00e9 \ud83d\ude00"}"#,
        #"put tag:x {"a":1}"#,
        #"put *bad {"a":1}"#,
        #"put a=b {"a":1}"#,
        #"put --force {"a":1}"#,
        #"put # {"a":1}"#,
        #"put "quoted" {"a":1}"#,
        #"put [k] {"a":1}"#,
        #"put :k {"a":1}"#,
        #"put k: {"a":1}"#,
        #"put ünï {"a":1}"#,
        #"put k {"a":"\u0007"}"#,
        #"put k {"a":1"#,
        #"put k {"a":"x"#,
        #"put k 42"#,
        #"put k"#,
        #"get"#,
        #"get a b"#,
        #"get tag:x"#,
        #"get --force"#,
        #"get k --nowait"#,
        #"get k "#,
        "get k\r",
        "put k {\"a\":1}\r",
        #"  put indented {"a":1}"#,
        #"pet k {"a":1}"#,
        #"gut k {"a":1}"#,
        #"get k {"a":1}"#,
        #"pe k"#,
        #"gets k"#,
        #"put k ["#,
        #"put k [1,"#,
    ]

    /// Everything a session printed for `script`, whether a command failed, and its last history entry.
    /// With `echo`, the batch keeps its last entry (what `--echo` prints): the history's copy is
    /// compared too; without, the batch keeps none.
    static func run(_ script: String, plain: Bool, mode: OutputMode, echo: Bool) async -> String {
        var options = SessionOptions(mode: mode)
        options.echo = echo
        return await Session.with(options: options) { session, cache in
            session.frames.readsPlainCommands = plain
            session.keepsWholeHistory = false
            let ok = session.run(SourceFile(name: "t.cachesh", text: script), on: cache)
            let output = session.takeOutput().map { ($0.isError ? "E " : "O ") + $0.text }.joined()
            let last = session.history.entries.last.map { "\($0.command) => \($0.output)" } ?? "-"
            // Between commands, every part of the interpreter and the renderers holds its rules.
            let problems = session.invariantViolations()
            return "\(ok) \(session.anyFailed)\n\(output)\nlast: \(last)" + (problems.isEmpty ? "" : "\nbroken: \(problems)")
        }
    }

    @Test(arguments: [OutputMode.human, .json])
    func eachLineRunsAsTheLexerRunsIt(mode: OutputMode) async {
        for line in Self.lines {
            for script in [line + "\n", "ns feed ttl=1m max=2\n" + line + "\n" + line + "\n", line] {
                for echo in [false, true] {
                    let expected = await Self.run(script, plain: false, mode: mode, echo: echo)
                    let got = await Self.run(script, plain: true, mode: mode, echo: echo)
                    #expect(got == expected, "\(script.debugDescription) echo \(echo)")
                }
            }
        }
    }

    @Test(arguments: [OutputMode.human, .json])
    func aWholeScriptRunsAsTheLexerRunsIt(mode: OutputMode) async {
        let script = "ns feed ttl=1m max=3\n" + Self.lines.joined(separator: "\n") + "\n\n# end\n"
            + Self.lines.reversed().joined(separator: "\n") + "\n"
        for echo in [false, true] {
            let expected = await Self.run(script, plain: false, mode: mode, echo: echo)
            #expect(await Self.run(script, plain: true, mode: mode, echo: echo) == expected)
        }
    }

    /// A read that sends a request nothing was queued for under `server strict on` fails with the
    /// command quoted, as through the lexer.
    @Test(arguments: [OutputMode.human, .json])
    func aDivergenceIsReportedAsTheLexerReportsIt(mode: OutputMode) async {
        let script = "server strict on\nget feed:9\nput feed:9 {\"a\":1}\nget feed:9\nget feed:10\n"
        for echo in [false, true] {
            let expected = await Self.run(script, plain: false, mode: mode, echo: echo)
            #expect(expected.contains("server strict: nothing queued"))
            #expect(await Self.run(script, plain: true, mode: mode, echo: echo) == expected)
        }
    }
}
