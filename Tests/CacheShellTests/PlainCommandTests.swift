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
        // Keys of eight bytes and more (read a word at a time), with a colon, `=` or a blank
        // before, inside or after a word's bounds.
        #"put profile:2562 {"id":2562}"#,
        #"get profile:2562"#,
        #"put abcdefgh {"a":1}"#,
        #"get abcdefgh"#,
        #"put abcdefghijklmnop {"a":1}"#,
        #"get abcdefghijklmnop"#,
        #"put abcdefghij:klmnop {"a":1}"#,
        #"get abcdefghij:klmnop"#,
        #"put abcdefghijklmno=p {"a":1}"#,
        #"put abcdefgh=ijklmnop {"a":1}"#,
        #"get abcdefghijklmno=p"#,
        #"get abcdefghijklmnop:"#,
        #"get default:abcdefghijk"#,
        #"put feed:abcdefghijklmnopqrstuvwxyz0123456789 [1]"#,
        "get abcdefghijklmnop\tx",
        "get abcdefghijklmnop ",
        #"put *bcdefghijklmnop {"a":1}"#,
        #"put abcdefghijklmnö {"a":1}"#,
        // Keys read a word at a time for their bytes and first colon: a byte that is no name's
        // before the colon, a colon or `*` or a control byte inside a word, two colons.
        #"put a/b {"a":1}"#,
        #"get a/b"#,
        #"put abc/defgh:ijk {"a":1}"#,
        #"put abcdefg/:x {"a":1}"#,
        #"put abcdefghijklm:n*p {"a":1}"#,
        #"put tag:abcdefghij {"a":1}"#,
        #"put default:abcdefgh {"a":1}"#,
        #"get abcdefgh"#,
        #"put abcdefgh:ijklmnop:qrs {"a":1}"#,
        #"get abcdefgh:ijklmnop:qrs"#,
        "put abcdefgh\u{7F}ijk {\"a\":1}",
        "put abcdefgh\u{01}ijk {\"a\":1}",
        #"put abcdefghijklmno: {"a":1}"#,
        #"put :abcdefghijklmno {"a":1}"#,
    ]

    /// Everything a session printed for `script`, whether a command failed, and its last history entry.
    /// With `echo`, the batch keeps its last entry (what `--echo` prints): the history's copy is
    /// compared too; without, the batch keeps none.
    /// With `straight`, output goes as a batch's does: a sink writing into the buffer that lone
    /// replies are written straight into (standard error marked `E `).
    static func run(_ script: String, plain: Bool, mode: OutputMode, echo: Bool, straight: Bool = false) async -> String {
        var options = SessionOptions(mode: mode)
        options.echo = echo
        return await Session.with(options: options) { session, cache in
            session.frames.readsPlainCommands = plain
            session.keepsWholeHistory = false
            let buffer = OutputBuffer()
            if straight {
                session.directOutput = buffer
                session.sink = { text, isError in buffer.append(isError ? "E " + text : text) }
            }
            let ok = session.run(SourceFile(name: "t.cachesh", text: script), on: cache)
            let output = buffer.withBytes { String(decoding: $0, as: UTF8.self) }
                + session.takeOutput().map { ($0.isError ? "E " : "O ") + $0.text }.joined()
            let last = session.history.entries.last.map { "\($0.command) => \($0.output)" } ?? "-"
            // Between commands, every part of the interpreter and the renderers holds its rules.
            let problems = session.invariantViolations()
            return "\(ok) \(session.anyFailed)\n\(output)\nlast: \(last)" + (problems.isEmpty ? "" : "\nbroken: \(problems)")
        }
    }

    @Test(arguments: [OutputMode.human, .json], [false, true])
    func eachLineRunsAsTheLexerRunsIt(mode: OutputMode, straight: Bool) async {
        for line in Self.lines {
            for script in [line + "\n", "ns feed ttl=1m max=2\n" + line + "\n" + line + "\n", line] {
                for echo in [false, true] {
                    let expected = await Self.run(script, plain: false, mode: mode, echo: echo, straight: straight)
                    let got = await Self.run(script, plain: true, mode: mode, echo: echo, straight: straight)
                    #expect(got == expected, "\(script.debugDescription) echo \(echo)")
                }
            }
        }
    }

    @Test(arguments: [OutputMode.human, .json], [false, true])
    func aWholeScriptRunsAsTheLexerRunsIt(mode: OutputMode, straight: Bool) async {
        let script = "ns feed ttl=1m max=3\n" + Self.lines.joined(separator: "\n") + "\n\n# end\n"
            + Self.lines.reversed().joined(separator: "\n") + "\n"
        for echo in [false, true] {
            let expected = await Self.run(script, plain: false, mode: mode, echo: echo, straight: straight)
            #expect(await Self.run(script, plain: true, mode: mode, echo: echo, straight: straight) == expected)
        }
    }

    /// Written straight into a batch's buffer, a plain command prints what it prints through the
    /// lexer, in order with the output around it: a `watch` event before a put's reply, an error
    /// before a get's, keys evicted by a put, a value with a control character (escaped), and
    /// replies after a command that failed.
    @Test(arguments: [OutputMode.human, .json])
    func repliesWrittenStraightAreWhatTheLexerPrints(mode: OutputMode) async {
        let script = "ns feed ttl=1m max=2\nput feed:1 {\"a\":1}\nwatch feed:1\nput feed:1 {\"a\":2}\nunwatch feed:1\n"
            + "get nope:1 --bad\nget feed:1\nput feed:2 {\"a\":\"\\u001b[31m\"}\nget feed:2\nput feed:3 [1]\nput feed:4 [2]\n"
            + "ns feed\nget feed\nget feed:9\n"
        let expected = await Self.run(script, plain: false, mode: mode, echo: false, straight: true)
        let got = await Self.run(script, plain: true, mode: mode, echo: false, straight: true)
        #expect(got == expected)
        #expect(got.contains("\\u001b[31m"), "\(got)")
        // (The error goes to standard error in human output, into the JSON lines in JSON output.)
        #expect(got.contains(mode == .human ? "E " : "\"ok\":false"), "\(got)")
    }

    /// A read that sends a request nothing was queued for under `server strict on` fails with the
    /// command quoted, as through the lexer.
    @Test(arguments: [OutputMode.human, .json])
    func aDivergenceIsReportedAsTheLexerReportsIt(mode: OutputMode) async {
        let script = "server strict on\nget feed:9\nput feed:9 {\"a\":1}\nget feed:9\nget feed:10\n"
        for echo in [false, true] {
            for straight in [false, true] {
                let expected = await Self.run(script, plain: false, mode: mode, echo: echo, straight: straight)
                #expect(expected.contains("server strict: nothing queued"))
                #expect(await Self.run(script, plain: true, mode: mode, echo: echo, straight: straight) == expected)
            }
        }
    }
}
