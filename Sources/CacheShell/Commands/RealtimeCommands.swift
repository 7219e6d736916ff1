import CacheCore

/// `mutate`, `event`, `push`: optimistic mutations (B11), realtime patches (B8), push rules (B9).
enum RealtimeCommands {
    static func mutate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, leading: 3)
        if args.positional.first?.text == "entity" && args.positional.count == 3 {
            let id = args.positional[1].text
            let patch = try args.patch(2)
            do { return .keys(try cache.mutate(entity: id, patch: patch), ok: true) } catch {
                throw ShellError(error.message, at: args.positional[2].offset)
            }
        }
        try args.expect(2...2, usage: "KEY PATCH or entity ID PATCH")
        let key = try args.key(0)
        let patch = try args.patch(1)
        do { return .keys(try cache.mutate(key, patch: patch), ok: true) } catch {
            throw ShellError(error.message, at: args.positional[1].offset)
        }
    }

    /// `event patch KEY PATCH [--own]` / `event entity ID PATCH [--own]`: both change the server's
    /// data too (unless `--own`: the echo of this client's change, which the server already has).
    static func event(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, flags: ["own"], leading: 3)
        guard let form = args.positional.first?.text, form == "patch" || form == "entity" else {
            throw ShellError("event needs patch KEY PATCH or entity ID PATCH",
                             at: args.positional.first?.offset ?? command.end)
        }
        try args.expect(3...3, usage: "\(form) \(form == "patch" ? "KEY" : "ID") PATCH [--own]")
        let patch = try args.patch(2)
        let own = args.flag("own")
        let server = session.server
        if form == "patch" {
            let key = try args.key(1)
            // Validate on both sides before changing either (SPEC §7).
            let serverValue: JSONValue?
            do { serverValue = try server.patched(key, patch) } catch {
                throw ShellError("\(error) (in the server's \(key))", at: args.positional[2].offset)
            }
            let keys: [String]
            do { keys = try cache.event(key, patch: patch, own: own) } catch {
                throw ShellError(error.message, at: args.positional[2].offset)
            }
            if !own, let serverValue { server.set(key, serverValue, at: cache.now) }
            return .keys(keys, ok: true)
        }
        let id = args.positional[1].text
        let serverChanges: [(key: String, value: JSONValue)]
        do { serverChanges = try server.patchedEntities(id, patch) } catch {
            throw ShellError("\(error) (in the server's data)", at: args.positional[2].offset)
        }
        let keys: [String]
        do { keys = try cache.event(entity: id, patch: patch, own: own) } catch {
            throw ShellError(error.message, at: args.positional[2].offset)
        }
        if !own { for change in serverChanges { server.set(change.key, change.value, at: cache.now) } }
        return .keys(keys, ok: true)
    }

    static func push(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, options: nil)
        try args.expect(1...1, usage: "TYPE [name=value...]")
        var arguments: [String: String] = [:]
        for name in args.options.keys { arguments[name] = String(args.option(name)!.value) }
        do {
            return .keys(try cache.push(args.positional[0].text, arguments: arguments))
        } catch {
            throw ShellError(error.message, at: args.positional[0].offset)
        }
    }
}

/// `validate [--items]`: the validation handshake (B10).
enum ValidationCommands {
    static func fields(_ result: ValidationResult) -> [String: JSONValue] {
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

    static func validate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, flags: ["items", "async"])
        try args.expect(0...0, usage: "[--items] [--async]")
        let wait = !session.inScheduled && !args.flag("async")
        let result: ValidationResult
        do {
            result = try cache.validate(items: args.flag("items"), wait: wait)
        } catch {
            throw ShellError(error.message, at: command.offset)
        }
        return reply(result, waited: wait)
    }

    /// What `validate` prints; without `waited`, an answer still to come shows as such.
    static func reply(_ result: ValidationResult, waited: Bool) -> Reply {
        let f = fields(result)
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
}
