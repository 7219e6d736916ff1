import CacheCore

/// RFC 9213's `CDN-Cache-Control`, which the proxy (a gateway: a CDN's kind of cache) honours:
/// when an upstream response carries a valid one, the cache decides from it in place of
/// `Cache-Control` (RFC 9213 §2.1), and the app still gets both fields as the upstream sent them.
/// The engine decides from `Cache-Control`, so the proxy hands it the response with its
/// `Cache-Control` lines kept aside under `Cachesh-Origin-Cache-Control` and `CDN-Cache-Control`'s
/// value as `Cache-Control`; `served` puts them back.
enum CDNCacheControl {
    static let keptAside = "Cachesh-Origin-Cache-Control"

    /// The fields the engine decides from.
    static func forCache(_ fields: HTTPFields) -> HTTPFields {
        let values = fields.lines.filter { HTTPFields.same($0.name, "CDN-Cache-Control") }.map(\.value)
        guard !values.isEmpty, let directives = directives(values.joined(separator: ", ")) else { return fields }
        var out: [HTTPFields.Field] = []
        for line in fields.lines {
            if HTTPFields.same(line.name, "Cache-Control") { out.append(HTTPFields.Field(keptAside, line.value)) } else { out.append(line) }
        }
        if !out.contains(where: { HTTPFields.same($0.name, keptAside) }) { out.append(HTTPFields.Field(keptAside, "")) }
        out.append(HTTPFields.Field("Cache-Control", directives))
        return HTTPFields(out)
    }

    /// The fields the app gets: the upstream's own `Cache-Control` back in its place.
    static func served(_ fields: HTTPFields) -> HTTPFields {
        guard fields.contains(keptAside) else { return fields }
        var out: [HTTPFields.Field] = []
        for line in fields.lines {
            if HTTPFields.same(line.name, "Cache-Control") { continue }
            if HTTPFields.same(line.name, keptAside) {
                if !line.value.isEmpty { out.append(HTTPFields.Field("Cache-Control", line.value)) }
                continue
            }
            out.append(line)
        }
        return HTTPFields(out)
    }

    /// The field as `Cache-Control` directives, or nil when it is no valid Structured Fields
    /// dictionary (RFC 8941 §3.2: lower-case keys; values integers, tokens or strings), which
    /// is then ignored whole. A directive whose value is of the wrong type is left out.
    static func directives(_ text: String) -> String? {
        var out: [String] = []
        for member in text.split(separator: ",", omittingEmptySubsequences: false) {
            let m = member.trimmingSpaces
            guard !m.isEmpty else { return nil }
            let parts = m.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = parts[0]
            guard let first = key.utf8.first, (first >= 0x61 && first <= 0x7a) || first == 0x2a,
                  key.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f || $0 == 0x2d || $0 == 0x2e || $0 == 0x2a })
            else { return nil }
            guard parts.count == 2 else {
                out.append(String(key))
                continue
            }
            let value = parts[1]
            if let v = value.first, v == "-" || v.isNumber {
                guard value.dropFirst(v == "-" ? 1 : 0).allSatisfy({ $0.isASCII && $0.isNumber }), value.count <= 16 else { return nil }
                out.append("\(key)=\(value)")
            } else if value.first == "\"" {
                guard value.count >= 2, value.last == "\"" else { return nil }
                // A string where a number belongs (max-age="10") is no directive of that name.
                if ["max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"].contains(String(key)) { continue }
                out.append("\(key)=\(value)")
            } else if let v = value.first, v.isLetter || v == "*" {
                guard value.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "," && $0 != ";" && $0 != "\"" }) else { return nil }
                if ["max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"].contains(String(key)) { continue }
                out.append("\(key)=\(value)")
            } else {
                return nil
            }
        }
        return out.joined(separator: ", ")
    }
}
