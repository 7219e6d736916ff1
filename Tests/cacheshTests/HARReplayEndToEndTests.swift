import Foundation
import Testing

/// `replay FILE.har` through the built executable (issue 37): a row per entry with the cache's
/// decision, why, and whether the recorded client agrees; sweeps; bad logs; a session unchanged.
@Suite("HAR replay")
struct HARReplayEndToEndTests {
    /// A HAR log written as exporters write it, from entries made by `entry`.
    static func log(_ entries: [[String: Any]]) throws -> String {
        let object: [String: Any] = ["log": ["version": "1.2", "creator": ["name": "test", "version": "1"], "entries": entries]]
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static let start = Date(timeIntervalSince1970: 1_772_359_200)  // 2026-03-01T10:00:00Z

    static func httpDate(_ seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: start.addingTimeInterval(seconds))
    }

    static func iso(_ seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: start.addingTimeInterval(seconds))
    }

    /// One entry at `seconds` after the start, its response dated then.
    static func entry(_ seconds: Double, _ method: String, _ url: String, _ status: Int, _ headers: [(String, String)],
                      text: String? = nil, base64: (text: String, size: Int)? = nil, fromCache: String? = nil,
                      request: [(String, String)] = [], wait: Double = 20) -> [String: Any] {
        var content: [String: Any] = ["size": text?.utf8.count ?? 0, "mimeType": "application/json"]
        if let text { content["text"] = text }
        if let base64 { content["text"] = base64.text; content["encoding"] = "base64"; content["size"] = base64.size }
        func list(_ pairs: [(String, String)]) -> [[String: String]] { pairs.map { ["name": $0.0, "value": $0.1] } }
        var entry: [String: Any] = [
            "startedDateTime": iso(seconds), "time": wait,
            "request": ["method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": list(request), "cookies": [],
                        "queryString": [], "headersSize": -1, "bodySize": 0],
            "response": ["status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                         "headers": list(headers + [("Date", httpDate(seconds))]), "cookies": [], "content": content,
                         "redirectURL": "", "headersSize": -1, "bodySize": -1],
            "cache": [String: Any](), "timings": ["send": 0, "wait": wait, "receive": 0],
        ]
        if let fromCache { entry["_fromCache"] = fromCache }
        return entry
    }

    static let api = "https://api.example.com"
    static let cdn = "https://cdn.example.com"
    static let feed: [(String, String)] = [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")]

    /// Two hosts: a feed fetched, served from the cache (as the recorded client did, and where it
    /// did not), revalidated with a 304, invalidated by a POST, then not stored (no-store); a
    /// logo fetched and served from the disk cache.
    static func appLog() throws -> String {
        try log([
            entry(0, "GET", api + "/feed", 200, feed, text: "[1,2]"),
            entry(1, "GET", cdn + "/logo.png", 200, [("Cache-Control", "max-age=3600")], base64: ("iVBORw0KGgo=", 8)),
            entry(10, "GET", api + "/feed", 200, feed, text: "[1,2]", fromCache: "memory"),
            entry(30, "GET", api + "/feed", 200, feed, text: "[1,2]"),
            entry(90, "GET", api + "/feed", 304, feed, request: [("If-None-Match", "\"v1\"")]),
            entry(100, "GET", cdn + "/logo.png", 200, [("Cache-Control", "max-age=3600")], base64: ("iVBORw0KGgo=", 8), fromCache: "disk"),
            entry(120, "POST", api + "/feed", 201, []),
            entry(121, "GET", api + "/feed", 200, [("Cache-Control", "no-store")], text: "[1,2,3]"),
        ])
    }

    @Test("each entry gets a row: what the cache did, why, and whether the recorded client agrees; totals last")
    func rowsAndTotals() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["-c", "replay app.har"], in: sandbox.url)
        #expect(run == Outcome(stdout: """
            replayed 8 entries of app.har over 2m1s of virtual time: api.example.com (https://api.example.com), cdn.example.com (https://cdn.example.com)
            index  time   method  key                        status  decision     recorded     agrees  why
                0  0ms    GET     api.example.com:/feed         200  fetched      network      yes     nothing stored for the key (uri-miss); 200 stored, lifetime 1m (max-age)
                1  1s     GET     cdn.example.com:/logo.png     200  fetched      network      yes     nothing stored for the key (uri-miss); 200 stored, lifetime 1h (max-age)
                2  10s    GET     api.example.com:/feed         200  hit          cache        yes     fresh, 50s left: lifetime 1m (max-age), age 10s
                3  30s    GET     api.example.com:/feed         200  hit          network      NO      fresh, 30s left: lifetime 1m (max-age), age 30s
                4  1m30s  GET     api.example.com:/feed         200  revalidated  revalidated  yes     stale by 30s: lifetime 1m (max-age), age 1m30s; validated with If-None-Match: 304, the stored response freshened
                5  1m40s  GET     cdn.example.com:/logo.png     200  hit          cache        yes     fresh, 58m21s left: lifetime 1h (max-age), age 1m39s
                6  2m     POST    api.example.com:/feed         201  forwarded    -            -       POST is never answered from the cache; a 201 invalidates the key
                7  2m1s   GET     api.example.com:/feed         200  not-stored   network      yes     nothing stored for the key (uri-miss); not stored: the response says no-store
            totals: 8 entries, 5 requests sent, 3 saved, 23 bytes saved, 20 fetched; 1 disagreement with the recorded client

            """, stderr: "", status: 0))
    }

    @Test("--json: each row and the totals carry the documented fields")
    func jsonRows() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["--json", "-c", "replay app.har"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(object["command"] as? String == "replay" && object["format"] as? String == "har")
        #expect(object["entries"] as? Int == 8 && object["skipped"] as? Int == 0 && object["duration_ms"] as? Int == 121_000)
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == 8)
        for row in rows {
            #expect(Set(row.keys) == ["index", "time_ms", "method", "key", "url", "decision", "why", "cache_status", "status", "sent",
                                      "bytes", "bytes_saved", "recorded", "agrees"])
        }
        #expect(rows.map { $0["decision"] as? String } == ["fetched", "fetched", "hit", "hit", "revalidated", "hit", "forwarded", "not-stored"])
        #expect(rows[3]["agrees"] as? Bool == false && rows[3]["recorded"] as? String == "network")
        #expect(rows[6]["agrees"] is NSNull && rows[6]["recorded"] is NSNull)
        #expect(rows[4]["cache_status"] as? String == "cachesh; fwd=stale; fwd-status=304; stored")
        #expect(rows[4]["bytes_saved"] as? Int == 5 && rows[4]["time_ms"] as? Int == 90_000 && rows[4]["sent"] as? Int == 1)
        #expect(rows[1]["bytes"] as? Int == 8 && rows[1]["url"] as? String == "https://cdn.example.com/logo.png")
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["requests"] as? Int == 5 && totals["requests_saved"] as? Int == 3 && totals["bytes_saved"] as? Int == 23)
        #expect(totals["disagreements"] as? Int == 1 && totals["hit"] as? Int == 3 && totals["not_stored"] as? Int == 1)
        let namespaces = try #require(object["namespaces"] as? [[String: Any]])
        #expect(namespaces.map { $0["name"] as? String } == ["api.example.com", "cdn.example.com"])
        #expect((object["combinations"] as? [Any])?.count == 1)
    }

    @Test("a namespace of the session bound to the origin is used, with its settings; the session is unchanged")
    func sessionNamespaceAndSessionUnchanged() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let before = "ns api http origin=https://api.example.com shared\nput x 1\nadvance 1s\n"
        let after = "stats\nnow\nkeys\nserver log\nns\n"
        let plain = try await Cachesh.run(["-c", before + after], in: sandbox.url)
        let replayed = try await Cachesh.run(["-c", before + "replay app.har\n" + after], in: sandbox.url)
        #expect(plain.status == 0 && replayed.status == 0)
        let lines = replayed.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let table = lines.firstIndex { $0.hasPrefix("replayed ") }!
        let totals = lines.firstIndex { $0.hasPrefix("totals: ") }!
        #expect((lines[..<table] + lines[(totals + 1)...]).joined(separator: "\n") == plain.stdout)
        let json = try await Cachesh.run(["--json", "-c", before + "replay app.har"], in: sandbox.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.split(separator: "\n").last!.utf8)) as? [String: Any])
        let namespaces = try #require(object["namespaces"] as? [[String: Any]])
        #expect(namespaces[0]["name"] as? String == "api" && namespaces[0]["shared"] as? Bool == true)
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows[0]["key"] as? String == "api:/feed")
    }

    @Test("a sweep prints one row of totals per combination, and csv= writes them")
    func sweep() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["-c", "replay app.har override=none,/feed:max-age=0 shared=no,yes csv=sweep.csv"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines[1].hasPrefix("heuristic_percent  shared  naive  override"))
        #expect(lines.count == 7 && lines[6].hasPrefix("wrote ") && lines[6].hasSuffix("sweep.csv"))
        let csv = try String(contentsOf: sandbox.url.appendingPathComponent("sweep.csv"), encoding: .utf8)
        #expect(csv == """
            heuristic_percent,shared,naive,override,entries,requests,requests_saved,bytes_saved,bytes_fetched,disagreements,hit,stale,stale_revalidate,revalidated,fetched,not_stored,collapsed,forwarded,gateway_timeout
            -,no,-,none,8,5,3,23,20,1,3,0,0,1,2,1,0,1,0
            -,no,-,/feed:max-age=0,8,7,1,23,20,1,1,0,0,3,2,1,0,1,0
            -,yes,-,none,8,5,3,23,20,1,3,0,0,1,2,1,0,1,0
            -,yes,-,/feed:max-age=0,8,7,1,23,20,1,1,0,0,3,2,1,0,1,0

            """)
    }

    @Test("naive= sweeps naive switches (names joined by +) as a combination's column; heuristic= too")
    func naiveAndHeuristicSweep() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["--json", "-c", "replay app.har naive=none,last-answer-wins+serve-expired heuristic=0,50"], in: sandbox.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let combinations = try #require(object["combinations"] as? [[String: Any]])
        #expect(combinations.map { $0["naive"] as? String } == ["none", "last-answer-wins+serve-expired", "none", "last-answer-wins+serve-expired"])
        #expect(combinations.map { $0["heuristic_percent"] as? Int } == [0, 0, 50, 50])
        #expect((object["rows"] as? [Any])?.isEmpty == true && object["totals"] is NSNull)
    }

    @Test("an override adds or drops a directive for the targets its pattern matches")
    func overrideAddsStaleWhileRevalidate() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["--json", "-c", "replay app.har override=/feed:stale-while-revalidate=60"], in: sandbox.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        // At 90s the feed is 30s stale, within the window: served at once, validated behind.
        #expect(rows[4]["decision"] as? String == "stale-revalidate")
        #expect(rows[4]["agrees"] as? Bool == false)
        let dropped = try await Cachesh.run(["--json", "-c", "replay app.har override=/f*:-no-store"], in: sandbox.url)
        let rows2 = try #require((try JSONSerialization.jsonObject(with: Data(dropped.stdout.utf8)) as? [String: Any])?["rows"] as? [[String: Any]])
        // Without no-store nor any freshness the 200 is not heuristically fresh: stored, lifetime 0.
        #expect(rows2[7]["decision"] as? String == "fetched")
    }

    @Test("entries a cache never sees are skipped with a warning; a bad entry is one line with its index and JSON path, nothing written")
    func badLogs() async throws {
        let sandbox = try Sandbox()
        var entries = [Self.entry(0, "GET", Self.api + "/feed", 200, Self.feed, text: "[1]"),
                       Self.entry(1, "GET", "data:text/plain,hi", 200, [], text: "hi")]
        try sandbox.write("skip.har", try Self.log(entries))
        let skipped = try await Cachesh.run(["-c", "replay skip.har"], in: sandbox.url)
        #expect(skipped.status == 0)
        #expect(skipped.stdout.hasPrefix("skip.har: warning: entries[1]: skipped: a data: URL (nothing went over the network)\nreplayed 1 entry of skip.har"))
        // Past 100 warnings, the rest are counted.
        let many = [Self.entry(0, "GET", Self.api + "/feed", 200, Self.feed, text: "[1]")]
            + (1...103).map { Self.entry(Double($0), "GET", "data:text/plain,\($0)", 200, [], text: "x") }
        try sandbox.write("many.har", try Self.log(many))
        let capped = try await Cachesh.run(["-c", "replay many.har"], in: sandbox.url)
        let warnings = capped.stdout.split(separator: "\n").filter { $0.hasPrefix("many.har: warning: ") }
        #expect(warnings.count == 101 && warnings.last == "many.har: warning: 3 more entries skipped (the first 100 are shown)")
        let cappedJSON = try await Cachesh.run(["--json", "-c", "replay many.har"], in: sandbox.url)
        let cappedObject = try #require(try JSONSerialization.jsonObject(with: Data(cappedJSON.stdout.utf8)) as? [String: Any])
        #expect(cappedObject["skipped"] as? Int == 103 && (cappedObject["warnings"] as? [Any])?.count == 100)
        entries[1] = Self.entry(1, "GET", Self.api + "/a", 200, [], text: "x")
        var text = try Self.log(entries)
        text = text.replacingOccurrences(of: "\"status\":200", with: "\"status\":\"200\"")
        try sandbox.write("bad.har", text)
        let bad = try await Cachesh.run(["-c", "replay bad.har csv=out.csv"], in: sandbox.url)
        #expect(bad == Outcome(stdout: "", stderr: "-c:1:1: error: replay: bad.har: entries[0].response.status: expected a number, not a string\n", status: 1))
        try sandbox.write("cut.har", String(try Self.log(entries).dropLast(40)))
        let cut = try await Cachesh.run(["-c", "replay cut.har"], in: sandbox.url)
        #expect(cut.stderr.hasPrefix("-c:1:1: error: replay: cut.har: entries[1]") && cut.stderr.hasSuffix("(a file cut short?)\n"), "\(cut)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.url.appendingPathComponent("out.csv").path))
    }

    @Test("options are refused at their word: a trace's options with a HAR log, a HAR's with a trace, bad sweep items")
    func badOptions() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        try sandbox.write("trace.txt", "a\n")
        try sandbox.write("run.cachesh", """
            replay app.har max=10
            replay trace.txt heuristic=5
            replay app.har heuristic=101
            replay app.har shared=maybe
            replay app.har naive=none,bogus
            replay app.har override=feed
            replay app.har override=/a:-max-age=1
            replay app.har plot=p.svg
            replay app.har heuristic=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 override=none,/a:x,/b:x,/c:x,/d:x,/e:x,/f:x,/g:x,/h:x,/i:x,/j:x,/k:x,/l:x,/m:x,/n:x,/o:x

            """)
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(run.stderr == """
            run.cachesh:1: error: replay: max= is for an access trace; a HAR log sweeps heuristic=, shared=, naive= and override=
            run.cachesh:2: error: replay: heuristic= is for a HAR log (FILE.har or format=har); an access trace sweeps policy=, max=, ttl= and stale=
            run.cachesh:3: error: replay: heuristic= is a percentage from 0 to 100, not "101"
            run.cachesh:4: error: replay: shared=maybe: use yes or no (shared=no,yes sweeps both)
            run.cachesh:5: error: replay: naive=bogus: "bogus" is no naive switch (none, or names of `help ns` joined by +)
            run.cachesh:6: error: replay: override=feed: write PATTERN:DIRECTIVES, as /img/*:max-age=0 (a pattern of targets, starting with / or *)
            run.cachesh:7: error: replay: override=/a:-max-age=1: "-max-age=1" is not a directive: NAME or NAME=VALUE adds one, -NAME drops one (max-age=0, -no-store)
            run.cachesh:8: error: replay: plot= draws a trace's hit ratio against max; a HAR log's combinations are in csv=
            run.cachesh:9: error: replay: 272 combinations; at most 256 in one replay

            """)
    }

    @Test("--safe refuses a HAR replay as it refuses any replay")
    func safeRefuses() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["--safe", "-c", "replay app.har"], in: sandbox.url)
        #expect(run.status != 0 && run.stderr.contains("--safe"), "\(run)")
    }

    /// An interim response (1xx) or a status past 599 is no response a cache stores, nor one
    /// `server next status=` takes: the entry is skipped with a warning, and the transcript of
    /// the log verifies. (Before, the transcript's `server next ... status=600` was refused.)
    @Test(arguments: [101, 199, 600, 999])
    func anEntryWithAStatusOutside200To599IsSkipped(status: Int) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.har", try Self.log([Self.entry(0, "GET", Self.api + "/ws", status, []),
                                                 Self.entry(1, "GET", Self.api + "/feed", 200, Self.feed, text: "[1,2]")]))
        let run = try await Cachesh.run(["--transcribe", "s.har"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("cachesh> # entries[0]: skipped: "), "\(run)")
        #expect(!run.stdout.contains("api.example.com:/ws"), "\(run.stdout)")
        try sandbox.write("s.transcript", run.stdout)
        let verified = try await Cachesh.run(["--safe", "--verify", "s.transcript"], in: sandbox.url)
        #expect(verified == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0), "\(run.stdout)")
    }

    @Test("--transcribe FILE.har writes a transcript that verifies under --safe and makes the replay's decisions")
    func transcribeVerifies() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.har", try Self.appLog())
        let run = try await Cachesh.run(["--transcribe", "app.har"], in: sandbox.url)
        #expect(run.status == 0 && run.stderr == "", "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("cachesh> restore {\"clock_start\":\"2026-03-01T10:00:00.000Z\""))
        #expect(lines.contains("cachesh> server strict on"))
        #expect(lines.contains("cachesh> ns api.example.com http origin=https://api.example.com"))
        // The server's answers as the log gave them, bodies of each kind.
        #expect(lines.contains { $0.hasPrefix("cachesh> server next api.example.com:/feed status=200 latency=20ms headers={\"Cache-Control\":\"max-age=60\"") && $0.hasSuffix(" text=\"[1,2]\"") })
        #expect(lines.contains { $0.hasPrefix("cachesh> server next cdn.example.com:/logo.png status=200") && $0.hasSuffix(" binary=8:sha256:4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6") })
        // The decisions of the replay: a hit at 30s, a 304 at 90s, the POST's invalidation.
        let statuses = lines.filter { $0.hasPrefix("cache_status: ") }
        #expect(statuses == ["cache_status: cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=59",
                             "cache_status: cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=3599",
                             "cache_status: cachesh; hit; ttl=50",
                             "cache_status: cachesh; hit; ttl=30",
                             "cache_status: cachesh; fwd=stale; fwd-status=304; stored; ttl=59",
                             "cache_status: cachesh; hit; ttl=3501",
                             "cache_status: cachesh; fwd=method; fwd-status=201; detail=\"invalidated api.example.com:/feed\"",
                             "cache_status: cachesh; fwd=uri-miss; fwd-status=200; detail=\"not stored: the response says no-store\""])
        try sandbox.write("app.transcript", run.stdout)
        let verified = try await Cachesh.run(["--safe", "--verify", "app.transcript"], in: sandbox.url)
        #expect(verified == Outcome(stdout: "1 passed, 0 failed\n", stderr: "", status: 0))
        let json = try await Cachesh.run(["--json", "--transcribe", "app.har"], in: sandbox.url)
        try sandbox.write("json.transcript", json.stdout)
        #expect(try await Cachesh.run(["--safe", "--verify", "json.transcript"], in: sandbox.url).status == 0)
    }

    @Test("--redact: bodies become their size and digest, cookie and Authorization values are dropped, and it still verifies")
    func redactedTranscriptVerifies() async throws {
        let sandbox = try Sandbox()
        var first = Self.entry(0, "GET", Self.api + "/feed", 200, Self.feed + [("Set-Cookie", "sid=SECRET-1")], text: "[\"SECRET-BODY\"]",
                               request: [("Cookie", "sid=SECRET-2"), ("Authorization", "Bearer SECRET-3")])
        first["comment"] = "an exporter's comment"
        try sandbox.write("secret.har", try Self.log([first, Self.entry(5, "GET", Self.api + "/feed", 200, Self.feed, text: "[2]")]))
        let run = try await Cachesh.run(["--transcribe", "secret.har", "--redact"], in: sandbox.url)
        #expect(run.status == 0, "\(run)")
        #expect(!run.stdout.contains("SECRET"))
        #expect(run.stdout.contains("get api.example.com:/feed headers={\"Cookie\":\"redacted\",\"Authorization\":\"redacted\"}"))
        #expect(run.stdout.contains("\"Set-Cookie\":\"redacted\",\"Date\":\"Sun, 01 Mar 2026 10:00:00 GMT\"} binary=15:sha256:"))
        try sandbox.write("secret.transcript", run.stdout)
        #expect(try await Cachesh.run(["--safe", "--verify", "secret.transcript"], in: sandbox.url).status == 0)
        let misuse = try await Cachesh.run(["--redact", "-c", "now"], in: sandbox.url)
        #expect(misuse == Outcome(stdout: "", stderr: "cachesh: --redact goes with --transcribe FILE.har\n", status: 2))
        try sandbox.write("bad.har", "{\"log\": {\"entries\": [1]}}")
        let bad = try await Cachesh.run(["--transcribe", "bad.har"], in: sandbox.url)
        #expect(bad == Outcome(stdout: "", stderr: "cachesh: bad.har: entries[0]: expected an object, found '1' (at byte 21)\n", status: 2))
    }

    @Test("bodies of three kinds: server set and server next script text and binary bodies; reads show each kind")
    func bodyKinds() async throws {
        let sandbox = try Sandbox()
        let digest = String(repeating: "ab", count: 32)
        let script = """
            ns web http
            server set web:/page text="<p>hi</p>\\n" headers={"Cache-Control":"max-age=60"}
            get web:/page
            server next web:/logo status=200 headers={"Cache-Control":"max-age=60"} binary=8:sha256:\(digest)
            get web:/logo
            peek web:/logo
            server set web:/json {"a":1}
            get web:/json
            server next web:/x binary=8:sha256:AB
            server next web:/x text="a" binary=1:sha256:\(digest)
            server next web:/x text="a" "b"
            server next plain binary=1:sha256:\(digest)

            """
        try sandbox.write("run.cachesh", script)
        let run = try await Cachesh.run(["run.cachesh"], in: sandbox.url)
        #expect(run.stdout.contains("body:         text \"<p>hi</p>\\n\"\n"))
        #expect(run.stdout.contains("body:         binary 8 bytes sha256:\(digest)\n"))
        #expect(run.stdout.contains("value:         {\"sha256\":\"\(digest)\",\"size\":8}\n"))
        #expect(run.stdout.contains("body:         {\"a\":1}\n"))
        #expect(run.stderr == """
            run.cachesh:9: error: server next: binary= is SIZE:sha256:HEX, the bytes' size and their SHA-256 in 64 lowercase hex digits (binary=8:sha256:4c1f...)
            run.cachesh:10: error: server next: give text= or binary=, not both
            run.cachesh:11: error: server next: give one of value=, error= (or --fail), --not-found, --no-answer and --lost-answer, not value= and text=
            run.cachesh:12: error: server next: status=, headers=, text= and binary= are for a key of an HTTP namespace (ns NAME http); plain is not one

            """)
        let json = try await Cachesh.run(["--json", "-c", "ns web http; server set web:/page text=hi; get web:/page"], in: sandbox.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.split(separator: "\n").last!.utf8)) as? [String: Any])
        #expect(object["body"] as? String == "hi" && object["body_kind"] as? String == "text")
        let plain = try await Cachesh.run(["--json", "-c", "ns web http; server set web:/j [1]; get web:/j"], in: sandbox.url)
        #expect(!plain.stdout.contains("body_kind"))
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/har")

    @Test("each committed exporter's log replays, and its transcript (plain and redacted) verifies under --safe")
    func exportersFixturesReplayAndTranscribe() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path).filter { $0.hasSuffix(".har") }.sorted()
        #expect(names.count >= 7)
        for name in names {
            let sandbox = try Sandbox()
            let text = try String(contentsOf: Self.fixtures.appendingPathComponent(name), encoding: .utf8)
            try sandbox.write(name, text)
            let replay = try await Cachesh.run(["--json", "-c", "replay \(name)"], in: sandbox.url)
            #expect(replay.status == 0 && replay.stderr == "", "\(name): \(replay)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(replay.stdout.utf8)) as? [String: Any], "\(name)")
            #expect((object["rows"] as? [Any])?.count == object["entries"] as? Int, "\(name)")
            for redact in [false, true] {
                let transcript = try await Cachesh.run(["--transcribe", name] + (redact ? ["--redact"] : []), in: sandbox.url)
                #expect(transcript.status == 0, "\(name): \(transcript)")
                try sandbox.write("t.transcript", transcript.stdout)
                let verified = try await Cachesh.run(["--safe", "--verify", "t.transcript"], in: sandbox.url)
                #expect(verified.status == 0, "\(name) redact=\(redact): \(verified)")
            }
        }
    }
}
