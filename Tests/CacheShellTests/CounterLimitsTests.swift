import CacheCore
import CacheShell
import Foundation
import Testing
import TestSupport

/// Every counter, id and time a snapshot brings is checked where it comes in, against what the
/// engine adds to it (SPEC §7.1): one the engine could not run from is refused at `restore` with
/// its JSON path; one it accepts, however extreme, never makes a later command trap.
@Suite struct CounterLimitsTests {
    /// The paths of every whole number and every time written as text in `value`.
    static func leaves(_ value: JSONValue, _ path: [String] = []) -> [[String]] {
        switch value {
        case .object(let o): return o.keys.sorted().flatMap { leaves(o[$0]!, path + [$0]) }
        case .array(let a): return a.indices.flatMap { leaves(a[$0], path + ["\($0)"]) }
        case .int: return [path]
        case .string(let s) where TimeText.parseISO8601(Substring(s)) != nil: return [path]
        default: return []
        }
    }

    /// `document` with the value at `path` (names and indices) replaced.
    static func replacing(_ document: JSONValue, _ path: [String], with value: JSONValue) -> JSONValue {
        guard let head = path.first else { return value }
        switch document {
        case .object(var o):
            o[head] = replacing(o[head] ?? .null, Array(path.dropFirst()), with: value)
            return .object(o)
        case .array(var a):
            let i = Int(head)!
            a[i] = replacing(a[i], Array(path.dropFirst()), with: value)
            return .array(a)
        default:
            return document
        }
    }

    static let extremes: [Int64] = [.max, .max - 1, 1 << 53, 1 << 53 + 1, -1, .min]

    /// What a session does after a restore: a bit of everything that adds to a counter or a time.
    static let commands = [
        "put feed:z 1", "peek feed:a", "get feed:home --nowait", #"event entity 1 {"n": 1}"#, #"mutate feed:a {"q": 1}"#,
        "stats", "pending", "explain feed:home", "advance 1s", "at 1s echo later", "advance 2s", "snapshot DIR/after.json",
        "restore DIR/after.json", "put feed:y 2",
    ]

    @Test func extremeCountersAreRefusedWithTheirPathOrRunWithoutTrapping() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-counters-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let session = await RestoreConsistencyTests.busySession()
        let document = try JSONValue(parsing: await session.snapshotText())
        let paths = Self.leaves(document)
        #expect(paths.count > 40)
        var refused = 0
        for path in paths {
            for extreme in Self.extremes {
                let bad = Self.replacing(document, path, with: .int(extreme)).compactText
                let fresh = await TestShell()
                let reply = await fresh.typed("restore " + bad)
                if reply.hasPrefix("error: ") {
                    refused += 1
                    continue
                }
                #expect(reply.hasPrefix("restored ("), "\(path) = \(extreme): \(reply)")
                for command in Self.commands {
                    _ = await fresh.typed(command.replacingOccurrences(of: "DIR", with: dir))
                }
            }
        }
        #expect(refused > 0)
    }

    @Test(arguments: [
        (["seq"], JSONValue.int(.max), "error: restore: seq: 9223372036854775807 is past the largest sequence number, 9007199254740992 (2^53)"),
        (["seq"], .int(1 << 53 + 1), "error: restore: seq: 9007199254740993 is past the largest sequence number, 9007199254740992 (2^53)"),
        (["now"], .int(.min), "error: restore: now: is before 1970-01-01T00:00:00.000Z"),
        (["clock_start"], .string("1969-12-31T23:59:59.999Z"), "error: restore: clock_start: is before 1970-01-01T00:00:00.000Z"),
        (["now"], .int(.max), "error: restore: now: is the clock's end (+292278994-08-17T07:12:55.807Z), which the clock never reaches"),
        (["entries", "0", "stored_at"], .int(1_767_225_600_000),
         "error: restore: entries[0].stored_at: expected a time like \"2026-01-01T00:00:00.000Z\" (a whole number of ms only outside the years 0000–9999)"),
        (["entries", "0", "seq"], .int(.max), "error: restore: entries[0].seq: 9223372036854775807 is past the largest sequence number, 9007199254740992 (2^53)"),
        (["stats", "hits"], .int(.max), "error: restore: stats.hits: expected a count from 0 to 2147483647"),
    ])
    func aCounterTheEngineCouldNotRunFromIsRefusedWithItsPath(path: [String], value: JSONValue, message: String) async throws {
        // Entries of their own only where the field is an entry's (else they are checked first).
        let session = path[0] == "entries" ? await RestoreConsistencyTests.busySession() : await TestShell()
        let document = try JSONValue(parsing: await session.snapshotText())
        let before = await session.snapshotText()
        let reply = await session.typed("restore " + Self.replacing(document, path, with: value).compactText)
        #expect(reply == message + "\n")
        #expect(await session.snapshotText() == before)
    }

    /// An entry's `state` follows from its times; one that says otherwise is refused.
    @Test func aStateItsTimesContradictIsRefused() async throws {
        let session = await RestoreConsistencyTests.busySession()
        let text = await session.snapshotText()
        let document = try JSONValue(parsing: text)
        let i = try await RestoreConsistencyTests.busyIndex(session, "feed:a")
        let reply = await session.typed("restore " + Self.replacing(document, ["entries", "\(i)", "state"], with: "expired").compactText)
        #expect(reply.hasPrefix("error: restore: entries[\(i)].state: is expired, but the entry's times make it "), "\(reply)")
        #expect(await session.snapshotText() == text)
    }
}
