/// The push rules (B9) by push type, and how a push's arguments fill a rule's targets.
///
/// Any set of rules is valid: a rule is data, and a push is checked against its rule when it
/// arrives. So this part has no invariant of its own to check.
struct PushRules {
    /// Rules by push type (`CacheEngine.pushRules`).
    private(set) var byType: [String: PushRule] = [:]

    init(_ rules: [String: PushRule] = [:]) { byType = rules }

    /// The targets of a push: its rule's, with each `{name}` replaced by the argument `name`.
    struct Targets {
        var invalidate: [Target]
        var refresh: [Target]
        var evict: [Target]
    }

    /// The targets the push of `type` with `arguments` acts on.
    /// - Throws: `CacheError` for a push type with no rule, a missing argument, an argument the
    ///   rule does not use, or an argument holding a pattern character.
    /// - Complexity: O(total length of the rule's targets and the arguments).
    func targets(of type: String, arguments: [String: String]) throws(CacheError) -> Targets {
        guard let rule = byType[type] else {
            let known = byType.keys.sorted()
            throw CacheError("no push rule for \"\(type)\"" + (known.isEmpty ? " (no rules are configured)" : " (rules: \(known.joined(separator: ", ")))"))
        }
        let missing = rule.parameters.filter { arguments[$0] == nil }
        if !missing.isEmpty {
            throw CacheError("push \"\(type)\" needs " + missing.map { "\($0)=VALUE" }.joined(separator: " "))
        }
        // An argument the rule does not use would be ignored: a typo (`usr=42`) must not pass unseen.
        let extra = arguments.keys.filter { !rule.parameters.contains($0) }.sorted()
        if !extra.isEmpty {
            let takes = rule.parameters.isEmpty ? "no arguments" : rule.parameters.map { "\($0)=VALUE" }.joined(separator: " ")
            throw CacheError("push \"\(type)\" takes \(takes); unexpected " + extra.map { "\($0)=" }.joined(separator: ", "))
        }
        // A value is data, not a pattern: `user=*` must not turn `profile:{user}` into a whole namespace.
        for name in rule.parameters.sorted() where arguments[name]!.contains(where: { "*?[]{}".contains($0) }) {
            throw CacheError("push argument \(name)=\(arguments[name]!) may not contain * ? [ ] { or }")
        }
        /// The target with each `{name}` replaced in one left-to-right pass, so values are never rescanned.
        func fill(_ target: String) -> Target {
            var text = ""
            var rest = target[...]
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                text += rest[..<open]
                let name = String(rest[rest.index(after: open)..<close])
                text += arguments[name] ?? String(rest[open...close])
                rest = rest[rest.index(after: close)...]
            }
            text += rest
            return Target(parsing: text)
        }
        return Targets(invalidate: rule.invalidate.map(fill), refresh: rule.refresh.map(fill), evict: rule.evict.map(fill))
    }
}
