import Foundation
import Testing

/// A batch keeps no timeline when its script cannot read it (`TimelineUse`); every way a script
/// can still come to run `timeline` or `explain` finds the changes before it: a command a store
/// scheduled, a sourced file, a quoted command name spelled with `\u`, a restored snapshot's
/// scheduled command.
@Suite struct TimelineKeptEndToEndTests {
    private let stored = "* 2026-01-01T00:00:00.000Z stored a fresh 1 (cache)\n"

    @Test func aCommandAStoreScheduledReadsTheChangesBeforeIt() async throws {
        let sandbox = try Sandbox()
        let scheduled = try await Cachesh.run(["--store", "s.db", "-c", "at 1m timeline *"], in: sandbox.url)
        #expect(scheduled.status == 0, "\(scheduled)")
        let run = try await Cachesh.run(["--store", "s.db", "-c", "put a 1; advance 1m"], in: sandbox.url)
        #expect(run.stdout.contains("at 2026-01-01T00:01:00.000Z: timeline *\n  " + stored), "\(run)")
    }

    /// Standard input redirected from a file is looked at as a script is (the helper gives it
    /// as a file): with the word, the timeline is there; without it, nothing printed differs.
    @Test func standardInputFromAFileKeepsTheTimelineWhenItMayReadIt() async throws {
        let run = try await Cachesh.run([], stdin: "put a 1\ntimeline a\n")
        #expect(run.stdout == "keys: a\n" + stored, "\(run)")
        let plain = try await Cachesh.run([], stdin: "put a 1\nget a\n")
        #expect(plain.stdout.hasPrefix("keys: a\nkey:           a\nstate:         fresh\n"), "\(plain)")
    }

    @Test func aSourcedFileReadsTheChangesBeforeIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("more.cachesh", "timeline *\n")
        try sandbox.write("s.cachesh", "put a 1\nsource more.cachesh\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.stdout.hasSuffix(stored), "\(run)")
    }

    @Test func aQuotedCommandNameSpelledWithEscapesReadsTheChangesBeforeIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("s.cachesh", "put a 1\n\"time\\u006cine\" *\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.stdout == "keys: a\n" + stored, "\(run)")
    }

    @Test func aRestoredSnapshotsScheduledCommandReadsTheChangesBeforeIt() async throws {
        let sandbox = try Sandbox()
        let made = try await Cachesh.run(["-c", "at 1m timeline *; snapshot snap.json"], in: sandbox.url)
        #expect(made.status == 0, "\(made)")
        try sandbox.write("s.cachesh", "restore snap.json\nput a 1\nadvance 1m\n")
        let run = try await Cachesh.run(["s.cachesh"], in: sandbox.url)
        #expect(run.stdout.contains("at 2026-01-01T00:01:00.000Z: timeline *\n  " + stored), "\(run)")
    }
}
