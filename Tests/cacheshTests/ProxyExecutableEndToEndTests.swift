import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh proxy` runs `cachesh-proxy`, the executable installed beside `cachesh`, in its own
/// place (docs/SPEC.md §6): the same process, found from `cachesh`'s real path, and one clear line
/// with exit 2 when it is not there.
@Suite struct ProxyExecutableEndToEndTests {
    static let usage = "cachesh proxy [--listen HOST:PORT] --upstream http[s]://HOST[:PORT] [--upstream-ca FILE] [--private] [--config FILE] [--log FILE] [--record FILE] [--upstream-timeout DURATION] [--inspect [PATH|127.0.0.1:PORT]]"

    /// The folder of the built `cachesh`, links resolved.
    static var binaryFolder: String {
        URL(fileURLWithPath: Cachesh.binaryPath).resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    @Test func theProxyIsTheSameProcessCacheshStarted() async throws {
        // --inspect alone listens on /tmp/cachesh-$UID/PID: the process id of the `cachesh` started.
        let sandbox = try Sandbox()
        let recording = sandbox.url.appendingPathComponent("session.transcript").path
        let proxy = try await Child.start(Cachesh.binaryPath, ["proxy", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:9",
                                                               "--log", "/dev/null", "--record", recording, "--inspect"], name: "cachesh proxy")
        defer { proxy.signal(SIGKILL) }
        let banner = try await proxy.output(until: "forwarding to")
        let socket = "/tmp/cachesh-\(getuid())/\(proxy.pid)"
        #expect(banner.hasPrefix("cachesh inspector: listening on \(socket) (cachesh attach \(socket))\ncachesh proxy: listening on "), "\(banner)")
        let attached = try await AttachEndToEndTests.attach([socket, "-c", "stats proxy"])
        #expect(attached.status == 0 && attached.stdout.contains("\nmisses:           0\n"), "\(attached)")
        // SIGTERM to that process reaches the proxy itself: it writes its recording and ends.
        proxy.signal(SIGTERM)
        _ = try await proxy.output(until: "cachesh proxy: wrote \(recording)\n")
        #expect(try await proxy.exitStatus(within: 60) == 0)
        #expect(FileManager.default.fileExists(atPath: recording))
    }

    @Test func aLinkToCacheshFindsTheProxyBesideTheFileItNames() async throws {
        let sandbox = try Sandbox()
        let link = sandbox.url.appendingPathComponent("cachesh").path
        #expect(symlink(Cachesh.binaryPath, link) == 0)
        let help = try await Cachesh.run(["proxy", "--help"], executable: link)
        #expect(help == Outcome(stdout: "usage: \(Self.usage)\n", stderr: "", status: 0), "\(help)")
        let bad = try await Cachesh.run(["proxy", "--upstream", "ftp://example.com"], executable: link)
        #expect(bad == Outcome(stdout: "", stderr: "cachesh: proxy: --upstream ftp://example.com: give http://HOST[:PORT] or https://HOST[:PORT]\n",
                               status: 2), "\(bad)")
    }

    @Test func withoutTheProxyBesideItCacheshSaysSoInOneLineAndExits2() async throws {
        let sandbox = try Sandbox()
        let alone = sandbox.url.appendingPathComponent("cachesh").path
        // A second name of the same file (a copy when the sandbox is on another file system).
        if link(Cachesh.binaryPath, alone) != 0 {
            try FileManager.default.copyItem(atPath: Cachesh.binaryPath, toPath: alone)
        }
        let folder = sandbox.url.resolvingSymlinksInPath().path
        let expected = "cachesh: proxy: cannot run \(folder)/cachesh-proxy: No such file or directory (cachesh proxy runs the cachesh-proxy installed beside cachesh)\n"
        for arguments in [["proxy", "--upstream", "http://127.0.0.1:9"], ["proxy", "--help"]] {
            let outcome = try await Cachesh.run(arguments, executable: alone)
            #expect(outcome == Outcome(stdout: "", stderr: expected, status: 2), "\(outcome)")
        }
        // The rest of cachesh does not need it.
        let other = try await Cachesh.run(["-c", "put a 1; get a"], executable: alone)
        #expect(other.status == 0 && other.stdout.contains("1"), "\(other)")
        // Run directly, the proxy executable is `cachesh proxy`.
        let direct = try await Cachesh.run(["--upstream", "ftp://example.com"], executable: Self.binaryFolder + "/cachesh-proxy")
        #expect(direct == Outcome(stdout: "", stderr: "cachesh: proxy: --upstream ftp://example.com: give http://HOST[:PORT] or https://HOST[:PORT]\n",
                                  status: 2), "\(direct)")
    }
}
