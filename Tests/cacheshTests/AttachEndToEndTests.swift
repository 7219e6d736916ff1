import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh attach` (SPEC §9) against a running app: Tests/InspectedApp, a live Cache with
/// CacheInspector started, driven through its standard input while the built `cachesh` attaches.
/// Waits are for conditions, each with a generous deadline.
@Suite struct AttachEndToEndTests {
    static var appPath: String { Cachesh.packageRoot.appendingPathComponent(".build/debug/inspected-app").path }

    /// A running app and where it listens.
    struct App {
        let child: Child
        let address: String
        let token: String?
        let sandbox: Sandbox

        /// Runs the app's call `line` and waits for the line it prints that starts with `reply`.
        func call(_ line: String, until reply: String) async throws -> String {
            try await child.write(line + "\n")
            return try await child.output(until: reply)
        }

        /// Ends the app (its input ends) and checks it exited cleanly.
        func end() async throws {
            try child.closeInput()
            #expect(try await child.exitStatus(within: 60) == 0, "\(child.describe())")
        }
    }

    static func startApp(tcp: Bool = false, defaultPath: Bool = false, extra: [String] = [],
                         environment: [String: String] = [:]) async throws -> App {
        let sandbox = try Sandbox()
        let path = sandbox.url.appendingPathComponent("app.sock").path
        let endpoint = tcp ? ["tcp"] : defaultPath ? ["default"] : ["unix", path]
        let child = try await Child.start(appPath, endpoint + extra,
                                          environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                          stdin: .pipe)
        let text = try await child.output(until: "go\n")
        var address = "", token: String?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("ready ") { address = String(line.dropFirst(6)) }
            if line.hasPrefix("token ") { token = String(line.dropFirst(6)) }
        }
        try #require(!address.isEmpty, "\(child.describe())")
        return App(child: child, address: address, token: token, sandbox: sandbox)
    }

    static func attach(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) async throws -> Outcome {
        try await Cachesh.run(["attach"] + arguments, stdin: stdin, environment: environment)
    }

    @Test func keysAndReadsOfTheAppAndTheVirtualClockRefused() async throws {
        let app = try await Self.startApp()
        let out = try await Self.attach([app.address, "-c", "keys; peek profile:42; config; advance 1s; at 1s keys; server set a:1 2"])
        #expect(out.status == 1, "\(out)")
        #expect(out.stdout.contains("feed:home   fresh"), "\(out)")
        #expect(out.stdout.contains("profile:42  fresh"), "\(out)")
        #expect(out.stdout.contains(#"value:         {"name":"Ada"}"#), "\(out)")
        #expect(out.stdout.contains("ns feed ttl=1h\nns profile ttl=1h\nid-field: id\n"), "\(out)")
        #expect(!out.stdout.contains("server latency"), "\(out)")
        #expect(out.stderr == """
            error: advance: the app's clock is real time; an attachment cannot move it (advance works on the virtual clock of a session of your own)
            error: at: the app's clock is real time; an attachment cannot move it (at works on the virtual clock of a session of your own)
            error: server: the app fetches from its own origin; an attachment has no simulated server to shape

            """, "\(out)")
        let json = try await Self.attach([app.address, "--json", "-c", "peek profile:42"])
        #expect(json.status == 0 && json.stdout.hasPrefix(#"{"age_ms":"#) && json.stdout.contains(#""value":{"name":"Ada"}"#), "\(json)")
        let script = try app.sandbox.write("look.cachesh", "# a script over an attachment\nkeys profile:*\nbogus\n")
        let scripted = try await Self.attach([app.address, script])
        #expect(scripted.status == 1 && scripted.stdout.contains("profile:42") && !scripted.stdout.contains("feed:home"), "\(scripted)")
        #expect(scripted.stderr.hasPrefix("error: bogus: not available over an attachment; the commands are keys, peek,"), "\(scripted)")
        // Standard input, a command a line, up to quit; help is the shell's own.
        let typed = try await Self.attach([app.address], stdin: "stats profile\nhelp\nquit\nclear\n")
        #expect(typed.status == 0 && typed.stdout.contains("hits") && typed.stdout.contains("advance, at and server ... are refused"), "\(typed)")
        let still = try await Self.attach([app.address, "-c", "keys"])
        #expect(still.stdout.contains("feed:home") && still.stdout.contains("profile:42"), "quit did not stop the input: \(still)")
        try await app.end()
    }

    @Test func aWatchSeesTheChangeWithItsCauseAndAnInvalidateReachesTheApp() async throws {
        let app = try await Self.startApp()
        let watcher = try await Child.start(Cachesh.binaryPath, ["attach", app.address, "-c", "watch feed:*"])
        _ = try await watcher.output(until: "watching: feed:*\n")
        let invalidated = try await Self.attach([app.address, "-c", "invalidate feed:home"])
        #expect(invalidated.status == 0 && invalidated.stdout == "keys: feed:home\n", "\(invalidated)")
        let seen = try await watcher.output(until: " invalidated feed:home stale ")
        #expect(seen.contains(#" invalidated feed:home stale {"items":[1,2]} (cache)"#), "\(watcher.describe())")
        // The app's next read refetches the key it was told is stale; the watch sees why.
        _ = try await app.call("get feed:home", until: "got feed:home")
        let refreshed = try await watcher.output(until: " refreshed feed:home fresh ")
        #expect(refreshed.contains(#" refreshed feed:home fresh {"fetch":1,"title":"feed:home"} (server)"#), "\(watcher.describe())")
        #expect(try await app.call("fetches", until: "fetches ").contains("fetches 1\n"))
        // A change outside the scope watched is not sent: the change in scope made after it
        // arrives, and nothing of it before.
        _ = try await Self.attach([app.address, "-c", "evict profile:42; expire feed:home"])
        let later = try await watcher.output(until: " expired feed:home ")
        #expect(!later.contains("profile:42"), "\(watcher.describe())")
        // The app ending ends the attachment: one line, and the watcher exits.
        try await app.end()
        #expect(try await watcher.exitStatus(within: 60) == 0, "\(watcher.describe())")
        #expect(try await watcher.errors(until: "\n") == "cachesh: attach: the app ended the attachment\n")
    }

    /// A command whose JSON value spans lines, in a script or on standard input, is one command
    /// (as in a cachesh script, by the lexer's rule); a bracket outside a JSON value, a `#`
    /// comment after a value closes or a mismatched bracket ends its line, and the lines after it
    /// still run; a script with CRLF line ends is read a line at a time.
    @Test func aJSONValueSpanningLinesIsOneCommand() async throws {
        let app = try await Self.startApp()
        let script = """
            event patch feed:home {
              "items": [1, 2,
                        3]
            }
            echo step [1 of 3
            peek feed:home
            event patch profile:42 {"name":
              "Ann"} # note [wip
            peek profile:42
            event patch profile:42 {"name":
              ["x", 2}
            stats feed

            """
        let sandbox = try Sandbox()
        let file = try sandbox.write("s.cachesh", script)
        let crlf = try sandbox.write("crlf.cachesh", script.replacingOccurrences(of: "\n", with: "\r\n"))
        for out in [try await Self.attach([app.address, file]), try await Self.attach([app.address], stdin: script),
                    try await Self.attach([app.address, crlf])] {
            #expect(out.stdout.contains(#"value:         {"items":[1,2,3]}"#), "\(out)")
            #expect(out.stdout.contains(#"value:         {"name":"Ann"}"#), "\(out)")
            #expect(out.stdout.contains("hits"), "the command after a mismatched bracket ran: \(out)")
            #expect(out.stderr.contains("echo"), "\(out)")
            #expect(out.status == 1, "\(out)")
        }
        // An open value at the end of the input is sent as it is, and refused.
        let open = try await Self.attach([app.address], stdin: "event patch feed:home {\n  \"items\": [\n")
        #expect(open.status == 1 && !open.stderr.isEmpty, "\(open)")
        try await app.end()
    }

    /// `-c` is split where `cachesh -c` splits it: a bracket left open where no JSON value is
    /// taken is an error of its command alone (the commands after the next `;` run; they were
    /// swallowed), and a `;` inside a JSON value or a quoted string is the value's.
    @Test func commandLineTextIsSplitWhereTheShellSplitsIt() async throws {
        let app = try await Self.startApp()
        let out = try await Self.attach([app.address, "-c",
                                         #"keys [4; event patch profile:42 {"name": "a;b"}; peek profile:42 # a note; stats feed"#])
        #expect(out.stdout.contains(#"value:         {"name":"a;b"}"#), "\(out)")
        #expect(out.stdout.contains("hits"), "\(out)")
        #expect(out.stderr.contains(#"unbalanced "[""#) && out.stderr.split(separator: "\n").count == 1, "\(out)")
        #expect(out.status == 1, "\(out)")
        try await app.end()
    }

    /// Standard input is read a bounded line and a bounded command at a time: a line, or a JSON
    /// value left open over many lines, past 65 MiB ends the shell with one line (read in time
    /// proportional to its bytes: a long line was searched again with each chunk read).
    @Test func aLineOrACommandOfStandardInputPast65MiBEndsTheShell() async throws {
        let app = try await Self.startApp()
        let line = try await Self.attach([app.address], stdin: String(repeating: "x", count: 66 << 20))
        #expect(line.status == 2 && line.stderr == "cachesh: attach: a line of standard input longer than 65 MiB\n", "\(line.status) \(line.stderr)")
        let command = try await Self.attach([app.address], stdin: "event patch feed:home {\"items\": [\n"
                                            + String(repeating: String(repeating: "1,", count: 511) + "\n", count: 67 << 10))
        #expect(command.status == 2 && command.stderr == "cachesh: attach: a command of standard input longer than 65 MiB\n",
                "\(command.status) \(command.stderr)")
        #expect(try await Self.attach([app.address, "-c", "keys"]).stdout.contains("feed:home"))
        try await app.end()
    }

    @Test func readOnlyRefusesEveryWriteAndChangesNothing() async throws {
        let app = try await Self.startApp()
        let out = try await Self.attach([app.address, "--read-only", "-c", "invalidate feed:home; evict feed:home; clear; memory-warning; stats reset; keys"])
        #expect(out.status == 1, "\(out)")
        #expect(out.stderr == """
            error: invalidate: refused: attached with --read-only
            error: evict: refused: attached with --read-only
            error: clear: refused: attached with --read-only
            error: memory-warning: refused: attached with --read-only
            error: stats: refused: attached with --read-only

            """, "\(out)")
        #expect(out.stdout.contains("feed:home   fresh"), "\(out)")
        try await app.end()
    }

    @Test func theDefaultSocketIsTheUsersAloneAndGoesWithTheApp() async throws {
        let app = try await Self.startApp(defaultPath: true)
        let directory = "/tmp/cachesh-\(getuid())"
        #expect(app.address == "\(directory)/\(app.child.pid)")
        var info = stat()
        #expect(lstat(directory, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == getuid())
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(lstat(app.address, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK && info.st_mode & 0o777 == 0o600)
        let out = try await Self.attach([app.address, "-c", "keys profile:*"])
        #expect(out.status == 0 && out.stdout.contains("profile:42"), "\(out)")
        try await app.end()
        #expect(lstat(app.address, &info) != 0, "the socket outlived the app")
    }

    /// The apps on their default socket are found by their process: with no app named, the one
    /// listening; `attach PID` names one; `--list` lists them, not a socket nothing listens on
    /// (one an app left when it crashed, whatever process has its id now) nor one whose name is
    /// no process id as the system writes it; with two, the shell asks for one, naming both. A
    /// directory other users may enter is refused for `attach PID` too. The directory is
    /// `$CACHESH_SOCKET_DIR` here, for the app and the shell alike (the apps of other tests
    /// listen in the default one); a trailing `/` of it is left out, a relative one refused.
    @Test func theAppsOnTheirDefaultSocketAreFoundByTheirProcess() async throws {
        let sandbox = try Sandbox()
        let directory = sandbox.url.appendingPathComponent("sockets").path
        let environment = ["CACHESH_SOCKET_DIR": directory + "/"]
        let none = try await Self.attach(["-c", "keys"], environment: environment)
        #expect(none == Outcome(stdout: "", stderr: "cachesh: attach: no app to attach to: none of yours listens in \(directory) (an app "
                                + "listens once it calls CacheInspector.start); or name its PATH or HOST:PORT (cachesh attach --help)\n", status: 2))
        #expect(try await Self.attach(["--list"], environment: environment)
                == Outcome(stdout: "", stderr: "cachesh: attach: no app of yours listens in \(directory)\n", status: 1))
        let first = try await Self.startApp(defaultPath: true, environment: environment)
        #expect(first.address == "\(directory)/\(first.child.pid)")
        // Sockets nothing listens on: one named by a running process (this one), one by no
        // process id as the system writes it.
        for name in [String(getpid()), "0", "000\(first.child.pid)"] { close(try RawClient.listen("\(directory)/\(name)")) }
        let only = try await Self.attach(["-c", "keys profile:*"], environment: environment)
        #expect(only.status == 0 && only.stdout.contains("profile:42"), "\(only)")
        let second = try await Self.startApp(defaultPath: true, environment: environment)
        let (a, b) = (min(first.child.pid, second.child.pid), max(first.child.pid, second.child.pid))
        let two = try await Self.attach(["-c", "keys"], environment: environment)
        #expect(two == Outcome(stdout: "", stderr: "cachesh: attach: 2 apps listen in \(directory); name one: cachesh attach PID, "
                               + "of \(a) (inspected-app), \(b) (inspected-app)\n", status: 2))
        let named = try await Self.attach([String(second.child.pid), "-c", "keys profile:*"], environment: environment)
        #expect(named.status == 0 && named.stdout.contains("profile:42"), "\(named)")
        let listed = try await Self.attach(["--list"], environment: environment)
        let width = max(String(a).count, String(b).count)
        func row(_ pid: Int32) -> String {
            String(pid) + String(repeating: " ", count: width - String(pid).count) + "  inspected-app  \(directory)/\(pid)\n"
        }
        #expect(listed == Outcome(stdout: row(a) + row(b), stderr: "", status: 0))
        let json = try await Self.attach(["--list", "--json"], environment: environment)
        #expect(json.stdout.split(separator: "\n").first == #"{"name":"inspected-app","pid":\#(a),"socket":"\#(directory)/\#(a)"}"#, "\(json)")
        #expect(try await Self.attach(["--list", "--read-only"], environment: environment)
                == Outcome(stdout: "", stderr: "cachesh: attach: --list lists the apps listening; it takes only --json\n", status: 2))
        #expect(try await Self.attach(["0\(a)", "-c", "keys"], environment: environment).stderr
                == "cachesh: attach: 0\(a): not a process id (a socket file of that name: ./0\(a))\n")
        #expect(try await Self.attach(["-c", "keys"], environment: ["CACHESH_SOCKET_DIR": "sockets"]).stderr
                .hasPrefix("cachesh: attach: no app named, and CACHESH_SOCKET_DIR is sockets: give an absolute path"))
        // A directory other users may enter is not looked in, nor named through.
        #expect(chmod(directory, 0o755) == 0)
        for arguments in [["-c", "keys"], [String(a), "-c", "keys"], ["--list"]] {
            let refused = try await Self.attach(arguments, environment: environment)
            #expect(refused.status == 2 && refused.stderr.contains("\(directory) may be entered by other users (mode 755)"), "\(refused)")
        }
        #expect(chmod(directory, 0o700) == 0)
        try await first.end()
        try await second.end()
    }

    /// An app that takes no connection (stopped in a debugger) is listed, and the listing does
    /// not wait for it however often it looks: its queue of connections fills, and a full one
    /// answers at once. The app is a process of its own (a listener in this test process could
    /// be closed under it by a descriptor another test closes twice). It listens until its stdin
    /// ends (this test ends, or its process does), not for a set time: on a machine busy enough,
    /// the listings below wait their turn for a child slot for many minutes, and a listener that
    /// slept ten minutes had gone by then.
    @Test func anAppThatTakesNoConnectionIsListedWithoutWaitingForIt() async throws {
        let sandbox = try Sandbox()
        let directory = sandbox.url.appendingPathComponent("sockets").path
        #expect(mkdir(directory, 0o700) == 0)
        let script = try sandbox.write("stopped.py", """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.join(sys.argv[1], str(os.getpid())))
            s.listen(1)
            print(os.getpid(), flush=True)
            sys.stdin.read()

            """)
        let stopped = try await Child.start("/usr/bin/env", ["python3", script, directory], name: "stopped app", stdin: .pipe)
        defer { stopped.signal(SIGKILL) }
        let pid = try #require(Int32(try await stopped.output(until: "\n").split(separator: "\n")[0]))
        let name = try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8).split(separator: "\n")[0]
        for _ in 0..<4 {
            let listed = try await Self.attach(["--list"], environment: ["CACHESH_SOCKET_DIR": directory])
            #expect(listed == Outcome(stdout: "\(pid)  \(name)  \(directory)/\(pid)\n", stderr: "", status: 0))
        }
    }

    @Test func aSocketThatIsNotThereIsOneLineAndExitTwo() async throws {
        let sandbox = try Sandbox()
        let missing = sandbox.url.appendingPathComponent("nope.sock").path
        let out = try await Self.attach([missing, "-c", "keys"])
        #expect(out.status == 2 && out.stdout.isEmpty, "\(out)")
        #expect(out.stderr == "cachesh: attach: \(missing): no such socket (is the app running, with CacheInspector started?)\n")
        let file = try sandbox.write("plain", "x")
        let notSocket = try await Self.attach([file, "-c", "keys"])
        #expect(notSocket.status == 2 && notSocket.stderr == "cachesh: attach: \(file): not a socket\n", "\(notSocket)")
        let onTheCommandLine = try await Self.attach(["127.0.0.1:1", "--token=abc"])
        #expect(onTheCommandLine.status == 2 && onTheCommandLine.stderr.contains("not taken on the command line"), "\(onTheCommandLine)")
    }

    @Test func tcpWithoutTheTokenOrAWrongOneIsRefused() async throws {
        let app = try await Self.startApp(tcp: true)
        #expect(app.address.hasPrefix("127.0.0.1:"))
        let refusal = "cachesh: attach: refused: no token or a wrong one (a TCP attachment needs the token the app printed, in CACHESH_TOKEN or --token-file FILE)\n"
        let without = try await Self.attach([app.address, "-c", "keys"])
        #expect(without.status == 2 && without.stdout.isEmpty && without.stderr == refusal, "\(without)")
        let wrong = try await Self.attach([app.address, "-c", "keys"], environment: ["CACHESH_TOKEN": String(repeating: "0", count: 64)])
        #expect(wrong.status == 2 && wrong.stderr == refusal, "\(wrong)")
        let tokenFile = try app.sandbox.write("token", (app.token ?? "") + "\n", permissions: 0o600)
        let right = try await Self.attach([app.address, "--token-file", tokenFile, "-c", "keys"])
        #expect(right.status == 0 && right.stdout.contains("feed:home"), "\(right)")
        let fromEnvironment = try await Self.attach([app.address, "-c", "keys profile:*"], environment: ["CACHESH_TOKEN": app.token ?? ""])
        #expect(fromEnvironment.status == 0 && fromEnvironment.stdout.contains("profile:42"), "\(fromEnvironment)")
        try await app.end()
    }

    @Test func aWrongVersionIsOneLineNamingBoth() async throws {
        let app = try await Self.startApp()
        let lines = try await RawClient.exchange(app.address, [#"{"id":0,"op":"hello","protocol":2}"#], expecting: 1)
        #expect(lines == [#"{"error":"attach: the app speaks protocol version 1, the shell version 2","id":0,"ok":false,"protocol":1}"#])
        // A newer app, as this cachesh sees it: a listener that answers with version 2.
        let sandbox = try Sandbox()
        let path = sandbox.url.appendingPathComponent("newer.sock").path
        let listener = try RawClient.listen(path)
        let answered = Task { await OwnThread.run { RawClient.answerOnce(listener, #"{"id":0,"ok":false,"protocol":2}"#) } }
        let out = try await Self.attach([path, "-c", "keys"])
        _ = await answered.value
        #expect(out.status == 2 && out.stderr == "cachesh: attach: \(path): the app speaks protocol version 2, this cachesh version 1\n", "\(out)")
        try await app.end()
    }

    @Test func hostileInputIsAnsweredOrDroppedAndTheAppIsUnharmed() async throws {
        let app = try await Self.startApp(extra: ["queue=65536"])
        // Bad JSON and a request without an id: an error each; the connection stays.
        let bad = try await RawClient.exchange(app.address, [
            #"{"id":0,"op":"hello","protocol":1}"#, "{not json", #"{"op":"run"}"#, #"{"id":1,"op":"run","command":"keys\nadvance 1s"}"#,
        ], expecting: 4)
        #expect(bad.count == 4)
        #expect(bad.dropFirst().first?.hasPrefix(#"{"error":"attach: a request that is not JSON ("#) == true, "\(bad)")
        #expect(bad.dropFirst(2).first == #"{"error":"attach: a request needs an id (a number, or a string of at most 64 bytes)","id":null,"ok":false}"#)
        #expect(bad.last == #"{"error":"attach: one command per request (this one holds a line break)","id":1,"ok":false}"#)
        // A line past 1 MiB: one error, and the connection is closed.
        let huge = try await RawClient.exchange(app.address, [#"{"id":0,"op":"hello","protocol":1}"#, String(repeating: "x", count: 2 << 20)],
                                                expecting: 3)
        #expect(huge.count == 2 && huge.last == #"{"error":"attach: a request line longer than 1 MiB (the most the app reads); the connection is closed","id":null,"ok":false}"#, "\(huge)")
        // A flood from a client that never reads: it is dropped once 64 KiB wait for it.
        let flood = (0..<4000).map { #"{"id":\#($0 + 1),"op":"run","command":"keys"}"# }
        let dropped = try await RawClient.flood(app.address, hello: #"{"id":0,"op":"hello","protocol":1}"#, flood)
        #expect(dropped, "the flooding client was not dropped")
        // The app still runs and answers.
        #expect(try await app.call("fetches", until: "fetches ").contains("fetches 0\n"))
        let after = try await Self.attach([app.address, "-c", "keys"])
        #expect(after.status == 0 && after.stdout.contains("feed:home"), "\(after)")
        try await app.end()
    }

    /// Eight shells at once, counted from their `hello`: a ninth is told so (and the shell prints
    /// it), while a connection yet to say hello (`attach --list` looking) takes no shell's
    /// place; sixteen connections open at most.
    @Test func anAppTakesEightShellsAndEachWatchesAtMost64Scopes() async throws {
        let app = try await Self.startApp()
        let firsts = try await RawClient.holdMany(app.address, count: 9, hello: #"{"id":0,"op":"hello","protocol":1}"#)
        #expect(firsts.prefix(8).allSatisfy { $0 == #"{"id":0,"ok":true,"protocol":1}"# }, "\(firsts)")
        #expect(firsts.last == #"{"error":"attach: the app has 8 shells attached, the most it takes","id":0,"ok":false,"protocol":1}"#)
        try await app.end()
        // Eight shells held (on an app of their own: the nine above leave it only once it has read
        // their end): the shell run now prints the app's refusal.
        // (Silent connections are kept for an hour here: on a busy machine the 10 s a connection
        // may stay without a hello can pass before the last check.)
        let full = try await Self.startApp(extra: ["hello=3600000"])
        var shells: [Int32] = []
        for _ in 0..<8 {
            let (fd, first) = await RawClient.open(full.address, hello: #"{"id":0,"op":"hello","protocol":1}"#)
            #expect(first == #"{"id":0,"ok":true,"protocol":1}"#)
            shells.append(fd)
        }
        #expect(try await Self.attach([full.address, "-c", "stats"])
                == Outcome(stdout: "", stderr: "cachesh: attach: the app has 8 shells attached, the most it takes\n", status: 2))
        // Eight more that say nothing are taken; a seventeenth connection is not.
        var silent: [Int32] = []
        for _ in 0..<8 { silent.append(RawClient.connect(full.address)) }
        let (extra, refusal) = await RawClient.open(full.address, hello: nil)
        #expect(refusal == #"{"error":"attach: the app has 16 connections open, the most it takes","id":null,"ok":false,"protocol":1}"#)
        #expect(try await Self.attach([full.address, "-c", "stats"])
                == Outcome(stdout: "", stderr: "cachesh: attach: the app has 16 connections open, the most it takes\n", status: 2))
        for fd in shells + silent + [extra] { close(fd) }
        try await full.end()
        let fresh = try await Self.startApp()
        let watches = (1...65).map { "watch a:\($0)" }.joined(separator: "; ") + "; unwatch"
        let out = try await Self.attach([fresh.address, "-c", watches])
        #expect(out.status == 1 && out.stderr == "error: watch: 64 scopes watched, the most one attachment watches\n", "\(out)")
        #expect(out.stdout.hasSuffix("watching: (nothing)\n"), "\(out)")
        try await fresh.end()
    }

    /// A connection that does not say hello within 10 s is told so and closed, so connections
    /// that say nothing hold none of the app's places, nor does one whose first line is no
    /// request; a shell that said hello stays past that time. (The test takes the 10 s: a
    /// shorter time could pass, on a busy machine, before the app reads the shell's hello.)
    @Test func aConnectionWithoutAHelloInTimeIsClosed() async throws {
        let app = try await Self.startApp()
        let (shell, greeting) = await RawClient.open(app.address, hello: #"{"id":0,"op":"hello","protocol":1}"#)
        #expect(greeting == #"{"id":0,"ok":true,"protocol":1}"#)
        let (silent, told) = await RawClient.open(app.address, hello: nil)
        #expect(told == #"{"error":"attach: no hello within 10 s of connecting; the connection is closed","id":null,"ok":false,"protocol":1}"#)
        let ended = await OwnThread.run { () -> Int in
            var byte: UInt8 = 0
            return read(silent, &byte, 1)
        }
        #expect(ended == 0, "the connection closed after its line")
        // Before a hello, a line that is no request ends the connection after its error (a flood
        // of them, never read, would fill the socket and hold it past the deadline).
        let (bad, error) = await RawClient.open(app.address, hello: "x")
        #expect(error.hasPrefix(#"{"error":"attach: a request that is not JSON ("#), "\(error)")
        let badEnded = await OwnThread.run { () -> Int in
            var byte: UInt8 = 0
            return read(bad, &byte, 1)
        }
        #expect(badEnded == 0, "the connection closed after its error")
        close(bad)
        // The shell, connected before it, is still attached.
        let answers = await OwnThread.run { () -> String in
            _ = RawClient.sendAll(shell, #"{"id":1,"op":"run","command":"now"}"# + "\n")
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(shell, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
        #expect(answers.hasPrefix(#"{"id":1,"ok":true,"output":"now:"#), "\(answers)")
        close(shell)
        close(silent)
        try await app.end()
    }

    @Test func aLinePastTheShellsBoundFromTheAppDetaches() async throws {
        let sandbox = try Sandbox()
        let path = sandbox.url.appendingPathComponent("huge.sock").path
        let listener = try RawClient.listen(path)
        let answered = Task {
            await OwnThread.run {
                RawClient.answerOnce(listener, #"{"id":0,"ok":true,"protocol":1}"# + "\n" + String(repeating: "x", count: 66 << 20))
            }
        }
        let out = try await Self.attach([path, "-c", "keys"])
        _ = await answered.value
        #expect(out.status == 2 && out.stderr == "cachesh: attach: the app sent a line longer than 65 MiB, the most the shell reads; detached\n", "\(out)")
    }

    @Test func aWatcherThatNeverReadsIsDroppedAndTheAppGoesOn() async throws {
        let app = try await Self.startApp(extra: ["queue=65536"])
        let watcher = try await RawClient.watchWithoutReading(app.address)
        #expect(watcher.greeting.count == 2, "\(watcher.greeting)")
        // 3,000 changes, each a line of about 300 bytes for the watcher: far past 64 KiB and
        // what the socket holds. The app answers every one while the watcher reads nothing.
        let patches = (0..<3000).map { #"{"id":\#($0 + 1),"op":"run","command":"event patch feed:home {\"n\":\#($0)}"}"# }
        let answers = try await RawClient.exchange(app.address, [#"{"id":0,"op":"hello","protocol":1}"#] + patches, expecting: 3001,
                                                  batch: 100)
        #expect(answers.count == 3001 && answers.last == #"{"id":3000,"ok":true,"output":"keys: feed:home\n"}"#)
        let (lines, ended) = await RawClient.drain(watcher.fd)
        #expect(ended && lines < 3000, "the watcher got \(lines) lines; ended: \(ended)")
        #expect(try await app.call("fetches", until: "fetches ").contains("fetches 0\n"))
        try await app.end()
    }

    /// The protocol's example in SPEC §9, sent line by line: the app answers exactly as written.
    /// Tab over an attachment (`complete`) offers the app's keys and namespaces, and of the
    /// commands only those that run there: with `read_only`, none that writes. A key the app
    /// stores after the first Tab is offered at the next.
    @Test func tabOffersTheAppsKeysAndOnlyTheCommandsThatRunThere() async throws {
        let app = try await Self.startApp()
        func complete(_ texts: [String], readOnly: Bool) async throws -> [String] {
            let hello = #"{"id":0,"op":"hello","protocol":1"# + (readOnly ? #","read_only":true}"# : "}")
            let requests = try texts.enumerated().map { i, text in
                String(decoding: try JSONSerialization.data(withJSONObject: ["id": i + 1, "op": "complete", "text": text]), as: UTF8.self)
            }
            let got = try await RawClient.exchange(app.address, [hello] + requests, expecting: texts.count + 1)
            return got.dropFirst().map { line in
                let answer = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                guard let listed = answer?["candidates"] as? [String] else { return line }
                return listed.joined(separator: " ")
            }
        }
        let texts = ["s", "e", "inv", "peek feed:", "evict profile:4", "keys --", "# a note", "peek {\"a\": ", "help s"]
        #expect(try await complete(texts, readOnly: false)
                == ["snapshot stats", "event evict expire explain", "invalidate", "feed:home", "profile:42", "", "", "", ""])
        #expect(try await complete(texts, readOnly: true)
                == ["snapshot stats", "explain", "", "feed:home", "profile:42", "", "", "", ""])
        _ = try await app.call("get feed:new", until: "got feed:new")
        #expect(try await complete(["peek feed:"], readOnly: true) == ["feed:home feed:new"])
        try await app.end()
    }

    @Test func theProtocolExampleInTheSpecHolds() async throws {
        let spec = try String(contentsOf: Cachesh.packageRoot.appendingPathComponent("docs/SPEC.md"), encoding: .utf8)
        let marker = "<!-- attach-protocol-example -->"
        let start = try #require(spec.range(of: marker))
        let block = spec[start.upperBound...].split(separator: "```", maxSplits: 2)[1]
        let sent = block.split(separator: "\n").filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) }
        let expected = block.split(separator: "\n").filter { $0.hasPrefix("< ") }.map { String($0.dropFirst(2)) }
        #expect(sent.count >= 4 && expected.count == sent.count)
        let app = try await Self.startApp()
        let got = try await RawClient.exchange(app.address, sent, expecting: expected.count)
        #expect(got == expected)
        try await app.end()
    }
}

/// A client (and a listener) speaking the protocol by hand, blocking on threads of their own.
enum RawClient {
    #if canImport(Glibc)
    static let streamSocket = Int32(SOCK_STREAM.rawValue)
    static let noSignal = Int32(MSG_NOSIGNAL)
    static let systemConnect = Glibc.connect
    static let systemListen = Glibc.listen
    #else
    static let streamSocket = SOCK_STREAM
    static let noSignal: Int32 = 0
    static let systemConnect = Darwin.connect
    static let systemListen = Darwin.listen
    #endif

    static func connect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, streamSocket, 0)
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if ok != 0 { close(fd); return -1 }
        // Reads give up after 60 s: a test never hangs on a silent app.
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func sendAll(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignal) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            bytes = bytes.dropFirst(n)
        }
        return true
    }

    /// Sends each line, then reads up to `expecting` lines (fewer when the app closes first);
    /// with `batch`, sends that many lines at a time and reads their answers before the next
    /// (a client that reads, as a shell does).
    static func exchange(_ path: String, _ lines: [String], expecting: Int, batch: Int = .max) async throws -> [String] {
        await OwnThread.run {
            let fd = connect(path)
            guard fd >= 0 else { return ["cannot connect"] }
            defer { close(fd) }
            var got: [String] = []
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            var sent = 0
            while sent < lines.count {
                let upTo = min(lines.count, sent + min(batch, lines.count))
                for line in lines[sent..<upTo] { _ = sendAll(fd, line + "\n") }
                sent = upTo
                if sent < lines.count { readLines(until: sent, into: &got, buffer: &buffer, chunk: &chunk, fd: fd) }
            }
            readLines(until: expecting, into: &got, buffer: &buffer, chunk: &chunk, fd: fd)
            return got
        }
    }

    /// Reads lines into `got` until it holds `count` (or the connection ends).
    private static func readLines(until count: Int, into got: inout [String], buffer: inout [UInt8], chunk: inout [UInt8], fd: Int32) {
        while got.count < count {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                got.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
                continue
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            buffer += chunk[..<n]
        }
    }

    /// Sends `requests` without reading any answer, then reads until the app closes the
    /// connection. - Returns: whether it was closed (dropped) before every answer came.
    static func flood(_ path: String, hello: String, _ requests: [String]) async throws -> Bool {
        await OwnThread.run {
            let fd = connect(path)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var small: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            _ = sendAll(fd, hello + "\n")
            for request in requests where sendAll(fd, request + "\n") {}
            var newlines = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                newlines += chunk[..<n].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            }
            return newlines < requests.count + 1
        }
    }

    /// Opens `count` connections at once, sends `hello` on each and reads each one's first line.
    static func holdMany(_ path: String, count: Int, hello: String) async throws -> [String] {
        await OwnThread.run {
            var descriptors: [Int32] = []
            defer { descriptors.forEach { close($0) } }
            var firsts: [String] = []
            for _ in 0..<count {
                let fd = connect(path)
                guard fd >= 0 else { return firsts + ["cannot connect"] }
                descriptors.append(fd)
                _ = sendAll(fd, hello + "\n")
                var line: [UInt8] = []
                var byte: UInt8 = 0
                while read(fd, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { line.append(byte) }
                firsts.append(String(decoding: line, as: UTF8.self))
            }
            return firsts
        }
    }

    /// Connects, says `hello` (unless nil) and reads the first line the app sends; the
    /// connection is left open.
    static func open(_ path: String, hello: String?) async -> (fd: Int32, first: String) {
        await OwnThread.run {
            let fd = connect(path)
            guard fd >= 0 else { return (fd, "cannot connect") }
            if let hello { _ = sendAll(fd, hello + "\n") }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { line.append(byte) }
            return (fd, String(decoding: line, as: UTF8.self))
        }
    }

    /// Connects, says hello and watches everything, reading only those two answers.
    static func watchWithoutReading(_ path: String) async throws -> (fd: Int32, greeting: [String]) {
        await OwnThread.run {
            let fd = connect(path)
            guard fd >= 0 else { return (fd, []) }
            var small: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            _ = sendAll(fd, #"{"id":0,"op":"hello","protocol":1}"# + "\n" + #"{"id":1,"op":"run","command":"watch *"}"# + "\n")
            var greeting: [String] = []
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while greeting.count < 2 && read(fd, &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") {
                    greeting.append(String(decoding: line, as: UTF8.self))
                    line.removeAll()
                } else {
                    line.append(byte)
                }
            }
            return (fd, greeting)
        }
    }

    /// Reads `fd` to its end and closes it. - Returns: the lines read, and whether the app ended
    /// the connection (not the 60 s a read waits).
    static func drain(_ fd: Int32) async -> (lines: Int, ended: Bool) {
        await OwnThread.run {
            defer { close(fd) }
            var lines = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n == 0 { return (lines, true) }
                if n < 0 { return (lines, errno == ECONNRESET) }
                lines += chunk[..<n].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            }
        }
    }

    static func listen(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, streamSocket, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, systemListen(fd, 1) == 0 else { throw HarnessError(description: "cannot listen on \(path)") }
        return fd
    }

    /// Accepts one connection, reads its first line and answers `line`.
    static func answerOnce(_ listener: Int32, _ line: String) {
        defer { close(listener) }
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 && byte != UInt8(ascii: "\n") {}
        _ = sendAll(fd, line + "\n")
    }
}
