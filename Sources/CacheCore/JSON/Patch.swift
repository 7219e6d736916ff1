
/// A JSON merge patch (RFC 7396) whose values may also be operators (SPEC §1.1):
/// `{"$inc": N}` adds N to a number, `{"$push": V}` appends V as one element,
/// `{"$pull": V}` removes the elements equal to V.
///
/// Applying is all or nothing: it returns a new value or throws, never half a change.
public struct Patch: Hashable, Sendable {
    /// The patch as written.
    public let document: JSONValue

    /// Checks the operators of a patch document.
    /// - Throws: `PatchError` for an unknown `$` operator, an operator object with other keys,
    ///   or `$inc` with a value that is not a number.
    public init(_ document: JSONValue) throws(PatchError) {
        try Self.check(document, path: "")
        self.document = document
    }

    private enum Operator {
        case inc(JSONValue), push(JSONValue), pull(JSONValue)
    }

    /// The operator an object stands for, if it is an operator object.
    private static func operation(_ value: JSONValue, path: String) throws(PatchError) -> Operator? {
        guard case .object(let object) = value, let name = object.keys.first(where: { $0.hasPrefix("$") }) else {
            return nil
        }
        guard object.count == 1 else {
            throw PatchError("operator \(name)\(at(path)) must be alone in its object")
        }
        let argument = object[name]!
        switch name {
        case "$inc":
            switch argument {
            case .int, .double: return .inc(argument)
            default: throw PatchError("$inc\(at(path)) needs a number, not \(kind(argument))")
            }
        case "$push": return .push(argument)
        case "$pull": return .pull(argument)
        default: throw PatchError("unknown patch operator \(name)\(at(path)) (use $inc, $push or $pull)")
        }
    }

    private static func check(_ value: JSONValue, path: String) throws(PatchError) {
        if try operation(value, path: path) != nil { return }
        guard case .object(let object) = value else { return }
        for (key, child) in object {
            try check(child, path: join(path, key))
        }
    }

    /// The value with the patch applied.
    /// - Complexity: O(size of the patch + size of the arrays it pulls from).
    /// - Throws: `PatchError` when an operator does not fit the value it meets (`$inc` on a string).
    /// - Throws: `PatchError` too when the result would be larger than `JSONValue.maxBytes`.
    public func apply(to value: JSONValue) throws(PatchError) -> JSONValue {
        // Only `$pull` on nothing yields nothing; at the top that leaves the value as it was.
        let result = try Self.merge(value, document, path: "") ?? value
        try Self.checkSize(result)
        return result
    }

    /// `apply` without the size check, for a patch applied to many objects of one value
    /// (`patchingEntities` measures the whole once).
    static func merged(_ value: JSONValue, _ document: JSONValue) throws(PatchError) -> JSONValue {
        try merge(value, document, path: "") ?? value
    }

    /// Refuses a patch's result larger than a value may be (SPEC §7.1), measured before it is
    /// printed: a result can share one subtree many times and be far larger than its tree.
    static func checkSize(_ result: JSONValue) throws(PatchError) {
        guard result.compactCount(atMost: JSONValue.maxBytes) != nil else {
            throw PatchError("the patch would make the value larger than 16 MiB (\(JSONValue.maxBytes) bytes of JSON)")
        }
    }

    /// The merged value; nil when the field stays absent (`$pull` from a field that does not exist).
    private static func merge(_ target: JSONValue?, _ patch: JSONValue, path: String) throws(PatchError) -> JSONValue? {
        if let op = try operation(patch, path: path) {
            return try apply(op, to: target, path: path)
        }
        guard case .object(let changes) = patch else { return patch }
        var object: [String: JSONValue]
        if case .object(let existing)? = target { object = existing } else { object = [:] }
        for (key, change) in changes {
            if change == .null {
                object[key] = nil
            } else {
                object[key] = try merge(object[key], change, path: join(path, key))
            }
        }
        return .object(object)
    }

    /// A sum that is still a finite number (JSON has no infinity): the one rule for numbers out
    /// of range, as the JSON reader refuses `1e400`.
    private static func finite(_ sum: Double, _ path: String) throws(PatchError) -> JSONValue {
        guard sum.isFinite else { throw PatchError("$inc\(at(path)) gives a number out of range") }
        return .double(sum)
    }

    private static func apply(_ op: Operator, to target: JSONValue?, path: String) throws(PatchError) -> JSONValue? {
        switch op {
        case .inc(let amount):
            switch (target, amount) {
            case (nil, _), (.null?, _): return amount
            case (.int(let a)?, .int(let b)):
                let (sum, overflow) = a.addingReportingOverflow(b)
                if overflow { throw PatchError("$inc\(at(path)) overflows a 64-bit integer") }
                return .int(sum)
            case (.int(let a)?, .double(let b)): return try finite(Double(a) + b, path)
            case (.double(let a)?, .int(let b)): return try finite(a + Double(b), path)
            case (.double(let a)?, .double(let b)): return try finite(a + b, path)
            case (let other?, _): throw PatchError("cannot $inc\(at(path)): it is \(kind(other)), not a number")
            }
        case .push(let element):
            switch target {
            case nil, .null?: return .array([element])
            case .array(let array)?: return .array(array + [element])
            case let other?: throw PatchError("cannot $push\(at(path)): it is \(kind(other)), not an array")
            }
        case .pull(let element):
            switch target {
            case nil: return nil
            case .null?: return .null
            case .array(let array)?: return .array(array.filter { $0 != element })
            case let other?: throw PatchError("cannot $pull\(at(path)): it is \(kind(other)), not an array")
            }
        }
    }

    private static func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    private static func at(_ path: String) -> String {
        path.isEmpty ? "" : " at \(path)"
    }

    /// "a string", "an object", ... for messages.
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
