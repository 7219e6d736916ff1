import CacheCore
import CacheShell
import Foundation
import Testing
import TestSupport

/// `restore` refuses a snapshot whose fields are each well-formed but contradict each other (what
/// the engine relies on once it runs from the state), naming the JSON path, and changes nothing.
@Suite struct RestoreConsistencyTests {
    /// A session holding every part of the state (entries, mutations pending, requests in flight).
    static func busySession() async -> TestShell {
        let session = await TestShell()
        _ = await session.scriptText(SourceFile(name: "s.cachesh", text: Fixtures.everyPartOfTheState))
        return session
    }

    /// The snapshot of `session` with `change` applied to its JSON document.
    static func edited(_ session: TestShell, _ change: (inout [String: JSONValue]) throws -> Void) async throws -> String {
        guard case .object(var document) = try JSONValue(parsing: await session.snapshotText()) else { throw Diagnostic("not an object") }
        try change(&document)
        return JSONValue.object(document).compactText
    }

    /// The index of the entry of `key` in the document's entries.
    static func index(_ d: [String: JSONValue], _ key: String) throws -> Int {
        guard case .array(let list)? = d["entries"],
              let i = list.firstIndex(where: { if case .object(let e) = $0 { return e["key"] == .string(key) } else { return false } })
        else { throw Diagnostic("no entry \(key)") }
        return i
    }

    /// Applies `change` to the fields of the entry of `key`.
    static func entry(_ d: inout [String: JSONValue], _ key: String, _ change: (inout [String: JSONValue]) -> Void) throws {
        let i = try index(d, key)
        guard case .array(var list)? = d["entries"], case .object(var e) = list[i] else { return }
        change(&e)
        list[i] = .object(e)
        d["entries"] = .array(list)
    }

    /// Applies `change` to the object at `d[name]`.
    static func object(_ d: inout [String: JSONValue], _ name: String, _ change: (inout [String: JSONValue]) -> Void) {
        guard case .object(var o)? = d[name] else { return }
        change(&o)
        d[name] = .object(o)
    }

    static func withoutRequests(_ p: inout [String: JSONValue], keeping kind: (String) -> Bool) {
        guard case .array(let list)? = p["requests"] else { return }
        p["requests"] = .array(list.filter { if case .object(let r) = $0, case .string(let k)? = r["kind"] { return kind(k) } else { return true } })
    }

    static func busyIndex(_ session: TestShell, _ key: String) async throws -> Int {
        guard case .object(let d) = try JSONValue(parsing: await session.snapshotText()) else { return -1 }
        return try index(d, key)
    }

    /// Restores `document` inline: the one error line, and the state after (unchanged).
    func refusal(_ session: TestShell, _ document: String) async -> (error: String, unchanged: Bool) {
        let before = await session.snapshotText()
        let printed = await session.typed("restore " + document)
        return (printed, await session.snapshotText() == before)
    }

    @Test func anUnchangedSnapshotIsAccepted() async throws {
        let session = await Self.busySession()
        let document = try await Self.edited(session) { _ in }
        #expect(await session.typed("restore " + document).hasPrefix("restored ("))
    }

    @Test func timesOutOfOrderAreRefused() async throws {
        let session = await Self.busySession()
        let i = try await Self.busyIndex(session, "feed:a")
        let staleFirst = try await Self.edited(session) { d in try Self.entry(&d, "feed:a") { $0["stale_at"] = "2025-12-31T00:00:00.000Z" } }
        var r = await refusal(session, staleFirst)
        #expect(r.error == "error: restore: entries[\(i)].stale_at: is before stored_at\n")
        #expect(r.unchanged)
        let future = try await Self.edited(session) { d in try Self.entry(&d, "feed:a") { $0["stored_at"] = "2027-01-01T00:00:00.000Z" } }
        r = await refusal(session, future)
        #expect(r.error.hasPrefix("error: restore: entries[\(i)].stored_at: is after now ("))
        #expect(r.unchanged)
        let clock = try await Self.edited(session) { d in d["clock_start"] = "2027-01-01T00:00:00.000Z" }
        r = await refusal(session, clock)
        #expect(r.error == "error: restore: clock_start: is after now\n")
        #expect(r.unchanged)
    }

    @Test func anExpiryPassedUncountedIsRefused() async throws {
        let session = await Self.busySession()
        let i = try await Self.busyIndex(session, "feed:a")
        let document = try await Self.edited(session) { d in
            try Self.entry(&d, "feed:a") { e in
                e["expires_at"] = e["stored_at"]
                e["stale_at"] = e["stored_at"]
                // As its times say (a state they contradict is refused first).
                e["state"] = "expired"
            }
        }
        let r = await refusal(session, document)
        #expect(r.error == "error: restore: entries[\(i)].expiry_counted: is false, but expires_at is before now: the expiry passed uncounted\n")
        #expect(r.unchanged)
    }

    @Test func aNamespaceOverItsMaxIsRefused() async throws {
        let session = await Self.busySession()
        let document = try await Self.edited(session) { d in
            Self.object(&d, "namespaces") { n in Self.object(&n, "feed") { $0["max"] = 1 } }
        }
        let r = await refusal(session, document)
        #expect(r.error == "error: restore: namespaces.feed.max: is 1, but entries holds 2 entries of feed\n")
        #expect(r.unchanged)
    }

    @Test func aMutationNeitherQueuedNorInFlightIsRefused() async throws {
        let session = await Self.busySession()
        let document = try await Self.edited(session) { d in
            Self.object(&d, "pending") { p in
                p["queued_mutations"] = []
                p["replaying"] = .null
                Self.withoutRequests(&p) { $0 != "mutate" }
            }
        }
        let r = await refusal(session, document)
        #expect(r.error.contains(".mutations.pending: mutation "))
        #expect(r.error.contains("is neither queued"))
        #expect(r.unchanged)
    }

    @Test func aTopLevelSeqBelowTheEntriesIsRefused() async throws {
        let session = await Self.busySession()
        let document = try await Self.edited(session) { d in d["seq"] = 1 }
        let r = await refusal(session, document)
        #expect(r.error.hasPrefix("error: restore: entries[0]."))
        #expect(r.error.contains("is past the top-level seq 1"))
        #expect(r.unchanged)
    }

    @Test func aKeyTheShellCannotTypeIsRefused() async throws {
        let session = await Self.busySession()
        let i = try await Self.busyIndex(session, "other")
        let document = try await Self.edited(session) { d in try Self.entry(&d, "other") { $0["key"] = "oth\u{1}er" } }
        let r = await refusal(session, document)
        #expect(r.error == "error: restore: entries[\(i)].key: bad key \"oth\\u0001er\": a key may not contain control characters\n")
        #expect(r.unchanged)
    }

    @Test func aPendingLogLineWithoutItsRequestIsRefused() async throws {
        let session = await Self.busySession()
        let document = try await Self.edited(session) { d in
            Self.object(&d, "pending") { p in
                Self.withoutRequests(&p) { $0 == "mutate" }
                p["fetching"] = [:]
            }
        }
        let r = await refusal(session, document)
        #expect(r.error.contains("server.log["))
        #expect(r.error.contains("is not in flight"))
        #expect(r.unchanged)
    }

    @Test func theSameRulesHoldForASnapshotFile() async throws {
        let session = await Self.busySession()
        let path = Fixtures.directory("restore") + "/bad.json"
        try await Self.edited(session) { d in d["seq"] = 1 }.write(toFile: path, atomically: true, encoding: .utf8)
        let r = await refusal(session, path)
        #expect(r.error.hasPrefix("error: \(path): entries[0]."))
        #expect(r.unchanged)
    }
}
