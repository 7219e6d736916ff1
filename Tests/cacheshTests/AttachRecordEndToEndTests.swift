import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `timeline` and `record FILE` over an attachment (SPEC §9): the changes since the shell
/// attached, and the app's session from a point on as a transcript that `--verify` replays on the
/// virtual clock. The app is Tests/InspectedApp; waits are for conditions, with generous deadlines.
@Suite struct AttachRecordEndToEndTests {
    typealias App = AttachEndToEndTests.App

    @Test func theTimelineHoldsTheChangesSinceTheShellAttached() async throws {
        let app = try await AttachEndToEndTests.startApp()
        let shell = try await Child.start(Cachesh.binaryPath, ["attach", app.address], stdin: .pipe)
        try await shell.write("timeline feed:home\n")
        _ = try await shell.output(until: "(no changes to feed:home since this shell attached)\n")
        let other = try await AttachEndToEndTests.attach([app.address, "-c", "invalidate feed:home"])
        #expect(other.status == 0, "\(other)")
        _ = try await app.call("get feed:home", until: "got feed:home")
        // The app's read served the invalidated value and revalidates in the background: ask
        // again until the refresh has landed (a live app: real time, with a generous deadline).
        var seen = ""
        let deadline = ContinuousClock.now + .seconds(60)
        repeat {
            if !seen.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            try await shell.write("timeline feed:*\nexplain feed:home\n")
            seen = try await shell.output(until: "\nreason:")
        } while !seen.contains(" refreshed feed:home ") && ContinuousClock.now < deadline
        #expect(seen.contains(#" invalidated feed:home stale {"items":[1,2]} (cache)"#), "\(shell.describe())")
        #expect(seen.contains(#" refreshed feed:home fresh {"fetch":1,"title":"feed:home"} (server)"#), "\(shell.describe())")
        // A shell that attaches later sees none of it; JSON says how many were dropped (none).
        let later = try await AttachEndToEndTests.attach([app.address, "-c", "timeline *"])
        #expect(later.status == 0 && later.stdout == "(no changes to * since this shell attached)\n", "\(later)")
        let json = try await AttachEndToEndTests.attach([app.address, "--json", "-c", "timeline feed:home"])
        #expect(json.stdout.contains(#""dropped":0"#) && json.stdout.contains(#""events":[]"#), "\(json)")
        try shell.closeInput()
        #expect(try await shell.exitStatus(within: 60) == 0, "\(shell.describe())")
        try await app.end()
    }

    @Test func aRecordingOverAnAttachmentIsATranscriptThatVerifies() async throws {
        let app = try await AttachEndToEndTests.startApp()
        let file = app.sandbox.url.appendingPathComponent("app.transcript").path
        let shell = try await Child.start(Cachesh.binaryPath, ["attach", app.address], stdin: .pipe)
        try await shell.write("record \(file)\n")
        _ = try await shell.output(until: "recording the app to \(file) from here on\n")
        // What the app does meanwhile: a read its origin answers, a key another shell
        // invalidates, the app's read of it that refetches.
        _ = try await app.call("get feed:new", until: "got feed:new")
        let other = try await AttachEndToEndTests.attach([app.address, "-c", "invalidate profile:42"])
        #expect(other.status == 0, "\(other)")
        _ = try await app.call("get profile:42", until: "got profile:42")
        // One recording at a time: a second shell's is refused.
        let second = try await AttachEndToEndTests.attach([app.address, "-c", "record \(file).2"])
        #expect(second.status == 1 && second.stderr.contains("error: record: the app's cache is recording already"), "\(second)")
        try await shell.write("record stop\n")
        _ = try await shell.output(until: " of the app to \(file)\n")
        try shell.closeInput()
        #expect(try await shell.exitStatus(within: 60) == 0, "\(shell.describe())")
        let transcript = try String(contentsOfFile: file, encoding: .utf8)
        #expect(transcript.contains("get feed:new --async"), "\(transcript)")
        #expect(transcript.contains("invalidate profile:42"), "\(transcript)")
        #expect(transcript.contains("get profile:42 --async"), "\(transcript)")
        let verified = try await Cachesh.run(["--verify", "--safe", file])
        #expect(verified.status == 0, "\(verified)\n\(transcript)")
        try await app.end()
    }

    /// A recording's lines count against what may wait for the shell (SPEC §7.1, the bound
    /// lowered to 64 KiB): a `begin` snapshot past it drops the shell, nothing is written, and
    /// the app stops the recording (another shell may record).
    @Test func aRecordingPastWhatMayWaitForTheShellDropsItAndStops() async throws {
        let app = try await AttachEndToEndTests.startApp(extra: ["queue=65536"])
        _ = try await app.call("big 200000", until: "big\n")
        let file = app.sandbox.url.appendingPathComponent("big.transcript").path
        let dropped = try await AttachEndToEndTests.attach([app.address, "-c", "record \(file)"])
        #expect(dropped.status == 1, "\(dropped)")
        #expect(dropped.stderr == "cachesh: attach: record: the app ended the attachment before the recording's end; \(file) not written\n", "\(dropped)")
        #expect(!FileManager.default.fileExists(atPath: file))
        // The app goes on, recording nothing: a small cache's recording is taken again.
        _ = try await app.call("big 10", until: "big\n")
        let again = try await AttachEndToEndTests.attach([app.address, "-c", "record \(file)"])
        #expect(again.status == 0 && FileManager.default.fileExists(atPath: file), "\(again)")
        try await app.end()
    }

    /// A streamed change is one line, `{"event": {...}, "output": "* ..."}`, as compact text
    /// (made on the inspector's writer thread by joining its two lines).
    @Test func aStreamedChangeIsTheCompactTextOfItsObject() async throws {
        let app = try await AttachEndToEndTests.startApp()
        let got = try await RawClient.exchange(app.address, [#"{"id":0,"op":"hello","protocol":1}"#,
                                                             #"{"id":1,"op":"run","command":"watch feed:*"}"#,
                                                             #"{"id":2,"op":"run","command":"invalidate feed:home"}"#], expecting: 4)
        #expect(got.count == 4, "\(got)")
        let event = try #require(got.first { $0.hasPrefix(#"{"event":"#) }, "\(got)")
        let parsed = try JSONSerialization.jsonObject(with: Data(event.utf8)) as? [String: Any]
        let output = try #require(parsed?["output"] as? String)
        #expect(output.contains(#" invalidated feed:home stale {"items":[1,2]} (cache)"#), "\(event)")
        #expect((parsed?["event"] as? [String: Any])?["event"] as? String == "invalidated", "\(event)")
        #expect(event.hasPrefix(#"{"event":{"#) && event.contains(#"},"output":"* "#) && event.hasSuffix(#" (cache)"}"#), "\(event)")
        try await app.end()
    }

    /// The recording's example in SPEC §9, sent line by line: the app answers as written, `...`
    /// standing for what differs from run to run.
    @Test func theRecordingExampleInTheSpecHolds() async throws {
        let spec = try String(contentsOf: Cachesh.packageRoot.appendingPathComponent("docs/SPEC.md"), encoding: .utf8)
        let start = try #require(spec.range(of: "<!-- attach-protocol-record-example -->"))
        let block = spec[start.upperBound...].split(separator: "```", maxSplits: 2)[1]
        let sent = block.split(separator: "\n").filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) }
        let expected = block.split(separator: "\n").filter { $0.hasPrefix("< ") }.map { String($0.dropFirst(2)) }
        #expect(sent.count == 3 && expected.count == 6)
        let app = try await AttachEndToEndTests.startApp()
        // Read up to the answer to the last request; the clock's steps while it recorded are left out.
        let lastID = #""id":\#(sent.count - 1),"#
        let address = app.address
        let all = await OwnThread.run { () -> [String] in
            let fd = RawClient.connect(address)
            guard fd >= 0 else { return ["cannot connect"] }
            defer { close(fd) }
            for line in sent { _ = RawClient.sendAll(fd, line + "\n") }
            var lines: [String] = [], buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while !(lines.last?.contains(lastID) ?? false) {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                    buffer.removeSubrange(...newline)
                    continue
                }
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                buffer += chunk[..<n]
            }
            return lines
        }
        let got = all.filter { !$0.contains(#"\"record\":\"step\""#) }
        #expect(got.count == expected.count, "\(all)")
        for (line, pattern) in zip(got, expected) {
            let parts = pattern.components(separatedBy: "...")
            var rest = Substring(line)
            var matches = rest.hasPrefix(parts[0]) && line.hasSuffix(parts.last!)
            for part in parts where matches {
                guard let found = rest.range(of: part) else { matches = false; break }
                rest = rest[found.upperBound...]
            }
            #expect(matches, "\(line) is not \(pattern)")
        }
        try await app.end()
    }

    @Test func anInterruptStopsTheRecordingAndWritesIt() async throws {
        let app = try await AttachEndToEndTests.startApp()
        let file = app.sandbox.url.appendingPathComponent("interrupted.transcript").path
        let shell = try await Child.start(Cachesh.binaryPath, ["attach", app.address, "-c", "record \(file); watch feed:*"])
        _ = try await shell.output(until: "watching: feed:*\n")
        _ = try await app.call("get feed:other", until: "got feed:other")
        _ = try await shell.output(until: " feed:other ")
        shell.signal(SIGINT)
        #expect(try await shell.exitStatus(within: 60) == 0, "\(shell.describe())")
        #expect(try await shell.output(until: " of the app to \(file)\n").contains("recorded "), "\(shell.describe())")
        let verified = try await Cachesh.run(["--verify", "--safe", file])
        #expect(verified.status == 0, "\(verified)")
        try await app.end()
    }

    @Test func aRecordingTheAppOrTheShellCannotFinishSaysSo() async throws {
        let app = try await AttachEndToEndTests.startApp()
        // The app records itself: the shell's recording is refused, and nothing is written.
        _ = try await app.call("record", until: "recording\n")
        let file = app.sandbox.url.appendingPathComponent("never.transcript").path
        let refused = try await AttachEndToEndTests.attach([app.address, "-c", "record \(file)"])
        #expect(refused.status == 1 && refused.stderr == "error: record: the app's cache is recording already (its own Cache.startRecording, or another shell's record); one recording at a time\n", "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: file))
        _ = try await app.call("stop", until: "stopped ")
        // Bad forms, checked in the shell.
        let bad = try await AttachEndToEndTests.attach([app.address, "-c", "record stop; record --from-start x; record a b; record /nonexistent-dir/x.transcript"])
        #expect(bad.status == 1, "\(bad)")
        #expect(bad.stderr.hasPrefix("""
            error: record stop: not recording (record FILE starts)
            error: record --from-start: an attachment has no history of the app from before it attached; record FILE records from here on
            error: record: expected record FILE or record stop
            error: record: cannot write /nonexistent-dir/x.transcript: 
            """), "\(bad)")
        // A shell that records and goes stops its recording: another may record.
        let gone = try await Child.start(Cachesh.binaryPath, ["attach", app.address, "-c", "record \(file); watch *"])
        _ = try await gone.output(until: "watching: *\n")
        gone.signal(SIGKILL)
        _ = try await gone.exitStatus(within: 60)
        #expect(!FileManager.default.fileExists(atPath: file))
        let next = try await AttachEndToEndTests.attach([app.address, "-c", "record \(file)"])
        #expect(next.status == 0 && next.stdout.hasSuffix(" of the app to \(file)\n"), "\(next)")
        // The app ends while a shell records: nothing is written, one line, exit 1.
        try FileManager.default.removeItem(atPath: file)
        let shell = try await Child.start(Cachesh.binaryPath, ["attach", app.address, "-c", "record \(file); watch *"])
        _ = try await shell.output(until: "watching: *\n")
        try await app.end()
        #expect(try await shell.exitStatus(within: 60) == 1, "\(shell.describe())")
        #expect(try await shell.errors(until: "\n") == "cachesh: attach: record: the app ended the attachment before the recording's end; \(file) not written\n")
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}
