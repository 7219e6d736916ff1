import CacheCore

/// `load`, `ns`, `config`: namespaces, push rules and the server's settings (SPEC §5.1).
enum ConfigCommands {
    static let family = CommandFamily(title: "Configuration", commands: [load, ns, config])

    static let ns = CommandSpec(
        name: "ns", summary: "define or change a namespace; alone, list them",
        arguments: [.namespace("NAME", meaning: "the namespace (letters, digits, -, _ and .); only the options given change").optional,
                    .word("http", meaning: "make it an HTTP namespace: keys are paths with their query, entries responses that RFC 9111 decides on (before any key of it is stored); its responses take at most 256 MiB, past which entries go as max= evicts them").optional,
                    .word("shared", meaning: "with http: a shared cache (RFC 9111 3.5: private and Authorization responses not stored, s-maxage used); else private").optional],
        options: [
            .duration("ttl", meaning: "entries expire D after they are stored (default 5m)"),
            .duration("stale", meaning: "entries turn stale D after they are stored; none: never stale by age"),
            .count("max", meaning: "at most N entries, the policy's victim evicted first; none: no limit"),
            .text("policy", placeholder: "P", meaning: "which entry max evicts: lru (default; the least recently used), fifo (the one stored earliest), sieve (a hand walks from the oldest entry, unmarking entries read since it passed, to the first unmarked one), lfu (the fewest accesses since stored; ties: the first to reach that count)"),
            .duration("stale-if-error", meaning: "a failed fetch still serves a value expired less than D ago; none: 0"),
            .duration("timeout", meaning: "give up on a request after D (a failure); none: wait for the answer"),
            .count("retry", meaning: "send a failed fetch again up to N times (0 to 30; default 0) before it fails"),
            .duration("backoff", meaning: "wait D before the first retry, twice as long before each next (default 1s)"),
            .text("naive", placeholder: "a,b",
                  meaning: "naive policies switched on (SPEC 1.2), each as a public race report shows it (help naive: what each turns off, and its thread); none: all off"),
            .duration("dedupe", meaning: "a read that would fetch a key less than D after a fetch of it was sent shares that fetch instead, refetches too (SPEC 1.2); none: never"),
            .text("origin", placeholder: "URL", meaning: "with http: the origin its paths are on (as https://api.example.com), for same-origin Location fields"),
            .text("heuristic", placeholder: "P", meaning: "with http: heuristic freshness, P percent of the time since Last-Modified (0 to 100; default 10)"),
        ],
        flags: [
            .flag("purgeable", meaning: "a memory warning purges this namespace",
                  negation: "a memory warning spares this namespace (unless no namespace is purgeable)"),
        ],
        example: "ns feed ttl=45m stale=5m max=100", run: ns,
        writes: CallForm(.defineNamespace) { call, returned, w throws(Diagnostic) in
            guard case .defineNamespace(let name, let change) = call else { throw w.notItsKind(call) }
            try w.checkNamespace(name)
            var command = "ns \(name)"
            func duration(_ option: String, _ value: Int64??) {
                guard let value else { return }
                command += " \(option)=" + (value.map(TimeText.formatDuration) ?? "none")
            }
            if let ttl = change.ttl { command += " ttl=" + TimeText.formatDuration(ttl) }
            duration("stale", change.stale)
            if let max = change.max { command += " max=" + (max.map(String.init) ?? "none") }
            duration("stale-if-error", change.staleIfError)
            duration("timeout", change.timeout)
            if let purgeable = change.purgeable { command += purgeable ? " --purgeable" : " --no-purgeable" }
            if let eviction = change.eviction { command += " policy=" + eviction.rawValue }
            if let retry = change.retry { command += " retry=\(retry)" }
            if let backoff = change.backoff { command += " backoff=" + TimeText.formatDuration(backoff) }
            if let naive = change.naive { command += " naive=" + NaivePolicy.text(naive) }
            duration("dedupe", change.dedupe)
            if let http = change.http {
                command += " http" + (http.policy.shared ? " shared" : "") + (http.origin.map { " origin=" + $0 } ?? "")
                    + " heuristic=\(http.policy.heuristicPercent)"
            }
            for ms in [change.ttl, change.stale ?? nil, change.staleIfError ?? nil, change.timeout ?? nil, change.backoff,
                       change.dedupe ?? nil] where (ms ?? 0) < 0 {
                throw w.fail("ns with a negative duration cannot be typed")
            }
            guard case .policy(let policy, let changed) = returned else { return (command, nil) }
            return (command, nsReply(name, policy, changed: changed))
        })

    static func ns(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: ns)
        try args.expect(0...3, usage: ns.usageWithArgumentsRequired)
        guard let nameWord = args.positional.first else {
            if !args.options.isEmpty || !args.flags.isEmpty {
                throw ShellError("ns needs a NAME before its options", at: command.words[1].offset)
            }
            return list(session, cache)
        }
        let name = try Arguments.namespace(nameWord)
        // On a read-only store, `ns NAME` alone only shows it: defining it (or counting the
        // command in the sequence numbers) would change the store.
        if let link = session.store, link.readOnlyState != nil, args.options.isEmpty, args.flags.isEmpty {
            guard cache.namespacePolicies().contains(where: { $0.name == name && $0.defined }) else {
                throw ShellError("the store \(link.store.path) is read-only: ns \(name) would define \(name) and change it", at: nameWord.offset)
            }
            return nsReply(name, cache.policy(of: name), changed: [])
        }
        var change = PolicyChange()
        // In the order written: with two bad options, the first is the one named, every run (the
        // options' dictionary iterates in a per-process order, so the error changed from run to
        // run and a transcript of it did not verify).
        for (option, word) in args.options.sorted(by: { $0.value.offset < $1.value.offset }) {
            let value = word.option!.value
            let at = word.offset + option.count + 1
            let unset = value == "none"
            switch option {
            case "ttl":
                if unset { throw ShellError("ttl cannot be none: every entry expires", at: at) }
                change.ttl = try Arguments.duration(value, at: at)
            case "stale": change.stale = .some(try Arguments.durationOrNone(value, at: at))
            case "stale-if-error": change.staleIfError = .some(try Arguments.durationOrNone(value, at: at))
            case "timeout": change.timeout = .some(try Arguments.durationOrNone(value, at: at))
            case "dedupe": change.dedupe = .some(try Arguments.durationOrNone(value, at: at))
            case "policy":
                guard let eviction = Eviction(rawValue: String(value)) else {
                    throw ShellError("policy must be lru, fifo, sieve or lfu, not \"\(value)\"", at: at)
                }
                change.eviction = eviction
            case "retry":
                guard let n = Int(value), n >= 0, n <= Policy.maxRetries else {
                    throw ShellError("retry must be a whole number from 0 to \(Policy.maxRetries), not \"\(value)\"", at: at)
                }
                change.retry = n
            case "backoff":
                if unset { throw ShellError("backoff cannot be none (retry=0 turns retries off)", at: at) }
                change.backoff = try Arguments.duration(value, at: at)
            case "naive":
                switch NaivePolicy.parse(String(value)) {
                case .success(let set): change.naive = set
                case .failure(let error): throw ShellError("ns: \(error.message)", at: at)
                }
            case "max":
                if unset { change.max = .some(nil) } else {
                    guard let n = Int(value), n >= 0 else { throw ShellError("max must be a whole number or none, not \"\(value)\"", at: at) }
                    // As a snapshot holds it (a count), so every session's state can be restored.
                    guard n <= Int(Int32.max) else { throw ShellError("max must be at most \(Int32.max), not \(value)", at: at) }
                    change.max = .some(n)
                }
            default: break
            }
        }
        if args.flag("purgeable") { change.purgeable = true }
        if args.flag("no-purgeable") { change.purgeable = false }
        change.http = try httpChange(name, args, session, cache)
        if change.http != nil && cache.policy(of: name).http == nil, let refusal = queuedAnswerRefusal(becomingHTTP: name, session) {
            throw ShellError(refusal, at: nameWord.offset)
        }
        let changed: [String]
        do { changed = try cache.defineNamespace(name, change) } catch {
            throw ShellError(error.message, at: nameWord.offset)
        }
        return nsReply(name, cache.policy(of: name), changed: changed)
    }

    /// Why namespace `name` cannot become an HTTP one yet, or nil: an answer `server next` queued
    /// for a key of it took the key as written, where an HTTP namespace normalizes it (`web:/./a`
    /// is `web:/a`), so the answer would be queued again (a recording's `server next`) for
    /// another key than the session's.
    static func queuedAnswerRefusal(becomingHTTP name: String, _ session: Session) -> String? {
        guard let key = session.server.scripted.keys.sorted().first(where: { KeyName.namespace(of: $0) == name }) else { return nil }
        return "\(name) has an answer queued (server next \(key)): a namespace becomes an HTTP one before any answer is queued for a key of it"
    }

    /// The HTTP settings `ns NAME http [shared] [origin=URL] [heuristic=P]` gives; nil when it
    /// gives none. `shared`, `origin=` and `heuristic=` go with `http`, or a namespace that is one.
    static func httpChange(_ name: String, _ args: Arguments, _ session: Session, _ cache: isolated Cache) throws(ShellError) -> HTTPNamespace? {
        var words = Set<String>()
        for word in args.positional.dropFirst() {
            guard word.kind == .bare, word.text == "http" || word.text == "shared" else {
                throw ShellError("ns NAME takes http and shared after the name, not \(Arguments.describe(word))", at: word.offset)
            }
            guard words.insert(word.text).inserted else { throw ShellError("ns: \(word.text) given twice", at: word.offset) }
        }
        let existing = cache.policy(of: name).http
        let settingHTTP = !words.isEmpty || args.option("origin") != nil || args.option("heuristic") != nil
        guard settingHTTP else { return nil }
        guard words.contains("http") || existing != nil else {
            let at = args.positional.dropFirst().first?.offset ?? (args.option("origin") ?? args.option("heuristic"))!.word.offset
            throw ShellError("ns: shared, origin= and heuristic= go with http (ns \(name) http ...)", at: at)
        }
        var http = existing ?? HTTPNamespace()
        if words.contains("shared") { http.policy.shared = true }
        if let (text, word) = args.option("origin") {
            var origin = String(text)
            while origin.hasSuffix("/") { origin.removeLast() }
            if let problem = HTTPNamespace.originProblem(origin) { throw ShellError("ns: " + problem, at: word.offset + 7) }
            http.origin = origin
        }
        if let (text, word) = args.option("heuristic") {
            guard text.utf8.count <= 3, let p = Int64(text), p >= 0, p <= HTTPNamespace.maxHeuristicPercent else {
                throw ShellError("ns: heuristic= is a percentage from 0 to \(HTTPNamespace.maxHeuristicPercent), not \(JSONValue.string(String(text)).compactText)",
                                 at: word.offset + 10)
            }
            http.policy.heuristicPercent = p
        }
        return http
    }

    /// What `ns NAME ...` prints: the policy now in force and the keys it changed.
    static func nsReply(_ name: String, _ policy: Policy, changed: [String]) -> Reply {
        var fields = policyFields(policy)
        fields["name"] = .string(name)
        fields["keys"] = .array(changed.map(JSONValue.string))
        fields["ok"] = .bool(true)
        var human = [describe(name, policy)] + (changed.isEmpty ? [] : ["keys: " + changed.joined(separator: " ")])
        if let note = staleNote(policy) {
            fields["note"] = .string(note)
            human.append("note: " + note)
        }
        return Reply(fields, human: human)
    }

    /// Why a policy never serves stale although it sets `stale=`: its entries expire (at `ttl`)
    /// no later than they turn stale; nil when it can.
    static func staleNote(_ p: Policy) -> String? {
        guard let stale = p.stale, stale >= p.ttl else { return nil }
        return "stale=\(TimeText.formatDuration(stale)) is not shorter than ttl=\(TimeText.formatDuration(p.ttl)): "
            + "entries expire before they turn stale, so none is ever served stale"
    }

    static func policyFields(_ p: Policy) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "ttl_ms": .int(p.ttl),
            "stale_ms": p.stale.map(JSONValue.int) ?? .null,
            "max": p.max.map { .int(Int64($0)) } ?? .null,
            "stale_if_error_ms": p.staleIfError.map(JSONValue.int) ?? .null,
            "timeout_ms": p.timeout.map(JSONValue.int) ?? .null,
            "purgeable": .bool(p.purgeable),
            "policy": .string(p.eviction.rawValue),
        ]
        if p.retry > 0 { fields["retry"] = .int(Int64(p.retry)); fields["backoff_ms"] = .int(p.backoff) }
        // Shown only when on: the default output is what it always was.
        if !p.naive.isEmpty { fields["naive"] = .array(p.naive.sorted().map { .string($0.rawValue) }) }
        if let d = p.dedupe { fields["dedupe_ms"] = .int(d) }
        if let http = p.http {
            fields["http"] = .object(["shared": .bool(http.policy.shared), "origin": http.origin.map(JSONValue.string) ?? .null,
                                      "heuristic_percent": .int(http.policy.heuristicPercent)])
        }
        return fields
    }

    /// `feed  ttl=45m stale=5m max=100 --purgeable`, the way `ns` would define it.
    static func describe(_ name: String, _ p: Policy) -> String {
        var parts = ["ns \(name)"]
        if let http = p.http {
            parts.append("http" + (http.policy.shared ? " shared" : "") + (http.origin.map { " origin=" + $0 } ?? "")
                         + (http.policy.heuristicPercent == 10 ? "" : " heuristic=\(http.policy.heuristicPercent)"))
        }
        parts.append("ttl=\(TimeText.formatDuration(p.ttl))")
        if let s = p.stale { parts.append("stale=\(TimeText.formatDuration(s))") }
        if let m = p.max { parts.append("max=\(m)") }
        if p.eviction != .lru { parts.append("policy=\(p.eviction.rawValue)") }
        if let s = p.staleIfError { parts.append("stale-if-error=\(TimeText.formatDuration(s))") }
        if let t = p.timeout { parts.append("timeout=\(TimeText.formatDuration(t))") }
        if p.retry > 0 { parts.append("retry=\(p.retry) backoff=\(TimeText.formatDuration(p.backoff))") }
        if p.purgeable { parts.append("--purgeable") }
        if !p.naive.isEmpty { parts.append("naive=" + NaivePolicy.text(p.naive)) }
        if let d = p.dedupe { parts.append("dedupe=" + TimeText.formatDuration(d)) }
        return parts.joined(separator: " ")
    }

    static func list(_ session: Session, _ cache: isolated Cache) -> Reply {
        let all = cache.namespacePolicies()
        var out: [String: JSONValue] = [:]
        for ns in all {
            var f = policyFields(ns.policy)
            f["entries"] = .int(Int64(ns.count))
            f["defined"] = .bool(ns.defined)
            out[ns.name] = .object(f)
        }
        // Retry and naive columns only when some namespace uses them: a table of namespaces that
        // do not is what it always was.
        let anyRetry = all.contains { $0.policy.retry > 0 }
        let anyNaive = all.contains { !$0.policy.naive.isEmpty }
        let anyDedupe = all.contains { $0.policy.dedupe != nil }
        let anyHTTP = all.contains { $0.policy.http != nil }
        let rows = all.map { ns -> [String] in
            let p = ns.policy
            let retry = p.retry > 0 ? [String(p.retry), TimeText.formatDuration(p.backoff)] : ["-", "-"]
            var row: [String] = [ns.name, TimeText.formatDuration(p.ttl), p.stale.map(TimeText.formatDuration) ?? "-",
                                 p.max.map(String.init) ?? "-", p.eviction.rawValue, p.staleIfError.map(TimeText.formatDuration) ?? "-",
                                 p.timeout.map(TimeText.formatDuration) ?? "-"]
            row += anyRetry ? retry : []
            row += [p.purgeable ? "yes" : "no", String(ns.count)]
            row += anyNaive ? [p.naive.isEmpty ? "-" : NaivePolicy.text(p.naive)] : []
            row += anyDedupe ? [p.dedupe.map(TimeText.formatDuration) ?? "-"] : []
            row += anyHTTP ? [p.http.map { $0.policy.shared ? "shared" : "private" } ?? "-"] : []
            return row
        }
        return Reply(["namespaces": .object(out)],
                     table: TableText(["namespace", "ttl", "stale", "max", "policy", "stale-if-error", "timeout"]
                                      + (anyRetry ? ["retry", "backoff"] : [])
                                      + ["purgeable", "entries"] + (anyNaive ? ["naive"] : []) + (anyDedupe ? ["dedupe"] : [])
                                      + (anyHTTP ? ["http"] : []), rows))
    }

    static let config = CommandSpec(name: "config", summary: "show the configuration in force", example: "config", run: config)

    static func config(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: config)
        try args.expect(0...0)
        var namespaces: [String: JSONValue] = [:]
        var human: [String] = []
        for ns in cache.namespacePolicies() where ns.defined {
            namespaces[ns.name] = .object(policyFields(ns.policy))
            human.append(describe(ns.name, ns.policy))
        }
        var push: [String: JSONValue] = [:]
        for (type, rule) in cache.pushRules.sorted(by: { $0.key < $1.key }) {
            var r: [String: JSONValue] = [:]
            if !rule.invalidate.isEmpty { r["invalidate"] = .array(rule.invalidate.map(JSONValue.string)) }
            if !rule.refresh.isEmpty { r["refresh"] = .array(rule.refresh.map(JSONValue.string)) }
            if !rule.evict.isEmpty { r["evict"] = .array(rule.evict.map(JSONValue.string)) }
            push[type] = .object(r)
            human.append("push \(type) -> " + (r.isEmpty ? "(notify only)" : JSONValue.object(r).compactText))
        }
        human.append("id-field: \(cache.idField)")
        // Over an attachment the app's origin serves: there is no simulated server to show (SPEC §9).
        if session.inspecting {
            return Reply(["namespaces": .object(namespaces), "push": .object(push), "id-field": .string(cache.idField)], human: human)
        }
        human.append("server latency: \(TimeText.formatDuration(session.server.latency))"
                     + session.server.latencies.sorted(by: { $0.key < $1.key }).map { ", \($0.key) \(TimeText.formatDuration($0.value))" }.joined())
        return Reply([
            "namespaces": .object(namespaces), "push": .object(push), "id-field": .string(cache.idField),
            "server": .object(["latency_ms": .int(session.server.latency),
                               "latencies_ms": .object(session.server.latencies.mapValues { .int($0) })]),
        ], human: human)
    }

    static let load = CommandSpec(
        name: "load", summary: "load a configuration: namespaces, push rules, server",
        arguments: [.oneOf(.file(meaning: "a JSON configuration file (a regular file of at most 64 MiB), relative to the script that loads it; replaces the configuration in force, namespaces set by ns before it included (entries stay, their times are recomputed)"),
                           .placeholder("{CONFIG}", meaning: "the configuration document itself, which may span lines (reads no file)"))],
        example: "load config.json", run: load,
        writes: CallForm(.configure) { call, returned, w throws(Diagnostic) in
            guard case .configure(let configuration) = call else { throw w.notItsKind(call) }
            let document = try w.configurationDocument(configuration)
            return ("load " + Session.documentText(document, newline: false), loadedInline(changed: w.keysOf(returned)))
        })

    static func load(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: load)
        try args.expect(1...1)
        let word = args.positional[0]
        if word.kind == .json {
            let changed = try session.applyConfiguration(text: word.text, from: "load", at: word.offset, on: cache)
            return loadedInline(changed: changed)
        }
        let path = session.resolvePath(word.text, relativeTo: source)
        let text = try session.readFile(path, at: word.offset)
        let changed = try session.applyConfiguration(text: text, from: path, at: word.offset, on: cache)
        if session.frames.runsTopLevel {
            // The history (and so a recording) holds the configuration itself, not the file's name.
            session.outcome.rewrite = inlineLoad(text: text, changed: changed, mode: session.options.mode)
        }
        return .ok(["file": .string(word.text), "keys": .array(changed.map(JSONValue.string))],
                   human: ["loaded \(word.text)" + (changed.isEmpty ? "" : "; keys: " + changed.joined(separator: " "))])
    }

    /// What `load {CONFIG}` prints.
    static func loadedInline(changed: [String]) -> Reply {
        .ok(["keys": .array(changed.map(JSONValue.string))],
            human: ["loaded configuration" + (changed.isEmpty ? "" : "; keys: " + changed.joined(separator: " "))])
    }

    /// A configuration file's `load` as a recording writes it: `load {CONFIG}` with the document
    /// pretty-printed (a line per field), and what that command prints.
    static func inlineLoad(text: String, changed: [String], mode: OutputMode) -> (command: String, output: String) {
        // The text was applied, so it parses.
        let document = (try? JSONValue(parsing: text)) ?? .object([:])
        var pretty = document.prettyText()
        while pretty.hasSuffix("\n") { pretty.removeLast() }
        return ("load " + pretty, loadedInline(changed: changed).text(command: "load", mode: mode, colour: false))
    }
}

extension Session {
    /// Applies `--config FILE` before anything else; a recording of this session starts with its `load`.
    /// - Returns: false (after printing the error) when the file cannot be read or is refused.
    public func loadInitialConfiguration(path: String, on cache: isolated Cache) -> Bool {
        func refuse(_ message: String) -> Bool {
            add(.line("cachesh: " + message, isError: true))
            terminal.release()
            return false
        }
        if let link = store, link.readOnlyState != nil {
            return refuse("--config: the store \(link.store.path) is read-only: loading a configuration would change it")
        }
        let text: String
        do { text = try FileIO.read(path) } catch { return refuse("cannot read \(path): \(error)") }
        do {
            _ = try applyConfiguration(text: text, from: path, at: 0, on: cache)
        } catch {
            return refuse(error.message)
        }
        // A fresh session has no entries, so the load changes no keys: its reply is fixed.
        // A recording holds the configuration itself: its `load {CONFIG}` prints no file name.
        let inline = ConfigCommands.inlineLoad(text: text, changed: [], mode: options.mode)
        history.entries.append(command: inline.command, output: inline.output, mode: options.mode)
        if options.echo {
            terminal.addShown(history.lastAsTranscript)
            terminal.release()
        }
        return true
    }

    /// Reads a file for a command (a regular file of at most `limit` bytes), refusing under `--safe`.
    func readFile(_ path: String, at offset: Int, limit: Int = FileIO.readLimit) throws(ShellError) -> String {
        try touchFile("read", path, at: offset)
        do { return try FileIO.read(path, limit: limit) } catch { throw ShellError("cannot read \(path): \(error)", at: offset) }
    }

    /// Parses and applies a configuration document; nothing is applied unless all of it is valid.
    /// - Returns: the keys changed by recomputed times.
    func applyConfiguration(text: String, from path: String, at offset: Int, on cache: isolated Cache) throws(ShellError) -> [String] {
        let parsed: ParsedConfiguration
        do { parsed = try ParsedConfiguration(text: text) } catch {
            throw ShellError("\(path): \(error.message)", at: offset)
        }
        // An answer queued with HTTP fields for a key whose namespace stops being an HTTP one
        // could be queued again by no command (a recording writes it back as one).
        for (key, answers) in server.scripted.sorted(by: { $0.key < $1.key })
        where answers.contains(where: { $0.status != nil || $0.headers != nil || $0.body != nil }) {
            let name = String(KeyName.namespace(of: key))
            if cache.httpSettings(ofKey: key) != nil && parsed.cache.namespaces[name]?.http == nil {
                throw ShellError("\(path): \(name) has an HTTP answer queued (server next \(key)): it stays an HTTP namespace until the answer is taken", at: offset)
            }
        }
        for (name, policy) in parsed.cache.namespaces.sorted(by: { $0.key < $1.key })
        where policy.http != nil && cache.policy(of: name).http == nil {
            if let refusal = ConfigCommands.queuedAnswerRefusal(becomingHTTP: name, self) { throw ShellError("\(path): \(refusal)", at: offset) }
        }
        let changed: [String]
        do { changed = try cache.configure(parsed.cache) } catch {
            throw ShellError("\(path): \(error.message)", at: offset)
        }
        server.idField = parsed.cache.idField
        if let latency = parsed.latency { server.latency = latency }
        if let latencies = parsed.latencies { server.latencies = latencies }
        if let data = parsed.data { server.replaceData(data, at: cache.now) }
        return changed
    }
}

/// A configuration file (SPEC §5.1), checked whole: an unknown field, a bad duration or a wrong
/// type is refused with its JSON path.
struct ParsedConfiguration {
    struct Problem: Error { var message: String }
    var cache = CacheConfiguration()
    var latency: Int64?
    var latencies: [String: Int64]?
    var data: [String: JSONValue]?

    init(text: String) throws(Problem) {
        let root: JSONValue
        do { root = try JSONValue(parsing: text) } catch {
            throw Problem(message: "not valid JSON: \(error.message) (byte \(error.offset))")
        }
        let top = try Self.object(root, "$")
        try Self.only(top, ["namespaces", "push", "id-field", "server"], "$")
        if let namespaces = top["namespaces"] {
            for (name, value) in try Self.object(namespaces, "$.namespaces").sorted(by: { $0.key < $1.key }) {
                let path = "$.namespaces.\(name)"
                if KeyName.problem(withNamespace: name) != nil {
                    throw Problem(message: "\(path): bad namespace name")
                }
                let o = try Self.object(value, path)
                try Self.only(o, ["ttl", "stale", "max", "policy", "stale-if-error", "timeout", "purgeable", "retry", "backoff", "naive", "dedupe",
                                  "http"], path)
                var p = Policy()
                if let v = o["ttl"] { p.ttl = try Self.duration(v, "\(path).ttl") }
                if let v = o["stale"], v != .null { p.stale = try Self.duration(v, "\(path).stale") }
                if let v = o["stale-if-error"], v != .null { p.staleIfError = try Self.duration(v, "\(path).stale-if-error") }
                if let v = o["timeout"], v != .null { p.timeout = try Self.duration(v, "\(path).timeout") }
                if let v = o["max"], v != .null {
                    guard case .int(let n) = v, n >= 0 else { throw Problem(message: "\(path).max: expected a whole number") }
                    guard n <= Int64(Int32.max) else { throw Problem(message: "\(path).max: expected at most \(Int32.max), not \(n)") }
                    p.max = Int(n)
                }
                if let v = o["policy"] {
                    guard case .string(let text) = v, let eviction = Eviction(rawValue: text) else {
                        throw Problem(message: "\(path).policy: expected \"lru\", \"fifo\", \"sieve\" or \"lfu\"")
                    }
                    p.eviction = eviction
                }
                if let v = o["retry"] {
                    guard case .int(let n) = v, n >= 0, n <= Int64(Policy.maxRetries) else {
                        throw Problem(message: "\(path).retry: expected a whole number from 0 to \(Policy.maxRetries)")
                    }
                    p.retry = Int(n)
                }
                if let v = o["backoff"] { p.backoff = try Self.duration(v, "\(path).backoff") }
                if let v = o["dedupe"], v != .null { p.dedupe = try Self.duration(v, "\(path).dedupe") }
                if let v = o["purgeable"] {
                    guard case .bool(let b) = v else { throw Problem(message: "\(path).purgeable: expected true or false") }
                    p.purgeable = b
                }
                if let v = o["naive"] {
                    guard case .array(let names) = v else {
                        throw Problem(message: "\(path).naive: expected an array of naive policy names")
                    }
                    for name in names {
                        guard case .string(let text) = name else {
                            throw Problem(message: "\(path).naive: expected an array of naive policy names")
                        }
                        guard let policy = NaivePolicy(rawValue: text) else {
                            throw Problem(message: "\(path).naive: " + NaiveNameError(name: text).message)
                        }
                        p.naive.insert(policy)
                    }
                }
                if let v = o["http"] {
                    p.http = try Self.http(v, "\(path).http")
                    if o["ttl"] == nil { p.ttl = HTTPNamespace.defaultKeep }
                }
                cache.namespaces[name] = p
            }
        }
        if let push = top["push"] {
            for (type, value) in try Self.object(push, "$.push").sorted(by: { $0.key < $1.key }) {
                let path = "$.push.\(type)"
                let o = try Self.object(value, path)
                try Self.only(o, ["invalidate", "refresh", "evict"], path)
                var rule = PushRule()
                rule.invalidate = try Self.targets(o["invalidate"], "\(path).invalidate")
                rule.refresh = try Self.targets(o["refresh"], "\(path).refresh")
                rule.evict = try Self.targets(o["evict"], "\(path).evict")
                cache.push[type] = rule
            }
        }
        if let idField = top["id-field"] {
            guard case .string(let s) = idField, !s.isEmpty else { throw Problem(message: "$.id-field: expected a non-empty string") }
            cache.idField = s
        }
        if let server = top["server"] {
            let o = try Self.object(server, "$.server")
            try Self.only(o, ["latency", "latencies", "data"], "$.server")
            if let v = o["latency"] { latency = try Self.duration(v, "$.server.latency") }
            if let v = o["latencies"] {
                var out: [String: Int64] = [:]
                for (key, d) in try Self.object(v, "$.server.latencies").sorted(by: { $0.key < $1.key }) {
                    out[KeyName.canonical(key)] = try Self.duration(d, "$.server.latencies.\(key)")
                }
                latencies = out
            }
            if let v = o["data"] {
                var out: [String: JSONValue] = [:]
                for (key, value) in try Self.object(v, "$.server.data").sorted(by: { $0.key < $1.key }) {
                    try Self.checkKey(key, "$.server.data")
                    if let problem = value.sizeProblem { throw Problem(message: "$.server.data.\(key): \(problem)") }
                    out[KeyName.canonical(key)] = value
                }
                data = out
            }
        }
    }

    /// A namespace's `"http"`: `true`, or `{"origin": URL, "shared": BOOL, "heuristic": P}`, each
    /// field optional (docs/SPEC.md, HTTP namespaces).
    private static func http(_ v: JSONValue, _ path: String) throws(Problem) -> HTTPNamespace {
        if v == .bool(true) { return HTTPNamespace() }
        guard case .object(let o) = v else { throw Problem(message: "\(path): expected true or an object") }
        try only(o, ["origin", "shared", "heuristic"], path)
        var http = HTTPNamespace()
        if let origin = o["origin"] {
            guard case .string(var text) = origin else { throw Problem(message: "\(path).origin: expected a string") }
            while text.hasSuffix("/") { text.removeLast() }
            if let problem = HTTPNamespace.originProblem(text) { throw Problem(message: "\(path).origin: " + problem) }
            http.origin = text
        }
        if let shared = o["shared"] {
            guard case .bool(let b) = shared else { throw Problem(message: "\(path).shared: expected true or false") }
            http.policy.shared = b
        }
        if let heuristic = o["heuristic"] {
            guard case .int(let n) = heuristic, n >= 0, n <= HTTPNamespace.maxHeuristicPercent else {
                throw Problem(message: "\(path).heuristic: expected a percentage from 0 to \(HTTPNamespace.maxHeuristicPercent)")
            }
            http.policy.heuristicPercent = n
        }
        return http
    }

    private static func object(_ v: JSONValue, _ path: String) throws(Problem) -> [String: JSONValue] {
        guard case .object(let o) = v else { throw Problem(message: "\(path): expected an object") }
        return o
    }

    private static func only(_ o: [String: JSONValue], _ allowed: Set<String>, _ path: String) throws(Problem) {
        for key in o.keys.sorted() where !allowed.contains(key) {
            throw Problem(message: "\(path).\(key): unknown field (expected one of: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    private static func duration(_ v: JSONValue, _ path: String) throws(Problem) -> Int64 {
        guard case .string(let s) = v else { throw Problem(message: "\(path): expected a duration string like \"5m\"") }
        guard let ms = TimeText.parseDuration(Substring(s)) else { throw Problem(message: "\(path): \(TimeText.durationError(Substring(s)))") }
        return ms
    }

    private static func targets(_ v: JSONValue?, _ path: String) throws(Problem) -> [String] {
        guard let v else { return [] }
        guard case .array(let items) = v else { throw Problem(message: "\(path): expected an array of targets") }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item, !s.isEmpty, !s.contains(" ") else {
                throw Problem(message: "\(path)[\(i)]: expected a target string (KEY, NS:* or tag:T)")
            }
            if let problem = PushRule.templateProblem(s) {
                throw Problem(message: "\(path)[\(i)]: \(JSONValue.string(s).compactText): \(problem)")
            }
            // A placeholder `push` cannot fill: its name=value takes a name as an option's is typed.
            for name in PushRule(invalidate: [s]).parameters where !Self.isParameterName(name) {
                throw Problem(message: "\(path)[\(i)]: \(JSONValue.string(s).compactText): push cannot fill {\(name)}: "
                              + "a placeholder's name is a lowercase letter, then lowercase letters, digits or -, as push NAME=VALUE takes it")
            }
            out.append(s)
        }
        return out
    }

    /// Whether `name` is typed as the name of push's `name=value`: `[a-z][a-z0-9-]*`.
    private static func isParameterName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    private static func checkKey(_ key: String, _ path: String) throws(Problem) {
        if let problem = KeyName.problem(withKey: key) {
            throw Problem(message: "\(path).\(JSONValue.string(key).compactText): bad key: \(problem)")
        }
    }
}
