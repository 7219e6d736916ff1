// TEMPORARY: replaced by the JSON and time files being written; never committed.
public struct PatchError: Error, Equatable, CustomStringConvertible { public var message: String; public var description: String { message } }
public struct Patch: Hashable, Sendable {
    public var document: JSONValue
    public init(_ document: JSONValue) throws(PatchError) { self.document = document }
    public func apply(to value: JSONValue) throws(PatchError) -> JSONValue { try Self.merge(value, document, path: "") }
    static func merge(_ target: JSONValue, _ patch: JSONValue, path: String) throws(PatchError) -> JSONValue {
        guard case .object(let p) = patch else { return patch }
        var t: [String: JSONValue] = [:]
        if case .object(let o) = target { t = o }
        for (k, v) in p {
            if case .object(let op) = v, op.count == 1, let (name, arg) = op.first, name.hasPrefix("$") {
                switch (name, t[k], arg) {
                case ("$inc", .int(let a)?, .int(let b)): t[k] = .int(a + b)
                case ("$inc", nil, .int(let b)): t[k] = .int(b)
                case ("$inc", _, _): throw PatchError(message: "cannot $inc \"\(k)\"")
                case ("$push", .array(let a)?, _): t[k] = .array(a + [arg])
                case ("$push", nil, _): t[k] = .array([arg])
                case ("$pull", .array(let a)?, _): t[k] = .array(a.filter { $0 != arg })
                default: throw PatchError(message: "bad op")
                }
                continue
            }
            if v == .null { t[k] = nil } else { t[k] = try merge(t[k] ?? .null, v, path: k) }
        }
        return .object(t)
    }
}
extension JSONValue {
    public func collectEntityIDs(idField: String, into ids: inout Set<String>) {
        switch self {
        case .object(let o):
            if case .int(let n)? = o[idField] { ids.insert(String(n)) }
            if case .string(let s)? = o[idField] { ids.insert(s) }
            for v in o.values { v.collectEntityIDs(idField: idField, into: &ids) }
        case .array(let a): for v in a { v.collectEntityIDs(idField: idField, into: &ids) }
        default: break
        }
    }
    public func patchingEntities(id: String, idField: String, with patch: Patch) throws(PatchError) -> (value: JSONValue, matches: Int) {
        switch self {
        case .object(var o):
            var m = 0
            for (k, v) in o { let r = try v.patchingEntities(id: id, idField: idField, with: patch); o[k] = r.value; m += r.matches }
            var result = JSONValue.object(o)
            let matches: Bool
            switch o[idField] { case .int(let n)?: matches = String(n) == id; case .string(let s)?: matches = s == id; default: matches = false }
            if matches { result = try patch.apply(to: result); m += 1 }
            return (result, m)
        case .array(var a):
            var m = 0
            for i in a.indices { let r = try a[i].patchingEntities(id: id, idField: idField, with: patch); a[i] = r.value; m += r.matches }
            return (.array(a), m)
        default: return (self, 0)
        }
    }
}
public struct JSONError: Error, Equatable, CustomStringConvertible { public var message: String; public var offset: Int; public var description: String { message } }
extension JSONValue {
    public init(parsing text: String) throws(JSONError) {
        var p = StubParser(b: Array(text.utf8))
        self = try p.value(0)
        p.ws()
        if p.i != p.b.count { throw JSONError(message: "trailing characters after JSON value", offset: p.i) }
    }
    public var compactText: String { var s = ""; write(compactTo: &s); return s }
    public func write(compactTo out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .double(let d): out += d == d.rounded() && abs(d) < 1e15 ? String(d) : String(d)
        case .string(let s):
            out += "\""
            for u in s.unicodeScalars {
                switch u { case "\"": out += "\\\""; case "\\": out += "\\\\"; case "\n": out += "\\n"; case "\t": out += "\\t"; case "\r": out += "\\r"
                default: if u.value < 0x20 { out += "\\u00" + (u.value < 16 ? "0" : "") + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) } }
            }
            out += "\""
        case .array(let a): out += "["; for (i, v) in a.enumerated() { if i > 0 { out += "," }; v.write(compactTo: &out) }; out += "]"
        case .object(let o): out += "{"; for (i, k) in o.keys.sorted().enumerated() { if i > 0 { out += "," }; JSONValue.string(k).write(compactTo: &out); out += ":"; o[k]!.write(compactTo: &out) }; out += "}"
        }
    }
    public func prettyText() -> String { compactText }
}
struct StubParser {
    var b: [UInt8]; var i = 0
    mutating func ws() { while i < b.count, b[i] == 32 || b[i] == 10 || b[i] == 9 || b[i] == 13 { i += 1 } }
    mutating func value(_ depth: Int) throws(JSONError) -> JSONValue {
        if depth > 512 { throw JSONError(message: "JSON nested deeper than 512 levels", offset: i) }
        ws()
        guard i < b.count else { throw JSONError(message: "unexpected end of input", offset: i) }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1; var o: [String: JSONValue] = [:]; ws()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            while true {
                ws(); guard case .string(let k) = try value(depth + 1) else { throw JSONError(message: "expected key", offset: i) }
                ws(); guard i < b.count, b[i] == UInt8(ascii: ":") else { throw JSONError(message: "expected ':'", offset: i) }
                i += 1; o[k] = try value(depth + 1); ws()
                guard i < b.count else { throw JSONError(message: "unexpected end of input", offset: i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
                throw JSONError(message: "expected ',' or '}'", offset: i)
            }
        case UInt8(ascii: "["):
            i += 1; var a: [JSONValue] = []; ws()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            while true {
                a.append(try value(depth + 1)); ws()
                guard i < b.count else { throw JSONError(message: "unexpected end of input", offset: i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
                throw JSONError(message: "expected ',' or ']'", offset: i)
            }
        case UInt8(ascii: "\""):
            i += 1; var s: [UInt8] = []
            while i < b.count, b[i] != UInt8(ascii: "\"") {
                if b[i] == UInt8(ascii: "\\") { i += 1; guard i < b.count else { break }; switch b[i] { case UInt8(ascii: "n"): s.append(10); case UInt8(ascii: "t"): s.append(9); default: s.append(b[i]) } } else { s.append(b[i]) }
                i += 1
            }
            guard i < b.count else { throw JSONError(message: "unterminated string", offset: i) }
            i += 1; return .string(String(decoding: s, as: UTF8.self))
        default:
            let start = i
            while i < b.count, !(b[i] == 44 || b[i] == 93 || b[i] == 125 || b[i] == 32 || b[i] == 10 || b[i] == 58) { i += 1 }
            let t = String(decoding: b[start..<i], as: UTF8.self)
            switch t { case "true": return .bool(true); case "false": return .bool(false); case "null": return .null; default: break }
            if let n = Int64(t) { return .int(n) }
            if let d = Double(t), t.first != "+", t.first != "." { return .double(d) }
            throw JSONError(message: "unexpected character '\(t.prefix(1))'", offset: start)
        }
    }
}
