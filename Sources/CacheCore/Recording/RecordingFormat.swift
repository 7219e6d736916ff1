/// A recording on disk (SPEC §5.6): JSON Lines. The first line is the header
/// `{"format":"cachesh-recording","version":2}`; each further line is one `CacheRecord`, an object
/// whose `record` field names its kind; the last is the `end` record. Times are whole ms since
/// the Unix epoch. A reader refuses another format, a newer version, a damaged line (a record
/// whose time goes backwards included) and a file cut short (no `end`), naming the line.
///
/// Version 2 added the calls `cancel`, `set-active`, `clear-active`, `focus`, `poll`, `unpoll`,
/// `unpoll-all`, `configure`, `restore`, the `pessimistic` and `refetch` flags of `mutate` and
/// `mutate-entity`, and the `polled` result; a version 1 file (which has none of them) reads as it did.
public enum RecordingFormat {
    public static let format = "cachesh-recording"
    /// The version this build writes and the newest it reads.
    public static let version: Int64 = 2
    /// The oldest version this build reads.
    public static let oldestVersion: Int64 = 1

    /// The header line, without its line feed.
    public static var header: String {
        JSONValue.object(["format": .string(format), "version": .int(version)]).compactText
    }

    /// The recording as JSON Lines: the header, then one line per record, each ending in a line feed.
    /// - Complexity: O(size of the recording).
    public static func text(of recording: CacheRecording) -> String {
        var out = header + "\n"
        for record in recording.records { out += line(record) + "\n" }
        return out
    }

    /// One record as a line of JSON, without its line feed.
    public static func line(_ record: CacheRecord) -> String {
        encode(record).compactText
    }

    /// Reads a recording written by `text(of:)` or a file destination.
    /// - Throws: a `Diagnostic` whose offset is the byte offset of the line at fault (render it with
    ///   the file's text to get `FILE:LINE: error: ...`).
    /// - Complexity: O(size of the text).
    public static func parse(_ text: String) throws(Diagnostic) -> CacheRecording {
        var offsets: [Int] = []
        return try parse(text, recordOffsets: &offsets)
    }

    /// `parse(_:)`, giving the byte offset of each record's line in `recordOffsets`.
    public static func parse(_ text: String, recordOffsets: inout [Int]) throws(Diagnostic) -> CacheRecording {
        recordOffsets = []
        var records: [CacheRecord] = []
        var offset = 0
        var lineNumber = 0
        var sawEnd = false
        var lastOffset = 0
        var clock = RecordingClock()
        let utf8 = text.utf8
        var start = utf8.startIndex
        while start < utf8.endIndex {
            let stop = utf8[start...].firstIndex(of: UInt8(ascii: "\n")) ?? utf8.endIndex
            let lineText = String(text[start..<stop])
            let lineOffset = offset
            offset += utf8.distance(from: start, to: stop) + (stop < utf8.endIndex ? 1 : 0)
            start = stop < utf8.endIndex ? utf8.index(after: stop) : stop
            lineNumber += 1
            let trimmed = lineText.utf8.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }
            if trimmed { continue }
            lastOffset = lineOffset
            func fail(_ message: String) -> Diagnostic { Diagnostic(message, at: lineOffset) }
            let json: JSONValue
            do { json = try JSONValue(parsing: lineText, maxDepth: JSONValue.documentDepth) } catch {
                let cut = stop == utf8.endIndex ? " (the line is cut short: the file is truncated)" : ""
                throw fail((lineNumber == 1 ? "not a cachesh recording: " : "damaged record: ") + error.message + cut)
            }
            if lineNumber == 1 {
                try checkHeader(json, fail)
                continue
            }
            if sawEnd { throw fail("a record after the end record") }
            let record: CacheRecord
            do { record = try decode(json) } catch { throw fail("damaged record: " + error.message) }
            switch record {
            case .begin:
                if !records.isEmpty { throw fail("damaged record: a second begin record") }
            case .end:
                sawEnd = true
            default:
                if records.isEmpty { throw fail("damaged record: the recording must start with a begin record") }
            }
            try clock.check(record, at: lineOffset, line: lineNumber)
            records.append(record)
            recordOffsets.append(lineOffset)
        }
        if lineNumber == 0 { throw Diagnostic("not a cachesh recording: the file is empty", at: 0) }
        guard sawEnd else {
            throw Diagnostic("the recording is truncated: it has no end record (did the app stop before stopRecording()?)",
                             at: lastOffset)
        }
        return CacheRecording(records: records)
    }

    /// The clock through a recording (SPEC §5.6): it never goes backwards but by a `restore`.
    /// A unit (a `call` or a `step`) follows the records of what happened during it: their times
    /// lie between the clock before the unit and its end (`ended`, `to`), and a call ends no
    /// earlier than it began (`at`).
    private struct RecordingClock {
        /// The clock after the last unit (the `begin` snapshot's `now` first); nil while unknown.
        var now: Int64?
        /// The earliest and the latest time among the records since the last unit, with where they are.
        var earliest: (time: Int64, offset: Int)?
        var latest: (time: Int64, line: Int)?

        mutating func check(_ record: CacheRecord, at offset: Int, line: Int) throws(Diagnostic) {
            switch record {
            case .begin(let snapshot, _):
                if case .object(let top) = snapshot, case .string(let text)? = top["now"] {
                    now = TimeText.parseISO8601(Substring(text))
                }
            case .step(let to):
                try endsUnit(to, "to", at: offset)
            case .call(let call, _, let at, let ended):
                try notBefore(at, "at", at: offset)
                if case .restore = call {
                    // A restore sets the clock to the snapshot's, earlier or later (the
                    // requests its log holds are not noted: no request of it was sent here).
                    earliest = nil
                    latest = nil
                    now = ended
                    return
                }
                if ended < at {
                    throw Diagnostic("damaged record: the clock goes backwards: ended \(TimeText.iso8601(ms: ended)) is before "
                                     + "at \(TimeText.iso8601(ms: at))", at: offset)
                }
                try endsUnit(ended, "ended", at: offset)
            case .end(let at):
                try endsUnit(at, "at", at: offset)
            case .sent(_, _, _, let at), .completed(_, _, let at, _), .read(_, _, let at), .validated(_, let at):
                during(at, at: offset, line: line)
            case .arrived(_, let at, let applied):
                if let applied, applied < at {
                    throw Diagnostic("damaged record: the clock goes backwards: applied \(TimeText.iso8601(ms: applied)) is before "
                                     + "at \(TimeText.iso8601(ms: at))", at: offset)
                }
                during(at, at: offset, line: line)
            case .observed(let event):
                during(event.at, at: offset, line: line)
            }
        }

        /// A time of the record at `offset` that must not be before the clock.
        private func notBefore(_ time: Int64, _ field: String, at offset: Int) throws(Diagnostic) {
            guard let now, time < now else { return }
            throw Diagnostic("damaged record: the clock goes backwards: \(field) \(TimeText.iso8601(ms: time)) is before "
                             + "\(TimeText.iso8601(ms: now)), where the recording's clock already was", at: offset)
        }

        /// The time of something that happened during the coming unit.
        private mutating func during(_ time: Int64, at offset: Int, line: Int) {
            if time < earliest?.time ?? .max { earliest = (time, offset) }
            if time > latest?.time ?? .min { latest = (time, line) }
        }

        /// The end of a unit, at `offset`: the unit and what happened during it lie between the
        /// clock and this time, where the clock moves.
        private mutating func endsUnit(_ time: Int64, _ field: String, at offset: Int) throws(Diagnostic) {
            if let earliest { try notBefore(earliest.time, "at", at: earliest.offset) }
            try notBefore(time, field, at: offset)
            if let latest, time < latest.time {
                throw Diagnostic("damaged record: the clock goes backwards: \(field) \(TimeText.iso8601(ms: time)) is before "
                                 + "\(TimeText.iso8601(ms: latest.time)), the time of line \(latest.line), which happened during it",
                                 at: offset)
            }
            earliest = nil
            latest = nil
            now = time
        }
    }

    private static func checkHeader(_ json: JSONValue, _ fail: (String) -> Diagnostic) throws(Diagnostic) {
        guard case .object(let top) = json, top["format"] == .string(format) else {
            throw fail("not a cachesh recording (its first line must be \(header))")
        }
        guard case .int(let v)? = top["version"] else { throw fail("the recording's version is missing or not a whole number") }
        if v > version {
            throw fail("recording format version \(v) is newer than this cachesh reads (version \(version)): use a newer cachesh")
        }
        guard v >= oldestVersion else {
            throw fail("recording format version \(v) is not supported (this cachesh reads versions \(oldestVersion) to \(version))")
        }
        for name in top.keys.sorted() where name != "format" && name != "version" {
            throw fail("the header has an unknown field \"\(name)\"")
        }
    }
}

// MARK: - Encoding

extension RecordingFormat {
    static func encode(_ record: CacheRecord) -> JSONValue {
        var f: [String: JSONValue]
        switch record {
        case .begin(let snapshot, let live):
            f = ["record": "begin", "snapshot": snapshot, "live": .bool(live)]
        case .step(let to):
            f = ["record": "step", "to": .int(to)]
        case .call(let call, let returned, let at, let ended):
            f = ["record": "call", "at": .int(at), "ended": .int(ended), "call": encode(call), "returned": encode(returned)]
        case .sent(let id, let kind, let keys, let at):
            f = ["record": "sent", "id": id64(id), "kind": .string(kind.rawValue), "keys": strings(keys), "at": .int(at)]
        case .arrived(let id, let at, let applied):
            f = ["record": "arrived", "id": id64(id), "at": .int(at), "applied": applied.map(JSONValue.int) ?? .null]
        case .completed(let id, let answer, let at, let http):
            f = ["record": "completed", "id": id64(id), "at": .int(at), "answer": answer.map(encode) ?? .null]
            // Only for an HTTP request, so recordings without one are as before.
            if let http {
                var a: [String: JSONValue] = ["status": .int(Int64(http.status)), "headers": http.fields.json]
                CacheEngine.encodeBody(http.body, into: &a)
                f["http"] = .object(a)
            }
        case .observed(let event):
            f = ["record": "observed", "cause": .string(event.cause.rawValue), "key": .string(event.key), "at": .int(event.at),
                 "state": .string(event.state.rawValue), "value": event.value ?? .null, "source": .string(event.source.rawValue)]
            if case .none = event.value { f["no_value"] = true }
        case .read(let request, let result, let at):
            f = ["record": "read", "request": id64(request), "at": .int(at), "result": encode(result)]
        case .validated(let result, let at):
            f = ["record": "validated", "at": .int(at), "result": encode(result)]
        case .end(let at):
            f = ["record": "end", "at": .int(at)]
        }
        return .object(f)
    }

    static func id64(_ id: UInt64) -> JSONValue { .int(Int64(bitPattern: id)) }
    static func strings(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
    static func optional(_ ms: Int64?) -> JSONValue { ms.map(JSONValue.int) ?? .null }

    static func encode(_ call: CacheCall) -> JSONValue { .object(call.recordedFields) }

    /// A `define-namespace` call's change: the fields it sets.
    static func changeFields(_ change: PolicyChange) -> JSONValue {
        var c: [String: JSONValue] = [:]
        if let ttl = change.ttl { c["ttl"] = .int(ttl) }
        if let stale = change.stale { c["stale"] = optional(stale) }
        if let max = change.max { c["max"] = max.map { .int(Int64($0)) } ?? .null }
        if let s = change.staleIfError { c["stale_if_error"] = optional(s) }
        if let t = change.timeout { c["timeout"] = optional(t) }
        if let p = change.purgeable { c["purgeable"] = .bool(p) }
        if let e = change.eviction { c["policy"] = .string(e.rawValue) }
        if let r = change.retry { c["retry"] = .int(Int64(r)) }
        if let b = change.backoff { c["backoff"] = .int(b) }
        if let n = change.naive { c["naive"] = strings(n.sorted().map(\.rawValue)) }
        if let d = change.dedupe { c["dedupe"] = optional(d) }
        if let http = change.http { c["http"] = CacheEngine.httpNamespaceJSON(http) }
        return .object(c)
    }

    /// A `configure` call's fields.
    static func configurationFields(_ configuration: CacheConfiguration) -> [String: JSONValue] {
        ["namespaces": .object(configuration.namespaces.mapValues { .object(policyFields($0, whole: true)) }),
         "push": .object(configuration.push.mapValues { rule in
             .object(["invalidate": strings(rule.invalidate), "refresh": strings(rule.refresh), "evict": strings(rule.evict)])
         }),
         "id_field": .string(configuration.idField)]
    }

    /// The flags of a mutation that is not optimistic or expects no body (absent when false, as
    /// version 1 wrote every mutation).
    static func mutationFields(_ options: MutationOptions, _ fields: [String: JSONValue]) -> [String: JSONValue] {
        var f = fields
        if options.pessimistic { f["pessimistic"] = true }
        if options.refetch { f["refetch"] = true }
        if options.idempotent { f["idempotent"] = true }
        return f
    }

    /// A policy's fields, as `define-namespace` returns it; `whole` (`configure`) also writes a
    /// backoff without retries.
    private static func policyFields(_ p: Policy, whole: Bool = false) -> [String: JSONValue] {
        var policy: [String: JSONValue] = [
            "ttl": .int(p.ttl), "stale": optional(p.stale), "max": p.max.map { .int(Int64($0)) } ?? .null,
            "stale_if_error": optional(p.staleIfError), "timeout": optional(p.timeout), "purgeable": .bool(p.purgeable),
        ].merging(p.eviction == .lru ? [:] : ["policy": .string(p.eviction.rawValue)]) { $1 }
        if p.retry > 0 { policy["retry"] = .int(Int64(p.retry)); policy["backoff"] = .int(p.backoff) }
        if whole && p.backoff != Policy().backoff { policy["backoff"] = .int(p.backoff) }
        if !p.naive.isEmpty { policy["naive"] = strings(p.naive.sorted().map(\.rawValue)) }
        if let d = p.dedupe { policy["dedupe"] = .int(d) }
        if let http = p.http { policy["http"] = CacheEngine.httpNamespaceJSON(http) }
        return policy
    }

    static func encode(_ returned: RecordedReturn) -> JSONValue {
        switch returned {
        case .nothing: return .object(["nothing": true])
        case .read(let r): return .object(["read": encode(r)])
        case .waiting: return .object(["waiting": true])
        case .reads(let list): return .object(["reads": .array(list.map(encode))])
        case .entries(let list):
            return .object(["entries": .array(list.map {
                .object(["key": .string($0.key), "state": .string($0.state.rawValue), "age_ms": .int($0.ageMs)])
            })])
        case .keys(let keys): return .object(["keys": strings(keys)])
        case .validation(let v): return .object(["validation": encode(v)])
        case .policy(let p, let keys):
            return .object(["policy": .object(policyFields(p)), "keys": strings(keys)])
        case .watched(let was): return .object(["watched": .bool(was)])
        case .polled(let was): return .object(["polled": .bool(was)])
        case .error(let message): return .object(["error": .string(message)])
        case .http(let r): return .object(["http": encode(r)])
        }
    }

    /// An HTTP read's result: key, status (null while pending), fields, `Cache-Status`, body.
    static func encode(_ r: HTTPReadResult) -> JSONValue {
        var f: [String: JSONValue] = ["key": .string(r.key), "status": r.status.map { .int(Int64($0)) } ?? .null,
                                      "headers": r.fields.json, "cache_status": cacheStatusFields(r.cacheStatus)]
        CacheEngine.encodeBody(r.body, into: &f)
        return .object(f)
    }

    /// `Cache-Status` as its parts (absent when unset).
    static func cacheStatusFields(_ s: HTTPCacheStatus) -> JSONValue {
        var f: [String: JSONValue] = [:]
        if s.hit { f["hit"] = true }
        if let fwd = s.fwd { f["fwd"] = .string(fwd) }
        if let status = s.fwdStatus { f["fwd_status"] = .int(Int64(status)) }
        if s.stored { f["stored"] = true }
        if s.collapsed { f["collapsed"] = true }
        if let ttl = s.ttl { f["ttl"] = .int(ttl) }
        if let detail = s.detail { f["detail"] = .string(detail) }
        return .object(f)
    }

    /// Header fields written as `HTTPFields.json`: names tokens, values without control characters,
    /// at most `HTTPFields.maxStoredLines` lines and `HTTPFields.maxStoredBytes` bytes, as a snapshot's.
    static func fields(_ f: RecordingFields, _ name: String) throws(Diagnostic) -> HTTPFields {
        guard case .array(let list) = try f.value(name), list.count <= HTTPFields.maxStoredLines else {
            throw f.fail(name, "expected at most \(HTTPFields.maxStoredLines) field lines, [[\"Name\", \"value\"], ...]")
        }
        var fields = HTTPFields()
        var bytes = 0
        for item in list {
            guard case .array(let pair) = item, pair.count == 2, case .string(let n) = pair[0], case .string(let v) = pair[1] else {
                throw f.fail(name, "expected field lines, [[\"Name\", \"value\"], ...]")
            }
            if let problem = HTTPFields.nameProblem(n) ?? HTTPFields.valueProblem(v) { throw f.fail(name, problem) }
            bytes += n.utf8.count + v.utf8.count
            if bytes > HTTPFields.maxStoredBytes { throw f.fail(name, "more than \(HTTPFields.maxStoredBytes) bytes of names and values") }
            fields.append(n, v)
        }
        return fields
    }

    private static func decodeHTTPRead(_ f: RecordingFields) throws(Diagnostic) -> HTTPReadResult {
        let c = try f.object("cache_status")
        var status = HTTPCacheStatus()
        status.hit = try c.flag("hit")
        status.fwd = c.has("fwd") ? try c.string("fwd") : nil
        status.fwdStatus = c.has("fwd_status") ? Int(clamping: try c.int("fwd_status")) : nil
        status.stored = try c.flag("stored")
        status.collapsed = try c.flag("collapsed")
        status.ttl = c.has("ttl") ? try c.int("ttl") : nil
        status.detail = c.has("detail") ? try c.string("detail") : nil
        return HTTPReadResult(key: try f.string("key"), status: try f.optionalInt("status").map { Int(clamping: $0) },
                              fields: try fields(f, "headers"),
                              body: try HTTPBodyCoding.decode(f.fields) { name throws(Diagnostic) in try f.value(name) }, cacheStatus: status)
    }

    static func encode(_ r: ReadResult) -> JSONValue {
        var f: [String: JSONValue] = [
            "key": .string(r.key), "state": .string(r.state.rawValue), "value": r.value ?? .null,
            "age_ms": optional(r.ageMs), "expires_in_ms": optional(r.expiresInMs), "tags": strings(r.tags),
            "source": .string(r.source.rawValue),
        ]
        if case .none = r.value { f["no_value"] = true }
        if r.offline { f["offline"] = true }
        if let error = r.error { f["error"] = .string(error) }
        if r.pending { f["pending"] = true }
        return .object(f)
    }

    static func encode(_ v: ValidationResult) -> JSONValue {
        var f: [String: JSONValue] = [
            "request": .object(v.request.mapValues(JSONValue.int)), "keys": strings(v.keys),
            "response": v.response.map(encodeVerdicts) ?? .null,
        ]
        if let error = v.error { f["error"] = .string(error) }
        return .object(f)
    }

    /// Validation verdicts as SPEC §4 prints a `response`: `{NS: {"invalidate": BOOL, "items": {...}}}`.
    public static func encodeVerdicts(_ verdicts: [String: NamespaceVerdict]) -> JSONValue {
        .object(verdicts.mapValues { verdict in
            var v: [String: JSONValue] = ["invalidate": .bool(verdict.invalidate)]
            if let items = verdict.items { v["items"] = .object(items) }
            return .object(v)
        })
    }

    static func encode(_ answer: RequestAnswer) -> JSONValue {
        switch answer {
        case .keys(.failure(let f)): return .object(f.document)
        case .validation(.failure(let f)): return .object(f.document.merging(["validation": true]) { a, _ in a })
        case .keys(.success(let answers)):
            return .object(["values": .array(answers.map(\.document))])
        case .validation(.success(let verdicts)): return .object(["verdicts": encodeVerdicts(verdicts)])
        }
    }

    /// `KEY`, `NS:*` or `tag:T`, as the shell writes a target.
    public static func targetText(_ target: Target) -> String {
        switch target {
        case .key(let key): return key
        case .namespace(let ns): return ns + ":*"
        case .tag(let tag): return "tag:" + tag
        }
    }

    /// `KEY`, `NS:*` or `*`, as the shell writes a watched scope.
    public static func scopeText(_ scope: WatchScope) -> String {
        switch scope {
        case .all: return "*"
        case .namespace(let ns): return ns + ":*"
        case .key(let key): return key
        }
    }
}

// MARK: - Decoding

/// The fields of one JSON object of a recording being decoded; each getter names the field it
/// could not read.
struct RecordingFields {
    let fields: [String: JSONValue]
    let what: String

    init(_ json: JSONValue, _ what: String) throws(Diagnostic) {
        guard case .object(let f) = json else { throw Diagnostic("\(what): expected a JSON object") }
        fields = f
        self.what = what
    }

    /// Whether the object has the field (`fields[name] != nil` would compare with JSON null).
    func has(_ name: String) -> Bool { fields.index(forKey: name) != nil }

    func fail(_ name: String, _ message: String) -> Diagnostic { Diagnostic("\(what).\(name): \(message)") }

    func value(_ name: String) throws(Diagnostic) -> JSONValue {
        guard let v = fields[name] else { throw fail(name, "missing") }
        return v
    }

    func string(_ name: String) throws(Diagnostic) -> String {
        guard case .string(let s) = try value(name) else { throw fail(name, "expected a string") }
        return s
    }

    func optionalString(_ name: String) throws(Diagnostic) -> String? {
        if case .null? = fields[name] { return nil }
        return try string(name)
    }

    func bool(_ name: String) throws(Diagnostic) -> Bool {
        guard case .bool(let b) = try value(name) else { throw fail(name, "expected true or false") }
        return b
    }

    func flag(_ name: String) throws(Diagnostic) -> Bool {
        has(name) ? try bool(name) : false
    }

    func int(_ name: String) throws(Diagnostic) -> Int64 {
        guard case .int(let n) = try value(name) else { throw fail(name, "expected a whole number") }
        return n
    }

    func optionalInt(_ name: String) throws(Diagnostic) -> Int64? {
        if case .null? = fields[name] { return nil }
        return try int(name)
    }

    /// A request id: as a snapshot's sequence numbers, 0 to 2^53 (SPEC §7.1).
    func id(_ name: String) throws(Diagnostic) -> UInt64 {
        let n = try int(name)
        guard n >= 0, n <= SnapshotObject.maxSeq else {
            throw fail(name, "expected a request id from 0 to \(SnapshotObject.maxSeq) (2^53), not \(n)")
        }
        return UInt64(n)
    }

    /// A server version (SPEC §1.1 Versions): 0 to 2^53, as a request id.
    func version(_ name: String) throws(Diagnostic) -> UInt64 {
        let n = try int(name)
        guard n >= 0, n <= SnapshotObject.maxSeq else {
            throw fail(name, "expected a version from 0 to \(SnapshotObject.maxSeq) (2^53), not \(n)")
        }
        return UInt64(n)
    }

    /// An instant in ms since the epoch, not before 1970 (as a snapshot's times, SPEC §7.1).
    func time(_ name: String) throws(Diagnostic) -> Int64 {
        let ms = try int(name)
        guard ms >= 0 else { throw fail(name, "is before 1970-01-01T00:00:00.000Z") }
        return ms
    }

    func strings(_ name: String) throws(Diagnostic) -> [String] {
        guard case .array(let items) = try value(name) else { throw fail(name, "expected an array of strings") }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw fail(name, "expected an array of strings") }
            out.append(s)
        }
        return out
    }

    func object(_ name: String) throws(Diagnostic) -> RecordingFields { try RecordingFields(try value(name), "\(what).\(name)") }

    func enumValue<E: RawRepresentable>(_ name: String, _ type: E.Type) throws(Diagnostic) -> E where E.RawValue == String {
        let text = try string(name)
        guard let v = E(rawValue: text) else { throw fail(name, "unknown value \"\(text)\"") }
        return v
    }
}

extension RecordingFormat {
    static func decode(_ json: JSONValue) throws(Diagnostic) -> CacheRecord {
        let f = try RecordingFields(json, "record")
        let kind = try f.string("record")
        let r = try RecordingFields(json, kind)
        switch kind {
        case "begin": return .begin(snapshot: try r.value("snapshot"), live: try r.bool("live"))
        case "step": return .step(to: try r.time("to"))
        case "call":
            return .call(try CacheCall(recorded: r.object("call")), returned: try decodeReturn(r.object("returned")),
                         at: try r.time("at"), ended: try r.time("ended"))
        case "sent":
            return .sent(id: try r.id("id"), kind: try r.enumValue("kind", RequestKind.self), keys: try r.strings("keys"),
                         at: try r.time("at"))
        case "arrived": return .arrived(id: try r.id("id"), at: try r.time("at"), applied: try r.optionalInt("applied"))
        case "completed":
            let answer: RequestAnswer? = r.fields["answer"] == .null ? nil : try decodeAnswer(r.object("answer"))
            var http: HTTPAnswer?
            if r.has("http") {
                let h = try r.object("http")
                http = HTTPAnswer(status: Int(clamping: try h.int("status")), fields: try fields(h, "headers"),
                                  body: try HTTPBodyCoding.decode(h.fields) { name throws(Diagnostic) in try h.value(name) })
            }
            return .completed(id: try r.id("id"), answer: answer, at: try r.time("at"), http: http)
        case "observed":
            let value = try r.flag("no_value") ? JSONValue?.none : try r.value("value")
            return .observed(CacheEvent(cause: try r.enumValue("cause", ChangeCause.self), key: try r.string("key"),
                                        at: try r.time("at"), state: try r.enumValue("state", EntryState.self), value: value,
                                        source: try r.enumValue("source", ValueSource.self)))
        case "read": return .read(request: try r.id("request"), result: try decodeRead(r.object("result")), at: try r.time("at"))
        case "validated": return .validated(try decodeValidation(r.object("result")), at: try r.time("at"))
        case "end": return .end(at: try r.time("at"))
        default: throw f.fail("record", "unknown kind \"\(kind)\"")
        }
    }

    /// A `define-namespace` call's change (`changeFields` read back).
    static func change(_ c: RecordingFields) throws(Diagnostic) -> PolicyChange {
        var change = PolicyChange()
        if c.has("ttl") { change.ttl = try c.int("ttl") }
        if c.has("stale") { change.stale = .some(try c.optionalInt("stale")) }
        if c.has("max") { change.max = .some(try c.optionalInt("max").map { Int(clamping: $0) }) }
        if c.has("stale_if_error") { change.staleIfError = .some(try c.optionalInt("stale_if_error")) }
        if c.has("timeout") { change.timeout = .some(try c.optionalInt("timeout")) }
        if c.has("purgeable") { change.purgeable = try c.bool("purgeable") }
        if c.has("policy") { change.eviction = try c.enumValue("policy", Eviction.self) }
        if c.has("retry") { change.retry = Int(clamping: try c.int("retry")) }
        if c.has("backoff") { change.backoff = try c.int("backoff") }
        if c.has("naive") { change.naive = try naive(c, "naive") }
        if c.has("dedupe") { change.dedupe = .some(try c.optionalInt("dedupe")) }
        if c.has("http") { change.http = try http(c.object("http")) }
        return change
    }

    /// A `configure` call's configuration (`configurationFields` read back).
    static func configuration(_ f: RecordingFields) throws(Diagnostic) -> CacheConfiguration {
        var configuration = CacheConfiguration(idField: try f.string("id_field"))
        let namespaces = try f.object("namespaces")
        for name in namespaces.fields.keys { configuration.namespaces[name] = try policy(namespaces.object(name)) }
        let push = try f.object("push")
        for type in push.fields.keys {
            let rule = try push.object(type)
            configuration.push[type] = PushRule(invalidate: try rule.strings("invalidate"), refresh: try rule.strings("refresh"),
                                                evict: try rule.strings("evict"))
        }
        return configuration
    }

    static func mutationOptions(_ f: RecordingFields) throws(Diagnostic) -> MutationOptions {
        MutationOptions(pessimistic: try f.flag("pessimistic"), refetch: try f.flag("refetch"), idempotent: try f.flag("idempotent"))
    }

    /// A whole policy written by `policyFields`.
    private static func policy(_ p: RecordingFields) throws(Diagnostic) -> Policy {
        var policy = Policy(ttl: try p.int("ttl"), stale: try p.optionalInt("stale"),
                            max: try p.optionalInt("max").map { Int(clamping: $0) },
                            staleIfError: try p.optionalInt("stale_if_error"), timeout: try p.optionalInt("timeout"),
                            purgeable: try p.bool("purgeable"),
                            eviction: p.has("policy") ? try p.enumValue("policy", Eviction.self) : .lru,
                            naive: p.has("naive") ? try naive(p, "naive") : [])
        if p.has("retry") { policy.retry = Int(clamping: try p.int("retry")); policy.backoff = try p.int("backoff") }
        if p.has("backoff") { policy.backoff = try p.int("backoff") }
        if p.has("dedupe") { policy.dedupe = try p.int("dedupe") }
        if p.has("http") { policy.http = try http(p.object("http")) }
        return policy
    }

    /// An HTTP namespace's settings (`CacheEngine.httpNamespaceJSON` read back).
    private static func http(_ f: RecordingFields) throws(Diagnostic) -> HTTPNamespace {
        let percent = try f.int("heuristic_percent")
        guard percent >= 0, percent <= HTTPNamespace.maxHeuristicPercent else {
            throw f.fail("heuristic_percent", "expected a percentage from 0 to \(HTTPNamespace.maxHeuristicPercent)")
        }
        var origin: String?
        if f.has("origin") {
            origin = try f.string("origin")
            if let problem = HTTPNamespace.originProblem(origin!) { throw f.fail("origin", problem) }
        }
        return HTTPNamespace(origin: origin, policy: HTTPCachePolicy(shared: try f.bool("shared"), heuristicPercent: percent))
    }

    /// A list of naive policy names (SPEC §1.2).
    private static func naive(_ f: RecordingFields, _ name: String) throws(Diagnostic) -> Set<NaivePolicy> {
        var set = Set<NaivePolicy>()
        for text in try f.strings(name) {
            guard let p = NaivePolicy(rawValue: text) else { throw f.fail(name, NaiveNameError(name: text).message) }
            set.insert(p)
        }
        return set
    }

    static func scope(_ text: String) -> WatchScope {
        if text == "*" { return .all }
        if text.hasSuffix(":*") { return .namespace(String(text.dropLast(2))) }
        return .key(text)
    }

    private static func decodeReturn(_ f: RecordingFields) throws(Diagnostic) -> RecordedReturn {
        guard f.fields.count >= 1 else { throw Diagnostic("\(f.what): empty") }
        if f.has("nothing") { return .nothing }
        if f.has("waiting") { return .waiting }
        if f.has("read") { return .read(try decodeRead(f.object("read"))) }
        if case .array(let items)? = f.fields["reads"] {
            var out: [ReadResult] = []
            for (i, item) in items.enumerated() { out.append(try decodeRead(RecordingFields(item, "\(f.what).reads[\(i)]"))) }
            return .reads(out)
        }
        if case .array(let items)? = f.fields["entries"] {
            var out: [KeyEntry] = []
            for (i, item) in items.enumerated() {
                let e = try RecordingFields(item, "\(f.what).entries[\(i)]")
                out.append(KeyEntry(key: try e.string("key"), state: try e.enumValue("state", EntryState.self), ageMs: try e.int("age_ms")))
            }
            return .entries(out)
        }
        if f.has("policy") { return .policy(try policy(f.object("policy")), keys: try f.strings("keys")) }
        if f.has("keys") { return .keys(try f.strings("keys")) }
        if f.has("validation") { return .validation(try decodeValidation(f.object("validation"))) }
        if f.has("watched") { return .watched(try f.bool("watched")) }
        if f.has("polled") { return .polled(try f.bool("polled")) }
        if f.has("error") { return .error(try f.string("error")) }
        if f.has("http") { return .http(try decodeHTTPRead(f.object("http"))) }
        throw Diagnostic("\(f.what): unknown kind of result")
    }

    private static func decodeRead(_ f: RecordingFields) throws(Diagnostic) -> ReadResult {
        ReadResult(key: try f.string("key"), state: try f.enumValue("state", EntryState.self),
                   value: try f.flag("no_value") ? JSONValue?.none : try f.value("value"),
                   ageMs: try f.optionalInt("age_ms"), expiresInMs: try f.optionalInt("expires_in_ms"), tags: try f.strings("tags"),
                   source: try f.enumValue("source", ValueSource.self), offline: try f.flag("offline"),
                   error: !f.has("error") ? nil : try f.string("error"), pending: try f.flag("pending"))
    }

    private static func decodeValidation(_ f: RecordingFields) throws(Diagnostic) -> ValidationResult {
        let request = try f.object("request")
        var times: [String: Int64] = [:]
        for name in request.fields.keys { times[name] = try request.int(name) }
        let response: [String: NamespaceVerdict]? = f.fields["response"] == .null ? nil : try decodeVerdicts(f.object("response"))
        return ValidationResult(request: times, response: response,
                                error: !f.has("error") ? nil : try f.string("error"), keys: try f.strings("keys"))
    }

    fileprivate static func decodeVerdicts(_ f: RecordingFields) throws(Diagnostic) -> [String: NamespaceVerdict] {
        var out: [String: NamespaceVerdict] = [:]
        for name in f.fields.keys {
            let v = try f.object(name)
            var items: [String: JSONValue]?
            if v.has("items") {
                let o = try v.object("items")
                items = o.fields
            }
            out[name] = NamespaceVerdict(invalidate: try v.bool("invalidate"), items: items)
        }
        return out
    }

    /// A validation response as `server next --validate value=...` takes it:
    /// `{NS: {"invalidate": BOOL, "items": {KEY: VALUE}}}`.
    public static func verdicts(from json: JSONValue) throws(Diagnostic) -> [String: NamespaceVerdict] {
        try decodeVerdicts(RecordingFields(json, "value"))
    }

    private static func decodeAnswer(_ f: RecordingFields) throws(Diagnostic) -> RequestAnswer {
        if f.has("error") {
            let failure = OriginFailure(try f.string("error"), outcomeUnknown: try f.flag("unknown_outcome"))
            return try f.flag("validation") ? .validation(.failure(failure)) : .keys(.failure(failure))
        }
        if f.has("verdicts") { return .validation(.success(try decodeVerdicts(f.object("verdicts")))) }
        guard case .array(let items) = try f.value("values") else { throw f.fail("values", "expected an array") }
        var answers: [KeyAnswer] = []
        for (i, item) in items.enumerated() {
            let a = try RecordingFields(item, "\(f.what).values[\(i)]")
            answers.append(a.has("not_found") ? .notFound
                           : .answer(try a.value("value"), version: a.has("version") ? try a.version("version") : nil))
        }
        return .keys(.success(answers))
    }
}
