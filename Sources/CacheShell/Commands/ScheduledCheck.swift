import CacheCore

/// What `at D COMMAND` checks of COMMAND when it schedules it (SPEC §3, §7): the words against
/// the command's ``CommandSpec``, so that a command that would fail on its words alone is refused
/// when typed, at its line, with nothing scheduled, instead of failing when it falls due.
///
/// Only what the declaration settles whatever the cache holds then, each check one the command's
/// own parse makes (`Arguments`, the subcommand's dispatch) or weaker: a subcommand that exists;
/// flags and options the command takes, none given twice; some argument, when it needs one; a
/// duration where an option is one (or `none`, or a list of them: only some commands take those,
/// which is left to them); tags none of which is empty; a JSON option's value given as JSON (starting
/// `{`, `[` or `"`) that parses; a JSON value, a duration or a count where
/// a positional whose place is fixed is one (every argument before it required, none repeated or a
/// choice). Not the number of arguments beyond that: a declaration's choice such as `KEY|entity ID`
/// takes one word or two. A JSON option's value that spans words (`headers={"A":"a, b"}`) is joined
/// first, as the command joins it (`Option.json`). What depends on the state when the command runs
/// (a known namespace, a cached key, a file) is left to then.
///
/// Each error names the word at fault; its wording is the declaration's, which may differ from
/// the command's own (the usage line a handler quotes, the order in which it reads its options).
/// `ScheduledCheckTests` holds every command's example to it (an example runs as it stands).
enum ScheduledCheck {
    /// Throws the error the command's words give on their own, at the word at fault.
    /// - Complexity: O(words of the command).
    static func check(_ command: RawCommand, _ source: SourceFile, _ spec: CommandSpec) throws(ShellError) {
        let form = try spec.form(of: command)
        // A JSON option's value (`headers={"ETag": "1"}`) may span words: joined as the command
        // joins them before it sorts them.
        let args = try Arguments(try form.joiningJSONOptions(command, source), source, for: form)
        let arguments = form.arguments
        // (The rest of a command, `echo TEXT`, may be empty.)
        if args.positional.isEmpty && arguments.contains(where: { !$0.isOptional && !$0.takesRest }) { try args.expect(1...Int.max) }
        try checkOptions(args, form)
        // A positional is read by its declared kind only where its place is fixed: every argument
        // before it required, none repeated, none a choice (`KEY|entity ID` takes one word or two).
        for (i, argument) in arguments.enumerated() where i < args.positional.count {
            if argument.isOptional || argument.repeats || argument.takesRest || argument.alternatives.count != 1 { break }
            let word = args.positional[i]
            switch argument.alternatives[0].kind {
            case .value: _ = try Arguments.value(word)
            case .duration: _ = try Arguments.duration(Substring(word.text), at: word.offset)
            case .count: _ = try args.count(i, what: argument.alternatives[0].text)
            default: break
            }
        }
    }

    /// The options whose kind settles what they take: a duration (or `none`), a list of tags none
    /// of which is empty, JSON where a JSON option is given one. (A count is not read here:
    /// `replay max=` takes a list of them.)
    private static func checkOptions(_ args: Arguments, _ spec: CommandSpec) throws(ShellError) {
        for option in spec.options {
            guard let (text, word) = args.option(option.name) else { continue }
            let at = word.offset + option.name.utf8.count + 1
            switch option.kind {
            case .duration:
                // Each of a list (`replay ... ttl=none,1h`), which only some commands take.
                var start = at
                for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
                    if piece != "none" { _ = try Arguments.duration(piece, at: start) }
                    start += piece.utf8.count + 1
                }
            case .tags:
                _ = try Arguments.tags(text, at: word, command: args.name, option: option.name)
            case .text where option.joinsJSON:
                // JSON where it is given as JSON (a bare word is text to some: `error=oops`).
                if let first = text.first, first == "{" || first == "[" || first == "\"" {
                    _ = try ServerScriptCommands.jsonOption(text, at: at, bareIsText: true)
                }
            case .count, .text, .pushParameters:
                break
            }
        }
    }
}
