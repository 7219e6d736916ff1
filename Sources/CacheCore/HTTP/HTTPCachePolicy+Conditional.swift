// A cache's answer to an app's own conditional request (RFC 9111 §4.3.2, RFC 9110 §13.2.2):
// when the response it would give is a 200 the request's preconditions find not modified, it
// answers 304 itself.

extension HTTPCachePolicy {
    /// `response` as the app gets it when its request is conditional: a `304 Not Modified` with the
    /// response's fields and no body when `If-None-Match` matches its `ETag` by weak comparison (or
    /// is `*`), or, with no `If-None-Match`, when `If-Modified-Since` is a valid date no earlier
    /// than its `Last-Modified` (else its `Date`); otherwise `response` unchanged. Only a `200`
    /// is answered so (§4.3.2).
    public static func answeringConditional(_ response: HTTPReadResult, request: HTTPFields) -> HTTPReadResult {
        guard response.status == 200, request.contains("If-None-Match") || request.contains("If-Modified-Since") else { return response }
        let notModified: Bool
        if request.contains("If-None-Match") {
            let tags = request.list("If-None-Match")
            if tags.contains("*") {
                notModified = true
            } else if let etag = response.fields["ETag"] {
                let own = opaqueTag(etag)
                notModified = tags.contains { opaqueTag($0) == own }
            } else {
                notModified = false
            }
        } else if let since = request["If-Modified-Since"].flatMap(HTTPDate.parse),
                  let modified = (response.fields["Last-Modified"] ?? response.fields["Date"]).flatMap(HTTPDate.parse) {
            notModified = modified <= since
        } else {
            notModified = false
        }
        guard notModified else { return response }
        var answer = response
        answer.status = 304
        answer.body = nil
        var fields = HTTPFields()
        for line in response.fields where !HTTPFields.same(line.name, "Content-Length") { fields.append(line.name, line.value) }
        answer.fields = fields
        return answer
    }

    /// An entity tag compared weakly (RFC 9110 §8.8.3.2): without `W/`, and without the quotes
    /// (a tag sent unquoted, as some servers do, compares with its quoted form).
    static func opaqueTag(_ tag: String) -> Substring {
        var t = Substring(tag)
        while let f = t.first, f == " " || f == "\t" { t.removeFirst() }
        while let l = t.last, l == " " || l == "\t" { t.removeLast() }
        if t.hasPrefix("W/") { t = t.dropFirst(2) }
        if t.count >= 2, t.first == "\"", t.last == "\"" { t = t.dropFirst().dropLast() }
        return t
    }
}
