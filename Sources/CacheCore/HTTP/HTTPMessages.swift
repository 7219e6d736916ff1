/// What makes a namespace an HTTP cache (`ns NAME http [origin=URL] [shared] [heuristic=P]`):
/// its entries are responses keyed by their target (a path with its query), decided by
/// `HTTPCachePolicy` on the virtual clock (docs/SPEC.md, HTTP namespaces).
public struct HTTPNamespace: Sendable, Equatable {
    /// The origin its targets are on (`https://api.example.com`), for same-origin `Location`s
    /// (RFC 9111 §4.4); nil when not given (then only paths count as same-origin).
    public var origin: String?
    /// Shared or private, and the heuristic percentage.
    public var policy: HTTPCachePolicy

    public init(origin: String? = nil, policy: HTTPCachePolicy = HTTPCachePolicy()) {
        self.origin = origin
        self.policy = policy
    }

    /// How long an HTTP namespace keeps a response after it was last stored, unless `ttl=` says
    /// otherwise: 30 days. Its freshness is the response's own; this only bounds the memory.
    public static let defaultKeep: Int64 = 30 * 86_400_000

    /// The greatest `heuristic=` percentage (docs/SPEC.md §7.1): a lifetime longer than the time
    /// since `Last-Modified` is no heuristic.
    public static let maxHeuristicPercent: Int64 = 100

    /// Why `text` is not an origin (`http://` or `https://`, a host, an optional port, nothing
    /// after it), or nil when it is.
    public static func originProblem(_ text: String) -> String? {
        let lower = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
            return "origin= is http:// or https:// and a host (as https://api.example.com)"
        }
        let rest = lower.dropFirst(scheme.count)
        let allowed = rest.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." || $0 == ":" }
        guard !rest.isEmpty, allowed, rest.first != ":" else {
            return "origin= is a scheme and a host with no path (as https://api.example.com), not \(JSONValue.string(text).compactText)"
        }
        return nil
    }
}

/// A request as an HTTP namespace sends it to its origin: method, target key (`api:/feed?page=2`)
/// and header fields.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var key: String
    public var fields: HTTPFields
    /// A body for an unsafe method (`request POST KEY VALUE`); nil for none.
    public var body: JSONValue?

    public init(method: String = "GET", key: String, fields: HTTPFields = HTTPFields(), body: JSONValue? = nil) {
        self.method = method; self.key = key; self.fields = fields; self.body = body
    }
}

/// A response body of an HTTP namespace (docs/SPEC.md §8, Bodies): a JSON value, text, or binary
/// bytes kept as their size and SHA-256 (a cache decides from the header fields; it need not hold
/// an image to say what it would do with it). The one place a body's kinds are listed: reads,
/// JSON output, the server's scripts and any encoding of a body start from this enum.
public enum HTTPBody: Sendable, Equatable {
    case json(JSONValue)
    /// Text that is not JSON (HTML, CSS, a script), as UTF-8.
    case text(String)
    /// Binary bytes: their size and the lowercase hex SHA-256 of them (64 digits).
    case binary(size: Int, sha256: String)

    /// The entry's value while the body is the one stored last (`peek`, `keys`, observers):
    /// JSON as it is, text as a JSON string, binary as `{"size": N, "sha256": "HEX"}`.
    public var entryValue: JSONValue {
        switch self {
        case .json(let value): value
        case .text(let text): .string(text)
        case .binary(let size, let digest): .object(["size": .int(Int64(size)), "sha256": .string(digest)])
        }
    }

    /// The body's size in bytes (JSON as its compact text).
    public var size: Int {
        switch self {
        case .json(let value): value.compactText.utf8.count
        case .text(let text): text.utf8.count
        case .binary(let size, _): size
        }
    }

    /// `json`, `text` or `binary` (JSON's `body_kind`).
    public var kind: String {
        switch self {
        case .json: "json"
        case .text: "text"
        case .binary: "binary"
        }
    }

    /// The body of `kind` (`text` or `binary`) whose `entryValue` is `value`: what a server keeps
    /// of a key's text or binary body beside its data (a snapshot's `server.bodies`).
    /// - Throws: a `Diagnostic` saying why `value` is not such a body's entry value.
    public static func fromEntryValue(_ value: JSONValue, kind: String) throws(Diagnostic) -> HTTPBody {
        switch kind {
        case "text":
            guard case .string(let text) = value else { throw Diagnostic("a text body's data is a JSON string") }
            return .text(text)
        case "binary":
            let field = "body_binary"
            do {
                guard let body = try HTTPBodyCoding.decode([field: value], value: { _ throws(Diagnostic) in value }) else {
                    preconditionFailure("a body field given is read")
                }
                return body
            } catch {
                throw Diagnostic("a binary body's data is {\"size\": N, \"sha256\": \"HEX\"} (\(error.message))")
            }
        default:
            throw Diagnostic("expected text or binary, not \(JSONValue.string(kind).compactText)")
        }
    }

    /// Why `text` is not a SHA-256 digest as a binary body names it, or nil.
    public static func digestProblem(_ text: String) -> String? {
        text.utf8.count == 64 && text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) ? nil
            : "a SHA-256 digest is 64 lowercase hex digits"
    }
}

/// An origin's HTTP answer: status, header fields and body (nil: none, as a `304`'s).
public struct HTTPAnswer: Sendable, Equatable {
    public var status: Int
    public var fields: HTTPFields
    public var body: HTTPBody?

    public init(status: Int, fields: HTTPFields = HTTPFields(), body: HTTPBody? = nil) {
        self.status = status; self.fields = fields; self.body = body
    }

    /// The answer an origin that knows no HTTP gives for a key: `200` with its value, `404`.
    public init(_ answer: KeyAnswer) {
        if let value = answer.value { self.init(status: 200, body: .json(value)) } else { self.init(status: 404) }
    }
}

/// RFC 9211's `Cache-Status` of one read: what the cache did with it.
public struct HTTPCacheStatus: Sendable, Equatable {
    /// Served from the cache without going forward.
    public var hit = false
    /// Why the request went forward (`uri-miss`, `vary-miss`, `stale`, `request`); nil when it did not.
    public var fwd: String?
    /// The status the origin answered with, when it went forward.
    public var fwdStatus: Int?
    /// The response was stored (or its stored headers updated by a `304`).
    public var stored = false
    /// The read shared a request another read had sent.
    public var collapsed = false
    /// The response's remaining freshness in whole seconds (negative: stale), when one is served.
    public var ttl: Int64?
    /// More about the decision, in words (why not stored, stale-while-revalidate, ...).
    public var detail: String?

    public init() {}

    /// The field's value: `cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=60`.
    /// Made in one string (a proxy writes one per answer).
    public var text: String {
        var text = "cachesh"
        text.reserveCapacity(48 + (fwd?.utf8.count ?? 0) + (detail?.utf8.count ?? 0))
        if hit { text += "; hit" }
        if let fwd { text += "; fwd="; text += fwd }
        if let fwdStatus { text += "; fwd-status="; text += String(fwdStatus) }
        if stored { text += "; stored" }
        if collapsed { text += "; collapsed" }
        if let ttl { text += "; ttl="; text += String(ttl) }
        if let detail { text += "; detail="; text += JSONValue.string(detail).compactText }
        return text
    }
}

/// What an app's read of an HTTP namespace gets: the status served, the header fields as the app
/// gets them (with `Age`), the body, and the `Cache-Status` of the decision.
public struct HTTPReadResult: Sendable, Equatable {
    public var key: String
    /// nil while the response is still to come (a read that does not wait).
    public var status: Int?
    public var fields: HTTPFields
    public var body: HTTPBody?
    public var cacheStatus: HTTPCacheStatus

    public init(key: String, status: Int?, fields: HTTPFields = HTTPFields(), body: HTTPBody? = nil,
                cacheStatus: HTTPCacheStatus = HTTPCacheStatus()) {
        self.key = key; self.status = status; self.fields = fields; self.body = body; self.cacheStatus = cacheStatus
    }
}

/// An origin that answers HTTP requests itself (the simulated server). An origin that does not
/// answers an HTTP namespace's reads from `fetch`: `200` with the value, or `404`, no fields.
public protocol HTTPOrigin: Origin {
    /// Answers `request`, sent now; a `.failure` is no answer at all (a `5xx` is an answer).
    func http(_ request: HTTPRequest, requestID: UInt64, at now: Int64) -> OriginReply<HTTPAnswer>
}
