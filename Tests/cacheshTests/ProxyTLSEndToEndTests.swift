import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh proxy --upstream https://...` as a user runs it (docs/SPEC.md §8, Proxy): an HTTPS
/// origin (Python's http.server wrapped in TLS) whose certificate is signed by a CA made with
/// `openssl` when the test starts (no key is kept in the repository). The proxy trusts that CA
/// only through `--upstream-ca`; without it, or when the upstream speaks no TLS, the answer is a
/// 502 with one log line, and the proxy serves on.
@Suite(.serialized) struct ProxyTLSEndToEndTests {
    /// Makes a CA and a certificate for `localhost` (only) signed by it (in the current
    /// folder), then serves HTTPS: `/fresh` (max-age=3600, its body counting the requests, and
    /// `X-SNI` the server name the client sent). Prints its port once listening.
    static let origin = #"""
    import ssl, subprocess, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    def run(*args):
        subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
        "-out", "ca.pem", "-days", "2", "-subj", "/CN=cachesh test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
        "-out", "server.csr", "-subj", "/CN=localhost")
    with open("server.ext", "w") as f:
        f.write("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "server.ext")
    count = {"n": 0}
    seen = {"sni": "none"}
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
        def do_GET(self):
            count["n"] += 1
            body = ("fresh %d" % count["n"]).encode()
            self.send_response(200)
            self.send_header("Cache-Control", "max-age=3600")
            self.send_header("X-SNI", seen["sni"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain("server.pem", "server.key")
    def sni(sock, name, ctx):
        seen["sni"] = name or "none"
    context.sni_callback = sni
    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """#

    /// A running HTTPS origin (its CA at `caFile`) and a plain HTTP one; proxies started in front.
    final class Origins {
        let sandbox: Sandbox
        let tls: Child
        let tlsPort: String
        let plain: Child
        let plainPort: String
        var caFile: String { sandbox.url.appendingPathComponent("ca.pem").path }
        var proxies: [Child] = []

        init() async throws {
            sandbox = try Sandbox()
            let script = try sandbox.write("origin.py", ProxyTLSEndToEndTests.origin)
            tls = try await Child.start("/usr/bin/env", ["python3", script], name: "https origin", in: sandbox.url)
            tlsPort = String(try await tls.output(until: "\n").split(separator: "\n")[0])
            let plainScript = try sandbox.write("plain.py", ProxyEndToEndTests.origin)
            plain = try await Child.start("/usr/bin/env", ["python3", plainScript], name: "origin")
            plainPort = String(try await plain.output(until: "\n").split(separator: "\n")[0])
        }

        /// Starts `cachesh proxy` with `arguments`, logging to `log`; returns its port.
        func proxy(_ arguments: [String], log: String) async throws -> UInt16 {
            let child = try await Child.start(Cachesh.binaryPath, ["proxy", "--listen", "127.0.0.1:0", "--log", log] + arguments,
                                              name: "cachesh proxy")
            proxies.append(child)
            let banner = try await child.output(until: "\n")
            guard let range = banner.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                  let port = UInt16(banner[range].split(separator: ":").last!) else {
                throw HarnessError(description: "no address in \(banner.debugDescription)")
            }
            return port
        }

        func lines(_ log: String) -> [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        deinit {
            for proxy in proxies { proxy.signal(SIGKILL) }
            tls.signal(SIGKILL)
            plain.signal(SIGKILL)
        }
    }

    @Test func anHTTPSUpstreamIsVerifiedWithTheGivenCAAndItsAnswerServedFromTheCache() async throws {
        let origins = try await Origins()
        let log = origins.sandbox.url.appendingPathComponent("proxy.log").path
        let port = try await origins.proxy(["--upstream", "https://localhost:\(origins.tlsPort)", "--upstream-ca", origins.caFile], log: log)
        let first = try await ProxyEndToEndTests.get(port, "/fresh")
        #expect(first.status == 200 && first.body == "fresh 1", "\(first)")
        #expect(first.fields["cache-status"]?.hasPrefix("cachesh; fwd=uri-miss; fwd-status=200; stored") == true, "\(first.fields)")
        // The name was sent in SNI (and the certificate checked against it).
        #expect(first.fields["x-sni"] == "localhost")
        let second = try await ProxyEndToEndTests.get(port, "/fresh")
        #expect(second.status == 200 && second.body == "fresh 1")
        #expect(second.fields["cache-status"]?.hasPrefix("cachesh; hit; ttl=") == true, "\(second.fields)")
        let lines = origins.lines(log)
        #expect(lines.count == 2 && lines[0].contains(" GET /fresh 200 ") && lines[0].contains("upstream=200")
                && lines[1].contains(" GET /fresh 200 ") && lines[1].contains("upstream=-"), "\(lines)")
    }

    @Test func anUpstreamCertificateNotTrustedOrNoTLSAtAllIsA502WithOneLogLine() async throws {
        let origins = try await Origins()
        // Without --upstream-ca the test CA is trusted by nothing: the certificate is refused.
        let log = origins.sandbox.url.appendingPathComponent("untrusted.log").path
        let untrusted = try await origins.proxy(["--upstream", "https://localhost:\(origins.tlsPort)"], log: log)
        let refused = try await ProxyEndToEndTests.get(untrusted, "/fresh")
        #expect(refused.status == 502, "\(refused)")
        #expect(refused.fields["cache-status"]?.contains("TLS with the upstream failed") == true, "\(refused.fields)")
        var lines = origins.lines(log)
        #expect(lines.count == 1 && lines[0].contains(" GET /fresh 502 ") && lines[0].contains("TLS with the upstream failed")
                && lines[0].contains("upstream=error"), "\(lines)")
        // An address the certificate does not name (it names localhost only): refused too.
        let wrongName = try await origins.proxy(["--upstream", "https://127.0.0.1:\(origins.tlsPort)", "--upstream-ca", origins.caFile],
                                                log: log + ".name")
        let mismatch = try await ProxyEndToEndTests.get(wrongName, "/fresh")
        #expect(mismatch.status == 502 && mismatch.fields["cache-status"]?.contains("TLS with the upstream failed") == true, "\(mismatch)")
        // An upstream that speaks plain HTTP where TLS was asked for: the handshake fails.
        let plainLog = origins.sandbox.url.appendingPathComponent("plain.log").path
        let plain = try await origins.proxy(["--upstream", "https://127.0.0.1:\(origins.plainPort)", "--upstream-ca", origins.caFile],
                                            log: plainLog)
        let noTLS = try await ProxyEndToEndTests.get(plain, "/fresh")
        #expect(noTLS.status == 502 && noTLS.fields["cache-status"]?.contains("TLS") == true, "\(noTLS.fields)")
        lines = origins.lines(plainLog)
        #expect(lines.count == 1 && lines[0].contains(" GET /fresh 502 "), "\(lines)")
        // Each proxy serves on after its failure.
        let again = try await ProxyEndToEndTests.get(untrusted, "/fresh")
        #expect(again.status == 502 && origins.lines(log).count == 2)
    }
}
