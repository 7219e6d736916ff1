@testable import CacheCore
import Testing

/// What a stored response keeps parsed (its `Cache-Control`, dates, `Age`, `Vary`) and the
/// shortcut for a key already normalized: the same decisions as parsing every time.
@Suite struct HTTPParsedFieldsTests {
    static let t0 = HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")!

    /// Each decision a read makes from `stored`, as a text to compare.
    static func decisions(_ stored: StoredHTTPResponse, _ policy: HTTPCachePolicy) -> String {
        let now = t0 + 90_000
        return "\(policy.freshnessLifetime(stored)) \(policy.currentAge(stored, now: now)) \(policy.forbidsStale(stored)) "
            + "\(policy.decide(request: HTTPFields(), stored: stored, now: now)) "
            + "\(HTTPCachePolicy.varyMatches(stored, request: HTTPFields(["Accept": "text/html"]))) "
            + "\(policy.staleIfErrorAllows(stored, request: HTTPFields(), now: now))"
    }

    static let fieldSets: [KeyValuePairs<String, String>] = [
        ["Cache-Control": "max-age=60", "Date": "Sun, 06 Nov 1994 08:49:37 GMT"],
        ["Cache-Control": "s-maxage=120, max-age=10, must-revalidate", "Age": "30"],
        ["Expires": "Sun, 06 Nov 1994 08:51:37 GMT", "Date": "Sun, 06 Nov 1994 08:49:37 GMT"],
        ["Expires": "0"],
        ["Expires": "Sun, 06 Nov 1994 08:51:37 GMT", "expires": "Sun, 06 Nov 1994 08:52:37 GMT"],
        ["Last-Modified": "Sun, 06 Nov 1994 07:49:37 GMT", "Vary": "Accept"],
        ["Cache-Control": "max-age=10, stale-while-revalidate=300, stale-if-error=600", "Vary": "*"],
        ["Cache-Control": "no-cache", "Age": "junk", "Date": "not a date"],
        [:],
    ]

    @Test func aStoredResponseDecidesAsItsFieldsParsedAfreshWouldWhateverChangesThem() {
        for policy in [HTTPCachePolicy(shared: true), HTTPCachePolicy(shared: false)] {
            for (i, pairs) in Self.fieldSets.enumerated() {
                var stored = StoredHTTPResponse(status: 200, fields: HTTPFields(pairs), request: HTTPFields(["Accept": "text/html"]),
                                                requestTime: Self.t0, responseTime: Self.t0)
                let fresh = StoredHTTPResponse(status: 200, fields: stored.fields, request: HTTPFields(["Accept": "text/html"]),
                                               requestTime: Self.t0, responseTime: Self.t0)
                #expect(Self.decisions(stored, policy) == Self.decisions(fresh, policy), "\(i)")
                // Fields changed in place (a 304's update, a restore): decided from the new ones.
                stored.fields.set("Cache-Control", "max-age=3600")
                stored.fields.remove("Expires")
                let changed = StoredHTTPResponse(status: 200, fields: stored.fields, request: HTTPFields(["Accept": "text/html"]),
                                                 requestTime: Self.t0, responseTime: Self.t0)
                #expect(Self.decisions(stored, policy) == Self.decisions(changed, policy), "\(i)")
                #expect(policy.freshnessLifetime(stored).ms == 3_600_000)
                #expect(stored == changed)
            }
        }
        // A 304 that changes the lifetime: the stored response's follows it.
        let stored = StoredHTTPResponse(status: 200, fields: HTTPFields(["Cache-Control": "max-age=60", "ETag": "\"a\""]),
                                        requestTime: Self.t0, responseTime: Self.t0)
        let updated = HTTPCachePolicy.updated(stored, with: HTTPFields(["Cache-Control": "max-age=600", "ETag": "\"a\""]),
                                              requestTime: Self.t0 + 1000, responseTime: Self.t0 + 1000)
        #expect(HTTPCachePolicy().freshnessLifetime(updated).ms == 600_000)
    }

    @Test func aTargetSaidNormalizedIsItsOwnNormalFormAndAKeyItsOwnHTTPKey() throws {
        let targets = ["/", "/feed", "/feed?page=2", "/a/b.json", "/a.b/c", "/a?x=/./&y=..", "/a?", "/~user/x-y_z",
                       "/a/./b", "/a/../b", "/.", "/..", "/a/.hidden", "//host/a", "/a//b", "/%61", "/a b", "/a#frag",
                       "/é", "/a?b?c", "/a?q=%2F", "feed", "", "?q", "/a/b/"]
        for target in targets {
            let normalized = try? HTTPTarget.normalized(target)
            if HTTPTarget.isNormalized(Substring(target)) {
                #expect(normalized == target, "\(target)")
            }
            if let normalized {
                // What the cache gives back is a key it takes as it is.
                #expect(try Cache.httpKey("api:" + normalized) == "api:" + normalized, "\(target)")
                #expect(try Cache.httpKey("api:" + target) == "api:" + normalized, "\(target)")
                #expect(try Cache.httpKey(normalized) == normalized, "\(target)")
            }
        }
        for common in ["/", "/feed", "/feed?page=2", "/a/b.json", "/hit", "/a?x=/./"] {
            #expect(HTTPTarget.isNormalized(Substring(common)), "\(common)")
        }
        #expect(try Cache.httpKey("default:/feed") == "/feed")
    }
}
