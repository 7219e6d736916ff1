import CacheCore

// `replay FILE.har` (docs/SPEC.md §5.5, HAR logs): each entry of a log becomes an app's request
// to a scratch engine with HTTP namespaces, and its response the server's answer; each entry gets
// a row saying what the cache did, why, and whether the recorded client did the same.

/// What the cache did with one entry (`decision` in a row).
public enum HARDecision: String, Sendable, CaseIterable {
    case hit
    case stale
    case staleRevalidate = "stale-revalidate"
    case revalidated
    case fetched
    case notStored = "not-stored"
    case collapsed
    case forwarded
    case gatewayTimeout = "gateway-timeout"

    /// Served from the cache without waiting for the network.
    public var servedFromCache: Bool { self == .hit || self == .stale || self == .staleRevalidate }

    /// The name of its count among the totals (`stale_revalidate`).
    public var totalName: String { String(rawValue.map { $0 == "-" ? "_" : $0 }) }
}

/// What the log shows the recorded client did (`recorded` in a row).
public enum HARRecorded: String, Sendable {
    /// Answered from its own cache (Chrome's `_fromCache`).
    case cache
    /// A `304` on the wire.
    case revalidated
    /// A request on the wire answered with another status.
    case network
}

/// An override of the responses' `Cache-Control` for targets a pattern matches
/// (`override=/img/*:max-age=0+-no-cache`).
public struct HAROverride: Sendable, Hashable {
    /// As written (`/img/*:max-age=0`).
    public let text: String
    public let pattern: Glob
    /// Directives added (replacing one of the same name), with their argument.
    public let add: [HTTPDirective]
    /// Directive names dropped.
    public let drop: [String]

    public struct HTTPDirective: Sendable, Hashable {
        public let name: String
        public let argument: String?
    }

    public static func == (a: HAROverride, b: HAROverride) -> Bool { a.text == b.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Parses `PATTERN:DIRECTIVE[+DIRECTIVE...]`; `DIRECTIVE` is `NAME[=VALUE]` or `-NAME`.
    /// - Returns: why it is not one, as `.failure`.
    public static func parse(_ text: String) -> Result<HAROverride, HARError> {
        guard let colon = text.lastIndex(of: ":"), text.first == "/" || text.first == "*" else {
            return .failure(HARError("override=\(text): write PATTERN:DIRECTIVES, as /img/*:max-age=0 (a pattern of targets, starting with / or *)"))
        }
        let pattern = String(text[..<colon])
        guard pattern.utf8.count <= Glob.maxLength else {
            return .failure(HARError("override=: pattern longer than \(Glob.maxLength) bytes (\(pattern.utf8.count))"))
        }
        var add: [HTTPDirective] = []
        var drop: [String] = []
        for item in text[text.index(after: colon)...].split(separator: "+", omittingEmptySubsequences: false) {
            var name = Substring(item)
            let dropping = name.hasPrefix("-")
            if dropping { name = name.dropFirst() }
            var argument: String?
            if let equals = name.firstIndex(of: "=") {
                argument = String(name[name.index(after: equals)...])
                name = name[..<equals]
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
                  argument.map({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && !$0.isWhitespace && $0 != "," && $0 != "\"" && $0.asciiValue! >= 0x21 } }) ?? true,
                  !(dropping && argument != nil) else {
                return .failure(HARError("override=\(text): \"\(item)\" is not a directive: NAME or NAME=VALUE adds one, -NAME drops one (max-age=0, -no-store)"))
            }
            if dropping { drop.append(name.lowercased()) } else { add.append(HTTPDirective(name: name.lowercased(), argument: argument)) }
        }
        return .success(HAROverride(text: text, pattern: Glob(pattern), add: add, drop: drop))
    }

    /// `fields` with the directives changed when `target` matches.
    public func applied(to fields: HTTPFields, target: String) -> HTTPFields {
        guard pattern.matches(target) else { return fields }
        let changed = Set(add.map(\.name) + drop)
        var directives = CacheControl(fields).directives.filter { !changed.contains($0.name) }
        for directive in add { directives.append((directive.name, directive.argument)) }
        var out = fields
        out.remove("Cache-Control")
        if !directives.isEmpty {
            out.append("Cache-Control", directives.map { d in d.argument.map { "\(d.name)=\($0)" } ?? d.name }.joined(separator: ", "))
        }
        return out
    }
}

/// One combination of a HAR sweep: nil keeps each namespace's own setting.
public struct HARSettings: Sendable, Hashable {
    public var heuristicPercent: Int64?
    public var shared: Bool?
    public var naive: Set<NaivePolicy>?
    public var override: HAROverride?

    public init(heuristicPercent: Int64? = nil, shared: Bool? = nil, naive: Set<NaivePolicy>? = nil, override: HAROverride? = nil) {
        self.heuristicPercent = heuristicPercent; self.shared = shared; self.naive = naive; self.override = override
    }
}

/// An HTTP namespace of the session bound to an origin, which the replay copies.
public struct HARNamespaceBase: Sendable {
    public var name: String
    public var policy: Policy
    public init(name: String, policy: Policy) { self.name = name; self.policy = policy }
}

/// One entry's row.
public struct HARRow: Sendable, Equatable {
    public var index: Int
    public var timeMs: Int64
    public var method: String
    public var key: String
    public var url: String
    public var decision: HARDecision
    public var why: String
    public var cacheStatus: String
    public var status: Int?
    public var sent: Int
    public var bytes: Int?
    public var bytesSaved: Int
    public var recorded: HARRecorded?
    public var agrees: Bool?
    /// The answers the server gave the requests this row sent, in order (a transcript scripts
    /// them), and the latency each had (ms).
    public var answers: [HTTPAnswer] = []
    public var latencyMs: Int64 = 0
    /// The request's fields as the app sent them (the log's validators left out).
    public var requestFields = HTTPFields()
}

/// The totals of one combination.
public struct HARTotals: Sendable, Equatable {
    public var entries = 0
    public var requests = 0
    public var bytesSaved: Int64 = 0
    public var bytesFetched: Int64 = 0
    public var disagreements = 0
    public var decisions: [HARDecision: Int] = [:]
    public var requestsSaved: Int { entries - requests }
    public init() {}
}

/// A namespace the replay made or copied (`namespaces` in JSON).
public struct HARNamespaceUse: Sendable, Equatable {
    public var name: String
    public var origin: String
    public var shared: Bool
    public var heuristicPercent: Int64
}

/// What a replay of a log gives: the rows (one combination only), each combination's totals,
/// the namespaces (of the first combination), the warnings, and the log's span.
public struct HARReplayResult: Sendable {
    public var rows: [HARRow]
    public var totals: [HARTotals]
    public var namespaces: [HARNamespaceUse]
    /// The first `maxWarnings` warnings (one per entry skipped).
    public var warnings: [String]
    /// Every entry skipped, the warnings left out included.
    public var skipped: Int
    public var entries: Int
    public var durationMs: Int64
    /// The first entry's start (ms since the Unix epoch): the replay's clock starts there.
    public var startMs: Int64
}

/// The lowercase hex SHA-256 of bytes (a redacted body's digest).
public func sha256Hex(_ bytes: [UInt8]) -> String {
    let digest = SHA256.hexDigest(of: bytes)
    return digest.hasPrefix("sha256:") ? String(digest.dropFirst(7)) : digest
}

extension HARBody {
    /// The body as an HTTP namespace holds it: text as text, a base64 body as its size and
    /// digest; nil when the log holds none (its size, if any, is the entry's).
    public var httpBody: HTTPBody? {
        switch self {
        case .text(let text): .text(text)
        case .encoded(let size, let digest): .binary(size: size, sha256: digest.hasPrefix("sha256:") ? String(digest.dropFirst(7)) : digest)
        case .absent: nil
        }
    }
}

/// The server of a HAR replay: answers each request the cache sends with the response of the
/// entry being replayed (docs/SPEC.md §5.5): a conditional request its validators match with a
/// `304`, a `304` of the log to a request without a validator with the URL's last `200`.
final class HARServer: HTTPOrigin {
    /// The entry whose request is being made.
    var current: (entry: HAREntry, fields: HTTPFields)?
    /// The answers sent for the entry being replayed, with their bodies' sizes.
    var sent: [(request: HTTPRequest, answer: HTTPAnswer, size: Int?)] = []
    /// The last `200` of each key: its fields and body size (a `304` in the log to a request
    /// without a validator is answered with them, without a body: the log has none there, and
    /// keeping every URL's body would grow with the log, not with what the cache holds).
    var lastFull: [String: (fields: HTTPFields, size: Int?)] = [:]

    var isOnline: Bool { true }
    var persistentState: (any PersistentOrigin)? { nil }
    func latencyIfSent(fetch keys: [String]) -> Int64? { nil }
    func latencyIfSentValidation() -> Int64? { nil }
    func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        .after(latencyMs: 0, .success(keys.map { _ in KeyAnswer.notFound }))
    }
    func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        .after(latencyMs: 0, .failure(OriginFailure("a HAR replay sends no mutation")))
    }
    func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]> {
        .after(latencyMs: 0, .success([:]))
    }

    func http(_ request: HTTPRequest, requestID: UInt64, at now: Int64) -> OriginReply<HTTPAnswer> {
        guard let (entry, fields) = current else { return .after(latencyMs: 0, .failure(OriginFailure("no entry"))) }
        var answer = HTTPAnswer(status: entry.status, fields: fields, body: entry.body.httpBody)
        var size = entry.body.size
        if !answer.fields.contains("Date") { answer.fields.append("Date", HTTPDate.format(now)) }
        let conditional = request.fields.contains("If-None-Match") || request.fields.contains("If-Modified-Since")
        if request.method == "GET" {
            if answer.status == 304 && !conditional, let full = lastFull[request.key] {
                var merged = full.fields
                merged.set(answer.fields)
                answer = HTTPAnswer(status: 200, fields: merged)
                size = full.size
            } else if answer.status == 200 && conditional && Self.notModified(request: request.fields, representation: answer.fields) {
                answer = HTTPAnswer(status: 304, fields: answer.fields)
            }
            if answer.status == 200 { lastFull[request.key] = (answer.fields, size) }
        }
        if answer.status == 304 || answer.status == 204 || request.method == "HEAD" { answer.body = nil }
        if answer.body == nil && answer.status != 200 { size = nil }
        sent.append((request, answer, size))
        let latency = Int64((entry.latency ?? 0).rounded())
        // The engine decides from the fields: it gets no body (the row counts the size), so a
        // replay neither copies nor holds the log's bodies; a transcript scripts them from `sent`.
        var bodiless = answer
        bodiless.body = nil
        return .after(latencyMs: max(0, latency), .success(bodiless))
    }

    /// RFC 9110 §13.2.2, as the simulated server decides it.
    static func notModified(request: HTTPFields, representation: HTTPFields) -> Bool {
        func weak(_ tag: String) -> String {
            let t = tag.trimmingCharacters(in: " \t")
            return t.hasPrefix("W/") ? String(t.dropFirst(2)) : t
        }
        if request.contains("If-None-Match") {
            guard let etag = representation["ETag"] else { return false }
            let tags = request.list("If-None-Match")
            return tags.contains("*") || tags.contains { weak($0) == weak(etag) }
        }
        guard let since = request["If-Modified-Since"].flatMap(HTTPDate.parse),
              let modified = representation["Last-Modified"].flatMap(HTTPDate.parse) else { return false }
        return modified <= since
    }
}

extension String {
    fileprivate func trimmingCharacters(in blanks: String) -> String {
        guard let start = firstIndex(where: { !blanks.contains($0) }), let end = lastIndex(where: { !blanks.contains($0) }) else { return "" }
        return String(self[start...end])
    }
}

/// One combination's scratch engine, its server and what it counted.
final class HARSimulation {
    let settings: HARSettings
    let server = HARServer()
    var engine: ScratchHTTPCache?
    var totals = HARTotals()
    var rows: [HARRow]? = nil
    /// Each origin's namespace, made at its first entry.
    var namespaces: [String: String] = [:]
    var uses: [HARNamespaceUse] = []
    /// The body size of the response last stored for each key (what a `304` serves).
    var storedSize: [String: Int] = [:]

    /// Rows keep the answers their requests got (`HARTranscript`).
    var keepsAnswers = false
    /// Keys whose stale response the recorded client served from its cache while cachesh served
    /// it and revalidated it in the background: the entry, and its row's index when rows are
    /// kept. The log's next request for the key is that revalidation; without one the log is
    /// missing a request the cache would have sent.
    var awaitingRevalidation: [String: (entry: Int, row: Int?)] = [:]

    /// The stale response served at `waiting.entry` was never revalidated on the wire before
    /// `before`: a disagreement, said in its row.
    func missingRevalidation(_ waiting: (entry: Int, row: Int?), before: String) {
        totals.disagreements += 1
        guard let index = waiting.row, rows != nil else { return }
        rows![index].agrees = false
        rows![index].why += "; a request the cache would have sent is missing from the log: nothing revalidated the key before \(before)"
    }

    init(settings: HARSettings, keepRows: Bool) {
        self.settings = settings
        if keepRows { rows = [] }
    }
}

/// Replays a HAR log (docs/SPEC.md §5.5).
public enum HARReplay {
    /// Most combinations of one replay (`replay`'s limit).
    public static let maxCombinations = 256
    /// Most warnings kept (docs/SPEC.md §7.1): past them skipped entries are only counted.
    public static let maxWarnings = 100

    /// Replays `log` once per combination, the log read once.
    /// - Parameters:
    ///   - bases: the session's HTTP namespaces with an `origin=`, by origin.
    ///   - reserved: names a namespace made for a host may not take (the session's).
    ///   - interrupted: polled between entries; true stops the replay.
    public static func run(_ log: inout HARLog, bases: [String: HARNamespaceBase], reserved: Set<String>,
                           combinations: [HARSettings], keepAnswers: Bool = false,
                           interrupted: () -> Bool = { false }) throws(HARError) -> HARReplayResult {
        let simulations = combinations.map { HARSimulation(settings: $0, keepRows: combinations.count == 1) }
        for simulation in simulations { simulation.keepsAnswers = keepAnswers }
        var warnings: [String] = []
        var skipped = 0
        var first: Int64?
        var last: Int64 = 0
        var count = 0
        var names: [String: String] = [:]
        var taken = reserved
        while let item = try log.next() {
            if interrupted() { throw HARError("interrupted after \(count) \(count == 1 ? "entry" : "entries"); nothing changed") }
            switch item {
            case .warning(let text):
                skipped += 1
                if warnings.count < maxWarnings { warnings.append(text) }
            case .entry(let entry):
                if first == nil { first = entry.start }
                last = max(last, entry.start)
                count += 1
                if names[entry.origin] == nil {
                    names[entry.origin] = bases[entry.origin]?.name ?? hostName(entry.origin, taken: &taken)
                }
                for simulation in simulations {
                    try replay(entry, in: simulation, start: first!, name: names[entry.origin]!, base: bases[entry.origin])
                }
            }
        }
        for simulation in simulations {
            for (_, waiting) in simulation.awaitingRevalidation.sorted(by: { $0.value.entry < $1.value.entry }) {
                simulation.missingRevalidation(waiting, before: "the log ends")
            }
            simulation.awaitingRevalidation.removeAll()
            guard let engine = simulation.engine else { continue }
            // What is still in flight completes (its latency is the log's).
            do { try engine.advance(by: 3_600_000) } catch { throw HARError(error.description) }
        }
        return HARReplayResult(rows: simulations.first?.rows ?? [], totals: simulations.map(\.totals),
                               namespaces: simulations.first?.uses ?? [], warnings: warnings, skipped: skipped, entries: count,
                               durationMs: first.map { last - $0 } ?? 0, startMs: first ?? 0)
    }

    /// A namespace name for an origin no namespace of the session is bound to: its host (and
    /// port), a character a name cannot hold as `_`, made unique.
    static func hostName(_ origin: String, taken: inout Set<String>) -> String {
        let authority = origin.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? origin
        var name = String(authority.map { KeyName.isNameCharacter($0) && $0.isASCII ? $0 : "_" })
        if name.isEmpty || name == "tag" { name = "host" }
        var unique = name
        var n = 2
        while taken.contains(unique) { unique = "\(name)-\(n)"; n += 1 }
        taken.insert(unique)
        return unique
    }

    private static func engine(for simulation: HARSimulation, start: Int64) -> ScratchHTTPCache {
        if let engine = simulation.engine { return engine }
        let engine = ScratchHTTPCache(origin: simulation.server, clockStart: start)
        simulation.engine = engine
        return engine
    }

    private static func replay(_ entry: HAREntry, in simulation: HARSimulation, start: Int64, name: String,
                               base: HARNamespaceBase?) throws(HARError) {
        let engine = engine(for: simulation, start: start)
        do {
            // The clock follows the log; a read waiting for its answer does not hold it back.
            try engine.advance(by: entry.start - engine.now)
        } catch {
            throw HARError("entries[\(entry.index)]: \(error.description)")
        }
        if simulation.namespaces[entry.origin] == nil {
            try define(name, origin: entry.origin, base: base, in: simulation, engine: engine)
        }
        let key = KeyName.canonical(name + ":" + entry.target)
        let settings = simulation.settings
        let responseFields = settings.override.map { $0.applied(to: entry.responseHeaders, target: entry.target) } ?? entry.responseHeaders
        simulation.server.current = (entry, responseFields)
        simulation.server.sent.removeAll(keepingCapacity: true)
        defer { simulation.server.current = nil }
        let policy = engine.httpSettings(ofKey: key)?.policy ?? HTTPCachePolicy()
        let method = entry.method.uppercased()
        // The recorded client's cache added the log's validators; cachesh adds its own.
        var requestFields = entry.requestHeaders
        requestFields.remove("If-None-Match")
        requestFields.remove("If-Modified-Since")
        var row = HARRow(index: entry.index, timeMs: entry.start - start, method: method, key: key, url: entry.url,
                         decision: .forwarded, why: "", cacheStatus: "", status: nil, sent: 0, bytes: nil, bytesSaved: 0,
                         recorded: nil, agrees: nil)
        row.requestFields = requestFields
        row.latencyMs = max(0, Int64((entry.latency ?? 0).rounded()))
        let recorded: HARRecorded = entry.fromCache != nil ? .cache : entry.status == 304 ? .revalidated : .network
        if method == "GET" {
            let before = explanation(engine, key: key, request: requestFields)
            let result: HTTPReadResult
            do {
                result = try engine.read(key, request: requestFields)
                try engine.advance(by: 0)
            } catch {
                throw HARError("entries[\(entry.index)]: \(error.description)")
            }
            decide(&row, result, before: before, simulation: simulation, policy: policy, entry: entry)
            row.recorded = recorded
            switch recorded {
            case .cache: row.agrees = row.decision.servedFromCache
            case .revalidated: row.agrees = row.decision == .revalidated
            case .network: row.agrees = !row.decision.servedFromCache && row.decision != .gatewayTimeout
            }
            if let waiting = simulation.awaitingRevalidation.removeValue(forKey: key) {
                if recorded == .cache {
                    simulation.missingRevalidation(waiting, before: "entries[\(entry.index)]")
                } else {
                    // The recorded client's background revalidation: cachesh sent its own then.
                    row.agrees = true
                    row.why += "; the recorded client's background revalidation of the response served stale at entries[\(waiting.entry)] (cachesh sent its own then)"
                }
            }
            if row.decision == .staleRevalidate && recorded == .cache {
                simulation.awaitingRevalidation[key] = (entry.index, simulation.rows?.count)
            }
        } else if method == "HEAD" || !HTTPCachePolicy.isSafe(method) {
            let result: HTTPReadResult
            do {
                result = try engine.send(method, key, request: requestFields)
                try engine.advance(by: 0)
            } catch {
                throw HARError("entries[\(entry.index)]: \(error.description)")
            }
            var status = result.cacheStatus
            let answer = simulation.server.sent.last?.answer
            status.fwdStatus = answer?.status
            row.status = answer?.status
            row.sent = simulation.server.sent.count
            row.bytes = entry.body.size
            row.cacheStatus = status.text
            let invalidates = answer.map { (200...399).contains($0.status) } ?? false
            row.why = "\(method) is never answered from the cache" + (invalidates && method != "HEAD" ? "; a \(answer!.status) invalidates the key" : "")
        } else {
            // OPTIONS, TRACE: a cache forwards them and stores nothing.
            row.sent = 1
            row.status = entry.status
            row.bytes = entry.body.size
            row.cacheStatus = "cachesh; fwd=method; fwd-status=\(entry.status)"
            row.why = "\(method) is never answered from the cache"
        }
        count(row, in: simulation)
    }

    private static func define(_ name: String, origin: String, base: HARNamespaceBase?, in simulation: HARSimulation,
                               engine: ScratchHTTPCache) throws(HARError) {
        var policy = base?.policy ?? Policy(ttl: HTTPNamespace.defaultKeep)
        var http = policy.http ?? HTTPNamespace(origin: origin)
        if let percent = simulation.settings.heuristicPercent { http.policy.heuristicPercent = percent }
        if let shared = simulation.settings.shared { http.policy.shared = shared }
        if let naive = simulation.settings.naive { policy.naive = naive }
        policy.http = http
        let change = PolicyChange(ttl: policy.ttl, stale: .some(policy.stale), max: .some(policy.max),
                                  staleIfError: .some(policy.staleIfError), timeout: .some(policy.timeout),
                                  purgeable: policy.purgeable, eviction: policy.eviction, retry: policy.retry,
                                  backoff: policy.backoff, naive: policy.naive, dedupe: .some(policy.dedupe), http: http)
        do { try engine.defineNamespace(name, change) } catch { throw HARError("\(name): \(error.description)") }
        simulation.namespaces[origin] = name
        simulation.uses.append(HARNamespaceUse(name: name, origin: origin, shared: http.policy.shared,
                                               heuristicPercent: http.policy.heuristicPercent))
    }

    /// `explain`'s arithmetic for the stored response the request selects, before the read.
    private static func explanation(_ engine: ScratchHTTPCache, key: String, request: HTTPFields) -> HTTPExplanation? {
        engine.freshness(key, request: request)
    }

    /// The arithmetic in words: `lifetime 60s (max-age), age 12s: 48s left`.
    static func arithmetic(_ e: HTTPExplanation) -> String {
        let left = e.lifetimeMs - e.ageMs
        let state = left > 0 ? "fresh, \(duration(left)) left" : "stale by \(duration(-left))"
        return "\(state): lifetime \(duration(e.lifetimeMs)) (\(e.lifetimeSource)), age \(duration(e.ageMs))"
    }

    static func duration(_ ms: Int64) -> String { TimeText.formatDuration(max(0, ms)) }

    private static func decide(_ row: inout HARRow, _ result: HTTPReadResult, before: HTTPExplanation?, simulation: HARSimulation,
                               policy: HTTPCachePolicy, entry: HAREntry) {
        var status = result.cacheStatus
        let key = row.key
        row.sent = simulation.server.sent.count
        if status.hit {
            let size = simulation.storedSize[key]
            row.status = result.status
            row.bytes = size
            row.bytesSaved = size ?? 0
            let arithmetic = before.map(arithmetic) ?? "stored"
            switch status.detail {
            case "stale-while-revalidate"?:
                row.decision = .staleRevalidate
                row.why = arithmetic + "; stale-while-revalidate: served at once, validated in the background"
            case "max-stale"?:
                row.decision = .stale
                row.why = arithmetic + "; the request's max-stale allows it"
            default:
                row.decision = .hit
                row.why = arithmetic
            }
            row.cacheStatus = status.text
            return
        }
        if result.status == 504, status.detail == "only-if-cached" {
            row.decision = .gatewayTimeout
            row.status = 504
            row.why = "only-if-cached, and nothing stored the request may get"
            row.cacheStatus = status.text
            return
        }
        if status.collapsed || simulation.server.sent.isEmpty {
            row.decision = .collapsed
            row.why = "a request for the key was in flight: the read shares it (B4)"
            row.cacheStatus = status.text
            return
        }
        let (request, answer, answerSize) = simulation.server.sent[simulation.server.sent.count - 1]
        let conditional = request.fields.contains("If-None-Match") || request.fields.contains("If-Modified-Since")
        let reason: String
        if let before {
            let validators = ["If-None-Match", "If-Modified-Since"].filter { request.fields.contains($0) }
            reason = arithmetic(before) + (status.detail.map { "; \($0)" } ?? "")
                + (validators.isEmpty ? "; sent without a validator" : "; validated with " + validators.joined(separator: " and "))
        } else {
            reason = status.fwd == "vary-miss" ? "no stored response the request selects (Vary)" : "nothing stored for the key (uri-miss)"
        }
        status.fwdStatus = answer.status
        row.status = answer.status
        if answer.status == 304 && conditional {
            row.decision = .revalidated
            row.status = before?.status ?? 200
            let size = simulation.storedSize[key]
            row.bytes = size
            row.bytesSaved = size ?? 0
            row.why = reason + ": 304, the stored response freshened"
            status.stored = true
        } else {
            let size = answer.body?.size ?? answerSize
            row.bytes = size
            var whyNot = policy.whyNotStored(method: "GET", request: request.fields, status: answer.status, response: answer.fields)?.rawValue
            if whyNot == nil, HTTPCachePolicy.varyNames(answer.fields) == nil { whyNot = "Vary: * matches no request" }
            if let whyNot {
                row.decision = .notStored
                row.why = reason + "; not stored: " + whyNot
                status.detail = "not stored: " + whyNot
            } else {
                row.decision = .fetched
                let stored = StoredHTTPResponse(status: answer.status, fields: answer.fields, requestTime: 0, responseTime: 0)
                let (lifetime, source) = policy.freshnessLifetime(stored)
                row.why = reason + "; \(answer.status) stored, lifetime \(duration(lifetime)) (\(sourceText(source, policy)))"
                status.stored = true
                if let size { simulation.storedSize[key] = size } else { simulation.storedSize[key] = nil }
            }
        }
        row.cacheStatus = status.text
    }

    static func sourceText(_ source: HTTPCachePolicy.LifetimeSource, _ policy: HTTPCachePolicy) -> String {
        switch source {
        case .sMaxAge: "s-maxage"
        case .maxAge: "max-age"
        case .expires: "Expires - Date"
        case .heuristic: "heuristic: \(policy.heuristicPercent)% of Date - Last-Modified"
        case .none: "no explicit freshness"
        case .invalid(let name): "invalid \(name)"
        }
    }


    private static func count(_ row: HARRow, in simulation: HARSimulation) {
        var row = row
        // Kept for a transcript only: a replay's rows stay small whatever the bodies.
        if simulation.keepsAnswers { row.answers = simulation.server.sent.map(\.answer) }
        simulation.totals.entries += 1
        simulation.totals.requests += row.sent
        simulation.totals.bytesSaved += Int64(row.bytesSaved)
        if row.sent > 0, !row.decision.servedFromCache || row.decision == .staleRevalidate {
            if row.decision == .fetched || row.decision == .notStored || row.decision == .forwarded {
                simulation.totals.bytesFetched += Int64(row.bytes ?? 0)
            }
        }
        if row.agrees == false { simulation.totals.disagreements += 1 }
        simulation.totals.decisions[row.decision, default: 0] += 1
        simulation.rows?.append(row)
    }
}
