import Foundation
import Testing

/// HTTP namespaces run as a user runs them (docs/SPEC.md, HTTP namespaces): the built binary on a
/// script, its output, its errors and its refusals.
@Suite struct HTTPEndToEndTests {
    static let setup = """
        ns api http origin=https://api.example.com
        server set api:/feed "v1" headers={"ETag":"\\"v1\\"","Cache-Control":"max-age=60"}

        """

    /// §4.2 and §4.3: a miss stores, a fresh read is a hit with Age, a stale one is validated and
    /// the 304 serves the stored body as a 200.
    @Test func aReadPrintsStatusHeadersAndCacheStatus() async throws {
        let run = try await Cachesh.script(Self.setup + """
            get api:/feed
            advance 30s
            get api:/feed
            advance 40s
            get api:/feed
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty)
        #expect(run.stdout.contains("""
            key:          api:/feed
            status:       200
            headers:      ETag: "v1"
                          Cache-Control: max-age=60
                          Date: Thu, 01 Jan 2026 00:00:00 GMT
                          Age: 30
            cache_status: cachesh; hit; ttl=29
            body:         "v1"
            """), "\(run)")
        #expect(run.stdout.contains("cache_status: cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=59\n"))
        #expect(run.stdout.hasSuffix("""
                          Date: Thu, 01 Jan 2026 00:01:10 GMT
                          Age: 0
            cache_status: cachesh; fwd=stale; fwd-status=304; stored; ttl=59
            body:         "v1"

            """), "\(run)")
    }

    /// JSON output has the same fields: status, headers in order, cache_status, body.
    @Test func jsonOutputHasTheSameFields() async throws {
        let run = try await Cachesh.script(Self.setup + "get api:/feed\n", options: ["--json"])
        #expect(run.status == 0, "\(run)")
        let line = try #require(run.stdout.split(separator: "\n").last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["status"] as? Int == 200)
        #expect(object["cache_status"] as? String == "cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=59")
        #expect(object["body"] as? String == "v1")
        let headers = try #require(object["headers"] as? [[String]])
        #expect(headers.map { $0[0] } == ["ETag", "Cache-Control", "Date", "Age"])
    }

    /// Bad input (headers, status, keys no path can be) gets one error line at its file and line,
    /// and changes nothing: the server keeps its representation, no request is sent.
    @Test func badInputIsOneErrorLineAndChangesNothing() async throws {
        let run = try await Cachesh.script(Self.setup + """
            server set api:/feed "v2" headers={"ETag":1}
            server set api:/feed "v2" headers={"Bad Name":"x"}
            server set api:/feed "v2" headers=["x"]
            server next api:/feed status=600
            server next api:/feed status=abc
            get api:/feed headers={"X":"a\\u0000b"}
            get api:feed
            get api://host/feed
            ns api shared heuristic=200
            server set plain:1 "x" headers={"A":"b"}
            server show api:/feed
            server log
            """)
        #expect(run.status == 1)
        let errors = run.stderr.split(separator: "\n")
        #expect(errors.count == 10, "\(run.stderr)")
        for (i, line) in errors.enumerated() { #expect(line.hasPrefix("script.cachesh:\(i + 3): error: "), "\(line)") }
        #expect(run.stderr.contains("script.cachesh:6: error: server next: status= is a final HTTP status code from 200 to 599, not \"600\""))
        #expect(run.stderr.contains("script.cachesh:9: error: bad key \"api:feed\": an HTTP key is a path with its query, starting with / (as /feed?page=2)"))
        #expect(run.stdout.contains("value:       \"v1\"\n"))
        #expect(run.stdout.contains("headers:     {\"Cache-Control\":\"max-age=60\",\"ETag\":\"\\\"v1\\\"\"}\n"))
        #expect(run.stdout.hasSuffix("(no requests)\n"), "\(run)")
    }

    /// §4.4: `request METHOD KEY` goes to the server, prints its answer with `fwd=method`, and a
    /// non-error answer invalidates the target; bad methods and keys are one error line each.
    @Test func requestSendsAnUnsafeMethodAndInvalidates() async throws {
        let run = try await Cachesh.script(Self.setup + """
            get api:/feed
            request PUT api:/feed "v2"
            keys
            get api:/feed
            request GET api:/feed
            request post api:/feed
            request POST plain:1
            request POST api:nopath
            request DELETE api:/feed headers={"A":1}
            server log
            """)
        #expect(run.status == 1)
        #expect(run.stdout.contains("""
            key:          api:/feed
            status:       200
            headers:      Date: Thu, 01 Jan 2026 00:00:00 GMT
            cache_status: cachesh; fwd=method; fwd-status=200; detail="invalidated api:/feed"
            body:         "v2"
            (no entries)
            """), "\(run)")
        #expect(run.stdout.contains("cache_status: cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=59\nbody:         \"v2\"\n"))
        #expect(run.stderr == """
            script.cachesh:7: error: request: the method is POST, PUT, DELETE, PATCH or HEAD (get reads), not "GET"
            script.cachesh:8: error: request: the method is POST, PUT, DELETE, PATCH or HEAD (get reads), not "post"
            script.cachesh:9: error: request: plain:1 is not a key of an HTTP namespace (ns NAME http)
            script.cachesh:10: error: bad key "api:nopath": an HTTP key is a path with its query, starting with / (as /feed?page=2)
            script.cachesh:11: error: request: the value of A in headers= is a string, or an array of strings for several lines

            """, "\(run)")
        #expect(run.stdout.hasSuffix("""
            at_ms  kind    fate       keys
            0      fetch   stored     api:/feed
            100    mutate  discarded  api:/feed
            200    fetch   stored     api:/feed

            """), "\(run)")
    }

    /// Observers see HTTP entries change as any: stored by a fetch, freshened by a 304,
    /// invalidated by an unsafe method (§4.4); a Vary: * response is not stored (§4.1).
    @Test func observersSeeHTTPEntriesAndVaryStarIsNotStored() async throws {
        let run = try await Cachesh.script(Self.setup + """
            watch api:*
            get api:/feed
            advance 61s
            get api:/feed
            request DELETE api:/feed
            server set api:/star 1 headers={"Cache-Control":"max-age=60","Vary":"*"}
            get api:/star
            keys
            """)
        #expect(run.status == 0, "\(run)")
        let events = run.stdout.split(separator: "\n").filter { $0.hasPrefix("* ") }
        #expect(events == [
            "* 2026-01-01T00:00:00.100Z fetched api:/feed fresh \"v1\" (server)",
            "* 2026-01-01T00:01:01.200Z fetched api:/feed fresh \"v1\" (server)",
            "* 2026-01-01T00:01:01.300Z invalidated api:/feed absent (cache)",
        ], "\(run)")
        #expect(run.stdout.contains("cache_status: cachesh; fwd=uri-miss; fwd-status=200; detail=\"not stored: Vary: * matches no request\"\n"))
        #expect(run.stdout.hasSuffix("(no entries)\n"), "\(run)")
    }

    /// `explain` of an HTTP key gives §4.2's arithmetic and what the next read does.
    @Test func explainGivesTheFreshnessArithmetic() async throws {
        let run = try await Cachesh.script(Self.setup + "get api:/feed\nadvance 10s\nexplain api:/./feed\n")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("""
            key:       api:/feed
            responses: 1
            response 1: 200
              lifetime:  1m (max-age)
              age:       10s100ms = max(apparent 100ms, Age 0ms + delay 100ms) + resident 10s
              fresh:     for 49s900ms more
              next read: served from the cache (hit)

            """), "\(run)")
    }

    /// headers= holds at most 100 field lines and 16384 bytes of names and values; status= is 200
    /// to 599; heuristic= 0 to 100 (docs/SPEC.md §7.1). At the bound it is taken, past it refused.
    @Test func headersStatusAndHeuristicAreBounded() async throws {
        let hundred = (0..<100).map { "\"X-\($0)\":\"v\"" }.joined(separator: ",")
        let big = String(repeating: "a", count: 16_384 - 1)
        let run = try await Cachesh.script(Self.setup + """
            server set api:/feed "v" headers={\(hundred)}
            server set api:/feed "v" headers={\(hundred),"Y":"z"}
            server set api:/feed "v" headers={"B":"\(big)"}
            server set api:/feed "v" headers={"B":"\(big)a"}
            server next api:/feed status=200
            server next api:/feed status=599
            server next api:/feed status=199
            ns api heuristic=100
            ns api heuristic=101
            """)
        #expect(run.stderr == """
            script.cachesh:4: error: server set: headers= gives 101 field lines; at most 100
            script.cachesh:6: error: server set: headers= holds 16385 bytes of names and values; at most 16384
            script.cachesh:9: error: server next: status= is a final HTTP status code from 200 to 599, not "199"
            script.cachesh:11: error: ns: heuristic= is a percentage from 0 to 100, not "101"

            """, "\(run)")
    }

    /// Snapshots, recordings, stores and the persisted cache cannot hold HTTP responses yet: each
    /// refuses with one line rather than write something wrong.
    @Test func snapshotsRecordingsAndStoresRefuseHTTPNamespaces() async throws {
        let run = try await Cachesh.script(Self.setup + """
            get api:/feed
            snapshot
            snapshot out.json
            record out.transcript
            persist
            """)
        #expect(run.status == 1)
        #expect(run.stderr == """
            script.cachesh:4: error: snapshot: a snapshot cannot hold an HTTP namespace's responses yet
            script.cachesh:5: error: snapshot: a snapshot cannot hold an HTTP namespace's responses yet
            script.cachesh:6: error: record: a recording cannot hold an HTTP namespace yet
            script.cachesh:7: error: persist: the persisted cache cannot hold an HTTP namespace's responses yet (api:/feed)

            """, "\(run)")
        let config = #"{"namespaces": {"api": {"http": {"origin": "https://api.example.com", "shared": true}}}}"#
        let store = try await Cachesh.script("ns\n", options: ["--config", "config.json", "--store", "s.db"], files: ["config.json": config])
        #expect(store.status != 0)
        #expect(store.stderr.contains("cannot keep an HTTP namespace"), "\(store)")
        let stored = try await Cachesh.script("ns api http\n", options: ["--store", "s.db"])
        #expect(stored.status == 1)
        #expect(stored.stderr.contains("script.cachesh:1: error: ns api http: the store "), "\(stored)")
    }

    /// A configuration file makes a namespace an HTTP one as `ns NAME http ...` does.
    @Test func aConfigurationDefinesAnHTTPNamespace() async throws {
        let config = #"{"namespaces": {"api": {"http": {"origin": "https://api.example.com/", "shared": true, "heuristic": 20}}}}"#
        let run = try await Cachesh.script("ns api\n", options: ["--config", "config.json"], files: ["config.json": config])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("ns api http shared origin=https://api.example.com heuristic=20 ttl=30d\n"), "\(run)")
        let bad = try await Cachesh.script("ns\n", options: ["--config", "config.json"],
                                           files: ["config.json": #"{"namespaces": {"api": {"http": {"heuristic": 101}}}}"#])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("$.namespaces.api.http.heuristic: expected a percentage from 0 to 100"), "\(bad)")
    }

    static let examples = ["http-revalidation", "http-stale", "http-vary", "http-invalidation"]

    /// Each Examples/http-* script runs with exit 0, names the RFC section it shows, and its
    /// transcript verifies under --safe.
    @Test(arguments: examples) func examplesRunNameTheirRFCAndVerify(name: String) async throws {
        let examples = ExamplesTests.root.appendingPathComponent("Examples")
        let run = try await Cachesh.run(["\(name).cachesh"], in: examples)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(name): \(run)")
        let text = try String(contentsOf: examples.appendingPathComponent("\(name).cachesh"), encoding: .utf8)
        #expect(text.hasPrefix("# RFC "), "\(name)")
        let verify = try await Cachesh.run(["--verify", "--safe", "\(name).transcript"], in: examples)
        #expect(verify.status == 0, "\(name): \(verify)")
    }
}
