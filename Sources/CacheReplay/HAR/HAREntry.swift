import CacheCore

/// A response body as a HAR log holds it.
public enum HARBody: Sendable, Equatable {
    /// `content.text` without an encoding: the body as text.
    case text(String)
    /// `content.text` with `encoding: base64`: only its decoded size and SHA-256 are kept (the
    /// digest "" when the log was read without digests, as a replay reads it).
    case encoded(size: Int, digest: String)
    /// No `content.text` (exporters leave it out for binary or large bodies): the size the log
    /// gives in `content.size`, else `response.bodySize`; nil when neither does.
    case absent(size: Int?)

    /// The body's size in bytes, when the log says it.
    public var size: Int? {
        switch self {
        case .text(let text): text.utf8.count
        case .encoded(let size, _): size
        case .absent(let size): size
        }
    }

    /// `sha256:` and the hex SHA-256 of the body's bytes; nil when the log does not hold them.
    public var digest: String? {
        switch self {
        case .text(let text): SHA256.hexDigest(of: Array(text.utf8))
        case .encoded(_, let digest): digest
        case .absent: nil
        }
    }
}

/// Where a recorded client says it took a response from without the network: Chrome's
/// `_fromCache`.
public enum HARCacheSource: String, Sendable, Equatable {
    case memory, disk
}

/// One exchange of a HAR log, as a replay uses it.
public struct HAREntry: Sendable, Equatable {
    /// The entry's index in `log.entries` (from 0).
    public var index: Int
    /// `startedDateTime`, in ms since the Unix epoch (fractions of a ms dropped).
    public var start: Int64
    public var method: String
    /// `request.url` as the log writes it.
    public var url: String
    /// `scheme://host[:port]`: scheme and host in lower case, the scheme's default port left out.
    public var origin: String
    /// The path with its query, normalized as an HTTP namespace keys it (`HTTPTarget`).
    public var target: String
    /// The request's headers, HTTP/2 pseudo-headers (`:authority`, `:path`, ...) left out.
    public var requestHeaders: HTTPFields
    public var status: Int
    /// The response's headers, pseudo-headers (`:status`) left out.
    public var responseHeaders: HTTPFields
    public var body: HARBody
    /// The time the exchange took (ms): the sum of the `timings` that apply (`-1` is absent;
    /// `ssl` is part of `connect`), else `time`; nil when the log gives neither.
    public var latency: Double?
    /// Chrome's `_fromCache`: the recorded client answered from its own cache.
    public var fromCache: HARCacheSource?
    /// Chrome's `_resourceType` (`document`, `fetch`, `image`, ...).
    public var resourceType: String?

    /// Whether the log shows a 304 on the wire: the recorded client revalidated.
    public var notModifiedOnWire: Bool { status == 304 }

    /// One decoded entry of a log: what to replay, or why it is skipped.
    public enum Decoded: Sendable, Equatable {
        case entry(HAREntry)
        /// A warning line: `entries[3]: skipped: ...`.
        case skipped(String)
    }

    /// Decodes entry `index` of a log, as `HARReader.next()` returned it.
    /// - Throws: a missing, duplicate or mistyped field, with its path.
    /// - Parameter digests: whether a base64 body's SHA-256 is computed (else its digest is "").
    public static func decode(_ value: JSONValue, index: Int, limits: HARLimits = .standard, digests: Bool = true) throws(HARError) -> Decoded {
        let entry = try HARObject(value, path: "entries[\(index)]")
        func skip(_ why: String) -> Decoded { .skipped("entries[\(index)]: skipped: \(why)") }

        let startText = try entry.string("startedDateTime")
        guard let start = HARTime.milliseconds(startText) else {
            throw entry.fail("startedDateTime",
                             "expected a time like \"2026-01-01T10:00:00.000Z\" (ISO 8601 with its zone), not \(JSONValue.string(startText).compactText)")
        }
        let request = try entry.object("request")
        let method = try request.string("method")
        let url = try request.string("url")
        let (requestHeaders, pseudo) = try request.headers("headers")
        let resourceType = try entry.optionalString("_resourceType")

        if resourceType == "websocket" { return skip("a WebSocket connection (_resourceType \"websocket\")") }
        if entry.has("_webSocketMessages") { return skip("a WebSocket connection (_webSocketMessages)") }
        if method == "CONNECT" { return skip("a CONNECT request (a proxy's tunnel, not an exchange a cache sees)") }

        let origin: String
        let target: String
        switch HARURL.split(url, pseudo: pseudo, host: requestHeaders["host"]) {
        case .success(let split): (origin, target) = split
        case .failure(let problem): return skip(problem.description)
        }

        let response = try entry.object("response")
        let status = try response.integer("status")
        if status == 0 { return skip("no response (status 0: the request failed or was cancelled)") }
        guard (100...999).contains(status) else {
            throw response.fail("status", "expected a status code from 100 to 999, not \(status)")
        }
        // A final response is 200 to 599 (RFC 9110 §15): what a cache stores, and what `server
        // next status=` takes, so the transcript of a log verifies.
        if status < 200 { return skip("an interim response (status \(status)), not a final one a cache sees") }
        if status > 599 { return skip("status \(status), which is no HTTP status (a final one is 200 to 599)") }
        let (responseHeaders, _) = try response.headers("headers")
        let body = try HARObject.body(response, limits: limits, digests: digests)
        let latency = try entry.latency()
        let fromCache: HARCacheSource?
        if let text = try entry.optionalString("_fromCache") {
            guard let source = HARCacheSource(rawValue: text) else {
                throw entry.fail("_fromCache", "expected \"memory\" or \"disk\", not \(JSONValue.string(text).compactText)")
            }
            fromCache = source
        } else {
            fromCache = nil
        }
        return .entry(HAREntry(index: index, start: start, method: method, url: url, origin: origin, target: target,
                               requestHeaders: requestHeaders, status: status, responseHeaders: responseHeaders,
                               body: body, latency: latency, fromCache: fromCache, resourceType: resourceType))
    }
}

/// An object of an entry at its JSON path, read field by field with errors that name the path.
struct HARObject {
    let fields: [String: JSONValue]
    let path: String

    init(_ value: JSONValue, path: String) throws(HARError) {
        guard case .object(let fields) = value else { throw HARError("\(path): expected an object, not \(HARObject.kind(value))") }
        self.fields = fields
        self.path = path
    }

    func fail(_ name: String, _ message: String) -> HARError { HARError("\(path).\(name): \(message)") }

    func has(_ name: String) -> Bool { fields[name] != nil }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private func required(_ name: String) throws(HARError) -> JSONValue {
        guard let value = fields[name] else { throw fail(name, "missing") }
        return value
    }

    func string(_ name: String) throws(HARError) -> String {
        guard case .string(let text) = try required(name) else { throw fail(name, "expected a string, not \(Self.kind(fields[name]!))") }
        return text
    }

    func optionalString(_ name: String) throws(HARError) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        guard case .string(let text) = value else { throw fail(name, "expected a string, not \(Self.kind(value))") }
        return text
    }

    func object(_ name: String) throws(HARError) -> HARObject {
        try HARObject(try required(name), path: "\(path).\(name)")
    }

    func integer(_ name: String) throws(HARError) -> Int {
        switch try required(name) {
        case .int(let n) where n >= Int64(Int32.min) && n <= Int64(Int32.max): return Int(n)
        case .int(let n): throw fail(name, "\(n) is out of range")
        case .double(let d): throw fail(name, "expected a whole number, not \(d)")
        case let value: throw fail(name, "expected a number, not \(Self.kind(value))")
        }
    }

    /// A number of the log: nil when absent or `-1` (HAR's "does not apply"); a negative
    /// other than -1 is an error.
    func amount(_ name: String, what: String) throws(HARError) -> Double? {
        guard let value = fields[name], value != .null else { return nil }
        let number: Double
        switch value {
        case .int(let n): number = Double(n)
        case .double(let d): number = d
        default: throw fail(name, "expected a number, not \(Self.kind(value))")
        }
        if number == -1 { return nil }
        guard number >= 0 else { throw fail(name, "expected \(what) (0 or more, or -1 when it does not apply), not \(value.compactText)") }
        // At most 2^53, whole numbers to which a Double is exact: the sum of an entry's six
        // timings then fits the virtual clock's 64-bit milliseconds (a timing of 1e300 was
        // converted to them and trapped).
        guard number <= Self.largestAmount else {
            throw fail(name, "expected \(what) of at most \(Int64(Self.largestAmount)) (2^53), not \(value.compactText)")
        }
        return number
    }

    /// The largest duration or size `amount` takes: 2^53.
    static let largestAmount: Double = 9_007_199_254_740_992

    /// A header list (`[{"name": ..., "value": ...}]`) as fields, with the HTTP/2 pseudo-headers
    /// (names starting with `:`) apart.
    func headers(_ name: String) throws(HARError) -> (HTTPFields, [String: String]) {
        guard case .array(let list) = try required(name) else { throw fail(name, "expected an array, not \(Self.kind(fields[name]!))") }
        var headers = HTTPFields()
        var pseudo: [String: String] = [:]
        for (i, item) in list.enumerated() {
            let header = try HARObject(item, path: "\(path).\(name)[\(i)]")
            let field = try header.string("name")
            let value = try header.string("value")
            guard !field.isEmpty else { throw header.fail("name", "a header's name is empty") }
            if field.utf8.first == UInt8(ascii: ":") {
                pseudo[field] = value
            } else {
                headers.append(field, value)
            }
        }
        return (headers, pseudo)
    }

    /// The response's body from `content` (required by HAR 1.2).
    static func body(_ response: HARObject, limits: HARLimits, digests: Bool = true) throws(HARError) -> HARBody {
        let content = try response.object("content")
        func checked(_ size: Int, _ field: HARObject, _ name: String) throws(HARError) -> Int {
            guard size <= limits.bodyBytes else {
                throw field.fail(name, "a body of \(size) bytes, larger than \(byteText(Int64(limits.bodyBytes))), the most a HAR body may be")
            }
            return size
        }
        guard let text = try content.optionalString("text") else {
            var (object, name) = (content, "size")
            var size = try content.amount(name, what: "a size in bytes")
            if size == nil {
                (object, name) = (response, "bodySize")
                size = try response.amount(name, what: "a size in bytes")
            }
            guard let size else { return .absent(size: nil) }
            guard size == size.rounded(.down), size < 1e15 else { throw object.fail(name, "expected a whole number of bytes, not \(size)") }
            return .absent(size: try checked(Int(size), object, name))
        }
        switch try content.optionalString("encoding") {
        case nil, "":
            _ = try checked(text.utf8.count, content, "text")
            // Some exporters (mitmproxy) write a body that is not UTF-8 as its bytes read as
            // Latin-1: one character per byte, `content.size` the bytes. Such a body is those
            // bytes, not the text's UTF-8 (which would count each byte past 127 twice).
            if let size = (try? content.amount("size", what: "a size in bytes")) ?? nil, size == Double(text.unicodeScalars.count),
               Int(size) != text.utf8.count, text.unicodeScalars.allSatisfy({ $0.value <= 0xFF }) {
                let bytes = text.unicodeScalars.map { UInt8($0.value) }
                return .encoded(size: bytes.count, digest: digests ? SHA256.hexDigest(of: bytes) : "")
            }
            return .text(text)
        case "base64":
            switch Base64Digest.decode(text, limit: limits.bodyBytes, digest: digests) {
            case .success(let (size, digest)): return .encoded(size: size, digest: digest)
            case .failure(.tooLarge):
                throw content.fail("text", "a body larger than \(byteText(Int64(limits.bodyBytes))), the most a HAR body may be")
            case .failure(.invalid(let at)):
                throw content.fail("text", "not base64 (encoding is \"base64\"): a bad character at \(at)")
            }
        case let other?:
            throw content.fail("encoding", "\(JSONValue.string(other).compactText) is not an encoding cachesh reads (a body's text is plain, or base64)")
        }
    }

    /// The exchange's duration from `timings`, else `time`.
    func latency() throws(HARError) -> Double? {
        if let timings = fields["timings"], timings != .null {
            let object = try HARObject(timings, path: "\(path).timings")
            var total: Double?
            // `ssl` is counted in `connect` (HAR 1.2).
            for part in ["blocked", "dns", "connect", "send", "wait", "receive"] {
                if let ms = try object.amount(part, what: "a duration in ms") { total = (total ?? 0) + ms }
            }
            _ = try object.amount("ssl", what: "a duration in ms")
            if let total { return total }
        }
        return try amount("time", what: "a duration in ms")
    }
}

/// `request.url` split into the origin an HTTP namespace is bound to and the target it keys by.
enum HARURL {
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    static func split(_ url: String, pseudo: [String: String], host: String?) -> Result<(origin: String, target: String), Problem> {
        var scheme: String
        var rest: Substring
        if let colon = url.firstIndex(of: ":"), url[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
           !url[..<colon].isEmpty {
            scheme = url[..<colon].lowercased()
            rest = url[url.index(after: colon)...]
        } else {
            // A path alone: HTTP/2's pseudo-headers (or Host) say where it went.
            guard let authority = pseudo[":authority"] ?? host else {
                return .failure(Problem(description: "the URL \(quoted(url)) has no host, and no :authority or Host header gives one"))
            }
            scheme = (pseudo[":scheme"] ?? "https").lowercased()
            rest = Substring("//" + authority + (url.isEmpty ? pseudo[":path"] ?? "/" : url))
        }
        switch scheme {
        case "http", "https": break
        case "data": return .failure(Problem(description: "a data: URL (nothing went over the network)"))
        case "ws", "wss": return .failure(Problem(description: "a WebSocket connection (\(scheme): URL)"))
        default: return .failure(Problem(description: "a \(scheme): URL; a replay takes http and https"))
        }
        guard rest.hasPrefix("//") else { return .failure(Problem(description: "the URL \(quoted(url)) has no host")) }
        rest = rest.dropFirst(2)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var hostPart = authority
        var port: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(Problem(description: "the URL \(quoted(url)) has a bad host")) }
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() } else if !after.isEmpty {
                return .failure(Problem(description: "the URL \(quoted(url)) has a bad host"))
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty, hostPart.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "*" && !($0.asciiValue! < 0x21) }) else {
            return .failure(Problem(description: "the URL \(quoted(url)) has no host a key can name"))
        }
        guard port.allSatisfy({ $0.isASCII && $0.isNumber }), port.count <= 5, Int(port).map({ $0 <= 65535 }) ?? true else {
            return .failure(Problem(description: "the URL \(quoted(url)) has a bad port"))
        }
        let defaultPort = scheme == "http" ? "80" : "443"
        let origin = scheme + "://" + hostPart.lowercased() + (port.isEmpty || port == defaultPort ? "" : ":" + port)
        var path = String(rest[authorityEnd...])
        if !path.hasPrefix("/") { path = "/" + path }
        let target: String
        do throws(HTTPTarget.Invalid) {
            target = try HTTPTarget.normalized(path)
        } catch {
            return .failure(Problem(description: "a URL no key can hold (\(quoted(url))): \(error.description)"))
        }
        if let problem = KeyName.problem(withKey: "h:" + target) {
            return .failure(Problem(description: "a URL no key can hold (\(quoted(url))): \(problem)"))
        }
        return .success((origin, target))
    }

    /// `text` quoted as JSON, at most 200 bytes of it.
    static func quoted(_ text: String) -> String {
        let short = text.utf8.count <= 200 ? text : String(text.prefix(200)) + "..."
        return JSONValue.string(short).compactText
    }
}
