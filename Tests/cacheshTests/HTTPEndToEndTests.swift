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

    /// A session with Vary variants, a revalidation by a 304, a scripted answer and a
    /// conditional request in flight: what snapshots, stores and recordings must keep.
    static let session = """
        ns api http origin=https://api.example.com
        server set api:/feed {"n":1} headers={"ETag":"\\"v1\\"","Cache-Control":"max-age=60","Vary":"Accept-Language"}
        get api:/feed headers={"Accept-Language":"en"}
        get api:/feed headers={"Accept-Language":"fr"}
        advance 2m
        get api:/feed headers={"Accept-Language":"en"}
        server next api:/img status=200 headers={"Cache-Control":"max-age=604800","X-Seen":["a","b"]} "cat"
        get api:/img
        advance 2m
        server set api:/feed {"n":2} headers={"ETag":"\\"v2\\"","Cache-Control":"max-age=60","Vary":"Accept-Language"}
        get api:/feed headers={"Accept-Language":"fr"} --nowait

        """

    /// What the session does next: the request in flight completes, a Vary'd read is a hit, the
    /// image is a hit, an unsafe method invalidates.
    static let rest = """
        advance 1s
        get api:/feed headers={"Accept-Language":"fr"}
        get api:/feed headers={"Accept-Language":"en"}
        get api:/img
        request PUT api:/feed {"n":3}
        stats

        """

    /// `snapshot` of an HTTP session, `restore` of it and `snapshot` again give the same bytes,
    /// and the restored session goes on exactly as the original.
    @Test func aSnapshotKeepsHTTPResponsesByteForByte() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", Self.session + "snapshot a.json\nrestore a.json\nsnapshot b.json\necho ---\n" + Self.rest)
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let a = try Data(contentsOf: sandbox.url.appendingPathComponent("a.json"))
        let b = try Data(contentsOf: sandbox.url.appendingPathComponent("b.json"))
        #expect(a == b)
        #expect(String(decoding: a, as: UTF8.self).contains("\"If-None-Match\""))
        let plain = try await Cachesh.script(Self.session + "echo ---\n" + Self.rest)
        let after = { (text: String) in String(text[text.range(of: "---\n")!.upperBound...]) }
        #expect(after(run.stdout) == after(plain.stdout), "\(run)\n\(plain)")
        #expect(after(plain.stdout).contains("cache_status: cachesh; hit; ttl=58\nbody:         {\"n\":2}"), "\(plain)")
    }

    /// A store keeps the HTTP namespace, its responses, the server's header fields and the request
    /// in flight: a session split in two runs on one store prints what one run prints.
    @Test func aStoreKeepsHTTPResponsesAcrossRuns() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("first.cachesh", Self.session)
        try sandbox.write("second.cachesh", Self.rest)
        let first = try await Cachesh.run(["--store", "s.db", "first.cachesh"], in: sandbox.url)
        #expect(first.status == 0, "\(first)")
        let second = try await Cachesh.run(["--store", "s.db", "second.cachesh"], in: sandbox.url)
        #expect(second.status == 0, "\(second)")
        let whole = try await Cachesh.script(Self.session + Self.rest)
        #expect(first.stdout + second.stdout == whole.stdout, "\(first)\n\(second)\n\(whole)")
        // A configuration that defines an HTTP namespace opens a store too.
        let config = #"{"namespaces": {"api": {"http": {"origin": "https://api.example.com", "shared": true}}}}"#
        let configured = try await Cachesh.script("ns\n", options: ["--config", "config.json", "--store", "c.db"], files: ["config.json": config])
        #expect(configured.status == 0, "\(configured)")
    }

    /// `record FILE` of an HTTP session (restore of its state, a 304, Vary variants, a scripted
    /// answer queued before it began) replays under `--verify --safe`, byte for byte.
    @Test func aRecordingOfAnHTTPSessionVerifies() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", Self.session + "server next api:/img status=503 headers={\"Retry-After\":\"5\"}\n"
                          + "record t.transcript\n" + Self.rest + "advance 10m\nget api:/img\nexplain api:/feed\nrecord stop\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("t.transcript"), encoding: .utf8)
        #expect(transcript.contains("server next api:/img status=503 headers={\"Retry-After\":\"5\"}"), "\(transcript)")
        let verify = try await Cachesh.run(["--verify", "--safe", "t.transcript"], in: sandbox.url)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("1 passed, 0 failed"), "\(verify)")
    }

    /// Files written before HTTP namespaces could be kept read and write back byte for byte: a
    /// snapshot of the previous release (`Tests/Fixtures/snapshot-schema6`) and those of Examples/,
    /// restored and written again; a recording of a session without HTTP namespaces has none of
    /// the new fields.
    @Test func aFileWithoutHTTPNamespacesIsByteForByteAsBefore() async throws {
        let root = ExamplesTests.root
        // The Examples' snapshots are what their scripts write (not committed): made here.
        var snapshots = [("Tests/Fixtures/snapshot-schema6/snapshot.json",
                          try Data(contentsOf: root.appendingPathComponent("Tests/Fixtures/snapshot-schema6/snapshot.json")))]
        for name in ["page-cache", "spawn-validation"] {
            let sandbox = try Sandbox()
            for file in [name + ".cachesh", name + ".json"] {
                try Data(contentsOf: root.appendingPathComponent("Examples/" + file)).write(to: sandbox.url.appendingPathComponent(file))
            }
            let run = try await Cachesh.run([name + ".cachesh"], in: sandbox.url)
            #expect(run.status == 0, "\(name): \(run)")
            snapshots.append(("Examples/\(name).cachesh's snapshot",
                              try Data(contentsOf: sandbox.url.appendingPathComponent(name + ".snapshot.json"))))
        }
        for (path, original) in snapshots {
            let sandbox = try Sandbox()
            try original.write(to: sandbox.url.appendingPathComponent("old.json"))
            let run = try await Cachesh.run(["-c", "restore old.json; snapshot new.json"], in: sandbox.url)
            #expect(run.status == 0, "\(path): \(run)")
            #expect(try Data(contentsOf: sandbox.url.appendingPathComponent("new.json")) == original, "\(path)")
        }
        let sandbox = try Sandbox()
        let script = try String(contentsOf: root.appendingPathComponent("Tests/store-schema5/script.cachesh"), encoding: .utf8)
        try sandbox.write("s.cachesh", "record t.transcript\n" + script + "record stop\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let transcript = try String(contentsOf: sandbox.url.appendingPathComponent("t.transcript"), encoding: .utf8)
        for field in ["\"http\"", "\"headers\"", "status="] { #expect(!transcript.contains(field), "\(field)") }
    }

    /// The naive switches of HTTP namespaces as a user types them (SPEC §1.2): a 304 stored as an
    /// empty 200 and served from then on (not-modified-as-empty); a response 50 s old upstream
    /// counted from its arrival (ignore-age), until the switch is off again. (The other three run
    /// in Examples/http-304-as-failure, http-vary-accept-language, http-stale-while-revalidate.)
    @Test func naiveSwitchesShowWhatClientsDo() async throws {
        let run = try await Cachesh.script("""
            ns empty http
            ns empty naive=not-modified-as-empty
            ns aged http
            ns aged naive=ignore-age
            server set empty:/feed "posts" headers={"ETag":"\\"f1\\"","Cache-Control":"max-age=10"}
            server set aged:/feed "posts" headers={"Cache-Control":"max-age=60","Age":"50"}
            get empty:/feed
            get aged:/feed
            advance 20s
            get empty:/feed
            get empty:/feed
            get aged:/feed
            ns aged naive=none
            advance 1s
            get aged:/feed

            """)
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("cache_status:") || $0.hasPrefix("body:") }
        #expect(lines == [
            "cache_status: cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=9", "body:         \"posts\"",
            "cache_status: cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=59", "body:         \"posts\"",
            "cache_status: cachesh; fwd=stale; fwd-status=304; stored; ttl=9; detail=\"not-modified-as-empty: the 304 is stored as an empty 200\"",
            "body:         \"\"",
            "cache_status: cachesh; hit; ttl=9", "body:         \"\"",
            "cache_status: cachesh; hit; ttl=39", "body:         \"posts\"",
            "cache_status: cachesh; fwd=stale; fwd-status=200; stored; ttl=9", "body:         \"posts\"",
        ], "\(run)")
    }

    /// `persist` keeps an HTTP key's responses with its value; a client hydrating from it serves
    /// them without a request, with their age.
    @Test func persistAndHydrateKeepHTTPResponses() async throws {
        let run = try await Cachesh.script(Self.setup + """
            get api:/feed
            persist
            client tab2
            advance 10s
            hydrate
            get api:/feed
            server log

            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("""
                          Age: 10
            cache_status: cachesh; hit; ttl=49
            """), "\(run)")
    }

    /// A snapshot whose HTTP fields are hostile is one error line, and the session goes on as it was.
    @Test func aHostileHTTPSnapshotIsOneErrorLine() async throws {
        let run = try await Cachesh.script(Self.setup + "get api:/feed\nsnapshot a.json\n")
        #expect(run.status == 0, "\(run)")
        let good = try await Cachesh.script(Self.setup + "get api:/feed\nsnapshot\n")
        let document = String(good.stdout[good.stdout.range(of: "{\n  \"clock_start\"")!.lowerBound...])
        let hostile = document.replacingOccurrences(of: "\"status\": 200", with: "\"status\": 1000")
        #expect(hostile != document)
        let restored = try await Cachesh.script(Self.setup + "get api:/feed\nrestore bad.json\nget api:/feed\n", files: ["bad.json": hostile])
        #expect(restored.status == 1)
        #expect(restored.stderr == "script.cachesh:4: error: bad.json: entries[0].http[0].status: expected an HTTP status code from 200 to 599, not 1000\n", "\(restored)")
        #expect(restored.stdout.hasSuffix("cache_status: cachesh; hit; ttl=59\nbody:         \"v1\"\n"), "\(restored)")
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

    /// Every Examples/http-*.cachesh, by name.
    static let examples: [String] = {
        let directory = ExamplesTests.root.appendingPathComponent("Examples")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix("http-") && $0.hasSuffix(".cachesh") }.map { String($0.dropLast(".cachesh".count)) }.sorted()
    }()

    /// The examples the HTTP rules of the issue ask for are all there.
    @Test func everyHTTPRuleHasAnExample() {
        for name in ["http-storing", "http-freshness", "http-request-directives", "http-revalidation", "http-stale", "http-vary",
                     "http-invalidation", "http-head", "http-image-changed", "http-304-as-failure", "http-must-revalidate",
                     "http-vary-accept-language", "http-stale-while-revalidate"] {
            #expect(Self.examples.contains(name), "\(name)")
        }
    }

    /// Each Examples/http-* script runs with exit 0, names the RFC section it shows and the public
    /// cache test suite's ids it answers (`# cache-tests: ID, ...`), and its transcript verifies
    /// under --safe.
    @Test(arguments: examples) func examplesRunNameTheirRFCAndVerify(name: String) async throws {
        let examples = ExamplesTests.root.appendingPathComponent("Examples")
        let run = try await Cachesh.run(["\(name).cachesh"], in: examples)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(name): \(run)")
        let text = try String(contentsOf: examples.appendingPathComponent("\(name).cachesh"), encoding: .utf8)
        #expect(text.hasPrefix("# RFC "), "\(name)")
        let header = text.split(separator: "\n").prefix { $0.hasPrefix("#") }
        #expect(header.contains { $0.hasPrefix("# cache-tests: ") }, "\(name)")
        let verify = try await Cachesh.run(["--verify", "--safe", "\(name).transcript"], in: examples)
        #expect(verify.status == 0, "\(name): \(verify)")
    }
}
