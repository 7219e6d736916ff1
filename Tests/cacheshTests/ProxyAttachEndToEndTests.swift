import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh proxy --inspect` (SPEC §9): `cachesh attach` on the running proxy's cache while a
/// small loopback origin serves it (ProxyEndToEndTests' Python origin): the HTTP keys, a store and
/// a hit seen, an invalidated key fetched from the origin again. Waits are for conditions.
@Suite struct ProxyAttachEndToEndTests {
    @Test func aShellAttachedToTheProxySeesItsKeysWatchesAStoreAndInvalidates() async throws {
        let sandbox = try Sandbox()
        let script = try sandbox.write("origin.py", ProxyEndToEndTests.origin)
        let origin = try await Child.start("/usr/bin/env", ["python3", script], name: "origin")
        defer { origin.signal(SIGKILL) }
        let originPort = try await origin.output(until: "\n").split(separator: "\n")[0]
        let socket = sandbox.url.appendingPathComponent("proxy.sock").path
        let proxy = try await Child.start(Cachesh.binaryPath, ["proxy", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:\(originPort)",
                                                               "--log", sandbox.url.appendingPathComponent("proxy.log").path,
                                                               "--inspect", socket], name: "cachesh proxy")
        defer { proxy.signal(SIGKILL) }
        let banner = try await proxy.output(until: "forwarding to")
        #expect(banner.hasPrefix("cachesh inspector: listening on \(socket) (cachesh attach \(socket))\ncachesh proxy: listening on "), "\(banner)")
        let range = try #require(banner.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression))
        let port = try #require(UInt16(banner[range].split(separator: ":").last!))

        let watcher = try await Child.start(Cachesh.binaryPath, ["attach", socket, "-c", "watch proxy:*"])
        defer { watcher.signal(SIGKILL) }
        _ = try await watcher.output(until: "watching: proxy:*\n")
        // A store, then a hit.
        #expect(try await ProxyEndToEndTests.get(port, "/fresh").body == "fresh 1")
        _ = try await watcher.output(until: #" fetched proxy:/fresh fresh "fresh 1" (server)"#)
        #expect(try await ProxyEndToEndTests.get(port, "/fresh").body == "fresh 1")
        let looked = try await AttachEndToEndTests.attach([socket, "-c", "keys; stats proxy"])
        #expect(looked.status == 0 && looked.stdout.contains("proxy:/fresh  fresh"), "\(looked)")
        #expect(looked.stdout.contains("\nhits:             1\n") && looked.stdout.contains("\nmisses:           1\n"), "\(looked)")
        // Read-only changes nothing; an invalidated key is asked of the origin again.
        let refused = try await AttachEndToEndTests.attach([socket, "--read-only", "-c", "invalidate proxy:/fresh"])
        #expect(refused.status == 1 && refused.stderr == "error: invalidate: refused: attached with --read-only\n", "\(refused)")
        #expect(try await ProxyEndToEndTests.get(port, "/fresh").body == "fresh 1")
        let invalidated = try await AttachEndToEndTests.attach([socket, "-c", "invalidate proxy:/fresh"])
        #expect(invalidated.status == 0 && invalidated.stdout == "keys: proxy:/fresh\n", "\(invalidated)")
        _ = try await watcher.output(until: " invalidated proxy:/fresh stale ")
        let again = try await ProxyEndToEndTests.get(port, "/fresh")
        #expect(again.body == "fresh 2" && again.fields["cache-status"]?.contains("fwd=stale") == true, "\(again)")
        _ = try await watcher.output(until: #" fetched proxy:/fresh fresh "fresh 2" (server)"#)
    }

    /// `invalidate` of an HTTP key (B9): the response stored is not served again without asking
    /// the origin, however fresh its fields say it is (before, a shell's invalidate of a proxy's
    /// key changed nothing the proxy served).
    @Test func anInvalidatedHTTPKeyIsAskedOfTheOriginBeforeItIsServedAgain() async throws {
        let out = try await Cachesh.run(["-c", """
            ns web http
            server next web:/a latency=10ms status=200 headers={"Cache-Control":"max-age=3600","ETag":"\\"e\\""} value=one
            get web:/a
            invalidate web:/a
            get web:/a headers={"Cache-Control":"only-if-cached"}
            server next web:/a latency=10ms status=200 headers={"Cache-Control":"max-age=3600"} value=two
            get web:/a
            get web:/a
            """])
        #expect(out.status == 0, "\(out)")
        let statuses = out.stdout.split(separator: "\n").filter { $0.hasPrefix("cache_status:") }.map { String($0.dropFirst(14)) }
        #expect(statuses == ["cachesh; fwd=uri-miss; fwd-status=200; stored; ttl=3599", "cachesh; detail=\"only-if-cached\"",
                             "cachesh; fwd=stale; fwd-status=200; stored; ttl=3599", "cachesh; hit; ttl=3599"], "\(out)")
        #expect(out.stdout.contains("keys: web:/a\n"), "\(out)")
    }

    @Test func theProxyListensForShellsOnlyWhenAskedAndOnLoopbackOnly() async throws {
        let bad = try await Cachesh.run(["proxy", "--upstream", "http://127.0.0.1:9", "--inspect", "10.0.0.1:4000"])
        #expect(bad.status == 2, "\(bad)")
        #expect(bad.stderr == "cachesh: proxy: --inspect 10.0.0.1:4000: give a socket PATH (with a /) or 127.0.0.1:PORT (loopback only; port 0 picks a free one)\n", "\(bad)")
        let help = try await Cachesh.run(["proxy", "--help"])
        #expect(help.stdout.contains("[--inspect [PATH|127.0.0.1:PORT]]"), "\(help)")
    }
}
