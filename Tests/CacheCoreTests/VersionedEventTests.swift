@_spi(Engine) import CacheCore
import CacheServer
import Testing

/// Versioned events and answers (SPEC §1.1 Versions): an entry remembers the server version its
/// value reflects; an event (or an answer) older than it is ignored, the echo of the client's own
/// write never lands on it; the naive switch `events-in-arrival-order` (SPEC §1.2) applies events
/// as they arrive.
@Suite struct VersionedEventTests {
    static func harness(naive: Bool) -> Harness {
        Harness(["doc": Policy(ttl: 600_000, naive: naive ? [.eventsInArrivalOrder] : [])])
    }

    /// firebase/firebase-ios-sdk#1591: a snapshot of an older state arrives after a newer one.
    @Test(arguments: [true, false])
    func anEventOlderThanTheEntryIsSkipped(naive: Bool) throws {
        let h = Self.harness(naive: naive)
        h.engine.watch(.all)
        h.origin.set("doc:1", json(#"{"docs":["a","b","c"]}"#), at: h.engine.now, version: 1)
        _ = h.get("doc:1")
        try h.engine.event("doc:1", patch: patch(#"{"docs":["a","c"]}"#), version: 3)
        #expect(h.engine.peek("doc:1").value == json(#"{"docs":["a","c"]}"#))
        let keys = try h.engine.event("doc:1", patch: patch(#"{"docs":["a","b","c"]}"#), version: 2)
        #expect(h.value("doc:1") == json(naive ? #"{"docs":["a","b","c"]}"# : #"{"docs":["a","c"]}"#))
        #expect(keys == (naive ? ["doc:1"] : []))
        #expect(h.events.summary.last == (naive ? "patched doc:1" : "skipped doc:1"))
    }

    /// An event of the version the entry holds is in it already: applying it again would count a
    /// `$inc` twice.
    @Test func anEventOfTheHeldVersionIsSkipped() throws {
        let h = Self.harness(naive: false)
        h.origin.set("doc:1", json(#"{"likes":1}"#), at: h.engine.now, version: 4)
        _ = h.get("doc:1")
        try h.engine.event("doc:1", patch: patch(#"{"likes":{"$inc":1}}"#), version: 4)
        #expect(h.value("doc:1") == json(#"{"likes":1}"#))
        try h.engine.event("doc:1", patch: patch(#"{"likes":{"$inc":1}}"#), version: 5)
        #expect(h.value("doc:1") == json(#"{"likes":2}"#))
    }

    /// Unversioned events and entries behave as before: every event applies.
    @Test func withoutVersionsEveryEventApplies() throws {
        let h = Self.harness(naive: false)
        h.server("doc:1", json(#"{"n":1}"#))
        _ = h.get("doc:1")
        try h.engine.event("doc:1", patch: patch(#"{"n":2}"#), version: 9)
        try h.engine.event("doc:1", patch: patch(#"{"n":3}"#))
        #expect(h.value("doc:1") == json(#"{"n":3}"#), "an event without a version always applies")
        h.engine.put("doc:1", json(#"{"n":4}"#))
        try h.engine.event("doc:1", patch: patch(#"{"n":5}"#), version: 1)
        #expect(h.value("doc:1") == json(#"{"n":5}"#), "a put holds no version: every event applies to it")
    }

    /// A lagging answer (its request sent after the event, so B12 keeps it) older than the entry's
    /// version is discarded; the naive switch stores it.
    @Test(arguments: [true, false])
    func anAnswerOlderThanTheEntryIsDiscarded(naive: Bool) throws {
        let h = Self.harness(naive: naive)
        h.origin.set("doc:1", json(#"{"n":1}"#), at: h.engine.now, version: 1)
        _ = h.get("doc:1")
        try h.engine.event("doc:1", patch: patch(#"{"n":3}"#), version: 3)
        h.origin.queue(ScriptedAnswer(latency: nil, outcome: .value(json(#"{"n":2}"#)), version: 2), for: "doc:1")
        let r = h.get("doc:1", force: true)
        #expect(r.value == json(naive ? #"{"n":2}"# : #"{"n":3}"#))
        #expect(h.engine.requestLog.last?.fate == (naive ? .stored : .discarded))
    }

    /// urql-graphql/urql#1525: the echo of the client's own mutation arrives before its answer.
    /// Skipped by default; with the naive switch it lands on the optimistic value and, having
    /// arrived after the request, is applied again on the confirmed answer: the item twice.
    @Test(arguments: [true, false])
    func theOwnEchoNeverLandsOnThePendingMutation(naive: Bool) throws {
        let h = Self.harness(naive: naive)
        h.server("doc:1", json(#"{"messages":["hi"]}"#))
        _ = h.get("doc:1")
        h.origin.latencies["doc:1"] = 300
        try h.engine.mutate("doc:1", patch: patch(#"{"messages":{"$push":"hello"}}"#))
        h.advance(100)
        try h.engine.event("doc:1", patch: patch(#"{"messages":{"$push":"hello"}}"#), own: true)
        let shown = naive ? #"{"messages":["hi","hello","hello"]}"# : #"{"messages":["hi","hello"]}"#
        #expect(h.value("doc:1") == json(shown))
        h.advance(200)
        #expect(h.value("doc:1") == json(shown), "confirmed, the echo stays applied (naive) or was never")
    }

    /// A confirmation at a version drops the events of that version or older from the log (the
    /// answer has them), instead of applying them again.
    @Test(arguments: [true, false])
    func aVersionedConfirmationDropsTheEventsItHas(naive: Bool) throws {
        let h = Self.harness(naive: naive)
        h.origin.set("doc:1", json(#"{"likes":0}"#), at: h.engine.now, version: 1)
        _ = h.get("doc:1")
        h.origin.queue(ScriptedAnswer(latency: 300, outcome: .value(json(#"{"likes":2}"#)), version: 3), for: "doc:1")
        try h.engine.mutate("doc:1", patch: patch(#"{"likes":{"$inc":1}}"#))
        h.advance(100)
        try h.engine.event("doc:1", patch: patch(#"{"likes":{"$inc":1}}"#), version: 3)   // another client's like
        #expect(h.value("doc:1") == json(#"{"likes":2}"#))
        h.advance(200)
        #expect(h.value("doc:1") == json(naive ? #"{"likes":3}"# : #"{"likes":2}"#))
        // The entry is at version 3: the late event of version 2 is skipped.
        try h.engine.event("doc:1", patch: patch(#"{"likes":{"$inc":1}}"#), version: 2)
        #expect(h.value("doc:1") == json(naive ? #"{"likes":4}"# : #"{"likes":2}"#))
    }

    /// A version past 2^53 is refused, and nothing changes.
    @Test func aVersionPastTheLargestIsRefused() throws {
        let h = Self.harness(naive: false)
        h.server("doc:1", json(#"{"n":1}"#))
        _ = h.get("doc:1")
        #expect(throws: CacheError.self) {
            try h.engine.event("doc:1", patch: patch(#"{"n":2}"#), version: KeyAnswer.maxVersion + 1)
        }
        #expect(h.value("doc:1") == json(#"{"n":1}"#))
    }

    /// The simulated server: a versioned key's answers carry its version, one more at each change;
    /// a late event does not move its data back.
    @Test func theServerNumbersAVersionedKey() throws {
        let h = Self.harness(naive: false)
        h.origin.set("doc:1", json(#"{"n":1}"#), at: h.engine.now, version: 5)
        h.server("doc:2", json(#"{"n":1}"#))
        guard case .after(_, .success(let answers)) = h.origin.fetch(keys: ["doc:1", "doc:2"], requestID: 1, at: 0) else {
            Issue.record("no answer"); return
        }
        #expect(answers == [.versioned(json(#"{"n":1}"#), version: 5), .value(json(#"{"n":1}"#))])
        h.origin.set("doc:1", json(#"{"n":2}"#), at: h.engine.now)
        #expect(h.origin.versions["doc:1"] == 6)
        #expect(!h.origin.applyEvent("doc:1", json(#"{"n":0}"#), at: h.engine.now, version: 6))
        #expect(h.origin.data["doc:1"] == json(#"{"n":2}"#))
        #expect(h.origin.applyEvent("doc:1", json(#"{"n":7}"#), at: h.engine.now, version: 7))
        #expect(h.origin.versions["doc:1"] == 7 && h.origin.versions["doc:2"] == nil)
    }

    /// Snapshots keep the versions (of entries and of log items) and give the same bytes back;
    /// an entry without one has no `version` field.
    @Test func snapshotsKeepVersions() throws {
        let h = Self.harness(naive: false)
        h.origin.set("doc:1", json(#"{"likes":0}"#), at: h.engine.now, version: 1)
        h.server("doc:2", json(#"{"likes":0}"#))
        _ = h.get("doc:1")
        _ = h.get("doc:2")
        h.origin.latency = 500
        try h.engine.mutate("doc:1", patch: patch(#"{"likes":{"$inc":1}}"#))
        try h.engine.event("doc:1", patch: patch(#"{"seen":true}"#), version: 4)
        let text = h.engine.snapshotText(pretty: true)
        let doc = try JSONValue(parsing: text)
        guard case .object(let top) = doc, case .array(let entries)? = top["entries"],
              case .object(let first) = entries[0], case .object(let second) = entries[1] else {
            Issue.record("unexpected snapshot"); return
        }
        #expect(first["key"] == "doc:2" && first["version"] == nil)
        #expect(second["version"] == 4)
        #expect(text.contains(#""version": 4"#))
        #expect(SnapshotFastPathTests.readFromText(text), "read from its text, not through the tree reader")
        #expect(SnapshotFastPathTests.readFromText(h.engine.snapshotText(pretty: false)))
        let copy = Self.harness(naive: false)
        try copy.engine.restore(doc)
        #expect(copy.engine.snapshotText(pretty: true) == text)
        // The answer decided when the mutation was sent (likes 1, at version 2) is older than
        // the event: the event stays applied on it, and the entry is at version 4.
        copy.advance(500)
        #expect(copy.value("doc:1") == json(#"{"likes":1,"seen":true}"#))
        #expect(copy.engine.snapshotText(pretty: true).contains(#""version": 4"#))
    }
}
