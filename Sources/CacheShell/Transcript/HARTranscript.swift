import CacheCore
import CacheReplay

/// `cachesh --transcribe FILE.har [--redact]` (docs/SPEC.md §5.5): a HAR log as a script whose run
/// on the virtual clock makes the decisions `replay FILE.har` reports, with the server's answers
/// scripted from the log (`server next KEY status= headers= ...`) exactly as the replay's server
/// gave them, under `server strict on` (a request the script did not foresee is a divergence).
/// The executable runs the script to write the transcript.
public enum HARTranscript {
    /// The commands, one a line: `restore` of an empty cache whose clock starts at the log's first
    /// entry, `server strict on`, then per origin its `ns ... http origin=`, and per entry the
    /// `advance` to its start, the answers its requests get, and its `get` (or `request`).
    /// - Parameter redact: bodies as their size and digest, and the values of cookies,
    ///   `Authorization` and `Set-Cookie` dropped (docs/SPEC.md §5.5, Privacy).
    public static func commands(path: String, name: String, redact: Bool) throws(HARError) -> (clockStart: Int64, lines: [String]) {
        var log = HARLog(reader: try HARReader(path: path))
        let result = try HARReplay.run(&log, bases: [:], reserved: [], combinations: [HARSettings()], keepAnswers: true)
        var lines: [String] = ["# \(result.entries) entries of \(name)" + (redact ? ", redacted" : "")
                               + ": the cache's decisions on the virtual clock, the server's answers scripted from the log"]
        for warning in result.warnings { lines.append("# " + oneLine(warning)) }
        if result.skipped > result.warnings.count { lines.append("# \(result.skipped - result.warnings.count) more entries skipped") }
        lines.append("server strict on")
        for ns in result.namespaces { lines.append("ns \(ns.name) http origin=\(ns.origin)") }
        let start = result.startMs
        var now: Int64 = 0
        for (i, row) in result.rows.enumerated() {
            if row.timeMs > now {
                lines.append("advance " + TimeText.formatDuration(row.timeMs - now))
                now = row.timeMs
            }
            for answer in row.answers {
                var words = ["server next", row.key, "status=\(answer.status)", "latency=\(row.latencyMs)ms"]
                let fields = cleaned(answer.fields, redact: redact, dropping: [])
                if !fields.isEmpty { words.append("headers=" + headersJSON(fields)) }
                if let body = answer.body { words.append(bodyWord(body, redact: redact)) }
                lines.append(words.joined(separator: " "))
            }
            let request = cleaned(row.requestFields, redact: redact, dropping: [])
            let headers = request.isEmpty ? "" : " headers=" + headersJSON(request)
            // A read waits for its answer when that comes before the next entry starts, as in the
            // replay; else it does not wait, and the next entry starts on time.
            let next = i + 1 < result.rows.count ? result.rows[i + 1].timeMs : Int64.max
            let waits = [.fetched, .notStored, .revalidated, .forwarded].contains(row.decision)
            let nowait = row.decision == .collapsed || (waits && row.timeMs + row.latencyMs > next) ? " --nowait" : ""
            switch row.method {
            case "GET":
                lines.append("get \(row.key)\(headers)\(nowait)")
            case "HEAD", "POST", "PUT", "DELETE", "PATCH":
                lines.append("request \(row.method) \(row.key)\(headers)\(nowait)")
            default:
                lines.append("# entries[\(row.index)]: \(row.method) \(row.key): forwarded, never cached (no command sends it)")
            }
            if nowait.isEmpty && waits { now = row.timeMs + row.latencyMs }
        }
        return (start, lines)
    }

    /// The fields the cache rules read never change; with `redact`, the values of `Cookie`,
    /// `Set-Cookie`, `Authorization` and `Proxy-Authorization` become `redacted` (their presence is
    /// what a shared cache reads). A field the language cannot carry (a control character in its
    /// value) is left out. At most `headers=`'s limits: past them the fields no cache rule reads go.
    static func cleaned(_ fields: HTTPFields, redact: Bool, dropping: [String]) -> HTTPFields {
        var out = HTTPFields()
        for line in fields where !dropping.contains(where: { HTTPFields.same($0, line.name) }) {
            guard line.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains($0) }),
                  line.value.unicodeScalars.allSatisfy({ !KeyName.isControl($0) || $0 == "\t" }) else { continue }
            let secret = ["Cookie", "Set-Cookie", "Authorization", "Proxy-Authorization"].contains { HTTPFields.same($0, line.name) }
            out.append(line.name, redact && secret ? "redacted" : line.value)
        }
        let bytes = out.lines.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        if out.lines.count > 100 || bytes > 16_384 {
            let read = ["Cache-Control", "Expires", "Date", "Age", "ETag", "Last-Modified", "Vary", "Pragma", "Authorization",
                        "Content-Length", "Location", "Content-Location", "Set-Cookie", "Accept", "Accept-Encoding", "Accept-Language"]
            var kept = HTTPFields()
            for line in out.lines where read.contains(where: { HTTPFields.same($0, line.name) }) && kept.lines.count < 100 {
                kept.append(line.name, String(line.value.utf8.prefix(4096)) ?? "")
            }
            return kept
        }
        return out
    }

    /// `headers={...}` as the language reads it: names in order, a name on several lines an array.
    static func headersJSON(_ fields: HTTPFields) -> String {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for line in fields {
            if values[line.name] == nil { order.append(line.name) }
            values[line.name, default: []].append(line.value)
        }
        let members = order.map { name in
            let list = values[name]!
            let value = list.count == 1 ? JSONValue.string(list[0]).compactText
                : "[" + list.map { JSONValue.string($0).compactText }.joined(separator: ",") + "]"
            return JSONValue.string(name).compactText + ":" + value
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// The body as `server next` takes it: JSON as a VALUE word, `text="..."`, `binary=N:sha256:HEX`;
    /// with `redact`, every body as its size and digest.
    static func bodyWord(_ body: HTTPBody, redact: Bool) -> String {
        switch body {
        case .binary(let size, let digest): return "binary=\(size):sha256:\(digest)"
        case .json(let value) where !redact: return value.compactText
        case .text(let text) where !redact: return "text=" + JSONValue.string(text).compactText
        case .json(let value): return "binary=\(value.compactText.utf8.count):sha256:" + sha256Hex(Array(value.compactText.utf8))
        case .text(let text): return "binary=\(text.utf8.count):sha256:" + sha256Hex(Array(text.utf8))
        }
    }

    static func oneLine(_ text: String) -> String { DiagnosticsFormatter.oneLine(text) }
}
