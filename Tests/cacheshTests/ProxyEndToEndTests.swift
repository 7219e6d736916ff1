import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh proxy` as a user runs it (docs/SPEC.md §8, Proxy): the built binary in front of a
/// tiny loopback origin this test starts (Python's http.server), each answer checked for its
/// `Cache-Status` and its log line, and each bad input of SPEC §7.1's proxy rows answered
/// clearly, with a log line, the proxy serving on afterwards. Every wait has a generous
/// deadline; nothing is timed.
@Suite(.serialized) struct ProxyEndToEndTests {
    /// The origin: `/fresh` (max-age=3600, its body counting the requests), `/nostatus` (bytes
    /// that are no HTTP response), `/hang` (never answers), `/reset` (closes with a reset),
    /// `/hugeheaders` (a 64 KiB header field), `/badheader` (a header line with no colon).
    static let origin = #"""
    import socket, sys, threading, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    count = {"n": 0}
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
        def do_GET(self):
            if self.path == "/fresh":
                count["n"] += 1
                body = ("fresh %d" % count["n"]).encode()
                self.send_response(200)
                self.send_header("Cache-Control", "max-age=3600")
                self.send_header("ETag", '"f"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/nostatus":
                self.wfile.write(b"this is not HTTP\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True
            elif self.path == "/hang":
                time.sleep(600)
            elif self.path == "/hugeheaders":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nX-Big: " + b"a" * 65536
                                 + b"\r\nContent-Length: 2\r\n\r\nok")
                self.wfile.flush()
                self.close_connection = True
            elif self.path == "/badheader":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nCache-Control max-age=60\r\nContent-Length: 2\r\n\r\nok")
                self.wfile.flush()
                self.close_connection = True
            elif self.path == "/reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.close_connection = True
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """#

    /// A running origin and proxy; both are killed when it goes.
    final class Setup {
        let origin: Child
        let proxy: Child
        let port: UInt16
        let log: String
        let sandbox: Sandbox

        init(extra: [String] = []) async throws {
            sandbox = try Sandbox()
            let script = try sandbox.write("origin.py", ProxyEndToEndTests.origin)
            origin = try await Child.start("/usr/bin/env", ["python3", script], name: "origin")
            let originPort = try await origin.output(until: "\n").split(separator: "\n")[0]
            log = sandbox.url.appendingPathComponent("proxy.log").path
            proxy = try await Child.start(Cachesh.binaryPath, ["proxy", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:\(originPort)",
                                                               "--log", log] + extra, name: "cachesh proxy")
            let banner = try await proxy.output(until: "\n")
            guard let range = banner.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                  let port = UInt16(banner[range].split(separator: ":").last!) else {
                throw HarnessError(description: "no address in \(banner.debugDescription)")
            }
            self.port = port
        }

        deinit {
            proxy.signal(SIGKILL)
            origin.signal(SIGKILL)
        }

        /// The log's lines so far.
        var logLines: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        /// The proxy's resident memory in KiB (Linux).
        var residentKiB: Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(proxy.pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        }
    }

    /// A response as read off the socket: status, fields (names lower-cased), body.
    struct Response {
        var status: Int
        var fields: [String: String]
        var body: String
    }

    /// Sends `raw` on a new connection and reads the answer to its end (the proxy closes after
    /// it, as each request here says `Connection: close`), on a thread of its own, up to 120 s.
    static func exchange(_ port: UInt16, _ raw: String) async throws -> Response {
        let text = await OwnThread.run { () -> String? in
            guard let fd = connectTo(port) else { return nil }
            defer { close(fd) }
            var timeout = timeval(tv_sec: 120, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(raw.utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                sent += n
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                received += buffer[0..<n]
            }
            return String(decoding: received, as: UTF8.self)
        }
        guard let text, let split = text.range(of: "\r\n\r\n") else {
            throw HarnessError(description: "no HTTP answer on port \(port): \(String(describing: text).debugDescription)")
        }
        let lines = text[..<split.lowerBound].split(separator: "\r\n")
        let statusWords = lines[0].split(separator: " ")
        guard statusWords.count >= 2, let status = Int(statusWords[1]) else { throw HarnessError(description: "bad status line \(lines[0])") }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, fields: fields, body: String(text[split.upperBound...]))
    }

    static func get(_ port: UInt16, _ path: String, _ extra: String = "") async throws -> Response {
        try await exchange(port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)Connection: close\r\n\r\n")
    }

    static func connectTo(_ port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); return nil }
        return fd
    }

    /// The log line of the request for `path` that answered `status` (each request has one).
    static func logLine(_ setup: Setup, _ method: String, _ path: String, _ status: Int) -> String? {
        setup.logLines.first { $0.contains(" \(method) \(path) \(status) ") }
    }

    @Test func aSecondReadIsAHitWithCacheStatusAndALogLineEach() async throws {
        let setup = try await Setup()
        let started = ContinuousClock.now
        let first = try await Self.get(setup.port, "/fresh")
        // The request's time in whole seconds, rounded up.
        let took = ContinuousClock.now - started
        let elapsed = Int(took.components.seconds) + (took.components.attoseconds > 0 ? 1 : 0)
        #expect(first.status == 200 && first.body == "fresh 1")
        // max-age=3600 less the response's age on the real clock (RFC 9111 §4.2.3), whole
        // seconds left: the age is under 1 s from the origin's `Date`, which has no fraction of
        // a second, plus at most the time the request took (more on a machine busy enough to
        // stall it). Rounded down, 3600 - elapsed - 1 at the least.
        let prefix = "cachesh; fwd=uri-miss; fwd-status=200; stored; ttl="
        let status = first.fields["cache-status"] ?? ""
        let ttl = status.hasPrefix(prefix) ? Int(status.dropFirst(prefix.count)) : nil
        #expect(ttl.map { (3600 - elapsed - 1)...3600 ~= $0 } == true, "\(status) after \(took)")
        let second = try await Self.get(setup.port, "/fresh")
        #expect(second.status == 200 && second.body == "fresh 1")
        #expect(second.fields["cache-status"]?.hasPrefix("cachesh; hit; ttl=") == true)
        #expect(second.fields["age"] != nil)
        // The app's own conditional request of the fresh response: a 304 from the cache.
        let conditional = try await Self.get(setup.port, "/fresh", "If-None-Match: \"f\"\r\n")
        #expect(conditional.status == 304 && conditional.body.isEmpty)
        // Two requests in one write (pipelined): two answers, in order, both hits.
        let pipelined = try await Self.exchange(setup.port, "GET /fresh HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                                + "GET /fresh HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(pipelined.status == 200 && pipelined.fields["cache-status"]?.hasPrefix("cachesh; hit") == true)
        #expect(pipelined.body.hasPrefix("fresh 1HTTP/1.1 200 OK\r\n") && pipelined.body.hasSuffix("\r\n\r\nfresh 1"), "\(pipelined.body)")
        let lines = setup.logLines.filter { $0.contains(" GET /fresh ") }
        #expect(lines.count == 5, "\(setup.logLines)")
        // time method key status decision upstream latency
        let pattern = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z GET /fresh 200 "cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=[0-9]+" upstream=200 [0-9]+\.[0-9]{3}ms$"#
        #expect(lines[0].range(of: pattern, options: .regularExpression) != nil, "\(lines[0])")
        #expect(lines[1].contains(#" 200 "cachesh; hit; ttl="#) && lines[1].contains(" upstream=- "), "\(lines[1])")
        #expect(lines[2].contains(" 304 ") && lines[2].contains("hit"), "\(lines[2])")
    }

    @Test func recordWritesTheSessionAsATranscriptThatVerifiesWhenTheProxyStops() async throws {
        let folder = try Sandbox()
        let path = folder.url.appendingPathComponent("session.transcript").path
        let setup = try await Setup(extra: ["--record", path])
        let first = try await Self.get(setup.port, "/fresh")
        let second = try await Self.get(setup.port, "/fresh")
        let missing = try await Self.get(setup.port, "/missing")
        #expect(first.status == 200 && second.fields["cache-status"]?.hasPrefix("cachesh; hit") == true && missing.status == 404)
        setup.proxy.signal(SIGINT)
        let said = try await setup.proxy.output(until: "wrote \(path)\n")
        #expect(said.hasSuffix("cachesh proxy: wrote \(path)\n"), "\(said)")
        let transcript = try String(contentsOfFile: path, encoding: .utf8)
        let commands = transcript.split(separator: "\n").filter { $0.hasPrefix("cachesh> ") }
        // The reads as the app sent them, each answer the origin gave scripted before it.
        #expect(commands.filter { $0.hasPrefix("cachesh> get proxy:/fresh headers=") }.count == 2, "\(transcript)")
        #expect(commands.contains { $0.hasPrefix("cachesh> server next proxy:/fresh latency=") && $0.contains("status=200") })
        #expect(commands.contains { $0.hasPrefix("cachesh> server next proxy:/missing latency=") && $0.contains("status=404") })
        #expect(transcript.contains("cache_status: cachesh; hit; ttl="))
        let verify = try await Cachesh.run(["--verify", "--safe", path])
        #expect(verify.status == 0 && verify.stdout.hasSuffix("1 passed, 0 failed\n"), "\(verify)")
    }

    @Test func aMalformedRequestGets400AndHugeHeaders431AndTheProxyServesOn() async throws {
        let setup = try await Setup()
        let malformed = try await Self.exchange(setup.port, "GET /fresh HTTP/1.1\r\nHost 127.0.0.1\r\nno colon here\r\n\r\n")
        #expect(malformed.status == 400)
        #expect(malformed.fields["cache-status"]?.contains("malformed request") == true)
        let huge = try await Self.exchange(setup.port, "GET /fresh HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 64 * 1024))\r\n\r\n")
        #expect(huge.status == 431)
        #expect(huge.fields["cache-status"]?.contains("larger than 32768 bytes") == true)
        let bigBody = try await Self.exchange(setup.port, "POST /fresh HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 9000000\r\n\r\nabc")
        #expect(bigBody.status == 413)
        #expect(Self.logLine(setup, "POST", "/fresh", 413)?.contains("larger than 8388608 bytes") == true, "\(setup.logLines)")
        let badTarget = try await Self.get(setup.port, "fresh")
        #expect(badTarget.status == 400)
        let after = try await Self.get(setup.port, "/fresh")
        #expect(after.status == 200 && after.body == "fresh 1")
        #expect(setup.logLines.filter { $0.contains(" 400 ") }.count == 2, "\(setup.logLines)")
        #expect(setup.logLines.contains { $0.contains(" 431 ") && $0.contains("larger than") }, "\(setup.logLines)")
    }

    @Test func anUpstreamWithoutAStatusLineOrThatResetsGets502() async throws {
        let setup = try await Setup()
        let noStatus = try await Self.get(setup.port, "/nostatus")
        #expect(noStatus.status == 502)
        #expect(noStatus.fields["cache-status"]?.contains("not HTTP/1.1") == true, "\(noStatus.fields)")
        #expect(Self.logLine(setup, "GET", "/nostatus", 502)?.contains("upstream=error") == true, "\(setup.logLines)")
        let reset = try await Self.get(setup.port, "/reset")
        #expect(reset.status == 502)
        #expect(Self.logLine(setup, "GET", "/reset", 502)?.contains("upstream=error") == true, "\(setup.logLines)")
        let after = try await Self.get(setup.port, "/fresh")
        #expect(after.status == 200)
    }

    @Test func anUpstreamWithHugeOrMalformedHeadersGets502AndALogLine() async throws {
        let setup = try await Setup()
        let huge = try await Self.get(setup.port, "/hugeheaders")
        #expect(huge.status == 502)
        #expect(huge.fields["cache-status"]?.contains("header fields are larger than 32768 bytes") == true, "\(huge.fields)")
        #expect(Self.logLine(setup, "GET", "/hugeheaders", 502)?.contains("upstream=error") == true, "\(setup.logLines)")
        let malformed = try await Self.get(setup.port, "/badheader")
        #expect(malformed.status == 502)
        #expect(malformed.fields["cache-status"]?.contains("not HTTP/1.1") == true, "\(malformed.fields)")
        #expect(Self.logLine(setup, "GET", "/badheader", 502)?.contains("upstream=error") == true, "\(setup.logLines)")
        // Neither was stored: the next read goes to the upstream again.
        let again = try await Self.get(setup.port, "/hugeheaders")
        #expect(again.status == 502 && again.fields["cache-status"]?.contains("hit") == false)
        let after = try await Self.get(setup.port, "/fresh")
        #expect(after.status == 200)
    }

    @Test func anUpstreamThatHangsGets504AtTheTimeout() async throws {
        let setup = try await Setup(extra: ["--upstream-timeout", "1s"])
        let hung = try await Self.get(setup.port, "/hang")
        #expect(hung.status == 504)
        #expect(hung.fields["cache-status"]?.contains("timed out") == true, "\(hung.fields)")
        #expect(Self.logLine(setup, "GET", "/hang", 504) != nil, "\(setup.logLines)")
        let after = try await Self.get(setup.port, "/fresh")
        #expect(after.status == 200)
    }

    @Test func aThousandIdleConnectionsLeaveItServingWithBoundedMemory() async throws {
        let setup = try await Setup()
        _ = try await Self.get(setup.port, "/fresh")
        let before = setup.residentKiB ?? 0
        // This process needs a descriptor for each: its soft limit goes up to the hard one.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 1200 && limit.rlim_max >= 1200 {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let port = setup.port
        let idle = await OwnThread.run { () -> [Int32] in (0..<1000).compactMap { _ in Self.connectTo(port) } }
        defer { for fd in idle { close(fd) } }
        #expect(idle.count == 1000)
        let served = try await Self.get(setup.port, "/fresh")
        #expect(served.status == 200 && served.fields["cache-status"]?.contains("hit") == true)
        let after = setup.residentKiB ?? 0
        // Each idle connection costs a few KiB: far under 100 MiB for the thousand.
        #expect(after - before < 100 * 1024, "resident \(before) KiB before, \(after) KiB after")
    }

    @Test func badUsageIsOneLineAndExit2() async throws {
        let outcome = try await Cachesh.run(["proxy", "--listen", "127.0.0.1:8001"])
        #expect(outcome.status == 2)
        #expect(outcome.stderr == "cachesh: proxy: --upstream http[s]://HOST[:PORT] is required (usage: cachesh proxy [--listen HOST:PORT] --upstream http[s]://HOST[:PORT] [--upstream-ca FILE] [--private] [--config FILE] [--log FILE] [--record FILE] [--upstream-timeout DURATION] [--inspect [PATH|127.0.0.1:PORT]])\n")
        let caWithHTTP = try await Cachesh.run(["proxy", "--upstream", "http://127.0.0.1:1", "--upstream-ca", "ca.pem"])
        #expect(caWithHTTP.status == 2 && caWithHTTP.stderr == "cachesh: proxy: --upstream-ca is for an https:// upstream\n", "\(caWithHTTP)")
        let noCA = try await Cachesh.run(["proxy", "--upstream", "https://127.0.0.1:1", "--upstream-ca", "/nonexistent/ca.pem"])
        #expect(noCA.status == 2 && noCA.stderr.hasPrefix("cachesh: proxy: --upstream-ca /nonexistent/ca.pem: no PEM certificate could be read from it"), "\(noCA)")
        #expect(noCA.stderr.split(separator: "\n").count == 1)
        let ftp = try await Cachesh.run(["proxy", "--upstream", "ftp://example.com"])
        #expect(ftp.status == 2 && ftp.stderr == "cachesh: proxy: --upstream ftp://example.com: give http://HOST[:PORT] or https://HOST[:PORT]\n")
        let badListen = try await Cachesh.run(["proxy", "--listen", "localhost", "--upstream", "http://127.0.0.1:1"])
        #expect(badListen.status == 2 && badListen.stderr.contains("give HOST:PORT"))
    }
}
