import CacheCore

/// `mutate`, `event`, `push`, `validate`, `pending`: optimistic mutations (B11), realtime patches
/// (B8), push rules (B9), the validation handshake (B10), and the work in flight.
enum RealtimeCommands {
    static let family = CommandFamily(title: "Realtime, push and validation", commands: [mutate, event, push, validate, pending])

    static let mutate = CommandSpec(
        name: "mutate", summary: "optimistic mutation of an entry, or of an entity",
        arguments: [
            .oneOf(.key(meaning: "the entry to change; one not cached yet (or still loading) gets the patch on its answer"),
                   .word("entity", meaning: "every cached entry embedding an object whose id field is ID", label: "entity ID")),
            .id(),
            .patch(meaning: Meaning.patch),
        ],
        flags: [
            .flag("pessimistic", meaning: "not optimistic: nothing changes until the server confirms; a failure changes nothing"),
            .flag("refetch", meaning: "the server's answer has no body: on success keep the change and refetch the keys"),
            .flag("idempotent", meaning: "send an idempotency key: after a failure it is retried as ns retry= retries a fetch, and the server applies it once"),
        ],
        example: "mutate feed:home {\"likes\":{\"$inc\":1}}", run: mutate,
        writes: CallForm(.mutate, .mutateEntity) { call, returned, w throws(Diagnostic) in
            /// ` --pessimistic`, ` --refetch`, ` --idempotent`: the options of a mutation as the command's flags.
            func flags(_ options: MutationOptions) -> String {
                (options.pessimistic ? " --pessimistic" : "") + (options.refetch ? " --refetch" : "")
                    + (options.idempotent ? " --idempotent" : "")
            }
            if case .mutate(let key, let patch, let options) = call {
                try w.checkKey(key)
                return ("mutate \(key) \(patch.compactText)" + flags(options), w.keys(returned))
            }
            guard case .mutateEntity(let id, let patch, let options) = call else { throw w.notItsKind(call) }
            try w.checkWord(id, "entity id")
            return ("mutate entity \(id) \(patch.compactText)" + flags(options), w.keys(returned))
        })

    static func mutate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: mutate)
        var options = MutationOptions(pessimistic: args.flag("pessimistic"), refetch: args.flag("refetch"),
                                      idempotent: args.flag("idempotent"))
        if args.positional.first?.text == "entity" && args.positional.count < 3 {
            throw ShellError("mutate entity needs " + (args.positional.count == 1 ? "ID PATCH" : "a PATCH after the ID")
                             + " (mutate entity ID PATCH)", at: command.end)
        }
        if args.positional.first?.text == "entity" && args.positional.count > 3 {
            try args.expect(3...3, usage: "entity ID PATCH")
        }
        // `mutate KEY PATCH --flag`: the word after PATCH is where the entity form has its PATCH, so
        // it comes as it stands; it is the flag it looks like.
        var flagAfterPatch = false
        if args.positional.first?.text != "entity", args.positional.count == 3 {
            let word = args.positional[2]
            switch word.flag {
            case "pessimistic"?: options.pessimistic = true; flagAfterPatch = true
            case "refetch"?: options.refetch = true; flagAfterPatch = true
            case "idempotent"?: options.idempotent = true; flagAfterPatch = true
            case let flag?: throw ShellError("mutate has no flag --\(flag) (it takes --pessimistic, --refetch, --idempotent)", at: word.offset)
            case nil: break
            }
        }
        if args.positional.first?.text == "entity" && args.positional.count == 3 {
            let id = args.positional[1].text
            let patch = try args.patch(2)
            do { return .keys(try cache.mutate(entity: id, patch: patch, options: options)) } catch {
                throw ShellError(error.message, at: args.positional[2].offset)
            }
        }
        if args.positional.count == 1 {
            throw ShellError("mutate needs a PATCH after the key (mutate KEY PATCH)", at: command.end)
        }
        if !flagAfterPatch { try args.expect(2...2, usage: "KEY PATCH or entity ID PATCH") }
        let key = try args.key(0, in: cache)
        let patch = try args.patch(1)
        do { return .keys(try cache.mutate(key, patch: patch, options: options)) } catch {
            throw ShellError(error.message, at: args.positional[1].offset)
        }
    }

    /// `event patch KEY PATCH [--own]` / `event entity ID PATCH [--own]`: both change the server's
    /// data too (unless `--own`: the echo of this client's change, which the server already has).
    static let event = CommandSpec(
        name: "event", summary: "realtime change of a key, or of an entity everywhere",
        arguments: [
            .oneOf(.word("patch", meaning: "change the value of KEY", label: "patch KEY"),
                   .word("entity", meaning: "change every object, at any depth, whose id field is ID", label: "entity ID")),
            .oneOf(.key(), .id()),
            .patch(meaning: Meaning.patch),
        ],
        options: [.count("version", meaning: "event patch only: the server version the change reflects; "
                            + "an entry already at it or newer skips the event (0 to 2^53)"),
                  .text("client", placeholder: "NAME", meaning: "only client NAME gets the event (default: every client)")],
        flags: [.flag("own", meaning: "the echo of this client's own change: the cache skips it")],
        example: "event entity 1 {\"likes\":{\"$inc\":1}}", run: event,
        writes: CallForm(.event, .eventEntity) { call, returned, w throws(Diagnostic) in
            if case .event(let key, let patch, let own, let version) = call {
                try w.checkKey(key)
                return ("event patch \(key) \(patch.compactText)" + (version.map { " version=\($0)" } ?? "")
                        + (own ? " --own" : ""), w.keys(returned))
            }
            guard case .eventEntity(let id, let patch, let own) = call else { throw w.notItsKind(call) }
            try w.checkWord(id, "entity id")
            return ("event entity \(id) \(patch.compactText)" + (own ? " --own" : ""), w.keys(returned))
        })

    static func event(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: event)
        guard let form = args.positional.first?.text, form == "patch" || form == "entity" else {
            throw ShellError("event needs patch KEY PATCH or entity ID PATCH",
                             at: args.positional.first?.offset ?? command.end)
        }
        try args.expect(3...3, usage: "\(form) \(form == "patch" ? "KEY PATCH [version=N]" : "ID PATCH") [--own]")
        let patch = try args.patch(2)
        let own = args.flag("own")
        let version = try args.version()
        let server = session.server
        if version != nil && form == "entity" {
            throw ShellError("event entity has no version=: a version is one key's (event patch KEY PATCH version=N)",
                             at: args.options["version"]!.offset)
        }
        // Every client gets the event, or the one client= names (SPEC §3 Clients): checked on
        // the server and on each of them before any changes (SPEC §7).
        let only = try session.addressedClient(args)
        let at = args.positional[2].offset
        /// A client's error names the client, when there are several.
        func failure(_ error: CacheError, _ client: String?) -> ShellError {
            ShellError(error.message + (client.map { " (in client \($0))" } ?? ""), at: at)
        }
        var keys: [String] = []
        if form == "patch" {
            let key = try args.key(1, in: cache)
            let serverValue: JSONValue?
            do { serverValue = try server.patched(key, patch) } catch {
                throw ShellError("\(error) (in the server's \(key))", at: at)
            }
            if session.clients.several {
                try session.forEachClient(cache, only: only) { client, name throws(ShellError) in
                    do throws(CacheError) { try client.checkEvent(key, patch: patch, version: version) } catch { throw failure(error, name) }
                }
            }
            try session.forEachClient(cache, only: only) { client, name throws(ShellError) in
                do throws(CacheError) { keys += try client.event(key, patch: patch, own: own, version: version) } catch { throw failure(error, name) }
            }
            if !own, let serverValue { server.applyEvent(key, serverValue, at: cache.now, version: version) }
            return .keys(session.clients.several ? uniqued(keys) : keys)
        }
        let id = args.positional[1].text
        let serverChanges: [(key: String, value: JSONValue)]
        do { serverChanges = try server.patchedEntities(id, patch) } catch {
            throw ShellError("\(error) (in the server's data)", at: at)
        }
        if session.clients.several {
            try session.forEachClient(cache, only: only) { client, name throws(ShellError) in
                do throws(CacheError) { try client.checkEvent(entity: id, patch: patch) } catch { throw failure(error, name) }
            }
        }
        try session.forEachClient(cache, only: only) { client, name throws(ShellError) in
            do throws(CacheError) { keys += try client.event(entity: id, patch: patch, own: own) } catch { throw failure(error, name) }
        }
        if !own { for change in serverChanges { server.set(change.key, change.value, at: cache.now) } }
        return .keys(session.clients.several ? uniqued(keys) : keys)
    }

    static let push = CommandSpec(
        name: "push", summary: "push notification, through the configured rules",
        arguments: [.pushType(meaning: "the push type a rule of the configuration names")],
        options: [.pushParameters(meaning: "fills {name} in the rule's targets; client=NAME is not one: only client NAME gets the push "
                                  + "(default: every client)")],
        example: "push friend-blocked user=42", run: push,
        writes: CallForm(.push) { call, returned, w throws(Diagnostic) in
            guard case .push(let type, let arguments) = call else { throw w.notItsKind(call) }
            try w.checkWord(type, "push type")
            if type.hasPrefix("-") || type.contains("=") { throw w.fail("the push type \(JSONValue.string(type).compactText) cannot be typed") }
            var command = "push \(type)"
            for name in arguments.keys.sorted() {
                let value = arguments[name]!
                guard Word(text: name + "=", kind: .bare, offset: 0, end: 0).option != nil else {
                    throw w.fail("the push argument name \(JSONValue.string(name).compactText) cannot be typed")
                }
                if !value.isEmpty { try w.checkWord(value, "push argument") }
                command += " \(name)=\(value)"
            }
            return (command, w.keys(returned))
        })

    static func push(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: push)
        try args.expect(1...1)
        var arguments: [String: String] = [:]
        for name in args.options.keys where name != "client" { arguments[name] = String(args.option(name)!.value) }
        // Every client gets the push, or the one client= names (SPEC §3 Clients); each is
        // checked before any changes.
        let only = try session.addressedClient(args)
        let type = args.positional[0].text
        func failure(_ error: CacheError, _ client: String?) -> ShellError {
            ShellError(error.message + (client.map { " (in client \($0))" } ?? ""), at: args.positional[0].offset)
        }
        if session.clients.several {
            try session.forEachClient(cache, only: only) { client, name throws(ShellError) in
                do throws(CacheError) { try client.checkPush(type, arguments: arguments) } catch { throw failure(error, name) }
            }
        }
        var keys: [String] = []
        try session.forEachClient(cache, only: only) { client, name throws(ShellError) in
            do throws(CacheError) { keys += try client.push(type, arguments: arguments) } catch { throw failure(error, name) }
        }
        return .keys(session.clients.several ? uniqued(keys) : keys)
    }

    /// `keys` without repeats, in the order first met (the keys several clients changed).
    static func uniqued(_ keys: [String]) -> [String] {
        var seen = Set<String>()
        return keys.filter { seen.insert($0).inserted }
    }

    /// The fields of a validation: its request, response and changed keys.
    static func validationFields(_ result: ValidationResult) -> [String: JSONValue] {
        var request: [String: JSONValue] = [:]
        for (ns, time) in result.request { request[ns] = .string(TimeText.iso8601(ms: time)) }
        var fields: [String: JSONValue] = ["request": .object(request), "keys": .array(result.keys.map(JSONValue.string))]
        if let response = result.response {
            var out: [String: JSONValue] = [:]
            for (ns, verdict) in response {
                var v: [String: JSONValue] = ["invalidate": .bool(verdict.invalidate)]
                if let items = verdict.items { v["items"] = .object(items) }
                out[ns] = .object(v)
            }
            fields["response"] = .object(out)
        } else {
            fields["response"] = .null
        }
        if let error = result.error { fields["error"] = .string(error) }
        return fields
    }

    static let validate = CommandSpec(
        name: "validate", summary: "validation handshake; prints request and response",
        flags: [.flag("items", meaning: "ask the server for the current values of the changed keys too"),
                .flag("async", meaning: "do not wait: the answer prints as a validated event line when it arrives")],
        example: "validate --items", run: validate,
        writes: CallForm(.validate) { call, returned, w throws(Diagnostic) in
            guard case .validate(let items, let wait) = call else { throw w.notItsKind(call) }
            guard case .validation(let result) = returned else { return ("validate", nil) }
            return ("validate" + (items ? " --items" : "") + (wait ? "" : " --async"), validationReply(result, waited: wait))
        })

    static func validate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: validate)
        try args.expect(0...0)
        let wait = !session.frames.inScheduled && !args.flag("async")
        let result: ValidationResult
        do {
            result = try cache.validate(items: args.flag("items"), wait: wait)
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
        return validationReply(result, waited: wait)
    }

    /// What `validate` prints; without `waited`, an answer still to come shows as such.
    static func validationReply(_ result: ValidationResult, waited: Bool) -> Reply {
        let f = validationFields(result)
        var human = ["request:  " + f["request"]!.compactText]
        if !waited && result.response == nil && result.error == nil {
            human.append("response: (when it arrives)")
        } else {
            human.append("response: " + f["response"]!.compactText)
        }
        if let error = result.error { human.append("error:    " + error) }
        human.append("keys:     " + (result.keys.isEmpty ? "(none)" : result.keys.joined(separator: " ")))
        return Reply(f, human: human)
    }

    static let pending = CommandSpec(
        name: "pending", summary: "requests in flight, queued mutations, scheduled commands",
        example: "pending", run: pending)

    static func pending(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: pending)
        try args.expect(0...0)
        var items: [JSONValue] = []
        var rows: [[String]] = []
        var neverAnswered: [String] = []
        for item in cache.pendingWork() {
            var f: [String: JSONValue] = ["id": .int(Int64(item.id))]
            f["due"] = item.dueAt.map { .string(TimeText.iso8601(ms: $0)) } ?? .null
            f["due_in_ms"] = item.dueAt.map { .int($0 - cache.now) } ?? .null
            let what: String
            let detail: String
            switch item.kind {
            case .request(let kind, let keys):
                f["type"] = .string("request"); f["kind"] = .string(kind.rawValue); f["keys"] = .array(keys.map(JSONValue.string))
                what = kind.rawValue; detail = keys.joined(separator: " ")
            case .queuedMutation(let keys):
                f["type"] = .string("queued-mutation"); f["keys"] = .array(keys.map(JSONValue.string))
                what = "queued mutate"; detail = keys.joined(separator: " ")
            case .scheduled(let token):
                let text = session.schedule[token]?.text ?? ""
                f["type"] = .string("at"); f["command"] = .string(text)
                what = "at"; detail = text
            case .poll(let key, let every):
                f["type"] = .string("poll"); f["keys"] = .array([.string(key)]); f["every_ms"] = .int(every)
                what = "poll"; detail = "\(key) every \(TimeText.formatDuration(every))"
            }
            items.append(.object(f))
            // Work due at the clock's end never comes: `never`, not a date 292 million years on.
            if item.dueAt == .max {
                rows.append(["never", "never", what, detail])
                if case .request(_, let keys) = item.kind, let key = keys.first { neverAnswered.append(key) }
            } else {
                rows.append([item.dueAt.map { TimeText.iso8601(ms: $0) } ?? "(when online)",
                             item.dueAt.map { "+" + TimeText.formatDuration($0 - cache.now) } ?? "-", what, detail])
            }
        }
        var notes: [String] = []
        if let key = neverAnswered.first {
            notes.append("note: a request due never is never answered: cancel \(key) drops it,")
            notes.append("      and ns \(KeyName.namespace(of: key)) timeout=D makes the next one give up")
        }
        if rows.isEmpty { return Reply(["pending": .array(items)], human: ["(nothing pending)"] + notes) }
        return Reply(["pending": .array(items)], table: TableText(["due", "in", "what", "detail"], rows, after: notes))
    }
}
